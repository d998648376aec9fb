"""Find the 4×5 tile array without markers: its outline, its grid, each tile.

Why segmentation first: the array is one large patch of print that differs
from the table around it, whatever the tile art.  Straight-line searches over
the whole frame lock onto wood grain, pyramid edges and wrong grid spacings;
a blob of "not table" does not.  The stages:

1. *Table model* (:func:`fit_table`, :func:`table_distance`): on a small copy
   of the frame, the table's Lab colour is fitted as a smooth (quadratic)
   surface to the frame's border ring, which a hand only partly covers;
   every pixel's distance from that surface, in units of the ring's own
   spread, says how un-table-like it is.  Vignetting and lamp fall-off are
   smooth, so they stay in the model, not in the distance.  A checked or
   printed cloth is no one colour: the colours common all round the ring
   (its inks and the blends of them the blur makes) are table too
   (:func:`pattern_inks`), when they narrow the spread to half.
2. *Blob* (:func:`board_mask`): un-table-like by colour or by print texture
   (a black tile on a dark table), closed, holes filled, largest component.
3. *Outline* (:func:`fit_outline`): straight lines of the blob's boundary
   (Hough), two roughly perpendicular families, and the quadrilaterals of
   two lines from each that agree best with the blob.  Shadows, leaning
   pyramids and an arm reaching in only add bumps that no straight side
   explains.  The best few go on; the one whose tile seams stand out most
   (:func:`seam_contrast`, which also says which way the 4 tiles run) wins.
4. *Mat* (:func:`peel`): when the blob's border band is as plain as a table
   — a printed mat or a cloth under the tiles — segment again inside it.
5. *Grid* (:func:`refine_grid`): the frame is rectified through the current
   homography at a few pixels per tile and every grid line is re-found tile
   by tile — outer edges where "un-table-ness" rises going inwards (the cut
   edge, not a printed band inside it), inner seams as centres of symmetry
   of the colour gradient (:func:`symmetric_peak`) — then the grid nodes are
   fitted by a RANSAC homography, so a hand over one corner is outvoted.
   Three passes, coarse to fine.  After the first, :func:`best_window`
   re-places the 4×5 window on the found lattice if the outline was a tile
   short on one side (a hand over a row, black tiles on a dark table).
   Of the outline's grid and the passes', the one whose seams stand out
   most is kept: on some art a finer pass is dragged off by print near a seam.
6. *Tiles* (:func:`refine_tiles`): each tile's own four sides, measured on
   three stripes per side near the grid line (tiles lie shifted by a
   millimetre or two and twisted a degree).  The array's corners are the
   corner tiles' own corners where those were measured.
7. *Orientation*: row 1 is the short side lower in the image, A1 its end
   that makes A1 → H1 → H10 → A10 run as a board seen from above does.
8. *Seams' lines* (:func:`seam_segments`, :func:`window_by_seams`): on a
   cloth printed busily in the tiles' own colours no blob outlines the
   array, but its seams are a lattice of long straight lines where the
   print has curves.  When no outline held an array, the hull of the
   straight segments along the frame's two dominant directions is
   outlined instead, and failing that the segments found on a copy twice
   as fine (where the lines between lots show); on a printed cloth (one
   with inks) this comes before an outline that held no square tiles or
   whose seams barely show, and the grid found is moved to the 4×5 window
   of its lattice that carries the seams.

Every threshold is relative — to the table's own colour spread and texture,
to the tile size, or to the other candidates — not to one set of renders.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np

from boardcam.vision.errors import BoardNotFoundError
from boardcam.vision.geometry import board_to_image, camera_matrix_for, distort_points, through_homography
from boardcam.vision.models import CORNER_NAMES, TILES_TALL, TILES_WIDE, BoardPose, CameraIntrinsics

WORK_SIZE = 640  # long side of the marker-search image (reader.locate_board)
SEGMENT_SIZE = 400  # long side of the segmentation image: tiles are still ≥ 20 px there

#: Half-width (tiles) of the stretch either side of a seam whose symmetry locates it:
#: more than a printed border band (≈ 6 % of a tile), less than a lot.
SEAM_HALF = 0.12

#: A blob's inner border band counts as a plain margin (a mat, a cloth) when
#: its colour spread is at most this many times the table's.
PLAIN_BAND = 3.0

#: A blob whose own outline shows tile seams this many times as clearly as
#: the outline found inside its border band is the array itself, not a mat:
#: neutral cards on the array's rim are as plain as a mat's margin.  (On the
#: generator's mats the inner outline shows them 1–10 times as clearly as the
#: mat's; on bare arrays of pale cards the outer one 2.4–2.6 times.)
BARE_OVER_PEELED = 1.5

#: Seam contrast below which the outline holds no 4×5 array at all (a card,
#: a book): its "seams" show no more edge than the tile faces.
MIN_SEAM_CONTRAST = 1.2

#: Outlines (best by the blob, then runners-up) whose tile seams are compared.
OUTLINE_CANDIDATES = 4

#: A blob part at least this share of the largest one belongs to the array
#: (an arm can cut it in two; spare pieces on the table are far smaller).
PART_SHARE = 0.15

#: Share of the frame's short side taken as the border ring that shows table.
RING_SHARE = 0.05


def search_image(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None, size: int = WORK_SIZE) -> tuple[np.ndarray, float]:
    """Downscaled (and undistorted) copy of the frame plus its scale factor."""
    h, w = image_bgr.shape[:2]
    scale = min(1.0, size / max(w, h))
    target = (round(w * scale), round(h * scale))
    level = image_bgr
    if scale < 0.5:
        # a bilinear step to twice the target (each output a mix of about two
        # inputs) and an area step after it: a tenth of one large INTER_AREA
        level = cv2.resize(image_bgr, (2 * target[0], 2 * target[1]), interpolation=cv2.INTER_LINEAR)
    small = cv2.resize(level, target, interpolation=cv2.INTER_AREA)
    if intrinsics is not None:
        small_size = (small.shape[1], small.shape[0])
        k = camera_matrix_for(small_size, intrinsics)
        small = cv2.undistort(small, k, np.array(intrinsics.dist_coeffs))
    return small, scale


# --------------------------------------------------------------------------- table model


@dataclass(frozen=True)
class TableModel:
    """The table's Lab colour as a quadratic surface over the frame, and its spread.

    Coordinates are normalised to [-1, 1] over the frame it was fitted on, so
    the same model serves any resolution of that frame.  A checked or printed
    cloth has more colours than one: ``inks`` are their (weighted) offsets
    from the surface, each as much the table as the surface itself.
    """

    coefficients: np.ndarray  # 6 x 3
    spread: float  # robust scale of the table's own distances (ΔE units)
    frame_size: tuple[int, int]  # (w, h) of the frame the coordinates refer to
    inks: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))  # (k, 3), weighted offsets

    def predict(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        w, h = self.frame_size
        u = (np.asarray(x, np.float32) + 0.5) / w * 2 - 1
        v = (np.asarray(y, np.float32) + 0.5) / h * 2 - 1
        basis = np.stack([np.ones_like(u), u, v, u * u, u * v, v * v], axis=-1)
        return basis @ self.coefficients.astype(np.float32)


#: ΔL counts half: shadows and lamp fall-off change lightness more than hue.
LAB_WEIGHTS = np.array([0.5, 1.0, 1.0], np.float32)


def to_lab(bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(bgr.astype(np.float32) * (1.0 / 255.0), cv2.COLOR_BGR2LAB)


def fit_table(lab: np.ndarray, ring: np.ndarray | None = None) -> TableModel:
    """Fit the table colour surface to the frame's border ring, robustly.

    A hand or arm enters from outside the picture and so covers part of the
    ring; two rounds of refitting without the worst-fitting ring pixels keep
    it out of the model.  ``ring`` (bool mask) replaces the frame's border,
    e.g. with the inner band of a mat the tiles lie on.  Only the frame's
    border is searched for a pattern's inks: a band about the board shows
    the board's own rim all round.
    """
    h, w = lab.shape[:2]
    whole_frame = ring is None
    if ring is None:
        ring = ring_mask((h, w))
    ys, xs = np.nonzero(ring)
    step = max(1, len(xs) // 4000)
    ys, xs = ys[::step], xs[::step]
    values = lab[ys, xs].astype(np.float64)
    u = (xs + 0.5) / w * 2 - 1
    v = (ys + 0.5) / h * 2 - 1
    basis = np.stack([np.ones_like(u), u, v, u * u, u * v, v * v], axis=1)
    keep = np.ones(len(xs), bool)
    coefficients = np.zeros((6, 3))
    residual = np.zeros(len(xs))
    for _ in range(3):
        b = basis[keep]
        coefficients = np.linalg.solve(b.T @ b + 1e-6 * np.eye(6), b.T @ values[keep])
        residual = np.linalg.norm((values - basis @ coefficients) * LAB_WEIGHTS, axis=1)
        keep = residual <= max(2.5 * float(np.median(residual)), 1.0)
    spread = float(max(1.0, 1.4826 * np.median(residual[keep]) + 0.5))
    if not whole_frame:  # a band about the board holds its own rim and shadow all round
        return TableModel(coefficients, spread, (w, h))
    away = (values - basis @ coefficients) * LAB_WEIGHTS
    inks = pattern_inks(away, _sector_of(xs, ys))
    if len(inks) < 2 or np.ptp(inks, axis=0).max() < PATTERN_SPAN:
        return TableModel(coefficients, spread, (w, h))
    nearest = np.sqrt(_nearest_squared(away, inks))
    patterned = float(max(1.0, 1.4826 * np.median(nearest) + 0.5))
    if patterned > PATTERN_GAIN * spread:
        return TableModel(coefficients, spread, (w, h))
    return TableModel(coefficients, patterned, (w, h), inks.astype(np.float32))


#: a colour of the ring (a bin this many weighted ΔE wide, from the surface) this common in it...
PATTERN_BIN = 4.0
PATTERN_SHARE = 0.005
#: ...and at least a third of that in this many of its SECTORS sectors about its centre is the table's:
#: a checked or printed cloth shows its inks, and the blends of them a blur makes, all round; an arm or
#: a spare piece shows only where it lies
PATTERN_SECTORS = 5
SECTORS = 8
#: those colours are a pattern only when two lie this far apart in some channel (weighted ΔE; a
#: lamp's fall-off, a hand in the ring and a cloth's weave leave one cloud, which bins only cut up)...
PATTERN_SPAN = 4 * PATTERN_BIN
#: ...and they take the table's spread to at most this share of the plain one
PATTERN_GAIN = 0.5


def _sector_of(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Each ring pixel's sector (0 to SECTORS - 1) by its angle about the ring's centre."""
    angle = np.arctan2(ys - ys.mean(), xs - xs.mean())
    return np.minimum(((angle + np.pi) / (2 * np.pi) * SECTORS).astype(np.int64), SECTORS - 1)


