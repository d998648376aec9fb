"""``boardcam doctor``: what is wrong with this installation, and how to fix it.

Written for the person beside the board, not a programmer: every check ends
in one line saying what was found and, when it is not fine, the command or
the cable to fix.  Each check is a small function of plain inputs; everything
that touches the machine (files under /dev and /proc, the camera, I2C,
systemctl) comes in through :class:`Probes`, so the tests run every check on
an x86 laptop with fakes, and the real doctor on a laptop simply says
"not a Raspberry Pi" instead of failing.
"""

from __future__ import annotations

import glob
import grp
import os
import pwd
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"

SERVICE = "boardcam.service"
SERVICE_USER = "boardcam"
SERVICE_STATE_DIR = Path("/var/lib/boardcam")
SERVICE_CONFIG = Path("/etc/boardcam/config.toml")
SERVICE_UNIT = Path("/etc/systemd/system") / SERVICE
MODEL_FILE = Path("/proc/device-tree/model")

MIN_FREE_BYTES = 100 * 1024**2  # below this a game log may not fit: broken
LOW_FREE_BYTES = 500 * 1024**2  # below this: warn early

REINSTALL = "sudo systemd/install.sh (from the boardcam checkout)"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    status: str  # ok | warn | fail | skip
    summary: str
    fix: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def broken(self) -> bool:
        return self.status == FAIL

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "summary": self.summary,
                "fix": self.fix, "details": dict(self.details)}


@dataclass(frozen=True)
class Report:
    model: str | None
    checks: tuple[Check, ...]

    @property
    def raspberry_pi(self) -> bool:
        return is_raspberry_pi(self.model)

    @property
    def ok(self) -> bool:
        return not any(check.broken for check in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict[str, Any]:
        return {"raspberry_pi": self.raspberry_pi, "model": self.model, "ok": self.ok,
                "checks": [check.to_json() for check in self.checks]}


def is_raspberry_pi(model: str | None) -> bool:
    return bool(model) and "raspberry pi" in (model or "").lower()


# ------------------------------------------------------------------ platform
def check_platform(model: str | None) -> Check:
    if is_raspberry_pi(model):
        return Check("platform", OK, str(model))
    seen = f" ({model})" if model else ""
    return Check(
        "platform", SKIP,
        f"not a Raspberry Pi{seen}: camera, GPIO and display checks are skipped",
        "nothing to fix on a laptop: try `boardcam demo`, or `boardcam run --source opencv`",
    )


# ------------------------------------------------------------------ camera
@dataclass(frozen=True)
class CameraReport:
    """What a short look through the Pi camera found (see :func:`probe_camera`)."""

    import_error: str = ""
    cameras: tuple[str, ...] = ()
    frames: int = 0
    size: tuple[int, int] | None = None
    main_format: str = ""
    colour_order: str = ""  # measured: BGR | RGB | unknown
    error: str = ""

    @property
    def busy(self) -> bool:
        text = self.error.lower()
        return "busy" in text or "in use" in text


def colour_order_from_luma(image: np.ndarray, luma: np.ndarray) -> str:
    """Which channel order makes ``image`` agree with the camera's own luminance.

    The lores Y plane comes out of the ISP independently of the main stream's
    byte order, and luminance weighs red about three times as much as blue.
    So: compute the grey value of the main image once assuming B,G,R and once
    assuming R,G,B, and see which tracks Y better (correlation, so limited
    range YUV does not matter).  A grey scene cannot tell: "unknown".
    """
    import cv2

    height, width = luma.shape[:2]
    small = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA).astype(np.float64)
    y = luma.astype(np.float64).ravel()
    first, second, third = (small[..., i].ravel() for i in range(3))
    as_bgr = 0.114 * first + 0.587 * second + 0.299 * third
    as_rgb = 0.299 * first + 0.587 * second + 0.114 * third
    if np.std(first - third) < 2.0 or np.std(y) < 1.0:
        return "unknown"
    corr_bgr = float(np.corrcoef(as_bgr, y)[0, 1])
    corr_rgb = float(np.corrcoef(as_rgb, y)[0, 1])
    if abs(corr_bgr - corr_rgb) < 0.002:
        return "unknown"
    return "BGR" if corr_bgr > corr_rgb else "RGB"


