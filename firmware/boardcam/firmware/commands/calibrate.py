"""``boardcam calibrate …``: printable target and mat, camera, board, pieces, status.

Every step that learns something merges it into the one calibration file
(``--calibration FILE``, default in the state directory) and keeps the
previous file as ``.bak``; a step that cannot produce a trustworthy result
says why and saves nothing.  OpenCV and the vision package are imported
inside the command functions so ``boardcam --help`` stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

from boardcam.engine.errors import InputError
from boardcam.firmware.commands import TOWER_LOOKS

#: how ``calibrate towers`` and ``calibrate show`` name each look
TOWER_WORDS = {"opaque": "opaque or milky plastic", "clear": "clear plastic"}


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "calibrate",
        help="calibrate camera, board and pieces; print the target and the mat",
        description="Calibration steps. Run `target`, then `camera`, then `board` and `pieces`.",
    )
    steps = parser.add_subparsers(dest="step", metavar="STEP")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    target = steps.add_parser("target", help="write the printable ChArUco calibration target")
    target.add_argument("-o", "--output", required=True, help="target.pdf or target.png")
    target.add_argument("--paper", default="A4", help="A4 (default), A3, A2 or LETTER (landscape)")
    _add_target_options(target)
    target.set_defaults(func=run_target)

    camera = steps.add_parser("camera", help="camera matrix and lens distortion from target views")
    source = camera.add_mutually_exclusive_group(required=True)
    source.add_argument("--images", metavar="DIR", help="folder of photos of the target")
    source.add_argument("--live", metavar="N", type=int, help="collect N views from --source")
    camera.add_argument("--source", default="auto", help="frame source for --live (default auto)")
    camera.add_argument("--min-views", type=int, default=6)
    camera.add_argument("--min-coverage", type=float, default=0.35, help="share of the frame, 0..1")
    camera.add_argument("--max-rms", type=float, default=1.0, help="largest acceptable error, px")
    _add_target_options(camera)
    _add_result_options(camera)
    camera.set_defaults(func=run_camera)

    mat = steps.add_parser("mat", help="write the printable marker mat (A3 and larger)")
    mat.add_argument("-o", "--output", required=True, help="mat.pdf or mat.png")
    mat.add_argument("--paper", default="A3", help="A3 (default) or A2")
    mat.add_argument("--tile-mm", type=float, default=51.0, help="tile edge, mm (default 51)")
    mat.add_argument("--gap-mm", type=float, default=1.0, help="allowance between tiles, mm")
    mat.add_argument("--marker-mm", type=float, default=30.0, help="marker edge, mm")
    mat.add_argument("--use", action="store_true", help="also store this mat in the calibration")
    _add_calibration_option(mat)
    mat.set_defaults(func=run_mat)

    board = steps.add_parser("board", help="find the empty tile array, fix its pose, learn tiles")
    _add_frame_options(board, "a photo of the empty array")
    board.add_argument("--row1", default=None, choices=("bottom", "top", "left", "right"),
                       help="side of the image nearest row 1 (default bottom; a mat orients itself)")
    board.add_argument("--overlay", metavar="PNG", help="write what was found over the frame")
    board.add_argument("--tile-mm", type=float, default=None, help="tile edge, mm (default 51)")
    board.add_argument("--layout", metavar="JSON",
                       help="position JSON with the true tiles, to correct a misread layout")
    board.add_argument("--keep-auto", action="store_true",
                       help="leave a live camera on automatic exposure and white balance")
    _add_result_options(board)
    board.set_defaults(func=run_board)

    pieces = steps.add_parser("pieces", help="teach the pieces' colours under this light")
    _add_frame_options(pieces, "a photo with the requested pieces placed")
    pieces.add_argument("--layout", metavar="JSON",
                        help="position JSON of what is placed (default: the standard teach layout)")
    pieces.add_argument("--show", action="store_true", help="only print where to put the pieces")
    _add_result_options(pieces)
    pieces.set_defaults(func=run_pieces)

    towers = steps.add_parser("towers", help="say whether the set's pyramids are opaque (or milky) or clear plastic")
    towers.add_argument("look", choices=TOWER_LOOKS,
                        help="opaque: solid or milky plastic (the default); clear: see-through coloured plastic")
    _add_calibration_option(towers)
    towers.set_defaults(func=run_towers)

    settings = steps.add_parser(
        "settings", help="fix exposure, gain, white balance and focus at what the camera settled on"
    )
    settings.add_argument("--source", default="auto", help="frame source (default auto)")
    settings.add_argument("--frames", type=int, default=30, help="frames to let auto exposure settle")
    settings.add_argument("--clear", action="store_true", help="back to fully automatic")
    _add_calibration_option(settings)
    settings.set_defaults(func=run_settings)

    show = steps.add_parser("show", help="print the stored calibration and its state")
    show.add_argument("--json", action="store_true")
    _add_calibration_option(show)
    show.set_defaults(func=run_show)


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--squares", default="7x5", help="squares across x down (default 7x5)")
    parser.add_argument("--square-mm", type=float, default=30.0, help="square edge, mm (default 30)")
    parser.add_argument("--marker-mm", type=float, default=22.0, help="marker edge, mm (default 22)")
    parser.add_argument("--dictionary", default="DICT_5X5_100", help="ArUco dictionary")


def _add_frame_options(parser: argparse.ArgumentParser, photo: str) -> None:
    """Where a step's frame comes from: a photo (``--image``) or a live source."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--image", metavar="FILE", help=photo)
    where.add_argument("--source", default=None, help="frame source (default auto)")


