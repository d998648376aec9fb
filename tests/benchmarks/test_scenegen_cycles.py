"""Tests of the Cycles renderer's scene set-up (benchmarks/scenegen/cycles.py) that need no Blender."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scenegen import random_scene
from scenegen.cycles import _written, main, scene_inputs


@pytest.mark.parametrize("seed", [5, 12])
def test_cycles_scenes_draw_what_random_scene_draws(seed: int) -> None:
    """Same seed, same position, camera, lamps and art: the two renderers' frames can be compared one to one."""
    position, params = scene_inputs(seed, (320, 240), {})
    truth = random_scene(seed, size=(320, 240)).truth
    assert position == truth["position"]
    drawn = dict(truth["params"], hand=None, mat=None)
    assert params.to_json() == drawn


def test_cycles_scenes_leave_out_the_hand_and_the_mat() -> None:
    for seed in range(40):
        _, params = scene_inputs(seed, (320, 240), {})
        assert params.hand is None and params.mat is None


@pytest.mark.skipif(importlib.util.find_spec("bpy") is not None, reason="Blender's bpy is installed here")
def test_cycles_cli_without_blender_says_what_it_needs(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert "bpy" in err and err.count("\n") == 1


def test_a_given_position_is_drawn_on_the_seeds_table() -> None:
    """A game series keeps one camera, lamps and art: what random_scene(seed, position=...) draws."""
    from scenegen import game_positions

    positions = game_positions(100)
    for position in (positions[0], positions[5]):
        got, params = scene_inputs(7, (320, 240), {}, position)
        truth = random_scene(7, size=(320, 240), position=position).truth
        assert got == position
        assert params.to_json() == dict(truth["params"], hand=None, mat=None)


def test_plies_need_a_game(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--plies", "3"]) == 2
    err = capsys.readouterr().err
    assert "--plies needs --game" in err and err.count("\n") == 1


def test_resume_needs_a_game(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--resume needs --game" in err and err.count("\n") == 1


def test_a_game_needs_the_engine(tmp_path: object, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the engine the positions are a stand-in whose moves break the rules: no game to referee."""
    import scenegen.cycles

    monkeypatch.setattr(scenegen.cycles, "engine_available", lambda: False)
    assert main([str(tmp_path), "--game", "3"]) == 2
    assert "engine" in capsys.readouterr().err


def test_resume_keeps_only_whole_plies(tmp_path: Path) -> None:
    """A ply interrupted while its truth was written is rendered again."""
    (tmp_path / "game7_ply000.jpg").write_bytes(b"jpeg")
    (tmp_path / "game7_ply000.json").write_text(json.dumps({"image": "game7_ply000.jpg"}))
    (tmp_path / "game7_ply001.jpg").write_bytes(b"jpeg")
    (tmp_path / "game7_ply001.json").write_text('{"image": "game7_pl')
    (tmp_path / "game7_ply002.json").write_text(json.dumps({"image": "game7_ply002.jpg"}))
    assert _written(tmp_path, "game7_ply000")
    assert not _written(tmp_path, "game7_ply001")
    assert not _written(tmp_path, "game7_ply002")
    assert not _written(tmp_path, "game7_ply003")


def test_empty_twins_are_seeds_not_a_game(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--empty-twins", "--game", "3"]) == 2
    err = capsys.readouterr().err
    assert "--empty-twins" in err and err.count("\n") == 1


def test_a_written_twin_is_found_by_its_own_image_format(tmp_path: Path) -> None:
    """Twins are written as PNG; a pair whose empty frame has its truth and image is not rendered again."""
    (tmp_path / "cycles_00007_empty.png").write_bytes(b"png")
    (tmp_path / "cycles_00007_empty.json").write_text(json.dumps({"image": "cycles_00007_empty.png"}))
    assert _written(tmp_path, "cycles_00007_empty", "png")
    assert not _written(tmp_path, "cycles_00007_empty")  # as a game's JPEG ply it is not there