def probe_camera(
    load_class: Callable[[], Any] | None = None,
    width: int = 1640,
    height: int = 1232,
    frames: int = 3,
    timeout: float = 3.0,
) -> CameraReport:
    """Open the Pi camera briefly, read a few frames, measure the colour order."""
    from boardcam.firmware.sources.base import SourceError
    from boardcam.firmware.sources.picamera import PiCameraSource, list_cameras, load_picamera2

    try:
        picamera2_class = (load_class or load_picamera2)()
    except Exception as error:
        return CameraReport(import_error=str(error))
    try:
        cameras = tuple(str(info.get("Model", "?")) for info in list_cameras(picamera2_class))
    except SourceError as error:
        return CameraReport(error=str(error))
    if not cameras:
        return CameraReport(cameras=())
    source = PiCameraSource(width=width, height=height, reopen_attempts=1, reopen_delay=0,
                            picamera2_class=picamera2_class)
    delivered = 0
    order = "unknown"
    size: tuple[int, int] | None = None
    try:
        with source:
            for _ in range(frames):
                frame = source.read(timeout=timeout)
                delivered += 1
                size = (frame.image.shape[1], frame.image.shape[0])
                if frame.lores is not None and order == "unknown":
                    order = colour_order_from_luma(frame.image, frame.lores)
    except SourceError as error:
        return CameraReport(cameras=cameras, frames=delivered, size=size,
                            main_format=source.main_format, error=str(error))
    return CameraReport(cameras=cameras, frames=delivered, size=size,
                        main_format=source.main_format, colour_order=order)


def check_camera(on_pi: bool, report: Callable[[], CameraReport] | None,
                 service_active: bool = False, service_groups: set[str] | None = None) -> Check:
    if not on_pi:
        return Check("camera", SKIP, "not a Raspberry Pi: no Pi camera to check",
                     "a USB webcam works with `boardcam run --source opencv`")
    if service_groups is not None and "video" not in service_groups:
        return Check("camera", FAIL, f"the service user {SERVICE_USER} is not in group video",
                     _group_hint("video", service_groups))
    if report is None:
        return Check("camera", SKIP, "camera test skipped (--no-camera)")
    found = report()
    if found.import_error:
        numpy_trap = "numpy" in found.import_error.lower()
        fix = (
            "the venv has a NumPy that the apt picamera2 was not built for: reinstall with "
            + REINSTALL + " (it pins NumPy per release)"
            if numpy_trap
            else "sudo apt install python3-picamera2, and a venv made with --system-site-packages: "
            + REINSTALL
        )
        return Check("camera", FAIL, f"picamera2 cannot be imported: {found.import_error}", fix)
    if found.error and not found.cameras:
        return Check("camera", FAIL, found.error,
                     "update the system (sudo apt full-upgrade) and reboot")
    if not found.cameras:
        return Check(
            "camera", FAIL, "no camera detected by libcamera",
            "power off; reseat the ribbon cable (contacts towards the board's contacts), check "
            "camera_auto_detect=1 in /boot/firmware/config.txt, reboot, then "
            "`rpicam-hello --list-cameras`",
        )
    details: dict[str, Any] = {"cameras": list(found.cameras), "frames": found.frames,
                               "main_format": found.main_format,
                               "colour_order": found.colour_order}
    if found.error:
        if found.busy and service_active:
            return Check("camera", OK,
                         f"{found.cameras[0]} present and in use by the running service",
                         details=details)
        if found.busy:
            return Check("camera", FAIL, f"{found.cameras[0]} is busy: {found.error}",
                         "another program holds the camera: sudo systemctl stop boardcam, or "
                         "close rpicam-*/other scripts", details)
        return Check("camera", FAIL,
                     f"{found.cameras[0]} found but delivered {found.frames} frame(s): {found.error}",
                     "check the ribbon cable and power supply (a weak supply stalls the camera)",
                     details)
    size = f"{found.size[0]}x{found.size[1]}" if found.size else "?"
    if found.colour_order == "RGB":
        return Check("camera", FAIL,
                     f"{found.cameras[0]} frames arrive in RGB order, the vision expects BGR",
                     "report this: the main stream format was " + found.main_format, details)
    order = ("colour order BGR (measured)" if found.colour_order == "BGR"
             else "colour order not measurable in this scene (plain grey?)")
    return Check("camera", OK,
                 f"{found.cameras[0]}: {found.frames} frames of {size} {found.main_format}, {order}",
                 details=details)


