"""Frame sources and the chooser behind ``--source``.

``open_source("auto")`` prefers the Pi camera, then a webcam, and otherwise
says plainly that there is no camera (and that ``boardcam demo`` needs none).
"""

from __future__ import annotations

from typing import Any

from .base import Frame, FrameSource, SourceError, SourceStalledError, make_lores

__all__ = [
    "Frame",
    "FrameSource",
    "SourceError",
    "SourceStalledError",
    "make_lores",
    "open_source",
    "picamera_available",
]

NO_CAMERA = (
    "no camera found: no Pi camera and no webcam (/dev/video0); "
    "connect one, choose --source replay:PATH, or try `boardcam demo`"
)


def picamera_available() -> bool:
    """Whether picamera2 is importable and reports at least one camera."""
    try:
        from picamera2 import Picamera2
    except Exception:  # not a Pi, or the apt package is missing/broken
        return False
    try:
        return bool(Picamera2.global_camera_info())
    except Exception:
        return False


def open_source(spec: str, **options: Any) -> FrameSource:
    """A (not yet opened) source for ``spec``.

    ``picamera2`` | ``opencv[:N]`` | ``replay:PATH`` | ``auto``.  Options
    understood: width, height, fps, lores_width, realtime (replay).
    """
    spec = spec.strip()
    width = options.get("width")
    height = options.get("height")
    fps = options.get("fps", 30)
    lores_width = options.get("lores_width", 160)
    if spec in ("", "auto"):
        from .opencv import webcam_available

        if picamera_available():
            spec = "picamera2"
        elif webcam_available(0):
            spec = "opencv:0"
        else:
            raise SourceError(NO_CAMERA)
    if spec == "picamera2":
        try:
            from .picamera import PiCameraSource  # written by the Pi deployment helper
        except ImportError as error:
            raise SourceError(f"picamera2 source unavailable: {error}") from None
        return PiCameraSource(**{k: v for k, v in options.items() if k != "realtime"})
    if spec == "opencv" or spec.startswith("opencv:"):
        from .opencv import OpenCVSource

        index_text = spec.partition(":")[2] or "0"
        if not index_text.isdigit():
            raise SourceError(f"--source opencv:N needs a device number, got {spec!r}")
        return OpenCVSource(int(index_text), width=width, height=height, fps=fps,
                            lores_width=lores_width)
    if spec.startswith("replay:"):
        from .replay import replay_source

        extra = {k: v for k, v in options.items()
                 if k not in ("width", "height", "fps", "lores_width", "realtime")}
        return replay_source(spec[len("replay:"):], fps=float(fps),
                             realtime=bool(options.get("realtime", False)),
                             lores_width=lores_width, **extra)
    raise SourceError(
        f"unknown --source {spec!r} (use auto, picamera2, opencv[:N] or replay:PATH)"
    )