def pattern_inks(colours: np.ndarray, sector: np.ndarray, bin_width: float = PATTERN_BIN,
                 share: float = PATTERN_SHARE) -> np.ndarray:
    """(k, 3): the median colours of the bins (``bin_width`` wide) that hold ``share`` of ``colours``
    and a third of that share of the samples in ``PATTERN_SECTORS`` of the ``SECTORS`` sectors
    (``sector``: each sample's) — a pattern's inks, seen all round."""
    bins = np.floor(colours / bin_width).astype(np.int64) @ np.array([1_000_000, 1_000, 1], np.int64)
    keys, which, counts = np.unique(bins, return_inverse=True, return_counts=True)
    which = which.reshape(-1)
    in_sector = np.bincount(which * SECTORS + sector, minlength=len(keys) * SECTORS).reshape(-1, SECTORS)
    per_sector = np.maximum(np.bincount(sector, minlength=SECTORS), 1)
    all_round = np.sum(in_sector / per_sector >= share / 3, axis=1) >= PATTERN_SECTORS
    chosen = np.flatnonzero((counts >= share * len(bins)) & all_round)
    return np.array([np.median(colours[which == k], axis=0) for k in chosen], np.float64).reshape(-1, 3)


def table_distance(lab: np.ndarray, model: TableModel, x: np.ndarray | None = None, y: np.ndarray | None = None) -> np.ndarray:
    """Distance of every pixel from the table surface, in units of the table's spread.

    ``x``/``y`` give each pixel's place in the model's frame (defaults: the
    pixel grid of ``lab`` itself).
    """
    if x is None or y is None:
        h, w = lab.shape[:2]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    diff = (lab - model.predict(x, y)) * LAB_WEIGHTS
    return np.asarray(np.sqrt(_nearest_squared(diff, model.inks)) / model.spread)


def _nearest_squared(away: np.ndarray, inks: np.ndarray) -> np.ndarray:
    """Squared weighted ΔE of each offset from the table's surface (``away``, (..., 3)) to the nearest
    table colour: the surface itself or one of a pattern's ``inks``."""
    squared = away * away
    nearest = squared[..., 0] + squared[..., 1] + squared[..., 2]
    for ink in inks:
        off = away - ink
        np.minimum(nearest, (off * off).sum(axis=-1), out=nearest)
    return nearest


# --------------------------------------------------------------------------- blob


def texture_level(lab: np.ndarray, window: int) -> np.ndarray:
    """Local print detail: the mean colour gradient over a window about a lot wide."""
    g = np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)) + np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3))
    return np.asarray(cv2.blur((g * LAB_WEIGHTS).sum(axis=2), (window, window)))


def ring_mask(shape: tuple[int, int], ring_share: float = RING_SHARE) -> np.ndarray:
    h, w = shape
    band = max(2, int(round(ring_share * min(h, w))))
    ring = np.zeros((h, w), bool)
    ring[:band] = ring[-band:] = True
    ring[:, :band] = ring[:, -band:] = True
    return ring


