"""Colour constancy and colour names, shared by the tile and lot readers.

A 2700 K lamp turns a white cap orange and a blue tower grey.  Instead of
thresholds fitted to one light, every frame is first white balanced with the
shades-of-grey estimate (Finlayson & Trezzi 2004: the illuminant is the
Minkowski p-norm mean of the scene, p = 6), then colours are named in CIE Lab
by *hue angle* for the guild colours and by lightness relative to the board's
own range for black and white.  Those are relative measures: they hold for a
dim or bright frame, glossy or matte plastic, any tile edition.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from boardcam.vision.models import ColourStats

GUILD_COLOURS = ("red", "blue", "green", "black")
STRUCTURE_COLOURS = ("red", "blue", "green", "black")
CAP_COLOURS = ("white", "black")

#: hue angle (degrees, Lab a*b* plane) of each guild colour in print or plastic
HUE_DEG = {"red": 35.0, "green": 140.0, "blue": 280.0}

#: chroma (Lab units) below which a colour counts as grey / black / white
NEUTRAL_CHROMA = 14.0


def shades_of_grey_gains(bgr: np.ndarray, mask: np.ndarray | None = None, p: float = 6.0) -> np.ndarray:
    """BGR gains that make the scene's illuminant estimate neutral.

    Clipped to 0.4–2.5: beyond that the estimate is more likely a wrong
    guess than a real lamp.
    """
    if p == 1.0 and mask is None and bgr.size // 3 < 2 * SAMPLE_PIXELS:
        return _grey_world_gains(bgr)  # every pixel counts: the same mean in OpenCV's loops (every frame)
    pixels = bgr.reshape(-1, 3)
    if mask is not None:
        pixels = pixels[mask.reshape(-1) > 0]
    pixels = pixels[:: max(1, len(pixels) // SAMPLE_PIXELS)].astype(np.float32)  # a sample is plenty for a mean
    if len(pixels) == 0:
        return np.ones(3)
    pixels = pixels[pixels.max(axis=1) < 250]  # clipped highlights lie about the colour
    if len(pixels) == 0:
        return np.ones(3)
    norm = (np.mean((pixels / 255.0) ** p, axis=0) ** (1.0 / p)).astype(np.float64)
    norm = np.maximum(norm, 1e-4)
    gains = norm.mean() / norm
    return np.clip(gains, 0.4, 2.5)


SAMPLE_PIXELS = 12000  # pixels enough for an illuminant estimate


def _grey_world_gains(bgr: np.ndarray) -> np.ndarray:
    """shades_of_grey_gains for p = 1 over every unclipped pixel of a small image."""
    image = np.ascontiguousarray(bgr, dtype=np.uint8)
    blue, green, red = cv2.split(image)
    # OpenCV takes a scalar for the second operand; its type stubs do not say so
    unclipped = cv2.compare(cv2.max(cv2.max(blue, green), red), 250, cv2.CMP_LT)  # type: ignore[call-overload]
    if cv2.countNonZero(unclipped) == 0:
        return np.ones(3)
    norm = np.maximum(np.array(cv2.mean(image, unclipped)[:3], np.float64) / 255.0, 1e-4)
    return np.clip(norm.mean() / norm, 0.4, 2.5)  # type: ignore[no-any-return]


def to_lab(bgr: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """White-balanced float Lab (L 0..100, a and b about ±100).

    Computed with OpenCV's 8-bit Lab (a lookup, several times faster than the
    float path) and rescaled; 8-bit steps are below the frame's noise.
    """
    lut = np.clip(np.arange(256, dtype=np.float32)[:, None] * np.asarray(gains, np.float32)[None, :], 0, 255)
    balanced = cv2.LUT(np.ascontiguousarray(bgr, dtype=np.uint8), lut.astype(np.uint8).reshape(256, 1, 3))
    return cv2.LUT(cv2.cvtColor(balanced, cv2.COLOR_BGR2LAB), _LAB8_TO_FLOAT)  # type: ignore[no-any-return]


#: OpenCV's 8-bit Lab (L scaled to 0..255, a and b offset by 128) to float Lab, as a per-channel lookup table
_LAB8_TO_FLOAT = np.stack(
    [np.arange(256) * (100.0 / 255.0), np.arange(256) - 128.0, np.arange(256) - 128.0], axis=-1
).astype(np.float32).reshape(256, 1, 3)


def hue_chroma(lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = lab[..., 1], lab[..., 2]
    return np.degrees(np.arctan2(b, a)) % 360.0, np.hypot(a, b)


def magnitude(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The length of (x, y) per element, as np.hypot to a few units in the last place.

    Why not np.hypot: it guards against overflow the reader's small values
    never reach, and OpenCV's is ten times faster on a board's pixels; the
    reader takes several such lengths every frame.
    """
    x = np.ascontiguousarray(x, dtype=np.result_type(x, y, np.float32))
    y = np.ascontiguousarray(y, dtype=x.dtype)
    return cv2.magnitude(x.reshape(1, -1), y.reshape(1, -1)).reshape(x.shape)  # type: ignore[no-any-return]


