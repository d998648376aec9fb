"""Has the board (or the camera) been bumped since its pose was fixed?

The app reads every frame with the stored pose, which is fast but silently
wrong once someone knocks the table: every lot is then sampled a little off.
This check is cheap enough to run on each still frame and answers one of

* ``steady``  — the array is where the pose says;
* ``moved``   — it is visibly elsewhere: re-find the board (the game state is
  unaffected, only the pose changes);
* ``unsure``  — too little of the array's outline is visible (a hand, an
  arm, a new lamp): do not decide now, look again on the next still frame.

How: when the pose is fixed we keep the edge structure (gradient magnitude)
around eight anchors of the array's outline: its four corners and the
middles of its four sides, each patch pushed outward so it holds mostly
table.  The outline, not the middle, because pieces are added in the middle
all game long while the outline and the table around it stay put.  Later
each patch is looked for in a small window around where it should be.  An
anchor has moved when it is found clearly better somewhere beyond the
tolerance; the board has moved when the moved anchors agree on one
plausible bump (shift plus a small turn) and outnumber those that stayed.
One or two patches dragged off by a piece, glare or a hand do not count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

__all__ = [
    "CORNER_NAMES",
    "ANCHOR_NAMES",
    "corner_points",
    "DriftReference",
    "DriftCheck",
    "drift_reference",
    "check_drift",
    "corner_displacement",
    "poses_differ",
    "consensus_motion",
]

CORNER_NAMES = ("A1", "H1", "H10", "A10")
#: Where patches are kept: the four corners and the middles of the four
#: sides (row 1, column H, row 10, column A).  A side's middle is rarely
#: covered at the same time as the corners, so a full board stays judgeable.
ANCHOR_NAMES = CORNER_NAMES + ("row1", "colH", "row10", "colA")

#: Four corners A1, H1, H10, A10: a name -> (x, y) mapping, a list of pairs or a 4x2 array.
Corners = Mapping[str, Sequence[float]] | Sequence[Sequence[float]] | np.ndarray

#: Work at this many pixels along the board's longer side: plenty for a
#: shift of a few millimetres, and ~1 ms per check on a Pi.
WORK_SIDE_PX = 320
PATCH_FRACTION = 0.22  # patch side as a share of the board's shorter side
SEARCH_FRACTION = 0.12  # search radius as a share of the board's shorter side
MIN_MATCH = 0.6  # normalised correlation below this: corner not seen
CLEAR_PREFERENCE = 0.08  # a new place must match this much better than the old one
OUTWARD_SHIFT = 0.3  # patch centre this many patch sides outside the corner


@dataclass(frozen=True)
class DriftReference:
    """Edge patches around the array's corners, taken when the pose was fixed."""

    corners_px: tuple[tuple[float, float], ...]  # A1, H1, H10, A10, full-resolution pixels
    image_size: tuple[int, int]  # (width, height) of the frame the pose belongs to
    scale: float  # work pixels per full-resolution pixel
    patch_half: int  # work pixels
    search: int  # work pixels
    patches: tuple[np.ndarray, ...]  # float32 edge patches, one per anchor (ANCHOR_NAMES)


@dataclass(frozen=True)
class DriftCheck:
    """Outcome of one check; ``shift_px`` only holds anchors seen confidently."""

    status: str  # "steady" | "moved" | "unsure"
    shift_px: Mapping[str, tuple[float, float]]  # anchor name -> measured displacement
    match: Mapping[str, float]  # anchor name -> best normalised correlation
    tolerance_px: float

    @property
    def moved(self) -> bool:
        return self.status == "moved"

    @property
    def corner_shift_px(self) -> dict[str, tuple[float, float]]:
        return {name: self.shift_px[name] for name in CORNER_NAMES if name in self.shift_px}

    def agreed_shift(self) -> tuple[float, float] | None:
        """The shift every anchor seen agrees on, when at least two were seen and all moved beyond the
        tolerance by the same amount (each within the tolerance of their mean); None otherwise.

        Why: a board filling the frame's height leaves its corner patches
        outside the picture, and two anchors are too few to call a knock on
        their own (a hand or a lamp can drag two patches off together), so
        such a check says "unsure".  Yet anchors that all moved alike are
        evidence the app can weigh against another measurement of the same
        knock (the runner's registration on the empty-board reference), which
        a hand over two patches would not move with them.
        """
        shifts = np.array(list(self.shift_px.values()), np.float64).reshape(-1, 2)
        if len(shifts) < 2 or (np.hypot(shifts[:, 0], shifts[:, 1]) <= self.tolerance_px).any():
            return None
        mean = shifts.mean(axis=0)
        if (np.hypot(*(shifts - mean).T) > self.tolerance_px).any():
            return None
        return float(mean[0]), float(mean[1])

    @property
    def max_shift_px(self) -> float:
        return max((math.hypot(dx, dy) for dx, dy in self.shift_px.values()), default=0.0)


