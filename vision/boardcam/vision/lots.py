"""Read each lot: empty, dome, tower or capped tower, with colours and a confidence.

Every lot is compared with what it would look like *empty*:

* with an empty-board ``reference`` (what the app saw at setup) that is the
  reference itself — occupancy becomes a plain difference test;
* without one, the expectation comes from the frame: the lots of one guild
  carry the same print up to a quarter turn, so the per-pixel median of a
  guild's canonical lots is its plain lot, and the median of its (aligned)
  icon lots is its icon lot.  It follows whatever art the edition prints.

From the difference map each lot gets a short vector of physical features
(how much of its centre, ring and corners departs from empty, how much
brighter highlights / darker shading / more texture / more colour it shows,
whether the departure sits on the side toward or away from the camera's
nadir, where tall pyramids lean).  A small classifier turns the features into
probabilities of empty / dome / tower.  Its weights (``lot_model.py``) are
fitted by ``benchmarks/train_lot_model.py`` on generated scenes whose seeds
are disjoint from the benchmark's, then temperature-scaled on held-out
scenes so the probability is a calibrated confidence.

Colours need no fitting: the piece's pixels (the part that departs from
empty) are named by hue angle in white-balanced Lab, black by low chroma and
lightness relative to the board, or — when calibration learned this set's
colours (``Appearance.colours``) — by Mahalanobis distance to them.  Towers
are red, blue or green; only towers carry caps, sampled where the cap's
height projects given the camera position implied by the homography.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from boardcam.engine.aliencity import Structure
from boardcam.vision.colour import HUE_DEG, guild_hue_weights, hue_distance, learned_scores, magnitude
from boardcam.vision.geometry import WarpGeometry, board_points_in_frame, project_height
from boardcam.vision.models import LOTS_TALL, LOTS_WIDE, Appearance, CameraIntrinsics
from boardcam.vision.tiles import (
    GUILDS,
    TILE_KEYS,
    TILE_LOT_IDS,
    TILE_OF_LOT,
    TileReading,
    canonical,
    centre_offsets,
    lot_grid,
    mean_weights,
    median_along,
    pixel_median,
    quarter_turns,
)

TOWER_BASE_MM = 25.0
TOWER_HEIGHT_MM = 44.0
CAP_SAMPLE_MM = 32.0  # middle of the cap (20–44 mm)
DEFAULT_TILE_MM = 62.0  # middle of the 51–75 mm range, when calibration did not say
KINDS = (None, "dome", "tower")
STRUCTURE_COLOURS = ("red", "blue", "green", "black")

L_WEIGHT = 0.6  # shadows change lightness more than colour: weigh ΔL a little less


@dataclass(frozen=True)
class LotReading:
    kind: str | None  # None (empty), "dome", "tower"
    colour: str | None
    cap: str | None
    confidence: float
    features: dict[str, float]

    def to_structure(self) -> Structure | None:
        """The engine's structure for this answer (None: an empty lot)."""
        if self.kind is None:
            return None
        return Structure(self.kind, self.colour or "red", self.cap if self.kind == "tower" else None)

    def to_structure_json(self) -> dict[str, str] | None:
        if self.kind is None:
            return None
        out: dict[str, str] = {"kind": self.kind, "color": self.colour or "red"}
        if self.kind == "tower":
            out["cap"] = self.cap  # type: ignore[assignment]
        return out


# ----------------------------------------------------------------------------- masks


@lru_cache(maxsize=8)
def _masks(s: int) -> dict[str, np.ndarray]:
    r = centre_offsets(s)[2]
    return {"centre": r < 0.55, "ring": (r >= 0.55) & (r < 0.95), "corner": r >= 0.95, "core": r < 0.35}


REGIONS = ("core", "centre", "ring", "corner")


@lru_cache(maxsize=8)
def _region_means(s: int) -> np.ndarray:
    """(s*s, 4): multiplying flattened lots by this gives their mean over core, centre, ring, corner."""
    masks = _masks(s)
    return mean_weights([masks[name] for name in REGIONS])