# ------------------------------------------------------------------ permissions
def user_groups(user: str) -> set[str]:
    """Groups of ``user`` from the group database (what a service started now would get)."""
    try:
        primary = grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name
    except KeyError:
        return set()
    return {g.gr_name for g in grp.getgrall() if user in g.gr_mem} | {primary}


def service_user_exists() -> bool:
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        return False
    return True


def _group_hint(group: str, service_groups: set[str] | None) -> str:
    if service_groups is not None and group not in service_groups:
        return f"sudo usermod -aG {group} {SERVICE_USER} && sudo systemctl restart boardcam"
    return f"sudo usermod -aG {group} $USER, then log out and in again"


def check_gpio(on_pi: bool, chips: Sequence[str], can_open: Callable[[str], bool],
               service_groups: set[str] | None) -> Check:
    if not on_pi:
        return Check("gpio", SKIP, "not a Raspberry Pi: no GPIO header")
    if not chips:
        return Check("gpio", FAIL, "no /dev/gpiochip* device",
                     "update the kernel (sudo apt full-upgrade) and reboot")
    details = {"chips": list(chips), "service_user_groups": sorted(service_groups or ())}
    if service_groups is not None and "gpio" not in service_groups:
        return Check("gpio", FAIL, f"the service user {SERVICE_USER} is not in group gpio",
                     _group_hint("gpio", service_groups), details)
    usable = [chip for chip in chips if can_open(chip)]
    if not usable:
        return Check("gpio", WARN, f"{', '.join(chips)} present but not writable by you",
                     _group_hint("gpio", None) + " (the service has its own access)", details)
    return Check("gpio", OK, f"{', '.join(chips)} accessible", details=details)


# ------------------------------------------------------------------ display
@dataclass(frozen=True)
class DisplayWiring:
    """The part of the config the display check needs."""

    kind: str = "terminal"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    spi_port: int = 0
    spi_device: int = 0


def probe_i2c(port: int, address: int) -> bool | None:
    """Does anything acknowledge ``address`` on bus ``port``? None = cannot tell."""
    try:
        from smbus2 import SMBus
    except ImportError:
        return None
    try:
        with SMBus(port) as bus:
            bus.read_byte(address)
    except PermissionError:
        return None
    except OSError:
        return False
    return True


def _bus_device_problem(chip: str, device: str, group: str, enable: str,
                        exists: Callable[[str], bool], can_open: Callable[[str], bool],
                        service_groups: set[str] | None, open_hint: str = "") -> Check | None:
    """What stops a display's bus device (I2C or SPI) from working, or None if it is usable.

    The same three steps for either bus: the interface switched on (the
    device node exists), the service user in the bus's group, and this user
    able to open it.  ``enable`` is the raspi-config call and its config.txt
    alternative for this bus.
    """
    if not exists(device):
        return Check("display", FAIL, f"{chip} configured but {device} does not exist",
                     f"sudo raspi-config nonint {enable} in /boot/firmware/config.txt), then reboot")
    if service_groups is not None and group not in service_groups:
        return Check("display", FAIL, f"the service user {SERVICE_USER} is not in group {group}",
                     _group_hint(group, service_groups))
    if not can_open(device):
        return Check("display", WARN, f"{device} exists but you cannot open it",
                     _group_hint(group, None) + open_hint)
    return None