def corner_points(corners: Corners) -> np.ndarray:
    """Four corners as a 4x2 float array in A1, H1, H10, A10 order (from a mapping, pairs or an array)."""
    if isinstance(corners, Mapping):
        return np.array([[float(corners[n][0]), float(corners[n][1])] for n in CORNER_NAMES])
    points = np.asarray(corners, np.float64).reshape(-1, 2)
    if len(points) != 4:
        raise ValueError("expected four corners A1, H1, H10, A10")
    return points


def corner_displacement(
    before: Corners,
    after: Corners,
) -> float:
    """Largest distance (px) any outer corner moved between two poses."""
    return float(np.max(np.linalg.norm(corner_points(before) - corner_points(after), axis=1)))


def poses_differ(
    before: Corners,
    after: Corners,
    tolerance_px: float | None = None,
) -> bool:
    """Whether two poses of the same board are further apart than noise.

    The default tolerance is 1 % of the board's shorter side (about half a
    millimetre of tile at any camera height), never below 2 px.
    """
    if tolerance_px is None:
        tolerance_px = _default_tolerance(corner_points(before))
    return corner_displacement(before, after) > tolerance_px


def _board_sides(points: np.ndarray) -> tuple[float, float]:
    sides = [float(np.linalg.norm(points[i] - points[(i + 1) % 4])) for i in range(4)]
    return min(sides), max(sides)


def _default_tolerance(points: np.ndarray) -> float:
    short, _ = _board_sides(points)
    return max(2.0, 0.01 * short)


