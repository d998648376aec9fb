"""Fixed camera settings: exposure, gain, white balance and focus.

Auto exposure and auto white balance are what make a passing cloud turn a
blue tower green halfway through a game.  After calibration we freeze the
values the camera's own algorithms had settled on for this table and this
lamp, store them with the calibration and re-apply them at every start.

The dataclass is plain data (JSON in the calibration file); the translation
to Picamera2 control names lives here too so the Pi source only has to call
``camera.set_controls(settings.picamera2_controls())``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from boardcam.engine.errors import FormatError

__all__ = ["CameraSettings", "settings_from_metadata", "source_metadata", "freeze_settings"]


def _positive_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(f"camera settings: {field} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise FormatError(f"camera settings: {field} must be positive, got {value!r}")
    return number


@dataclass(frozen=True)
class CameraSettings:
    """Manual camera settings; ``None`` means "leave that one automatic".

    ``colour_gains`` are the (red, blue) white-balance gains; setting them
    switches auto white balance off.  ``lens_position`` is in dioptres
    (1 / distance in metres), the unit libcamera uses for manual focus.
    """

    exposure_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None
    lens_position: float | None = None

    def __post_init__(self) -> None:
        # Validate eagerly so a bad value is named where it enters, not when
        # the camera driver rejects it minutes later.
        if self.exposure_us is not None:
            _positive_number(self.exposure_us, "exposure_us")
            if int(self.exposure_us) != self.exposure_us:
                raise FormatError(
                    f"camera settings: exposure_us must be whole microseconds, got {self.exposure_us!r}"
                )
        if self.analogue_gain is not None:
            _positive_number(self.analogue_gain, "analogue_gain")
        if self.colour_gains is not None:
            if len(self.colour_gains) != 2:
                raise FormatError(
                    f"camera settings: colour_gains must be [red, blue], got {self.colour_gains!r}"
                )
            for gain in self.colour_gains:
                _positive_number(gain, "colour_gains")
        if self.lens_position is not None:
            if isinstance(self.lens_position, bool) or not isinstance(
                self.lens_position, (int, float)
            ):
                raise FormatError(
                    f"camera settings: lens_position must be a number, got {self.lens_position!r}"
                )
            if not math.isfinite(self.lens_position) or self.lens_position < 0:
                raise FormatError(
                    f"camera settings: lens_position must be >= 0 dioptres, got {self.lens_position!r}"
                )

    @property
    def is_automatic(self) -> bool:
        """True when nothing is fixed (the camera runs fully automatic)."""
        return self == CameraSettings()

    def to_json(self) -> dict[str, Any]:
        return {
            "exposure_us": self.exposure_us,
            "analogue_gain": self.analogue_gain,
            "colour_gains": list(self.colour_gains) if self.colour_gains is not None else None,
            "lens_position": self.lens_position,
        }

    @classmethod
    def from_json(cls, data: Any) -> CameraSettings:
        """Parse the JSON form; unknown keys and bad values raise FormatError naming them."""
        if not isinstance(data, Mapping):
            raise FormatError(f"camera settings must be an object, got {type(data).__name__}")
        known = {"exposure_us", "analogue_gain", "colour_gains", "lens_position"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise FormatError(f"camera settings: unknown key {unknown[0]!r}")
        exposure = data.get("exposure_us")
        if exposure is not None:
            exposure = _positive_number(exposure, "exposure_us")
            if exposure != int(exposure):
                raise FormatError(
                    f"camera settings: exposure_us must be whole microseconds, got {exposure!r}"
                )
            exposure = int(exposure)
        gain = data.get("analogue_gain")
        if gain is not None:
            gain = _positive_number(gain, "analogue_gain")
        gains = data.get("colour_gains")
        colour_gains: tuple[float, float] | None = None
        if gains is not None:
            if not isinstance(gains, (list, tuple)) or len(gains) != 2:
                raise FormatError(
                    f"camera settings: colour_gains must be [red, blue], got {gains!r}"
                )
            colour_gains = (
                _positive_number(gains[0], "colour_gains"),
                _positive_number(gains[1], "colour_gains"),
            )
        lens = data.get("lens_position")
        if lens is not None:
            if isinstance(lens, bool) or not isinstance(lens, (int, float)):
                raise FormatError(f"camera settings: lens_position must be a number, got {lens!r}")
            lens = float(lens)
        return cls(
            exposure_us=exposure,
            analogue_gain=gain,
            colour_gains=colour_gains,
            lens_position=lens,
        )

    def picamera2_controls(self) -> dict[str, Any]:
        """The libcamera/Picamera2 controls that pin these settings.

        Exposure and gain are only manual when AE is off, hence ``AeEnable``;
        ``ColourGains`` only stick with ``AwbEnable`` off; ``LensPosition``
        needs ``AfMode`` 0 (manual).  Fields left ``None`` add no control, so
        the matching algorithm stays automatic.
        """
        controls: dict[str, Any] = {}
        if self.exposure_us is not None or self.analogue_gain is not None:
            controls["AeEnable"] = False
        if self.exposure_us is not None:
            controls["ExposureTime"] = int(self.exposure_us)
        if self.analogue_gain is not None:
            controls["AnalogueGain"] = float(self.analogue_gain)
        if self.colour_gains is not None:
            controls["AwbEnable"] = False
            controls["ColourGains"] = (float(self.colour_gains[0]), float(self.colour_gains[1]))
        if self.lens_position is not None:
            controls["AfMode"] = 0
            controls["LensPosition"] = float(self.lens_position)
        return controls


def _median_of(samples: Sequence[Mapping[str, Any]], key: str) -> float | None:
    values = [
        float(sample[key])
        for sample in samples
        if isinstance(sample.get(key), (int, float)) and not isinstance(sample.get(key), bool)
    ]
    return statistics.median(values) if values else None


def settings_from_metadata(
    samples: Mapping[str, Any] | Sequence[Mapping[str, Any]],
) -> CameraSettings:
    """Freeze what a running, auto-exposed camera has settled on.

    ``samples`` is one Picamera2 metadata dict (``camera.capture_metadata()``)
    or several taken a few frames apart; the median of each value is used so
    one frame caught mid-adjustment does not decide the whole game's colours.
    Reads ``ExposureTime`` (µs), ``AnalogueGain``, ``ColourGains`` (red, blue)
    and ``LensPosition`` (dioptres); a key the camera does not report (e.g. no
    autofocus on a Camera Module 2) stays ``None`` = untouched.
    """
    if isinstance(samples, Mapping):
        samples = [samples]
    if not samples:
        raise FormatError("camera metadata: no samples to derive settings from")
    exposure = _median_of(samples, "ExposureTime")
    gain = _median_of(samples, "AnalogueGain")
    lens = _median_of(samples, "LensPosition")
    reds: list[float] = []
    blues: list[float] = []
    for sample in samples:
        gains = sample.get("ColourGains")
        if isinstance(gains, (list, tuple)) and len(gains) == 2:
            reds.append(float(gains[0]))
            blues.append(float(gains[1]))
    colour_gains = (
        (round(statistics.median(reds), 4), round(statistics.median(blues), 4)) if reds else None
    )
    return CameraSettings(
        exposure_us=max(1, int(round(exposure))) if exposure is not None and exposure > 0 else None,
        analogue_gain=round(gain, 4) if gain is not None and gain > 0 else None,
        colour_gains=colour_gains if colour_gains and min(colour_gains) > 0 else None,
        lens_position=round(lens, 4) if lens is not None and lens >= 0 else None,
    )


def source_metadata(source: Any) -> dict[str, Any] | None:
    """A frame source's latest camera metadata, or None if it cannot report any.

    Duck-typed so calibration depends on no source class: a ``metadata()``
    method or a ``last_metadata`` attribute (the Pi camera source) both work;
    webcams and replays have neither.
    """
    reader = getattr(source, "metadata", None)
    value = reader() if callable(reader) else getattr(source, "last_metadata", None)
    return dict(value) if isinstance(value, Mapping) and value else None


def freeze_settings(source: Any, frames: int = 30) -> CameraSettings | None:
    """Let an open source's auto exposure and white balance settle, then fix what they chose.

    Reads ``frames`` frames fully automatic and takes the median of the
    second half's metadata (the first half is the camera still adjusting).
    None when the source reports no metadata (nothing can be fixed there).
    """
    source.apply_settings(CameraSettings())  # fully automatic while settling
    samples: list[dict[str, Any]] = []
    for index in range(max(frames, 1)):
        try:
            source.read()
        except StopIteration:
            break
        metadata = source_metadata(source)
        if metadata is None:
            return None  # this source cannot tell: stop before using up a replay's frames
        if index >= frames // 2:
            samples.append(metadata)
    return settings_from_metadata(samples) if samples else None
