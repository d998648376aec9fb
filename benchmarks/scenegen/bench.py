"""Render-speed figures of the scene generator (for `boardcam bench scenes --json`)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from .sampling import random_scene


def bench_scenes(count: int = 10, seed: int = 0, sizes: tuple[tuple[int, int], ...] = ((640, 480), (1640, 1232)),
                 ) -> dict[str, Any]:
    """Median and worst milliseconds per random scene at each size (first render warms caches)."""
    figures: dict[str, Any] = {"count": count}
    for width, height in sizes:
        random_scene(seed + 10_000, size=(width, height))
        times = []
        for i in range(count):
            start = time.perf_counter()
            random_scene(seed + i, size=(width, height))
            times.append((time.perf_counter() - start) * 1000.0)
        key = f"{width}x{height}"
        figures[f"ms_median_{key}"] = round(statistics.median(times), 1)
        figures[f"ms_max_{key}"] = round(max(times), 1)
    return figures