def _gray(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image


def _edges(gray: np.ndarray, scale: float) -> np.ndarray:
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 1.0).astype(np.float32)
    gx = cv2.Sobel(small, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(small, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.magnitude(gx, gy)


def _crop(image: np.ndarray, cx: float, cy: float, half: int) -> np.ndarray | None:
    x0, y0 = int(round(cx)) - half, int(round(cy)) - half
    x1, y1 = x0 + 2 * half + 1, y0 + 2 * half + 1
    if x0 < 0 or y0 < 0 or x1 > image.shape[1] or y1 > image.shape[0]:
        return None
    return image[y0:y1, x0:x1]


def _anchors(corners: np.ndarray) -> np.ndarray:
    """The corners (A1, H1, H10, A10) followed by the middles of the sides between them."""
    middles = (corners + np.roll(corners, -1, axis=0)) / 2
    return np.concatenate([corners, middles])


def _patch_centres(points: np.ndarray, patch_side: float) -> np.ndarray:
    """Patch centres pushed outward from each corner along the diagonal.

    The patch then holds the corner, both edges meeting there and mostly
    table: pieces placed on the corner lots change only a small part of it.
    """
    centre = points[:4].mean(axis=0)
    outward = points - centre
    outward /= np.maximum(np.linalg.norm(outward, axis=1, keepdims=True), 1e-9)
    return np.asarray(points + outward * OUTWARD_SHIFT * patch_side, np.float64)


def drift_reference(
    image: np.ndarray,
    corners_px: Corners,
    intrinsics: Any = None,
) -> DriftReference:
    """Remember what the array's corners look like in ``image`` (BGR or grey).

    Poses live in the undistorted image when the camera is calibrated; pass
    its ``intrinsics`` (vision's CameraIntrinsics) and the corners are moved
    to where the lens really shows them in this raw frame.
    """
    gray = _gray(image)
    points = corner_points(corners_px)
    if intrinsics is not None:
        from boardcam.vision.geometry import distort_points

        points = np.asarray(distort_points(points, intrinsics, (gray.shape[1], gray.shape[0])), np.float64)
    short, long = _board_sides(points)
    scale = min(1.0, WORK_SIDE_PX / max(long, 1.0))
    edges = _edges(gray, scale)
    patch_half = max(6, int(round(PATCH_FRACTION * short * scale / 2)))
    search = max(3, int(round(SEARCH_FRACTION * short * scale)))
    patches = []
    for x, y in _patch_centres(_anchors(points) * scale, 2 * patch_half + 1):
        patch = _crop(edges, x, y, patch_half)
        patches.append(patch.copy() if patch is not None else np.zeros((0, 0), np.float32))
    return DriftReference(
        corners_px=tuple((float(x), float(y)) for x, y in points),
        image_size=(gray.shape[1], gray.shape[0]),
        scale=scale,
        patch_half=patch_half,
        search=search,
        patches=tuple(patches),
    )


def _similarity(p0: np.ndarray, p1: np.ndarray, q0: np.ndarray, q1: np.ndarray) -> tuple[complex, complex]:
    """The similarity z -> a z + b (complex form) taking p0, p1 to q0, q1."""
    zp0, zp1 = complex(*p0), complex(*p1)
    zq0, zq1 = complex(*q0), complex(*q1)
    a = (zq1 - zq0) / (zp1 - zp0)
    return a, zq0 - a * zp0


def consensus_motion(
    before: np.ndarray, after: np.ndarray, tolerance_px: float
) -> np.ndarray | None:
    """Indices of the corners that moved together, or None if no plausible motion explains two.

    A bumped board or camera moves the array rigidly (a shift and a small
    turn, hardly any change of scale); chance matches scatter.  Every pair
    of corners proposes a similarity; proposals that rescale by more than 4 %
    or turn by more than 6 degrees are not bumps.  The proposal most corners
    agree with (within the tolerance) wins.
    """
    best: np.ndarray | None = None
    slack = max(3.0, tolerance_px)
    for i in range(len(before)):
        for j in range(i + 1, len(before)):
            a, b = _similarity(before[i], before[j], after[i], after[j])
            if abs(abs(a) - 1.0) > 0.04 or abs(np.degrees(np.angle(a))) > 6.0:
                continue
            predicted = np.array([[(a * complex(*p) + b).real, (a * complex(*p) + b).imag] for p in before])
            inliers = np.flatnonzero(np.linalg.norm(predicted - after, axis=1) <= slack)
            if len(inliers) >= 2 and (best is None or len(inliers) > len(best)):
                best = inliers
    return best


def check_drift(
    reference: DriftReference,
    image: np.ndarray,
    *,
    tolerance_px: float | None = None,
) -> DriftCheck:
    """Compare a still frame with the reference; see the module docstring.

    A corner counts as seen when its patch matches well somewhere in the
    window, and as moved when that best place is beyond the tolerance *and*
    clearly better than the old place (pieces and glare lower both alike).
    """
    gray = _gray(image)
    if (gray.shape[1], gray.shape[0]) != reference.image_size:
        # Another resolution or another camera: the stored pose cannot apply.
        return DriftCheck("moved", {}, {}, tolerance_px or 0.0)
    points = np.array(reference.corners_px)
    if tolerance_px is None:
        tolerance_px = _default_tolerance(points)
    edges = _edges(gray, reference.scale)
    anchors = _anchors(points)
    centres = _patch_centres(anchors * reference.scale, 2 * reference.patch_half + 1)
    shifts: dict[str, tuple[float, float]] = {}
    matches: dict[str, float] = {}
    moved: list[str] = []
    for name, (x, y), patch in zip(ANCHOR_NAMES, centres, reference.patches):
        if patch.size == 0 or float(patch.std()) < 1e-3:
            continue  # corner was outside the frame or featureless at calibration
        window = _crop(edges, x, y, reference.patch_half + reference.search)
        if window is None:
            continue
        scores = cv2.matchTemplate(window, patch, cv2.TM_CCOEFF_NORMED)
        _, best, _, (bx, by) = cv2.minMaxLoc(scores)
        matches[name] = float(best)
        if best < MIN_MATCH:
            continue
        dx, dy = _subpixel(scores, bx, by)
        shift = ((bx + dx - reference.search) / reference.scale, (by + dy - reference.search) / reference.scale)
        at_old_place = float(scores[reference.search, reference.search])
        if math.hypot(*shift) > tolerance_px and best - at_old_place < CLEAR_PREFERENCE:
            shift = (0.0, 0.0)  # the old place matches about as well: nothing to conclude from it
        shifts[name] = shift
        if math.hypot(*shift) > tolerance_px:
            moved.append(name)
    if len(shifts) < 3:
        return DriftCheck("unsure", shifts, matches, tolerance_px)
    if len(moved) < 2:
        return DriftCheck("steady", shifts, matches, tolerance_px)
    names = list(shifts)
    before = np.array([anchors[ANCHOR_NAMES.index(n)] for n in names])
    after = before + np.array([shifts[n] for n in names])
    still = len(shifts) - len(moved)
    agreeing = consensus_motion(before, after, tolerance_px)
    together = [names[i] for i in agreeing if names[i] in moved] if agreeing is not None else []
    # The bump must explain more anchors than "nothing moved" does: a hand
    # or a lamp can drag two patches off together, rarely more.
    if len(together) >= 2 and len(together) > still:
        status = "moved"
    elif still > len(together):
        status = "steady"
    else:
        status = "unsure"
    return DriftCheck(status, shifts, matches, tolerance_px)


def _subpixel(scores: np.ndarray, x: int, y: int) -> tuple[float, float]:
    """Parabolic refinement of a correlation peak (offsets in [-0.5, 0.5])."""

    def offset(left: float, centre: float, right: float) -> float:
        denominator = left - 2 * centre + right
        return 0.0 if abs(denominator) < 1e-9 else float(np.clip(0.5 * (left - right) / denominator, -0.5, 0.5))

    h, w = scores.shape
    dx = offset(scores[y, x - 1], scores[y, x], scores[y, x + 1]) if 0 < x < w - 1 else 0.0
    dy = offset(scores[y - 1, x], scores[y, x], scores[y + 1, x]) if 0 < y < h - 1 else 0.0
    return dx, dy