def board_mask(
    lab: np.ndarray,
    table: TableModel,
    ring: np.ndarray | None = None,
    region: np.ndarray | None = None,
    min_area_share: float = 0.02,
) -> np.ndarray:
    """Largest un-table-like region, closed and with holes filled (uint8 0/255).

    A pixel is un-table-like by colour or by texture:

    * colour: the distance from the table surface exceeds Otsu's threshold on
      the distance map, kept between 3.5 and 4.5 table spreads (below, the
      table's own texture would pass; above, Otsu has split the board's light
      tiles from its dark ones instead of board from table);
    * texture: the print's lines and icons give a black tile on a dark table
      away, where its colour alone does not.  Measured against the border
      ring's own texture (wood grain, cloth), and shrunk back by the window
      the measure spreads over.
    """
    h, w = lab.shape[:2]
    distance = table_distance(lab, table)
    clipped = np.clip(distance * 8.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(clipped, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    threshold = float(np.clip(float(otsu) / 8.0, 3.5, 4.5))
    window = max(3, int(round(max(h, w) * 0.035)) | 1)
    texture = texture_level(lab, window)
    ring_values = texture[ring if ring is not None else ring_mask((h, w))]
    level = float(np.median(ring_values))
    spread = float(max(1.4826 * np.median(np.abs(ring_values - level)), 0.05 * level, 0.2))
    # print lines enclose the plain faces between them: fill those, then
    # shrink back by the window the measure spread over
    textured = fill_holes(((texture - level) / spread > 5.0).astype(np.uint8) * 255)
    textured = np.asarray(cv2.erode(textured, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (window, window))))
    selected = (distance > threshold) | (textured > 0)
    if region is not None:
        selected &= region
    k = max(3, int(round(min(h, w) / 40)) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    mask = cv2.morphologyEx(selected.astype(np.uint8) * 255, cv2.MORPH_CLOSE, disc)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, disc)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    if count < 2:
        return np.zeros_like(mask)
    areas = stats[1:, cv2.CC_STAT_AREA]
    largest = int(areas.max())
    if largest < min_area_share * h * w:
        return np.zeros_like(mask)
    # an arm across the array cuts it in parts: keep every part of a size
    # no spare piece reaches
    big = 1 + np.flatnonzero(areas >= PART_SHARE * largest)
    blob = np.isin(labels, big).astype(np.uint8) * 255
    return fill_holes(blob)


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """Fill every region the blob encloses (a black tile or a dark piece inside the array)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, cv2.FILLED)
    return out


# --------------------------------------------------------------------------- outline


def line_through(rho: float, theta: float) -> np.ndarray:
    return np.array([np.cos(theta), np.sin(theta), rho])


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection of two lines a·x + b·y = c (NaN when parallel)."""
    det = a[0] * b[1] - a[1] * b[0]
    if abs(det) < 1e-9:
        return np.array([np.nan, np.nan])
    return np.array([(a[2] * b[1] - a[1] * b[2]) / det, (a[0] * b[2] - a[2] * b[0]) / det])


def boundary_lines(mask: np.ndarray, limit: int = 8, guesses: int = 2) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Straight stretches of the blob's boundary, split into two direction families.

    Returns one split per guess of the array's direction: the vote-weighted
    mean direction, the strongest line's if it differs, and with ``guesses``
    above 2 the next strongest lines' that differ from those (an arm's long
    sides can outvote the array's).
    """
    edge = cv2.morphologyEx(mask, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
    side = np.sqrt(np.count_nonzero(mask))  # ~ one side of the array
    found = cv2.HoughLinesWithAccumulator(edge, 1, np.pi / 180, max(10, int(0.3 * side)))
    if found is None:
        return []
    found = found.reshape(-1, 3)
    kept: list[tuple[float, float, float]] = []
    for rho, theta, votes in found:
        duplicate = False
        for r2, t2, _ in kept:
            dt = abs(((theta - t2 + np.pi / 2) % np.pi) - np.pi / 2)
            same_dir = dt < np.radians(10)
            # compare offsets with the same orientation convention
            r_cmp = rho if abs(theta - t2) < np.pi / 2 else -rho
            if same_dir and abs(r_cmp - r2) < 0.15 * side:
                duplicate = True
                break
        if not duplicate:
            kept.append((float(rho), float(theta), float(votes)))
        if len(kept) >= 3 * limit:
            break
    if not kept:
        return []
    arr = np.array(kept)
    bases = [(np.angle(np.sum(arr[:, 2] * np.exp(4j * arr[:, 1]))) / 4.0) % (np.pi / 2)]
    # with an arm's long sides in the vote, the weighted mean direction can
    # fit neither arm nor array: the strongest single line's is a second guess
    for index in np.argsort(-arr[:, 2]):
        if len(bases) >= guesses:
            break
        direction = float(arr[index, 1]) % (np.pi / 2)
        if all(abs(((direction - b + np.pi / 4) % (np.pi / 2)) - np.pi / 4) > np.radians(15) for b in bases):
            bases.append(direction)
    out = []
    for base in bases:
        families: list[list[np.ndarray]] = [[], []]
        for rho, theta, _ in kept:
            for f, direction in enumerate((base, base + np.pi / 2)):
                diff = abs(((theta - direction + np.pi / 2) % np.pi) - np.pi / 2)
                if diff < np.radians(30) and len(families[f]) < limit:
                    families[f].append(line_through(rho, theta))
                    break
        out.append((families[0], families[1]))
    return out


def order_quad(points: np.ndarray) -> np.ndarray:
    """Four points in order around their centre (clockwise on screen)."""
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    return points[np.argsort(angles)]


def fit_outline(mask: np.ndarray, keep: int = 1) -> list[np.ndarray]:
    """The quadrilaterals (4×2, around the outline) that agree best with the blob, best first.

    Score: blob pixels inside the quad minus non-blob pixels inside it, minus
    blob pixels left outside — a quad that follows an arm or a shadow takes in
    table and loses.  ``keep`` > 1 returns runners-up too (with different
    corners), for the grid to decide between when a hand makes the blob ambiguous.
    """
    splits = [(a, b) for a, b in boundary_lines(mask) if len(a) >= 2 and len(b) >= 2]
    if not splits:
        raise BoardNotFoundError("no tile array found: the board's outline has no straight sides")
    quads = [
        np.array([intersect(a1, b1), intersect(a1, b2), intersect(a2, b2), intersect(a2, b1)])
        for fam_a, fam_b in splits
        for (a1, a2), (b1, b2) in itertools.product(itertools.combinations(fam_a, 2), itertools.combinations(fam_b, 2))
    ]
    chosen = _best_quads(mask, quads, keep)
    if not chosen:
        raise BoardNotFoundError("no tile array found: no four-sided outline fits the board")
    return chosen


#: (seam contrast, nx, ny, grid homography) of no grid at all
NO_GRID: tuple[float, int, int, np.ndarray] = (0.0, 0, 0, np.eye(3))

#: the array's sides in tiles, either way round: what a three-sided outline is completed with
SIDE_RATIOS = (TILES_TALL / TILES_WIDE, TILES_WIDE / TILES_TALL)


def completed_outlines(mask: np.ndarray, keep: int = 1) -> list[np.ndarray]:
    """Quadrilaterals from three straight sides of the blob, the fourth placed by the array's 4:5 shape.

    A hand or an arm over one side of the array hides that side and joins
    the blob, so no line runs along it and every four-line outline takes
    in the arm.  Two parallel sides and one across them still fix the
    array: the side across them spans the short or the long side of the
    array, and the missing side lies the other side's length away, along
    the parallel sides, on the side of the blob.
    """
    quads = []
    for fam_a, fam_b in boundary_lines(mask, guesses=4):
        for pair, crossing in ((fam_a, fam_b), (fam_b, fam_a)):
            for (a1, a2), b in itertools.product(itertools.combinations(pair, 2), crossing):
                c1, c2 = intersect(a1, b), intersect(a2, b)
                if not (np.isfinite(c1).all() and np.isfinite(c2).all()):
                    continue
                along1, along2 = np.array([-a1[1], a1[0]]), np.array([-a2[1], a2[0]])  # unit directions of a1, a2
                along2 = along2 if along1 @ along2 > 0 else -along2
                span = float(np.linalg.norm(c2 - c1))
                for ratio, sign in itertools.product(SIDE_RATIOS, (1.0, -1.0)):
                    reach = sign * span * ratio
                    quads.append(np.array([c1, c2, c2 + reach * along2, c1 + reach * along1]))
    # the arm that hid the fourth side is blob the right outline leaves out
    return _best_quads(mask, quads, keep, outside_weight=ARM_OUTSIDE_WEIGHT)


#: what blob left outside a completed outline costs, against 1 for table inside it: an arm across a side
#: can be nearly as large as the array, and a full penalty would rank the outlines that take it in first
ARM_OUTSIDE_WEIGHT = 0.25


def _best_quads(mask: np.ndarray, quads: list[np.ndarray], keep: int, outside_weight: float = 1.0) -> list[np.ndarray]:
    """Of candidate quads, the ``keep`` (with different corners) that agree best with the blob (see fit_outline)."""
    h, w = mask.shape
    # score on a coarser copy: plenty for choosing, and cheap
    f = 2
    coarse = cv2.resize(mask, (w // f, h // f), interpolation=cv2.INTER_AREA) > 127
    total = int(np.count_nonzero(coarse))
    side = np.sqrt(np.count_nonzero(mask))
    canvas = np.zeros(coarse.shape, np.uint8)
    scored: list[tuple[float, np.ndarray]] = []
    for quad in quads:
        if not np.isfinite(quad).all():
            continue
        if np.any(quad < -0.5 * side) or np.any(quad[:, 0] > w + 0.5 * side) or np.any(quad[:, 1] > h + 0.5 * side):
            continue
        quad = order_quad(quad)
        if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
            continue
        canvas[:] = 0
        cv2.fillConvexPoly(canvas, np.round(quad / f * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        inside = canvas.astype(bool)
        hit = int(np.count_nonzero(inside & coarse))
        score = float(hit - (int(np.count_nonzero(inside)) - hit) - outside_weight * (total - hit))
        scored.append((score, quad))
    scored.sort(key=lambda item: -item[0])
    chosen: list[np.ndarray] = []
    for score, quad in scored:
        if score < 0.3 * total or len(chosen) >= keep:
            break
        if all(np.max(np.linalg.norm(order_match(quad, other) - other, axis=1)) > 0.1 * side for other in chosen):
            chosen.append(quad)
    return chosen


def order_match(quad: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``quad`` rotated (as a cyclic list) to line up best with ``reference``."""
    options = [np.roll(quad, k, axis=0) for k in range(4)]
    return min(options, key=lambda q: float(np.sum(np.linalg.norm(q - reference, axis=1))))


# --------------------------------------------------------------------------- grid


@dataclass(frozen=True)
class Rectified:
    """A top-down crop of the board: ``px`` pixels per tile, ``margin`` tiles of table around it."""

    image: np.ndarray  # BGR
    x: np.ndarray  # where each pixel came from in the (search-frame) model coordinates
    y: np.ndarray
    px: int
    margin: float
    nx: int
    ny: int


def rectify(
    image: np.ndarray,
    grid_h: np.ndarray,
    nx: int,
    ny: int,
    px: int,
    margin: float,
    intrinsics: CameraIntrinsics | None,
    model_scale: float,
) -> Rectified:
    """Resample the board through ``grid_h`` (grid units -> undistorted frame pixels)."""
    width, height = int(round((nx + 2 * margin) * px)), int(round((ny + 2 * margin) * px))
    gx = ((np.arange(width, dtype=np.float64) + 0.5) / px - margin)[None, :]  # grid x per column
    gy = ((np.arange(height, dtype=np.float64) + 0.5) / px - margin)[:, None]  # grid y per row
    img_x, img_y = through_homography(grid_h, gx, gy)
    frame_x, frame_y = img_x, img_y
    if intrinsics is not None:
        # the lens's displacement is smooth: compute it on every 8th pixel and interpolate
        size = (image.shape[1], image.shape[0])
        coarse = np.stack([img_x[::8, ::8], img_y[::8, ::8]], axis=-1)
        shift = distort_points(coarse.reshape(-1, 2), intrinsics, size).reshape(coarse.shape) - coarse
        shift = cv2.resize(shift.astype(np.float32), (coarse.shape[1] * 8, coarse.shape[0] * 8), interpolation=cv2.INTER_LINEAR)
        # resize aligns pixel areas, putting coarse sample k at fine pixel 8k + 3.5: move it to 8k
        m = np.array([[1, 0, -3.5], [0, 1, -3.5]], np.float32)
        shift = cv2.warpAffine(shift, m, (shift.shape[1], shift.shape[0]), borderMode=cv2.BORDER_REPLICATE)
        frame_x = img_x + shift[:height, :width, 0]
        frame_y = img_y + shift[:height, :width, 1]
    rect = cv2.remap(image, frame_x.astype(np.float32), frame_y.astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)
    # model coordinates live in the undistorted search frame
    mx = (img_x + 0.5) * model_scale - 0.5
    my = (img_y + 0.5) * model_scale - 0.5
    return Rectified(rect, mx.astype(np.float32), my.astype(np.float32), px, margin, nx, ny)


def colour_gradients(bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|∂/∂x| and |∂/∂y| of the strongest Lab channel (a red-green seam has no lightness step)."""
    channels = cv2.split(to_lab(cv2.GaussianBlur(bgr, (3, 3), 0)))
    out = []
    for dx, dy in ((1, 0), (0, 1)):
        grads = [np.abs(cv2.Sobel(c, cv2.CV_32F, dx, dy, ksize=3)) for c in channels]
        out.append(np.maximum(np.maximum(grads[0], grads[1]), grads[2]))
    return out[0], out[1]


def seam_contrast(gx: np.ndarray, gy: np.ndarray, rect: Rectified, nx: int, ny: int) -> float:
    """How much more gradient the tile seams of an nx×ny grid show than quarter-tile lines.

    Lot lines printed on the tiles sit at half-tile positions, so the
    comparison lines are at ¼ and ¾ of each tile, which no edition uses.
    """
    p, m = rect.px, rect.margin
    inner_y = slice(int((m + 0.1) * p), int((m + ny - 0.1) * p))
    inner_x = slice(int((m + 0.1) * p), int((m + nx - 0.1) * p))
    col = gx[inner_y].mean(axis=0)
    row = gy[:, inner_x].mean(axis=1)

    def at(profile: np.ndarray, positions: np.ndarray) -> float:
        idx = np.clip(np.round((positions + m) * p - 0.5).astype(int), 0, len(profile) - 1)
        window = [profile[np.clip(idx + d, 0, len(profile) - 1)] for d in (-1, 0, 1)]
        return float(np.mean(np.max(window, axis=0)))

    seams = (at(col, np.arange(1, nx)) * (nx - 1) + at(row, np.arange(1, ny)) * (ny - 1)) / (nx + ny - 2)
    quarters_x = np.concatenate([np.arange(nx) + 0.25, np.arange(nx) + 0.75])
    quarters_y = np.concatenate([np.arange(ny) + 0.25, np.arange(ny) + 0.75])
    off = (at(col, quarters_x) * len(quarters_x) + at(row, quarters_y) * len(quarters_y)) / (len(quarters_x) + len(quarters_y))
    return seams / max(off, 1e-6)


def grid_contrast(image_bgr: np.ndarray, grid_h: np.ndarray, nx: int, ny: int,
                  intrinsics: CameraIntrinsics | None, scale: float) -> float:
    """:func:`seam_contrast` of the nx×ny grid ``grid_h`` maps into the frame, at 24 pixels a tile."""
    rect = rectify(image_bgr, grid_h, nx, ny, 24, 0.5, intrinsics, scale)
    return seam_contrast(*colour_gradients(rect.image), rect, nx, ny)


def _peak(profile: np.ndarray) -> tuple[float, float]:
    """Sub-pixel position of the profile's maximum and its prominence over the mean."""
    i = int(np.argmax(profile))
    value = float(profile[i])
    offset = 0.0
    if 0 < i < len(profile) - 1:
        a, b, c = float(profile[i - 1]), value, float(profile[i + 1])
        denom = a - 2 * b + c
        if denom < 0:
            offset = 0.5 * (a - c) / denom
    return i + offset, value - _mean_of(profile)


def _column_means(block: np.ndarray) -> np.ndarray:
    """``block.mean(axis=0)`` to the last bit (the same sum and the same division), without its overhead."""
    sums = block.sum(axis=0)
    return np.true_divide(sums, np.intp(block.shape[0]), out=sums, casting="unsafe")  # type: ignore[no-any-return]


def _mean_of(profile: np.ndarray) -> float:
    """``float(np.mean(profile))`` to the last bit, without its overhead (called hundreds of times a search)."""
    total = profile.sum()
    return float(total.dtype.type(float(total) / profile.size)) if profile.dtype == np.float32 else float(np.mean(profile))


def symmetric_peak(profile: np.ndarray, half: int) -> tuple[float, float]:
    """Centre of mirror symmetry of a gradient profile, and its strength.

    A seam between two tiles of one edition is symmetric: tile border, gap,
    tile border.  Its centre is where the profile best matches its own
    mirror image, Σ g(c−t)·g(c+t), even when a printed band just inside each
    tile edge gives stronger gradients than the gap itself.  Positions are
    indices into ``profile``; only centres at least ``half`` from its ends count.
    """
    n = len(profile)
    if n < 2 * half + 3:
        return _peak(profile)
    centres = np.arange(half, n - half)
    t = np.arange(0, half + 1)
    left = profile[centres[:, None] - t[None, :]]
    right = profile[centres[:, None] + t[None, :]]
    scores = (left * right).sum(axis=1)
    pos, _ = _peak(scores)
    strength = float(np.sqrt(max(float(scores.max()) / (half + 1), 0.0)))
    return half + pos, strength - _mean_of(profile)


def line_points(
    strength: np.ndarray, rect: Rectified, axis: int, index: int, count: int, reach: float, symmetric: bool = False
) -> list[tuple[float, float, float]]:
    """Where grid line ``index`` really runs, one measurement per tile it borders.

    ``axis`` 0: a vertical line x = index (profile along x, segments along y);
    1: a horizontal line.  ``symmetric``: the line is a seam, found as a
    centre of symmetry (:func:`symmetric_peak`) within ``SEAM_HALF`` tiles.
    Returns (along, across, weight) in rectified pixels.
    """
    p, m = rect.px, rect.margin
    if axis == 1:
        strength = strength.T
    half = max(2, int(round(SEAM_HALF * p))) if symmetric else 0
    centre = (index + m) * p - 0.5
    lo = int(np.floor(centre - reach * p)) - half
    hi = int(np.ceil(centre + reach * p)) + 1 + half
    lo, hi = max(lo, 0), min(hi, strength.shape[1])
    out = []
    for k in range(count):
        a0, a1 = int((m + k + 0.15) * p), int((m + k + 0.85) * p)
        profile = _column_means(strength[a0:a1, lo:hi])
        if len(profile) < 3:
            continue
        pos, prominence = symmetric_peak(profile, half) if symmetric else _peak(profile)
        out.append(((a0 + a1 - 1) / 2.0, lo + pos, prominence))
    return out


def robust_line(points: list[tuple[float, float, float]], tolerance: float) -> tuple[float, float] | None:
    """across = a + b·along through the measurements, ignoring ones far off (RANSAC over pairs)."""
    if len(points) < 2:
        return None
    arr = np.array(points)
    along, across, weight = arr[:, 0], arr[:, 1], np.maximum(arr[:, 2], 1e-6)
    best: tuple[float, np.ndarray] | None = None
    for i, j in itertools.combinations(range(len(arr)), 2):
        if along[i] == along[j]:
            continue
        b = (across[j] - across[i]) / (along[j] - along[i])
        a = across[i] - b * along[i]
        inliers = np.abs(across - (a + b * along)) < tolerance
        score = float(weight[inliers].sum())
        if best is None or score > best[0]:
            best = (score, inliers)
    if best is None or np.count_nonzero(best[1]) < 2:
        return None
    sel = best[1]
    return fit_line(along[sel], across[sel], weight[sel])


def fit_line(along: np.ndarray, across: np.ndarray, weight: np.ndarray | None = None) -> tuple[float, float]:
    """Weighted least squares across = a + b·along, in closed form (polyfit is slow for a few points)."""
    wts = np.ones_like(along) if weight is None else weight
    sw = float(wts.sum())
    ma = float((wts * along).sum()) / sw
    mc = float((wts * across).sum()) / sw
    var = float((wts * (along - ma) ** 2).sum())
    b = float((wts * (along - ma) * (across - mc)).sum()) / var if var > 1e-9 else 0.0
    return mc - b * ma, b


def refine_grid(
    rect: Rectified, grid_h: np.ndarray, reach: float, table: TableModel
) -> np.ndarray | None:
    """A better grid homography (grid units -> undistorted frame px) from re-found lines.

    Outer lines are found on the table-distance map (the step from table to
    tile, not the tile's printed border just inside it); inner seams as
    centres of symmetry of the colour gradient (:func:`symmetric_peak`).
    ``reach``: how far (tiles) a line may have moved since the last pass.
    """
    nx, ny = rect.nx, rect.ny
    gx, gy = colour_gradients(rect.image)
    dist = table_distance(to_lab(cv2.GaussianBlur(rect.image, (5, 5), 0)), table, rect.x, rect.y)
    dist = np.minimum(dist, 12.0)
    # signed: only a rise of "un-table-ness" going inwards marks the outline
    # (a bordered tile's light face after its coloured band is a fall)
    sx = cv2.Sobel(dist, cv2.CV_32F, 1, 0, ksize=3)
    sy = cv2.Sobel(dist, cv2.CV_32F, 0, 1, ksize=3)
    rises = {
        (0, 0): np.maximum(sx, 0), (0, nx): np.maximum(-sx, 0),
        (1, 0): np.maximum(sy, 0), (1, ny): np.maximum(-sy, 0),
    }
    p = rect.px
    lines: dict[tuple[int, int], tuple[float, float]] = {}
    for axis, n_lines, n_segments, inner in ((0, nx, ny, gx), (1, ny, nx, gy)):
        for index in range(n_lines + 1):
            strength = rises.get((axis, index), inner)
            seam = (axis, index) not in rises
            pts = line_points(strength, rect, axis, index, n_segments, reach, symmetric=seam)
            line = robust_line(pts, max(1.0, 0.04 * p))
            if line is not None:
                lines[(axis, index)] = line
    src, dst = [], []
    for i in range(nx + 1):
        for j in range(ny + 1):
            if (0, i) not in lines or (1, j) not in lines:
                continue
            a0, b0 = lines[(0, i)]  # x = a0 + b0·y
            a1, b1 = lines[(1, j)]  # y = a1 + b1·x
            denom = 1 - b0 * b1
            if abs(denom) < 1e-6:
                continue
            x = (a0 + b0 * a1) / denom
            y = a1 + b1 * x
            src.append([i, j])
            dst.append([(x + 0.5) / p - rect.margin, (y + 0.5) / p - rect.margin])
    if len(src) < 8:
        return None
    src_a, dst_a = np.array(src, np.float64), np.array(dst, np.float64)
    # dst are in the old grid's units: map them through the old homography
    dst_h = np.hstack([dst_a, np.ones((len(dst_a), 1))]) @ grid_h.T
    dst_img = dst_h[:, :2] / dst_h[:, 2:3]
    # a hand or a leaning pyramid can drag one line: fit the nodes robustly
    # (RANSAC in grid units, where a tile is 1 whatever the perspective)
    fit, inliers = cv2.findHomography(dst_a, src_a, cv2.RANSAC, 0.06)
    if fit is None or inliers is None or int(inliers.sum()) < 8:
        new_h, _ = cv2.findHomography(src_a, dst_img, 0)
        return new_h
    keep = inliers.ravel() > 0
    new_h, _ = cv2.findHomography(src_a[keep], dst_img[keep], 0)
    return new_h


def _line_sums(strength: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column and row cumulative sums of a strength map, with a 3-px tolerance across the line."""
    vertical = cv2.dilate(strength, np.ones((1, 3), np.uint8))  # for lines along y
    horizontal = cv2.dilate(strength, np.ones((3, 1), np.uint8))  # for lines along x
    cum_v = np.vstack([np.zeros((1, strength.shape[1]), np.float32), np.cumsum(vertical, axis=0, dtype=np.float32)])
    cum_h = np.hstack([np.zeros((strength.shape[0], 1), np.float32), np.cumsum(horizontal, axis=1, dtype=np.float32)])
    return cum_v, cum_h


#: how much more (in the log score of best_window) another 4×5 window must score than the outline's own. On
#: 430 generated boards (150 game scenes with hands, 80 empty printed, 200 empty made-up art) the window moved
#: on five: the one move by 0.28 was right (a hand hid a row), the four by 0.03 to 0.07 gave wrong boards, and so
#: did a turned window ahead by 0.004 on a dark cloth (empty made-up-art board 31015)
WINDOW_MOVE_MARGIN = 0.15


def best_window(
    image_bgr: np.ndarray,
    grid_h: np.ndarray,
    nx: int,
    ny: int,
    table: TableModel,
    scale: float,
    intrinsics: CameraIntrinsics | None,
) -> tuple[np.ndarray, int, int, tuple[int, int]]:
    """Re-place the 4×5 window on the lattice the grid has found, if another place fits better.

    A hand hiding a row, or a row of black tiles on a dark table, can leave
    the outline one tile short on one side and long on the other; the seams
    still line up, so refinement cannot notice.  The lattice is extended by a
    tile all round and every 4×5 and 5×4 window on it is scored by its
    outline (a rise of un-table-ness inwards on its four sides, against the
    frame's typical rise) and its seams (colour edges at tile seams against
    those at quarter-tile lines).  Another window replaces the outline's own
    only when it scores WINDOW_MOVE_MARGIN more: the outline's shape is
    evidence too, and near ties went the wrong way.  Returns
    (grid homography of the best window, nx, ny, its offset in tiles).
    """
    px, margin = 24, 1.25
    rect = rectify(image_bgr, grid_h, nx, ny, px, margin, intrinsics, scale)
    gx, gy = colour_gradients(rect.image)
    dist = np.minimum(table_distance(to_lab(cv2.GaussianBlur(rect.image, (5, 5), 0)), table, rect.x, rect.y), 12.0)
    sx = cv2.Sobel(dist, cv2.CV_32F, 1, 0, ksize=3)
    sy = cv2.Sobel(dist, cv2.CV_32F, 0, 1, ksize=3)
    maps = {
        "left": _line_sums(np.maximum(sx, 0))[0],
        "right": _line_sums(np.maximum(-sx, 0))[0],
        "bottom": _line_sums(np.maximum(sy, 0))[1],
        "top": _line_sums(np.maximum(-sy, 0))[1],
        "gx": _line_sums(gx)[0],
        "gy": _line_sums(gy)[1],
    }
    # how much rise a place on the board shows anyway: the yardstick for outlines
    rise_level = float(np.abs(sx).mean() + np.abs(sy).mean()) / 4

    def pix(t: float) -> int:
        return int(round((t + margin) * px - 0.5))

    def along_y(name: str, x: float, y0: float, y1: float) -> float:
        cum = maps[name]
        c = min(max(pix(x), 0), cum.shape[1] - 1)
        a, b = pix(y0 + 0.1), pix(y1 - 0.1)
        return float(cum[b, c] - cum[a, c]) / max(b - a, 1)

    def along_x(name: str, y: float, x0: float, x1: float) -> float:
        cum = maps[name]
        r = min(max(pix(y), 0), cum.shape[0] - 1)
        a, b = pix(x0 + 0.1), pix(x1 - 0.1)
        return float(cum[r, b] - cum[r, a]) / max(b - a, 1)

    def score(ox: int, oy: int, w: int, h: int) -> float:
        x0, x1, y0, y1 = ox, ox + w, oy, oy + h
        outline = [along_y("left", x0, y0, y1), along_y("right", x1, y0, y1),
                   along_x("bottom", y0, x0, x1), along_x("top", y1, x0, x1)]
        seams = [along_y("gx", x0 + k, y0, y1) for k in range(1, w)] + [along_x("gy", y0 + k, x0, x1) for k in range(1, h)]
        quarters = [along_y("gx", x0 + k + q, y0, y1) for k in range(w) for q in (0.25, 0.75)]
        quarters += [along_x("gy", y0 + k + q, x0, x1) for k in range(h) for q in (0.25, 0.75)]
        outline_ratio = (np.mean(outline) + 1e-3) / (rise_level + 1e-3)
        seam_ratio = (np.mean(seams) + 1e-3) / (np.mean(quarters) + 1e-3)
        return float(np.log(outline_ratio) + np.log(seam_ratio))

    own = score(0, 0, nx, ny)
    best = (own + WINDOW_MOVE_MARGIN, 0, 0, nx, ny)  # another window must beat the outline's own by the margin
    for w, h in ((nx, ny), (ny, nx)):
        for ox in range(-1, nx - w + 2):
            for oy in range(-1, ny - h + 2):
                if (ox, oy, w, h) != (0, 0, nx, ny):
                    value = score(ox, oy, w, h)
                    if value > best[0] + 1e-9:
                        best = (value, ox, oy, w, h)
    _, ox, oy, w, h = best
    shift = np.array([[1.0, 0.0, ox], [0.0, 1.0, oy], [0.0, 0.0, 1.0]])
    return grid_h @ shift, w, h, (ox, oy)


def grid_moved(old: np.ndarray, new: np.ndarray, nx: int, ny: int) -> float:
    """How far (in old tile units) the new grid puts the array's corners."""
    corners = np.array([[0, 0], [nx, 0], [nx, ny], [0, ny]], float)
    return float(np.abs(apply_h(np.linalg.solve(old, new), corners) - corners).max())


def grid_homography(quad: np.ndarray, nx: int, ny: int) -> np.ndarray:
    """Grid units (0..nx, 0..ny) -> pixels, with the quad's first edge along x."""
    grid = np.array([[0, 0], [nx, 0], [nx, ny], [0, ny]], np.float32)
    return cv2.getPerspectiveTransform(grid, quad.astype(np.float32)).astype(np.float64)


def apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points (N×2) through a homography."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    out = np.hstack([pts, np.ones((len(pts), 1))]) @ h.T
    return np.asarray(out[:, :2] / out[:, 2:3])


# --------------------------------------------------------------------------- single tiles

COLUMNS = "ABCDEFGH"

#: Where along a tile side its position is measured (tile units from the side's start).
STRIPES = (0.2, 0.5, 0.8)
#: Length of each measuring stripe, tile units.
STRIPE_LENGTH = 0.2
#: How far (tile units) a tile side may lie from the array's grid line: shifts
#: of 1–2 mm and a 1° twist on a ≥ 51 mm tile stay well inside.
TILE_REACH = 0.07


def tile_key(column: int, row: int) -> str:
    """Tiles are named by their lower-left lot: A1, C1, …, G9."""
    return f"{COLUMNS[2 * column]}{2 * row + 1}"


def _side_measurements(
    strength: np.ndarray, rect: Rectified, axis: int, index: int, count: int, symmetric: bool
) -> list[list[tuple[float, float, float]]]:
    """Stripe measurements of grid line ``index``, grouped by the tile they border."""
    p, m = rect.px, rect.margin
    if axis == 1:
        strength = strength.T
    half = max(2, int(round(SEAM_HALF * p))) if symmetric else 0
    centre = (index + m) * p - 0.5
    lo = max(int(np.floor(centre - TILE_REACH * p)) - half, 0)
    hi = min(int(np.ceil(centre + TILE_REACH * p)) + 1 + half, strength.shape[1])
    out: list[list[tuple[float, float, float]]] = []
    for k in range(count):
        points = []
        for stripe in STRIPES:
            a0 = int(round((m + k + stripe - STRIPE_LENGTH / 2) * p))
            a1 = int(round((m + k + stripe + STRIPE_LENGTH / 2) * p))
            profile = _column_means(strength[a0:a1, lo:hi])
            if len(profile) < 3:
                continue
            pos, prominence = symmetric_peak(profile, half) if symmetric else _peak(profile)
            points.append(((a0 + a1 - 1) / 2.0, lo + pos, prominence))
        out.append(points)
    return out


def _side_line(points: list[tuple[float, float, float]], nominal: float, tolerance: float) -> tuple[float, float, bool]:
    """across = a + b·along for one tile side: two stripes that agree, else the grid line.

    A piece standing at the tile's edge spoils one stripe; two that agree
    are trusted.  Returns (a, b, measured?).
    """
    best: list[int] = []
    for i, j in itertools.combinations(range(len(points)), 2):
        if abs(points[i][1] - points[j][1]) < tolerance:
            agree = [k for k in range(len(points)) if abs(points[k][1] - (points[i][1] + points[j][1]) / 2) < tolerance]
            if len(agree) > len(best):
                best = agree
    if len(best) < 2:
        return nominal, 0.0, False
    arr = np.array([points[k] for k in best])
    if len(arr) == 2 or np.ptp(arr[:, 0]) < 1e-6:
        return float(np.mean(arr[:, 1])), 0.0, True
    a, b = fit_line(arr[:, 0], arr[:, 1])
    return a, b, True


def tile_quads_in(rect: Rectified, table: TableModel) -> dict[str, tuple[np.ndarray, tuple[bool, ...]]]:
    """Each tile's corners in rectified pixels (board naming), and per corner whether both its sides were measured."""
    nx, ny, p, m = rect.nx, rect.ny, rect.px, rect.margin
    gx, gy = colour_gradients(rect.image)
    dist = np.minimum(table_distance(to_lab(cv2.GaussianBlur(rect.image, (5, 5), 0)), table, rect.x, rect.y), 12.0)
    sx = cv2.Sobel(dist, cv2.CV_32F, 1, 0, ksize=3)
    sy = cv2.Sobel(dist, cv2.CV_32F, 0, 1, ksize=3)
    rises = {(0, 0): np.maximum(sx, 0), (0, nx): np.maximum(-sx, 0), (1, 0): np.maximum(sy, 0), (1, ny): np.maximum(-sy, 0)}
    tolerance = max(1.0, 0.03 * p)
    sides: dict[tuple[int, int], list[tuple[float, float, bool]]] = {}
    for axis, n_lines, n_tiles, inner in ((0, nx, ny, gx), (1, ny, nx, gy)):
        for index in range(n_lines + 1):
            strength = rises.get((axis, index), inner)
            groups = _side_measurements(strength, rect, axis, index, n_tiles, symmetric=(axis, index) not in rises)
            nominal = (index + m) * p - 0.5
            sides[(axis, index)] = [_side_line(g, nominal, tolerance) for g in groups]
    out: dict[str, tuple[np.ndarray, tuple[bool, ...]]] = {}
    for c in range(nx):
        for r in range(ny):
            left, right = sides[(0, c)][r], sides[(0, c + 1)][r]
            bottom, top = sides[(1, r)][c], sides[(1, r + 1)][c]
            corners = []
            for vertical, horizontal in ((left, bottom), (right, bottom), (right, top), (left, top)):
                a0, b0, _ = vertical  # x = a0 + b0·y
                a1, b1, _ = horizontal  # y = a1 + b1·x
                x = (a0 + b0 * a1) / (1 - b0 * b1)
                corners.append((x, a1 + b1 * x))
            # which of its corners rest on two measured sides
            measured = (left[2] and bottom[2], right[2] and bottom[2], right[2] and top[2], left[2] and top[2])
            out[tile_key(c, r)] = (np.array(corners), measured)
    return out


def _tile_quads(
    image_bgr: np.ndarray,
    board_h: np.ndarray,
    table: TableModel,
    model_scale: float,
    intrinsics: CameraIntrinsics | None,
    px: int = 48,
) -> dict[str, tuple[np.ndarray, tuple[bool, ...]]]:
    rect = rectify(image_bgr, board_h, TILES_WIDE, TILES_TALL, px, 0.3, intrinsics, model_scale)
    quads = tile_quads_in(rect, table)
    out = {}
    for key, (corners, measured) in quads.items():
        grid = (corners + 0.5) / px - rect.margin
        out[key] = (apply_h(board_h, grid), measured)
    return out


def refine_tiles(
    image_bgr: np.ndarray, pose: BoardPose, intrinsics: CameraIntrinsics | None = None
) -> dict[str, np.ndarray]:
    """Each tile's own four corners, found near where the pose's grid puts them.

    Tiles are laid by hand: each is shifted by a millimetre or two and
    twisted by a degree or so, so the array's grid is off by a few pixels
    tile by tile.  Returns tile key ("A1", "C1", … "G9") -> 4×2 array of its
    corners towards A1, H1, H10, A10 (lower-left, lower-right, upper-right,
    upper-left as the board is named), in the pose's pixel coordinates (the
    undistorted frame when ``intrinsics`` are given).  A side that cannot be
    measured (a piece or a hand over it) keeps the grid's line.

    The surface around the array (table, mat or cloth) is learned from a band
    just outside the pose's outline, so the array's outer sides are found
    against whatever the tiles lie on.  Costs about a third of a search:
    compute it once per pose, not per frame.
    """
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise BoardNotFoundError("image: expected a BGR colour frame")
    intrinsics, _, lab, scale = _segmentation_lab(image_bgr, intrinsics)
    board_h = board_homography(pose)
    table = fit_table(lab, surround_band(board_h, scale, lab.shape[:2]))
    return {key: quad for key, (quad, _) in _tile_quads(image_bgr, board_h, table, scale, intrinsics).items()}


def surround_band(board_h: np.ndarray, scale: float, shape: tuple[int, int], inner: float = 0.1, outer: float = 0.35) -> np.ndarray:
    """Pixels (of the search image) between ``inner`` and ``outer`` tiles outside the array's outline."""

    def polygon(e: float) -> np.ndarray:
        grid = np.array([[-e, -e], [TILES_WIDE + e, -e], [TILES_WIDE + e, TILES_TALL + e], [-e, TILES_TALL + e]])
        return np.round(((apply_h(board_h, grid) + 0.5) * scale - 0.5) * 16).astype(np.int32)

    band = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(band, polygon(outer), 1, cv2.LINE_8, 4)
    cv2.fillConvexPoly(band, polygon(inner), 0, cv2.LINE_8, 4)
    if np.count_nonzero(band) < 50:  # the array fills the frame: fall back on its border
        return ring_mask(shape)
    return band > 0


def board_homography(pose: BoardPose) -> np.ndarray:
    """Board tile units (x: A1 → H1, y: A1 → A10) -> pose pixels."""
    grid = np.array([[0, 0], [TILES_WIDE, 0], [TILES_WIDE, TILES_TALL], [0, TILES_TALL]], np.float32)
    return cv2.getPerspectiveTransform(grid, np.array(pose.ordered(), np.float32)).astype(np.float64)


# --------------------------------------------------------------------------- orientation and checks


def orient(corners: np.ndarray, nx: int) -> np.ndarray:
    """Order window corners as A1, H1, H10, A10.

    ``corners`` run around the window with the first edge ``nx`` tiles long.
    The two 4-tile edges are rows 1 and 10; row 1 is the lower one in the
    image.  Of its ends, A1 is the one that makes A1→H1→H10→A10 run the way
    a board seen from above does (negative shoelace area in image
    coordinates, whose y axis points down).
    """
    c = np.asarray(corners, dtype=np.float64)
    if nx != TILES_WIDE:
        c = np.roll(c, -1, axis=0)  # now edge c0-c1 is a 4-tile edge
    edge_a = (c[0], c[1])
    edge_b = (c[2], c[3])
    if (edge_b[0][1] + edge_b[1][1]) > (edge_a[0][1] + edge_a[1][1]):
        c = np.roll(c, -2, axis=0)
    # c0-c1 is row 1; c2-c3 row 10.  Fix direction.
    area = 0.0
    for i in range(4):
        x1, y1 = c[i]
        x2, y2 = c[(i + 1) % 4]
        area += x1 * y2 - x2 * y1
    if area > 0:
        c = np.array([c[1], c[0], c[3], c[2]])
    return c


def check_plausible(corners: np.ndarray, image_width: int, image_height: int | None = None) -> None:
    """Reject quads no camera of the issue's setup would see as a 4×5 tile array.

    The array fills at least about a third of the frame width and is seen
    nearly from above (tilt ≤ 15°), so its 5-tile sides are 1.25× its 4-tile
    sides give or take perspective, and the quad is convex and (given the
    frame's height) inside the frame: the camera is set up to see the whole array.
    """
    a1, h1, h10, a10 = corners
    short = float(np.linalg.norm(h1 - a1) + np.linalg.norm(h10 - a10)) / 2
    long = float(np.linalg.norm(a10 - a1) + np.linalg.norm(h10 - h1)) / 2
    ratio = long / max(short, 1e-6)
    if not 0.9 <= ratio <= 1.8:
        raise BoardNotFoundError(f"no tile array found: best grid has the wrong shape (sides {ratio:.2f}:1)")
    if max(short, long) < 0.2 * image_width:
        raise BoardNotFoundError("no tile array found: best grid is far too small")
    if not cv2.isContourConvex(corners.astype(np.float32).reshape(-1, 1, 2)):
        raise BoardNotFoundError("no tile array found: best grid is not convex")
    if image_height is not None:
        slack = 0.05 * image_width
        outside = (corners[:, 0] < -slack) | (corners[:, 0] > image_width + slack)
        outside |= (corners[:, 1] < -slack) | (corners[:, 1] > image_height + slack)
        if outside.any():
            raise BoardNotFoundError("no tile array found: best grid runs out of the frame")


#: how far the array's two sides may differ in length, and from a right angle (as a cosine), once the
#: camera's perspective is taken out.  True poses measure within 0.05 whatever field of view is guessed
#: (45–90°, the camera's being 62–66°); a grid a tile short on one side measures 0.2–0.25 off.
SQUARE_TOLERANCE = 0.1


def is_square_array(pose: BoardPose, image_size: tuple[int, int], intrinsics: CameraIntrinsics | None) -> bool:
    """Whether a grid is a 4×5 array of square tiles as a camera sees it.

    A grid one tile short of the array (seams found on three of the four
    columns, the fourth column's cards near the table's colour) still shows
    tile seams, and its shape in the image stays inside the wide range
    :func:`check_plausible` must allow for any turn and tilt.  Read as 4×5,
    every tile of it would be wrong, and surely.  Through a pinhole camera the
    table's two axes map (by K⁻¹H) to two vectors of one length at a right
    angle, whatever the pose, and a guessed focal length barely changes that
    for a camera looking nearly straight down.  ``pose`` is in undistorted
    frame pixels when ``intrinsics`` are given.
    """
    axes = np.linalg.solve(camera_matrix_for(image_size, intrinsics), board_to_image(pose))
    across, up = axes[:, 0], axes[:, 1]
    ratio = float(np.linalg.norm(across) / np.linalg.norm(up))
    cosine = float(abs(across @ up) / (np.linalg.norm(across) * np.linalg.norm(up)))
    return 1 / (1 + SQUARE_TOLERANCE) <= ratio <= 1 + SQUARE_TOLERANCE and cosine <= SQUARE_TOLERANCE


# --------------------------------------------------------------------------- the whole search


@dataclass(frozen=True)
class BoardFit:
    """What the search found, for callers that want more than the pose.

    All pixel coordinates are in the undistorted frame when intrinsics were given.

    * ``pose`` – the array's outer corners: the corner tiles' own corners
      where measured, else the common grid's (what :func:`find_board` returns);
    * ``grid_pose`` – the best single homography through all tile seams;
    * ``tile_quads_px`` – tile key ("A1", "C1", … "G9") -> 4×2 corners towards
      A1, H1, H10, A10 (see :func:`refine_tiles`);
    * ``seam_contrast`` – how much the refined grid's seams stand out from the
      tile faces (≥ 1.2 to be accepted; bare arrays measure 3–10);
    * ``outline_px`` – the blob's quadrilateral before any grid refinement.
    """

    pose: BoardPose
    seam_contrast: float
    outline_px: np.ndarray
    grid_pose: BoardPose
    tile_quads_px: dict[str, np.ndarray]


def _segmentation_lab(
    image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None
) -> tuple[CameraIntrinsics | None, np.ndarray, np.ndarray, float]:
    """The intrinsics scaled to the frame, the small undistorted frame (BGR), its blurred Lab, and its scale."""
    h, w = image_bgr.shape[:2]
    if intrinsics is not None:
        intrinsics = intrinsics.scaled_to((w, h))
    small, scale = search_image(image_bgr, intrinsics, SEGMENT_SIZE)
    return intrinsics, small, to_lab(cv2.GaussianBlur(small, (0, 0), 1.0)), scale


def locate(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None = None) -> BoardFit:
    """The search behind :func:`find_board`, with each tile's quad and diagnostics.

    Raises :class:`BoardNotFoundError` (one line, naming why) when no 4×5
    array is seen.
    """
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3 or min(image_bgr.shape[:2]) < 64:
        raise BoardNotFoundError("image: expected a colour frame of at least 64×64 pixels")
    intrinsics, small, lab, scale = _segmentation_lab(image_bgr, intrinsics)
    table = fit_table(lab)
    mask = board_mask(lab, table)
    why: BoardNotFoundError | None = None
    misshapen: BoardFit | None = None  # the first grid found that is no array of square tiles
    misshapen_table: TableModel | None = None  # what that grid was fitted against (a mat's margin, when peeled)
    faint_outline: BoardFit | None = None  # an outlined array on a printed cloth whose seams barely show
    coarse_segments: Callable[[], np.ndarray] = functools.cache(lambda: seam_segments(small))  # found once, if asked

    if not mask.any():
        why = BoardNotFoundError("no tile array found: nothing on the table stands out from it")
    else:
        try:
            found, misshapen, why, misshapen_table = _first_array(
                image_bgr, outline_candidates(image_bgr, lab, mask, table, scale, intrinsics), scale, intrinsics)
            if found is not None and len(table.inks):
                # a printed cloth: the outline may end a tile off, or have taken in print (its seams then
                # barely show, and the seams' lattice below is asked before it is given back)
                found = _moved_to_seams(image_bgr, found, coarse_segments(), table, scale, intrinsics)
                if found.seam_contrast >= LATTICE_MIN_SEAM_CONTRAST:
                    return found
                faint_outline = found
            elif found is not None:
                return found
        except BoardNotFoundError as error:
            why = why or error
    # a hand may bend every outline, and the reader flags such a frame occluded; but on a printed cloth
    # the outline may have taken in print, and the seams' lattice is asked first
    if misshapen is not None and not len(table.inks):
        return _squared(image_bgr, misshapen, misshapen_table, scale, intrinsics) or misshapen
    searches: tuple[tuple[Callable[[], np.ndarray], float], ...] = (
        (coarse_segments, LATTICE_MIN_SEAM_CONTRAST),
        (lambda: finer_seam_segments(image_bgr, intrinsics), FINER_MIN_SEAM_CONTRAST))
    for segments, least_contrast in searches:
        found = _found_by_seams(image_bgr, lab, segments(), table, scale, intrinsics, least_contrast)
        if found is not None:
            return found
    if faint_outline is not None:
        return faint_outline
    if misshapen is not None:
        return misshapen
    raise why or BoardNotFoundError("no tile array found: the board's outline has no straight sides")


def _found_by_seams(image_bgr: np.ndarray, lab: np.ndarray, segments: np.ndarray, table: TableModel, scale: float,
                    intrinsics: CameraIntrinsics | None, least_contrast: float) -> BoardFit | None:
    """The array outlined by the hull of its seams' straight lines (stage 8), or None.

    For a busily printed cloth in the tiles' own colours, which leaves no
    blob to outline.  The grid must show its seams clearly (``least_contrast``,
    LATTICE_MIN_SEAM_CONTRAST or more): no table colour vouches for its edges.
    """
    lines = seam_line_mask(lab.shape[:2], segments)
    if not lines.any():
        return None
    try:
        found, _, _, _ = _first_array(
            image_bgr, outline_candidates(image_bgr, lab, lines, table, scale, intrinsics), scale, intrinsics)
    except BoardNotFoundError:
        return None
    if found is None:
        return None
    found = _moved_to_seams(image_bgr, found, segments, table, scale, intrinsics, unvouched=True)
    return found if found.seam_contrast >= least_contrast else None


def _moved_to_seams(image_bgr: np.ndarray, fit: BoardFit, segments: np.ndarray, table: TableModel, scale: float,
                    intrinsics: CameraIntrinsics | None, unvouched: bool = False) -> BoardFit:
    """``fit``, or the grid refined again on the window of its lattice that holds the seams (window_by_seams;
    ``unvouched``: the fit's window came from the lattice itself, no outline)."""
    window = window_by_seams(fit, segments, scale, unvouched)
    if window is None:
        return fit
    corners, nx, ny = window
    quad_small = (corners + 0.5) * scale - 0.5
    grid = (NO_GRID[0], nx, ny, grid_homography(corners, nx, ny))
    try:
        return fit_grid(image_bgr, grid, quad_small, table, scale, intrinsics, move_window=False)
    except BoardNotFoundError:
        return fit


def _first_array(
    image_bgr: np.ndarray, candidates: Iterator[Candidate], scale: float, intrinsics: CameraIntrinsics | None,
) -> tuple[BoardFit | None, BoardFit | None, BoardNotFoundError | None, TableModel | None]:
    """The first candidate whose grid fits an array of square tiles; else the first misshapen one,
    the first candidate's reason for failing (the one worth reporting), and the misshapen one's table."""
    why: BoardNotFoundError | None = None
    misshapen: BoardFit | None = None
    misshapen_table: TableModel | None = None
    for grid, quad_small, grid_table in candidates:
        try:
            fit = fit_grid(image_bgr, grid, quad_small, grid_table, scale, intrinsics)
        except BoardNotFoundError as error:
            why = why or error
            continue
        if is_square_array(fit.grid_pose, (image_bgr.shape[1], image_bgr.shape[0]), intrinsics):
            return fit, misshapen, why, misshapen_table
        if misshapen is None:
            misshapen, misshapen_table = fit, grid_table
    return None, misshapen, why, misshapen_table


#: how finely (in tiles) a squared grid's window is slid along the side it was stretched on
SQUARED_STEP = 0.125
#: how many of the placings whose seams stand out most are refined
SQUARED_TRIES = 3


def _squared(image_bgr: np.ndarray, fit: BoardFit, table: TableModel | None, scale: float,
             intrinsics: CameraIntrinsics | None) -> BoardFit | None:
    """An array of square tiles found from a misshapen grid by stretching one side of it, or None.

    Why: pale cards on a mat of their own colour leave only the array's
    darker cards in the blob, and the outline of that blob can hold a grid
    whose seams stand out along one side and fall a fraction of a tile off
    along the other (the first frame of clear-tower app game 127: white
    paper, edition B's pale cards, the grid 0.62:1 and the frame flagged
    occluded, so the game never started).  Either side may be the right
    one: each is kept in turn with the other stretched to square tiles,
    the window slid along the stretched side, and the ``SQUARED_TRIES``
    placings whose seams stand out most are refined as any outline's grid
    is, each window placed on its lattice (``_placed_square``).  Only a grid of
    square tiles whose seams stand out at least as much as the misshapen
    one's is taken: a hand bending the outline gives a misshapen grid too,
    and the frame is then flagged occluded as before.
    """
    if table is None:
        return None
    size = (image_bgr.shape[1], image_bgr.shape[0])
    board_h = board_to_image(fit.grid_pose)
    axes = np.linalg.solve(camera_matrix_for(size, intrinsics), board_h)
    ratio = float(np.linalg.norm(axes[:, 0]) / np.linalg.norm(axes[:, 1]))
    options = []
    for axis, stretch in ((0, 1 / ratio), (1, ratio)):  # columns too narrow (or wide), or rows
        spare = (TILES_WIDE, TILES_TALL)[axis] * (1 - stretch)  # tiles the stretched window may slide over
        for offset in np.arange(min(0.0, spare) - 0.5, max(0.0, spare) + 0.5 + 1e-9, SQUARED_STEP):
            placing = np.eye(3)
            placing[axis, axis], placing[axis, 2] = stretch, offset
            gh = board_h @ placing
            options.append((grid_contrast(image_bgr, gh, TILES_WIDE, TILES_TALL, intrinsics, scale), gh))
    best: BoardFit | None = None
    for contrast, gh in sorted(options, key=lambda item: -item[0])[:SQUARED_TRIES]:
        found = _placed_square(image_bgr, (contrast, TILES_WIDE, TILES_TALL, gh), fit, table, scale, intrinsics)
        if found is not None and found.seam_contrast >= fit.seam_contrast \
                and (best is None or found.seam_contrast > best.seam_contrast):
            best = found
    return best


def _placed_square(image_bgr: np.ndarray, grid: tuple[float, int, int, np.ndarray], fit: BoardFit, table: TableModel,
                   scale: float, intrinsics: CameraIntrinsics | None) -> BoardFit | None:
    """``grid``'s window placed on its lattice (:func:`best_window`), refined as an outline's grid
    is, and placed again on the lattice it refined onto, as a grid of square tiles; None when it is
    none.

    Why before and after: a window a tile off, on the mat's bare margin,
    shows its seams as clearly as the array's own, and refinement can pull
    such a window onto the mat's edge or its markers, where the window
    beside it no longer looks better; and the stretched grid's spacing is
    only near right until refined.
    """
    size = (image_bgr.shape[1], image_bgr.shape[0])
    quad_small = (fit.outline_px + 0.5) * scale - 0.5
    try:
        gh, nx, ny, _ = best_window(image_bgr, grid[3], grid[1], grid[2], table, scale, intrinsics)
        found = fit_grid(image_bgr, (grid[0], nx, ny, gh), quad_small, table, scale, intrinsics)
        gh, nx, ny, offset = best_window(image_bgr, board_to_image(found.grid_pose), TILES_WIDE, TILES_TALL, table,
                                         scale, intrinsics)
        if offset != (0, 0) or (nx, ny) != (TILES_WIDE, TILES_TALL):
            found = fit_grid(image_bgr, (found.seam_contrast, nx, ny, gh), quad_small, table, scale, intrinsics,
                             move_window=False)
    except BoardNotFoundError:
        return None
    return found if is_square_array(found.grid_pose, size, intrinsics) else None


#: a grid found by the seams' lines alone, with no table colour to vouch for its edges, must show its seams twice
#: as clearly as an outlined one (bare arrays measure 3–10; on pale cards over a light gingham the one found a
#: third of a tile off measured 1.85; the 58 of 64 found so within a quarter of a lot, 2.68 or more)
LATTICE_MIN_SEAM_CONTRAST = 2 * MIN_SEAM_CONTRAST

#: a straight stretch of print at least this share of the segmentation image's long side may be a tile seam
#: or edge (at SEGMENT_SIZE, about a third of a tile of the smallest array the camera frames)
SEAM_SEGMENT_SHARE = 0.03
#: of those along the array's two directions, shorter than this share of the longest tenth's are dropped: a
#: tile's side is among the longest, a print's straight stretches are most of the short ones
SEAM_SHARE_OF_LONGEST = 0.5
#: segments within this angle of the array's two directions are taken for its seams
SEAM_DIRECTION_TOLERANCE = np.radians(8.0)


def seam_segments(small_bgr: np.ndarray) -> np.ndarray:
    """Straight segments (k×4: x1, y1, x2, y2) along the frame's two dominant right-angled directions.

    Why: on a cloth printed busily in the tiles' own colours, nothing tells
    the array from the table by colour or texture, and :func:`board_mask`
    outlines a blob of both.  But the print's shapes are curved or short,
    and the array is a lattice of long straight lines in two directions.
    The segments a line detector finds vote for one direction (mod a right
    angle, weighted by length squared: the lattice's long lines outvote the
    print's scattered stretches); those along it or across it, and long
    for their kind, are kept.
    """
    grey = cv2.cvtColor(small_bgr, cv2.COLOR_BGR2GRAY)
    none = np.zeros((0, 4))
    found = cv2.createLineSegmentDetector().detect(grey)[0]
    if found is None:
        return none
    segments = found.reshape(-1, 4).astype(np.float64)
    length = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    angle = np.arctan2(segments[:, 3] - segments[:, 1], segments[:, 2] - segments[:, 0])
    long_enough = length >= SEAM_SEGMENT_SHARE * max(grey.shape)
    if np.count_nonzero(long_enough) < 8:
        return none
    direction = float(np.angle(np.sum(length[long_enough] ** 2 * np.exp(4j * angle[long_enough])))) / 4.0
    off = np.abs(((angle - direction + np.pi / 4) % (np.pi / 2)) - np.pi / 4)
    along = long_enough & (off < SEAM_DIRECTION_TOLERANCE)
    if np.count_nonzero(along) < 8:
        return none
    along &= length >= SEAM_SHARE_OF_LONGEST * np.percentile(length[along], 90)
    return segments[along]


#: the seams' lines are looked for again at this many times SEGMENT_SIZE when none outlined an array
FINER_SEAMS = 2
#: ...and a grid found so must show its seams three times as clearly as an outlined one: the lot lines a
#: finer search adds are more lines to fit a wrong window to (pale cards on a light gingham, found by it a
#: third of a lot off, measured 2.42; the confetti-print game's boards found within a quarter of a lot, 5.2 to 9.2)
FINER_MIN_SEAM_CONTRAST = 3 * MIN_SEAM_CONTRAST


def finer_seam_segments(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None) -> np.ndarray:
    """:func:`seam_segments` found on a copy FINER_SEAMS times the segmentation image's size, in the
    segmentation image's pixels.

    Why: at SEGMENT_SIZE a lot is six or seven pixels and the light lines
    between lots a pixel or less, so on a busy cloth only the tiles' outer
    edges against dark print are found, and their hull is a corner of the
    array (the project's renderer's game 155, a confetti print in the
    tiles' own colours: no frame found).  Twice as fine, the line detector
    sees the lattice of lot lines over the whole array.  Only when every
    coarser search failed: it costs a line search over four times the pixels.
    """
    finer, _ = search_image(image_bgr, intrinsics, SEGMENT_SIZE * FINER_SEAMS)
    return (seam_segments(finer) + 0.5) / FINER_SEAMS - 0.5


def seam_line_mask(shape: tuple[int, int], segments: np.ndarray) -> np.ndarray:
    """The convex region (uint8 0/255) the seam segments cover, for :func:`outline_candidates` to outline.

    The segments are drawn, joined across the width of a tile's side (the
    longest tenth's length), and the largest group's convex hull stands for
    the blob: seams between two tiles of one colour leave gaps in it.  (The
    hull of every large group, tried too, found two more boards of 32 on
    prints and put a third a whole board off, on a print of the red tiles'
    own red.)
    """
    out = np.zeros(shape, np.uint8)
    if len(segments) < 8:
        return out
    drawn = np.zeros_like(out)
    for x1, y1, x2, y2 in np.round(segments).astype(np.int32):
        cv2.line(drawn, (int(x1), int(y1)), (int(x2), int(y2)), 255, 2)
    length = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    reach = max(3, int(np.percentile(length, 90)))
    joined = cv2.morphologyEx(drawn, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach)))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined)
    if count < 2:
        return out
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    points = cv2.findNonZero((labels == largest).astype(np.uint8))
    cv2.fillConvexPoly(out, cv2.convexHull(points), 255)
    return out