def check_display(on_pi: bool, wiring: DisplayWiring, exists: Callable[[str], bool],
                  can_open: Callable[[str], bool],
                  i2c_probe: Callable[[int, int], bool | None],
                  service_groups: set[str] | None) -> Check:
    if wiring.kind in ("none", "terminal"):
        return Check("display", SKIP, f"display.kind = {wiring.kind!r}: no hardware display")
    if not on_pi:
        return Check("display", SKIP, f"not a Raspberry Pi: {wiring.kind} not checked")
    if wiring.kind == "ssd1306":
        device = f"/dev/i2c-{wiring.i2c_port}"
        address = f"0x{wiring.i2c_address:02X}"
        problem = _bus_device_problem(
            "SSD1306", device, "i2c", "do_i2c 0 (or dtparam=i2c_arm=on", exists, can_open, service_groups,
            open_hint="; or run `sudo boardcam doctor`")
        if problem is not None:
            return problem
        answer = i2c_probe(wiring.i2c_port, wiring.i2c_address)
        if answer is False:
            return Check(
                "display", FAIL, f"nothing answers at {address} on {device}",
                f"check wiring: SDA to pin 3 (GPIO2), SCL to pin 5 (GPIO3), VCC 3.3 V, GND; "
                f"`i2cdetect -y {wiring.i2c_port}` shows the address (0x3C or 0x3D: set "
                "display.i2c_address)",
            )
        if answer is None:
            return Check("display", OK, f"{device} present ({address} not probed)")
        return Check("display", OK, f"SSD1306 answers at {address} on {device}")
    if wiring.kind == "st7789":
        device = f"/dev/spidev{wiring.spi_port}.{wiring.spi_device}"
        problem = _bus_device_problem(
            "ST7789", device, "spi", "do_spi 0 (or dtparam=spi=on", exists, can_open, service_groups)
        if problem is not None:
            return problem
        return Check("display", OK, f"{device} present (SPI displays cannot be probed; "
                     "a blank screen means wiring: see docs/hardware.md)")
    return Check("display", WARN, f"unknown display.kind {wiring.kind!r}",
                 "use none, terminal, ssd1306 or st7789")


# ------------------------------------------------------------------ files
def check_config(load: Callable[[], Any]) -> tuple[Check, Any | None]:
    """Load the config the app would use; the config object is returned for the other checks."""
    from boardcam.engine.errors import InputError

    try:
        config = load()
    except InputError as error:
        return Check("config", FAIL, str(error),
                     "fix that key in the file, or delete it to fall back to the shipped "
                     "defaults (firmware/boardcam/firmware/default-config.toml)"), None
    except OSError as error:
        return Check("config", FAIL, f"config unreadable: {error}",
                     "run `sudo boardcam doctor` or fix the file's permissions"), None
    except ImportError as error:  # an incomplete install: say so instead of crashing
        return Check("config", FAIL, f"config module missing: {error}", REINSTALL), None
    origin = getattr(config, "path", "") or "shipped defaults (no config file)"
    return Check("config", OK, f"valid: {origin}"), config


def check_calibration(path: Path, load: Callable[[Path], tuple[Any, str | None]],
                      readable: Callable[[Path], bool]) -> Check:
    if _exists(path) and not readable(path):
        return Check("calibration", WARN, f"{path} exists but you cannot read it",
                     "run `sudo boardcam doctor` to check the service's calibration")
    calibration, message = load(path)
    if calibration is None:
        status = WARN if not _exists(path) else FAIL
        # the store's message ends in its own advice; the fix line says it once
        summary = (message or f"no calibration at {path}").split("; run ")[0]
        return Check("calibration", status, summary,
                     "boardcam calibrate camera, then boardcam calibrate board (the app runs "
                     "uncalibrated meanwhile)")
    created = getattr(calibration, "created", "") or ""
    return Check("calibration", OK, f"valid: {path}" + (f" ({created})" if created else "")
                 + ("; towers read as clear plastic" if getattr(calibration, "towers", "opaque") == "clear" else ""))


