"""The picamera2 source against a fake picamera2 module (no Pi needed)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from fake_picamera2 import (
    IMX708_NEW_LIBCAMERA_CONTROLS,
    LORES_PADDING,
    CameraPlan,
    FakeWorld,
)

from boardcam.calibration.settings import CameraSettings
from boardcam.firmware.sources.base import FrameSource, SourceError, SourceStalledError
from boardcam.firmware.sources.picamera import (
    PiCameraSource,
    lores_size,
    luminance_plane,
    supported_controls,
    to_bgr,
)

LOCKED = CameraSettings(exposure_us=12000, analogue_gain=2.0, colour_gains=(1.9, 1.6),
                        lens_position=2.5)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> FakeWorld:
    """A fake picamera2 installed as the real module would be."""
    fake = FakeWorld()
    monkeypatch.setitem(sys.modules, "picamera2", fake.module())
    return fake


def source(**options) -> PiCameraSource:
    options.setdefault("reopen_delay", 0)
    return PiCameraSource(width=64, height=48, lores_width=16, **options)


def test_importing_the_module_does_not_import_picamera2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    PiCameraSource()
    assert "picamera2" not in sys.modules


def test_it_is_a_frame_source(world: FakeWorld) -> None:
    assert isinstance(source(), FrameSource)


def test_main_stream_is_rgb888_and_arrives_in_bgr_order(world: FakeWorld) -> None:
    world.rgb = (200, 40, 10)  # a red scene
    with source() as camera:
        frame = camera.read()
    config = world.opened[0].camera_config
    assert config["main"]["format"] == "RGB888"
    assert frame.image.shape == (48, 64, 3) and frame.image.dtype == np.uint8
    blue, green, red = frame.image[10, 10]
    assert (red, green, blue) == (200, 40, 10)


@pytest.mark.parametrize("fmt", ["RGB888", "BGR888", "XRGB8888", "XBGR8888"])
def test_any_rgb_format_libcamera_picks_is_turned_into_bgr(world: FakeWorld, fmt: str) -> None:
    world.force_main_format = fmt
    with source() as camera:
        image = camera.read().image
    assert image.shape == (48, 64, 3)
    assert tuple(image[0, 0]) == (10, 40, 200)


def test_lores_is_the_cropped_luminance_plane(world: FakeWorld) -> None:
    world.luma = 77
    with source() as camera:
        frame = camera.read()
    assert world.opened[0].camera_config["lores"]["format"] == "YUV420"
    assert frame.lores is not None
    assert frame.lores.shape == (12, 16)
    assert frame.lores.flags["C_CONTIGUOUS"]
    assert np.all(frame.lores == 77)  # no chroma rows, no stride padding
    assert LORES_PADDING not in frame.lores


def test_frames_count_up_with_monotonic_timestamps(world: FakeWorld) -> None:
    ticks = iter([5.0, 5.5, 6.0])
    with source(clock=lambda: next(ticks)) as camera:
        frames = [camera.read() for _ in range(3)]
    assert [f.index for f in frames] == [1, 2, 3]
    assert [f.timestamp for f in frames] == [5.0, 5.5, 6.0]


def test_locked_settings_are_applied(world: FakeWorld) -> None:
    with source() as camera:
        camera.apply_settings(LOCKED)
        applied = world.opened[0].applied
    assert applied["ExposureTime"] == 12000
    assert applied["AnalogueGain"] == 2.0
    assert applied["AwbEnable"] is False
    assert applied["ColourGains"] == (1.9, 1.6)
    assert applied["AeEnable"] is False


def test_settings_given_before_open_are_applied_on_open(world: FakeWorld) -> None:
    camera = source()
    camera.apply_settings(LOCKED)
    assert world.opened == []
    with camera:
        assert world.opened[0].applied["ExposureTime"] == 12000


def test_controls_the_camera_lacks_are_dropped_not_fatal(world: FakeWorld) -> None:
    # imx219 (Camera Module 2) has no autofocus
    with source() as camera:
        camera.apply_settings(LOCKED)
        applied = world.opened[0].applied
    assert "LensPosition" not in applied and "AfMode" not in applied


def test_new_libcamera_gets_manual_modes_instead_of_ae_enable(world: FakeWorld) -> None:
    world.plans = [CameraPlan(controls=dict(IMX708_NEW_LIBCAMERA_CONTROLS))]
    with source() as camera:
        camera.apply_settings(LOCKED)
        applied = world.opened[0].applied
    assert "AeEnable" not in applied
    assert applied["ExposureTimeMode"] == 1 and applied["AnalogueGainMode"] == 1
    assert applied["AfMode"] == 0 and applied["LensPosition"] == 2.5


def test_uncalibrated_settings_turn_the_automatics_back_on(world: FakeWorld) -> None:
    with source() as camera:
        camera.apply_settings(LOCKED)
        camera.apply_settings(CameraSettings())
        applied = world.opened[0].applied
    assert applied["AeEnable"] is True and applied["AwbEnable"] is True


def test_a_stall_is_healed_by_reopening_and_the_count_goes_on(world: FakeWorld) -> None:
    world.plans = [CameraPlan(frames=2), CameraPlan()]
    sleeps: list[float] = []
    with source(sleep=sleeps.append, reopen_delay=0.25) as camera:
        camera.apply_settings(LOCKED)
        frames = [camera.read(timeout=0.1) for _ in range(4)]
        assert camera.reopens == 1
    assert [f.index for f in frames] == [1, 2, 3, 4]
    first, second = world.opened
    assert first.closed and world.timeouts == 1
    assert second.applied["ExposureTime"] == 12000  # locked settings survive the reopen
    assert sleeps == [0.25]


def test_a_camera_error_mid_stream_is_healed_like_a_stall(world: FakeWorld) -> None:
    world.plans = [CameraPlan(frames=1, fail_capture=RuntimeError("Camera frontend has timed out")),
                   CameraPlan()]
    with source() as camera:
        frames = [camera.read(), camera.read()]
    assert [f.index for f in frames] == [1, 2]
    assert world.opened[0].closed and camera.reopens == 1


def test_reopen_keeps_trying_until_a_camera_answers(world: FakeWorld) -> None:
    world.plans = [CameraPlan(frames=1), CameraPlan(frames=0),
                   CameraPlan(fail_open=RuntimeError("Device or resource busy")), CameraPlan()]
    with source(reopen_attempts=3) as camera:
        camera.read()
        frame = camera.read()
    assert frame.index == 2
    assert len(world.opened) == 3  # the busy one never opened


def test_a_camera_that_never_comes_back_raises_stalled(world: FakeWorld) -> None:
    world.plans = [CameraPlan(frames=0)] + [CameraPlan(frames=0)] * 2
    camera = source(reopen_attempts=2)
    camera.open()
    with pytest.raises(SourceStalledError, match="2 reopen"):
        camera.read(timeout=0.05)
    assert not camera.is_open
    assert all(c.closed for c in world.opened)
    # the loop keeps its game and simply asks again later: a working camera is picked up
    world.plans = [CameraPlan()]
    assert camera.read().index == 1


def test_no_camera_is_a_clear_source_error(world: FakeWorld) -> None:
    world.cameras = 0
    with pytest.raises(SourceError, match="no Raspberry Pi camera found"):
        source().open()


def test_missing_picamera2_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import raises ImportError
    with pytest.raises(SourceError, match="apt install python3-picamera2"):
        source().open()


def test_a_busy_camera_is_a_source_error(world: FakeWorld) -> None:
    world.plans = [CameraPlan(fail_open=RuntimeError("Device or resource busy"))]
    with pytest.raises(SourceError, match="busy"):
        source().open()


def test_asking_for_a_second_camera_that_is_not_there(world: FakeWorld) -> None:
    with pytest.raises(SourceError, match="only 1 found"):
        source(camera_num=1).open()


def test_open_source_chooses_this_source(world: FakeWorld) -> None:
    from boardcam.firmware.sources import open_source

    camera = open_source("picamera2", width=64, height=48, fps=10, lores_width=16)
    assert isinstance(camera, PiCameraSource)
    with camera:
        assert camera.read().image.shape == (48, 64, 3)
    assert world.opened[0].camera_config["controls"]["FrameRate"] == 10


# ------------------------------------------------------------------ pure helpers
def test_to_bgr_rejects_formats_that_are_not_rgb() -> None:
    with pytest.raises(SourceError, match="YUV420"):
        to_bgr(np.zeros((4, 4), np.uint8), "YUV420")


def test_luminance_plane_refuses_a_too_small_buffer() -> None:
    with pytest.raises(SourceError):
        luminance_plane(np.zeros((6, 8), np.uint8), (16, 12))


@pytest.mark.parametrize(
    "main, width, expected",
    [((1640, 1232), 160, (160, 120)), ((1920, 1080), 160, (160, 90)), ((64, 48), 15, (14, 10))],
)
def test_lores_size_keeps_aspect_with_even_sides(main, width, expected) -> None:
    assert lores_size(main, width) == expected


def test_supported_controls_without_a_control_list_sends_everything() -> None:
    accepted, dropped = supported_controls({"AfMode": 0}, None)
    assert accepted == {"AfMode": 0} and dropped == []


# ------------------------------------------------------------------ on a real Pi
@pytest.mark.hardware
def test_real_pi_camera_frames_and_locked_settings() -> None:
    """Stop the service first (sudo systemctl stop boardcam): the camera has one owner."""
    with PiCameraSource(width=640, height=480, lores_width=160) as camera:
        first = camera.read(timeout=5)
        camera.apply_settings(CameraSettings(exposure_us=10000, analogue_gain=1.5))
        frames = [camera.read(timeout=5) for _ in range(10)]
    assert first.image.shape == (480, 640, 3) and first.image.dtype == np.uint8
    assert first.lores is not None and first.lores.shape == (120, 160)
    assert [f.index for f in frames] == list(range(2, 12))
    assert all(b.timestamp > a.timestamp for a, b in zip(frames, frames[1:]))


# ------------------------------------------------------------------ metadata for freezing settings
def settling(frame: int) -> dict:
    """Auto exposure and white balance that hunt for four frames, then hold still."""
    if frame <= 4:
        return {"ExposureTime": 30000 - 4000 * frame, "AnalogueGain": 4.0, "ColourGains": (1.2, 2.4),
                "LensPosition": 0.5}
    return {"ExposureTime": 12000 + (frame % 3 - 1) * 1000, "AnalogueGain": 2.0, "ColourGains": (1.9, 1.5),
            "LensPosition": 2.5, "Lux": 310.0}


def test_last_metadata_is_the_last_frames_request_metadata(world: FakeWorld) -> None:
    world.metadata = settling
    camera = source()
    assert camera.last_metadata == {}
    with camera:
        camera.read()
        camera.read()
        assert camera.last_metadata["SensorTimestamp"] == 2
        assert camera.last_metadata["ExposureTime"] == 30000 - 8000
        camera.read()
        assert camera.last_metadata["SensorTimestamp"] == 3


def test_freezing_fixes_what_auto_exposure_settled_on_and_applies_it(world: FakeWorld) -> None:
    from boardcam.calibration.settings import freeze_settings

    world.metadata = settling
    camera = source()
    with camera:
        camera.apply_settings(LOCKED)  # a previous lock must not be what is measured
        frozen = freeze_settings(camera, frames=10)
        assert world.opened[0].applied["AeEnable"] is True  # settling ran automatic
        assert frozen == CameraSettings(exposure_us=12000, analogue_gain=2.0, colour_gains=(1.9, 1.5),
                                        lens_position=2.5)
        camera.apply_settings(frozen)
    assert world.opened[0].applied["ExposureTime"] == 12000
    assert world.opened[0].applied["AwbEnable"] is False


def test_calibrate_settings_freezes_a_pi_camera(world: FakeWorld, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from boardcam.calibration.store import load_calibration_with_message
    from boardcam.firmware.cli import main

    world.metadata = settling
    path = tmp_path / "calibration.json"
    assert main(["calibrate", "settings", "--source", "picamera2", "--frames", "10",
                 "--calibration", str(path)]) == 0
    assert "ExposureTime" in capsys.readouterr().out
    calibration, message = load_calibration_with_message(path)
    assert message is None
    assert calibration.camera_settings.exposure_us == 12000
    assert calibration.camera_settings.colour_gains == (1.9, 1.5)


def test_calibrate_board_freezes_a_pi_camera_first_and_stores_the_reference(  # type: ignore[no-untyped-def]
    world: FakeWorld, tmp_path, capsys
) -> None:
    from scenegen import SceneParams, game_positions, render_scene

    from boardcam.calibration.store import load_calibration_with_message
    from boardcam.firmware.cli import main

    empty = game_positions(5)[0]
    world.scene = render_scene(empty, SceneParams(size=(960, 720), tile_mm=51.0), 8).image[..., ::-1].copy()
    world.metadata = settling
    path = tmp_path / "calibration.json"
    assert main(["calibrate", "board", "--source", "picamera2", "--calibration", str(path)]) == 0
    assert "camera settings fixed" in capsys.readouterr().err
    calibration, message = load_calibration_with_message(path)
    assert message is None
    assert calibration.camera_settings.exposure_us == 12000  # what auto exposure settled on
    assert world.opened[-1].applied["AwbEnable"] is False  # and the board frame was taken locked
    assert calibration.reference_problem() is None
    assert calibration.learned_appearance().reference is not None