#: a segment lies on a lattice line when both its ends are within this many tiles of it
ON_LATTICE_TILES = 0.1
#: how far (tiles) the 4×5 window may move along the lattice, each way
SEAM_WINDOW_REACH = 2
#: another window is taken only when it holds this many times the seam length of the fit's own, of at least
#: WINDOW_SEAM_RUNS segments on the lattice: a mat's edges beside the array lie near lattice lines too
WINDOW_SEAM_GAIN = 1.15
WINDOW_SEAM_RUNS = 16
#: ...or, for a fit the seams' hull outlined, this many tiles of seam length more than its own (one tile side)
UNVOUCHED_WINDOW_GAIN_TILES = 1.0


def window_by_seams(fit: BoardFit, segments: np.ndarray, scale: float,
                    unvouched: bool = False) -> tuple[np.ndarray, int, int] | None:
    """The window of the fit's lattice (4×5 or 5×4 tiles) that holds the most seam segment length, when
    that is not the fit's own: (its corners in undistorted frame px, tiles along its first side, along
    its second); else None.

    Why: with no table colour to tell where the array ends, an outline can
    take in a stray line of the print or miss a column whose outer edge
    the print hides, and the grid refined from it then lies on the right
    lattice a tile off, or turned a quarter.  The array is the window whose
    lattice lines carry the seams: beyond its edges the lines run over print.

    ``unvouched``: the fit was outlined by the seams' own hull, which no
    table colour vouches for either, so another window needs to hold only
    a tile side's length of seams more (UNVOUCHED_WINDOW_GAIN_TILES), not
    WINDOW_SEAM_GAIN times as much.  Plain cards (no lot lines) on a print
    of their colours give few seams: one such board, found a tile off over
    the cloth, had a row beyond its window holding 2.7 tiles of seams,
    1.13 times its own 20.6, and its own outer row none.
    """
    to_board = board_homography(fit.grid_pose)
    ends = (segments.reshape(-1, 2) + 0.5) / scale - 0.5
    grid = apply_h(np.linalg.inv(to_board), ends).reshape(-1, 2, 2)
    runs: list[tuple[int, int, float, float]] = []  # (axis the line is constant in, line index, from, to)
    for (x1, y1), (x2, y2) in grid:
        for axis, (a1, a2, b1, b2) in enumerate(((y1, y2, x1, x2), (x1, x2, y1, y2))):
            line = round((a1 + a2) / 2)
            if abs(a1 - line) <= ON_LATTICE_TILES and abs(a2 - line) <= ON_LATTICE_TILES:
                runs.append((axis, line, min(b1, b2), max(b1, b2)))

    def held(ox: int, oy: int, w: int, h: int) -> float:
        origin, span = (ox, oy), (w, h)
        total = 0.0
        for axis, line, lo, hi in runs:
            along, across = axis, 1 - axis  # axis 0: a line of constant y, running along x
            if origin[across] <= line <= origin[across] + span[across]:
                total += max(0.0, min(hi, origin[along] + span[along]) - max(lo, origin[along]))
        return total

    reach = range(-SEAM_WINDOW_REACH, SEAM_WINDOW_REACH + 1)
    own = held(0, 0, TILES_WIDE, TILES_TALL)
    best = max((held(ox, oy, w, h), -abs(ox) - abs(oy), ox, oy, w, h)
               for ox in reach for oy in reach for w, h in ((TILES_WIDE, TILES_TALL), (TILES_TALL, TILES_WIDE)))
    value, _, ox, oy, w, h = best
    least = own + UNVOUCHED_WINDOW_GAIN_TILES if unvouched else WINDOW_SEAM_GAIN * own
    if value <= least or len(runs) < WINDOW_SEAM_RUNS:
        return None
    window = np.array([[ox, oy], [ox + w, oy], [ox + w, oy + h], [ox, oy + h]], float)
    return apply_h(to_board, window), w, h


