"""Say "occluded" when a hand, arm or other object is over the board.

An arm reaching over the board always crosses the array's outline: it comes
from outside the picture.  Pieces never do more than lean half a lot over the
edge, so they never reach the *outer* part of the band of table that the warp
keeps around the array.  The test therefore joins two maps:

* on the table band: pixels unlike the table (ΔE from the band's median
  colour, well above the band's own texture);
* on the array: pixels unlike the empty look of their lot (the lot reader's
  difference map);

and looks for a connected region that touches the outer rim of the band
along more than a piece's width and reaches into the array.  Pieces are
kept out by the rim, not by size: fingertips that barely touch the
board's edge cover a pixel of it yet, with their shade, make a piece of
nothing.  Lots a twentieth under such a region are listed (or, under the
least of fingertips, the lot they cover most); their readings are not to
be trusted.  Only a low lamp's shadow of a piece on an edge lot reaches the
rim as well, so an entry of the table's own colour in shade must cover
two lots, more than a piece and its shadow on the board do.

A hand beside the board, or above it, covers no lot, yet its shade falls on
the board.  ``surroundings_changed`` compares the picture around the board
with the reading before's: when something came or went there, a lot whose
look changed may have changed by the hand's shade alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from boardcam.vision.find_board import pattern_inks
from boardcam.vision.models import LOTS_TALL, LOTS_WIDE
from boardcam.vision.tiles import lot_id, median_along

#: a region entering from the rim hides lots once it reaches the array at all (fingertips that touch
#: the board's edge shade its edge lots), but one of the table's own colour in shade (a low lamp's
#: shadow of a tower on an edge lot reaches the rim) must cover this many lots: a piece's shadow on
#: the board with the piece is less
MIN_SHADE_LOTS = 2.0
#: in shade: every channel at most this share of the table's...
SHADE_LIGHT = 0.8
#: ...and the three dimmed alike, the most by at most this many times the least
SHADE_EVENNESS = 1.5
#: a lot this much under such a region is hidden (its reading cannot be trusted: a fingertip's shade
#: reads as a piece); a region under that everywhere hides the lot it covers most
COVERED_SHARE = 0.05
#: a pixel this close (ΔE) to an entering hand's colour is taken for more of it
ALIKE_DE = 14.0
#: a colour (a bin this many ΔE wide) this common in the table band, and found all round it (in
#: find_board.PATTERN_SECTORS of its find_board.SECTORS pieces), is the table's (a printed cloth)
PATTERN_BIN_DE = 10.0
PATTERN_SHARE = 0.03
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


def band_strips(shape: tuple[int, ...], margin_px: int) -> tuple[tuple[slice, slice], ...]:
    """The table band around the array as four strips (top, bottom, left, right) of the warped frame."""
    h, w, m = shape[0], shape[1], margin_px
    return (np.s_[:m, :], np.s_[h - m :, :], np.s_[m : h - m, :m], np.s_[m : h - m, w - m :])


@dataclass(frozen=True)
class TableLook:
    """The table as the band around the array shows it."""

    centre: np.ndarray  # (3,) the band's median Lab colour
    colours: np.ndarray  # (k, 3): the centre, then the inks of a pattern printed all round the board
    spread: float  # typical ΔE of the band from the centre (a pattern's inks widen it, never narrow it)


def band_parts(shape: tuple[int, ...], margin_px: int) -> tuple[tuple[slice, slice], ...]:
    """The band in ``find_board.SECTORS`` (8) pieces: each of ``band_strips`` halved along its length."""
    h, w, m = shape[0], shape[1], margin_px
    mid_w, mid_h = w // 2, h // 2
    return (np.s_[:m, :mid_w], np.s_[:m, mid_w:], np.s_[h - m :, :mid_w], np.s_[h - m :, mid_w:],
            np.s_[m:mid_h, :m], np.s_[mid_h : h - m, :m], np.s_[m:mid_h, w - m :], np.s_[mid_h : h - m, w - m :])


def table_colour(lab_all: np.ndarray, margin_px: int) -> TableLook | None:
    """The table's colours in the band and their typical ΔE (None when the band lies outside the frame).

    An arm covers less than half of the band, so the median describes a
    plain table.  A checked or printed cloth has several colours, each
    common all round the board; an arm's or a shadow's colour is common
    only where it reaches in.  So a colour unlike the median is also the
    table's when it is common all round (``find_board.pattern_inks``).
    """
    strips = band_strips(lab_all.shape, margin_px)
    sample = np.concatenate([lab_all[strip].reshape(-1, 3) for strip in strips])[::3]
    sample = sample[sample[:, 0] > 0.5]  # outside the frame the warp leaves black
    if len(sample) < 10:
        return None
    centre = median_along(sample, 0)
    plain = float(median_along(np.sqrt(((sample - centre) ** 2).sum(-1)), 0))
    parts = [lab_all[part].reshape(-1, 3)[::3] for part in band_parts(lab_all.shape, margin_px)]
    parts = [part[part[:, 0] > 0.5] for part in parts]
    part_of = np.repeat(np.arange(len(parts)), [len(part) for part in parts])
    inks = [ink for ink in pattern_inks(np.concatenate(parts), part_of, PATTERN_BIN_DE, PATTERN_SHARE)
            if np.sum((ink - centre) ** 2) > unlike_beyond(plain) ** 2]
    return TableLook(centre, np.vstack([centre, *inks]).astype(np.float32), plain)


def unlike_beyond(spread: float) -> float:
    """ΔE from a table colour past which a pixel is unlike the table: three times its typical
    spread, and at least 10."""
    return max(spread * 3.0, 10.0)


def departs_from_table(lab_all: np.ndarray, margin_px: int, table: TableLook | None) -> np.ndarray:
    """Which pixels of the table band around the array are unlike the table: (H, W) bool, False inside the band.

    Unlike means a ΔE from every table colour beyond ``unlike_beyond``.
    """
    out = np.zeros(lab_all.shape[:2], bool)
    if table is None:
        return out
    limit = unlike_beyond(table.spread) ** 2
    for strip in band_strips(lab_all.shape, margin_px):
        part = lab_all[strip]
        unlike = part[..., 0] > 0.5
        for colour in table.colours:
            unlike &= squared_distance(part, colour) > limit
        out[strip] = unlike
    return out


def is_shade_of(colour: np.ndarray, table: np.ndarray) -> bool:
    """Whether a Lab colour is the table's own under less light: every channel at most ``SHADE_LIGHT`` of
    the table's, and the three dimmed alike (within ``SHADE_EVENNESS`` of each other)."""
    ratios = lab_to_bgr(colour) / np.maximum(lab_to_bgr(table), 1e-3)
    return bool(ratios.max() <= SHADE_LIGHT and ratios.max() <= SHADE_EVENNESS * ratios.min())