def _add_result_options(parser: argparse.ArgumentParser) -> None:
    """What every learning step takes: --json, --dry-run and --calibration (see :func:`_finish`)."""
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--dry-run", action="store_true", help="report only, do not save")
    _add_calibration_option(parser)


def _add_calibration_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibration", metavar="FILE", default=None,
                        help="calibration file (default: the state directory's calibration.json)")


def _target_spec(args: argparse.Namespace) -> Any:
    from boardcam.calibration.target import TargetSpec, parse_squares

    squares_x, squares_y = parse_squares(args.squares)
    return TargetSpec(squares_x, squares_y, args.square_mm, args.marker_mm, args.dictionary)


def _existing_calibration(path: str | None) -> Any:
    """The stored calibration to merge into, or a fresh one (with a note why)."""
    from boardcam.calibration.store import Calibration, load_calibration_with_message

    calibration, message = load_calibration_with_message(path)
    if calibration is None:
        if message and not message.startswith("no calibration"):
            print(f"note: {message}; starting a new calibration", file=sys.stderr)
        return Calibration()
    return calibration


def _save(calibration: Any, path: str | None) -> Path:
    from boardcam.calibration.store import save_calibration

    saved: Path = save_calibration(calibration, path)
    return saved


def _emit(args: argparse.Namespace, data: dict[str, Any], lines: list[str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2))
    else:
        for line in lines:
            print(line)


def _finish(args: argparse.Namespace, figures: dict[str, Any], lines: list[str],
            calibration: Callable[[], Any]) -> int:
    """Save what a step learned (unless ``--dry-run``) and report it as lines or ``--json``.

    ``calibration`` is called only when saving, so a dry run never even
    reads the stored file.
    """
    if not args.dry_run:
        lines = [*lines, f"saved to {_save(calibration(), args.calibration)}"]
    _emit(args, figures, lines)
    return 0


