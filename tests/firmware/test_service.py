"""sd_notify from the frame loop: READY once, rate-limited WATCHDOG, no-op off systemd."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from boardcam.firmware.service import (
    ServiceNotifier,
    WatchdogSettings,
    one_line,
    socket_address,
    watchdog_settings,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def notifier(watchdog_s: float | None = 10.0) -> tuple[ServiceNotifier, list[str], Clock]:
    sent: list[str] = []
    clock = Clock()
    return ServiceNotifier(sent.append, WatchdogSettings(watchdog_s), clock), sent, clock


def test_first_frame_sends_ready_once() -> None:
    service, sent, clock = notifier()
    service.frame_delivered()
    service.frame_delivered()
    assert sent == ["READY=1\nSTATUS=watching the board"]
    assert service.is_ready


def test_watchdog_pings_at_half_the_timeout_not_every_frame() -> None:
    service, sent, clock = notifier(watchdog_s=10.0)
    service.frame_delivered()  # READY
    for _ in range(30):  # 30 frames at 10 fps = 3 s: nothing due yet
        clock.now += 0.1
        service.frame_delivered()
    assert sent.count("WATCHDOG=1") == 0
    clock.now += 2.5  # 5.5 s since READY
    service.frame_delivered()
    service.frame_delivered()
    assert sent.count("WATCHDOG=1") == 1
    clock.now += 5.0
    service.frame_delivered()
    assert sent.count("WATCHDOG=1") == 2


def test_no_watchdog_configured_means_no_pings() -> None:
    service, sent, clock = notifier(watchdog_s=None)
    service.frame_delivered()
    clock.now += 1000
    service.frame_delivered()
    assert sent == ["READY=1\nSTATUS=watching the board"]


def test_status_is_one_line_and_not_repeated() -> None:
    service, sent, _ = notifier()
    service.status("camera stalled:\nreopening")
    service.status("camera stalled:\nreopening")
    service.status("watching")
    assert sent == ["STATUS=camera stalled: reopening", "STATUS=watching"]


def test_a_vanished_systemd_does_not_raise() -> None:
    def broken(message: str) -> None:
        raise ConnectionRefusedError("gone")

    service = ServiceNotifier(broken, WatchdogSettings(1.0))
    service.frame_delivered()
    service.stopping()
    assert service.is_ready


def test_outside_systemd_everything_is_a_no_op() -> None:
    service = ServiceNotifier.from_environment({})
    assert not service.enabled
    service.frame_delivered()
    service.status("x")
    assert service.watchdog_ping() is False


def test_watchdog_settings_from_the_environment() -> None:
    pid = os.getpid()
    assert watchdog_settings({"WATCHDOG_USEC": "30000000"}, pid).timeout_s == 30.0
    assert watchdog_settings({"WATCHDOG_USEC": "30000000"}, pid).ping_interval_s == 15.0
    assert watchdog_settings({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, 2).timeout_s is None
    assert watchdog_settings({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(pid)},
                             pid).timeout_s == 30.0
    assert watchdog_settings({"WATCHDOG_USEC": "junk"}, pid).timeout_s is None
    assert watchdog_settings({}, pid).timeout_s is None


def test_abstract_socket_names_get_a_nul_byte() -> None:
    assert socket_address("@/org/freedesktop/systemd1/notify") == "\0/org/freedesktop/systemd1/notify"
    assert socket_address("/run/systemd/notify") == "/run/systemd/notify"
    assert socket_address("") is None
    assert socket_address("vsock:2:1") is None


def test_builtin_sender_talks_to_a_real_notify_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(path)
        server.settimeout(2)
        service = ServiceNotifier.from_environment(
            {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}
        )
        assert service.enabled
        service.frame_delivered()
        assert server.recv(4096) == b"READY=1\nSTATUS=watching the board"
        service.stopping("bye")
        assert server.recv(4096) == b"STOPPING=1\nSTATUS=bye"


def test_one_line_collapses_whitespace() -> None:
    assert one_line("  a\n b\tc ") == "a b c"


@pytest.mark.parametrize("usec", ["0", "-5"])
def test_non_positive_watchdog_is_off(usec: str) -> None:
    assert watchdog_settings({"WATCHDOG_USEC": usec}, 1).timeout_s is None


def test_systemd_heartbeat_is_none_outside_systemd_and_a_callback_inside(tmp_path: Path) -> None:
    from boardcam.firmware.service import systemd_heartbeat

    assert systemd_heartbeat({}) is None
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(path)
        server.settimeout(2)
        beat = systemd_heartbeat({"NOTIFY_SOCKET": path})
        assert beat is not None
        beat()
        assert server.recv(4096).startswith(b"READY=1")


def test_the_sdnotify_package_is_used_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    sent: list[str] = []
    fake = types.ModuleType("sdnotify")

    class SystemdNotifier:
        def notify(self, state: str) -> None:
            sent.append(state)

    fake.SystemdNotifier = SystemdNotifier  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sdnotify", fake)
    monkeypatch.setenv("NOTIFY_SOCKET", "/run/systemd/notify")
    service = ServiceNotifier.from_environment()
    service.frame_delivered()
    assert sent == ["READY=1\nSTATUS=watching the board"]
