"""Read every lot at once with a small convolutional network over the whole board.

Why a network over the board and not a classifier per lot: what decides a
lot is often next door.  A 44 mm pyramid leans outward from the camera's
nadir by up to a lot, so its apex and cap lie over the neighbouring lot; a
low lamp throws its shadow two lots further; a flat coin of the tile's own
colour shows only as a thin rim.  A per-lot feature vector cannot tell "my
neighbour's tower leans over me" from "a tower stands on me".  A network
whose receptive field spans three lots, fed with the lean direction, can.

Inputs (one image, ``INPUT_CHANNELS`` planes over the warped board and its
one-lot margin, ``LOT_PX`` per lot):

* the frame's Lab, and the *empty* look of every lot (the setup reference,
  or the frame's own guild templates when there is none), both with the
  board's median lightness taken off, so a dimmer lamp is not a change;
* the lean vector: where a point one tile unit high appears, relative to its
  base, from the camera position the homography implies;
* whether the empty look came from a reference (exact) or from templates
  (approximate, icons may be misplaced).

Output per lot: one of ``CLASSES`` (empty, a dome of four colours, a tower
of three colours with no cap, a white or a black cap) or ``COVERED`` (a hand
or an arm over it: say so rather than guess), as probabilities.

Inference is plain numpy (im2col and one matrix product per layer): the
network is ~100 k weights and ~60 M multiply-adds, a few milliseconds on one
core, and needs nothing beyond what the vision already imports.  The
weights (``lot_net.npz``) are fitted by ``benchmarks/train_lot_net.py`` on
generated scenes whose seeds are disjoint from the benchmarks'; a table whose
towers are clear plastic (``models.Appearance.towers``) is read with weights
refined on such scenes alone (``lot_net_clear.npz``, see ``board_net``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from boardcam.vision.models import LOTS_TALL, LOTS_WIDE, TILES_TALL, TOWER_LOOKS

WEIGHTS = Path(__file__).with_name("lot_net.npz")
#: the weights fitted for each look of towers (models.TOWER_LOOKS): the usual ones on opaque and milky
#: towers, the others refined from them on scenes whose towers are all clear plastic (docs/vision.md)
WEIGHTS_FOR_TOWERS = {"opaque": WEIGHTS, "clear": WEIGHTS.with_name("lot_net_clear.npz")}

STRUCTURE_COLOURS = ("red", "blue", "green", "black")
CAPS = (None, "white", "black")
CLASSES: tuple[tuple[str | None, str | None, str | None], ...] = (
    (None, None, None),
    *(("dome", c, None) for c in STRUCTURE_COLOURS),
    *(("tower", c, cap) for c in STRUCTURE_COLOURS[:3] for cap in CAPS),
)
COVERED = len(CLASSES)  # one more output: a hand, an arm or a sleeve over the lot
OUTPUTS = len(CLASSES) + 1
INPUT_CHANNELS = 9  # seen Lab, empty Lab, lean x/y, reference flag
L_SCALE, AB_SCALE = 25.0, 25.0


def board_image(lots: np.ndarray) -> np.ndarray:
    """Lots (80, s, s, C) by lot id back into a board image, row 10 at the top (inverse of ``lot_grid``)."""
    n, s = lots.shape[:2]
    grid = lots.reshape(LOTS_TALL, LOTS_WIDE, s, s, -1)[::-1]
    return np.ascontiguousarray(grid.transpose(0, 2, 1, 3, 4)).reshape(LOTS_TALL * s, LOTS_WIDE * s, -1)


def _lean_axes(height: int, width: int, margin: int, tile_px: int,
               centre: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """How far (in tiles) a point one tile up appears displaced: x right per column (W,), y up per row (H,).

    Why two vectors: the lean's x part depends on the column alone and its y
    part on the row alone, which is what lets the stem's lean output be
    computed per column and per row (see _fixed_stem).
    """
    cx, cy, cz = centre
    u = (np.arange(width, dtype=np.float32) + 0.5 - margin) / tile_px
    v = TILES_TALL - (np.arange(height, dtype=np.float32) + 0.5 - margin) / tile_px
    scale = 1.0 / max(cz - 1.0, 0.5)
    return ((u - cx) * scale).astype(np.float32), ((v - cy) * scale).astype(np.float32)


@lru_cache(maxsize=8)
def _lean_planes(height: int, width: int, margin: int, tile_px: int, centre: tuple[float, float, float]) -> np.ndarray:
    """(H, W, 2): per pixel, how far (in tiles) a point one tile up appears displaced, x right and y up."""
    lean_x, lean_y = _lean_axes(height, width, margin, tile_px, centre)
    return np.stack([np.broadcast_to(lean_x[None, :], (height, width)),
                     np.broadcast_to(lean_y[:, None], (height, width))], axis=-1)


def net_input(lab_all: np.ndarray, geometry: Any, expected: np.ndarray, with_reference: bool) -> np.ndarray:
    """The network's input planes (H, W, INPUT_CHANNELS) for one warped Lab frame (margin included).

    ``expected`` is every lot's empty look (80, s, s, 3) as the frame is seen
    (not turned); the margin's empty look is the margin itself.
    """
    m = geometry.margin_px
    seen = np.asarray(lab_all, np.float32)
    h, w = seen.shape[:2]
    base = float(np.median(seen[m : h - m : 2, m : w - m : 2, 0]))
    shift = np.array([base, 0.0, 0.0], np.float32)
    scale = np.array([1.0 / L_SCALE, 1.0 / AB_SCALE, 1.0 / AB_SCALE], np.float32)
    planes = np.empty((h, w, INPUT_CHANNELS), np.float32)
    planes[..., 0:3] = (seen - shift) * scale
    planes[..., 3:6] = planes[..., 0:3]  # the margin's empty look is the margin itself
    planes[m : h - m, m : w - m, 3:6] = (board_image(expected.astype(np.float32, copy=False)) - shift) * scale
    centre = tuple(round(float(c), 4) for c in geometry.camera_centre)
    planes[..., 6:8] = _lean_planes(h, w, m, geometry.tile_px, centre)  # type: ignore[arg-type]
    planes[..., 8] = 1.0 if with_reference else 0.0
    return planes


# ----------------------------------------------------------------------------- the network

# (name, kernel, stride, padding): the layers as fitted; every one but the last is followed by ReLU
LAYERS = (
    ("stem", 4, 4, 0),  # 4 x 4 pixel patches: 4 x 4 cells per lot
    ("conv2", 3, 1, 1),
    ("conv3", 3, 2, 1),  # 2 x 2 per lot
    ("conv4", 3, 1, 1),
    ("conv5", 2, 2, 0),  # one cell per lot (the margin is one lot wide)
    ("conv6", 3, 1, 1),  # neighbouring lots' evidence together
    ("head1", 1, 1, 0),
    ("head2", 1, 1, 0),
)


def _conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int, padding: int,
          matrix: np.ndarray | None = None) -> np.ndarray:
    """2-D convolution of (H, W, C) with torch-layout (O, C, k, k) weights: (H', W', O).

    The k x k shifted, strided windows are laid side by side (im2col) and
    multiplied with the weights once: one BLAS call per layer.  ``matrix``
    is ``_matrix(weight)`` when the caller keeps it (see _layer_matrices).
    """
    out_c, in_c, k, _ = weight.shape
    if padding:  # OpenCV's border: several times faster than np.pad
        x = cv2.copyMakeBorder(x, padding, padding, padding, padding, cv2.BORDER_CONSTANT, value=0).reshape(
            x.shape[0] + 2 * padding, x.shape[1] + 2 * padding, in_c)
    h = (x.shape[0] - k) // stride + 1
    w = (x.shape[1] - k) // stride + 1
    if k == 1:
        cols = x.reshape(h * w, in_c)
    elif k == stride and padding == 0:  # non-overlapping patches: a reshape, no copies of views
        cols = x[: h * k, : w * k].reshape(h, k, w, k, in_c).transpose(0, 2, 1, 3, 4).reshape(h * w, k * k * in_c)
    else:
        # every output cell's k x k window as one strided view (rows dy, dx, channel), copied once by
        # the reshape: a third cheaper than concatenating the k * k shifted views
        x = np.ascontiguousarray(x)
        row, col, chan = x.strides
        windows = np.lib.stride_tricks.as_strided(x, (h, w, k, k, in_c), (row * stride, col * stride, row, col, chan),
                                                  writeable=False)
        cols = windows.reshape(h * w, k * k * in_c)
    product = cols @ (_matrix(weight) if matrix is None else matrix)
    product += bias
    return product.reshape(h, w, out_c)  # type: ignore[no-any-return]


def _matrix(weight: np.ndarray) -> np.ndarray:
    """Torch-layout weights as the (k*k*C, O) matrix that multiplies im2col rows (dy, dx, channel)."""
    out_c = weight.shape[0]
    return np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, out_c))


def _layer_matrices(model: dict[str, Any]) -> dict[str, np.ndarray]:
    """Every layer's ``_matrix``, made once per model (cached on it) rather than once per layer and view."""
    if "_matrices" not in model:
        model["_matrices"] = {name: _matrix(model[f"{name}.weight"]) for name, *_ in LAYERS}
    return model["_matrices"]  # type: ignore[no-any-return]


