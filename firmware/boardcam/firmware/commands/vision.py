"""``boardcam read IMAGE``: read one frame and print the position JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from boardcam.engine.errors import InputError
from boardcam.firmware.commands import TOWER_LOOKS


def register(subparsers: Any) -> None:
    read = subparsers.add_parser(
        "read",
        help="read an Alien City board from one image",
        description="Print the position JSON read from IMAGE, with per-lot and per-tile confidences.",
    )
    read.add_argument("image", metavar="IMAGE", help="a JPEG/PNG frame from the overhead camera")
    read.add_argument("--calibration", metavar="FILE", help="calibration file (intrinsics, board pose, appearance, mat)")
    read.add_argument("--overlay", metavar="OUT.png", help="also write the frame with what was read drawn over it")
    read.add_argument(
        "--empty",
        metavar="EMPTY",
        help="a frame of the same table with the empty array (same camera): read by difference against it",
    )
    read.add_argument("--towers", choices=TOWER_LOOKS, default=None,
                      help="what the set's pyramids are made of, over what the calibration says "
                           "(opaque: solid or milky, the default; clear: see-through plastic)")
    read.set_defaults(func=run_read)


def load_parts(path: str | None, image_size: tuple[int, int]) -> dict[str, Any]:
    """Calibration parts as read_board keyword arguments (an explicit bad file is an error)."""
    if path is None:
        return {}
    from boardcam.calibration.store import load_calibration_with_message

    calibration, message = load_calibration_with_message(path)
    if calibration is None:
        raise InputError(f"--calibration: {message}")
    parts: dict[str, Any] = {
        "intrinsics": calibration.camera_intrinsics(),
        "appearance": calibration.learned_appearance(),
        "mat": calibration.mat_spec(),
    }
    board = calibration.board
    if board is not None:
        size = board.get("image_size")
        if size is None or tuple(size) == tuple(image_size):  # a pose is only valid at its own resolution
            parts["pose"] = calibration.board_pose()
    return parts


def told_towers(appearance: Any, towers: str) -> Any:
    """``appearance`` (or none learned) with the set's towers as the players say they are."""
    from dataclasses import replace

    from boardcam.vision import Appearance

    return replace(appearance if appearance is not None else Appearance(), towers=towers)


def load_image(path: str, what: str) -> Any:
    import cv2
    import numpy as np

    with open(path, "rb") as handle:  # OSError (missing file) -> one line, exit 2
        data = np.frombuffer(handle.read(), dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise InputError(f"{what}: cannot read {path!r} as a picture")
    sample = image[::7, ::7]
    if (sample[..., 0] == sample[..., 1]).all() and (sample[..., 1] == sample[..., 2]).all():
        # the guilds and the pieces are told apart by colour: a grey frame would be read as nonsense
        raise InputError(f"{what}: {path!r} is a greyscale picture; boardcam needs colour")
    return image


def run_read(args: argparse.Namespace) -> int:
    import cv2

    from boardcam.vision import empty_board_reference, read_board
    from boardcam.vision.align import align_to_reference
    from boardcam.vision.reader import SEARCHED_VIEWS

    image = load_image(args.image, "image")
    parts = load_parts(args.calibration, (image.shape[1], image.shape[0]))
    if args.towers is not None:
        parts["appearance"] = told_towers(parts.get("appearance"), args.towers)
    if args.empty:
        empty = load_image(args.empty, "--empty")
        if empty.shape != image.shape:
            raise InputError(f"--empty: {args.empty!r} is {empty.shape[1]}x{empty.shape[0]}, the frame {image.shape[1]}x{image.shape[0]}")
        found = read_board(empty, **parts)  # the empty array fixes the pose and the tiles
        parts["reference"] = empty_board_reference(
            empty,
            found.pose,
            intrinsics=parts.get("intrinsics"),
            white_balance=getattr(parts.get("appearance"), "white_balance", None),
            tiles=found.position_dict["tiles"],
        )
        # a camera nudged between the two frames by a few pixels would make every printed edge a piece;
        # the registration looks past the pieces a first reading sees
        first = read_board(image, pose=found.pose, **{k: v for k, v in parts.items() if k != "pose"})
        parts["pose"] = align_to_reference(image, found.pose, parts["reference"], parts.get("intrinsics"),
                                           structures=first.position_dict["structures"])
    reading = read_board(image, views=SEARCHED_VIEWS, **parts)  # one frame, no hurry: the thorough reading
    print(json.dumps(reading.to_json(), indent=2))
    _warn_if_no_game_leaves(reading)
    if args.overlay:
        from boardcam.vision.overlay import draw_overlay

        if not cv2.imwrite(args.overlay, draw_overlay(image, reading, parts.get("intrinsics"))):
            raise InputError(f"--overlay: cannot write {args.overlay!r}")
    return 0


def _warn_if_no_game_leaves(reading: Any) -> None:
    """Say so when no legal game leaves the board read: a misread lot or tile, or a mistake on the table.

    Either way worth a look before the reading is scored.  A frame with a
    hand over the board is not judged: its covered lots are not read.
    """
    from boardcam.engine.aliencity import Position
    from boardcam.firmware.commands.engine import warn_if_no_game_leaves

    if not reading.occluded:
        warn_if_no_game_leaves(Position.from_json(reading.position_dict))
