"""Fit the lot classifiers of boardcam.vision.lots on generated scenes.

Small networks (physical features -> one ReLU layer -> classes):

* FIRST_LOOK: plain / icon / dome / tower, before the icons are known
  (its icon probability picks each tile's icon lot, its piece probability
  keeps pieces out of the templates);
* FINAL: empty / dome / tower, with every lot compared with its own empty
  look (plain or icon template);
* FINAL_WITH_REFERENCE: the same against the empty board seen at setup
  (each scene has an empty twin: same table, other sensor noise);
* CAPS and TOWER_COLOURS: on the towers, from the look along the apex ray.

Training seeds start at 500 000, far from the benchmark's (0..) and the
tests', so the benchmark measures scenes the fit never saw.  35 % of the
scenes is held out to fit one temperature per network (Guo et al. 2017)
and then an isotonic map (pool-adjacent-violators) from the whole lot
answer's raw confidence (kind x colour x cap) to its held-out accuracy, so
that a reported 0.9 means "right at least as often as that" on unseen scenes.

    python benchmarks/train_lot_model.py [scenes] [--made-up-every 3]   # writes vision/boardcam/vision/lot_model.py

Set ``BOARDCAM_TRAIN_CACHE=DIR`` to keep the rendered frames (full frames,
about 12 MB per scene) and fit again without rendering.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

SEED0 = 500_000
OUT = Path(__file__).resolve().parents[1] / "vision" / "boardcam" / "vision" / "lot_model.py"


def _lot_id(name: str) -> int:
    return (int(name[1:]) - 1) * 8 + "ABCDEFGH".index(name[0])


def render_set(count: int, size: tuple[int, int], cache: Path | None = None,
               made_up_every: int = 0) -> list[tuple[np.ndarray, Any, dict[str, Any], Any, np.ndarray]]:
    """Per unoccluded scene: warped Lab (margin included), geometry, truth position,
    the empty-board reference of the same table, and the warped Lab balanced as
    the app balances it when it has that reference (the reference's gains).

    The empty twin is the same scene (camera, lights, tile layout) rendered
    with no structures and other sensor noise: what the app saw at setup.
    With ``cache`` (a directory) the renders are kept there as small warped
    images, so fitting again does not render again.  Every
    ``made_up_every``-th seed is printed in made-up tile art (scene generator
    edition R, inks and piece colours up to 2.5 times as jittered).
    """
    import json

    from bench_vision import truth_in_reader_convention

    from boardcam.vision.colour import board_gains, gains_matching, to_lab
    from boardcam.vision.geometry import build_warp
    from boardcam.vision.models import BoardPose
    from boardcam.vision.reader import LOT_PX, MARGIN_PX, TILE_PX, empty_board_reference
    from boardcam.vision.tiles import lot_grid

    out = []
    seed = SEED0
    while len(out) < count:
        made_up = made_up_every > 0 and (seed - SEED0) % made_up_every == 0
        rendered = _cached_render(seed, size, cache, made_up)
        seed += 1
        if rendered is None:
            continue
        image, empty, truth_doc = rendered
        corners, truth = truth_in_reader_convention(json.loads(truth_doc))
        pose = BoardPose({k: tuple(v) for k, v in corners.items()})
        geometry = build_warp(pose, size, TILE_PX, None, MARGIN_PX)
        warped = geometry.warp(image)
        lab_all = to_lab(warped, board_gains(geometry.board_view(warped)))
        reference = empty_board_reference(empty, pose, tiles=truth["tiles"])
        empty_lots = np.ones(80, bool)  # as the app balances: on the lots its previous reading saw empty
        for name in truth.get("structures") or {}:
            empty_lots[_lot_id(name)] = False
        board_lots = lot_grid(geometry.board_view(warped), LOT_PX)
        lab_ref = to_lab(warped, gains_matching(board_lots, reference.bgr_means_at(LOT_PX), empty_lots))
        out.append((lab_all, geometry, truth, reference, lab_ref))
        print(f"rendered {len(out)}/{count}", file=sys.stderr, end="\r")
    return out


def _cached_render(seed: int, size: tuple[int, int], cache: Path | None,
                   made_up: bool = False) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(frame, empty twin, truth JSON) of one training seed, or None for a frame with a hand."""
    import dataclasses
    import json

    from scenegen import render_scene
    from scenegen.hard_cases import EMPTY_BOARD_NOISE_SEED
    from scenegen.sampling import made_up_art, random_inputs

    name = f"{seed}-{size[0]}x{size[1]}{'-R' if made_up else ''}.npz"
    path = cache / name if cache is not None else None
    if path is not None and path.exists():
        data = np.load(path)
        if data["image"].size == 0:
            return None
        return data["image"], data["empty"], str(data["truth"])
    position, params = random_inputs(seed, size, None, made_up_art(seed) if made_up else {})  # as random_scene
    scene = render_scene(position, params, seed)
    result = None
    if not scene.truth.get("occluded"):
        empty = render_scene(dict(position, structures={}), dataclasses.replace(params, hand=None), seed + EMPTY_BOARD_NOISE_SEED)
        result = (scene.image, empty.image, json.dumps(scene.truth))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        nothing = np.zeros((0,), np.uint8)
        np.savez(path, image=result[0] if result else nothing, empty=result[1] if result else nothing,
                 truth=np.array(result[2] if result else ""))
    return result


def labels(position: dict[str, Any], with_icons: bool) -> np.ndarray:
    y = np.zeros(80, np.int64)
    if with_icons:
        for tile in position["tiles"].values():
            y[_lot_id(tile["icon"])] = 1
    for name, s in (position.get("structures") or {}).items():
        kind = 1 if s["kind"] == "dome" else 2
        y[_lot_id(name)] = kind + (1 if with_icons else 0)
    return y


def fit_mlp(x: np.ndarray, y: np.ndarray, classes: int, hidden: int = 48, epochs: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Softmax network fitted with Adam and weight decay on standardised features."""
    rng = np.random.default_rng(seed)
    mean, std = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / std
    w1 = rng.normal(0, 1 / np.sqrt(z.shape[1]), (z.shape[1], hidden))
    b1 = np.zeros(hidden)
    w2 = rng.normal(0, 1 / np.sqrt(hidden), (hidden, classes))
    b2 = np.zeros(classes)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    onehot = np.eye(classes)[y]
    lr, decay = 0.01, 1e-4
    for step in range(1, epochs + 1):
        h_pre = z @ w1 + b1
        h = np.maximum(h_pre, 0)
        logits = h @ w2 + b2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) / len(z)
        gw2 = h.T @ g + decay * w2
        gb2 = g.sum(0)
        gh = (g @ w2.T) * (h_pre > 0)
        gw1 = z.T @ gh + decay * w1
        gb1 = gh.sum(0)
        for i, grad in enumerate((gw1, gb1, gw2, gb2)):
            m[i] = 0.9 * m[i] + 0.1 * grad
            v[i] = 0.999 * v[i] + 0.001 * grad**2
            params[i] -= lr * (m[i] / (1 - 0.9**step)) / (np.sqrt(v[i] / (1 - 0.999**step)) + 1e-8)
    return {"mean": mean, "std": std, "w1": params[0], "b1": params[1], "w2": params[2], "b2": params[3], "temperature": 1.0}


def fit_temperature(model: dict[str, Any], x: np.ndarray, y: np.ndarray) -> float:
    from boardcam.vision.lots import kind_probabilities

    best, best_nll = 1.0, np.inf
    for t in np.exp(np.linspace(np.log(0.5), np.log(4.0), 41)):
        p = kind_probabilities(x, dict(model, temperature=float(t)))
        nll = -np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1)))
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def _report(name: str, model: dict[str, Any], x: np.ndarray, y: np.ndarray) -> None:
    from boardcam.vision.lots import kind_probabilities

    p = kind_probabilities(x, model)
    pred = p.argmax(1)
    conf = p.max(1)
    wrong = pred != y
    print(f"{name}: held-out accuracy {1 - wrong.mean():.4f}, wrong with p>=0.9: {(wrong & (conf >= 0.9)).mean():.5f},"
          f" T={model['temperature']:.2f}", file=sys.stderr)


def isotonic(raw: np.ndarray, right: np.ndarray, bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Monotone map raw confidence -> accuracy: pool adjacent violators over equal-count bins.

    The top is made conservative: the last bin's accuracy is a lower
    estimate (one extra wrong answer assumed), since the goal is about rare
    confident mistakes.
    """
    order = np.argsort(raw)
    raw, right = raw[order], right[order]
    edges = np.linspace(0, len(raw), bins + 1).astype(int)
    xs = np.array([raw[a:b].mean() for a, b in zip(edges[:-1], edges[1:]) if b > a])
    ys = [right[a:b].sum() for a, b in zip(edges[:-1], edges[1:]) if b > a]
    ns = [b - a for a, b in zip(edges[:-1], edges[1:]) if b > a]
    ys[-1] = max(ys[-1] - 1, 0)
    blocks = [[y, n, 1] for y, n in zip(ys, ns)]  # successes, count, bins merged
    merged: list[list[float]] = []
    for block in blocks:
        merged.append(block)
        while len(merged) > 1 and merged[-2][0] / merged[-2][1] > merged[-1][0] / merged[-1][1]:
            y, n, k = merged.pop()
            merged[-1][0] += y
            merged[-1][1] += n
            merged[-1][2] += k
    out_y = np.concatenate([[b[0] / b[1]] * int(b[2]) for b in merged])
    return np.concatenate([[0.0], xs, [1.0]]), np.concatenate([[0.0], out_y, [out_y[-1]]])


def sure_from(raw: np.ndarray, right: np.ndarray, allowed: float = 0.0005) -> float:
    """Lowest raw confidence above which held-out answers are wrong at most ``allowed`` of the time.

    Counted conservatively (one more wrong answer than seen), so with a few
    thousand held-out lots the bar is only met where mistakes really are rare;
    the reader maps exactly this range to >= 0.9.
    """
    order = np.argsort(-raw)
    wrong = np.cumsum(~right[order])
    n = np.arange(1, len(raw) + 1)
    ok = (wrong + 1) / n <= allowed
    if not ok.any():
        return 2.0  # never sure
    k = int(np.flatnonzero(ok).max())
    return float(raw[order][k])


def _literal(model: dict[str, Any]) -> str:
    parts = []
    for key in ("mean", "std", "w1", "b1", "w2", "b2"):
        arr = np.round(np.asarray(model[key], np.float64), 5).tolist()
        parts.append(f"    {key!r}: {arr!r},")
    parts.append(f"    'temperature': {model['temperature']:.4f},")
    return "{\n" + "\n".join(parts) + "\n}"


def main(count: int = 120, size: tuple[int, int] = (1640, 1232), made_up_every: int = 0) -> None:
    import os

    from boardcam.vision import reader

    cache = os.environ.get("BOARDCAM_TRAIN_CACHE")
    scenes = render_set(count, size, Path(cache) if cache else None, made_up_every)
    split = int(len(scenes) * 0.65)
    none = {"caps": None, "tower_colours": None}

    def analysis(scene: Any, with_reference: bool, models: tuple[Any, Any], second: dict[str, Any]) -> Any:
        lab_all, geometry, _, reference, lab_ref = scene
        if with_reference:
            return reader.analyse(lab_ref, geometry, None, reference, {}, models=models, second=second)[1]
        return reader.analyse(lab_all, geometry, None, None, {}, models=models, second=second)[1]

    def features(models: tuple[Any, Any], first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        xs, ys = [], []
        for scene in scenes:
            found = analysis(scene, False, models, none)
            x = found.first_features if first else found.features
            xs.append(x)
            ys.append(np.tile(labels(scene[2], with_icons=first), len(x) // 80))
        return (np.concatenate(xs[:split]), np.concatenate(ys[:split]),
                np.concatenate(xs[split:]), np.concatenate(ys[split:]))

    x, y, xh, yh = features((None, None), first=True)
    first = fit_and_scale("first look", x, y, xh, yh, 4)
    x, y, xh, yh = features((first, None), first=False)
    final = fit_and_scale("final", x, y, xh, yh, 3)
    xr, yr = _stack(scenes, split, lambda sc: (analysis(sc, True, (first, final), none).features, labels(sc[2], False)))
    final_ref = fit_and_scale("final with reference", xr[0], yr[0], xr[1], yr[1], 3)

    # second stage: caps and tower colours on the towers, the kind again with the neighbours' kinds
    def towers(sc: Any, with_reference: bool, what: str) -> tuple[np.ndarray, np.ndarray]:
        found = analysis(sc, with_reference, (first, final_ref if with_reference else final), none)
        lots, wanted = [], []
        for name, entry in (sc[2].get("structures") or {}).items():
            if entry["kind"] == "tower":
                lots.append(_lot_id(name))
                wanted.append((None, "white", "black").index(entry.get("cap")) if what == "caps"
                              else ("red", "blue", "green").index(entry["color"]))
        feats = found.cap_features if what == "caps" else found.tower_colour_features
        return feats[np.array(lots, np.int64)], np.array(wanted, np.int64)

    second: dict[str, Any] = {}
    for what, classes in (("caps", 3), ("tower_colours", 3)):
        xs, ys = _stack(scenes, split, lambda sc: _pair(towers(sc, False, what), towers(sc, True, what)))
        second[what] = fit_and_scale(what, xs[0], ys[0], xs[1], ys[1], classes, hidden=24)
    plain_second = {"caps": second["caps"], "tower_colours": second["tower_colours"]}
    ref_second = plain_second
    conf_map = confidence_map(scenes[split:], lambda sc: analysis(sc, False, (first, final), plain_second))
    ref_map = confidence_map(scenes[split:], lambda sc: analysis(sc, True, (first, final_ref), ref_second))
    OUT.write_text(
        '"""Fitted weights of the lot classifiers (generated by benchmarks/train_lot_model.py; do not edit)."""\n\n'
        f"# {len(scenes)} scenes from seed {SEED0}, {size[0]}x{size[1]}"
        + (f", every {made_up_every}th in made-up tile art" if made_up_every else "")
        + "; features: boardcam.vision.lots\n"
        f"FIRST_LOOK = {_literal(first)}\n\nFINAL = {_literal(final)}\n\n"
        "# FINAL for reading against the empty board seen at setup (EmptyBoardReference)\n"
        f"FINAL_WITH_REFERENCE = {_literal(final_ref)}\n\n"
        "# second stage on towers: no cap / white / black; red / blue / green\n"
        f"CAPS = {_literal(second['caps'])}\n\nTOWER_COLOURS = {_literal(second['tower_colours'])}\n\n"
        f"# raw lot confidence -> held-out accuracy (isotonic), applied by the reader\nCONFIDENCE_MAP = {conf_map!r}\n"
        f"CONFIDENCE_MAP_WITH_REFERENCE = {ref_map!r}\n"
    )
    print(f"wrote {OUT}", file=sys.stderr)


def fit_and_scale(name: str, x: np.ndarray, y: np.ndarray, xh: np.ndarray, yh: np.ndarray, classes: int,
                  hidden: int = 48) -> dict[str, Any]:
    """A network fitted on the training scenes, temperature-scaled and reported on the held-out ones."""
    model = fit_mlp(x, y, classes, hidden=hidden)
    model["temperature"] = fit_temperature(model, xh, yh)
    _report(name, model, xh, yh)
    return model


def _pair(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])


def _stack(scenes: list[Any], split: int, one: Any) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((x, x held out), (y, y held out)) from ``one(scene) -> (x, y)`` over the scenes."""
    pairs = [one(scene) for scene in scenes]
    x = np.concatenate([p[0] for p in pairs[:split]]), np.concatenate([p[0] for p in pairs[split:]])
    y = np.concatenate([p[1] for p in pairs[:split]]), np.concatenate([p[1] for p in pairs[split:]])
    return x, y


def confidence_map(held_out: list[Any], analyse: Any) -> dict[str, Any]:
    """Isotonic map of the whole lot answer's raw confidence to its held-out accuracy, and the sure bar."""
    from boardcam.vision import reader

    raw, right = [], []
    for scene in held_out:
        position = scene[2]
        lots = reader.decide_lots(analyse(scene))
        for lot, reading in lots.items():
            name = f"{'ABCDEFGH'[lot % 8]}{lot // 8 + 1}"
            want = (position.get("structures") or {}).get(name)
            got = reading.to_structure_json()
            norm = lambda e: None if e is None else (e["kind"], e["color"], e.get("cap") if e["kind"] == "tower" else None)
            raw.append(reading.confidence)
            right.append(norm(want) == norm(got))
    xs, ys = isotonic(np.array(raw), np.array(right, float))
    sure = sure_from(np.array(raw), np.array(right, bool))
    mapped = np.where(np.array(raw) >= sure, 0.95, np.minimum(np.interp(np.array(raw), xs, ys), 0.899))
    wrong = ~np.array(right)
    print(f"lots held out: accuracy {1 - wrong.mean():.4f}, wrong with mapped conf >= 0.9: {(wrong & (mapped >= 0.9)).mean():.5f},"
          f" share >= 0.9: {(mapped >= 0.9).mean():.3f}", file=sys.stderr)
    return {"x": [round(float(v), 5) for v in xs], "y": [round(float(v), 5) for v in ys], "sure_from": round(sure, 6)}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenes", type=int, nargs="?", default=120)
    parser.add_argument("--made-up-every", type=int, default=0,
                        help="print every Nth scene in made-up tile art (edition R)")
    arguments = parser.parse_args()
    main(arguments.scenes, made_up_every=arguments.made_up_every)
