"""Say "occluded" when a hand, arm or other object is over the board.

An arm reaching over the board always crosses the array's outline: it comes
from outside the picture.  Pieces never do more than lean half a lot over the
edge, so they never reach the *outer* part of the band of table that the warp
keeps around the array.  The test therefore joins two maps:

* on the table band: pixels unlike the table (ΔE from the band's median
  colour, well above the band's own texture);
* on the array: pixels unlike the empty look of their lot (the lot reader's
  difference map);

and looks for a connected region that touches the outer rim of the band and
covers more of the array than a piece could (two lots).  Lots under such a
region are listed; their readings are not to be trusted.

A hand beside the board, or above it, covers no lot, yet its shade falls on
the board.  ``surroundings_changed`` compares the picture around the board
with the reading before's: when something came or went there, a lot whose
look changed may have changed by the hand's shade alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from boardcam.vision.models import LOTS_TALL, LOTS_WIDE
from boardcam.vision.tiles import lot_id, median_along

#: a region covering this many lots of the array cannot be pieces
MIN_FOREIGN_LOTS = 2.0
#: the picture around the board is compared about this wide (pixels): a hand is hundreds of them
SURROUNDINGS_WIDTH = 160
#: a pixel of it changed by more than this many 8-bit levels in some channel...
SURROUNDINGS_LEVELS = 12
#: ...over at least this share of the picture around the board: something came or went beside it
SURROUNDINGS_SHARE = 0.002
#: how far around the board's outline (in lots) is left out: pieces lean over the edge, and a piece
#: built is no hand
SURROUNDINGS_CLEARANCE_LOTS = 1.5


@dataclass(frozen=True)
class Occlusion:
    occluded: bool
    lots: tuple[int, ...]
    score: float  # largest foreign region, in lots of the array it covers


@dataclass(frozen=True)
class Surroundings:
    """The frame thinned to about ``SURROUNDINGS_WIDTH``, with which of its pixels lie beside the board."""

    look: np.ndarray  # (h, w, 3) uint8, blurred over 3 × 3
    beside: np.ndarray  # (h, w) bool: clear of the board's outline by SURROUNDINGS_CLEARANCE_LOTS


def surroundings(image_bgr: np.ndarray, corners_px: np.ndarray) -> Surroundings:
    """The picture around the board whose outline (A1, H1, H10, A10 corners, image pixels) is given."""
    step = max(1, image_bgr.shape[1] // SURROUNDINGS_WIDTH)
    small = image_bgr[::step, ::step]  # every step-th pixel: a fixed camera samples the same ones each frame
    corners = np.asarray(corners_px, np.float32) / step
    mean_side = float(np.mean([np.linalg.norm(corners[i] - corners[(i + 1) % 4]) for i in range(4)]))
    reach = max(1, round(SURROUNDINGS_CLEARANCE_LOTS * mean_side / ((LOTS_WIDE + LOTS_TALL) / 2)))
    board = np.zeros(small.shape[:2], np.uint8)
    cv2.fillConvexPoly(board, np.round(corners).astype(np.int32), 1)
    cleared = cv2.dilate(board, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1)))
    return Surroundings(cv2.blur(np.ascontiguousarray(small), (3, 3)), cleared == 0)


def surroundings_changed(before: Surroundings, now: Surroundings) -> float:
    """The share of the picture beside the board in both that changed by more than
    ``SURROUNDINGS_LEVELS`` (0.0 when the two cannot be compared)."""
    if before.look.shape != now.look.shape:
        return 0.0
    beside = before.beside & now.beside
    if not beside.any():
        return 0.0
    _, over = cv2.threshold(cv2.absdiff(now.look, before.look), SURROUNDINGS_LEVELS, 1, cv2.THRESH_BINARY)
    return float(np.count_nonzero(over.any(axis=2) & beside)) / float(np.count_nonzero(beside))


def board_layout(per_lot: np.ndarray) -> np.ndarray:
    """(80, s, s) per-lot maps -> one (10 s, 8 s) map in the top-down board layout (row 10 up)."""
    s = per_lot.shape[1]
    grid = per_lot.reshape(LOTS_TALL, LOTS_WIDE, s, s)[::-1]
    return grid.transpose(0, 2, 1, 3).reshape(LOTS_TALL * s, LOTS_WIDE * s)


def departs_from_table(lab_all: np.ndarray, margin_px: int) -> np.ndarray:
    """Which pixels of the table band around the array are unlike the table: (H, W) bool, False inside the band.

    Unlike means a ΔE from the band's median beyond three times the band's
    typical spread (at least 10).  An arm covers less than half of the band,
    so median and spread describe the table.
    """
    h, w = lab_all.shape[:2]
    m = margin_px
    strips = (np.s_[:m, :], np.s_[h - m :, :], np.s_[m : h - m, :m], np.s_[m : h - m, w - m :])
    sample = np.concatenate([lab_all[strip].reshape(-1, 3) for strip in strips])[::3]
    sample = sample[sample[:, 0] > 0.5]  # outside the frame the warp leaves black
    out = np.zeros((h, w), bool)
    if len(sample) < 10:
        return out
    centre = median_along(sample, 0)
    spread = float(median_along(np.sqrt(((sample - centre) ** 2).sum(-1)), 0))
    limit = max(spread * 3.0, 10.0) ** 2
    for strip in strips:
        part = lab_all[strip]
        out[strip] = (squared_distance(part, centre) > limit) & (part[..., 0] > 0.5)
    return out


def squared_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Squared ΔE of every pixel of an (H, W, 3) Lab image from one colour: (H, W).

    OpenCV's per-element arithmetic is several times numpy's here, and this
    runs over the whole warped frame.
    """
    # a scalar (four values, OpenCV's Scalar) subtracted from every pixel; the stubs do not know the form
    away = cv2.subtract(np.ascontiguousarray(lab, np.float32), (*(float(c) for c in colour), 0.0))  # type: ignore[call-overload]
    return cv2.transform(cv2.multiply(away, away), np.ones((1, 3), np.float32))  # type: ignore[no-any-return]