#: outlines tried in full before giving up (the first is nearly always right; the rest are for hands)
MAX_OUTLINE_TRIES = 5

Candidate = tuple[tuple[float, int, int, np.ndarray], np.ndarray, TableModel]


def outline_candidates(
    image_bgr: np.ndarray, lab: np.ndarray, mask: np.ndarray, table: TableModel, scale: float,
    intrinsics: CameraIntrinsics | None,
) -> Iterator[Candidate]:
    """Outlines to fit a grid to, best first: ((seam contrast, nx, ny, grid homography), quad, table).

    First the blob's best four-sided outline (or, when the blob is a mat the
    tiles lie on, the best one inside it); then, for a hand that hides a
    side or drags the outline off, the blob's other outlines and those
    completed from three sides, and the one of the blob and the mat's
    inside not taken first, by seam contrast.  Only outlines whose seams
    stand out are kept.  When the blob has a plain margin (a mat) and its
    own outline failed, those are fitted with the margin as the table:
    cards of the mat's colour leave no inner outline, and against the
    cloth the 4×5 window looks for the mat's edge (docs/vision.md).
    """
    no_outline: BoardNotFoundError | None = None
    try:
        outer = ranked_outlines(image_bgr, fit_outline(mask, keep=OUTLINE_CANDIDATES), scale, intrinsics)
    except BoardNotFoundError as error:  # maybe an arm joins the blob along a whole side
        outer, no_outline = [], error
    first: Candidate | None = (outer[0][0], outer[0][1], table) if outer else None
    outline_mask, outline_table = mask, table
    # the blob may be a mat or cloth the tiles lie on: if its border band is
    # as plain as a table, look inside it with that band as the "table"
    try:
        inner = None if first is None else peel(lab, first[1], table)
    except BoardNotFoundError:
        inner = None
    fallback: list[Candidate] = []  # the outline not taken first, tried when the others fail
    if inner is not None and first is not None:
        inner_table, inner_mask = inner
        try:
            other = ranked_outlines(image_bgr, fit_outline(inner_mask, keep=OUTLINE_CANDIDATES), scale, intrinsics)[0]
        except BoardNotFoundError:
            other = (NO_GRID, first[1])
        peeled: Candidate = (other[0], other[1], inner_table)
        if first[0][0] > BARE_OVER_PEELED * other[0][0]:
            fallback = [peeled]
        elif other[0][0] >= MIN_SEAM_CONTRAST or other[0][0] > first[0][0]:
            fallback = [first]
            first, outline_mask, outline_table = peeled, inner_mask, inner_table
    best = NO_GRID[0] if first is None else first[0][0]
    if first is not None and best >= MIN_SEAM_CONTRAST:
        yield first
    # only when that fails (a hand, mostly) are the others worth their time
    if inner is not None and outline_mask is mask and first is not None and best >= MIN_SEAM_CONTRAST:
        # the blob's own outline, inside a plain margin, held no array of square tiles: a mat whose
        # cards are too near its colour to stand out from it; the array ends where the margin begins
        outline_table = inner[0]
    rest = [(grid, quad, outline_table) for grid, quad in outer[1:]] if outline_mask is mask else []
    completed = ranked_outlines(image_bgr, completed_outlines(outline_mask, keep=OUTLINE_CANDIDATES), scale, intrinsics)
    rest += [(grid, quad, outline_table) for grid, quad in completed] + fallback
    rest.sort(key=lambda item: -item[0][0])
    good = [c for c in rest if c[0][0] >= MIN_SEAM_CONTRAST]
    if no_outline is not None and not rest:
        raise no_outline
    if best < MIN_SEAM_CONTRAST and not good:
        best = max([best, *(c[0][0] for c in rest)])
        raise BoardNotFoundError(f"no tile array found: no tile seams inside the outline (contrast {best:.2f})")
    yield from good[: MAX_OUTLINE_TRIES - 1]


