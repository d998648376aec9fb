"""Fit the board network of boardcam.vision.lot_net on generated scenes.

    python benchmarks/train_lot_net.py prepare FIRST COUNT [--jobs 2] [--size WxH] [--edition R]
        [--reflections] [--glass] [--clear] [--relit] [--soft-coins] [--low-lamps]   # render, cache
    python benchmarks/train_lot_net.py prepare-pairs FOLDER          # frames with empty twins, e.g. path-traced
    python benchmarks/train_lot_net.py fit [--epochs 30] [--hold-out-edition D] [--start-from NPZ --max-lr LR]
        [--favour CACHE_FOLDER:TIMES] [--vivid]
    python benchmarks/train_lot_net.py blend FIRST.npz SECOND.npz [--share 0.5] [-o OUT]

``prepare`` renders each training seed (from 500 000: disjoint from the
benchmarks' seeds 0.., the tests' and the app bench's games) with its empty
twin (the same table with no pieces, other sensor noise: what the app saw at
setup) and caches, per scene, what the reader has before it decides the
lots, in both of its modes: the warped Lab frame and every lot's empty look
from the frame's own templates, and the same against the setup reference
(a ``--soft-coins`` scene is fitted in the second mode only: see
``prepare_one``).
Half of the scenes are warped at a pose off by a few hundredths of a lot, as
a searched pose is.  The cache lives in ``$BOARDCAM_TRAIN_CACHE`` (default
``/tmp/boardcam-lotnet``).

``prepare-pairs`` caches frames that were not rendered here: every
``<name>_full`` image with its truth JSON and its ``<name>_empty`` twin
(``python -m scenegen.cycles --empty-twins`` writes such folders from
Blender's path tracer, whose light, plastic and gloss the ray caster only
approximates).

``fit`` trains the network with torch (a training-time tool only: the
runtime reads the weights with numpy), with the board mirrored left-right
and top-bottom as augmentation, holds every 7th scene out to fit a
temperature and the isotonic map from confidence to held-out accuracy, and
writes ``vision/boardcam/vision/lot_net.npz`` (``-o .../lot_net_clear.npz``
for the weights of clear-tower sets: refined from the usual ones on ``--clear``
scenes alone, docs/vision.md "A network for clear towers").  ``--hold-out-edition``
trains without one tile edition and reports on it: how the network does on
tile art it has never seen.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SEED0 = 500_000
OUT = HERE.parent / "vision" / "boardcam" / "vision" / "lot_net.npz"
CACHES = [Path(p) for p in os.environ.get("BOARDCAM_TRAIN_CACHE", "/tmp/boardcam-lotnet").split(":")]
CACHE = CACHES[0]  # where prepare writes
MAX_REFLECTIONS = 1.5  # of plastic's Fresnel reflectance: from none (the benchmarks' look) to more than physics
MAX_CLARITY = 0.7  # share of what lies behind that a translucent tower lets through (the benchmarks': 0.22)
MIN_GLASS = 0.3  # least share of the clear-plastic look in --clear scenes (the benchmarks': 0)
MIN_COIN_RIM = 0.2  # faintest coin rim in --soft-coins scenes (the benchmarks': 1; path-traced coins measure 0.3)
VIVID_SHARE = 0.3  # fit --vivid: share of boards shown more saturated than any ink the renderer draws...
MOST_VIVID = 1.8  # ...up to this much: a neon card's chroma (50 to 80) over the renderer's greens (17 to 44)


def _lot_id(name: str) -> int:
    return (int(name[1:]) - 1) * 8 + "ABCDEFGH".index(name[0])


def class_labels(position: dict[str, Any], covered: list[str] = ()) -> np.ndarray:  # type: ignore[assignment]
    """Output index (lot_net.CLASSES, or lot_net.COVERED for ``covered`` lots) of every lot, by lot id."""
    from boardcam.vision.lot_net import CLASSES, COVERED

    y = np.zeros(80, np.int64)
    for name, entry in (position.get("structures") or {}).items():
        cap = entry.get("cap") if entry["kind"] == "tower" else None
        y[_lot_id(name)] = CLASSES.index((entry["kind"], entry["color"], cap))
    for name in covered:
        y[_lot_id(name)] = COVERED
    return y


def covered_lots(truth: dict[str, Any]) -> list[str]:
    """The lots a hand covers, named in the reader's convention (as truth_in_reader_convention names the rest)."""
    from bench_vision import lots_in_reader_convention

    return lots_in_reader_convention(truth, truth.get("occluded_lots") or [])