@lru_cache(maxsize=8)
def _offsets(s: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel offsets from a lot's centre in board units (x right, y up), per pixel."""
    yy, xx = np.mgrid[0:s, 0:s]
    return (xx + 0.5 - s / 2) / s, -(yy + 0.5 - s / 2) / s


# ----------------------------------------------------------------------------- expectation


def guild_index(tiles: dict[str, TileReading]) -> np.ndarray:
    """Guild index (0..3) of every lot's tile."""
    per_tile = np.array([GUILDS.index(tiles[k].colour) for k in TILE_KEYS])
    return per_tile[TILE_OF_LOT]


def plain_templates(canon: np.ndarray, lot_guild: np.ndarray, piece: np.ndarray | None = None) -> np.ndarray:
    """Per guild, the per-pixel median of its canonical lots: (4, s, s, 3).

    Icons are a quarter of a guild's lots and pieces are spread over many
    looks, so the median is the plain print; lots with a likely piece are
    left out when enough remain.
    """
    out = np.zeros((4, *canon.shape[1:]), canon.dtype)
    piece = np.zeros(80) if piece is None else piece
    for g in range(4):
        members = np.flatnonzero(lot_guild == g)
        if len(members) == 0:
            continue
        free = members[piece[members] < 0.5]
        use = free if len(free) >= 4 else members
        out[g] = pixel_median(canon[use])
    return out


def expected_from_frame(
    canon: np.ndarray,
    lot_guild: np.ndarray,
    icon_lots: np.ndarray | None,
    piece: np.ndarray | None = None,
    plain: np.ndarray | None = None,
) -> np.ndarray:
    """Empty look of every lot (canonical orientation), assembled from this frame's own lots.

    Plain lots: the guild's plain template.  Icon lots: the median of the
    guild's icon lots after turning each (quarter turns) to best match the
    most piece-free one, itself turned to best match the lot.
    """
    plain = plain_templates(canon, lot_guild, piece) if plain is None else plain
    out = plain[lot_guild].copy()
    if icon_lots is None:
        return out
    piece = np.zeros(80) if piece is None else piece
    icon_lots = np.asarray(icon_lots)
    for g in range(4):
        icons = icon_lots[lot_guild[icon_lots] == g]
        if len(icons) == 0:
            continue
        patches = canon[icons]
        turns = quarter_turns(patches)  # (n, 4, s, s, 3)
        ref = patches[int(np.argmin(piece[icons]))]
        best = np.abs(turns - ref[None, None]).mean(axis=(2, 3, 4)).argmin(1)
        aligned = turns[np.arange(len(icons)), best]
        template = pixel_median(aligned) if len(icons) >= 3 else aligned[0]
        template_turns = quarter_turns(template[None])[0]  # (4, s, s, 3)
        fit = np.abs(template_turns[None] - patches[:, None]).mean(axis=(2, 3, 4)).argmin(1)
        out[icons] = template_turns[fit]
    return out


def relight(expected: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Scale each tile's expected look to the light it gets in this frame.

    Lamps fall off across the table and vignetting darkens the corners, so
    a template from the whole guild is too bright on one tile and too dark
    on another.  The scale is the ratio of lightness medians on the lots'
    outer parts (least often covered by pieces), per tile; chroma scales
    with it.
    """
    sampled = _light_samples(seen.shape[1])
    tile_seen = median_along(_by_tile(seen[..., 0], sampled), 1)
    tile_exp = median_along(_by_tile(expected[..., 0], sampled), 1)
    scale = np.clip(tile_seen / np.maximum(tile_exp, 1.0), 0.6, 1.6)[TILE_OF_LOT]
    return expected * scale[:, None, None, None].astype(expected.dtype)


#: how far a tile's shading may tilt: its lightness ratio changes by at most this (as a log) per lot across the tile
SHADE_MOST = 0.2
#: the slopes are shrunk toward none by this share of the fit's weight (a ridge): a flat tile stays flat
SHADE_SHRINK = 0.5
#: pixels more than this many median deviations off the plane are left out of the next round of the fit
SHADE_OUTLIER = 2.5
#: the weight of a lot the first look takes for a piece: a piece must not tilt its tile's shading
SHADE_PIECE_WEIGHT = 0.05


@lru_cache(maxsize=4)
def _light_samples(s: int) -> np.ndarray:
    """The pixels of a lot a tile's light is measured on: every third of its outer parts (least often covered)."""
    return np.flatnonzero(~_masks(s)["core"].ravel())[::3]


@lru_cache(maxsize=4)
def _tile_positions(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every lot pixel's place on its tile in lots (x right, y up; the tile's centre at 0), (80, s, s) each;
    the pixels the fit samples (_light_samples); and, per tile, those pixels'
    1, x, y, x², xy, y² (20, samples, 6): what the plane's normal equations sum."""
    ox, oy = _offsets(s)
    lots = np.arange(80)
    x = (((lots % LOTS_WIDE) % 2 - 0.5)[:, None, None] + ox[None]).astype(np.float32)
    y = (((lots // LOTS_WIDE) % 2 - 0.5)[:, None, None] + oy[None]).astype(np.float32)
    sampled = _light_samples(s)
    xs, ys = _by_tile(x, sampled), _by_tile(y, sampled)
    terms = np.stack([np.ones_like(xs), xs, ys, xs * xs, xs * ys, ys * ys], axis=-1)
    return x, y, sampled, terms


def _by_tile(values: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """The sampled pixels of every lot, one row per tile: (20, 4 × samples)."""
    return values.reshape(len(values), -1)[:, sampled][TILE_LOT_IDS].reshape(len(TILE_LOT_IDS), -1)


def relight_shaded(expected: np.ndarray, seen: np.ndarray, piece: np.ndarray | None = None) -> np.ndarray:
    """Like :func:`relight`, with each tile's light as a plane across the tile rather than one scale.

    Why: a lamp's falloff, and print art shaded from one edge of the card
    to the other, make the four lots of one tile differently light, so one
    guild template scaled per tile leaves the darker lot darker than it
    should look, and the network takes the difference for a piece (plain
    lots read as towers on empty boards).  The log of the lightness ratio
    is fitted as a plane per tile on the lots' outer parts, robustly
    (a few reweighted rounds leave out what lies far off the plane), with
    the lots the first look takes for pieces nearly left out (``piece``),
    the slopes shrunk toward none and capped, so a faint piece the first
    look missed cannot shade its tile away.
    """
    x, y, sampled, terms = _tile_positions(seen.shape[1])
    ratio = np.log(np.maximum(_by_tile(seen[..., 0], sampled), 1.0)) \
        - np.log(np.maximum(_by_tile(expected[..., 0], sampled), 1.0))
    lot_weight = np.ones(len(seen), np.float32) if piece is None \
        else np.where(np.asarray(piece) > 0.5, SHADE_PIECE_WEIGHT, 1.0).astype(np.float32)
    weight = np.repeat(lot_weight[TILE_LOT_IDS], len(sampled), axis=1)
    plane = np.zeros((len(ratio), 3), np.float32)
    plane[:, 0] = median_along(ratio, 1)
    shrink = np.diag([0.0, SHADE_SHRINK, SHADE_SHRINK])
    for _ in range(3):
        residual = np.abs(ratio - (terms[..., :3] @ plane[..., None])[..., 0])
        spread = median_along(residual, 1) + 0.01
        w = weight * (residual < SHADE_OUTLIER * spread[:, None])
        one, sx, sy, sxx, sxy, syy = (w[:, None, :] @ terms)[:, 0].T
        normal = np.stack([np.stack([one, sx, sy], -1), np.stack([sx, sxx, sxy], -1), np.stack([sy, sxy, syy], -1)], 1)
        right = ((w * ratio)[:, None, :] @ terms[..., :3])[:, 0]
        fitted = np.linalg.solve(normal + (shrink * one[:, None, None] + 1e-6 * np.eye(3)), right[..., None])[..., 0]
        plane = np.where((one > 10)[:, None], fitted, plane).astype(np.float32)
        plane[:, 1:] = np.clip(plane[:, 1:], -SHADE_MOST, SHADE_MOST)
    per_lot = plane[TILE_OF_LOT][:, :, None, None]
    scale = np.clip(np.exp(per_lot[:, 0] + per_lot[:, 1] * x + per_lot[:, 2] * y), 0.6, 1.6)
    return expected * scale[..., None].astype(expected.dtype)


def difference(seen: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per-pixel colour difference (ΔE with ΔL weighted by L_WEIGHT): (80, s, s)."""
    d = seen - expected
    return np.sqrt((L_WEIGHT * d[..., 0]) ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2)


CHANGE_FLOOR = 1.8  # ΔE: the faintest piece (a black dome on a black tile) departs about 2.3 after smoothing
CHANGE_NOISE_FACTOR = 2.5


def changed_lots(seen: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Which lots look different from ``before`` (the look their last answer was decided on): (80,) bool."""
    return departures(seen, before) > 1.0  # type: ignore[no-any-return]


def departures(seen: np.ndarray, before: np.ndarray) -> np.ndarray:
    """How far each lot's look departs from ``before``, in multiples of the bar for a change: (80,).

    Both are smoothed over 3×3 pixels first — pieces cover a lot, sensor noise
    is per pixel — and ``before`` is relit to this frame's light per tile, so
    a lamp dimming is not a change.  The bar is relative to this frame's
    typical departure (most lots do not change between two still boards),
    with a floor below the faintest piece.
    """
    n, s = seen.shape[:2]

    def smooth(lots: np.ndarray) -> np.ndarray:
        return np.asarray(cv2.blur(lots.reshape(n * s, s, 3), (3, 3))).reshape(lots.shape)

    a = smooth(seen.astype(np.float32))
    b = relight(smooth(before.astype(np.float32)), a)
    centre = _masks(s)["centre"]
    departure = difference(a, b)[:, centre].mean(axis=1)
    bar = max(CHANGE_FLOOR, CHANGE_NOISE_FACTOR * float(np.median(departure)))
    return departure / bar  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- features

FEATURE_NAMES = (
    "d_core", "d_centre", "d_ring", "d_corner",
    "f_core", "f_centre", "f_ring", "f_corner",
    "texture", "highlight", "shade", "chroma_gain",
    "d_near", "d_far", "lean", "noise",
    "tile_rank", "sibling_gap",
    "area", "shift_out", "spread_along", "spread_across", "inner_neighbour", "outer_neighbour",
    "ray_mean", "ray_cv", "ray_lean", "ray_square", "ray_out",
    "edge_in", "edge_mid", "edge_out", "radial_in", "radial_mid", "radial_out",
)


@lru_cache(maxsize=8)
def _edge_geometry(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel of a lot: the unit vector from its centre (x, y) over half a lot, and the (s*s, 3)
    membership of EDGE_RINGS (sums over a ring, not means: the radial share is a ratio of sums)."""
    rx, ry, r = centre_offsets(s)
    unit_x = (rx / np.maximum(r, 1e-3) / (s / 2)).astype(np.float32)
    unit_y = (ry / np.maximum(r, 1e-3) / (s / 2)).astype(np.float32)
    rings = np.stack([((r >= lo) & (r < hi)).ravel() for lo, hi in EDGE_RINGS], axis=1).astype(np.float32)
    return unit_x, unit_y, rings


EDGE_RINGS = ((0.0, 0.4), (0.4, 0.75), (0.75, 1.0))


def edge_features(seen_l: np.ndarray, expected_l: np.ndarray) -> np.ndarray:
    """Edge energy and how radial the edges are, in three rings about the lot centre: (n, 6).

    A dome or a coin of the tile's own colour barely changes the colour, but
    its round outline and shading put edges where the print has none, and
    those edges point at the centre; printed icons have their own template.
    """
    n, s = seen_l.shape[:2]
    gy_s, gx_s = _gradients(seen_l)
    gy_e, gx_e = _gradients(expected_l)
    mag_s = magnitude(gx_s, gy_s).reshape(n, -1)
    mag_e = magnitude(gx_e, gy_e).reshape(n, -1)
    unit_x, unit_y, rings = _edge_geometry(s)
    radial = np.abs(gx_s * unit_x + gy_s * unit_y).reshape(n, -1)
    mag_s_sum = mag_s @ rings
    out = np.zeros((n, 6), np.float32)
    out[:, 0:3] = (mag_s_sum - mag_e @ rings) / rings.sum(0) / 3.0
    out[:, 3:6] = (radial @ rings) / (mag_s_sum + 1.0)
    return out


def _gradients(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.gradient of a stack of images along rows and columns (the same values in half its time)."""
    rows, cols = np.empty_like(images), np.empty_like(images)
    rows[:, 1:-1] = (images[:, 2:] - images[:, :-2]) / 2.0
    rows[:, 0] = images[:, 1] - images[:, 0]
    rows[:, -1] = images[:, -1] - images[:, -2]
    cols[:, :, 1:-1] = (images[:, :, 2:] - images[:, :, :-2]) / 2.0
    cols[:, :, 0] = images[:, :, 1] - images[:, :, 0]
    cols[:, :, -1] = images[:, :, -1] - images[:, :, -2]
    return rows, cols


RAY_ANGLES = 16
RAY_STEPS = np.arange(1, 13) / 16.0  # radii in lots, out to 3/4 of a lot


def lot_ray_lengths(changed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far the departing blob reaches from each lot's centre along 16 rays: (80, 16) in lots, and the
    ray angles.

    ``changed`` holds every lot's changed pixels, (80, s, s) or (80, s*s)
    by lot id.  Walks outward and stops at the first unchanged sample, so a
    neighbour's piece does not count (a ray may cross into the neighbour's
    lot; beyond the array nothing has changed).  A dome gives equal rays, a
    square tower base a four-fold pattern, a leaning tower long rays on one
    side.
    """
    n = len(changed)
    s = round((changed.size // n) ** 0.5)
    flat = np.zeros(changed.size + 1, np.uint8)  # the last sample: beyond the array
    flat[:-1] = changed.reshape(-1)
    hit = flat[_ray_samples(s)]  # (80, 16, 12)
    reach = np.where(hit.all(axis=2), len(RAY_STEPS), hit.argmin(axis=2))  # samples before the first miss
    return reach / 16.0, _ray_angles()


@lru_cache(maxsize=1)
def _ray_angles() -> np.ndarray:
    angles = np.arange(RAY_ANGLES) * 2 * np.pi / RAY_ANGLES
    angles.flags.writeable = False
    return angles


@lru_cache(maxsize=8)
def _ray_samples(s: int) -> np.ndarray:
    """Where every ray's samples lie (80, 16, 12): indices into all lots' pixels by lot id, flattened, or
    past their end (80 s s) for a sample beyond the array."""
    theta = _ray_angles()
    ids = np.arange(80)
    # board pixels, x right and y down from the array's top-left corner (row 10 at the top)
    cx = (ids % LOTS_WIDE + 0.5) * s
    cy = (LOTS_TALL - 1 - ids // LOTS_WIDE + 0.5) * s
    xs = np.rint(cx[:, None, None] + (np.cos(theta)[:, None] * RAY_STEPS[None] * s)[None]).astype(int)
    ys = np.rint(cy[:, None, None] + (-np.sin(theta)[:, None] * RAY_STEPS[None] * s)[None]).astype(int)
    inside = (xs >= 0) & (xs < LOTS_WIDE * s) & (ys >= 0) & (ys < LOTS_TALL * s)
    lot = (LOTS_TALL - 1 - ys // s) * LOTS_WIDE + xs // s
    index = (lot * s + ys % s) * s + xs % s
    samples = np.where(inside, index, 80 * s * s)
    samples.flags.writeable = False
    return samples


_RAY_HARMONICS = {1: np.exp(1j * _ray_angles()), 4: np.exp(4j * _ray_angles())}


def lot_features(
    seen: np.ndarray,
    expected: np.ndarray,
    geometry_centre: np.ndarray,
    lean_tiles: float,
) -> np.ndarray:
    """Physical features of all 80 lots at once: (80, len(FEATURE_NAMES)).

    ``seen``/``expected`` are Lab lots in seen orientation (80, s, s, 3);
    ``geometry_centre`` the camera centre in board tile units (x, y, z).
    Every known-pose frame without a setup reference computes these, so what
    depends on the pose alone is cached (_lean_geometry) and the lightness
    planes are made contiguous once for the gradients.
    """
    n, s = seen.shape[:2]
    masks = _masks(s)
    diff = difference(seen, expected).reshape(n, s * s)
    noise = float(max(2.0, np.median(diff[:, masks["corner"].ravel()][:, ::3])))
    threshold = max(7.0, 2.5 * noise)
    changed = diff > threshold
    feats = np.zeros((n, len(FEATURE_NAMES)), np.float32)

    means = _region_means(s)
    feats[:, 0:4] = diff @ means / 10.0
    feats[:, 4:8] = changed.astype(np.float32) @ means
    centre = masks["centre"].ravel()
    seen_l, expected_l = np.ascontiguousarray(seen[..., 0]), np.ascontiguousarray(expected[..., 0])
    sl = seen_l.reshape(n, -1)[:, centre]
    el = expected_l.reshape(n, -1)[:, centre]
    gy_s = np.abs(np.diff(seen_l, axis=1)).mean(axis=(1, 2))
    gx_s = np.abs(np.diff(seen_l, axis=2)).mean(axis=(1, 2))
    gy_e = np.abs(np.diff(expected_l, axis=1)).mean(axis=(1, 2))
    gx_e = np.abs(np.diff(expected_l, axis=2)).mean(axis=(1, 2))
    feats[:, 8] = (gx_s + gy_s - gx_e - gy_e) / 5.0
    # extremes (the warp already smooths over a few pixels): glare and shading
    feats[:, 9] = (sl.max(1) - el.max(1)) / 10.0
    feats[:, 10] = (el.min(1) - sl.min(1)) / 10.0
    seen_ab = seen[..., 1:3].reshape(n, -1, 2)[:, centre]
    expected_ab = expected[..., 1:3].reshape(n, -1, 2)[:, centre]
    sc = magnitude(seen_ab[..., 0], seen_ab[..., 1]).mean(1)
    ec = magnitude(expected_ab[..., 0], expected_ab[..., 1]).mean(1)
    feats[:, 11] = (sc - ec) / 10.0
    # toward / away from the nadir: a tower's lean spills onto the far side
    lean = _lean_geometry(s, float(geometry_centre[0]), float(geometry_centre[1]))
    feats[:, 12] = (diff * lean.near).sum(1) / lean.near_count / 10.0
    feats[:, 13] = (diff * lean.far).sum(1) / lean.far_count / 10.0
    cz = float(geometry_centre[2])
    feats[:, 14] = lean.dist * lean_tiles / max(cz - lean_tiles, 1e-3) * 2.0  # lean of an apex, in lots
    feats[:, 15] = noise / 10.0
    # compared with the tile's other lots: the rank of this lot's centre departure
    d_c = feats[:, 1]
    per_tile = d_c[TILE_LOT_IDS]  # (20, 4)
    ranks = per_tile.argsort(1).argsort(1) / 3.0
    feats[TILE_LOT_IDS.ravel(), 16] = ranks.ravel()
    sorted_tile = np.sort(per_tile, axis=1)
    lowest_other = np.where(per_tile == sorted_tile[:, :1], sorted_tile[:, 1:2], sorted_tile[:, :1])
    feats[TILE_LOT_IDS.ravel(), 17] = (per_tile - lowest_other).ravel()
    # shape of the departing blob: a tower is larger and stretched outward along its lean
    wgt = np.clip(diff / threshold - 0.5, 0.0, 2.0)
    total = wgt.sum(1) + 1e-6
    mean_along = (wgt * lean.along).sum(1) / total
    feats[:, 18] = wgt.mean(1)
    feats[:, 19] = mean_along * 2.0
    feats[:, 20] = np.sqrt((wgt * (lean.along - mean_along[:, None]) ** 2).sum(1) / total) * 2.0
    feats[:, 21] = np.sqrt((wgt * lean.across_squared).sum(1) / total) * 2.0
    # ray lengths of the blob: round dome, square tower base, leaning tower
    rays, theta = lot_ray_lengths(changed)
    rsum = rays.sum(1) + 1e-6
    feats[:, 24] = rays.mean(1) * 2.0
    feats[:, 25] = rays.std(1) / (rays.mean(1) + 0.05)
    feats[:, 26] = np.abs((rays * _RAY_HARMONICS[1][None]).sum(1)) / rsum
    feats[:, 27] = np.abs((rays * _RAY_HARMONICS[4][None]).sum(1)) / rsum
    feats[:, 28] = (rays * lean.outward_cos).sum(1) / rsum
    feats[:, 29:35] = edge_features(seen_l, expected_l)
    # the neighbours toward / away from the nadir: a tower there leans into / is leant on by this lot
    for k, neighbour in ((22, lean.inner_neighbour), (23, lean.outer_neighbour)):
        feats[:, k] = np.where(neighbour < 0, 0.0, feats[neighbour, 1])
    return feats


@dataclass(frozen=True)
class LeanGeometry:
    """What lot_features needs of the camera's position, for every lot (by id) and pixel of a lot.

    ``dist``: each lot's distance from the nadir (tile units);
    ``along``/``across_squared``: each pixel's offset along the lot's
    outward direction from the nadir, and the square of its offset across
    it; ``near``/``far`` the pixels toward and away from the nadir (and how
    many); ``outward_cos``: how far each ray points outward;
    ``inner_neighbour``/``outer_neighbour`` the lot one step toward and away
    from the nadir (-1 where that step stays on the lot, at the array's edge
    or under the camera).
    """

    dist: np.ndarray
    along: np.ndarray
    across_squared: np.ndarray
    near: np.ndarray
    far: np.ndarray
    near_count: np.ndarray
    far_count: np.ndarray
    outward_cos: np.ndarray
    inner_neighbour: np.ndarray
    outer_neighbour: np.ndarray


@lru_cache(maxsize=8)
def _lean_geometry(s: int, centre_x: float, centre_y: float) -> LeanGeometry:
    """Per pose (the camera's ground point stays while the camera does), made once."""
    ox, oy = _offsets(s)
    direction = lot_centres() - np.array([centre_x, centre_y])[None]
    dist = np.linalg.norm(direction, axis=1, keepdims=True)
    unit = direction / np.maximum(dist, 1e-6)
    along = unit[:, 0:1] * ox.ravel()[None] + unit[:, 1:2] * oy.ravel()[None]  # (80, s*s)
    across = -unit[:, 1:2] * ox.ravel()[None] + unit[:, 0:1] * oy.ravel()[None]
    near, far = along < -0.1, along > 0.1
    theta = _ray_angles()
    outward_cos = np.cos(theta[None] - np.arctan2(unit[:, 1], unit[:, 0])[:, None])
    ids = np.arange(80)
    col, row = ids % LOTS_WIDE, ids // LOTS_WIDE
    neighbours = []
    for sign in (-1.0, 1.0):
        ncol = np.clip(col + np.rint(sign * unit[:, 0]).astype(int), 0, LOTS_WIDE - 1)
        nrow = np.clip(row + np.rint(sign * unit[:, 1]).astype(int), 0, LOTS_TALL - 1)
        same = (ncol == col) & (nrow == row)
        neighbours.append(np.where(same, -1, nrow * LOTS_WIDE + ncol))
    geometry = LeanGeometry(dist[:, 0], along, across**2, near, far, np.maximum(near.sum(1), 1),
                            np.maximum(far.sum(1), 1), outward_cos, neighbours[0], neighbours[1])
    for value in vars(geometry).values():
        value.flags.writeable = False
    return geometry


def lot_centres() -> np.ndarray:
    """Board coordinates (tile units) of every lot's centre, by lot id: (80, 2)."""
    ids = np.arange(LOTS_TALL * LOTS_WIDE)
    return np.stack([(ids % LOTS_WIDE + 0.5) / 2.0, (ids // LOTS_WIDE + 0.5) / 2.0], axis=1)


# ----------------------------------------------------------------------------- classifier


def kind_probabilities(features: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    """P(empty, dome, tower) per lot from the fitted two-layer network (temperature-scaled)."""
    x = (features - np.asarray(model["mean"])) / np.asarray(model["std"])
    h = np.maximum(x @ np.asarray(model["w1"]) + np.asarray(model["b1"]), 0.0)
    logits = (h @ np.asarray(model["w2"]) + np.asarray(model["b2"])) / float(model.get("temperature", 1.0))
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def heuristic_probabilities(features: np.ndarray) -> np.ndarray:
    """Fallback when no fitted model is present: centre departure decides, size tells the kind."""
    occ = 1.0 / (1.0 + np.exp(-(features[:, 5] - 0.45) / 0.08))
    tower = 1.0 / (1.0 + np.exp(-(features[:, 6] + features[:, 13] - 0.9) / 0.15))
    return np.stack([1 - occ, occ * (1 - tower), occ * tower], axis=1)


# ----------------------------------------------------------------------------- colours


def piece_colour_scores(
    seen: np.ndarray, expected: np.ndarray, light_ref: tuple[float, float], appearance: Appearance | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Colour probabilities of whatever stands on each lot.

    Returns (80, 4) red/blue/green/black for a dome, (80, 4) for a tower
    (black impossible), the piece's mean Lab and the Lab of its coloured
    pixels (a tower's body without its cap).  The piece is the more
    departing half of the lot's centre (glare left out: it is the lamp's
    colour).  A tower's hue comes from its *coloured* pixels only: a white
    or black cap departs most but says nothing about the tower, and a tower
    on a tile of its own colour departs only by shading, so when no
    coloured pixel departs, the coloured pixels of the centre speak.
    """
    n, s = seen.shape[:2]
    centre = _masks(s)["centre"].ravel()
    diff = difference(seen, expected).reshape(n, -1)[:, centre]
    pixels = seen.reshape(n, -1, 3)[:, centre]
    cut = np.median(diff, axis=1, keepdims=True)
    depart = (diff >= cut) & (pixels[..., 0] < 97.0)
    w = depart.astype(np.float32)
    w[w.sum(1) < 4] = 1.0
    medians = (pixels * w[..., None]).sum(1) / w.sum(1)[:, None]
    chroma = np.hypot(pixels[..., 1], pixels[..., 2])
    colourful = np.clip(chroma - 12.0, 0.0, 30.0)
    # a white cap is the lightest part of its tower and, under a lamp the
    # white balance did not fully undo, not quite grey: leave it out
    colourful = colourful * (pixels[..., 0] <= np.percentile(pixels[..., 0], 70, axis=1, keepdims=True))
    wc = colourful * depart
    weak = wc.sum(1) < 0.15 * s * s
    wc[weak] = colourful[weak]
    tower_lab = np.column_stack([
        medians[:, 0],
        (pixels[..., 1] * wc).sum(1) / np.maximum(wc.sum(1), 1e-6),
        (pixels[..., 2] * wc).sum(1) / np.maximum(wc.sum(1), 1e-6),
    ])
    dark, light = light_ref
    dome = rule_colour_probabilities(medians, dark, light)
    # each coloured pixel votes for the nearest guild hue: a majority, not a
    # mean, so a neighbour's leaning tower or a shadow cannot drag the hue
    hue = np.degrees(np.arctan2(pixels[..., 2], pixels[..., 1])) % 360.0
    votes = (wc[None] * guild_hue_weights(hue)).sum(2).T
    share = votes / np.maximum(votes.sum(1, keepdims=True), 1e-6)
    tower = np.zeros((n, 4))
    tower[:, :3] = np.exp(8.0 * share)
    if appearance is not None and any(k.startswith("structure:") for k in appearance.colours):
        for i in range(n):
            scores = learned_scores(medians[i], appearance.colours, "structure:")
            learned = np.array([scores.get(name, 0.0) for name in STRUCTURE_COLOURS])
            if learned.sum() > 0:
                dome[i] = learned / learned.sum()
            scores = learned_scores(tower_lab[i], appearance.colours, "structure:")
            learned = np.array([scores.get(name, 0.0) for name in STRUCTURE_COLOURS])
            if learned.sum() > 0:
                tower[i] = learned / learned.sum()
    tower[:, 3] = 0.0
    tower /= np.maximum(tower.sum(1, keepdims=True), 1e-9)
    return dome, tower, medians, tower_lab


def rule_colour_probabilities(lab: np.ndarray, dark: float, light: float) -> np.ndarray:
    """Red/blue/green by hue angle, black by low chroma and lightness relative to the board."""
    lab = np.atleast_2d(lab)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    rel = (lab[:, 0] - dark) / max(light - dark, 1e-6)
    logits = np.zeros((len(lab), 4))
    for j, name in enumerate(("red", "blue", "green")):
        logits[:, j] = -0.5 * (hue_distance(hue, HUE_DEG[name]) / 28.0) ** 2 + np.clip(chroma - 10.0, 0, 20) / 4.0
    logits[:, 3] = 3.0 * (1.0 - np.clip(chroma / 14.0, 0, 2)) + 4.0 * (0.35 - rel) / 0.2
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def cap_probabilities(
    lab_board: np.ndarray, geometry: WarpGeometry, tile_mm: float, body: np.ndarray, light_ref: tuple[float, float]
) -> np.ndarray:
    """P(no cap, white, black) per lot, read where a cap's middle would be seen.

    A cap is achromatic: white is light, black is dark, compared with the
    tower body's own colour there (a black cap on a dark blue tower is
    darker *and* greyer than the tower).
    """
    s = geometry.tile_px // 2
    centres = lot_centres()
    where = project_height(centres, CAP_SAMPLE_MM / tile_mm, geometry.camera_centre)
    xy = geometry.board_to_warp(where)
    h, w = lab_board.shape[:2]
    r = max(1, int(round(0.12 * s)))
    smooth = cv2.blur(lab_board, (2 * r + 1, 2 * r + 1))
    xi = np.clip(np.round(xy[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(xy[:, 1]).astype(int), 0, h - 1)
    samples = smooth[yi, xi].astype(np.float64)
    dark, light = light_ref
    chroma = np.hypot(samples[:, 1], samples[:, 2])
    body_chroma = np.hypot(body[:, 1], body[:, 2])
    rel = (samples[:, 0] - dark) / max(light - dark, 1e-6)
    grey = np.clip((0.6 * body_chroma - chroma) / 6.0, -3, 3) + np.clip((14.0 - chroma) / 6.0, -3, 3)
    logits = np.zeros((80, 3))
    logits[:, 1] = grey + (rel - 0.6) / 0.08 + (samples[:, 0] - body[:, 0] - 10.0) / 5.0
    logits[:, 2] = grey + (0.3 - rel) / 0.08 + (body[:, 0] - samples[:, 0] - 5.0) / 5.0
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


CAP_HEIGHTS = (0.0, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95)  # tile units: a cap's middle is 0.3–0.6 of a 51–75 mm tile up
CAP_FEATURE_NAMES = (
    *(f"dl_{h}" for h in CAP_HEIGHTS), *(f"chroma_{h}" for h in CAP_HEIGHTS), *(f"rel_{h}" for h in CAP_HEIGHTS),
    "body_chroma", "body_rel", "dl_max", "dl_min", "chroma_min", "lean",
    *(f"a_{h}" for h in CAP_HEIGHTS), *(f"b_{h}" for h in CAP_HEIGHTS),
)


def cap_features(
    lab_board: np.ndarray, geometry: WarpGeometry, body: np.ndarray, light_ref: tuple[float, float]
) -> np.ndarray:
    """What the table shows along each lot's apex ray: (80, len(CAP_FEATURE_NAMES)).

    A cap sits on the apex, which the camera sees displaced outward from the
    base by the tower's lean; how far depends on the tile size, which
    calibration may not know.  So the look is sampled at several heights
    along the ray (lightness against the tower body, chroma, lightness within
    the board's range) and the fitted cap classifier finds the cap on it.
    """
    s = geometry.tile_px // 2
    r = max(1, int(round(0.12 * s)))
    smooth = cv2.blur(lab_board, (2 * r + 1, 2 * r + 1))
    h, w = smooth.shape[:2]
    centres = lot_centres()
    samples = []
    for height in CAP_HEIGHTS:
        xy = geometry.board_to_warp(project_height(centres, height, geometry.camera_centre))
        xi = np.clip(np.round(xy[:, 0]).astype(int), 0, w - 1)
        yi = np.clip(np.round(xy[:, 1]).astype(int), 0, h - 1)
        samples.append(smooth[yi, xi].astype(np.float64))
    seen = np.stack(samples, axis=1)  # (80, heights, 3)
    dark, light = light_ref
    span = max(light - dark, 1e-6)
    dl = (seen[..., 0] - body[:, None, 0]) / 10.0
    chroma = np.hypot(seen[..., 1], seen[..., 2]) / 10.0
    rel = (seen[..., 0] - dark) / span
    apex = project_height(centres, 0.7, geometry.camera_centre) - centres
    return np.column_stack([
        dl, chroma, rel,
        np.hypot(body[:, 1], body[:, 2]) / 10.0, (body[:, 0] - dark) / span,
        dl.max(1), dl.min(1), chroma.min(1), np.hypot(apex[:, 0], apex[:, 1]) * 2.0,
        seen[..., 1] / 10.0, seen[..., 2] / 10.0,  # the hue along the ray: the body low, the cap high
    ]).astype(np.float32)


def tower_colour_features(cap_feats: np.ndarray, tower_probs: np.ndarray, tower_body: np.ndarray,
                          piece: np.ndarray) -> np.ndarray:
    """Inputs of the fitted tower-colour classifier: (80, F).

    The hue votes of the coloured pixels, the coloured pixels' and the
    departing pixels' Lab, and the Lab along the apex ray (from
    :func:`cap_features`): low on the ray is the body, high up a cap whose
    tint under a cold or warm lamp must not be taken for the tower's colour.
    """
    return np.column_stack([
        tower_probs[:, :3], tower_body[:, 1:] / 10.0, piece[:, 1:] / 10.0, cap_feats,
    ]).astype(np.float32)


# ----------------------------------------------------------------------------- the apex, at full resolution

APEX_HEIGHTS = (0.4, 0.5, 0.6, 0.7, 0.8)  # tile units: 38 mm, under the apex, on 51-75 mm tiles, with room
APEX_DISC = 0.14  # lots: well inside a 14 mm cap on a 25-37 mm lot
APEX_WALLS = (0.24, 0.38)  # lots: the tower's walls around its top


def apex_lightness(image_bgr: np.ndarray, geometry: WarpGeometry, lots: list[int],
                   intrinsics: CameraIntrinsics | None = None) -> dict[int, tuple[float, float]]:
    """Lightness (Lab L, 0-255) of the frame at each lot's tower apex and of the tower's walls around it.

    Why: a black cap is opaque black plastic, the darkest thing at the apex,
    and darker than the walls below it; a clear tower on a dark card is dark
    all over, its top no darker than its walls.  The board network sees the
    apex at 16 pixels a lot, where the two look alike; the frame itself has
    several times the detail.  Where the apex appears depends on the tile
    size and the camera's height, which are known only roughly, so the apex
    is the darkest disc along the lot's lean ray (APEX_HEIGHTS), and the
    walls are the ring around it.  Lots whose apex falls outside the frame
    are left out.
    """
    centres = lot_centres()[lots]
    points = []
    for height in APEX_HEIGHTS:
        apex = project_height(centres, height, geometry.camera_centre)
        points.extend([apex, apex + np.array([0.5, 0.0])])  # the apex and one lot along its row
    pixels = board_points_in_frame(geometry.board_h, np.concatenate(points), intrinsics,
                                   (image_bgr.shape[1], image_bgr.shape[0]))
    pixels = pixels.reshape(len(APEX_HEIGHTS), 2, len(lots), 2)
    out: dict[int, tuple[float, float]] = {}
    for index, lot in enumerate(lots):
        looks = [look for step in pixels if (look := _disc_and_walls(image_bgr, step[0, index], step[1, index]))]
        if looks:
            out[lot] = min(looks)
    return out


def _disc_and_walls(image_bgr: np.ndarray, centre: np.ndarray, along: np.ndarray) -> tuple[float, float] | None:
    """Mean lightness of a disc about ``centre`` and of the ring around it (``along``: one lot further)."""
    cx, cy = centre
    lot_px = float(np.hypot(*(along - centre)))
    reach = int(np.ceil(APEX_WALLS[1] * lot_px)) + 1
    x0, y0 = int(round(cx)) - reach, int(round(cy)) - reach
    height, width = image_bgr.shape[:2]
    if lot_px < 4 or x0 < 0 or y0 < 0 or x0 + 2 * reach >= width or y0 + 2 * reach >= height:
        return None
    crop = image_bgr[y0:y0 + 2 * reach + 1, x0:x0 + 2 * reach + 1]
    light = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float64)
    yy, xx = np.mgrid[y0:y0 + crop.shape[0], x0:x0 + crop.shape[1]]
    d = np.hypot(xx - cx, yy - cy) / lot_px
    disc, walls = d < APEX_DISC, (d > APEX_WALLS[0]) & (d < APEX_WALLS[1])
    if not disc.any() or not walls.any():
        return None
    return float(light[disc].mean()), float(light[walls].mean())
