"""Tests of benchmarks/train_lot_net.py that need no torch: what it caches, how it blends two networks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import train_lot_net


def _prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, **looks: bool) -> dict[str, np.ndarray]:
    with np.load(_prepared_path(tmp_path, monkeypatch, name, **looks)) as cached:
        return {key: cached[key] for key in cached.files}


def _prepared_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, **looks: bool) -> Path:
    monkeypatch.setattr(train_lot_net, "CACHE", tmp_path / name)
    return train_lot_net.prepare_one(500_003, size=(820, 616), **looks)


def test_a_relit_reference_changes_the_setup_look_and_not_the_frame(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The app keeps its setup reference when a lamp changes; the relit scenes teach that case."""
    same = _prepared(tmp_path, monkeypatch, "same")
    relit = _prepared(tmp_path, monkeypatch, "relit", relit=True)
    assert np.array_equal(same["lab_frame"], relit["lab_frame"])
    assert np.array_equal(same["expected_frame"], relit["expected_frame"])
    assert np.array_equal(same["labels"], relit["labels"])
    shift = np.abs(same["expected_ref"].astype(np.float32) - relit["expected_ref"].astype(np.float32)).mean()
    assert shift > 0.5  # Lab units; the frame's own look averages about 23


def test_soft_coins_change_how_the_domes_look_and_not_what_they_are(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dome becomes a coin with a fainter rim and a glossier top; the labels, and the lots without a
    dome, stay."""
    from boardcam.vision.lot_net import CLASSES
    from boardcam.vision.reader import LOT_PX
    from boardcam.vision.tiles import lot_grid

    same = _prepared(tmp_path, monkeypatch, "same")
    soft = _prepared(tmp_path, monkeypatch, "soft", soft_coins=True)
    assert np.array_equal(same["labels"], soft["labels"])
    domes = [i for i, label in enumerate(same["labels"]) if label < len(CLASSES) and CLASSES[label][0] == "dome"]
    assert domes  # the seed's position has domes to change
    change = np.abs(same["lab_frame"].astype(np.float32) - soft["lab_frame"].astype(np.float32))
    margin = (change.shape[1] - 8 * LOT_PX) // 2  # the cached frame keeps a margin around the board
    changed = lot_grid(change[margin:-margin, margin:-margin], LOT_PX).mean(axis=(1, 2, 3))
    assert changed[domes].min() > 0.5
    assert np.delete(changed, domes).max() < 0.5


def test_low_lamps_change_the_light_and_not_the_position(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One low lamp lights the frame and its empty twin alike: other looks, the same labels and pose."""
    same = _prepared(tmp_path, monkeypatch, "same")
    low = _prepared(tmp_path, monkeypatch, "low", low_lamps=True)
    assert np.array_equal(same["labels"], low["labels"]) and np.array_equal(same["centre"], low["centre"])
    assert np.abs(same["lab_frame"].astype(np.float32) - low["lab_frame"].astype(np.float32)).mean() > 0.5


def test_soft_coin_scenes_teach_only_against_the_setup_reference(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A same-colour coin looks like a printed disc without the empty board to compare: a soft-coins scene
    gives the fit one input, in the reference mode; an ordinary scene gives one in each mode."""
    from boardcam.vision.lot_net import INPUT_CHANNELS

    plain = _prepared_path(tmp_path, monkeypatch, "plain")
    soft = _prepared_path(tmp_path, monkeypatch, "soft", soft_coins=True)
    x, y, _, scenes = train_lot_net.load_cache([plain, soft])
    assert scenes.tolist() == [0, 0, 1]
    flag = x[:, INPUT_CHANNELS - 1].astype(np.float32).mean(axis=(1, 2))  # the reference plane
    assert flag.tolist() == [0.0, 1.0, 1.0]
    assert np.array_equal(y[0], y[2])  # the same position, seen with coins


def _network(value: float) -> dict[str, np.ndarray]:
    return {"stem.weight": np.full((2, 3), value, np.float32), "stem.bias": np.full(2, value, np.float32),
            "temperature": np.float32(9.0), "confidence_x": np.arange(3.0)}


def test_a_blend_lies_the_share_of_the_way_from_the_first_network_to_the_second() -> None:
    first, second = _network(1.0), _network(3.0)
    assert np.array_equal(train_lot_net.blended_weights(first, second, 0.0)["stem.weight"], first["stem.weight"])
    assert np.array_equal(train_lot_net.blended_weights(first, second, 1.0)["stem.bias"], second["stem.bias"])
    quarter = train_lot_net.blended_weights(first, second, 0.25)
    assert np.allclose(quarter["stem.weight"], 1.5) and quarter["stem.weight"].dtype == np.float32


def test_a_blend_takes_only_the_layers_the_temperature_and_map_are_fitted_again() -> None:
    blended = train_lot_net.blended_weights(_network(1.0), _network(2.0), 0.5)
    assert sorted(blended) == ["stem.bias", "stem.weight"]


def test_networks_with_other_layers_do_not_blend() -> None:
    other = dict(_network(2.0), **{"conv2.weight": np.zeros(1, np.float32)})
    with pytest.raises(ValueError, match="different layers"):
        train_lot_net.blended_weights(_network(1.0), other, 0.5)


def test_a_folder_of_frames_and_empty_twins_caches_as_the_renderer_does(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare-pairs (a path tracer's frames, or photos of a table with and without pieces) caches a pair
    written to disk exactly as prepare caches the same scene rendered in memory; a frame without its
    empty twin is left out."""
    import dataclasses

    from scenegen import render_scene
    from scenegen.files import write_scene
    from scenegen.hard_cases import EMPTY_BOARD_NOISE_SEED
    from scenegen.sampling import random_inputs

    seed, size = 500_003, (820, 616)
    rendered = _prepared(tmp_path, monkeypatch, "rendered")
    position, params = random_inputs(seed, size, overrides={})
    frames = tmp_path / "frames"
    write_scene(render_scene(position, params, seed), frames, "table_full")
    empty = render_scene(dict(position, structures={}), dataclasses.replace(params, hand=None),
                         seed + EMPTY_BOARD_NOISE_SEED)
    write_scene(empty, frames, "table_empty")
    write_scene(render_scene(position, params, seed + 1), frames, "lonely_full")
    monkeypatch.setattr(train_lot_net, "CACHE", tmp_path / "pairs")
    train_lot_net.prepare_pairs(frames)
    assert [p.name for p in (tmp_path / "pairs").iterdir()] == [f"{seed}.npz"]
    with np.load(tmp_path / "pairs" / f"{seed}.npz") as cached:
        assert sorted(cached.files) == sorted(rendered)
        for key, value in rendered.items():
            assert np.array_equal(cached[key], value), key


def test_a_favoured_cache_folder_is_shown_as_often_as_asked(tmp_path: Path) -> None:
    """A few hundred path-traced frames among thousands of the ray caster's count only if shown more."""
    paths = [tmp_path / "traced" / "1.npz", tmp_path / "rays" / "2.npz", tmp_path / "traced" / "3.npz"]
    scene = np.array([0, 0, 1, 1, 2])  # each scene's inputs, one per mode
    shown = train_lot_net.times_shown(paths, scene, {(tmp_path / "traced").resolve(): 4})
    assert shown.tolist() == [4, 4, 1, 1, 4]
    assert train_lot_net.times_shown(paths, scene, {}).tolist() == [1] * 5


def test_a_folder_without_pairs_or_corners_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to fit on is said, not silently cached as nothing; a photo's record needs the array's corners."""
    from scenegen import random_scene
    from scenegen.files import write_scene

    monkeypatch.setattr(train_lot_net, "CACHE", tmp_path / "cache")
    scene = random_scene(3, size=(320, 240))
    write_scene(scene, tmp_path / "alone", "photo_full")
    with pytest.raises(ValueError, match="no <name>_full.json"):
        train_lot_net.prepare_pairs(tmp_path / "alone")
    for name in ("photo_full", "photo_empty"):
        write_scene(scene, tmp_path, name)
    record = tmp_path / "photo_full.json"
    truth = json.loads(record.read_text())
    record.write_text(json.dumps({k: v for k, v in truth.items() if k != "corners_px"}))
    with pytest.raises(ValueError, match="photo_full.json: no corners_px"):
        train_lot_net.prepare_pairs(tmp_path)


def test_a_photo_pair_is_numbered_by_its_name_clear_of_the_seeds(tmp_path: Path) -> None:
    seeded = train_lot_net._pair_number(tmp_path / "cycles_600100_full.json", {"seed": 600100})
    photo = train_lot_net._pair_number(tmp_path / "kitchen_full.json", {})
    assert seeded == 600100
    assert photo >= 10**10 and photo == train_lot_net._pair_number(tmp_path / "kitchen_full.json", {})


@pytest.mark.parametrize("text", ["traced", "traced:", "traced:0", "traced:two", ":3"])
def test_a_favour_that_is_not_folder_and_times_is_refused(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        train_lot_net._favoured(text)
    assert train_lot_net._favoured("traced:6")[1] == 6