def prepare_one(seed: int, size: tuple[int, int] | None = None, edition: str | None = None,
                reflections: bool = False, glass: bool = False, relit: bool = False, clear: bool = False,
                soft_coins: bool = False, low_lamps: bool = False) -> Path:
    """Render one training seed and cache the reader's inputs in both modes (lots under a hand: COVERED).

    ``edition`` "R" prints every scene in made-up tile art with inks and piece
    colours up to 2.5 times as far from the usual as the benchmarks' scenes.
    ``reflections``: the pieces mirror the board around them
    (``SceneParams.piece_reflections`` drawn per scene up to
    ``MAX_REFLECTIONS``), and every third scene is in made-up art.
    ``glass``: every tower translucent, and clearer than the benchmarks'
    (``SceneParams.tower_clarity`` drawn per scene up to ``MAX_CLARITY``).
    ``clear``: every tower translucent, looking partly or wholly like clear
    plastic (``SceneParams.tower_glass`` drawn per scene from ``MIN_GLASS``
    to 1): dark on a dark tile, as path-traced ones are.
    ``relit``: the empty board the reference is taken from shines under
    other lamps than the frame, as after a lamp is switched mid-game (the app
    keeps its setup reference all game), so that a shading change alone is
    not learnt to mean a piece.
    ``soft_coins``: every dome a flat coin whose rim shows fainter than the
    ray caster's (``SceneParams.coin_rim`` drawn per scene from
    ``MIN_COIN_RIM`` to 1) and whose top is anything from matt to glossy
    (``SceneParams.coin_gloss`` drawn from 0 to 1): under a path tracer's
    light a coin of the tile's own colour is only a faint ring around a top
    as light as the tile, or lighter and paler, which the network had learnt
    to see only when dark.  Such a coin looks like a pale disc printed on
    the tile, so these scenes teach the network only against the setup
    reference (``reference_only`` in the cache), where a print is in the
    reference and a coin departs from it; taught from templates too, the
    network took printed discs for coins (docs/vision.md).
    ``low_lamps``: the table lit mainly by one lamp 14 to 32 degrees above
    it (``scenegen.sampling.low_lamp``; the scene generator's own lamps
    stand 31 degrees or higher), so that shadows two lots and more long,
    cast by domes as well as towers, are seen; every third scene in
    made-up art.  The empty twin is lit alike (unless ``relit``).
    """
    import cv2

    from scenegen import SceneParams, render_scene
    from scenegen.sampling import low_lamp, made_up_art, random_inputs, relit as relight
    from scenegen.hard_cases import EMPTY_BOARD_NOISE_SEED

    path = CACHE / f"{seed}.npz"
    if path.exists():
        return path
    cv2.setNumThreads(1)
    size = size or ((1640, 1232) if seed % 4 else (1296, 972))
    overrides: dict[str, Any] = made_up_art(seed) if edition == "R" else {} if edition is None else {"edition": edition}
    if reflections:
        overrides = dict(made_up_art(seed) if seed % 3 == 0 else overrides,
                         piece_reflections=float(np.random.default_rng([seed, 6]).uniform(0, MAX_REFLECTIONS)))
    if glass:
        clarity = float(np.random.default_rng([seed, 7]).uniform(SceneParams.tower_clarity, MAX_CLARITY))
        overrides = dict(overrides, tower_look="translucent", tower_clarity=clarity)
    if clear:
        glassy = float(np.random.default_rng([seed, 9]).uniform(MIN_GLASS, 1.0))
        overrides = dict(overrides, tower_look="translucent", tower_glass=glassy)
    if soft_coins:
        rim = float(np.random.default_rng([seed, 10]).uniform(MIN_COIN_RIM, 1.0))
        gloss = float(np.random.default_rng([seed, 11]).uniform(0.0, 1.0))
        overrides = dict(overrides, dome_look="coin", coin_rim=rim, coin_gloss=gloss)
    if low_lamps and seed % 3 == 0:
        overrides = dict(made_up_art(seed), **{k: v for k, v in overrides.items() if k != "edition"})
    position, params = random_inputs(seed, size, overrides=overrides)  # the draws of scenegen.random_scene
    if low_lamps:
        params = low_lamp(params, np.random.default_rng([seed, 12]))
    scene = render_scene(position, params, seed)
    CACHE.mkdir(parents=True, exist_ok=True)
    import dataclasses

    reference_params = dataclasses.replace(params, hand=None)
    if relit:
        reference_params = relight(reference_params, np.random.default_rng([seed, 8]))
    empty = render_scene(dict(position, structures={}), reference_params, seed + EMPTY_BOARD_NOISE_SEED)
    cache_scene(path, scene.image, empty.image, scene.truth, seed, size, str(params.edition), soft_coins)
    return path


