"""The Raspberry Pi camera through picamera2 (libcamera).

Two streams from one sensor readout: ``main`` in ``RGB888`` at the size the
vision wants and a small ``lores`` ``YUV420`` stream whose Y plane is the grey
frame for the every-frame motion check, so the loop never has to shrink a
full frame just to see whether a hand moved.

Facts this module relies on (and the tests pin down with a fake module):

* libcamera names formats by their little-endian word, so ``RGB888`` lands in
  memory as B, G, R — already OpenCV's order; ``BGR888`` would be R, G, B.
* a ``YUV420`` array comes back as ``(height * 3 // 2, stride)``: the first
  ``height`` rows, first ``width`` columns are the luminance.
* ``capture_arrays(..., wait=False)`` returns a job and ``wait(job, timeout)``
  raises ``TimeoutError``, so a stalled camera is noticed without a thread.

A stall (cable knock, ISP hiccup) is healed here: close, reopen, re-apply the
locked settings, carry on with the frame counter intact.  Only when the camera
cannot be brought back does :class:`SourceStalledError` reach the loop, which
keeps its game and tries again; if the whole process hangs, systemd's
watchdog restarts it and the game log resumes the game.

picamera2 is imported only in :meth:`PiCameraSource.open`, so this module is
importable (and testable) on any machine.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from boardcam.firmware.sources.base import Frame, SourceBase, SourceError, SourceStalledError

if TYPE_CHECKING:
    from boardcam.calibration.settings import CameraSettings

_log = logging.getLogger(__name__)

MAIN_FORMAT = "RGB888"
DEFAULT_SIZE = (1640, 1232)  # full field of view, 2x2 binned on the IMX219
DEFAULT_FPS = 30.0
DEFAULT_LORES_WIDTH = 160
OPEN_ALLOWANCE_S = 2.0  # generous time for libcamera to open, configure and start a sensor
LORES_FORMAT = "YUV420"

INSTALL_HINT = (
    "on Raspberry Pi OS run `sudo apt install python3-picamera2` and use a venv made with "
    "--system-site-packages (systemd/install.sh does both)"
)

# What picamera2/libcamera raise when the camera itself fails mid-stream (not our bugs,
# which are left to crash loudly): healed like a stall.
CAMERA_FAILURES: tuple[type[Exception], ...] = (RuntimeError, OSError)
#: ...and what a reopen attempt may meet besides
REOPEN_FAILURES: tuple[type[Exception], ...] = (SourceError, TimeoutError, *CAMERA_FAILURES)

# libcamera ≥ 0.5 only honours a fixed ExposureTime/AnalogueGain when the matching
# *Mode control says Manual (value 1); older releases have no such control.
MANUAL_MODE_CONTROLS = {"ExposureTime": "ExposureTimeMode", "AnalogueGain": "AnalogueGainMode"}
MANUAL = 1

# What "no calibration" means: let the camera meter, balance and focus by itself.
# Both generations of names are listed; the camera keeps the ones it knows.
AUTOMATIC_CONTROLS: dict[str, Any] = {
    "AeEnable": True,
    "ExposureTimeMode": 0,
    "AnalogueGainMode": 0,
    "AwbEnable": True,
    "AfMode": 2,  # continuous
}

# Names that differ between libcamera releases (AeEnable became the two *Mode
# controls in 0.5): missing ones are expected, not worth a warning.
VERSION_DEPENDENT_CONTROLS = frozenset({"AeEnable", "ExposureTimeMode", "AnalogueGainMode"})


def to_bgr(array: np.ndarray, fmt: str) -> np.ndarray:
    """Any 8-bit picamera2 RGB array as an OpenCV BGR image (HxWx3, contiguous)."""
    if fmt == "RGB888":  # memory order B, G, R
        image = array
    elif fmt == "BGR888":  # memory order R, G, B
        image = array[..., ::-1]
    elif fmt == "XRGB8888":  # B, G, R, A
        image = array[..., :3]
    elif fmt == "XBGR8888":  # R, G, B, A
        image = array[..., 2::-1]
    else:
        raise SourceError(f"picamera2 main stream format {fmt!r} is not an 8-bit RGB format")
    if image.ndim != 3 or image.shape[2] != 3:
        raise SourceError(f"picamera2 main stream gave an array of shape {array.shape}")
    return np.ascontiguousarray(image, dtype=np.uint8)


def luminance_plane(array: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The Y plane of a YUV420/YVU420 array shaped (h*3/2, stride): the grey frame for free."""
    width, height = size
    if array.ndim != 2 or array.shape[0] < height or array.shape[1] < width:
        raise SourceError(f"picamera2 lores stream gave shape {array.shape} for size {size}")
    return np.ascontiguousarray(array[:height, :width], dtype=np.uint8)