def logits(planes: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    """Per-lot output logits (80, OUTPUTS) by lot id, from (H, W, INPUT_CHANNELS) planes."""
    return _after_stem(_conv(planes, model["stem.weight"], model["stem.bias"], *LAYERS[0][2:]), model)


def _after_stem(x: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    np.maximum(x, 0.0, out=x)
    matrices = _layer_matrices(model)
    for i, (name, _k, stride, padding) in enumerate(LAYERS[1:], 1):
        x = _conv(x, model[f"{name}.weight"], model[f"{name}.bias"], stride, padding, matrices[name])
        if i < len(LAYERS) - 1:
            np.maximum(x, 0.0, out=x)
    cells = x[1:-1, 1:-1]  # drop the margin's ring of cells: (10, 8, classes), row 10 first
    return np.ascontiguousarray(cells[::-1]).reshape(LOTS_TALL * LOTS_WIDE, -1)


#: (left-right, top-bottom) mirrors of the board, the plain view first
MIRRORS = ((False, False), (True, False), (False, True), (True, True))


@dataclass(frozen=True)
class Views:
    """The network's probabilities (80, OUTPUTS) summed over the first ``count`` of MIRRORS, and what
    reading another view of the same board needs."""

    total: np.ndarray
    count: int
    read_view: Callable[[tuple[bool, bool]], np.ndarray] = field(repr=False, compare=False)

    @property
    def mean(self) -> np.ndarray:
        return self.total / np.float32(self.count)  # type: ignore[no-any-return]

    def unsure(self, below: float, most: int = len(MIRRORS)) -> bool:
        """Whether some lot's likeliest answer is less probable than ``below`` and a view is left to read."""
        return self.count < min(most, len(MIRRORS)) and float(self.mean.max(axis=1).min()) < below

    def with_views(self, views: int, unsure_below: float = 0.0, most: int = len(MIRRORS)) -> Views:
        """These views and the next ones up to ``views``, then one more at a time while unsure, up to ``most``
        (see read_views)."""
        read = self
        for mirror in MIRRORS[read.count : min(views, len(MIRRORS))]:
            read = read._and_view(mirror)
        while read.unsure(unsure_below, most):
            read = read._and_view(MIRRORS[read.count])
        return read

    def _and_view(self, mirror: tuple[bool, bool]) -> Views:
        return Views(self.total + self.read_view(mirror), self.count + 1, self.read_view)


def read_views(lab_all: np.ndarray, geometry: Any, expected: np.ndarray, with_reference: bool,
               model: dict[str, Any], views: int = 1, unsure_below: float = 0.0, most: int = len(MIRRORS)) -> Views:
    """The first ``views`` mirrored views of the board, read and summed (``.mean``: (80, OUTPUTS)).

    ``probabilities(net_input(...))`` without building the input planes.
    ``views`` 2 or 4 also reads the board mirrored left-right (and
    top-bottom, and both), as the network was fitted to, and averages: each
    view's mistakes are partly its own, so the average makes fewer.

    The stem is linear in its input, so its weights take the planes'
    scaling, the lightness offset becomes a bias, and the lean and
    reference-flag planes (fixed while the camera is) add a stem output
    cached per pose.  Interleaving nine planes costs more than the stem itself.

    ``unsure_below``: after ``views`` views, the next mirror is read and
    added while some lot's likeliest answer in the average is less probable
    than this, up to ``most`` (at most all four).  Almost every mistake is
    on such a board, and most boards have none, so the extra views cost
    little on average; each view's mistakes are partly its own, and a lot
    still unsure after two views was read right more often after four
    (docs/vision.md).  A caller that may still change ``expected`` can
    read one view first and add more (``Views.with_views``) once it keeps it.
    """
    m = geometry.margin_px
    seen = np.asarray(lab_all, np.float32)
    h, w = seen.shape[:2]
    base = float(np.median(seen[m : h - m : 2, m : w - m : 2, 0]))
    empty = seen.copy()
    empty[m : h - m, m : w - m] = board_image(expected.astype(np.float32, copy=False))
    stem = _stem_parts(model)
    centre = tuple(round(float(c), 4) for c in geometry.camera_centre)

    def one_view(mirror: tuple[bool, bool]) -> np.ndarray:
        return _one_view(seen, empty, model, stem, geometry.tile_px, m, centre, base, with_reference, mirror)

    none_yet = Views(np.zeros((LOTS_TALL * LOTS_WIDE, OUTPUTS), np.float32), 0, one_view)
    return none_yet.with_views(views, unsure_below, most)


def _one_view(seen: np.ndarray, empty: np.ndarray, model: dict[str, Any], stem: dict[str, Any], tile_px: int,
              margin: int, centre: tuple[float, ...], base: float, with_reference: bool,
              mirror: tuple[bool, bool]) -> np.ndarray:
    """The network's probabilities (80, OUTPUTS) from the board seen in one mirror, by lot id."""
    h, w = seen.shape[:2]
    fixed = _fixed_stem(model, stem, h, w, margin, tile_px, centre, with_reference, mirror)  # type: ignore[arg-type]
    x = _patches(_mirrored(seen, mirror)) @ stem["seen"] + _patches(_mirrored(empty, mirror)) @ stem["empty"]
    x = x.reshape(fixed.shape) + fixed - base * stem["per_light"]
    out = _softmax(_after_stem(x, model), model).reshape(LOTS_TALL, LOTS_WIDE, -1)
    return _mirrored(out[::-1], mirror)[::-1].reshape(LOTS_TALL * LOTS_WIDE, -1)


def _mirrored(x: np.ndarray, mirror: tuple[bool, bool]) -> np.ndarray:
    """An (H, W, ...) image mirrored left-right and/or top-bottom (contiguous: the stem reshapes it)."""
    left_right, top_bottom = mirror
    if left_right:
        x = x[:, ::-1]
    if top_bottom:
        x = x[::-1]
    return np.ascontiguousarray(x)


def _patches(x: np.ndarray) -> np.ndarray:
    """The stem's non-overlapping k x k patches of (H, W, C) as rows (dy, dx, channel)."""
    k = LAYERS[0][1]
    h, w, c = x.shape[0] // k, x.shape[1] // k, x.shape[2]
    return x[: h * k, : w * k].reshape(h, k, w, k, c).transpose(0, 2, 1, 3, 4).reshape(h * w, k * k * c)


def _stem_parts(model: dict[str, Any]) -> dict[str, np.ndarray]:
    """The stem's weights split by input plane, with the planes' scaling folded in (cached on the model)."""
    if "_stem" not in model:
        weight = model["stem.weight"]  # (O, INPUT_CHANNELS, k, k)
        scale = np.array([1.0 / L_SCALE, 1.0 / AB_SCALE, 1.0 / AB_SCALE], np.float32)[None, :, None, None]
        model["_stem"] = {
            "seen": _matrix(weight[:, 0:3] * scale),
            "empty": _matrix(weight[:, 3:6] * scale),
            "per_light": ((weight[:, 0] + weight[:, 3]).sum(axis=(1, 2)) / L_SCALE).astype(np.float32),
            "cache": {},
        }
    return model["_stem"]  # type: ignore[no-any-return]


def _fixed_stem(model: dict[str, Any], stem: dict[str, Any], h: int, w: int, m: int, tile_px: int,
                centre: tuple[float, float, float], with_reference: bool,
                mirror: tuple[bool, bool] = (False, False)) -> np.ndarray:
    """The stem's output from the lean and flag planes plus its bias: (h/k, w/k, O), per pose and mirror.

    Mirrored, the lean planes are mirrored too and point the other way
    across the mirror, as in fitting.
    """
    key = (h, w, m, tile_px, centre, with_reference, mirror)
    if key not in stem["cache"]:
        if len(stem["cache"]) > 16:
            stem["cache"].clear()
        # the stem's k x k patches of a plane that varies along one axis only are one
        # product of that axis in k-steps with the weights summed over the other axis
        lean_x, lean_y = _lean_axes(h, w, m, tile_px, centre)
        if mirror[0]:
            lean_x = -lean_x[::-1]
        if mirror[1]:
            lean_y = -lean_y[::-1]
        weight, k = model["stem.weight"], LAYERS[0][1]
        across = lean_x[: w // k * k].reshape(-1, k) @ weight[:, 6].sum(axis=1).T  # (w/k, O)
        down = lean_y[: h // k * k].reshape(-1, k) @ weight[:, 7].sum(axis=2).T  # (h/k, O)
        flag = weight[:, 8].sum(axis=(1, 2)) if with_reference else 0.0
        stem["cache"][key] = (down[:, None] + across[None] + (model["stem.bias"] + flag)).astype(np.float32)
    return stem["cache"][key]  # type: ignore[no-any-return]


def probabilities(planes: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    """Per-lot output probabilities (80, OUTPUTS), temperature-scaled as fitted."""
    return _softmax(logits(planes, model), model)


def _softmax(logits_: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    z = logits_ / float(model.get("temperature", 1.0))
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


@lru_cache(maxsize=2)
def load_model(path: Path = WEIGHTS) -> dict[str, Any] | None:
    """The fitted weights, or None when they are not there (the feature classifiers are used then)."""
    if not path.exists():
        return None
    with np.load(path) as data:
        model: dict[str, Any] = {k: data[k].astype(np.float32) for k in data.files}
    model["temperature"] = float(model.get("temperature", 1.0))
    return model


def confidence_map(model: dict[str, Any] | None) -> dict[str, Any] | None:
    """The fitted map from the answer's probability to its held-out accuracy (see reader.calibrated)."""
    if model is None or "confidence_x" not in model:
        return None
    return {"x": np.asarray(model["confidence_x"]).tolist(), "y": np.asarray(model["confidence_y"]).tolist(),
            "sure_from": float(model["sure_from"])}


@dataclass(frozen=True)
class BoardNet:
    """One fitted network and the map from its answers' probability to their held-out accuracy."""

    model: dict[str, Any] = field(repr=False, compare=False)
    confidence_map: dict[str, Any] | None
    towers: str = "opaque"


@lru_cache(maxsize=None)
def board_net(towers: str = "opaque") -> BoardNet | None:
    """The network fitted for a set whose towers look as ``towers`` (one of models.TOWER_LOOKS), or None
    when no weights are installed.  A look without weights of its own is read with the usual ones."""
    if towers not in TOWER_LOOKS:
        raise ValueError(f"towers: {towers!r} is not one of {', '.join(TOWER_LOOKS)}")
    model = load_model(WEIGHTS_FOR_TOWERS[towers])
    if model is None:
        model, towers = load_model(WEIGHTS), "opaque"
    return None if model is None else BoardNet(model, confidence_map(model), towers)


DOMES = slice(1, 5)
TOWERS = slice(5, 14)


def structures(output: np.ndarray) -> np.ndarray:
    """The structure classes alone (80, len(CLASSES)), renormalised: what stands there if it is not covered."""
    part = output[:, : len(CLASSES)]
    return part / np.maximum(part.sum(1, keepdims=True), 1e-12)  # type: ignore[no-any-return]


def marginals(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The structure answer (80, len(CLASSES)) summed out: kind (80, 3), dome colour (80, 4),
    tower colour (80, 4), cap (80, 3)."""
    towers = joint[:, TOWERS].reshape(-1, 3, 3)  # colour x cap
    kind = np.column_stack([joint[:, 0], joint[:, DOMES].sum(1), towers.sum((1, 2))])
    dome = joint[:, DOMES] / np.maximum(joint[:, DOMES].sum(1, keepdims=True), 1e-12)
    tower = np.zeros((len(joint), 4))
    tower[:, :3] = towers.sum(2)
    tower /= np.maximum(tower.sum(1, keepdims=True), 1e-12)
    cap = towers.sum(1)
    cap = cap / np.maximum(cap.sum(1, keepdims=True), 1e-12)
    return kind, dome, tower, cap


def with_colours(joint: np.ndarray, dome_colours: np.ndarray, tower_colours: np.ndarray) -> np.ndarray:
    """The joint answer with each piece's colour replaced by taught colour probabilities.

    Kind and cap stay the network's; the colour given the kind is the
    calibration's (domes over four colours, towers over red/blue/green).
    """
    kind, _, _, _ = marginals(joint)
    towers = joint[:, TOWERS].reshape(-1, 3, 3)
    cap_given_colour = towers / np.maximum(towers.sum(2, keepdims=True), 1e-12)
    tower_c = tower_colours[:, :3] / np.maximum(tower_colours[:, :3].sum(1, keepdims=True), 1e-12)
    dome_c = dome_colours / np.maximum(dome_colours.sum(1, keepdims=True), 1e-12)
    out = np.empty_like(joint)
    out[:, 0] = kind[:, 0]
    out[:, DOMES] = kind[:, 1:2] * dome_c
    out[:, TOWERS] = (kind[:, 2:3, None] * tower_c[:, :, None] * cap_given_colour).reshape(-1, 9)
    return out
