"""The empty-board reference `calibrate board` stores: small file, exact round trip, pose-bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boardcam.calibration import board as board_module
from boardcam.calibration.board import board_at
from boardcam.calibration.store import (
    REFERENCE_SHIFT_LOTS,
    Calibration,
    load_calibration_with_message,
    pack_reference,
    reference_problem,
    save_calibration,
    unpack_reference,
)


@pytest.fixture(scope="module")
def setup() -> tuple[Any, Any]:
    """One generated empty table and the board step's result on it (the scene's true corners)."""
    from scenegen import SceneParams, game_positions, render_scene

    empty = game_positions(5)[0]
    scene = render_scene(empty, SceneParams(size=(960, 720), tile_mm=51.0), 8)
    return scene, board_at(scene.image, scene.truth["corners_px"], layout=empty)


def _shifted(corners: dict[str, Any], dx: float) -> dict[str, list[float]]:
    return {name: [float(x) + dx, float(y)] for name, (x, y) in corners.items()}


def _lot_px(corners: dict[str, Any]) -> float:
    return float(np.hypot(*(np.array(corners["H1"]) - corners["A1"]))) / 8


def test_board_step_stores_the_reference_with_its_pose(setup: tuple[Any, Any]) -> None:
    scene, result = setup
    stored = result.calibration.appearance["reference"]
    assert stored["taken_at"]["corners_px"] == result.calibration.board["corners_px"]
    assert stored["taken_at"]["image_size"] == [960, 720]
    reference = result.calibration.learned_appearance().reference
    assert reference is not None and reference.lab.shape[0] == 80
    assert dict(reference.tiles) == scene.truth["position"]["tiles"]


def test_the_file_is_small_and_round_trips_exactly(setup: tuple[Any, Any], tmp_path: Path) -> None:
    _, result = setup
    path = save_calibration(result.calibration, tmp_path / "calibration.json")
    plain = len(json.dumps(result.calibration.to_json() | {"appearance": result.calibration.appearance}))
    assert path.stat().st_size < 0.8 * plain  # even against compact JSON, let alone indented
    assert path.stat().st_size < 150_000
    on_disk = json.loads(path.read_text())["appearance"]["reference"]
    assert "lab" not in on_disk and on_disk["lab_packed"]["encoding"]
    loaded, message = load_calibration_with_message(path)
    assert message is None and loaded is not None
    assert loaded.appearance == result.calibration.appearance
    assert Calibration.from_json(result.calibration.to_json()) == result.calibration
    before = result.calibration.learned_appearance().reference
    after = loaded.learned_appearance().reference
    assert np.array_equal(before.lab, after.lab)
    assert after.white_balance == before.white_balance


def test_pack_and_unpack_are_inverse_and_damage_is_named() -> None:
    from boardcam.engine.errors import FormatError

    rng = np.random.default_rng(3)
    as_lists = [[round(float(v), 1) for v in rng.uniform(-90, 100, 12)] for _ in range(80)]
    for lab in (as_lists, "AAEC/w=="):  # vision's JSON has held both forms
        reference = {"lot_px": 2, "lab": lab, "tiles": {}, "white_balance": None}
        packed = pack_reference(reference)
        assert "lab" not in packed
        assert unpack_reference(packed) == reference
    packed["lab_packed"] = {**packed["lab_packed"], "data": "not base64!"}
    with pytest.raises(FormatError, match="lab_packed"):
        unpack_reference(packed)


def test_a_damaged_packed_reference_loads_as_damaged(setup: tuple[Any, Any], tmp_path: Path) -> None:
    _, result = setup
    path = save_calibration(result.calibration, tmp_path / "calibration.json")
    document = json.loads(path.read_text())
    data = document["appearance"]["reference"]["lab_packed"]["data"]
    document["appearance"]["reference"]["lab_packed"]["data"] = data[: len(data) // 2]  # cut short
    path.write_text(json.dumps(document))
    calibration, message = load_calibration_with_message(path)
    assert calibration is None and "damaged" in message and "lab_packed" in message


def test_the_reference_is_kept_for_a_bump_and_set_aside_when_the_board_moved(setup: tuple[Any, Any]) -> None:
    _, result = setup
    calibration = result.calibration
    corners = calibration.board["corners_px"]
    lot = _lot_px(corners)
    near = {"corners_px": _shifted(corners, 0.5 * REFERENCE_SHIFT_LOTS * lot)}
    far = {"corners_px": _shifted(corners, 2.0 * REFERENCE_SHIFT_LOTS * lot)}
    assert calibration.learned_appearance(near).reference is not None
    moved = calibration.learned_appearance(far)
    assert moved.reference is None
    assert moved.white_balance == calibration.learned_appearance().white_balance  # the rest stays
    assert "lots from where" in calibration.reference_problem(far)
    # the same pose at twice the resolution is the same place
    doubled = {"corners_px": {k: [2 * x, 2 * y] for k, (x, y) in corners.items()}}
    assert calibration.reference_problem(doubled, (1920, 1440)) is None
    assert calibration.reference_problem(doubled) is not None  # without the size it is elsewhere


def test_a_reference_without_its_pose_is_not_used() -> None:
    reference = {"lot_px": 1, "lab": [[0.0, 0.0, 0.0]] * 80, "tiles": {}}
    corners = {"A1": [0, 100], "H1": [80, 100], "H10": [80, 0], "A10": [0, 0]}
    assert "does not say" in reference_problem(reference, {"corners_px": corners})


def test_loading_drops_a_reference_taken_at_another_board_pose(setup: tuple[Any, Any], tmp_path: Path) -> None:
    _, result = setup
    corners = result.calibration.board["corners_px"]
    moved_board = {**result.calibration.board, "corners_px": _shifted(corners, 3 * _lot_px(corners))}
    path = save_calibration(result.calibration.updated(board=moved_board), tmp_path / "calibration.json")
    loaded, message = load_calibration_with_message(path)
    assert message is None and loaded is not None
    assert loaded.appearance["reference"] is None  # what a reader taking the stored JSON gets
    assert loaded.appearance["colours"] == result.calibration.appearance["colours"]
    assert "reference" in json.loads(path.read_text())["appearance"]  # the file itself is untouched


def test_the_app_reader_gets_the_reference(setup: tuple[Any, Any], tmp_path: Path) -> None:
    from boardcam.firmware.runner import _vision_parts

    _, result = setup
    loaded, _ = load_calibration_with_message(save_calibration(result.calibration, tmp_path / "c.json"))
    parts = _vision_parts(loaded)
    assert parts["appearance"].reference is not None
    assert np.array_equal(parts["appearance"].reference.lab, result.calibration.learned_appearance().reference.lab)


def test_a_new_board_step_reads_the_layout_without_the_old_reference(
    setup: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, result = setup
    seen: list[Any] = []
    real = board_module._read_layout

    def spy(image: Any, pose: Any, intrinsics: Any, appearance: Any, mat: Any) -> Any:
        seen.append(appearance)
        return real(image, pose, intrinsics, appearance, mat)

    monkeypatch.setattr(board_module, "_read_layout", spy)
    again = board_at(scene.image, scene.truth["corners_px"], result.calibration)
    assert seen and seen[0] is not None and seen[0].reference is None
    assert again.calibration.learned_appearance().reference is not None  # a fresh one is stored


def test_without_a_new_reference_the_old_one_is_dropped(
    setup: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, result = setup
    monkeypatch.setattr(board_module, "empty_reference", lambda *args, **kwargs: None)
    again = board_at(scene.image, scene.truth["corners_px"], result.calibration)
    assert again.calibration.appearance["reference"] is None