def _read_json_file(path: str, option: str) -> Any:
    """A JSON document from a file; a one-line InputError naming the option otherwise."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"{option}: {path} is not JSON ({error.msg} at line {error.lineno})") from None


# --------------------------------------------------------------------- target
def run_target(args: argparse.Namespace) -> int:
    from boardcam.calibration.target import write_target

    spec = _target_spec(args)
    path = write_target(args.output, spec, paper=args.paper)
    print(f"wrote {path}: {spec.describe()}; print at 100 % on {args.paper.upper()} landscape")
    return 0


# --------------------------------------------------------------------- camera
def run_camera(args: argparse.Namespace) -> int:
    from boardcam.calibration.camera import (
        CalibrationLimits,
        CalibrationRefused,
        calibrate_images,
        calibrate_views,
        load_image_dir,
    )

    spec = _target_spec(args)
    limits = CalibrationLimits(
        min_views=args.min_views, min_coverage=args.min_coverage, max_rms_px=args.max_rms
    )
    try:
        if args.images is not None:
            result = calibrate_images(load_image_dir(args.images), spec, limits=limits)
        else:
            if args.live < 1:
                raise InputError(f"--live: need a positive number of views, got {args.live}")
            views, offered = collect_live_views(args.source, args.live, spec, limits)
            result = calibrate_views(views, spec, limits=limits, views_total=offered)
    except CalibrationRefused as refusal:
        if args.json:
            print(json.dumps({"refused": refusal.reason, "message": str(refusal),
                              **{k: _plain(v) for k, v in refusal.figures.items()}}, indent=2))
        raise
    lines = [
        f"camera calibrated from {result.views_used} of {result.views_total} views: "
        f"RMS {result.rms_px:.3f} px, frame coverage {result.coverage:.0%}",
        f"focal {result.focal_px[0]:.1f} x {result.focal_px[1]:.1f} px, centre "
        f"({result.camera_matrix[0][2]:.1f}, {result.camera_matrix[1][2]:.1f}), "
        f"k1 {result.dist_coeffs[0]:+.4f} k2 {result.dist_coeffs[1]:+.4f}",
    ]
    return _finish(args, result.to_json(), lines, lambda: _existing_calibration(args.calibration).updated(
        intrinsics=result.intrinsics_json(), target=spec))


def _plain(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def same_pose(a: Any, b: Any, tolerance: float = 0.08) -> bool:
    """Whether two views show the target in (nearly) the same place and tilt.

    Compares the corners both views share: a new position *or* a new tilt
    moves them by more than ``tolerance`` of the target's size in the image,
    and both are what a calibration needs more of.
    """
    import numpy as np

    ids_a = {int(i): k for k, i in enumerate(a.ids.ravel())}
    common = [(ids_a[int(i)], k) for k, i in enumerate(b.ids.ravel()) if int(i) in ids_a]
    if len(common) < 4:
        return False
    pa = a.corners.reshape(-1, 2)[[i for i, _ in common]]
    pb = b.corners.reshape(-1, 2)[[j for _, j in common]]
    size = float(np.ptp(pa, axis=0).max())
    return float(np.linalg.norm(pa - pb, axis=1).mean()) < tolerance * max(size, 1.0)


def collect_live_views(
    source_spec: str, count: int, spec: Any, limits: Any, *, max_seconds: float = 180.0
) -> tuple[list[Any], int]:
    """Take ``count`` distinct views of the target from a live source.

    A frame is kept when the target is seen with enough corners and in a
    pose unlike every view kept so far (:func:`same_pose`), so holding the
    sheet still does not count twenty times.  Progress goes to stderr.
    """
    from boardcam.calibration.camera import detect_view, make_detector
    from boardcam.firmware.sources import open_source

    detector = make_detector(spec)
    views: list[Any] = []
    offered = 0
    deadline = time.monotonic() + max_seconds
    with open_source(source_spec) as source:
        while len(views) < count and time.monotonic() < deadline:
            try:
                frame = source.read()
            except StopIteration:
                break
            offered += 1
            view = detect_view(frame.image, spec, detector=detector, name=f"frame {frame.index}")
            if view is None or view.count < limits.min_corners:
                continue
            if any(same_pose(view, kept) for kept in views):
                continue
            views.append(view)
            print(f"view {len(views)}/{count}: {view.count} corners; now move the target",
                  file=sys.stderr)
    return views, max(offered, len(views))


# --------------------------------------------------------------------- mat
def run_mat(args: argparse.Namespace) -> int:
    from boardcam.calibration.mat import write_mat
    from boardcam.vision.mat import MatSpec

    for name in ("tile_mm", "gap_mm", "marker_mm"):
        value = getattr(args, name)
        if not (value > 0 or (name == "gap_mm" and value == 0)):
            raise InputError(f"--{name.replace('_', '-')}: must be positive, got {value}")
    spec = MatSpec(tile_mm=args.tile_mm, gap_mm=args.gap_mm, marker_mm=args.marker_mm)
    path = write_mat(args.output, spec, paper=args.paper)
    print(f"wrote {path}: mat for {args.tile_mm:g} mm tiles on {args.paper.upper()}; print at 100 %")
    if args.use:
        calibration = _existing_calibration(args.calibration)
        saved = _save(calibration.updated(mat=spec.to_json()), args.calibration)
        print(f"stored the mat in {saved}")
    return 0


# --------------------------------------------------------------------- board / pieces
def _grab_image(args: argparse.Namespace, calibration: Any, *, freeze: bool = False) -> tuple[Any, Any]:
    """(frame, newly fixed CameraSettings or None): ``--image FILE`` or a still frame from the source.

    With ``freeze`` and a camera still on automatic, exposure and white
    balance are fixed first (where the source can report them), so what the
    board step measures is what the game's frames will look like.
    """
    import cv2

    from boardcam.calibration.settings import freeze_settings

    if args.image is not None:
        image = cv2.imread(args.image, cv2.IMREAD_COLOR)
        if image is None:
            raise InputError(f"--image: cannot read image {args.image}")
        return image, None
    from boardcam.firmware.sources import open_source

    frozen = None
    with open_source(args.source or "auto") as source:
        settings = calibration.camera_settings
        if settings.is_automatic and freeze:
            frozen = freeze_settings(source)
            if frozen is not None:
                settings = frozen
        if not settings.is_automatic:
            source.apply_settings(settings)
        frame = None
        for _ in range(10):  # let the fixed settings take effect
            try:
                frame = source.read()
            except StopIteration:
                break
        if frame is None:
            raise InputError(f"--source {args.source}: no frame")
        return frame.image, frozen


def run_board(args: argparse.Namespace) -> int:
    import cv2

    from boardcam.calibration.board import calibrate_board, draw_board_overlay

    layout = _read_json_file(args.layout, "--layout") if args.layout else None
    calibration = _existing_calibration(args.calibration)
    image, frozen = _grab_image(args, calibration, freeze=not args.keep_auto)
    if frozen is not None:
        calibration = calibration.updated(camera_settings=frozen)
        print(f"camera settings fixed: {frozen.picamera2_controls()}", file=sys.stderr)
    result = calibrate_board(image, calibration, row1=args.row1, tile_mm=args.tile_mm, layout=layout)
    if args.overlay:
        from boardcam.calibration.store import atomic_write_bytes

        overlay = draw_board_overlay(image, result, result.calibration.camera_intrinsics())
        ok, png = cv2.imencode(".png", overlay)
        if not ok:
            raise InputError(f"--overlay: cannot encode {args.overlay}")
        atomic_write_bytes(args.overlay, png.tobytes())
    return _finish(args, result.to_json(), [result.summary()], lambda: result.calibration)


def run_pieces(args: argparse.Namespace) -> int:
    from boardcam.calibration.pieces import TEACH_LAYOUT, describe_layout, teach_pieces

    layout = _read_json_file(args.layout, "--layout") if args.layout else TEACH_LAYOUT
    if args.show:
        for line in describe_layout(layout):
            print(line)
        return 0
    calibration = _existing_calibration(args.calibration)
    if args.image is None:
        print("place these pieces, then keep hands off the board:", file=sys.stderr)
        for line in describe_layout(layout):
            print(f"  {line}", file=sys.stderr)
        if sys.stdin.isatty():
            input("press Enter when they are in place ")
    image, _ = _grab_image(args, calibration)
    result = teach_pieces(image, calibration, layout)
    return _finish(args, result.to_json(), [result.summary()], lambda: result.calibration)


# --------------------------------------------------------------------- towers
def run_towers(args: argparse.Namespace) -> int:
    from boardcam.calibration.pieces import with_towers

    path = _save(with_towers(_existing_calibration(args.calibration), args.look), args.calibration)
    print(f"towers read as {TOWER_WORDS[args.look]}; saved to {path}")
    return 0


# --------------------------------------------------------------------- settings
def run_settings(args: argparse.Namespace) -> int:
    from boardcam.calibration.settings import CameraSettings, freeze_settings

    calibration = _existing_calibration(args.calibration)
    if args.clear:
        path = _save(calibration.updated(camera_settings=CameraSettings()), args.calibration)
        print(f"camera back to automatic exposure and white balance; saved to {path}")
        return 0
    from boardcam.firmware.sources import open_source

    with open_source(args.source) as source:
        settings = freeze_settings(source, args.frames)
    if settings is None:
        print(f"source {args.source} cannot report exposure or white balance; "
              "nothing fixed (only the Pi camera can be locked)")
        return 1
    path = _save(calibration.updated(camera_settings=settings), args.calibration)
    print(f"fixed {settings.picamera2_controls()}; saved to {path}")
    return 0


# --------------------------------------------------------------------- show
def run_show(args: argparse.Namespace) -> int:
    from boardcam.calibration.store import calibration_path, load_calibration_with_message

    path = Path(args.calibration) if args.calibration else calibration_path()
    calibration, message = load_calibration_with_message(path)
    if calibration is None:
        if args.json:
            print(json.dumps({"path": str(path), "calibrated": False, "message": message}, indent=2))
        else:
            print(message)
        return 1
    if args.json:
        print(json.dumps({"path": str(path), "calibrated": True, **calibration.to_json()}, indent=2))
        return 0
    parts = {
        "camera": calibration.intrinsics is not None,
        "board": calibration.board is not None,
        "pieces": bool((calibration.appearance or {}).get("colours")),
        "mat": calibration.mat is not None,
        "settings": not calibration.camera_settings.is_automatic,
    }
    print(f"{path} (version {calibration.version}, {calibration.created})")
    for name, done in parts.items():
        print(f"  {name:9} {'yes' if done else 'no'}")
    print(f"  {'towers':9} {TOWER_WORDS.get(calibration.towers, calibration.towers)}")
    if calibration.intrinsics is not None:
        print(f"  camera RMS {calibration.intrinsics.get('rms_px', float('nan')):.3f} px")
    return 0
