"""Fit the lot classifiers of boardcam.vision.lots on generated scenes.

Two small networks (18 physical features -> 24 ReLU units -> classes):

* FIRST_LOOK: plain / icon / dome / tower, before the icons are known
  (its icon probability picks each tile's icon lot, its piece probability
  keeps pieces out of the templates);
* FINAL: empty / dome / tower, with every lot compared with its own empty
  look (plain or icon template).

Training seeds start at 500 000, far from the benchmark's (0..) and the
tests', so the benchmark measures scenes the fit never saw.  A fifth of the
scenes is held out to fit one temperature per network (Guo et al. 2017)
and then an isotonic map (pool-adjacent-violators) from the whole lot
answer's raw confidence (kind x colour x cap) to its held-out accuracy, so
that a reported 0.9 means "right at least as often as that" on unseen scenes.

    python benchmarks/train_lot_model.py [scenes]    # writes vision/boardcam/vision/lot_model.py
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


def render_set(count: int, size: tuple[int, int]) -> list[tuple[np.ndarray, Any, dict[str, Any], Any, np.ndarray]]:
    """Per unoccluded scene: warped Lab (margin included), geometry, truth position,
    the empty-board reference of the same table, and the warped Lab balanced as
    the app balances it when it has that reference (the reference's gains).

    The empty twin is the same scene (camera, lights, tile layout) rendered
    with no structures and other sensor noise: what the app saw at setup.
    """
    import dataclasses

    from bench_vision import truth_in_reader_convention
    from scenegen import render_scene, sample_params
    from scenegen.positions import game_positions

    from boardcam.vision.colour import board_gains, to_lab
    from boardcam.vision.geometry import build_warp
    from boardcam.vision.models import BoardPose
    from boardcam.vision.reader import MARGIN_PX, TILE_PX, empty_board_reference

    out = []
    seed = SEED0
    while len(out) < count:
        rng = np.random.default_rng([seed, 1])  # the same draws as scenegen.random_scene
        positions = game_positions(int(rng.integers(2 ** 31)))
        position = positions[int(rng.integers(len(positions)))]
        params = sample_params(rng, size, {})
        scene = render_scene(position, params, seed)
        seed += 1
        if scene.truth.get("occluded"):
            continue
        empty = render_scene(dict(position, structures={}), dataclasses.replace(params, hand=None), seed + 7_000_000)
        corners, truth = truth_in_reader_convention(scene.truth)
        pose = BoardPose({k: tuple(v) for k, v in corners.items()})
        geometry = build_warp(pose, size, TILE_PX, None, MARGIN_PX)
        warped = geometry.warp(scene.image)
        lab_all = to_lab(warped, board_gains(geometry.board_view(warped)))
        reference = empty_board_reference(empty.image, pose, tiles=truth["tiles"])
        lab_ref = to_lab(warped, np.array(reference.white_balance))
        out.append((lab_all, geometry, truth, reference, lab_ref))
        print(f"rendered {len(out)}/{count}", file=sys.stderr, end="\r")
    return out


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


def main(count: int = 120, size: tuple[int, int] = (1640, 1232)) -> None:
    from boardcam.vision import reader

    scenes = render_set(count, size)
    split = int(len(scenes) * 0.65)

    def features(models: tuple[Any, Any], first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        xs, ys = [], []
        for lab_all, geometry, position, _, _ in scenes:
            _, analysis = reader.analyse(lab_all, geometry, None, None, {}, models=models)
            x = analysis.first_features if first else analysis.features
            xs.append(x)
            ys.append(np.tile(labels(position, with_icons=first), len(x) // 80))
        return (np.concatenate(xs[:split]), np.concatenate(ys[:split]),
                np.concatenate(xs[split:]), np.concatenate(ys[split:]))

    x, y, xh, yh = features((None, None), first=True)
    first = fit_mlp(x, y, 4)
    first["temperature"] = fit_temperature(first, xh, yh)
    _report("first look", first, xh, yh)
    x, y, xh, yh = features((first, None), first=False)
    final = fit_mlp(x, y, 3)
    final["temperature"] = fit_temperature(final, xh, yh)
    _report("final", final, xh, yh)
    conf_map = confidence_map(scenes[split:], lambda lab, geometry, ref, lab_ref: reader.analyse(
        lab, geometry, None, None, {}, models=(first, final))[1])
    xr, yr, xhr, yhr = [], [], [], []
    for i, (_, geometry, position, reference, lab_ref) in enumerate(scenes):
        _, analysis = reader.analyse(lab_ref, geometry, None, reference, {}, models=(first, final))
        (xr if i < split else xhr).append(analysis.features)
        (yr if i < split else yhr).append(labels(position, with_icons=False))
    final_ref = fit_mlp(np.concatenate(xr), np.concatenate(yr), 3)
    final_ref["temperature"] = fit_temperature(final_ref, np.concatenate(xhr), np.concatenate(yhr))
    _report("final with reference", final_ref, np.concatenate(xhr), np.concatenate(yhr))
    ref_map = confidence_map(scenes[split:], lambda lab, geometry, ref, lab_ref: reader.analyse(
        lab_ref, geometry, None, ref, {}, models=(first, final_ref))[1])
    OUT.write_text(
        '"""Fitted weights of the lot classifiers (generated by benchmarks/train_lot_model.py; do not edit)."""\n\n'
        f"# {count} scenes from seed {SEED0}, {size[0]}x{size[1]}; features: boardcam.vision.lots.FEATURE_NAMES\n"
        f"FIRST_LOOK = {_literal(first)}\n\nFINAL = {_literal(final)}\n\n"
        "# FINAL for reading against the empty board seen at setup (EmptyBoardReference)\n"
        f"FINAL_WITH_REFERENCE = {_literal(final_ref)}\n\n"
        f"# raw lot confidence -> held-out accuracy (isotonic), applied by the reader\nCONFIDENCE_MAP = {conf_map!r}\n"
        f"CONFIDENCE_MAP_WITH_REFERENCE = {ref_map!r}\n"
    )
    print(f"wrote {OUT}", file=sys.stderr)


def confidence_map(held_out: list[Any], analyse: Any) -> dict[str, Any]:
    """Isotonic map of the whole lot answer's raw confidence to its held-out accuracy, and the sure bar."""
    from boardcam.vision import reader

    raw, right = [], []
    for lab_all, geometry, position, reference, lab_ref in held_out:
        lots = reader.decide_lots(analyse(lab_all, geometry, reference, lab_ref))
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
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 120)
