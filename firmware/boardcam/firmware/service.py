"""Talking to systemd: READY once the camera delivers, WATCHDOG from the frame loop.

The unit is ``Type=notify`` with ``WatchdogSec=``: systemd only considers the
referee started when :meth:`ServiceNotifier.frame_delivered` has seen the
first real frame, and restarts it when the pings stop.  The pings come from
the frame loop itself (not a timer thread) on purpose: a thread would keep
pinging while the camera or the loop is hung, which is exactly the failure
the watchdog is there to catch.

Outside systemd (a laptop, ``boardcam demo``, the tests) ``$NOTIFY_SOCKET`` is
unset and every call is a cheap no-op.  The ``sdnotify`` package (the ``[pi]``
extra) is used when installed; otherwise a few lines of stdlib send the same
datagrams, so the base install needs nothing extra.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_log = logging.getLogger(__name__)

Sender = Callable[[str], None]


@dataclass(frozen=True)
class WatchdogSettings:
    """What systemd asked for: ping at least every ``timeout_s``; None = no watchdog."""

    timeout_s: float | None

    @property
    def ping_interval_s(self) -> float | None:
        """Half the timeout, as sd_watchdog_enabled(3) recommends, so one late frame is not fatal."""
        return None if self.timeout_s is None else self.timeout_s / 2


def watchdog_settings(environ: Mapping[str, str], pid: int) -> WatchdogSettings:
    """Read ``$WATCHDOG_USEC`` (and ``$WATCHDOG_PID``, which must be us when set)."""
    raw = environ.get("WATCHDOG_USEC", "").strip()
    owner = environ.get("WATCHDOG_PID", "").strip()
    if not raw:
        return WatchdogSettings(None)
    if owner and owner != str(pid):
        return WatchdogSettings(None)
    try:
        usec = int(raw)
    except ValueError:
        _log.warning("ignoring WATCHDOG_USEC=%r: not a number of microseconds", raw)
        return WatchdogSettings(None)
    return WatchdogSettings(usec / 1_000_000 if usec > 0 else None)


def socket_address(notify_socket: str) -> str | None:
    """The address to send to; systemd writes abstract sockets with a leading '@'."""
    if not notify_socket:
        return None
    if notify_socket.startswith("@"):
        return "\0" + notify_socket[1:]
    if notify_socket.startswith("/"):
        return notify_socket
    return None  # vsock:… and other transports are for VMs, not this appliance


def datagram_sender(notify_socket: str) -> Sender | None:
    """A stdlib sender for ``$NOTIFY_SOCKET`` (what sdnotify does, without the dependency)."""
    address = socket_address(notify_socket)
    if address is None:
        return None

    def send(message: str) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall(message.encode("utf-8"))

    return send


def sdnotify_sender() -> Sender | None:
    """The ``sdnotify`` package's notifier when it is installed (the [pi] extra), else None."""
    try:
        import sdnotify  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    notifier = sdnotify.SystemdNotifier()
    return lambda message: notifier.notify(message)


class ServiceNotifier:
    """sd_notify for the referee: ready once, status on change, watchdog per frame.

    Every method is safe to call when not running under systemd.
    """

    def __init__(
        self,
        sender: Sender | None,
        watchdog: WatchdogSettings = WatchdogSettings(None),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender = sender
        self._watchdog = watchdog
        self._clock = clock
        self._ready = False
        self._last_ping: float | None = None
        self._last_status: str | None = None

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        prefer_sdnotify: bool = True,
    ) -> "ServiceNotifier":
        """The notifier for this process: a no-op unless systemd set ``$NOTIFY_SOCKET``."""
        env = os.environ if environ is None else environ
        notify_socket = env.get("NOTIFY_SOCKET", "")
        sender: Sender | None = None
        if socket_address(notify_socket) is not None:
            # sdnotify reads $NOTIFY_SOCKET from os.environ itself, so only use
            # it when we were handed the real environment.
            if prefer_sdnotify and environ is None:
                sender = sdnotify_sender()
            if sender is None:
                sender = datagram_sender(notify_socket)
        return cls(sender, watchdog_settings(env, os.getpid()), clock)

    @property
    def enabled(self) -> bool:
        """True when there is a systemd to talk to."""
        return self._sender is not None

    @property
    def is_ready(self) -> bool:
        return self._ready

    @property
    def watchdog(self) -> WatchdogSettings:
        return self._watchdog

    def _send(self, message: str) -> bool:
        if self._sender is None:
            return False
        try:
            self._sender(message)
        except OSError as error:  # systemd gone (shutdown) must never kill the referee
            _log.debug("sd_notify %r failed: %s", message, error)
            return False
        return True

    def ready(self, status: str = "watching the board") -> None:
        """READY=1 (once): systemd now counts the service as started."""
        if self._ready:
            return
        self._ready = True
        self._last_status = status
        self._send(f"READY=1\nSTATUS={one_line(status)}")
        self._last_ping = self._clock()

    def status(self, text: str) -> None:
        """STATUS=… shown by ``systemctl status boardcam``; repeats are not resent."""
        if text == self._last_status:
            return
        self._last_status = text
        self._send(f"STATUS={one_line(text)}")

    def watchdog_ping(self) -> bool:
        """WATCHDOG=1 when half the watchdog interval has passed; True when sent."""
        interval = self._watchdog.ping_interval_s
        if interval is None or self._sender is None:
            return False
        now = self._clock()
        if self._last_ping is not None and now - self._last_ping < interval:
            return False
        self._last_ping = now
        return self._send("WATCHDOG=1")

    def frame_delivered(self) -> None:
        """Call once per frame from the loop: first frame -> READY, then rate-limited pings."""
        if not self._ready:
            self.ready()
            return
        self.watchdog_ping()

    def stopping(self, status: str = "stopping") -> None:
        """STOPPING=1 so systemd does not mistake a clean exit for a hang."""
        self._send(f"STOPPING=1\nSTATUS={one_line(status)}")


def one_line(text: str) -> str:
    """sd_notify fields are newline-separated, so a status must fit on one line."""
    return " ".join(text.split())


def systemd_heartbeat(environ: Mapping[str, str] | None = None) -> Callable[[], None] | None:
    """The per-frame callback for the loop's ``heartbeat=``; None when not under systemd.

    A drop-in for a hand-rolled notifier: READY=1 on the first frame, then
    WATCHDOG=1 at half of ``$WATCHDOG_USEC``.
    """
    notifier = ServiceNotifier.from_environment(environ)
    return notifier.frame_delivered if notifier.enabled else None
