"""The one small interface every camera and replay speaks.

The loop only ever sees :class:`Frame` objects from a :class:`FrameSource`,
so a webcam on a laptop, the Pi camera and a generated game on disk are
interchangeable — which is what lets the whole app be tested without a camera.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

import numpy as np

from boardcam.engine.errors import InputError

if TYPE_CHECKING:  # calibration imports nothing from firmware; keep it that way at runtime
    from boardcam.calibration.settings import CameraSettings


@dataclass(frozen=True)
class Frame:
    """One picture of the table.

    ``lores`` is the small grey frame for the every-frame motion check; a
    source that cannot produce one for free leaves it ``None`` and the caller
    downsizes ``image`` itself.
    """

    image: np.ndarray  # HxWx3 uint8, BGR (OpenCV order)
    lores: np.ndarray | None  # small grayscale uint8 for the motion check
    timestamp: float  # seconds, time.monotonic() domain
    index: int
    # a new picture with no motion filmed before it (the next of a series of
    # replayed photos): the board may have changed however little it differs
    cut: bool = False


class SourceError(InputError):
    """The camera is missing or unreadable (one line, names the device)."""


class SourceStalledError(SourceError):
    """No frame arrived within the timeout: the caller may reopen and go on."""


@runtime_checkable
class FrameSource(Protocol):
    name: str

    def open(self) -> None: ...

    def read(self, timeout: float = 2.0) -> Frame:
        """The next frame; SourceStalledError on timeout, StopIteration at a replay's end."""
        ...

    def apply_settings(self, settings: "CameraSettings") -> None:
        """Fix exposure/gain/white balance/focus; a no-op where the device cannot."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


class SourceBase:
    """Context-manager plumbing shared by the concrete sources."""

    name = "source"

    def open(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def apply_settings(self, settings: "CameraSettings") -> None:
        """Most sources cannot fix exposure; the Pi camera overrides this."""

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def make_lores(image: np.ndarray, width: int = 160) -> np.ndarray:
    """A small grey copy of ``image`` for the motion check (area-averaged, so noise shrinks)."""
    import cv2

    height = max(1, round(image.shape[0] * width / image.shape[1]))
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    return cv2.resize(grey, (width, height), interpolation=cv2.INTER_AREA)
