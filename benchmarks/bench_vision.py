"""Accuracy and speed of the vision reader on generated scenes.

``bench_vision(count, seed, size, edition)`` renders ``count`` random scenes
(random legal-game positions, cameras, lights, editions or the one
``edition`` given, hands) and reads each one twice: with the known pose
(the scene's true corners: reading alone, as the app does between frames)
and from scratch (board search included).  Figures:

* ``lot_accuracy``, ``tile_accuracy`` (colour and icon; also each apart, and
  the icon on tiles whose icon lot has no piece on it: a piece hides the
  icon, so one frame cannot always tell which of a tile's built lots has it),
  ``board_exact`` and ``confident_wrong`` (share of all lots read wrong with
  confidence >= 0.9) come from the known-pose readings of frames without a
  hand; ``from_scratch`` repeats them for the from-scratch readings, where a
  frame whose board is not found counts every lot and tile as wrong.  A
  board lying square to the frame (rows 1 and 10 within a quarter lot of
  one height) leaves "row 1 is the lower" a coin toss: there the truth is
  named from the end the reading chose (:func:`truth_as_named`);
* ``tile_accuracy_if_pieces_hide`` and ``board_exact_if_pieces_hide`` are
  the best ``tile_accuracy`` and ``board_exact`` a single frame can expect
  when every piece on an icon lot hides the icon (a tower hides it whole; the
  generator's domes, 18–22 mm across, cover its icons, drawn at most
  10.6 mm from the lot's centre, all but a sliver).  The rules
  (``engine.aliencity.possible_icon_lots``) leave a hidden icon to the
  tile's built lots that can have been its last build, and a reader guesses
  fairly among them; every lot is taken as read right.  They depend on the
  positions only, not on the reading.  ``board_exact_icons_in_view`` is
  ``board_exact`` with the icon of a tile whose icon lot holds a piece left
  out (its colour still counts): what the reading gets right of what is in
  view;
* ``tile_confident_wrong`` and ``tile_sure_wrong`` are the shares of tiles
  read wrong (colour or icon) with confidence >= 0.9 and >= 0.99: the setup
  screen asks the players about a tile read below 0.9, and the referee takes
  a tile read at 0.99 or more as certain.  ``confidently_wrong_tiles`` lists
  each (scene: seed or file name, tile, truth, reading, confidence), to be
  looked at;
* ``occluded_flagged`` is the share of frames with a hand over the board that
  are flagged, ``clean_flagged_occluded`` the share of frames without one
  that are (wrongly) flagged: the app would wait for them to clear;
* ``ms_known_pose`` / ``ms_from_scratch`` are medians per frame
  (``ms_known_pose_p90`` the 90th percentile: an unsure board is read twice) and
  ``reference_ms`` the median of one warpPerspective to 800×1000 plus one
  conversion to HSV of the same frames, timed in the same run.

``empty`` reads each scene's empty board instead (no hand: the frame the
app's setup reads, whose tiles it keeps for the whole game), so every icon
is in view.

The truth is expressed in the reader's naming convention first: A1 is the
corner whose row-1 edge is lower in the image, so a board the generator
turned upside down is compared rotated by 180°.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

COLUMNS = "ABCDEFGH"


def _rotate_lot(name: str) -> str:
    return f"{COLUMNS[7 - COLUMNS.index(name[0])]}{11 - int(name[1:])}"


def truth_in_reader_convention(truth: dict[str, Any]) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Corners and position named as the reader names them (row 1 = lower short edge)."""
    corners, position = truth["corners_px"], truth["position"]
    return _turned(corners, position) if _row1_is_upper(corners) else (corners, position)


def _row1_is_upper(corners: dict[str, Any]) -> bool:
    """Whether the generator's row 1 lies higher in the image than its row 10 (the reader names it row 10)."""
    return bool(corners["A1"][1] + corners["H1"][1] < corners["A10"][1] + corners["H10"][1])


def _turned(corners: dict[str, Any], position: dict[str, Any]) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """The same board named from its other short side (a half turn: A1 <-> H10)."""
    turned = {"A1": corners["H10"], "H1": corners["A10"], "H10": corners["A1"], "A10": corners["H1"]}
    tiles = {}
    for key, tile in position["tiles"].items():
        upper_right = f"{COLUMNS[COLUMNS.index(key[0]) + 1]}{int(key[1:]) + 1}"
        tiles[_rotate_lot(upper_right)] = {"color": tile["color"], "icon": _rotate_lot(tile["icon"])}
    structures = {_rotate_lot(lot): s for lot, s in (position.get("structures") or {}).items()}
    return turned, dict(position, tiles=tiles, structures=structures)