def cache_scene(path: Path, image: np.ndarray, empty_image: np.ndarray, scene_truth: dict[str, Any], seed: int,
                size: tuple[int, int], edition: str, reference_only: bool = False) -> None:
    """Cache what the reader has before it decides the lots of ``image``, in both of its modes: from the
    frame's own templates, and against ``empty_image`` (the same table without pieces) as the setup reference.

    An odd ``seed`` warps at a pose off by a few hundredths of a lot, as a searched pose is.
    """
    from bench_vision import truth_in_reader_convention

    from boardcam.vision import reader
    from boardcam.vision.colour import board_gains, gains_matching, to_lab
    from boardcam.vision.geometry import build_warp
    from boardcam.vision.models import BoardPose
    from boardcam.vision.tiles import lot_grid

    corners, truth = truth_in_reader_convention(scene_truth)
    points = np.array([corners[k] for k in ("A1", "H1", "H10", "A10")], np.float64)
    if seed % 2:
        lot_px = np.linalg.norm(points[1] - points[0]) / 8
        points = points + np.random.default_rng(seed).normal(0.0, 0.04 * lot_px, points.shape)
    pose = BoardPose.from_points(points)
    geometry = build_warp(pose, size, reader.TILE_PX, None, reader.MARGIN_PX)
    warped = geometry.warp(image)
    lab_frame = to_lab(warped, board_gains(geometry.board_view(warped)))
    _, from_frame = reader.analyse(lab_frame, geometry, None, None, {})
    reference = reader.empty_board_reference(empty_image, pose, tiles=truth["tiles"])
    labels = class_labels(truth, covered_lots(scene_truth))
    board_lots = lot_grid(geometry.board_view(warped), reader.LOT_PX)
    lab_ref = to_lab(warped, gains_matching(board_lots, reference.bgr_means_at(reader.LOT_PX), labels == 0))
    _, with_ref = reader.analyse(lab_ref, geometry, None, reference, {})
    np.savez(
        path,
        skip=np.array(False),
        lab_frame=lab_frame.astype(np.float16), expected_frame=from_frame.expected.astype(np.float16),
        lab_ref=lab_ref.astype(np.float16), expected_ref=with_ref.expected.astype(np.float16),
        centre=np.asarray(geometry.camera_centre, np.float64), labels=labels,
        edition=np.array(edition), size=np.array(size), reference_only=np.array(reference_only),
    )


