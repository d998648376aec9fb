"""Board calibration: find the empty tile array, fix its pose and orientation, learn the tiles.

With the 20 tiles laid out and no pieces yet, one frame is enough to

1. find the array (a printed mat's markers when they are in view, else
   vision's markerless finder);
2. decide which short side is row 1 (default: the one nearest the bottom of
   the frame, as a player sitting at the camera's "bottom" sees it; the mat
   decides by itself because its marker 0 is printed at A1);
3. read the layout (each tile's guild colour and icon lot) and draw it over
   the frame so a player can confirm it;
4. learn what this edition's tiles look like under this light (Lab mean and
   covariance per guild colour, vision's ``Appearance`` classes ``tile:<colour>``).

Orientation is a pure relabelling: the corners stay where they are, only
which of them is called A1 changes (by half a turn, since row 1 must be a
4-tile edge and a camera looking down never mirrors the board).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from boardcam.calibration.drift import CORNER_NAMES, Corners, corner_points
from boardcam.calibration.store import ROW1_SIDES, Calibration
from boardcam.engine.errors import InputError

__all__ = [
    "CORNER_NAMES",
    "BoardCalibration",
    "orient_corners",
    "match_orientation",
    "row1_side",
    "locate_board",
    "implausible_array",
    "calibrate_board",
    "board_at",
    "learn_tile_colours",
    "merge_colours",
    "draw_board_overlay",
]

TILE_PX = 48  # warped tile size for learning colours: plenty of pixels, fast
SHORT_COLOUR = {"red": "red", "blue": "blu", "green": "grn", "black": "blk"}
SURE_TILE = 0.6  # tile confidence from which a tile is learned from (below: "check tile" on the overlay)


def _half_turn(points: np.ndarray) -> np.ndarray:
    """Relabel so the old row 10 becomes row 1 (A1<-H10, H1<-A10, ...)."""
    return np.roll(points, -2, axis=0)


def row1_side(corners: Corners) -> str:
    """Which side of the image the row-1 edge faces: bottom, top, left or right.

    Decided by the direction from the row-10 edge's midpoint to the row-1
    edge's midpoint, so it is well defined at any rotation.
    """
    p = corner_points(corners)
    direction = (p[0] + p[1]) / 2 - (p[2] + p[3]) / 2
    if abs(direction[1]) >= abs(direction[0]):
        return "bottom" if direction[1] > 0 else "top"
    return "right" if direction[0] > 0 else "left"


def orient_corners(
    corners: Corners, row1: str = "bottom"
) -> np.ndarray:
    """The corners relabelled so row 1 is the short edge nearest ``row1``.

    ``corners`` must already run A1 -> H1 -> H10 -> A10 around the array (any
    of the two labellings that have a 4-tile edge from A1 to H1); returns a
    4x2 array in that order.
    """
    if row1 not in ROW1_SIDES:
        raise InputError(f"--row1: expected one of {', '.join(ROW1_SIDES)}, got {row1!r}")
    p: np.ndarray = corner_points(corners)
    row1_mid = (p[0] + p[1]) / 2
    row10_mid = (p[2] + p[3]) / 2
    axis, sign = {"bottom": (1, 1), "top": (1, -1), "right": (0, 1), "left": (0, -1)}[row1]
    if sign * row10_mid[axis] > sign * row1_mid[axis]:
        p = _half_turn(p)
    return p


def match_orientation(
    found: Corners,
    previous: Corners,
) -> np.ndarray:
    """Label a freshly found array like the previous pose (after a bump).

    The finder labels row 1 by its own rule; the players' choice must
    survive a re-find, so keep whichever of the two labellings puts each
    corner nearest where the same-named corner was.
    """
    p: np.ndarray = corner_points(found)
    q = corner_points(previous)
    turned = _half_turn(p)
    if np.linalg.norm(turned - q, axis=1).sum() < np.linalg.norm(p - q, axis=1).sum():
        return turned
    return p


def implausible_array(corners: Corners, image_size: tuple[int, int]) -> str | None:
    """Why four corners cannot be a 4x5 tile array seen from above, or None if they can.

    Calibration is saved and trusted for a whole game, so a degenerate
    finding (collapsed or twisted quad, a sliver) is refused here.
    """
    p = corner_points(corners)
    sides = [float(np.linalg.norm(p[i] - p[(i + 1) % 4])) for i in range(4)]
    if min(sides) < 0.08 * min(image_size):
        return f"a side is only {min(sides):.0f} px long"
    def turn(a: np.ndarray, b: np.ndarray) -> float:  # z of the 2-D cross product
        return float(a[0] * b[1] - a[1] * b[0])

    crosses = [turn(p[(i + 1) % 4] - p[i], p[(i + 2) % 4] - p[(i + 1) % 4]) for i in range(4)]
    if not (all(c > 0 for c in crosses) or all(c < 0 for c in crosses)):
        return "its outline is not convex"
    rows = (sides[0] + sides[2]) / 2  # A1-H1 and H10-A10: 4 tiles
    columns = (sides[1] + sides[3]) / 2  # H1-H10 and A10-A1: 5 tiles
    ratio = columns / rows
    if not 0.6 < ratio < 2.2:  # 1.25 seen square-on; perspective and tilt stretch it
        return f"its sides are in ratio {ratio:.2f}, not about 5:4"
    return None


def locate_board(
    image: np.ndarray, *, intrinsics: Any = None, mat: Any = None
) -> tuple[Any, str]:
    """(BoardPose, "mat" | "markerless"); vision's BoardNotFoundError if neither finds it.

    Like vision's reader, a mat is looked for even when none is stored (the
    default MatSpec's markers are unmistakable), at full resolution here
    because this pose is kept for the whole game.
    """
    from boardcam.vision.find_board import find_board
    from boardcam.vision.mat import MatSpec, find_mat

    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    if intrinsics is not None:  # poses live in the undistorted image
        from boardcam.vision.geometry import camera_matrix_for

        size = (gray.shape[1], gray.shape[0])
        gray = cv2.undistort(gray, camera_matrix_for(size, intrinsics), np.array(intrinsics.dist_coeffs))
    pose = find_mat(gray, mat if mat is not None else MatSpec(), layout_known=mat is not None)
    if pose is not None and mat is None:  # a mat of unknown tile size: where its grid really is
        from boardcam.vision.models import BoardPose
        from boardcam.vision.reader import grid_near

        return BoardPose.from_points(grid_near(image, np.array(pose.ordered()), intrinsics)), "mat"
    if pose is not None:
        return pose, "mat"
    return find_board(image, intrinsics), "markerless"


@dataclass(frozen=True)
class BoardCalibration:
    """What ``calibrate board`` found, ready to save (``calibration``) or show."""

    corners_px: Mapping[str, tuple[float, float]]
    row1: str
    found_by: str
    position: Mapping[str, Any] | None  # engine Position JSON of the layout read, if any
    tile_confidence: Mapping[str, float]
    learned: tuple[str, ...]  # Appearance classes learned from this frame
    calibration: Calibration

    def summary(self) -> str:
        tiles = self.position.get("tiles", {}) if self.position else {}
        unsure = sorted(k for k, v in self.tile_confidence.items() if v < SURE_TILE)
        parts = [
            f"board found ({self.found_by}), row 1 at the {self.row1} of the frame",
            f"{len(tiles)} tiles read",
        ]
        if unsure:
            parts.append(f"check tiles {', '.join(unsure)}")
        if self.learned:
            parts.append(f"learned {', '.join(self.learned)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "board": {"corners_px": {k: [round(v[0], 2), round(v[1], 2)] for k, v in self.corners_px.items()},
                      "row1": self.row1, "found_by": self.found_by},
            "position": self.position,
            "confidence": {"tiles": {k: round(float(v), 3) for k, v in self.tile_confidence.items()}},
            "learned": list(self.learned),
        }


def _read_layout(
    image: np.ndarray, pose: Any, intrinsics: Any, appearance: Any, mat: Any
) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """Vision's reading of the tiles with the pose fixed; (None, {}) if vision cannot read yet."""
    try:
        from boardcam.vision import read_board
    except ImportError:
        return None, {}
    reading = read_board(image, intrinsics=intrinsics, pose=pose, appearance=appearance, mat=mat)
    position = reading.position_json()
    return position, {str(k): float(v) for k, v in reading.tile_confidence.items()}