#: short edges whose mean heights in the image differ by less than this (in lots) leave "row 1 is the lower"
#: undecided: a board turned within about 1.4 degrees of square to the frame may be named from either end
LEVEL_ROWS_LOTS = 0.25


def truth_as_named(corners: dict[str, Any], position: dict[str, Any], read_corners: dict[str, Any] | None
                   ) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """The truth already in the reader's convention (``truth_in_reader_convention``), or, where that
    convention is a tie, named from the end the reading chose (``read_corners``: its corners_px), so that
    a reader is not charged for a coin toss."""
    if read_corners is None or not rows_level(corners):
        return corners, position
    other = _turned(corners, position)
    def a1_off(named: dict[str, Any]) -> float:
        return float(np.linalg.norm(np.subtract(named["A1"], read_corners["A1"])))
    return other if a1_off(other[0]) < a1_off(corners) else (corners, position)


def rows_level(corners: dict[str, Any]) -> bool:
    """Whether rows 1 and 10 lie at so nearly one height in the image that either may be called the lower."""
    row1 = corners["A1"][1] + corners["H1"][1]
    row10 = corners["A10"][1] + corners["H10"][1]
    return bool(abs(row1 - row10) / 2.0 < LEVEL_ROWS_LOTS * lot_px(corners))


#: vision's corner order (boardcam.vision.models.CORNER_NAMES), kept here so that importing the
#: benchmark does not load the vision package and its network
CORNER_NAMES = ("A1", "H1", "H10", "A10")


def lot_px(corners: dict[str, Any]) -> float:
    """Mean lot size in pixels from the corners (4 tiles = 8 lots across, 10 up)."""
    c = np.array([corners[n] for n in CORNER_NAMES], float)
    across = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2 / 8
    up = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2 / 10
    return float((across + up) / 2)


LOT_NAMES = tuple(f"{col}{row}" for row in range(1, 11) for col in COLUMNS)


def wrong_lots(got: dict[str, Any], position: dict[str, Any]) -> list[str]:
    """The lots whose structure a read position (``got``) has other than ``position``."""
    return [name for name in LOT_NAMES
            if _normal_structure(position["structures"].get(name)) != _normal_structure(got["structures"].get(name))]


def _normal_structure(entry: dict[str, Any] | None) -> tuple[Any, ...] | None:
    if entry is None:
        return None
    return (entry["kind"], entry["color"], entry.get("cap") if entry["kind"] == "tower" else None)


def _reference_ms(image: np.ndarray) -> float:
    h, w = image.shape[:2]
    src = np.float32([[w * 0.2, h * 0.2], [w * 0.8, h * 0.2], [w * 0.8, h * 0.8], [w * 0.2, h * 0.8]])
    dst = np.float32([[0, 0], [800, 0], [800, 1000], [0, 1000]])
    m = cv2.getPerspectiveTransform(src, dst)
    t = time.perf_counter()
    warped = cv2.warpPerspective(image, m, (800, 1000))
    cv2.cvtColor(warped, cv2.COLOR_BGR2HSV)
    return (time.perf_counter() - t) * 1000