#: another grid replaces the finest pass's only when one of its corners lies this many lots away (a pass
#: dragged off); nearer, the finest pass is the more exact, whatever the seam contrast at 24 px per tile says
DRAGGED_LOTS = 0.3


def grid_corners(h: np.ndarray, nx: int, ny: int) -> np.ndarray:
    """The four outer corners (4×2, frame pixels) of the nx×ny tile grid that ``h`` maps into the frame."""
    return apply_h(h, np.array([[0, 0], [nx, 0], [nx, ny], [0, ny]], float))


def _corner_gap_lots(a: np.ndarray, b: np.ndarray, tiles_along_first_side: int) -> float:
    """The largest distance, in lots, from a corner of ``b`` to the nearest corner of ``a`` (4×2 each).

    Nearest, not same-named: the window may have moved between two grids.
    """
    lot = np.linalg.norm(b[1] - b[0]) / (2 * tiles_along_first_side)
    return float(np.linalg.norm(b[:, None] - a[None], axis=-1).min(1).max() / max(lot, 1e-6))


def fit_grid(
    image_bgr: np.ndarray, grid: tuple[float, int, int, np.ndarray], quad_small: np.ndarray, table: TableModel,
    scale: float, intrinsics: CameraIntrinsics | None, move_window: bool = True,
) -> BoardFit:
    """Refine one outline's grid onto the tile seams and check it is a plausible 4×5 array.

    Each pass re-finds the grid lines tile by tile, and on some tile art a
    printed border or a city block near a seam, or a pyramid leaning over
    an edge, drags a corner of the finer passes' grid off by half a lot.
    So the outline's grid and every pass's are compared by how much their
    tile seams stand out (:func:`seam_contrast`); the finest pass's grid is
    kept unless the one whose seams stand out most puts a corner more than
    DRAGGED_LOTS away.  Nearer than that the finest pass is the more exact:
    a seam score at 24 px per tile does not see a pixel, and the app's
    reference needs it.  ``move_window``: whether the 4×5 window may move
    along the lattice (not when the outline is known to a fraction of a tile).
    """
    h, w = image_bgr.shape[:2]
    _, nx, ny, gh = grid
    quad = (quad_small + 0.5) / scale - 0.5  # undistorted frame pixels

    # the outline's own grid first, then each pass's
    grids = [(grid_contrast(image_bgr, gh, nx, ny, intrinsics, scale), gh, nx, ny)]
    for px, reach in ((24, 0.3), (32, 0.2), (40, 0.12)):
        rect = rectify(image_bgr, gh, nx, ny, px, 0.5, intrinsics, scale)
        refined = refine_grid(rect, gh, reach, table)
        if refined is None or grid_moved(gh, refined, nx, ny) > 2.0:
            break  # nothing to go on, or lines found on clutter dragged the grid away
        gh = refined
        if px == 24 and move_window:
            gh, nx, ny, _ = best_window(image_bgr, gh, nx, ny, table, scale, intrinsics)
        grids.append((grid_contrast(image_bgr, gh, nx, ny, intrinsics, scale), gh, nx, ny))
    contrast, gh, nx, ny = grids[-1]
    best = max(grids, key=lambda entry: entry[0])
    if best[0] > contrast and _corner_gap_lots(grid_corners(*best[1:]), grid_corners(gh, nx, ny), nx) > DRAGGED_LOTS:
        contrast, gh, nx, ny = best
    # the grid kept must show its seams, and so must a refined one: a wrong
    # outline refined onto clutter does not (the outline's own grid may be
    # the one kept, but does not vouch for itself)
    vouched = min(contrast, max(entry[0] for entry in grids[1:] or grids))
    if vouched < MIN_SEAM_CONTRAST:
        raise BoardNotFoundError(f"no tile array found: the refined grid shows no tile seams (contrast {vouched:.2f})")
    corners = grid_corners(gh, nx, ny)
    ordered = orient(corners, nx)
    check_plausible(ordered, w, h)
    grid_pose = BoardPose({name: (float(x), float(y)) for name, (x, y) in zip(CORNER_NAMES, ordered)})
    tiles = _tile_quads(image_bgr, board_homography(grid_pose), table, scale, intrinsics)
    # the array's outer corners are its corner tiles' own corners, where measured
    outer = list(grid_pose.ordered())
    for k, key in enumerate(("A1", "G1", "G9", "A9")):
        quad_k, measured = tiles[key]
        if measured[k]:
            outer[k] = tuple(quad_k[k])
    pose = BoardPose({name: (float(x), float(y)) for name, (x, y) in zip(CORNER_NAMES, outer)})
    return BoardFit(pose, contrast, quad, grid_pose, {key: q for key, (q, _) in tiles.items()})