def empty_reference(
    image: np.ndarray, pose: Any, intrinsics: Any, gains: np.ndarray, tiles: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Vision's picture of the empty array (JSON) for its difference test, if vision offers one.

    Taken through the same fixed gains as everything else, with the layout
    the players confirmed (or the one just read).
    """
    try:
        from boardcam.vision.reader import empty_board_reference
    except ImportError:
        return None
    chosen = {str(k): {"color": str(v["color"]), "icon": str(v["icon"])} for k, v in tiles.items()} if tiles else None
    balance = (float(gains[0]), float(gains[1]), float(gains[2]))
    reference = empty_board_reference(image, pose, intrinsics=intrinsics, white_balance=balance, tiles=chosen)
    return dict(reference.to_json())


def white_balance_gains(warped_board: np.ndarray) -> np.ndarray:
    """BGR gains that make the board's illuminant estimate neutral (vision's estimator), raised together
    when the board is underexposed as the vision's own balance is (``colour.exposure_lift``)."""
    from boardcam.vision.colour import exposure_lift, shades_of_grey_gains

    gains = np.asarray(shades_of_grey_gains(warped_board), np.float64)
    return gains * exposure_lift(warped_board, gains)


def balanced_lab(warped: np.ndarray, gains: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """White-balanced Lab exactly as vision computes it (estimated gains when none are given)."""
    from boardcam.vision.colour import to_lab

    chosen = white_balance_gains(warped) if gains is None else np.asarray(gains, np.float64)
    return np.asarray(to_lab(warped, chosen))


def warp_board(image: np.ndarray, pose: Any, intrinsics: Any = None, tile_px: int = TILE_PX) -> np.ndarray:
    """Top-down image of the array (A1 bottom-left), ``tile_px`` per tile."""
    from boardcam.vision.geometry import build_warp

    geometry = build_warp(pose, (image.shape[1], image.shape[0]), tile_px, intrinsics)
    return np.asarray(geometry.warp(image))


def _stats(pixels: np.ndarray) -> dict[str, Any]:
    """ColourStats JSON; the "mean" is the per-channel median, robust to glare and stray pixels."""
    pixels = pixels.reshape(-1, 3).astype(np.float64)
    mean = np.median(pixels, axis=0)
    covariance = np.cov(pixels, rowvar=False) if len(pixels) > 3 else np.eye(3) * 25.0
    return {
        "mean": [round(float(v), 3) for v in mean],
        "covariance": [[round(float(v), 3) for v in row] for row in covariance],
        "count": int(len(pixels)),
    }


def tile_cell(warped_lab: np.ndarray, tile_key: str, tile_px: int) -> np.ndarray:
    """Pixels of one tile (named by its lower-left lot, e.g. ``"C3"``) in the warped image."""
    column = (ord(tile_key[0].upper()) - ord("A")) // 2
    row = (int(tile_key[1:]) - 1) // 2
    tiles_tall = warped_lab.shape[0] // tile_px
    y0 = (tiles_tall - 1 - row) * tile_px
    x0 = column * tile_px
    return warped_lab[y0 : y0 + tile_px, x0 : x0 + tile_px]


def lot_names() -> list[str]:
    return [f"{column}{row}" for row in range(1, 11) for column in "ABCDEFGH"]


def bare_lot_medians(warped_lab: np.ndarray, tile_px: int = TILE_PX) -> dict[str, list[float]]:
    """Median Lab of the middle of every lot of the empty array.

    80 numbers-triples, small enough for the calibration file, and exactly
    what the teach step needs to tell "a piece is there" from "this lot's
    own art" (an icon lot looks nothing like the plain colour of its tile).
    """
    lot_px = tile_px // 2
    rows_total = warped_lab.shape[0] // lot_px
    yy, xx = np.mgrid[0:lot_px, 0:lot_px]
    middle = (xx + 0.5 - lot_px / 2) ** 2 + (yy + 0.5 - lot_px / 2) ** 2 <= (0.3 * lot_px) ** 2
    out: dict[str, list[float]] = {}
    for name in lot_names():
        column, row = ord(name[0]) - ord("A"), int(name[1:]) - 1
        y0, x0 = (rows_total - 1 - row) * lot_px, column * lot_px
        cell = warped_lab[y0 : y0 + lot_px, x0 : x0 + lot_px]
        out[name] = [round(float(v), 2) for v in np.median(cell[middle], axis=0)]
    return out


def learn_tile_colours(
    warped_lab: np.ndarray, tiles: Mapping[str, Mapping[str, Any]], tile_px: int = TILE_PX
) -> dict[str, dict[str, Any]]:
    """ColourStats JSON per ``tile:<colour>`` from the tiles of a known layout.

    Each tile's face without a rim of 12 % (the gaps, neighbours' edges, a
    millimetre of misplacement) so the statistics describe the print, not the table.
    """
    rim = max(1, int(round(0.12 * tile_px)))
    samples: dict[str, list[np.ndarray]] = {}
    for key, tile in tiles.items():
        colour = str(tile.get("color", ""))
        if not colour:
            continue
        cell = tile_cell(warped_lab, key, tile_px)[rim:-rim, rim:-rim]
        samples.setdefault(f"tile:{colour}", []).append(cell.reshape(-1, 3))
    return {name: _stats(np.concatenate(parts)) for name, parts in sorted(samples.items())}


def merge_colours(
    appearance: Mapping[str, Any] | None, colours: Mapping[str, Mapping[str, Any]], tile_mm: float | None = None
) -> dict[str, Any]:
    """Appearance JSON with ``colours`` added or replaced (other classes kept)."""
    merged: dict[str, Any] = dict(appearance or {"tile_mm": 51.0, "colours": {}, "white_balance": None})
    merged["colours"] = {**dict(merged.get("colours") or {}), **{k: dict(v) for k, v in colours.items()}}
    if tile_mm is not None:
        merged["tile_mm"] = float(tile_mm)
    merged.setdefault("tile_mm", 51.0)
    merged.setdefault("white_balance", None)
    return merged


def calibrate_board(
    image: np.ndarray,
    calibration: Calibration | None = None,
    *,
    row1: str | None = None,
    tile_mm: float | None = None,
    layout: Mapping[str, Any] | None = None,
) -> BoardCalibration:
    """Find, orient and read the empty array in ``image``; learn its tiles.

    ``row1`` None means: the mat's own orientation when the board was found
    by the mat, else ``"bottom"``.  Raises vision's BoardNotFoundError (an
    InputError) when there is no array to be found.
    """
    from boardcam.vision.models import BoardPose

    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise InputError("image: expected a colour (BGR) frame")
    calibration = calibration or Calibration()
    intrinsics = calibration.camera_intrinsics()
    mat = calibration.mat_spec()
    found, found_by = locate_board(image, intrinsics=intrinsics, mat=mat)
    points = corner_points(found.corners_px)
    problem = implausible_array(points, (image.shape[1], image.shape[0]))
    if problem:
        from boardcam.vision.errors import BoardNotFoundError

        raise BoardNotFoundError(f"no usable tile array found ({problem}); is the whole array in view?")
    if row1 is not None or found_by != "mat":
        points = orient_corners(points, row1 or "bottom")
    return board_at(image, points, calibration, found_by=found_by, tile_mm=tile_mm, layout=layout)


def board_at(
    image: np.ndarray,
    corners: Corners,
    calibration: Calibration | None = None,
    *,
    found_by: str = "given",
    tile_mm: float | None = None,
    layout: Mapping[str, Any] | None = None,
) -> BoardCalibration:
    """Board calibration with the array's corners already known (A1, H1, H10, A10).

    What :func:`calibrate_board` does after finding: read the layout, fix the
    white balance, learn the tiles.  Also the entry point for corners a
    player marked by hand, or a pose kept from an earlier session.
    """
    from boardcam.vision.models import BoardPose

    calibration = calibration or Calibration()
    intrinsics = calibration.camera_intrinsics()
    mat = calibration.mat_spec()
    # A new board step reads the layout afresh: an earlier empty-board
    # reference would hand back the *old* layout as certain.
    appearance = calibration.learned_appearance(with_reference=False)
    points = corner_points(corners)
    side = row1_side(points)
    pose = BoardPose.from_points(points)
    if tile_mm is None and mat is not None:
        tile_mm = float(mat.tile_mm)  # the printed mat says how large the tiles are
    position, tile_confidence = _read_layout(image, pose, intrinsics, appearance, mat)
    if layout is not None:  # the players' own account of the tiles beats any reading
        tiles = layout.get("tiles", layout)
        if not isinstance(tiles, Mapping) or len(tiles) != 20:
            raise InputError("--layout: expected the 20 tiles of a position (keys A1, C1, ..., G9)")
        position = {"game": "alien-city", "tiles": {str(k).upper(): dict(v) for k, v in tiles.items()}, "structures": {}}
        tile_confidence = {key: 1.0 for key in position["tiles"]}
    # The empty array is the best white reference this table will ever show:
    # no pieces to bias the estimate.  Fixing these gains keeps colours steady
    # as the board fills up, and everything learned (tiles now, pieces in the
    # teach step) is measured through the very same gains vision will use.
    warped = warp_board(image, pose, intrinsics)
    gains = white_balance_gains(warped)
    warped_lab = balanced_lab(warped, gains)
    learned: dict[str, dict[str, Any]] = {}
    if position and position.get("tiles"):
        # Learn only from tiles the reader is sure of: a blue tile misread as
        # black would teach "black" the wrong colour for the whole game.
        sure = {key: tile for key, tile in position["tiles"].items() if tile_confidence.get(key, 1.0) >= SURE_TILE}
        learned = learn_tile_colours(warped_lab, sure)
    appearance_json = merge_colours(calibration.appearance, learned, tile_mm)
    appearance_json["white_balance"] = [round(float(g), 5) for g in gains]
    board = {
        "corners_px": {name: [round(float(x), 2), round(float(y), 2)] for name, (x, y) in zip(CORNER_NAMES, points)},
        "row1": side,
        "found_by": found_by,
        "image_size": [int(image.shape[1]), int(image.shape[0])],
    }
    reference = empty_reference(image, pose, intrinsics, gains, position.get("tiles") if position else None)
    if reference is not None:
        # The reference is a picture of this setup: it keeps the pose it was
        # taken at, and is set aside wherever the board is found elsewhere.
        reference["taken_at"] = {"corners_px": board["corners_px"], "image_size": board["image_size"]}
    appearance_json["reference"] = reference  # None drops an older setup's reference
    board["empty_lots_lab"] = bare_lot_medians(warped_lab)
    if position is not None:
        board["layout"] = position.get("tiles", {})
    updated = calibration.updated(board=board, appearance=appearance_json)
    return BoardCalibration(
        corners_px={name: (float(x), float(y)) for name, (x, y) in zip(CORNER_NAMES, points)},
        row1=side,
        found_by=found_by,
        position=position,
        tile_confidence=tile_confidence,
        learned=tuple(learned),
        calibration=updated,
    )


def draw_board_overlay(image: np.ndarray, result: BoardCalibration, intrinsics: Any = None) -> np.ndarray:
    """The frame with the array outline, row 1 highlighted, corner names and tiles read."""
    out = image.copy()
    ideal = corner_points(result.corners_px)
    size = (image.shape[1], image.shape[0])

    def to_frame(xy: np.ndarray) -> np.ndarray:
        """Undistorted-image points (where poses live) -> this raw frame."""
        if intrinsics is None:
            return xy
        from boardcam.vision.geometry import distort_points

        return np.asarray(distort_points(xy.reshape(-1, 2), intrinsics, size), np.float64).reshape(xy.shape)

    points = to_frame(ideal)
    scale = max(1.0, image.shape[1] / 800)
    thick = max(1, int(round(2 * scale)))
    cv2.polylines(out, [np.round(points).astype(np.int32)], True, (0, 255, 255), thick, cv2.LINE_AA)
    cv2.line(out, tuple(np.round(points[0]).astype(int)), tuple(np.round(points[1]).astype(int)),
             (0, 0, 255), 2 * thick, cv2.LINE_AA)
    for name, (x, y) in zip(CORNER_NAMES, points):
        cv2.putText(out, name, (int(x) + 6, int(y) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale,
                    (0, 255, 255), thick, cv2.LINE_AA)
    if result.position:
        homography = cv2.getPerspectiveTransform(
            np.array([[0, 0], [4, 0], [4, 5], [0, 5]], np.float32), ideal.astype(np.float32)
        )
        for key, tile in result.position.get("tiles", {}).items():
            column = (ord(key[0]) - ord("A")) // 2
            row = (int(key[1:]) - 1) // 2
            centre = to_frame(
                cv2.perspectiveTransform(np.array([[[column + 0.5, row + 0.5]]], np.float32), homography)[0, 0]
            )
            icon = str(tile.get("icon", ""))
            label = f"{SHORT_COLOUR.get(str(tile.get('color')), '?')} {icon}"
            confidence = result.tile_confidence.get(key, 1.0)
            colour = (255, 255, 255) if confidence >= SURE_TILE else (0, 0, 255)
            if len(icon) >= 2 and icon[1:].isdigit():  # ring the icon lot itself
                icon_xy = to_frame(cv2.perspectiveTransform(
                    np.array([[[(ord(icon[0]) - ord("A") + 0.5) / 2, (int(icon[1:]) - 0.5) / 2]]], np.float32),
                    homography)[0, 0])
                cv2.circle(out, (int(icon_xy[0]), int(icon_xy[1])), max(3, int(6 * scale)), colour, thick,
                           cv2.LINE_AA)
            cv2.putText(out, label, (int(centre[0]) - int(22 * scale), int(centre[1])),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, (0, 0, 0), thick + 2, cv2.LINE_AA)
            cv2.putText(out, label, (int(centre[0]) - int(22 * scale), int(centre[1])),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, colour, thick, cv2.LINE_AA)
    return out
