"""Engine speed: legal maps, scoring and playouts against a plain flood fill.

The flood fill of the streets is measured in the same run so the figures
compare with the floor any street rule needs, whatever machine runs them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from boardcam.engine.aliencity import (
    NEIGHBOURS,
    Analysis,
    Game,
    Position,
    Ruleset,
    random_game,
    score,
)


def bundled_positions(count: int = 6, seed: int = 2026) -> dict[str, list[Position]]:
    """Mid-game (after 16 plies) and late-game (4 plies before the end) positions of random games."""
    rng = random.Random(seed)
    mid, late = [], []
    for _ in range(count):
        finished = random_game(rng)
        replay = Game(finished.position.tiles)
        for ply, move in enumerate(finished.moves):
            if ply in (16, max(0, finished.ply - 4)):
                (mid if ply == 16 else late).append(replay.position.copy())
            replay.push(move)
    return {"mid": mid, "late": late}


def flood_fill(position: Position) -> int:
    """One plain breadth-first fill of the streets from the first street lot."""
    occupied = position.structures
    start = next(lot for lot in range(80) if lot not in occupied)
    seen = {start}
    frontier = [start]
    while frontier:
        nxt = []
        for lot in frontier:
            for nb in NEIGHBOURS[lot]:
                if nb not in seen and nb not in occupied:
                    seen.add(nb)
                    nxt.append(nb)
        frontier = nxt
    return len(seen)


def _median_us(func: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        func()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def bench_engine(repeat: int = 200, playouts: int = 30, rules: str = "rulebook") -> dict[str, Any]:
    ruleset = Ruleset.named(rules)
    groups = bundled_positions()
    positions = groups["mid"] + groups["late"]
    legal = statistics.median(
        _median_us(lambda p=p: Analysis(p, ruleset).legal_map(), repeat) for p in positions
    )
    scoring = statistics.median(_median_us(lambda p=p: score(p, ruleset), repeat) for p in positions)
    fill = statistics.median(_median_us(lambda p=p: flood_fill(p), repeat) for p in positions)
    rng = random.Random(1)
    playout = statistics.median(
        _median_us(lambda: random_game(rng, rules=ruleset), 1) / 1000 for _ in range(playouts)
    )
    return {
        "game": "alien-city",
        "rules": rules,
        "positions": len(positions),
        "legal_map_us": round(legal, 1),
        "score_us": round(scoring, 1),
        "playout_ms": round(playout, 2),
        "flood_fill_us": round(fill, 1),
        "legal_map_in_fills": round(legal / fill, 1),
        "score_in_fills": round(scoring / fill, 1),
    }