def ranked_outlines(
    image_bgr: np.ndarray, quads: list[np.ndarray], scale: float, intrinsics: CameraIntrinsics | None
) -> list[tuple[tuple[float, int, int, np.ndarray], np.ndarray]]:
    """Outlines with their better grid direction, the one whose tile seams stand out most first."""
    options = [(choose_direction(image_bgr, q, scale, intrinsics), q) for q in quads]
    return sorted(options, key=lambda item: -item[0][0])


def choose_direction(
    image_bgr: np.ndarray, quad_small: np.ndarray, scale: float, intrinsics: CameraIntrinsics | None
) -> tuple[float, int, int, np.ndarray]:
    """Which way the 4 tiles run: the direction whose tile seams the image shows.

    Returns (seam contrast, nx, ny, grid homography) for the better one.
    """
    quad = (quad_small + 0.5) / scale - 0.5
    best: tuple[float, int, int, np.ndarray] | None = None
    for nx, ny in ((TILES_WIDE, TILES_TALL), (TILES_TALL, TILES_WIDE)):
        gh = grid_homography(quad, nx, ny)
        contrast = grid_contrast(image_bgr, gh, nx, ny, intrinsics, scale)
        if best is None or contrast > best[0]:
            best = (contrast, nx, ny, gh)
    assert best is not None
    return best