class _Tally:
    """Accuracy counters of one way of reading (known pose or from scratch)."""

    def __init__(self) -> None:
        self.lots_total = self.lots_right = self.tiles_total = self.tiles_right = 0
        self.colours_right = self.icons_right = self.boards = self.boards_exact = self.boards_exact_in_view = 0
        self.icons_in_view = self.icons_in_view_right = 0
        self.confident_wrong = self.confident = self.not_found = 0
        self.occluded_frames = self.occluded_flagged = self.clean_flagged = 0
        self.tiles_confident_wrong = self.tiles_sure_wrong = 0
        self.confidently_wrong_tiles: list[dict[str, Any]] = []

    def add(self, reading: Any, position: dict[str, Any], occluded: bool, scene: int | str | None = None) -> None:
        """Count one frame; ``scene`` (its seed or file name) names it in the list of confidently wrong tiles."""
        if occluded:
            self.occluded_frames += 1
            self.occluded_flagged += int(reading is not None and reading.occluded)
            return
        self.boards += 1
        self.lots_total += 80
        self.tiles_total += 20
        if reading is None:
            self.not_found += 1
            return
        self.clean_flagged += int(reading.occluded)
        got = reading.position_dict
        wrong = set(wrong_lots(got, position))
        self.lots_right += len(LOT_NAMES) - len(wrong)
        for name in LOT_NAMES:
            sure = reading.lot_confidence.get(name, 0.0) >= 0.9
            self.confident += int(sure)
            self.confident_wrong += int(sure and name in wrong)
        right_tiles = right_in_view = 0
        tile_confidence = getattr(reading, "tile_confidence", {})
        for key, tile in position["tiles"].items():
            read = got["tiles"].get(key, {})
            self._count_tile_confidence(scene, key, tile, read, tile_confidence.get(key, 0.0))
            self.colours_right += int(read.get("color") == tile["color"])
            self.icons_right += int(read.get("icon") == tile["icon"])
            in_view = tile["icon"] not in position["structures"]  # a piece on the icon hides it from one frame
            if in_view:
                self.icons_in_view += 1
                self.icons_in_view_right += int(read.get("icon") == tile["icon"])
            right_tiles += int(read == tile)
            right_in_view += int(read == tile if in_view else read.get("color") == tile["color"])
        self.tiles_right += right_tiles
        tiles = len(position["tiles"])
        self.boards_exact += int(not wrong and right_tiles == tiles)
        self.boards_exact_in_view += int(not wrong and right_in_view == tiles)

    def _count_tile_confidence(self, scene: int | str | None, key: str, tile: dict[str, Any], read: dict[str, Any],
                               confidence: float) -> None:
        """A wrong tile read surely is the one that hurts: the app asks about the others at setup."""
        if read == tile or confidence < 0.9:
            return
        self.tiles_confident_wrong += 1
        self.tiles_sure_wrong += int(confidence >= 0.99)
        self.confidently_wrong_tiles.append(
            {"scene": scene, "tile": key, "truth": tile, "read": read, "confidence": round(confidence, 4)})

    def figures(self) -> dict[str, Any]:
        return {
            "lot_accuracy": self.lots_right / max(self.lots_total, 1),
            "board_exact": self.boards_exact / max(self.boards, 1),
            "board_exact_icons_in_view": self.boards_exact_in_view / max(self.boards, 1),
            "tile_accuracy": self.tiles_right / max(self.tiles_total, 1),
            "tile_colour_accuracy": self.colours_right / max(self.tiles_total, 1),
            "tile_icon_accuracy": self.icons_right / max(self.tiles_total, 1),
            "tile_icon_in_view_accuracy": self.icons_in_view_right / max(self.icons_in_view, 1),
            "confident_wrong": self.confident_wrong / max(self.lots_total, 1),
            "tile_confident_wrong": self.tiles_confident_wrong / max(self.tiles_total, 1),
            "tile_sure_wrong": self.tiles_sure_wrong / max(self.tiles_total, 1),
            "confident_share": self.confident / max(self.lots_total, 1),
            "occluded_flagged": self.occluded_flagged / max(self.occluded_frames, 1),
            "occluded_frames": self.occluded_frames,
            "clean_flagged_occluded": self.clean_flagged / max(self.boards - self.not_found, 1),
            "board_not_found": self.not_found,
            "confidently_wrong_tiles": self.confidently_wrong_tiles,
        }


def hidden_icon_guess(position: dict[str, Any]) -> tuple[float, float]:
    """A fair guess at every hidden icon of this board: (tiles it loses on average, its chance of losing none).

    See ``tile_accuracy_if_pieces_hide``: the guess is among the tile's
    built lots that the rules leave the icon to.
    """
    from boardcam.engine.aliencity import Position, possible_icon_lots

    board = Position.from_json(position)
    lost, all_right = 0.0, 1.0
    for key, tile in board.tiles.items():
        if tile.icon not in board.structures:
            continue
        built = [lot for lot in possible_icon_lots(board, key) if lot in board.structures]
        lost += 1.0 - 1.0 / len(built)
        all_right /= len(built)
    return lost, all_right


def told_appearance(towers: str) -> Any:
    """What a reader told the set's towers (``boardcam calibrate towers``) is given, or None when told nothing."""
    from boardcam.vision import Appearance

    return None if towers == "opaque" else Appearance(towers=towers)