def _exists(path: Path) -> bool:
    """Path.exists() that says True for a file hidden behind a directory we may not enter."""
    try:
        return path.exists()
    except PermissionError:
        return True


def check_disk(directory: Path, free_bytes: Callable[[Path], int]) -> Check:
    existing = directory
    while not _exists(existing) and existing != existing.parent:
        existing = existing.parent
    free = free_bytes(existing)
    megabytes = free // 1024**2
    details = {"path": str(directory), "free_bytes": free}
    if free < MIN_FREE_BYTES:
        return Check("disk", FAIL, f"only {megabytes} MB free for {directory}",
                     "free space: sudo apt clean; sudo journalctl --vacuum-size=50M; "
                     "delete old game logs", details)
    if free < LOW_FREE_BYTES:
        return Check("disk", WARN, f"{megabytes} MB free for {directory}",
                     "sudo apt clean; sudo journalctl --vacuum-size=50M", details)
    return Check("disk", OK, f"{megabytes} MB free for {directory}", details=details)


# ------------------------------------------------------------------ service
CommandRunner = Callable[[Sequence[str]], "tuple[int, str] | None"]


def run_command(command: Sequence[str], timeout: float = 10.0) -> tuple[int, str] | None:
    """(exit status, stdout) of a command; None when it is not installed."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return 1, str(error)
    return done.returncode, done.stdout.strip()


def check_service(run: CommandRunner, unit_installed: bool) -> Check:
    if not unit_installed:
        return Check("service", SKIP, "the boardcam service is not installed",
                     "to run at boot: " + REINSTALL)
    active = run(["systemctl", "is-active", SERVICE])
    if active is None:
        return Check("service", SKIP, "systemctl not available")
    state = active[1] or "unknown"
    enabled = run(["systemctl", "is-enabled", SERVICE])
    boot = enabled[1] if enabled else "unknown"
    details = {"active": state, "enabled": boot}
    if state == "active":
        if boot != "enabled":
            return Check("service", WARN, f"running but {boot}: will not start at boot",
                         "sudo systemctl enable boardcam", details)
        return Check("service", OK, "active, starts at boot", details=details)
    if state in ("activating", "reloading"):
        return Check("service", WARN, f"{state} (waiting for the first camera frame?)",
                     "journalctl -u boardcam -n 50", details)
    if state == "failed":
        return Check("service", FAIL, "failed",
                     "see why: journalctl -u boardcam -n 50; then sudo systemctl restart boardcam",
                     details)
    return Check("service", WARN, f"{state}", "sudo systemctl start boardcam", details)


# ------------------------------------------------------------------ all together
def _read_model(path: Path = MODEL_FILE) -> str | None:
    try:
        return path.read_bytes().rstrip(b"\0").decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def _can_open(path: str) -> bool:
    return os.access(path, os.R_OK | os.W_OK)


def _free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


def _load_config_for(path: Path | None) -> Callable[[], Any]:
    def load() -> Any:
        from boardcam.firmware.config import load_config

        return load_config(path)

    return load


def _load_calibration(path: Path) -> tuple[Any, str | None]:
    from boardcam.calibration.store import load_calibration_with_message

    return load_calibration_with_message(path)


@dataclass(frozen=True)
class Probes:
    """Everything the doctor reads from the machine; replace any of it in tests."""

    model: Callable[[], str | None] = _read_model
    camera: Callable[..., CameraReport] = probe_camera
    gpio_chips: Callable[[], list[str]] = lambda: sorted(glob.glob("/dev/gpiochip*"))
    exists: Callable[[str], bool] = os.path.exists
    can_open: Callable[[str], bool] = _can_open
    readable: Callable[[Path], bool] = lambda path: os.access(path, os.R_OK)
    i2c_probe: Callable[[int, int], bool | None] = probe_i2c
    service_user_groups: Callable[[], set[str] | None] = (
        lambda: user_groups(SERVICE_USER) if service_user_exists() else None
    )
    free_bytes: Callable[[Path], int] = _free_bytes
    run: CommandRunner = run_command
    unit_installed: Callable[[], bool] = SERVICE_UNIT.exists
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def state_directory(probes: Probes, explicit: Path | None = None) -> Path:
    """The state directory worth checking: the service's when the service is installed."""
    if explicit is not None:
        return explicit
    if probes.environ.get("BOARDCAM_STATE_DIR"):
        return Path(probes.environ["BOARDCAM_STATE_DIR"])
    if probes.unit_installed():
        return SERVICE_STATE_DIR
    from boardcam.calibration.store import state_dir

    return state_dir()


