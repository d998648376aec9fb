"""A USB webcam (or any V4L2 device) through ``cv2.VideoCapture``.

Development laptops and Pis without the ribbon camera use this.  OpenCV's
``read()`` blocks inside the driver, so a stall shows up as a failed or
overdue read; both become :class:`SourceStalledError` so the loop can reopen.
"""

from __future__ import annotations

import time
from typing import Any

from .base import Frame, SourceBase, SourceError, SourceStalledError, make_lores


class OpenCVSource(SourceBase):
    def __init__(
        self,
        index: int = 0,
        *,
        width: int | None = None,
        height: int | None = None,
        fps: int | None = None,
        lores_width: int = 160,
        capture_factory: Any = None,
    ) -> None:
        self.index = index
        self.name = f"opencv:{index}"
        self.width, self.height, self.fps = width, height, fps
        self.lores_width = lores_width
        self._capture_factory = capture_factory
        self._capture: Any = None
        self._count = 0

    def open(self) -> None:
        import cv2

        factory = self._capture_factory or cv2.VideoCapture
        capture = factory(self.index)
        if not capture.isOpened():
            capture.release()
            raise SourceError(f"webcam {self.index} (/dev/video{self.index}) could not be opened")
        if self.width and self.height:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        if self.fps:
            capture.set(cv2.CAP_PROP_FPS, self.fps)
        self._capture = capture

    def read(self, timeout: float = 2.0) -> Frame:
        if self._capture is None:
            raise SourceError(f"{self.name}: read before open")
        started = time.monotonic()
        while True:
            ok, image = self._capture.read()
            if ok and image is not None:
                break
            if time.monotonic() - started > timeout:
                raise SourceStalledError(f"{self.name}: no frame within {timeout:.1f} s")
            time.sleep(0.01)
        if image.ndim == 2:
            import cv2

            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        frame = Frame(
            image=image,
            lores=make_lores(image, self.lores_width),
            timestamp=time.monotonic(),
            index=self._count,
        )
        self._count += 1
        return frame

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


def webcam_available(index: int = 0) -> bool:
    """Whether a V4L2 device node exists; cheap enough for the default chooser."""
    from pathlib import Path

    return Path(f"/dev/video{index}").exists()