def prepare_pairs(folder: Path) -> None:
    """Cache every ``<name>_full`` frame of ``folder`` that has a ``<name>_empty`` twin (the same table,
    camera and lamps without pieces: the setup reference), such as a path tracer's renders
    (``scenegen.cycles``) or photos of a real table whose records give the array's ``corners_px``.
    The records are read and checked as ``bench photos`` reads them (``bench_vision.photo_pairs``).

    Raises ValueError for a folder without such pairs or a record without corners: nothing to fit on.
    """
    import cv2

    from bench_vision import photo_pairs

    records = {image.stem: (image, truth) for image, truth in photo_pairs(folder, "prepare-pairs")}
    pairs = [(records[stem], records[stem.removesuffix("_full") + "_empty"][0]) for stem in sorted(records)
             if stem.endswith("_full") and stem.removesuffix("_full") + "_empty" in records]
    if not pairs:
        raise ValueError(f"{folder}: no <name>_full.json with a <name>_empty.json beside it")
    cv2.setNumThreads(1)
    CACHE.mkdir(parents=True, exist_ok=True)
    start = time.time()
    for done, ((image_path, truth), empty_path) in enumerate(pairs, 1):
        if "corners_px" not in truth:
            raise ValueError(f"{image_path.with_suffix('.json')}: no corners_px "
                             "(a frame is fitted at its array's known corners)")
        number = _pair_number(image_path, truth)
        path = CACHE / f"{number}.npz"
        if not path.exists():
            image, empty_image = (cv2.imread(str(p), cv2.IMREAD_COLOR) for p in (image_path, empty_path))
            if image is None or empty_image is None:
                raise OSError(f"{image_path if image is None else empty_path}: not an image OpenCV can read")
            edition = str(truth.get("params", {}).get("edition", "photo"))
            cache_scene(path, image, empty_image, truth, number, (image.shape[1], image.shape[0]), edition)
        if done % 20 == 0:
            print(f"prepared {done}/{len(pairs)} in {time.time() - start:.0f} s", file=sys.stderr, flush=True)


def _pair_number(record: Path, truth: dict[str, Any]) -> int:
    """A cached pair's file number: the generator's seed, or for a photo one drawn from its name
    (from 10^10, clear of every seed the renderers use)."""
    import zlib

    return int(truth["seed"]) if "seed" in truth else 10**10 + zlib.crc32(record.stem.encode())


