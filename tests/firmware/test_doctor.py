"""``boardcam doctor`` with injected probes: a laptop, a healthy Pi and each broken part."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from fake_picamera2 import CameraPlan, FakeWorld

from boardcam.calibration.store import Calibration, save_calibration
from boardcam.firmware import cli
from boardcam.firmware.doctor import (
    FAIL,
    OK,
    SKIP,
    WARN,
    CameraReport,
    Probes,
    check_disk,
    check_service,
    colour_order_from_luma,
    format_report,
    probe_camera,
    run_doctor,
)

PI_MODEL = "Raspberry Pi 4 Model B Rev 1.4"
HEALTHY_GROUPS = {"boardcam", "video", "gpio", "i2c", "spi"}


def textured_scene(seed: int = 3) -> np.ndarray:
    """A colourful RGB scene (red and blue vary independently), like a board under a lamp."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)
    return np.kron(blocks, np.ones((40, 40, 1), dtype=np.uint8))


def fake_camera(world: FakeWorld):
    def probe(width: int = 1640, height: int = 1232) -> CameraReport:
        return probe_camera(lambda: world.module().Picamera2, width=320, height=240, timeout=0.1)

    return probe


def systemctl(active: str = "active", enabled: str = "enabled"):
    calls: list[Sequence[str]] = []

    def run(command: Sequence[str]) -> tuple[int, str]:
        calls.append(command)
        answer = {"is-active": active, "is-enabled": enabled}[command[1]]
        return (0 if answer in ("active", "enabled") else 3), answer

    return run


def laptop(**overrides) -> Probes:
    defaults = dict(
        model=lambda: None,
        camera=lambda **kw: pytest.fail("a laptop must not open a Pi camera"),
        gpio_chips=lambda: [],
        exists=lambda path: False,
        can_open=lambda path: False,
        readable=lambda path: True,
        i2c_probe=lambda port, address: None,
        service_user_groups=lambda: None,
        free_bytes=lambda path: 20 * 1024**3,
        run=lambda command: None,
        unit_installed=lambda: False,
        environ={},
    )
    defaults.update(overrides)
    return Probes(**defaults)


def healthy_pi(world: FakeWorld, **overrides) -> Probes:
    values = dict(
        model=lambda: PI_MODEL,
        camera=fake_camera(world),
        gpio_chips=lambda: ["/dev/gpiochip0"],
        exists=lambda path: True,
        can_open=lambda path: True,
        i2c_probe=lambda port, address: True,
        service_user_groups=lambda: set(HEALTHY_GROUPS),
        run=systemctl(),
        unit_installed=lambda: True,
    )
    values.update(overrides)
    return laptop(**values)


@pytest.fixture
def world() -> FakeWorld:
    fake = FakeWorld()
    fake.scene = textured_scene()
    return fake