def peel(lab: np.ndarray, quad: np.ndarray, table: TableModel) -> tuple[TableModel, np.ndarray]:
    """Segment again inside ``quad``, taking its inner border band as the table: (table, blob).

    Tiles laid on a printed mat or a cloth make the first blob the mat; the
    mat's own margin then plays the table's part.  Only a band nearly as
    plain as the table qualifies: the border of a bare array is a ring of
    differently coloured tiles (BoardNotFoundError then).
    """
    h, w = lab.shape[:2]
    region = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(region, np.round(quad * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    size = np.sqrt(cv2.contourArea(quad.astype(np.float32)))
    # skip the outline's own blur and edge shadow, then a band of the mat's margin
    skip = 2 + int(round(0.01 * size))
    band = max(2, int(round(0.02 * size)))
    outer = cv2.erode(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * skip + 1, 2 * skip + 1)))
    shrunk = cv2.erode(outer, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * band + 1, 2 * band + 1)))
    ring = (outer > 0) & (shrunk == 0)
    inner = cv2.erode(region, np.ones((3, 3), np.uint8)) > 0
    if np.count_nonzero(ring) < 50 or not inner.any():
        raise BoardNotFoundError("no tile array found: nothing inside the outline")
    band_model = fit_table(lab, ring)
    if band_model.spread > PLAIN_BAND * max(table.spread, 1.5):
        raise BoardNotFoundError("no tile array found: the outline's border is not a plain margin")
    table = band_model
    mask = board_mask(lab, table, ring=ring, region=inner, min_area_share=0.01)
    if not mask.any():
        raise BoardNotFoundError("no tile array found: nothing inside the outline stands out")
    return table, mask


#: the band outside a guessed outline that stands for the table (tiles, from its edge outwards):
#: past the guess's own error (a third of a tile), still on a mat's margin and markers
GUESS_BAND = (0.3, 0.45)


def locate_near(image_bgr: np.ndarray, corners: np.ndarray, intrinsics: CameraIntrinsics | None = None) -> BoardFit:
    """The tile grid refined from a guess of its outline, such as a mat's markers give.

    Why not the blob search: tiles on a mat of their own colour (neutral
    cards on a cream mat) make no blob inside the mat to outline, yet their
    seams still show.  A band outside the guess (``GUESS_BAND``), on the
    mat's margin and markers, plays the table's part.  ``corners`` (4×2,
    undistorted frame pixels) run A1, H1, H10, A10 and must be within about
    a third of a tile of the truth; the result is checked as a searched
    grid is, and the 4×5 window is not moved along the lattice.
    """
    intrinsics, _, lab, scale = _segmentation_lab(image_bgr, intrinsics)
    quad_small = (np.asarray(corners, np.float64) + 0.5) * scale - 0.5
    nx, ny = TILES_WIDE, TILES_TALL
    to_small = grid_homography(quad_small, nx, ny)
    band = np.zeros(lab.shape[:2], np.uint8)
    near, far = GUESS_BAND

    def grown(by: float) -> np.ndarray:
        return apply_h(to_small, np.array([[-by, -by], [nx + by, -by], [nx + by, ny + by], [-by, ny + by]]))

    outer, inner = grown(far), grown(near)
    cv2.fillConvexPoly(band, np.round(outer * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    cv2.fillConvexPoly(band, np.round(inner * 16).astype(np.int32), 0, cv2.LINE_8, 4)
    if np.count_nonzero(band) < 50:
        raise BoardNotFoundError("no tile array found: the guessed outline is too small")
    table = fit_table(lab, band > 0)
    quad = np.asarray(corners, np.float64)
    grid = (NO_GRID[0], nx, ny, grid_homography(quad, nx, ny))
    return fit_grid(image_bgr, grid, quad_small, table, scale, intrinsics, move_window=False)


def find_board(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None = None) -> BoardPose:
    """Pose of the tile array in the (undistorted) frame, or BoardNotFoundError."""
    return locate(image_bgr, intrinsics).pose
