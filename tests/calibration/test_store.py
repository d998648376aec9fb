"""The calibration file: state directory, atomic writes with a backup, safe loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardcam.calibration.settings import CameraSettings
from boardcam.calibration.store import (
    CALIBRATION_VERSION,
    Calibration,
    atomic_write_bytes,
    atomic_write_text,
    calibration_path,
    load_calibration,
    load_calibration_with_message,
    save_calibration,
    state_dir,
)
from boardcam.calibration.target import TargetSpec

INTRINSICS = {
    "camera_matrix": [[800.0, 0.0, 480.0], [0.0, 800.0, 360.0], [0.0, 0.0, 1.0]],
    "dist_coeffs": [-0.12, 0.05, 0.0, 0.0, 0.0],
    "image_size": [960, 720],
    "rms_px": 0.21,
}
BOARD = {"corners_px": {"A1": [100, 600], "H1": [500, 600], "H10": [500, 100], "A10": [100, 100]}, "row1": "bottom"}


def full_calibration() -> Calibration:
    return Calibration(
        camera_settings=CameraSettings(exposure_us=10000, colour_gains=(1.8, 1.5)),
        target=TargetSpec(),
        intrinsics=INTRINSICS,
        board=BOARD,
        appearance={"tile_mm": 51.0, "colours": {}, "white_balance": None},
        mat={"tile_mm": 51.0},
    )


def test_state_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("BOARDCAM_STATE_DIR", "STATE_DIRECTORY", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "boardcam"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "boardcam"
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/boardcam:/var/lib/other")
    assert state_dir() == Path("/var/lib/boardcam")
    monkeypatch.setenv("BOARDCAM_STATE_DIR", str(tmp_path / "explicit"))
    assert state_dir() == tmp_path / "explicit"
    assert calibration_path() == tmp_path / "explicit" / "calibration.json"
    assert not (tmp_path / "explicit").exists()  # asking does not create


def test_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "calibration.json"
    original = full_calibration()
    save_calibration(original, path)
    loaded, message = load_calibration_with_message(path)
    assert message is None
    assert loaded == original
    assert json.loads(path.read_text())["version"] == CALIBRATION_VERSION


def test_typed_views_build_vision_objects() -> None:
    calibration = full_calibration()
    intrinsics = calibration.camera_intrinsics()
    assert intrinsics.image_size == (960, 720)
    assert calibration.board_pose().corners_px["H10"] == (500.0, 100.0)
    assert calibration.learned_appearance().tile_mm == 51.0
    assert calibration.mat_spec().tile_mm == 51.0
    assert Calibration().camera_intrinsics() is None and Calibration().board_pose() is None


def test_saving_again_keeps_the_previous_file_as_bak(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    first = Calibration(board=BOARD)
    save_calibration(first, path)
    assert not (tmp_path / "calibration.json.bak").exists()
    second = first.updated(intrinsics=INTRINSICS)
    save_calibration(second, path)
    backup, _ = load_calibration_with_message(tmp_path / "calibration.json.bak")
    current, _ = load_calibration_with_message(path)
    assert backup == first and current == second
    # no temporary files are left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calibration.json", "calibration.json.bak"]


def test_missing_file_gives_none_and_asks_to_calibrate(tmp_path: Path) -> None:
    calibration, message = load_calibration_with_message(tmp_path / "nope.json")
    assert calibration is None
    assert "no calibration" in message and "boardcam calibrate" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{ half a file", "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('{"format": "something-else", "version": 1}', "not a boardcam calibration"),
        (b"\xff\xfe\x00garbage", "unreadable"),
    ],
)
def test_corrupt_file_gives_none_with_a_reason(tmp_path: Path, content: str | bytes, expected: str) -> None:
    path = tmp_path / "calibration.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    calibration, message = load_calibration_with_message(path)
    assert calibration is None
    assert expected in message
    assert "uncalibrated" in message
    assert path.exists()  # left alone for inspection


def test_bad_field_is_named_and_backup_is_mentioned(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    save_calibration(full_calibration(), path)
    save_calibration(full_calibration(), path)
    document = json.loads(path.read_text())
    document["board"]["corners_px"]["A1"] = ["x", 3]
    path.write_text(json.dumps(document))
    calibration, message = load_calibration_with_message(path)
    assert calibration is None
    assert "board.corners_px.A1" in message and "calibration.json.bak" in message


@pytest.mark.parametrize(("version", "word"), [(0, "older"), (CALIBRATION_VERSION + 1, "newer")])
def test_other_versions_are_refused_with_a_message(tmp_path: Path, version: int, word: str) -> None:
    path = tmp_path / "calibration.json"
    document = full_calibration().to_json()
    document["version"] = version
    path.write_text(json.dumps(document))
    calibration, message = load_calibration_with_message(path)
    assert calibration is None
    assert word in message and f"version {version}" in message


def test_load_calibration_logs_instead_of_raising(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "calibration.json"
    path.write_text("{")
    with caplog.at_level("WARNING"):
        assert load_calibration(path) is None
    assert "damaged" in caplog.text


def test_atomic_write_replaces_whole_file_and_creates_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "file.txt"
    atomic_write_text(path, "first version, rather long\n")
    atomic_write_text(path, "second\n")
    assert path.read_text() == "second\n"
    atomic_write_bytes(path, b"\x00\x01", keep_backup=True)
    assert path.read_bytes() == b"\x00\x01"
    assert (path.parent / "file.txt.bak").read_text() == "second\n"


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    path = tmp_path / "calibration.json"
    save_calibration(Calibration(board=BOARD), path)
    before = path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("part", "value", "expected"),
    [
        ("appearance", {"tile_mm": 5000.0}, "tile_mm"),
        ("mat", {"dictionary": "DICT_NOPE"}, "dictionary"),
        ("intrinsics", {"camera_matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "dist_coeffs": [0.1, 0.2, 0.3],
                        "image_size": [640, 480]}, "dist_coeffs"),
        ("camera_settings", {"exposure_us": "fast"}, "exposure_us"),
        ("target", {"squares_x": 7, "squares_y": 5, "square_mm": 30, "marker_mm": 40, "dictionary": "DICT_5X5_100"},
         "marker_mm"),
    ],
)
def test_bad_parts_are_caught_at_load_not_mid_game(tmp_path: Path, part: str, value: dict, expected: str) -> None:
    path = tmp_path / "calibration.json"
    document = full_calibration().to_json()
    document[part] = value
    path.write_text(json.dumps(document))
    calibration, message = load_calibration_with_message(path)
    assert calibration is None
    assert "damaged" in message and expected in message