def bench_vision(count: int = 200, seed: int = 0, size: tuple[int, int] = (1640, 1232),
                 edition: str | None = None, clear_towers: bool = False, empty: bool = False,
                 exposure: float | None = None, towers: str = "opaque") -> dict[str, Any]:
    """Read ``count`` generated scenes twice; returns the figures described in the module docstring.

    ``towers``: what the reader is told the set's towers are (``Appearance.towers``, as
    ``boardcam calibrate towers`` stores it); "opaque" is a reader told nothing.

    ``exposure``: every scene's camera exposes this many times what its auto
    exposure chose (the generator's own ``exposure``, which otherwise draws
    0.8–1.2): light scaled before sensor noise, gamma and JPEG, as a
    camera metering a bright cloth around the board would.

    The top-level accuracy figures are those of the *known-pose* reading
    (the scene's true corners in the reader's convention): reading alone,
    independent of board finding.  ``from_scratch`` holds the same figures
    for reading with the board search included (what a first frame gets).
    """
    from scenegen import CLEAR_TOWERS, random_scene
    from scenegen.sampling import empty_board_scene

    from boardcam.vision import BoardNotFoundError, BoardPose, read_board

    cv2.setNumThreads(1)  # "one core of this machine"
    told = told_appearance(towers)
    known, scratch = _Tally(), _Tally()
    ms_scratch: list[float] = []
    ms_known: list[float] = []
    ms_reference: list[float] = []
    guesses_lost, guessed_boards, clean_boards = 0.0, 0.0, 0
    overrides = {} if edition is None else {"edition": edition}
    if clear_towers:  # the look path-traced and real translucent towers have, which the default scenes lack
        overrides.update(CLEAR_TOWERS)
    if exposure is not None:
        overrides["exposure"] = exposure
    for index in range(count):
        scene = (empty_board_scene if empty else random_scene)(seed + index, size=size, **overrides)
        corners, position = truth_in_reader_convention(scene.truth)
        image = scene.image
        occluded = bool(scene.truth.get("occluded"))
        if not occluded:
            lost, all_right = hidden_icon_guess(position)
            guesses_lost += lost
            guessed_boards += all_right
            clean_boards += 1
        ms_reference.append(_reference_ms(image))
        pose = BoardPose({k: tuple(v) for k, v in corners.items()})
        read_board(image, pose=pose, appearance=told)  # warm the warp-map cache, as the app's second frame would
        start = time.perf_counter()
        reading = read_board(image, pose=pose, appearance=told)
        ms_known.append((time.perf_counter() - start) * 1000)
        known.add(reading, position, occluded, seed + index)
        start = time.perf_counter()
        try:
            found = read_board(image, appearance=told)
        except BoardNotFoundError:
            found = None
        ms_scratch.append((time.perf_counter() - start) * 1000)
        named = truth_as_named(corners, position, None if found is None else found.corners_px)[1]
        scratch.add(found, named, occluded, seed + index)
    out: dict[str, Any] = {"scenes": count, "seed": seed, "size": list(size), "pose": "known (scene truth)"}
    if edition is not None:
        out["edition"] = edition
    if clear_towers:
        out["towers"] = "clear plastic"
    if told is not None:
        out["towers_told"] = towers
    if empty:
        out["boards"] = "empty (the app's setup frame)"
    if exposure is not None:
        out["exposure"] = exposure
    out.update(known.figures())
    out["tile_accuracy_if_pieces_hide"] = 1.0 - guesses_lost / max(20 * clean_boards, 1)
    out["board_exact_if_pieces_hide"] = guessed_boards / max(clean_boards, 1)
    out.update({
        "ms_known_pose": statistics.median(ms_known) if ms_known else None,
        "ms_known_pose_p90": _percentile(ms_known, 90),
        "ms_from_scratch": statistics.median(ms_scratch) if ms_scratch else None,
        "reference_ms": statistics.median(ms_reference) if ms_reference else None,
    })
    out["from_scratch"] = scratch.figures()
    return out


