"""The cheap every-frame check: is anything moving over the board?

Reading the board costs tens of milliseconds; looking at a 160-pixel-wide
grey frame costs well under one.  So every frame is compared with the one
before (hands, arms, sleeves, a sweeping shadow all show up as changed
pixels) and the full read happens only after ``still_frames`` quiet frames.

A slowly updated background (exponential running average) also tells how
far the scene is from the last *still* scene: a hand held perfectly still
over the board would pass the frame-to-frame test, but the vision's own
occlusion flag catches that case, and this module stays dumb and fast.

A share of changed pixels misses what matters under a dim lamp: a brown
hand over a dark green cloth changes few pixels by more than the
threshold, and a new piece alone is a few dozen pixels of 19 000
(made-up-art game 2105: the first move was never read, and the app took
the first two moves in the wrong order). So each frame is also compared
with the frame the board was last read on (``note_read``): once the picture
has been quiet, pixel for pixel, for ``still_frames`` frames and a few
pixels differ from that frame (``change_pixels``), the state says
``changed_since_read`` and the board is read again, as after motion.

A fixed 20-level threshold still missed what matters on dark boards: a
dark hand over black and blue tiles on a brown cloth changed 29 pixels by
more than 20 levels (not motion), and a black coin put on a black tile 2
(made-up-art game 2002: that move was never read, and every later move
was given to the wrong player). Yet the small frame, averaged from the
full one, is far quieter than 20 levels: in those frames the hand changed
451 pixels by more than 10 levels and the coin 9. So a pixel counts as
changed when it moves more than ``NOISE_MULTIPLE`` times the camera's own
noise (the median absolute change from one frame to the next, which a
hand over less than half the picture does not move much), and never less
than ``MIN_THRESHOLD`` levels; ``pixel_threshold`` is the most it takes.
The whole frame brightening or darkening at once (a lamp, the camera's
exposure) is taken out first, so that only what changed in one place
counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the least change, in grey levels of the small frame, that counts however quiet the camera is
#: (below it lie JPEG's and the averaging's own steps)
MIN_THRESHOLD = 8
#: a pixel counts as changed past this many times the camera's noise, the median absolute frame-to-frame
#: change (about 5 standard deviations of that change for Gaussian noise)
NOISE_MULTIPLE = 7.5
#: how much each frame moves the noise estimate
NOISE_RATE = 0.1
#: every how many pixels, along each axis, the frame's overall change is sampled (a median of a ninth)
OFFSET_STEP = 3


@dataclass(frozen=True)
class MotionState:
    moving: bool  # this frame differs from the previous one
    still_frames: int  # consecutive quiet frames so far
    changed_fraction: float  # share of pixels that changed since the previous frame
    background_fraction: float  # share of pixels away from the settled background
    settled: bool  # still for long enough to read the board
    changed_since_read: bool = False  # quiet now, yet a few pixels differ from the frame last read


class MotionDetector:
    def __init__(self, *, pixel_threshold: int = 20, motion_fraction: float = 0.002,
                 still_frames: int = 5, background_rate: float = 0.05, change_pixels: int = 4) -> None:
        self.pixel_threshold = pixel_threshold
        self.motion_fraction = motion_fraction
        self.still_needed = still_frames
        self.background_rate = background_rate
        self.change_pixels = change_pixels
        self._previous: np.ndarray | None = None
        self._background: np.ndarray | None = None
        self._at_read: np.ndarray | None = None
        self._still = 0
        self._quiet = 0  # consecutive frames with fewer than change_pixels changed pixels
        self._noise: float | None = None  # median absolute frame-to-frame change, offset removed

    def reset(self) -> None:
        self._previous = None
        self._background = None
        self._at_read = None
        self._still = 0
        self._quiet = 0
        self._noise = None

    @property
    def threshold(self) -> float:
        """The change, in grey levels, past which a pixel counts as changed now."""
        noise = self._noise or 0.0
        return float(min(self.pixel_threshold, max(MIN_THRESHOLD, NOISE_MULTIPLE * noise)))

    def note_read(self) -> None:
        """The board is being read on the latest frame: later frames are compared with it."""
        self._at_read = self._previous

    def update(self, lores: np.ndarray) -> MotionState:
        """Feed one small grey frame; returns whether the board can be read now."""
        frame = lores.astype(np.int16)
        if self._previous is None or self._previous.shape != frame.shape:
            # The first frame (or a new camera mode): nothing to compare with, so not still.
            self._previous = frame
            self._background = frame.astype(np.float32)
            self._still = 0
            self._quiet = 0
            return MotionState(True, 0, 1.0, 1.0, False)
        step = _difference(frame, self._previous)
        self._note_noise(step)
        changed_pixels = self._count_changed(step)
        changed = changed_pixels / frame.size
        self._quiet = self._quiet + 1 if changed_pixels < self.change_pixels else 0
        assert self._background is not None
        off_background = self._changed_pixels(frame, self._background) / frame.size
        self._previous = frame
        moving = changed > self.motion_fraction
        if moving:
            self._still = 0
        else:
            self._still += 1
            # Blend only quiet frames, so a passing hand never becomes background.
            rate = 1.0 if self._still == self.still_needed else self.background_rate
            self._background += rate * (frame - self._background)
        settled = self._still >= self.still_needed
        return MotionState(moving, self._still, changed, off_background, settled,
                           settled and self._quiet >= self.still_needed and self._unread_change(frame))

    def _note_noise(self, step: np.ndarray) -> None:
        """Follow the camera's noise in a frame-to-frame difference (the first difference sets it).

        Capped where the threshold reaches ``pixel_threshold``: an arm over
        most of the picture moves the median, and its frames must not keep
        the threshold up for long after it has gone."""
        now = min(float(np.median(np.abs(step[::OFFSET_STEP, ::OFFSET_STEP]))),
                  self.pixel_threshold / NOISE_MULTIPLE)
        self._noise = now if self._noise is None else self._noise + NOISE_RATE * (now - self._noise)

    def _changed_pixels(self, frame: np.ndarray, other: np.ndarray) -> int:
        """How many pixels of ``frame`` differ from ``other`` by more than the threshold, once the
        whole frame's change is taken out."""
        return self._count_changed(_difference(frame, other))

    def _count_changed(self, difference: np.ndarray) -> int:
        return int(np.count_nonzero(np.abs(difference) > self.threshold))

    def _unread_change(self, frame: np.ndarray) -> bool:
        at_read = self._at_read
        if at_read is None or at_read.shape != frame.shape:
            return False
        return self._changed_pixels(frame, at_read) >= self.change_pixels


def _difference(frame: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``frame - other`` less its median (sampled): what changed in one place, not everywhere at once."""
    difference = frame - other
    offset = np.median(difference[::OFFSET_STEP, ::OFFSET_STEP])
    return difference - np.float32(offset) if offset else difference
