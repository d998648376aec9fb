"""systemd/boardcam.service: the keys the deployment depends on, and systemd's own check."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from boardcam.firmware.sources.picamera import PiCameraSource

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "boardcam.service"

# Each device the referee opens, and the /proc/devices group that covers it.
DEVICE_GROUPS = {
    "/dev/video0 (libcamera)": "char-video4linux",
    "/dev/media0 (libcamera)": "char-media",
    "/dev/dma_heap/linux,cma (picamera2 buffers)": "char-dma_heap",
    "/dev/gpiochip0 (lights, buttons)": "char-gpiochip",
    "/dev/i2c-1 (SSD1306)": "char-i2c",
    "/dev/spidev0.0 (ST7789)": "char-spi",
}


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """Sections -> [(key, value)] in order; repeated keys (DeviceAllow=) are kept."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = sections.setdefault(header.group(1), [])
            continue
        assert current is not None, f"key outside a section: {line}"
        key, sep, value = line.partition("=")
        assert sep, f"not a key=value line: {line}"
        current.append((key.strip(), value.strip()))
    return sections


@pytest.fixture(scope="module")
def unit() -> dict[str, list[tuple[str, str]]]:
    return parse_unit(UNIT.read_text())


def values(unit, section: str, key: str) -> list[str]:
    return [v for k, v in unit[section] if k == key]


def value(unit, section: str, key: str) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= appears {len(found)} times"
    return found[0]


def seconds(text: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|sec|min|ms)?", text)
    assert match, text
    number, unit_name = float(match.group(1)), match.group(2) or "s"
    return number * {"s": 1, "sec": 1, "min": 60, "ms": 0.001}[unit_name]


@pytest.mark.parametrize(
    "key, expected",
    [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        ("Restart", "on-failure"),
        ("User", "boardcam"),
        ("StateDirectory", "boardcam"),
        ("ConfigurationDirectory", "boardcam"),
        ("WorkingDirectory", "/var/lib/boardcam"),
        ("ExecStart", "/opt/boardcam/venv/bin/boardcam run"),
        ("DevicePolicy", "closed"),
        ("StandardOutput", "journal"),
        ("StandardError", "journal"),
        ("ProtectSystem", "strict"),
        ("NoNewPrivileges", "yes"),
    ],
)
def test_required_service_keys(unit, key: str, expected: str) -> None:
    assert value(unit, "Service", key) == expected


def test_the_service_user_is_in_the_hardware_groups(unit) -> None:
    groups = value(unit, "Service", "SupplementaryGroups").split()
    assert set(groups) >= {"video", "gpio", "i2c", "spi"}


def test_working_directory_is_the_writable_state_directory(unit) -> None:
    # ProtectSystem=strict makes everything else read-only; lgpio writes in its cwd.
    state = "/var/lib/" + value(unit, "Service", "StateDirectory")
    assert value(unit, "Service", "WorkingDirectory") == state
    assert f"LG_WD={state}" in values(unit, "Service", "Environment")


def test_watchdog_outlasts_a_healing_camera_stall(unit) -> None:
    watchdog = seconds(value(unit, "Service", "WatchdogSec"))
    assert watchdog > PiCameraSource().longest_read_s(timeout=2.0)
    assert seconds(value(unit, "Service", "RestartSec")) > 0


@pytest.mark.parametrize("device, group", sorted(DEVICE_GROUPS.items()))
def test_every_device_the_referee_uses_stays_reachable(unit, device: str, group: str) -> None:
    allowed = {entry.split()[0]: entry.split()[1] for entry in values(unit, "Service", "DeviceAllow")}
    assert group in allowed, f"{device} would be blocked by DevicePolicy=closed"
    assert set(allowed[group]) >= {"r", "w"}


def test_sandboxing_does_not_hide_devices_or_groups(unit) -> None:
    service = dict(unit["Service"])
    # PrivateDevices=yes replaces /dev; PrivateUsers=yes unmaps video/gpio/i2c/spi.
    assert service.get("PrivateDevices", "no") in ("no", "false", "0")
    assert service.get("PrivateUsers", "no") in ("no", "false", "0")


def test_it_starts_at_boot(unit) -> None:
    assert value(unit, "Install", "WantedBy") == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # The venv does not exist on this machine: point ExecStart at something that
    # does, so verify judges everything else in the file.
    text = UNIT.read_text()
    text = text.replace("ExecStart=/opt/boardcam/venv/bin/boardcam run", "ExecStart=/bin/true run")
    copy = tmp_path / "boardcam.service"
    copy.write_text(text)
    result = subprocess.run(
        ["systemd-analyze", "verify", str(copy)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "boardcam.service" in line]
    assert result.returncode == 0 and not complaints, result.stdout + result.stderr


def test_exec_start_runs_a_real_subcommand(unit) -> None:
    from boardcam.firmware.cli import build_parser

    program, *arguments = value(unit, "Service", "ExecStart").split()
    assert program.endswith("/bin/boardcam")
    parsed = build_parser().parse_args(arguments)
    assert parsed.command == arguments[0] and callable(parsed.func)