def lores_size(main_size: tuple[int, int], lores_width: int) -> tuple[int, int]:
    """A lores size with the main stream's aspect; even sides, as YUV420 requires."""
    width = max(2, min(lores_width, main_size[0]) // 2 * 2)
    height = max(2, round(main_size[1] * width / main_size[0] / 2) * 2)
    return width, min(height, main_size[1] // 2 * 2)


def supported_controls(
    controls: Mapping[str, Any], available: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """Split ``controls`` into what this camera accepts and what it lacks.

    A Camera Module 2 has no autofocus, so ``AfMode``/``LensPosition`` from a
    calibration made with a Module 3 must be dropped, not crash the start.
    ``available`` None means the camera did not say; then everything is sent.
    """
    wanted = dict(controls)
    if available is not None:
        for value_control, mode_control in MANUAL_MODE_CONTROLS.items():
            if value_control in wanted and mode_control in available:
                wanted.setdefault(mode_control, MANUAL)
    if available is None:
        return wanted, []
    accepted = {name: value for name, value in wanted.items() if name in available}
    dropped = sorted(name for name in wanted if name not in available)
    return accepted, dropped


def load_picamera2(import_module: Callable[[str], ModuleType] = importlib.import_module) -> Any:
    """The Picamera2 class, imported only now; a SourceError that says how to get it."""
    try:
        module = import_module("picamera2")
    except ImportError as error:
        raise SourceError(f"picamera2 is not available ({error}): {INSTALL_HINT}") from None
    return module.Picamera2


def list_cameras(picamera2_class: Any) -> list[dict[str, Any]]:
    """libcamera's view of the attached cameras (empty list when none)."""
    try:
        return list(picamera2_class.global_camera_info())
    except Exception as error:  # libcamera failing to enumerate is "no camera" to the user
        raise SourceError(f"libcamera could not list cameras: {error}") from None


class PiCameraSource(SourceBase):
    """A :class:`FrameSource` for the Raspberry Pi camera (picamera2).

    Args:
        width, height: the main (BGR) stream size handed to the vision (None: 1640x1232).
        fps: frame rate asked of the sensor (None: 30).
        lores_width: width of the grey motion frame, height follows the aspect (None: 160).
        camera_num: which camera, as listed by ``global_camera_info()``.
        reopen_attempts: how many close+reopen cycles one stalled read tries.
        reopen_delay: seconds between those attempts (the sensor needs a moment).
    """

    name = "picamera2"

    def __init__(
        self,
        width: int | None = None,
        height: int | None = None,
        fps: float | None = None,
        lores_width: int | None = None,
        camera_num: int = 0,
        reopen_attempts: int = 3,
        reopen_delay: float = 0.5,
        *,
        picamera2_class: Any | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.size = (int(width or DEFAULT_SIZE[0]), int(height or DEFAULT_SIZE[1]))
        self.fps = float(fps or DEFAULT_FPS)
        self.lores_size = lores_size(self.size, int(lores_width or DEFAULT_LORES_WIDTH))
        self.camera_num = camera_num
        self.reopen_attempts = max(1, reopen_attempts)
        self.reopen_delay = reopen_delay
        self._picamera2_class = picamera2_class
        self._clock = clock
        self._sleep = sleep
        self._camera: Any | None = None
        self._main_format = MAIN_FORMAT
        self._lores_format: str | None = LORES_FORMAT
        self._controls: dict[str, Any] = {}
        self._index = 0
        self.reopens = 0  # how many times a stall was healed; shown by the loop / doctor
        self.camera_model = ""
        # The request metadata of the last frame (ExposureTime, AnalogueGain,
        # ColourGains, LensPosition, ...): what auto exposure, white balance and
        # focus settled on, which calibration freezes (settings.freeze_settings).
        self.last_metadata: dict[str, Any] = {}

    # ------------------------------------------------------------ lifecycle
    @property
    def is_open(self) -> bool:
        return self._camera is not None

    @property
    def colour_order(self) -> str:
        """Channel order of ``Frame.image`` as delivered: always "BGR" (converted if needed)."""
        return "BGR"

    @property
    def main_format(self) -> str:
        """The main stream's libcamera format after configuration (normally RGB888)."""
        return self._main_format

    def _class(self) -> Any:
        if self._picamera2_class is None:
            self._picamera2_class = load_picamera2()
        return self._picamera2_class

    def open(self) -> None:
        """Find the camera, configure main + lores, start, re-apply any locked settings."""
        if self._camera is not None:
            return
        picamera2_class = self._class()
        cameras = list_cameras(picamera2_class)
        if not cameras:
            raise SourceError(
                "no Raspberry Pi camera found (libcamera lists none): check the ribbon cable "
                "and `rpicam-hello --list-cameras`"
            )
        if self.camera_num >= len(cameras):
            raise SourceError(
                f"camera {self.camera_num} asked for but only {len(cameras)} found"
            )
        self.camera_model = str(cameras[self.camera_num].get("Model", "unknown"))
        try:
            camera = picamera2_class(self.camera_num)
        except Exception as error:  # busy (another process) or a libcamera failure
            raise SourceError(
                f"cannot open the Pi camera ({self.camera_model}): {error} "
                "(is another program such as rpicam-hello using it?)"
            ) from None
        try:
            config = camera.create_video_configuration(
                main={"size": self.size, "format": MAIN_FORMAT},
                lores={"size": self.lores_size, "format": LORES_FORMAT},
                controls={"FrameRate": self.fps},
            )
            camera.configure(config)
            self._read_back_formats(camera)
            camera.start()
        except Exception as error:
            _close_quietly(camera)
            raise SourceError(f"cannot start the Pi camera ({self.camera_model}): {error}") from None
        self._camera = camera
        if self._controls:
            self._set_controls(self._controls)
        _log.info(
            "picamera2 %s started: main %dx%d %s, lores %dx%d %s",
            self.camera_model, *self.size, self._main_format, *self.lores_size, self._lores_format,
        )

    def _read_back_formats(self, camera: Any) -> None:
        """Trust what libcamera configured, not what we asked for (it may adjust)."""
        config = getattr(camera, "camera_config", None)
        if not isinstance(config, Mapping):
            return
        main = config.get("main") or {}
        self._main_format = str(main.get("format", MAIN_FORMAT))
        if "size" in main:
            self.size = (int(main["size"][0]), int(main["size"][1]))
        lores = config.get("lores")
        if lores:
            self._lores_format = str(lores.get("format", LORES_FORMAT))
            if "size" in lores:
                self.lores_size = (int(lores["size"][0]), int(lores["size"][1]))
        else:
            self._lores_format = None

    def close(self) -> None:
        """Stop and release the camera; never raises (it runs on the way out of errors)."""
        camera, self._camera = self._camera, None
        if camera is not None:
            _close_quietly(camera)

    # ------------------------------------------------------------ settings
    def apply_settings(self, settings: "CameraSettings | None") -> None:
        """Lock exposure, gain, white balance and focus from the calibration.

        Kept and re-applied after every reopen, so a healed stall does not
        bring back auto-exposure in the middle of a game.
        """
        controls = settings.picamera2_controls() if settings is not None else {}
        self._controls = dict(controls) if controls else dict(AUTOMATIC_CONTROLS)
        if self._camera is not None:
            self._set_controls(self._controls)

    @property
    def controls(self) -> dict[str, Any]:
        """The controls that are (or will be, once open) applied."""
        return dict(self._controls)

    def _set_controls(self, controls: Mapping[str, Any]) -> None:
        assert self._camera is not None
        available = getattr(self._camera, "camera_controls", None)
        accepted, dropped = supported_controls(
            controls, available if isinstance(available, Mapping) else None
        )
        missing = [name for name in dropped if name not in VERSION_DEPENDENT_CONTROLS]
        if missing:
            _log.warning("this camera has no %s; left as they are", ", ".join(missing))
        if accepted:
            try:
                self._camera.set_controls(accepted)
            except Exception as error:
                raise SourceError(f"the Pi camera refused the settings {accepted}: {error}") from None

    def longest_read_s(self, timeout: float = 2.0, open_s: float = OPEN_ALLOWANCE_S) -> float:
        """The longest one :meth:`read` can block while healing a stall.

        The unit's ``WatchdogSec=`` must be longer than this, or systemd would
        kill the referee in the middle of a recovery that was about to work.
        """
        attempts = self.reopen_attempts
        backoff = sum(self.reopen_delay * attempt for attempt in range(1, attempts + 1))
        return timeout * (attempts + 1) + backoff + open_s * attempts

    # ------------------------------------------------------------ frames
    def read(self, timeout: float = 2.0) -> Frame:
        """The next frame; heals a stall by reopening, SourceStalledError if that fails."""
        if self._camera is None:
            self.open()
        try:
            return self._capture(timeout)
        except TimeoutError:
            _log.warning("picamera2 gave no frame in %.1f s: reopening the camera", timeout)
        except CAMERA_FAILURES as error:
            _log.warning("picamera2 capture failed (%s): reopening the camera", error)
        return self._recover(timeout)

    def _capture(self, timeout: float) -> Frame:
        camera = self._camera
        assert camera is not None
        names = ["main", "lores"] if self._lores_format else ["main"]
        job = camera.capture_arrays(names, wait=False)
        arrays, metadata = camera.wait(job, timeout=timeout)
        image = to_bgr(arrays[0], self._main_format)
        lores = luminance_plane(arrays[1], self.lores_size) if self._lores_format else None
        self.last_metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
        self._index += 1
        return Frame(image=image, lores=lores, timestamp=self._clock(), index=self._index)

    def _recover(self, timeout: float) -> Frame:
        last_error: Exception | None = None
        for attempt in range(1, self.reopen_attempts + 1):
            self.close()
            self._sleep(self.reopen_delay * attempt)  # back off: the sensor may be resetting
            try:
                self.open()
                frame = self._capture(timeout)
            except REOPEN_FAILURES as error:
                last_error = error
                _log.warning("camera reopen %d/%d failed: %s", attempt, self.reopen_attempts, error)
                continue
            self.reopens += 1
            _log.info("camera back after %d reopen(s)", attempt)
            return frame
        self.close()
        detail = f": {last_error}" if last_error and str(last_error) else ""
        raise SourceStalledError(
            f"the Pi camera stopped delivering frames and {self.reopen_attempts} reopen(s) "
            f"did not bring it back{detail}"
        )


def _close_quietly(camera: Any) -> None:
    for step in ("stop", "close"):
        method = getattr(camera, step, None)
        if method is None:
            continue
        try:
            method()
        except Exception as error:  # a wedged camera may fail to stop; we are leaving anyway
            _log.debug("picamera2 %s failed: %s", step, error)