def _percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile: a frame the network looks at twice is slower, and the median alone hides it."""
    return float(np.percentile(values, q)) if values else None


PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png")


def photo_pairs(folder: str | Path, bench: str = "bench photos") -> list[tuple[Path, dict[str, Any]]]:
    """Every image in ``folder`` with a ``<stem>.json`` beside it, and that JSON checked.

    The JSON needs ``position`` (the engine's position JSON).  Optional:
    ``corners_px`` (the array's outer corners A1, H1, H10, A10 in pixels;
    then the image is also read at that pose, and the naming may be either
    way round, as the scene generator writes it), and ``occluded`` (a hand
    or an object over the board).  Without corners the position must be
    named the reader's way: row 1 along the short edge lower in the image.
    The scene generator's ``write_scene`` writes exactly this.
    """
    from boardcam.engine.aliencity import Position
    from boardcam.engine.errors import InputError

    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{bench}: --dir {str(folder)!r} is not a folder")
    pairs = []
    for image in sorted(p for p in root.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES):
        label = image.with_suffix(".json")
        if not label.is_file():
            continue
        try:
            truth = json.loads(label.read_text())
            truth = dict(truth, position=Position.from_json(truth["position"]).to_json())  # the canonical form
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InputError(f"{bench}: {label}: not a position record ({error})") from None
        corners = truth.get("corners_px")
        if corners is not None and (not isinstance(corners, dict) or set(corners) != set(CORNER_NAMES)):
            raise InputError(f"{bench}: {label}: corners_px must name A1, H1, H10 and A10")
        pairs.append((image, truth))
    if not pairs:
        raise InputError(f"{bench}: no image in {str(folder)!r} has a .json record beside it")
    return pairs


def bench_photos(folder: str | Path) -> dict[str, Any]:
    """Read every labelled image of a folder (photos of a real table, or written scenes).

    The same figures as :func:`bench_vision`: from scratch always, at the
    labelled pose too where the record has corners.  ``wrong`` lists every
    lot and tile read wrong, by image, to look at.
    """
    from boardcam.engine.errors import InputError
    from boardcam.vision import BoardNotFoundError, BoardPose, read_board

    cv2.setNumThreads(1)
    known, scratch = _Tally(), _Tally()
    wrong: list[dict[str, Any]] = []
    pairs = photo_pairs(folder)
    for path, truth in pairs:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise InputError(f"bench photos: {path}: not an image OpenCV can read")
        occluded = bool(truth.get("occluded"))
        if truth.get("corners_px") is not None:
            corners, position = truth_in_reader_convention(truth)
            reading = read_board(image, pose=BoardPose({k: tuple(v) for k, v in corners.items()}))
            known.add(reading, position, occluded, path.name)
        else:
            position = truth["position"]
        try:
            found = read_board(image)
        except BoardNotFoundError as error:
            found = None
            wrong.append({"image": path.name, "board": str(error)})
        if found is not None and truth.get("corners_px") is not None:
            position = truth_as_named(corners, position, found.corners_px)[1]
        scratch.add(found, position, occluded, path.name)
        if found is not None and not occluded:
            wrong.extend({"image": path.name, **item} for item in differences(found, position))
    out: dict[str, Any] = {"images": len(pairs), "folder": str(folder)}
    if known.boards or known.occluded_frames:
        out["known_pose"] = known.figures()
    out["from_scratch"] = scratch.figures()
    out["wrong"] = wrong
    return out


def differences(reading: Any, position: dict[str, Any]) -> list[dict[str, Any]]:
    """The lots and tiles a reading got wrong: what stands there, what was read, and how sure."""
    got = reading.position_dict
    out: list[dict[str, Any]] = [
        {"lot": lot, "truth": position["structures"].get(lot), "read": got["structures"].get(lot),
         "confidence": round(float(reading.lot_confidence.get(lot, 0.0)), 3)}
        for lot in wrong_lots(got, position)
    ]
    for key, tile in position["tiles"].items():
        read_tile = got["tiles"].get(key)
        if read_tile != tile:
            out.append({"tile": key, "truth": tile, "read": read_tile,
                        "confidence": round(float(reading.tile_confidence.get(key, 0.0)), 3)})
    return out


def bench_vision_in_game(games: int = 4, seed: int = 900, size: tuple[int, int] = (1640, 1232),
                         light_change: bool = True, plies: int | None = None,
                         edition: str | None = None, clear_towers: bool = False,
                         towers: str = "opaque") -> dict[str, Any]:
    """Reading as the app reads during a game: the same camera frame after frame.

    Each game is a random legal game rendered move by move with one camera
    and (unless ``light_change`` is off) a change of lamps half way.  The
    first frame is the empty board: it is read from scratch, with the known
    pose, and kept as the empty-board reference (what ``boardcam run`` does
    at setup).  Every later frame is read with that pose and reference and
    with the previous reading (``previous=``: unchanged lots keep their
    answer).  ``single_frame`` repeats the figures without ``previous``, to
    show what the memory of the last reading adds.  ``plies`` cuts each game
    short (for quick checks).  ``edition``: every game's tiles printed in
    that edition ("R": art made up per game).  ``clear_towers``: every tower
    of clear coloured plastic, and ``towers`` what the reader is told (as ``bench_vision``).
    """
    from scenegen import CLEAR_TOWERS, game_positions, scene_series

    from boardcam.vision import BoardPose, empty_board_reference, read_board

    cv2.setNumThreads(1)
    told = told_appearance(towers)
    with_memory, single = _Tally(), _Tally()
    ms: list[float] = []
    for game in range(games):
        positions = game_positions(seed + game)[: None if plies is None else plies + 1]
        change_at = {len(positions) // 2} if light_change else set()
        previous = reference = pose = None
        look: dict[str, Any] = {} if edition is None else {"edition": edition}
        if clear_towers:
            look.update(CLEAR_TOWERS)
        for scene in scene_series(seed + game, positions, frames_per_position=1, hands=False,
                                  light_change_at=change_at, size=size, **look):
            corners, position = truth_in_reader_convention(scene.truth)
            if pose is None:
                pose = BoardPose({k: tuple(v) for k, v in corners.items()})
                first = read_board(scene.image, pose=pose, appearance=told)
                reference = empty_board_reference(scene.image, pose, tiles=first.position_dict["tiles"])
                previous = read_board(scene.image, pose=pose, reference=reference, appearance=told)
                continue
            start = time.perf_counter()
            reading = read_board(scene.image, pose=pose, reference=reference, previous=previous, appearance=told)
            ms.append((time.perf_counter() - start) * 1000)
            with_memory.add(reading, position, False, seed + game)
            single.add(read_board(scene.image, pose=pose, reference=reference, appearance=told), position, False,
                       seed + game)
            previous = reading
    out: dict[str, Any] = {"games": games, "seed": seed, "size": list(size), "light_change": light_change,
                           **({"edition": edition} if edition is not None else {}),
                           **({"towers": "clear plastic"} if clear_towers else {}),
                           **({"towers_told": towers} if told is not None else {}),
                           "mode": "known pose, setup reference, previous reading"}
    out.update(with_memory.figures())
    out["ms_median"] = statistics.median(ms) if ms else None
    out["single_frame"] = single.figures()
    return out


def lots_in_reader_convention(truth: dict[str, Any], lots: list[str]) -> list[str]:
    """Lots the scene names (its ``hard_lots``, ``occluded_lots``) as the reader names them
    (``truth_in_reader_convention``: half a turn when the generator's row 1 is the upper edge)."""
    turned = _row1_is_upper(truth["corners_px"])
    return [_rotate_lot(name) if turned else name for name in lots]


class _CaseTally:
    """One hard case read one way: every lot, the lots that make the case, and the hand flag."""

    def __init__(self) -> None:
        self.lots = self.lots_right = self.hard = self.hard_right = self.confident_wrong = 0
        self.frames = self.flagged = self.not_found = 0
        self.wrong_hard: list[dict[str, Any]] = []

    def add(self, reading: Any, position: dict[str, Any], hard: list[str], covered: list[str], scene: int) -> None:
        """A lot under the hand (by the truth) is not counted; one the reading wrongly calls covered is wrong."""
        self.frames += 1
        if reading is None:
            self.not_found += 1
            self.lots += len(LOT_NAMES) - len(covered)
            self.hard += len(hard)
            return
        self.flagged += int(reading.occluded)
        wrong = set(wrong_lots(reading.position_dict, position)) | set(reading.occluded_lots)
        for name in LOT_NAMES:
            if name in covered:
                continue
            right = name not in wrong
            self.lots += 1
            self.lots_right += int(right)
            self.confident_wrong += int(not right and reading.lot_confidence.get(name, 0.0) >= 0.9)
            if name in hard:
                self.hard += 1
                self.hard_right += int(right)
                if not right and len(self.wrong_hard) < 12:
                    self.wrong_hard.append({
                        "scene": scene, "lot": name, "truth": position["structures"].get(name),
                        "read": reading.position_dict["structures"].get(name),
                        "confidence": round(float(reading.lot_confidence.get(name, 0.0)), 3)})

    def figures(self, hand: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lot_accuracy": self.lots_right / max(self.lots, 1),
            "hard_lot_accuracy": self.hard_right / self.hard if self.hard else None,
            "hard_lots": self.hard,
            "confident_wrong": self.confident_wrong / max(self.lots, 1),
            "occluded_flagged" if hand else "clean_flagged_occluded": self.flagged / max(self.frames, 1),
        }
        if self.not_found:
            out["board_not_found"] = self.not_found
        if self.wrong_hard:
            out["wrong_hard_lots"] = self.wrong_hard
        return out


def bench_hard_cases(count: int = 20, seed: int = 0, size: tuple[int, int] = (1640, 1232),
                     edition: str | None = None, cases: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Each of issue 3's named hard cases (scenegen.HARD_CASES) on ``count`` scenes, read three ways.

    ``known_pose``: the frame alone at the true pose (as ``bench vision``
    reads); ``with_reference``: the same, against the empty board of the same
    table under the same lamps (``scenegen.hard_case_empty_board``, its tiles
    as the players confirmed them at setup): how the app reads during a game;
    ``from_scratch``: the board searched for first.  Per way:
    ``lot_accuracy`` over the lots no hand covers, ``hard_lot_accuracy`` over
    the lots that make the case (the black domes on black tiles, the
    black-capped blue towers, ...; None where light alone makes it),
    ``confident_wrong``, and the share of frames flagged occluded (which the
    hand case wants and the others do not).  ``wrong_hard_lots`` lists the
    first hard lots read wrong, to be looked at.  ``cases`` picks some of
    the cases (all by default).
    """
    from scenegen import HARD_CASES, hard_case_empty_board, hard_case_scene

    from boardcam.vision import BoardNotFoundError, BoardPose, empty_board_reference, read_board

    cv2.setNumThreads(1)
    figures: dict[str, Any] = {}
    for case in cases or HARD_CASES:
        tallies = {way: _CaseTally() for way in ("known_pose", "with_reference", "from_scratch")}
        for index in range(count):
            scene = hard_case_scene(case, seed + index, size, edition)
            corners, position = truth_in_reader_convention(scene.truth)
            hard = lots_in_reader_convention(scene.truth, scene.truth["hard_lots"])
            covered = lots_in_reader_convention(scene.truth, scene.truth.get("occluded_lots") or [])
            pose = BoardPose({k: tuple(v) for k, v in corners.items()})
            empty = hard_case_empty_board(case, seed + index, size, edition)
            reference = empty_board_reference(empty.image, pose, tiles=position["tiles"])
            tallies["known_pose"].add(read_board(scene.image, pose=pose), position, hard, covered, seed + index)
            tallies["with_reference"].add(read_board(scene.image, pose=pose, reference=reference), position, hard,
                                          covered, seed + index)
            try:
                found = read_board(scene.image)
            except BoardNotFoundError:
                found = None
            named = truth_as_named(corners, position, None if found is None else found.corners_px)[1]
            if named is not position:  # the reading named the board from its other end (a level board)
                hard, covered = [_rotate_lot(n) for n in hard], [_rotate_lot(n) for n in covered]
            tallies["from_scratch"].add(found, named, hard, covered, seed + index)
        figures[case] = {way: tally.figures(case == "hand") for way, tally in tallies.items()}
    return {"scenes_per_case": count, "seed": seed, "size": list(size),
            **({"edition": edition} if edition is not None else {}), "cases": figures}


def write_overlay_example(path: str = "docs/read-overlay.png", seed: int = 7, size: tuple[int, int] = (1296, 972)) -> dict[str, Any]:
    """Render one scene, read it from scratch and save the frame with its overlay (for the README)."""
    from scenegen import random_scene

    from boardcam.vision import read_board
    from boardcam.vision.overlay import draw_overlay

    scene = random_scene(seed, size=size, hand=None, mat=None)
    reading = read_board(scene.image)
    if not cv2.imwrite(path, draw_overlay(scene.image, reading)):
        raise OSError(f"cannot write {path}")
    return {"path": path, "seed": seed, "size": list(size), "structures": len(reading.position_dict["structures"])}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench_vision(int(sys.argv[1]) if len(sys.argv) > 1 else 20), indent=2))