def hue_distance(h1: np.ndarray | float, h2: np.ndarray | float) -> np.ndarray:
    d = np.abs((np.asarray(h1) - h2 + 180.0) % 360.0 - 180.0)
    return d


def guild_hue_weights(hue: np.ndarray, width_deg: float = 30.0) -> np.ndarray:
    """(3, *hue.shape): how near each hue is to the red, blue and green guild hues (Gaussian, ``width_deg``)."""
    hue = np.asarray(hue)
    centres = np.array([HUE_DEG[g] for g in ("red", "blue", "green")], np.result_type(hue, np.float32))
    distance = hue_distance(hue[None], centres.reshape((3,) + (1,) * hue.ndim))
    return np.exp(-0.5 * (distance / width_deg) ** 2)  # type: ignore[no-any-return]


def guild_hue_scores(hue: np.ndarray) -> dict[str, np.ndarray]:
    """Soft membership of hue angles in red / green / blue (sums to 1)."""
    raw = {name: np.exp(-0.5 * (hue_distance(hue, centre) / 35.0) ** 2) for name, centre in HUE_DEG.items()}
    total = sum(raw.values()) + 1e-9
    return {name: value / total for name, value in raw.items()}


def nearest_hue(hue: float) -> tuple[str, float]:
    """Guild colour with the nearest hue, and a margin in [0, 1] (1 = exactly on it)."""
    dists = {name: float(hue_distance(hue, centre)) for name, centre in HUE_DEG.items()}
    ranked = sorted(dists.items(), key=lambda kv: kv[1])
    best, second = ranked[0], ranked[1]
    margin = (second[1] - best[1]) / max(second[1] + best[1], 1e-6)
    return best[0], float(margin)


def learned_scores(lab_mean: np.ndarray, classes: Mapping[str, ColourStats], prefix: str) -> dict[str, float]:
    """Posterior-like scores from calibration's learned colour statistics (Mahalanobis)."""
    scores: dict[str, float] = {}
    for name, stats in classes.items():
        if not name.startswith(prefix):
            continue
        cov = np.array(stats.covariance) + np.eye(3) * 4.0
        d = lab_mean - np.array(stats.mean)
        m2 = float(d @ np.linalg.solve(cov, d))
        scores[name[len(prefix):]] = float(np.exp(-0.5 * m2) / np.sqrt(np.linalg.det(cov)))
    total = sum(scores.values())
    if total <= 0:
        return {}
    return {k: v / total for k, v in scores.items()}


#: Minkowski norm for the board's illuminant estimate.  The board holds five
#: tiles of each guild, whose inks average to grey, so the plain mean
#: (grey-world, p = 1) is the right statistic there; a high p would let the
#: brightest print (light icons of one guild) pull the estimate.
BOARD_P = 1.0


def board_gains(board_bgr: np.ndarray) -> np.ndarray:
    """White-balance gains estimated from the tile array itself (see BOARD_P), raised together
    when the board is darker than any the fitted parts have seen (``exposure_lift``)."""
    gains = shades_of_grey_gains(board_bgr, p=BOARD_P)
    return gains * exposure_lift(board_bgr, gains)