def prepare(first: int, count: int, jobs: int, size: tuple[int, int] | None = None, edition: str | None = None,
            reflections: bool = False, glass: bool = False, relit: bool = False, clear: bool = False,
            soft_coins: bool = False, low_lamps: bool = False) -> None:
    from functools import partial
    from multiprocessing import Pool

    seeds = list(range(first, first + count))
    start = time.time()
    with Pool(jobs) as pool:
        one = partial(prepare_one, size=size, edition=edition, reflections=reflections, glass=glass,
                      relit=relit, clear=clear, soft_coins=soft_coins, low_lamps=low_lamps)
        for done, _ in enumerate(pool.imap_unordered(one, seeds), 1):
            if done % 20 == 0:
                print(f"prepared {done}/{count} in {time.time() - start:.0f} s", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- fitting


class _Geometry:
    """What lot_net.net_input needs of a WarpGeometry."""

    def __init__(self, centre: np.ndarray) -> None:
        from boardcam.vision.reader import MARGIN_PX, TILE_PX

        self.margin_px, self.tile_px, self.camera_centre = MARGIN_PX, TILE_PX, centre


def usable_scenes(paths: list[Path]) -> list[Path]:
    """The cached scenes a fit uses, in the order whose every 7th (from the 4th) is held out."""
    usable = []
    for path in paths:
        with np.load(path) as d:
            if not bool(d["skip"]):
                usable.append(path)
    return usable


def cached_paths() -> list[Path]:
    return sorted((p for cache in CACHES for p in cache.glob("*.npz")), key=lambda p: int(p.stem))


def load_cache(paths: list[Path]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Inputs (m, C, H, W) in torch layout, labels (m, 80), editions (m,) and each input's scene (m,).

    A scene gives an input in each of the reader's modes (templates, then the
    setup reference), or one against the reference alone when it was cached
    ``reference_only``.
    """
    from boardcam.vision.lot_net import net_input

    modes = (("lab_frame", "expected_frame", False), ("lab_ref", "expected_ref", True))
    inputs: list[tuple[int, Path, tuple[str, str, bool]]] = []
    for scene, path in enumerate(usable_scenes(paths)):
        with np.load(path) as d:
            reference_only = "reference_only" in d.files and bool(d["reference_only"])
        inputs += [(scene, path, mode) for mode in (modes[1:] if reference_only else modes)]
    x: np.ndarray | None = None  # filled in place: the inputs of every scene at once take many GB
    y = np.zeros((len(inputs), 80), np.int64)
    eds: list[str] = []
    for i, (_, path, (lab, expected, flag)) in enumerate(inputs):
        with np.load(path) as d:
            planes = net_input(d[lab].astype(np.float32), _Geometry(d["centre"]), d[expected].astype(np.float32), flag)
            if x is None:
                x = np.empty((len(inputs), planes.shape[2], planes.shape[0], planes.shape[1]), np.float16)
            x[i] = planes.transpose(2, 0, 1)
            y[i] = d["labels"]
            eds.append(str(d["edition"]))
    assert x is not None, "no cached scenes"
    return x, y, np.array(eds), np.array([scene for scene, _, _ in inputs])


def times_shown(scene_paths: list[Path], scene: np.ndarray, favour: dict[Path, int]) -> np.ndarray:
    """How many times an epoch each input (of ``scene``, an index into ``scene_paths``) is shown: as
    often as ``favour`` says for its cache folder, else once."""
    folders = [path.parent.resolve() for path in scene_paths]
    return np.array([favour.get(folders[s], 1) for s in scene], np.int64)


def build_torch_model(classes: int) -> Any:
    import torch.nn as nn

    from boardcam.vision.lot_net import INPUT_CHANNELS, LAYERS

    widths = {"stem": 32, "conv2": 32, "conv3": 48, "conv4": 48, "conv5": 64, "conv6": 64,
              "head1": 64, "head2": classes}
    layers: list[Any] = []
    channels = INPUT_CHANNELS
    for i, (name, k, stride, padding) in enumerate(LAYERS):
        conv = nn.Conv2d(channels, widths[name], k, stride, padding)
        conv.name = name  # type: ignore[attr-defined]
        layers.append(conv)
        if i < len(LAYERS) - 1:
            layers.append(nn.ReLU())
        if name in ("conv6", "head1"):
            layers.append(nn.Dropout(0.15))  # training only: the runtime has no dropout
        channels = widths[name]
    return nn.Sequential(*layers)


def _lot_logits(model: Any, x: Any) -> Any:
    """(batch, 80, classes) in lot-id order, as lot_net.logits orders them."""
    out = model(x)[:, :, 1:-1, 1:-1]  # (b, classes, 10, 8), row 10 first
    return out.flip(2).permute(0, 2, 3, 1).reshape(x.shape[0], 80, -1)


def _augment(x: Any, y: Any, generator: Any, vivid: bool = False) -> tuple[Any, Any]:
    """Mirror boards left-right and/or top-bottom (lean planes and lot labels follow), and vary
    what the renderer varies too little: lamp and print colour, the relighting of the empty
    look, sensor noise, and how far pyramids lean (the camera's field of view is a guess).

    ``vivid``: some boards (VIVID_SHARE) far more saturated than the renderer's inks, up to
    MOST_VIVID, as neon cards are (made-up-art table 7600, docs/vision.md)."""
    import torch

    b = x.shape[0]

    def uniform(lo: float, hi: float, *shape: int) -> Any:
        return lo + (hi - lo) * torch.rand(b, *shape, generator=generator)

    lr = torch.rand(b, generator=generator) < 0.5
    tb = torch.rand(b, generator=generator) < 0.5
    x, y = x.clone(), y.clone().view(b, 10, 8)
    x[lr] = x[lr].flip(3)
    x[lr, 6] = -x[lr, 6]
    y[lr] = y[lr].flip(2)
    x[tb] = x[tb].flip(2)
    x[tb, 7] = -x[tb, 7]
    y[tb] = y[tb].flip(1)
    # contrast and saturation of the whole scene (seen and empty alike)
    light = uniform(0.85, 1.15)[:, None, None]
    chroma = uniform(0.8, 1.2)[:, None, None]
    if vivid:
        boosted = torch.rand(b, generator=generator) < VIVID_SHARE
        chroma[boosted] = uniform(1.2, MOST_VIVID)[boosted][:, None, None]
    angle = uniform(-0.12, 0.12)[:, None, None]  # radians of hue turn
    cos, sin = torch.cos(angle), torch.sin(angle)
    for l_plane, a_plane, b_plane in ((0, 1, 2), (3, 4, 5)):
        a, bb = x[:, a_plane].clone(), x[:, b_plane].clone()
        x[:, l_plane] = x[:, l_plane] * light
        x[:, a_plane] = (cos * a - sin * bb) * chroma
        x[:, b_plane] = (sin * a + cos * bb) * chroma
    # the empty look relit a little wrong, sensor noise, the lean
    x[:, 3] = x[:, 3] * uniform(0.95, 1.05)[:, None, None] + uniform(-0.04, 0.04)[:, None, None]
    x[:, 0:3] = x[:, 0:3] + torch.randn(x[:, 0:3].shape, generator=generator) * uniform(0.0, 0.05)[:, None, None, None]
    x[:, 6:8] = x[:, 6:8] * uniform(0.8, 1.25)[:, None, None, None]
    return x, y.view(b, 80)


def fit(epochs: int, hold_out_edition: str | None, batch: int = 16, seed: int = 0, scenes: int | None = None,
        out: Path = OUT, start_from: Path | None = None, max_lr: float = 3e-3,
        favour: dict[Path, int] | None = None, vivid: bool = False) -> None:
    """Fit (or, from ``start_from``'s weights, refine) the network; write it with its confidence map.

    ``favour`` shows the training scenes of a cache folder that many times an epoch: a few hundred
    path-traced frames among thousands of the ray caster's would otherwise barely count.
    ``vivid``: see _augment.
    """
    import torch
    import torch.nn.functional as F

    from boardcam.vision.lot_net import OUTPUTS

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    paths = cached_paths()[:scenes]
    x, y, editions, scene = load_cache(paths)  # a scene's inputs in both modes stay together in a split
    n = int(scene.max()) + 1
    held = scene % 7 == 3  # every 7th scene, so every frame size and seed range is held out alike
    if hold_out_edition:
        train = ~held & (editions != hold_out_edition)
        unseen = editions == hold_out_edition
    else:
        train, unseen = ~held, np.zeros(len(x), bool)
    print(f"{n} scenes: {train.sum()} training inputs, {held.sum()} held out", file=sys.stderr)
    model = build_torch_model(OUTPUTS)
    if start_from is not None:
        with np.load(start_from) as fitted:
            _load_weights(model, dict(fitted))
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)  # indexed by train_ids: no copy of the inputs
    shown = times_shown(usable_scenes(paths), scene, favour or {})
    train_ids = torch.from_numpy(np.repeat(np.flatnonzero(train), shown[train]))
    counts = np.bincount(y[train].ravel(), minlength=OUTPUTS).astype(np.float64)
    weight = torch.tensor(np.clip((counts.sum() / np.maximum(counts, 1)) ** 0.3, 1, 20), dtype=torch.float32)
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=5e-4)
    steps = epochs * ((len(train_ids) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=max_lr, total_steps=steps)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        order = train_ids[torch.randperm(len(train_ids), generator=generator)]
        total, start = 0.0, time.time()
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            xb, yb = _augment(xt[idx].float(), yt[idx], generator, vivid)
            loss = F.cross_entropy(_lot_logits(model, xb).reshape(-1, OUTPUTS), yb.reshape(-1), weight=weight)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(idx)
        line = f"epoch {epoch + 1}/{epochs}: loss {total / len(order):.4f} ({time.time() - start:.0f} s)"
        if (epoch + 1) % 5 == 0 or epoch == epochs - 1:
            line += "; held out " + _accuracy(model, x[held], y[held])
        print(line, file=sys.stderr, flush=True)
    temperature = _fit_temperature(model, x[held], y[held])
    weights = {f"{m.name}.{k}": v.detach().numpy() for m in model if hasattr(m, "name")
               for k, v in m.state_dict().items()}
    report = {"held_out": _evaluate(weights, temperature, x[held], y[held])}
    if unseen.any():
        report["unseen_edition"] = _evaluate(weights, temperature, x[unseen], y[unseen])
        print(json.dumps(report, indent=1), file=sys.stderr)
        return  # a generalisation check: the shipped weights are fitted on every edition
    _write_network(out, weights, temperature, x[held], y[held], n, report)


def _load_weights(model: Any, weights: dict[str, np.ndarray]) -> None:
    import torch

    for layer in model:
        if hasattr(layer, "name"):
            layer.load_state_dict({k: torch.from_numpy(np.asarray(weights[f"{layer.name}.{k}"], np.float32))
                                   for k in layer.state_dict()})


def _write_network(out: Path, weights: dict[str, np.ndarray], temperature: float, x_held: np.ndarray,
                   y_held: np.ndarray, scenes: int, report: dict[str, Any]) -> None:
    """The weights with the confidence map fitted on the held-out scenes, as the runtime loads them."""
    conf_map = _confidence_map(weights, temperature, x_held, y_held)
    np.savez(out, **weights, temperature=np.float32(temperature),
             confidence_x=np.array(conf_map["x"]), confidence_y=np.array(conf_map["y"]),
             sure_from=np.float64(conf_map["sure_from"]), scenes=np.int64(scenes))
    print(json.dumps(report, indent=1), file=sys.stderr)
    print(f"wrote {out}", file=sys.stderr)


def blended_weights(first: dict[str, np.ndarray], second: dict[str, np.ndarray], share: float) -> dict[str, np.ndarray]:
    """``share`` of the way from one network's layers to the other's.

    Only meaningful when one was refined from the other (``fit --start-from``):
    then both lie in one basin of the loss, and a point between them tends to
    keep what the refinement learnt (new looks) with less of what it forgot.
    """
    layers = [k for k in first if "." in k]  # "conv2.weight", ...: not the temperature or the confidence map
    if sorted(layers) != sorted(k for k in second if "." in k):
        raise ValueError("the two networks have different layers")
    return {k: ((1.0 - share) * first[k].astype(np.float64) + share * second[k].astype(np.float64)).astype(np.float32)
            for k in layers}


def blend(first: Path, second: Path, share: float, out: Path) -> None:
    """Write the blend of two networks, its temperature and confidence map fitted on the held-out cached scenes."""
    from boardcam.vision.lot_net import OUTPUTS

    with np.load(first) as a, np.load(second) as b:
        weights = blended_weights(dict(a), dict(b), share)
    held = usable_scenes(cached_paths())[3::7]  # the scenes fit holds out
    x, y, _, _ = load_cache(held)
    model = build_torch_model(OUTPUTS)
    _load_weights(model, weights)
    temperature = _fit_temperature(model, x, y)
    report = {"share": share, "held_out": _evaluate(weights, temperature, x, y)}
    _write_network(out, weights, temperature, x, y, len(held), report)


def _accuracy(model: Any, x: np.ndarray, y: np.ndarray) -> str:
    import torch

    model.eval()
    with torch.no_grad():
        pred = torch.cat([_lot_logits(model, torch.from_numpy(x[i : i + 64]).float()) for i in range(0, len(x), 64)]).argmax(2)
    right = (pred.numpy() == y)
    flag = x[:, 8, 0, 0] > 0.5
    return (f"lots {right.mean():.5f} (templates {right[~flag].mean():.5f}, reference {right[flag].mean():.5f}),"
            f" boards {right.all(1).mean():.3f}")


def _fit_temperature(model: Any, x: np.ndarray, y: np.ndarray) -> float:
    import torch
    import torch.nn.functional as F

    model.eval()
    with torch.no_grad():
        z = torch.cat([_lot_logits(model, torch.from_numpy(x[i : i + 64]).float()) for i in range(0, len(x), 64)])
    z, t = z.reshape(-1, z.shape[-1]), torch.from_numpy(y.reshape(-1))
    best, best_nll = 1.0, float("inf")
    for temperature in np.exp(np.linspace(np.log(0.5), np.log(4.0), 61)):
        nll = float(F.cross_entropy(z / float(temperature), t))
        if nll < best_nll:
            best, best_nll = float(temperature), nll
    return best


def _numpy_probs(weights: dict[str, np.ndarray], temperature: float, x: np.ndarray) -> np.ndarray:
    """The runtime's own inference (boardcam.vision.lot_net), so what is reported is what ships."""
    from boardcam.vision.lot_net import probabilities

    model = dict(weights, temperature=temperature)
    return np.stack([probabilities(planes.transpose(1, 2, 0).astype(np.float32), model)  # type: ignore[arg-type]
                     for planes in x])


def _evaluate(weights: dict[str, np.ndarray], temperature: float, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    p = _numpy_probs(weights, temperature, x)
    pred, conf = p.argmax(2), p.max(2)
    right = pred == y
    flag = x[:, 8, 0, 0] > 0.5
    return {
        "lot_accuracy": round(float(right.mean()), 5),
        "lot_accuracy_templates": round(float(right[~flag].mean()), 5),
        "lot_accuracy_reference": round(float(right[flag].mean()), 5),
        "board_exact": round(float(right.all(1).mean()), 4),
        "wrong_with_p_0.9": round(float((~right & (conf >= 0.9)).mean()), 6),
    }


def _confidence_map(weights: dict[str, np.ndarray], temperature: float, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    from train_lot_model import isotonic, sure_from

    p = _numpy_probs(weights, temperature, x)
    raw, right = p.max(2).ravel(), (p.argmax(2) == y).ravel()
    xs, ys = isotonic(raw, right.astype(float))
    return {"x": xs.tolist(), "y": ys.tolist(), "sure_from": sure_from(raw, right)}


def _favoured(text: str) -> tuple[Path, int]:
    """``FOLDER:TIMES`` of ``fit --favour``."""
    folder, _, times = text.rpartition(":")
    if not folder or not times.isdigit() or int(times) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not FOLDER:TIMES with TIMES a whole number from 1")
    return Path(folder).resolve(), int(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("first", type=int, nargs="?", default=SEED0)
    p.add_argument("count", type=int, nargs="?", default=1200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--size", default=None, help="frame size WxH (default: 1640x1232, every 4th 1296x972)")
    p.add_argument("--edition", default=None, help="every scene in this edition (R: made-up art, wider inks)")
    p.add_argument("--reflections", action="store_true",
                   help="pieces mirror the board around them (strength drawn per scene), every third scene made-up art")
    p.add_argument("--glass", action="store_true", help="every tower translucent, clearer than the benchmarks'")
    p.add_argument("--clear", action="store_true",
                   help="every tower translucent and partly or wholly clear plastic (dark on a dark tile)")
    p.add_argument("--relit", action="store_true",
                   help="the empty-board reference under other lamps than the frame (a lamp changed mid-game)")
    p.add_argument("--soft-coins", action="store_true",
                   help="every dome a flat coin, rim fainter and top glossier than the ray caster's (as path-traced)")
    p.add_argument("--low-lamps", action="store_true",
                   help="lit mainly by one lamp 14-32 degrees above the table (long shadows), every third scene "
                        "made-up art")
    q = sub.add_parser("prepare-pairs", help="cache the <name>_full frames of a folder with their <name>_empty twins")
    q.add_argument("folder", type=Path)
    f = sub.add_parser("fit")
    f.add_argument("--epochs", type=int, default=30)
    f.add_argument("--hold-out-edition", default=None)
    f.add_argument("--scenes", type=int, default=None, help="use only the first N cached scenes")
    f.add_argument("-o", "--out", type=Path, default=OUT)
    f.add_argument("--start-from", type=Path, default=None, help="refine these weights instead of starting afresh")
    f.add_argument("--max-lr", type=float, default=3e-3, help="peak learning rate (lower to refine)")
    f.add_argument("--favour", action="append", default=[], type=_favoured, metavar="FOLDER:TIMES",
                   help="show the scenes of this cache folder TIMES times an epoch (repeatable)")
    f.add_argument("--vivid", action="store_true",
                   help="show some boards far more saturated than the renderer's inks (neon cards)")
    m = sub.add_parser("blend", help="a network between one and its refinement (temperature and map refitted)")
    m.add_argument("first", type=Path)
    m.add_argument("second", type=Path)
    m.add_argument("--share", type=float, default=0.5, help="how far towards the second (0 to 1)")
    m.add_argument("-o", "--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.what == "prepare":
        size = tuple(int(v) for v in args.size.split("x")) if args.size else None
        prepare(args.first, args.count, args.jobs, size, args.edition, args.reflections,  # type: ignore[arg-type]
                args.glass, args.relit, args.clear, args.soft_coins, args.low_lamps)
    elif args.what == "prepare-pairs":
        try:
            prepare_pairs(args.folder)
        except (ValueError, OSError) as error:
            print(f"train_lot_net: error: {error}", file=sys.stderr)
            sys.exit(2)
    elif args.what == "blend":
        blend(args.first, args.second, args.share, args.out)
    else:
        fit(args.epochs, args.hold_out_edition, scenes=args.scenes, out=args.out, start_from=args.start_from,
            max_lr=args.max_lr, favour=dict(args.favour), vivid=args.vivid)


if __name__ == "__main__":
    main()
