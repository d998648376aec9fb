"""The app benchmark's own bookkeeping, with the ground truth standing in for the vision."""

import pytest

pytest.importorskip("scenegen")

from bench_app import bench_app, game_with_a_mistake  # noqa: E402


def test_the_inserted_mistake_is_illegal_and_then_put_right():
    game, positions, illegal = game_with_a_mistake(100)
    assert len(illegal) == 1 and len(positions) == game.ply + 2
    at = positions.index(illegal[0])
    assert len(illegal[0]["structures"]) == len(positions[at + 1]["structures"])


def test_a_perfect_reader_gives_a_perfect_score():
    figures = bench_app(games=1, reader="truth", size=(320, 240))
    assert figures["moves_right"] == figures["moves_total"] > 20
    assert figures["false_warnings"] == 0 and figures["missed_illegal"] == 0
    assert figures["scores_right"] == 1
    # from the last frame with motion to the verdict: at least the still frames needed
    assert figures["median_ms"] >= 5 * 1000 / 30 - 1e-6
    assert set(figures) >= {"median_ms", "p95_ms", "cpu_s_per_min", "moves_total", "moves_right",
                            "false_warnings", "missed_illegal"}
