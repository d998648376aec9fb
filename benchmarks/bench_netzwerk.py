"""Netzwerk engine speed: legal miner moves, a build check, scoring and whole random games.

Positions come from random legal 3-player games on random boards (mid-game
and 4 turns before the end), so the figures cover boards with roads on them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from boardcam.engine.netzwerk import RULEBOOK, Position, check_build, miner_moves, random_game, replay, score
from boardcam.engine.netzwerk.game import random_chain

PLAYERS = ("white", "purple", "cyan")


def bundled_positions(count: int = 6, seed: int = 2026) -> list[Position]:
    """Mid-game (turn 30) and late-game (4 turns before the end) positions of random games."""
    positions: list[Position] = []
    for game in range(count):
        played = replay(random_game(seed + game, PLAYERS)).positions
        positions.append(played[min(30, len(played) - 1)])
        positions.append(played[max(0, len(played) - 5)])
    return positions


def _median_us(func: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        func()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def _candidate_build(position: Position, seed: int) -> tuple[int, ...]:
    """A chain the mover might build here (the same kind the random player proposes)."""
    rng = random.Random(seed)
    for _ in range(20):
        chain = random_chain(position, position.turn, rng)
        if chain:
            return tuple(chain)
    return ()


def bench_netzwerk(repeat: int = 200, playouts: int = 20) -> dict[str, Any]:
    """Medians over the bundled positions: µs per legal-move list, build check and score; ms per playout."""
    positions = bundled_positions()
    builds = [_candidate_build(p, i) for i, p in enumerate(positions)]
    legal = statistics.median(_median_us(partial(miner_moves, p, p.turn), repeat) for p in positions)
    build = statistics.median(
        _median_us(partial(check_build, p, p.turn, b, RULEBOOK), repeat) for p, b in zip(positions, builds)
    )
    scoring = statistics.median(_median_us(partial(score, p), repeat) for p in positions)
    playout = statistics.median(
        _median_us(partial(random_game, s, PLAYERS), 1) / 1000 for s in range(playouts)
    )
    return {
        "game": "netzwerk",
        "players": len(PLAYERS),
        "positions": len(positions),
        "legal_miner_moves_us": round(legal, 1),
        "build_check_us": round(build, 1),
        "score_us": round(scoring, 1),
        "playout_ms": round(playout, 2),
        "build_connectors": round(statistics.mean(len(b) for b in builds), 1),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(bench_netzwerk(), indent=2))