def lab_to_bgr(colour: np.ndarray) -> np.ndarray:
    """One float Lab colour (L 0–100) as OpenCV's gamma-encoded BGR in 0–1."""
    return cv2.cvtColor(np.asarray(colour, np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(3)


def squared_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Squared ΔE of every pixel of an (H, W, 3) Lab image from one colour: (H, W).

    OpenCV's per-element arithmetic is several times numpy's here, and this
    runs over the whole warped frame.
    """
    # a scalar (four values, OpenCV's Scalar) subtracted from every pixel; the stubs do not know the form
    away = cv2.subtract(np.ascontiguousarray(lab, np.float32), (*(float(c) for c in colour), 0.0))  # type: ignore[call-overload]
    return cv2.transform(cv2.multiply(away, away), np.ones((1, 3), np.float32))  # type: ignore[no-any-return]


def entries(entering: np.ndarray, lab_all: np.ndarray, outer: np.ndarray, lot_px: int) -> list[np.ndarray]:
    """The things crossing the band's outer rim, each as a mask of its pixels in the band.

    Fingers cross the band apart, each narrower than a piece; they are one
    hand because they lie a finger's gap (up to half a lot) apart and share
    its colour.  Things merely lying near each other (a tower's shadow
    beside a mat's marker) differ in colour and stay apart.
    """
    _, parts = cv2.connectedComponents(entering, connectivity=8)
    gap = max(3, (lot_px // 2) | 1)
    closed = cv2.morphologyEx(entering, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (gap, gap)))
    _, groups = cv2.connectedComponents(closed, connectivity=8)
    found = []
    for group in np.unique(groups[outer & (parts > 0)]):
        members = [parts == part for part in np.unique(parts[(groups == group) & (parts > 0)])]
        widest = max(members, key=lambda member: int((member & outer).sum()))
        colour = median_along(lab_all[widest], 0)
        alike = [m for m in members if float(np.sum((median_along(lab_all[m], 0) - colour) ** 2)) < ALIKE_DE**2]
        found.append(np.logical_or.reduce(alike))
    return found


def find_occlusion(
    lab_all: np.ndarray, margin_px: int, lot_px: int, difference: np.ndarray, threshold: float | None = None
) -> Occlusion:
    """Regions that enter across the table band and reach into the array.

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
    table = table_colour(lab_all, margin_px)
    departure = departs_from_table(lab_all, margin_px, table)
    band = np.ones((h, w), bool)
    band[margin_px : h - margin_px, margin_px : w - margin_px] = False
    entering = cv2.morphologyEx((departure & band).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    rim = max(2, margin_px // 4)
    outer = np.zeros((h, w), bool)
    outer[:rim] = outer[-rim:] = True
    outer[:, :rim] = outer[:, -rim:] = True
    changed = np.zeros((h, w), bool)
    changed[margin_px : margin_px + bh, margin_px : margin_px + bw] = board_diff > threshold
    lot_area = float(lot_px * lot_px)
    covered: set[int] = set()
    worst = 0.0
    for entry in entries(entering, lab_all, outer, lot_px):
        contact = float((entry & outer).sum()) / rim
        if contact < 1.2 * lot_px:
            continue
        colour = median_along(lab_all[entry], 0)
        alike = squared_distance(lab_all, colour) < ALIKE_DE**2
        grow = ((alike | changed | entry) & ~(band & ~departure)).astype(np.uint8)
        _, grown = cv2.connectedComponents(grow, connectivity=4)
        ids = np.unique(grown[entry])
        region = np.isin(grown, ids[ids > 0])[margin_px : margin_px + bh, margin_px : margin_px + bw]
        on_board = float(region.sum()) / lot_area
        worst = max(worst, on_board)
        shade = table is not None and is_shade_of(colour, table.centre)
        if on_board == 0.0 or (shade and on_board < MIN_SHADE_LOTS):
            continue
        per_lot = region.reshape(LOTS_TALL, lot_px, LOTS_WIDE, lot_px).mean(axis=(1, 3))
        for r_img, col in zip(*np.nonzero((per_lot > COVERED_SHARE) | (per_lot == per_lot.max()))):
            covered.add(lot_id(int(col), LOTS_TALL - 1 - int(r_img)))
    return Occlusion(bool(covered), tuple(sorted(covered)), float(worst))
