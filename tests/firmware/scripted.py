"""A scripted table for loop tests: still boards, hands passing, and a fake reader.

Each still board is drawn as a flat grey frame whose level identifies it, so
the real motion detector sees every change and the fake reader knows which
position (and confidences) the frame shows — no camera, no vision.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from boardcam.engine.aliencity import Position
from boardcam.firmware.referee import Observation
from boardcam.firmware.sources.replay import ReplaySource

SHAPE = (48, 64, 3)


@dataclass(frozen=True)
class Still:
    position: dict[str, Any]
    frames: int = 12
    confidence: Mapping[str, float] = field(default_factory=dict)
    occluded: bool = False
    quiet: bool = False  # drawn as the still before it with a small patch changed: no motion seen


@dataclass(frozen=True)
class Hand:
    frames: int = 6


class ScriptedTable:
    def __init__(self, script: list[Still | Hand], seed: int = 0) -> None:
        self.script = script
        self.rng = np.random.default_rng(seed)
        self.reads = 0

    def _frames(self) -> Iterator[np.ndarray]:
        image = np.zeros(SHAPE, dtype=np.uint8)
        for number, item in enumerate(self.script):
            if isinstance(item, Hand):
                for _ in range(item.frames):
                    yield self.rng.integers(0, 255, SHAPE, dtype=np.uint8)
            else:
                if item.quiet:  # a piece put down under a lamp too dim for the hand to show
                    image = image.copy()
                    image[20:26, 30:36] = (image[20:26, 30:36].astype(np.int16) + 100) % 256
                else:
                    image = np.full(SHAPE, 20 + (number * 37) % 200, dtype=np.uint8)
                image[0, 0, 0] = number  # which script item this frame shows
                for _ in range(item.frames):
                    yield image

    def source(self, fps: float = 30.0) -> ReplaySource:
        return ReplaySource(self._frames, name="scripted", fps=fps, lores_width=32)

    def reader(self, image: np.ndarray) -> Observation:
        self.reads += 1
        item = self.script[int(image[0, 0, 0])]
        assert isinstance(item, Still)
        return Observation(Position.from_json(item.position), dict(item.confidence),
                           occluded=item.occluded)