@pytest.fixture
def state(tmp_path: Path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir()
    save_calibration(Calibration(), directory / "calibration.json")
    return directory


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.fixture
def ssd1306(tmp_path: Path) -> Path:
    return config_file(tmp_path, '[display]\nkind = "ssd1306"\ni2c_address = 0x3C\n')


def by_name(report) -> dict:
    return {check.name: check for check in report.checks}


# ------------------------------------------------------------------ whole reports
def test_on_a_laptop_it_says_not_a_raspberry_pi_and_passes(tmp_path: Path, state: Path) -> None:
    report = run_doctor(laptop(), state_dir=state, config=config_file(tmp_path, ""))
    checks = by_name(report)
    assert not report.raspberry_pi and report.exit_code == 0
    assert checks["platform"].status == SKIP
    assert {checks[n].status for n in ("camera", "gpio", "display")} == {SKIP}
    assert "not a Raspberry Pi" in format_report(report)


def test_a_healthy_pi(world: FakeWorld, state: Path, ssd1306: Path) -> None:
    report = run_doctor(healthy_pi(world), state_dir=state, config=ssd1306)
    checks = by_name(report)
    assert report.exit_code == 0, format_report(report)
    assert [c.name for c in report.checks] == ["platform", "camera", "gpio", "display",
                                              "calibration", "config", "disk", "service"]
    assert all(c.status == OK for c in report.checks), format_report(report)
    assert "colour order BGR (measured)" in checks["camera"].summary
    assert "answers at 0x3C" in checks["display"].summary
    assert report.to_json()["raspberry_pi"] is True


def test_json_report_is_serialisable(world: FakeWorld, state: Path, ssd1306: Path) -> None:
    report = run_doctor(healthy_pi(world), state_dir=state, config=ssd1306)
    document = json.loads(json.dumps(report.to_json()))
    assert document["ok"] is True
    assert {c["name"] for c in document["checks"]} >= {"camera", "service", "disk"}


def test_every_problem_comes_with_a_fix(world: FakeWorld, state: Path, ssd1306: Path) -> None:
    world.cameras = 0
    probes = healthy_pi(world, gpio_chips=lambda: [], i2c_probe=lambda p, a: False,
                        run=systemctl("failed"), free_bytes=lambda p: 10 * 1024**2)
    report = run_doctor(probes, state_dir=state, config=ssd1306)
    broken = [c for c in report.checks if c.status == FAIL]
    assert {c.name for c in broken} == {"camera", "gpio", "display", "disk", "service"}
    assert all(c.fix for c in broken)
    assert report.exit_code == 1
    text = format_report(report)
    assert text.count("fix:") >= 5 and "5 problem(s)" in text


# ------------------------------------------------------------------ camera
def check(report, name: str):
    return by_name(report)[name]


def doctor_camera(world: FakeWorld, state: Path, **overrides):
    return check(run_doctor(healthy_pi(world, **overrides), state_dir=state,
                            config=None, camera=True), "camera")


def test_no_camera(world: FakeWorld, state: Path) -> None:
    world.cameras = 0
    found = doctor_camera(world, state)
    assert found.status == FAIL and "ribbon cable" in found.fix


def test_picamera2_missing(state: Path) -> None:
    found = check(run_doctor(healthy_pi(FakeWorld(), camera=lambda **kw: probe_camera(
        _raise(ImportError("No module named 'picamera2'")))), state_dir=state), "camera")
    assert found.status == FAIL and "apt install python3-picamera2" in found.fix


def test_picamera2_broken_by_numpy_points_at_the_numpy_trap(state: Path) -> None:
    message = "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.2.6"
    found = check(run_doctor(healthy_pi(FakeWorld(), camera=lambda **kw: CameraReport(
        import_error=message)), state_dir=state), "camera")
    assert found.status == FAIL and "NumPy" in found.fix and "install.sh" in found.fix


def test_a_camera_that_delivers_nothing(world: FakeWorld, state: Path) -> None:
    world.plans = [CameraPlan(frames=0), CameraPlan(frames=0)]
    found = doctor_camera(world, state)
    assert found.status == FAIL and "0 frame(s)" in found.summary


def test_a_busy_camera_is_fine_when_the_service_has_it(world: FakeWorld, state: Path) -> None:
    world.plans = [CameraPlan(fail_open=RuntimeError("Device or resource busy"))]
    assert doctor_camera(world, state).status == OK
    world.plans = [CameraPlan(fail_open=RuntimeError("Device or resource busy"))]
    found = doctor_camera(world, state, run=systemctl("inactive"))
    assert found.status == FAIL and "systemctl stop boardcam" in found.fix


def test_camera_probe_can_be_turned_off(world: FakeWorld, state: Path) -> None:
    report = run_doctor(healthy_pi(world, camera=lambda **kw: pytest.fail("opened")),
                        state_dir=state, camera=False)
    assert check(report, "camera").status == SKIP


def test_the_probe_uses_the_configured_size(world: FakeWorld, state: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []

    def probe(width: int, height: int) -> CameraReport:
        seen.append((width, height))
        return CameraReport(cameras=("imx708",), frames=3, size=(width, height),
                            main_format="RGB888", colour_order="BGR")

    config = config_file(tmp_path, "[source]\nwidth = 1280\nheight = 960\n")
    run_doctor(healthy_pi(world, camera=probe), state_dir=state, config=config)
    assert seen == [(1280, 960)]


def _raise(error: Exception):
    def load():
        raise error

    return load


# ------------------------------------------------------------------ colour order
def luma_of(rgb: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    import cv2

    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA).astype(np.float64)
    y = 16 + 219 / 255 * (0.2126 * small[..., 0] + 0.7152 * small[..., 1] + 0.0722 * small[..., 2])
    return np.round(y).astype(np.uint8)


def test_colour_order_measured_against_the_cameras_own_luminance() -> None:
    rgb = textured_scene(7)
    luma = luma_of(rgb, (64, 48))
    assert colour_order_from_luma(np.ascontiguousarray(rgb[..., ::-1]), luma) == "BGR"
    assert colour_order_from_luma(rgb, luma) == "RGB"


def test_a_grey_scene_cannot_tell_the_colour_order() -> None:
    grey = np.repeat(textured_scene(1)[..., :1], 3, axis=2)
    assert colour_order_from_luma(grey, luma_of(grey, (64, 48))) == "unknown"


def test_a_wrong_colour_order_is_reported_as_broken(world: FakeWorld, state: Path) -> None:
    world.force_main_format = "BGR888"  # the source converts it, so the doctor sees BGR…
    assert "BGR (measured)" in doctor_camera(world, state).summary
    found = check(run_doctor(healthy_pi(world, camera=lambda **kw: CameraReport(
        cameras=("imx219",), frames=3, size=(640, 480), main_format="RGB888",
        colour_order="RGB")), state_dir=state), "camera")
    assert found.status == FAIL  # …and a pipeline that did not would be caught


# ------------------------------------------------------------------ gpio and display
def test_service_user_missing_from_gpio(world: FakeWorld, state: Path) -> None:
    report = run_doctor(healthy_pi(world, service_user_groups=lambda: {"boardcam", "video"}),
                        state_dir=state)
    found = check(report, "gpio")
    assert found.status == FAIL and "usermod -aG gpio boardcam" in found.fix


def test_service_user_missing_from_video_cannot_use_the_camera(world, state) -> None:
    report = run_doctor(healthy_pi(world, service_user_groups=lambda: {"boardcam", "gpio"}),
                        state_dir=state)
    found = check(report, "camera")
    assert found.status == FAIL and "usermod -aG video boardcam" in found.fix


def test_calibration_behind_a_closed_directory_suggests_sudo(tmp_path: Path) -> None:
    from boardcam.firmware.doctor import check_calibration

    class Hidden(type(tmp_path)):  # a path whose stat() is refused, like /var/lib/boardcam for pi
        def exists(self) -> bool:  # type: ignore[override]
            raise PermissionError(13, "Permission denied")

    found = check_calibration(Hidden(tmp_path / "calibration.json"),
                              lambda path: pytest.fail("must not try to load"),
                              lambda path: False)
    assert found.status == WARN and "sudo boardcam doctor" in found.fix


def test_gpio_not_writable_by_the_person_running_doctor_is_a_warning(world, state) -> None:
    found = check(run_doctor(healthy_pi(world, can_open=lambda p: False), state_dir=state), "gpio")
    assert found.status == WARN and "usermod -aG gpio" in found.fix


def test_i2c_bus_switched_off(world: FakeWorld, state: Path, ssd1306: Path) -> None:
    probes = healthy_pi(world, exists=lambda path: not path.startswith("/dev/i2c"))
    found = check(run_doctor(probes, state_dir=state, config=ssd1306), "display")
    assert found.status == FAIL and "do_i2c 0" in found.fix


def test_nothing_answers_on_i2c(world: FakeWorld, state: Path, ssd1306: Path) -> None:
    probes = healthy_pi(world, i2c_probe=lambda port, address: False)
    found = check(run_doctor(probes, state_dir=state, config=ssd1306), "display")
    assert found.status == FAIL
    assert "0x3C" in found.summary and "i2cdetect -y 1" in found.fix


def test_spi_display_needs_spidev(world: FakeWorld, state: Path, tmp_path: Path) -> None:
    config = config_file(tmp_path, '[display]\nkind = "st7789"\n')
    probes = healthy_pi(world, exists=lambda path: path != "/dev/spidev0.0")
    found = check(run_doctor(probes, state_dir=state, config=config), "display")
    assert found.status == FAIL and "/dev/spidev0.0" in found.summary and "do_spi 0" in found.fix


def test_terminal_display_needs_no_hardware(world: FakeWorld, state: Path, tmp_path: Path) -> None:
    config = config_file(tmp_path, '[display]\nkind = "terminal"\n')
    assert check(run_doctor(healthy_pi(world), state_dir=state, config=config),
                 "display").status == SKIP


# ------------------------------------------------------------------ files
def test_invalid_config_names_the_key(tmp_path: Path, state: Path) -> None:
    config = config_file(tmp_path, "[display]\nkind = \"ssd1306\"\nbrightness = 3\n")
    report = run_doctor(laptop(), state_dir=state, config=config)
    found = check(report, "config")
    assert found.status == FAIL and "display.brightness" in found.summary
    assert report.exit_code == 1


def test_missing_calibration_is_a_warning_with_the_next_step(tmp_path: Path) -> None:
    report = run_doctor(laptop(), state_dir=tmp_path / "empty", config=config_file(tmp_path, ""))
    found = check(report, "calibration")
    assert found.status == WARN and "boardcam calibrate camera" in found.fix
    assert report.exit_code == 0


def test_a_calibration_told_of_clear_towers_says_so(tmp_path: Path) -> None:
    """The one setting that changes which network reads the lots is worth a glance when a table reads badly."""
    save_calibration(Calibration(appearance={"towers": "clear"}), tmp_path / "calibration.json")
    found = check(run_doctor(laptop(), state_dir=tmp_path, config=config_file(tmp_path, "")), "calibration")
    assert found.status == OK and found.summary.endswith("; towers read as clear plastic")
    save_calibration(Calibration(), tmp_path / "calibration.json")
    found = check(run_doctor(laptop(), state_dir=tmp_path, config=config_file(tmp_path, "")), "calibration")
    assert found.status == OK and "towers" not in found.summary


def test_corrupt_calibration_is_broken(tmp_path: Path) -> None:
    (tmp_path / "calibration.json").write_text("{ half written")
    report = run_doctor(laptop(), state_dir=tmp_path, config=config_file(tmp_path, ""))
    assert check(report, "calibration").status == FAIL


def test_unreadable_calibration_suggests_sudo(state: Path, tmp_path: Path) -> None:
    report = run_doctor(laptop(readable=lambda path: False), state_dir=state,
                        config=config_file(tmp_path, ""))
    found = check(report, "calibration")
    assert found.status == WARN and "sudo boardcam doctor" in found.fix


def test_the_service_state_directory_is_checked_when_the_service_is_installed() -> None:
    from boardcam.firmware.doctor import SERVICE_STATE_DIR, state_directory

    assert state_directory(laptop(unit_installed=lambda: True)) == SERVICE_STATE_DIR
    assert state_directory(laptop(environ={"BOARDCAM_STATE_DIR": "/x"})) == Path("/x")


@pytest.mark.parametrize("free_mb, status", [(50, FAIL), (300, WARN), (5000, OK)])
def test_disk_thresholds(tmp_path: Path, free_mb: int, status: str) -> None:
    found = check_disk(tmp_path / "not" / "yet", lambda path: free_mb * 1024**2)
    assert found.status == status
    assert found.details["free_bytes"] == free_mb * 1024**2


def test_disk_is_measured_on_the_nearest_existing_directory(tmp_path: Path) -> None:
    asked: list[Path] = []
    check_disk(tmp_path / "a" / "b", lambda path: asked.append(path) or 10**12)
    assert asked == [tmp_path]


# ------------------------------------------------------------------ service
@pytest.mark.parametrize(
    "active, enabled, status, fix",
    [
        ("active", "enabled", OK, ""),
        ("active", "disabled", WARN, "systemctl enable"),
        ("failed", "enabled", FAIL, "journalctl -u boardcam"),
        ("inactive", "enabled", WARN, "systemctl start"),
        ("activating", "enabled", WARN, "journalctl"),
    ],
)
def test_service_states(active: str, enabled: str, status: str, fix: str) -> None:
    found = check_service(systemctl(active, enabled), unit_installed=True)
    assert found.status == status and fix in found.fix


def test_service_not_installed_or_no_systemctl() -> None:
    assert check_service(systemctl(), unit_installed=False).status == SKIP
    assert check_service(lambda command: None, unit_installed=True).status == SKIP


# ------------------------------------------------------------------ command line
def test_cli_doctor_json(tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = config_file(tmp_path, "")
    status = cli.main(["doctor", "--json", "--no-camera", "--state-dir", str(state),
                       "--config", str(config)])
    document = json.loads(capsys.readouterr().out)
    assert status == (0 if document["ok"] else 1)
    names = [c["name"] for c in document["checks"]]
    assert names[0] == "platform" and "service" in names
    assert check_by(document, "config")["status"] == OK
    assert check_by(document, "calibration")["status"] == OK


def test_cli_doctor_fails_on_a_broken_config(tmp_path: Path, state: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    config = config_file(tmp_path, "[nonsense]\n")
    status = cli.main(["doctor", "--no-camera", "--state-dir", str(state), "--config", str(config)])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL  config" in out and "unknown section [nonsense]" in out


def check_by(document: dict, name: str) -> dict:
    return next(c for c in document["checks"] if c["name"] == name)


def test_probes_are_replaceable_one_by_one() -> None:
    probes = dataclasses.replace(Probes(), model=lambda: PI_MODEL)
    assert probes.model() == PI_MODEL


# ------------------------------------------------------------------ on a real Pi
@pytest.mark.hardware
def test_real_camera_delivers_bgr_frames() -> None:
    """Stop the service first (sudo systemctl stop boardcam): the camera has one owner."""
    found = probe_camera(width=640, height=480)
    assert found.cameras, "no camera attached"
    assert found.frames == 3, found.error
    assert found.main_format == "RGB888"
    assert found.colour_order in ("BGR", "unknown")


@pytest.mark.hardware
def test_real_doctor_on_a_pi_finds_the_gpio() -> None:
    report = run_doctor(camera=False)
    checks = by_name(report)
    assert report.raspberry_pi and checks["platform"].status == OK
    assert checks["gpio"].status in (OK, WARN), checks["gpio"]
