"""Property tests on random legal games (hypothesis chooses the seeds)."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardcam.engine.aliencity import (
    ABSTRACT_PLAY,
    ALL_PIECES,
    NEIGHBOURS,
    RULEBOOK,
    Analysis,
    Game,
    Position,
    random_game,
    score,
)

from .reference import Reference

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def streets_connected_and_faced(position: Position) -> bool:
    occupied = position.structures
    streets = [lot for lot in range(80) if lot not in occupied]
    if not streets:
        return False
    seen, todo = {streets[0]}, [streets[0]]
    while todo:
        for nb in NEIGHBOURS[todo.pop()]:
            if nb not in occupied and nb not in seen:
                seen.add(nb)
                todo.append(nb)
    faced = all(any(nb not in occupied for nb in NEIGHBOURS[s]) for s in occupied)
    return len(seen) == len(streets) and faced


@FAST
@given(SEEDS, st.sampled_from([RULEBOOK, ABSTRACT_PLAY]))
def test_random_legal_games_keep_the_city_connected(seed, rules):
    game = random_game(random.Random(seed), rules=rules)
    replay = Game(game.position.tiles, rules)
    for move in game.moves:
        assert replay.violations(move) == []
        replay.push(move)
        assert streets_connected_and_faced(replay.position)
    assert replay.is_over()
    assert sum(replay.caps_left.values()) >= 0
    assert len(replay.void_caps) == 0  # legal games never cap on the final turn


@FAST
@given(SEEDS, st.sampled_from([RULEBOOK, ABSTRACT_PLAY]))
def test_fast_legality_agrees_with_the_literal_rules(seed, rules):
    rng = random.Random(seed)
    game = random_game(rng, rules=rules)
    replay = Game(game.position.tiles, rules)
    checkpoints = {rng.randrange(0, max(1, game.ply)) for _ in range(3)} | {game.ply - 1}
    for ply, move in enumerate(game.moves):
        if ply in checkpoints:
            fast = Analysis(replay.position, rules)
            slow = Reference(replay.position, rules.fallback_dome_bound_by_rule3)
            for piece in ALL_PIECES:
                for lot in range(80):
                    assert fast.is_legal(lot, piece) == slow.legal(lot, piece), (ply, lot, piece)
                    assert fast.is_legal(lot, piece) == (not fast.violations(lot, piece))
        replay.push(move)


@FAST
@given(SEEDS)
def test_scores_are_consistent(seed):
    game = random_game(random.Random(seed))
    result = game.score()
    doc = result.to_json()
    for player in ("white", "black"):
        towers = doc[player]["towers"]
        assert len(towers) == 3 - game.caps_left[player]
        for tower in towers:
            assert tower["points"] == tower["customers"] * tower["competition"]
            assert tower["customers"] == len(tower["customer_lots"])
        for bonus in doc[player]["bonuses"]:
            assert bonus["points"] == 10 - 2 * bonus["distance"] and 1 <= bonus["distance"] <= 4
        total = sum(t["points"] for t in towers) + sum(b["points"] for b in doc[player]["bonuses"])
        assert doc[player]["total"] == total
    assert score(game.position) == result  # no void caps in a legal game