#: the grey, once balanced, that the board's brightest percent must reach.  The scene generator's
#: boards (what every fitted part of the vision learnt from) put it at 110 to 215 (300 frames of the
#: four editions and made-up art): a darker board is an underexposed frame, not a darker table
EXPOSURE_FLOOR = 110.0
#: ...and the most a frame is brightened to reach it (two stops and a bit in the encoded values)
MAX_EXPOSURE_LIFT = 2.5
_GREY_WEIGHTS = np.array([0.114, 0.587, 0.299], np.float32)  # BGR to luma


def exposure_lift(board_bgr: np.ndarray, gains: np.ndarray) -> float:
    """1, or the common gain that brings an underexposed board's brightest percent up to EXPOSURE_FLOOR.

    Why: a camera exposes for the whole view, and a board on a white
    cloth or under a bright spot comes out dark.  Balancing scales each
    channel to keep the grey level; it cannot brighten the frame, and a
    board that dark darkens black coins and caps into the print.  With
    the camera of 40 generated scenes exposing 0.15 of what its auto
    exposure chose, 0.9831 of lots read right at the true pose without
    the lift and 0.9985 with it (docs/vision.md, "Exposure").
    A frame within the range is left as it is.  The brightest percent
    comes from a 256-bin histogram of the balanced grey: a third of the
    time of a sort, and a grey level is finer than the floor needs.
    """
    image = np.ascontiguousarray(board_bgr, dtype=np.uint8).reshape(-1, 1, 3)
    if image.size == 0:
        return 1.0
    weights = (_GREY_WEIGHTS * np.asarray(gains, np.float32)).reshape(1, 3)
    grey = cv2.transform(image, weights)  # balanced grey, 8-bit (what lies above 255 is above any floor)
    counts = np.cumsum(cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel())
    top = float(np.searchsorted(counts, 0.99 * counts[-1]))
    if top >= EXPOSURE_FLOOR:
        return 1.0
    return min(EXPOSURE_FLOOR / max(top, 1.0), MAX_EXPOSURE_LIFT)


def gains_matching(frame_lots: np.ndarray, reference_means: np.ndarray, use: np.ndarray | None = None) -> np.ndarray:
    """BGR gains that make this frame's board look like the empty-board reference.

    ``frame_lots`` (80, s, s, 3) raw BGR lots of this frame,
    ``reference_means`` (80, 3) the mean balanced BGR of the reference's lots
    (``EmptyBoardReference.bgr_means_at``, worked out once per reference).
    The gain per channel is the median over the lots in ``use`` (those
    believed empty; all by default) of reference / frame: a new lamp or a
    cloud changes every empty lot alike, while pieces are the minority of
    the lots used, so the median follows the light and not the pieces.
    """
    ref_mean, frame_mean = np.asarray(reference_means, np.float32), lot_means(frame_lots)
    if use is not None and int(np.count_nonzero(use)) >= 8:
        ref_mean, frame_mean = ref_mean[use], frame_mean[use]
    ratio = ref_mean / np.maximum(frame_mean, 1.0)
    return np.clip(np.median(ratio, axis=0), 0.4, 2.5).astype(np.float64)


def lot_means(lots: np.ndarray) -> np.ndarray:
    """Mean colour of each lot, (n, s, s, 3) 8-bit values -> (n, 3) float32.

    A matrix product with a channel picker rather than numpy's mean over
    the pixels' axis, which is ten times slower on this layout (0.7 ms a
    frame); sums of at most 65 536 8-bit values are exact in float32 either way.
    """
    n = lots.shape[0]
    flat = lots.reshape(n, -1).astype(np.float32)
    pixels = flat.shape[1] // 3
    picker = np.tile(np.eye(3, dtype=np.float32), (pixels, 1))
    return (flat @ picker) / np.float32(pixels)


def lab_lots_to_bgr(lab: np.ndarray) -> np.ndarray:
    """Float Lab lots (vision's scale) as 8-bit BGR values (float32), through OpenCV's 8-bit Lab."""
    lab8 = np.empty(lab.shape, np.float32)
    lab8[..., 0] = lab[..., 0] * 255.0 / 100.0
    lab8[..., 1:] = lab[..., 1:] + 128.0
    flat = np.clip(lab8, 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    return cv2.cvtColor(flat, cv2.COLOR_LAB2BGR).reshape(lab.shape).astype(np.float32)
