"""`boardcam calibrate …` end to end: files written, JSON printed, refusals exit 2 and save nothing."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from boardcam.calibration.store import load_calibration_with_message
from boardcam.firmware.cli import main
from charuco_synth import synth_views


@pytest.fixture(autouse=True)
def private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("BOARDCAM_STATE_DIR", str(state))
    return state


def test_target_pdf_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "target", "-o", str(tmp_path / "t.pdf")]) == 0
    assert (tmp_path / "t.pdf").read_bytes().startswith(b"%PDF")
    assert "30 mm" in capsys.readouterr().out
    assert main(["calibrate", "target", "-o", str(tmp_path / "t.png"), "--squares", "5x4",
                 "--square-mm", "35", "--marker-mm", "26"]) == 0
    assert cv2.imread(str(tmp_path / "t.png")) is not None


def test_target_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "target", "-o", str(tmp_path / "t.gif")]) == 2
    assert "must end in .pdf or .png" in capsys.readouterr().err
    assert main(["calibrate", "target", "-o", str(tmp_path / "t.pdf"), "--squares", "many"]) == 2
    assert "--squares" in capsys.readouterr().err
    assert main(["calibrate", "target", "-o", str(tmp_path / "t.pdf"), "--marker-mm", "40"]) == 2
    assert "marker_mm" in capsys.readouterr().err


def test_camera_from_images_prints_json_and_saves(
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    camera, photos = synth_views(10, seed=11)
    folder = tmp_path / "views"
    folder.mkdir()
    for index, image in enumerate(photos):
        cv2.imwrite(str(folder / f"view{index:02}.png"), image)
    assert main(["calibrate", "camera", "--images", str(folder), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["views_used"] == 10 and result["rms_px"] < 0.5
    assert result["camera_matrix"][0][0] == pytest.approx(camera.camera_matrix[0, 0], rel=0.01)
    assert result["image_size"] == [960, 720]
    stored, message = load_calibration_with_message(private_state / "calibration.json")
    assert message is None and stored is not None
    assert stored.intrinsics["camera_matrix"][0][0] == pytest.approx(result["camera_matrix"][0][0], abs=0.01)
    assert stored.target is not None and stored.target.square_mm == 30.0
    assert stored.camera_intrinsics().image_size == (960, 720)


def test_camera_refusal_exits_2_and_saves_nothing(
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, photos = synth_views(3, seed=12)
    folder = tmp_path / "few"
    folder.mkdir()
    for index, image in enumerate(photos):
        cv2.imwrite(str(folder / f"v{index}.jpg"), image)
    assert main(["calibrate", "camera", "--images", str(folder), "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["refused"] == "too_few_views"
    assert captured.err.startswith("boardcam: error: target found in only 3 of 3")
    assert not (private_state / "calibration.json").exists()


def test_camera_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "camera", "--images", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_mat_written_and_optionally_stored(
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibrate", "mat", "-o", str(tmp_path / "mat.pdf"), "--use"]) == 0
    assert (tmp_path / "mat.pdf").read_bytes().startswith(b"%PDF")
    stored, _ = load_calibration_with_message(private_state / "calibration.json")
    assert stored is not None and stored.mat_spec().tile_mm == 51.0
    assert main(["calibrate", "mat", "-o", str(tmp_path / "big.pdf"), "--tile-mm", "75"]) == 2
    assert "larger than A3" in capsys.readouterr().err


def test_show_reports_missing_and_corrupt_files(
    private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibrate", "show"]) == 1
    assert "no calibration" in capsys.readouterr().out
    private_state.mkdir(parents=True)
    (private_state / "calibration.json").write_text("{broken")
    assert main(["calibrate", "show", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["calibrated"] is False and "damaged" in document["message"]


def test_camera_live_takes_distinct_views_from_a_source(
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--live goes through the app's frame source; holding still does not add views."""
    _, photos = synth_views(9, seed=13)
    folder = tmp_path / "stream"
    folder.mkdir()
    frame = 0
    for image in photos:
        for _ in range(2):  # each pose held for two frames
            cv2.imwrite(str(folder / f"f{frame:03}.png"), image)
            frame += 1
    code = main(["calibrate", "camera", "--live", "12", "--source", f"replay:{folder}",
                 "--json", "--min-views", "6"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["views_total"] == 18  # the replay ran out before 12 distinct views
    assert 6 <= result["views_used"] <= 9  # a pose held still counted once
    assert "view 1/12" in captured.err
    assert (private_state / "calibration.json").exists()


class FakePiCamera:
    """Stands in for the Pi camera source: auto exposure wanders, then settles."""

    name = "fake"

    def __init__(self) -> None:
        self.applied: list[object] = []
        self.count = 0

    def apply_settings(self, settings: object) -> None:
        self.applied.append(settings)

    def read(self, timeout: float = 2.0) -> object:
        self.count += 1
        return object()

    def metadata(self) -> dict:
        settled = self.count > 4
        return {
            "ExposureTime": 12000 if settled else 40000,
            "AnalogueGain": 2.0 if settled else 6.0,
            "ColourGains": (1.9, 1.5) if settled else (2.5, 1.1),
            "LensPosition": 2.2,
        }


def test_freeze_settings_uses_the_settled_metadata() -> None:
    from boardcam.calibration.settings import CameraSettings, freeze_settings, source_metadata

    camera = FakePiCamera()
    settings = freeze_settings(camera, frames=12)
    assert camera.applied == [CameraSettings()]  # automatic while settling
    assert settings == CameraSettings(exposure_us=12000, analogue_gain=2.0, colour_gains=(1.9, 1.5),
                                      lens_position=2.2)

    class Webcam:
        def apply_settings(self, settings: object) -> None: ...
        def read(self, timeout: float = 2.0) -> object:
            return object()

    assert source_metadata(Webcam()) is None
    assert freeze_settings(Webcam(), frames=4) is None


@pytest.fixture(scope="module")
def empty_table():  # type: ignore[no-untyped-def]
    from scenegen import SceneParams, game_positions, render_scene

    empty = game_positions(3)[0]
    params = SceneParams(size=(960, 720), tile_mm=51.0)
    return empty, params, render_scene(empty, params, 31)


def test_board_from_an_image(  # type: ignore[no-untyped-def]
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str], empty_table
) -> None:
    _, _, setup = empty_table
    cv2.imwrite(str(tmp_path / "empty.png"), setup.image)
    assert main(["calibrate", "board", "--image", str(tmp_path / "empty.png"), "--row1", "bottom",
                 "--overlay", str(tmp_path / "overlay.png"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["board"]["row1"] == "bottom" and len(shown["position"]["tiles"]) == 20
    overlay = cv2.imread(str(tmp_path / "overlay.png"))
    assert overlay is not None and overlay.shape == setup.image.shape
    stored, _ = load_calibration_with_message(private_state / "calibration.json")
    assert stored is not None and stored.board is not None
    for name, point in setup.truth["corners_px"].items():
        assert abs(stored.board["corners_px"][name][0] - point[0]) < 4
        assert abs(stored.board["corners_px"][name][1] - point[1]) < 4


def test_pieces_from_an_image(  # type: ignore[no-untyped-def]
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str], empty_table
) -> None:
    from scenegen import render_scene

    from boardcam.calibration.board import board_at
    from boardcam.calibration.pieces import TEACH_LAYOUT
    from boardcam.calibration.store import save_calibration

    empty, params, setup = empty_table
    # the board step's result, with the scene's true pose (board finding is tested above)
    save_calibration(board_at(setup.image, setup.truth["corners_px"]).calibration,
                     private_state / "calibration.json")
    assert main(["calibrate", "pieces", "--show"]) == 0
    assert "D7: blue tower with a black cap" in capsys.readouterr().out
    teach = render_scene({**empty, "structures": TEACH_LAYOUT}, params, 32)
    cv2.imwrite(str(tmp_path / "teach.png"), teach.image)
    assert main(["calibrate", "pieces", "--image", str(tmp_path / "teach.png")]) == 0
    assert "learned" in capsys.readouterr().out
    stored, _ = load_calibration_with_message(private_state / "calibration.json")
    assert stored is not None and "cap:white" in stored.appearance["colours"]
    assert stored.appearance["white_balance"] is not None
    assert (private_state / "calibration.json.bak").exists()

    # a frame with the pieces missing is refused and the file is left alone
    before = (private_state / "calibration.json").read_bytes()
    cv2.imwrite(str(tmp_path / "bare.png"), setup.image)
    assert main(["calibrate", "pieces", "--image", str(tmp_path / "bare.png")]) == 2
    assert "nothing seen on" in capsys.readouterr().err
    assert (private_state / "calibration.json").read_bytes() == before


def test_board_unreadable_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "board", "--image", str(tmp_path / "none.png")]) == 2
    assert "cannot read image" in capsys.readouterr().err


def test_same_pose_tells_held_still_from_moved_or_tilted() -> None:
    import numpy as np

    from boardcam.calibration.camera import CharucoView
    from boardcam.firmware.commands.calibrate import same_pose

    grid = np.array([[x * 40.0, y * 40.0] for y in range(4) for x in range(6)], np.float32) + 200
    ids = np.arange(24).reshape(-1, 1)
    still = CharucoView(grid.reshape(-1, 1, 2), ids, (960, 720))
    jitter = CharucoView((grid + 1.0).reshape(-1, 1, 2), ids, (960, 720))
    moved = CharucoView((grid + [120.0, 0.0]).reshape(-1, 1, 2), ids, (960, 720))
    centre = grid.mean(axis=0)
    tilted_grid = (grid - centre) * np.array([0.7, 1.0], np.float32) + centre  # turned away about an upright axis
    tilted = CharucoView(tilted_grid.reshape(-1, 1, 2), ids, (960, 720))
    assert same_pose(still, jitter)
    assert not same_pose(still, moved)
    assert not same_pose(still, tilted)
    other_ids = CharucoView(grid[:3].reshape(-1, 1, 2), ids[:3] + 100, (960, 720))
    assert not same_pose(still, other_ids)


def test_settings_step_on_a_source_without_metadata_and_clear(
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    from boardcam.calibration.settings import CameraSettings
    from boardcam.calibration.store import Calibration, save_calibration

    folder = tmp_path / "frames"
    folder.mkdir()
    for index in range(4):
        cv2.imwrite(str(folder / f"{index}.png"), np.full((48, 64, 3), 100, np.uint8))
    assert main(["calibrate", "settings", "--source", f"replay:{folder}", "--frames", "4"]) == 1
    assert "cannot report exposure" in capsys.readouterr().out
    save_calibration(Calibration(camera_settings=CameraSettings(exposure_us=9000)), private_state / "calibration.json")
    assert main(["calibrate", "settings", "--clear"]) == 0
    stored, _ = load_calibration_with_message(private_state / "calibration.json")
    assert stored is not None and stored.camera_settings.is_automatic


def test_board_from_a_live_source(  # type: ignore[no-untyped-def]
    tmp_path: Path, private_state: Path, capsys: pytest.CaptureFixture[str], empty_table
) -> None:
    _, _, setup = empty_table
    folder = tmp_path / "stream"
    folder.mkdir()
    for index in range(12):
        cv2.imwrite(str(folder / f"{index:02}.png"), setup.image)
    assert main(["calibrate", "board", "--source", f"replay:{folder}", "--dry-run"]) == 0
    assert "row 1 at the bottom" in capsys.readouterr().out
    assert not (private_state / "calibration.json").exists()  # --dry-run saves nothing


def test_towers_step_stores_the_look_and_keeps_what_was_learned(
    private_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from boardcam.calibration.store import Calibration, save_calibration
    from boardcam.firmware.commands import TOWER_LOOKS
    from boardcam.vision.models import TOWER_LOOKS as VISION_TOWER_LOOKS

    assert TOWER_LOOKS == VISION_TOWER_LOOKS  # the parser's names are the vision's
    save_calibration(Calibration(appearance={"tile_mm": 60.0, "colours": {}, "white_balance": [1.0, 1.1, 0.9]}))
    assert main(["calibrate", "towers", "clear"]) == 0
    assert "towers read as clear plastic" in capsys.readouterr().out
    stored, _ = load_calibration_with_message(private_state / "calibration.json")
    assert stored is not None and stored.appearance is not None
    assert stored.appearance["towers"] == "clear" and stored.appearance["tile_mm"] == 60.0
    assert stored.learned_appearance().towers == "clear" and stored.learned_appearance().white_balance == (1.0, 1.1, 0.9)
    assert main(["calibrate", "show"]) == 0
    shown = capsys.readouterr().out
    assert "towers    clear plastic" in shown and "pieces    no" in shown  # told, not taught
    assert main(["calibrate", "towers", "opaque"]) == 0
    again, _ = load_calibration_with_message(private_state / "calibration.json")
    assert again is not None and again.learned_appearance().towers == "opaque"
