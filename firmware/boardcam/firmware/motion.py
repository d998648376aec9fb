"""The cheap every-frame check: is anything moving over the board?

Reading the board costs tens of milliseconds; looking at a 160-pixel-wide
grey frame costs well under one.  So every frame is compared with the one
before (hands, arms, sleeves, a sweeping shadow all show up as changed
pixels) and the full read happens only after ``still_frames`` quiet frames.

A slowly updated background (exponential running average) also tells how
far the scene is from the last *still* scene: a hand held perfectly still
over the board would pass the frame-to-frame test, but the vision's own
occlusion flag catches that case, and this module stays dumb and fast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MotionState:
    moving: bool  # this frame differs from the previous one
    still_frames: int  # consecutive quiet frames so far
    changed_fraction: float  # share of pixels that changed since the previous frame
    background_fraction: float  # share of pixels away from the settled background
    settled: bool  # still for long enough to read the board


class MotionDetector:
    def __init__(self, *, pixel_threshold: int = 20, motion_fraction: float = 0.002,
                 still_frames: int = 5, background_rate: float = 0.05) -> None:
        self.pixel_threshold = pixel_threshold
        self.motion_fraction = motion_fraction
        self.still_needed = still_frames
        self.background_rate = background_rate
        self._previous: np.ndarray | None = None
        self._background: np.ndarray | None = None
        self._still = 0

    def reset(self) -> None:
        self._previous = None
        self._background = None
        self._still = 0

    def update(self, lores: np.ndarray) -> MotionState:
        """Feed one small grey frame; returns whether the board can be read now."""
        frame = lores.astype(np.int16)
        if self._previous is None or self._previous.shape != frame.shape:
            # The first frame (or a new camera mode): nothing to compare with, so not still.
            self._previous = frame
            self._background = frame.astype(np.float32)
            self._still = 0
            return MotionState(True, 0, 1.0, 1.0, False)
        changed = float(np.count_nonzero(np.abs(frame - self._previous) > self.pixel_threshold)) / frame.size
        assert self._background is not None
        off_background = float(
            np.count_nonzero(np.abs(frame - self._background) > self.pixel_threshold)) / frame.size
        self._previous = frame
        moving = changed > self.motion_fraction
        if moving:
            self._still = 0
        else:
            self._still += 1
            # Blend only quiet frames, so a passing hand never becomes background.
            rate = 1.0 if self._still == self.still_needed else self.background_rate
            self._background += rate * (frame - self._background)
        return MotionState(moving, self._still, changed, off_background,
                           self._still >= self.still_needed)