def config_path(probes: Probes, explicit: Path | None = None) -> Path | None:
    """The config worth checking: named, the service's when installed, else the app's default."""
    if explicit is not None:
        return explicit
    if (not probes.environ.get("BOARDCAM_CONFIG") and probes.unit_installed()
            and probes.exists(str(SERVICE_CONFIG))):
        return SERVICE_CONFIG
    return None


def run_doctor(probes: Probes | None = None, *, config: Path | None = None,
               state_dir: Path | None = None, camera: bool = True) -> Report:
    probes = probes or Probes()
    model = probes.model()
    on_pi = is_raspberry_pi(model)
    checks: list[Check] = [check_platform(model)]

    config_check, app_config = check_config(_load_config_for(config_path(probes, config)))
    service_check = check_service(probes.run, probes.unit_installed())
    service_active = service_check.details.get("active") == "active"
    service_groups = probes.service_user_groups() if on_pi else None

    source = getattr(app_config, "source", None)
    width = int(getattr(source, "width", 1640) or 1640)
    height = int(getattr(source, "height", 1232) or 1232)
    camera_probe = (lambda: probes.camera(width=width, height=height)) if camera else None
    checks.append(check_camera(on_pi, camera_probe, service_active, service_groups))
    checks.append(check_gpio(on_pi, probes.gpio_chips() if on_pi else [], probes.can_open,
                             service_groups))
    display = getattr(app_config, "display", None)
    wiring = DisplayWiring(
        kind=str(getattr(display, "kind", "terminal")),
        i2c_port=int(getattr(display, "i2c_port", 1)),
        i2c_address=int(getattr(display, "i2c_address", 0x3C)),
        spi_port=int(getattr(display, "spi_port", 0)),
        spi_device=int(getattr(display, "spi_device", 0)),
    )
    checks.append(check_display(on_pi, wiring, probes.exists, probes.can_open, probes.i2c_probe,
                                service_groups))
    directory = state_directory(probes, state_dir)
    from boardcam.calibration.store import CALIBRATION_FILENAME

    checks.append(check_calibration(directory / CALIBRATION_FILENAME, _load_calibration,
                                    probes.readable))
    checks.append(config_check)
    checks.append(check_disk(directory, probes.free_bytes))
    checks.append(service_check)
    return Report(model=model, checks=tuple(checks))


LABELS = {OK: "ok", WARN: "WARN", FAIL: "FAIL", SKIP: "--"}


def format_report(report: Report) -> str:
    """The human report: one line per check, a fix line under each problem."""
    title = report.model if report.raspberry_pi else "not a Raspberry Pi"
    lines = [f"boardcam doctor: {title}"]
    for check in report.checks:
        lines.append(f"  {LABELS[check.status]:<4}  {check.name:<11}  {check.summary}")
        if check.fix and check.status in (WARN, FAIL):
            lines.append(f"  {'':<4}  {'':<11}  fix: {check.fix}")
    broken = sum(check.broken for check in report.checks)
    lines.append("everything needed works" if report.ok
                 else f"{broken} problem(s) to fix before the referee can run")
    return "\n".join(lines)