def find_occlusion(
    lab_all: np.ndarray, margin_px: int, lot_px: int, difference: np.ndarray, threshold: float | None = None
) -> Occlusion:
    """Regions that enter across the table band and cover more of the array than a piece.

    An entry is a patch unlike the table that touches the band's outer rim
    along more than a piece's width.  From there the region grows over
    everything that has the entering arm's own colour or departs from the
    empty look of its lot — so an arm is followed onto the board even where
    it hides whole tiles (and the tiles' own templates can no longer tell).
    """
    h, w = lab_all.shape[:2]
    board_diff = board_layout(difference)
    bh, bw = board_diff.shape
    if threshold is None:
        threshold = max(14.0, 4.0 * float(np.median(board_diff[::3, ::3])))
    departure = departs_from_table(lab_all, margin_px)
    band = np.ones((h, w), bool)
    band[margin_px : h - margin_px, margin_px : w - margin_px] = False
    entering = cv2.morphologyEx((departure & band).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels = cv2.connectedComponents(entering, connectivity=8)
    rim = max(2, margin_px // 4)
    outer = np.zeros((h, w), bool)
    outer[:rim] = outer[-rim:] = True
    outer[:, :rim] = outer[:, -rim:] = True
    changed = np.zeros((h, w), bool)
    changed[margin_px : margin_px + bh, margin_px : margin_px + bw] = board_diff > threshold
    lot_area = float(lot_px * lot_px)
    covered: set[int] = set()
    worst = 0.0
    for label in np.unique(labels[outer & (labels > 0)]):
        entry = labels == label
        contact = float((entry & outer).sum()) / rim
        if contact < 1.2 * lot_px:
            continue
        colour = median_along(lab_all[entry], 0)
        alike = squared_distance(lab_all, colour) < 14.0**2
        grow = ((alike | changed | entry) & ~(band & ~departure)).astype(np.uint8)
        _, grown = cv2.connectedComponents(grow, connectivity=4)
        ids = np.unique(grown[entry])
        region = np.isin(grown, ids[ids > 0])[margin_px : margin_px + bh, margin_px : margin_px + bw]
        on_board = float(region.sum()) / lot_area
        worst = max(worst, on_board)
        if on_board < MIN_FOREIGN_LOTS:
            continue
        per_lot = region.reshape(LOTS_TALL, lot_px, LOTS_WIDE, lot_px).mean(axis=(1, 3))
        for r_img in range(LOTS_TALL):
            for col in range(LOTS_WIDE):
                if per_lot[r_img, col] > 0.25:
                    covered.add(lot_id(col, LOTS_TALL - 1 - r_img))
    return Occlusion(bool(covered), tuple(sorted(covered)), float(worst))
