"""Property tests on random legal games: what every turn of every game must keep true."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardcam.engine.errors import InputError
from boardcam.engine.netzwerk import (
    CONNECTORS_PER_PLAYER,
    STONES_PER_FIELD,
    Position,
    Record,
    Ruleset,
    check_build,
    miner_moves,
    miner_violations,
    random_game,
    replay,
    road_parts,
    score,
)
from boardcam.engine.netzwerk import api

PLAYER_SETS = (("white", "purple"), ("white", "purple", "cyan"), ("white", "purple", "cyan", "brown"))
RULESETS = (Ruleset(), Ruleset(turn_limit=False), Ruleset(chain_rule=True))

games = st.tuples(st.integers(0, 10_000), st.sampled_from(PLAYER_SETS), st.sampled_from(RULESETS))
FEW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FEW
@given(games)
def test_random_games_are_legal_throughout_and_keep_the_invariants(game):
    seed, players, rules = game
    record = random_game(seed, players, rules, max_turns=250)
    played = replay(record, rules)
    assert all(report.legal for report in played.reports), [r.violations for r in played.reports if not r.legal]
    initial = played.positions[0]
    layout = initial.layout
    total_stones = STONES_PER_FIELD * sum(1 for f in layout.fields if f.color is not None)
    spent = 0
    for before, report, after in zip(played.positions, played.reports, played.positions[1:]):
        spent += report.build.cost
        held = sum(sum(r) for r in after.resources)
        assert sum(after.stones) + held + spent == total_stones
        miners = [m for m in after.miners if m is not None]
        assert len(miners) == len(set(miners)) and not any(layout.fields[m].is_desert for m in miners)
        for p in range(len(players)):
            assert len(after.connectors[p]) <= CONNECTORS_PER_PLAYER
            assert all(part.valid for part in road_parts(layout, after.connectors[p]))
        assert not before.is_over()
        assert report.ends_game == after.is_over()
    if len(record.turns) < 250:
        assert played.final.is_over()


@FEW
@given(games)
def test_formats_round_trip_at_every_turn(game):
    seed, players, rules = game
    record = random_game(seed, players, rules, max_turns=80)
    again = Record.from_json(json.loads(json.dumps(record.to_json())))
    assert again.turns == record.turns and again.players == record.players
    for position in replay(record, rules).positions[::7]:
        assert Position.from_json(json.loads(json.dumps(position.to_json()))) == position


@FEW
@given(games, st.integers(0, 10_000))
def test_listed_miner_moves_are_exactly_the_unrefused_ones(game, pick):
    seed, players, rules = game
    positions = replay(random_game(seed, players, rules, max_turns=60), rules).positions
    position = positions[pick % len(positions)]
    p = position.turn
    listed = {m.to for m in miner_moves(position, p)}
    for field in range(len(position.layout.fields)):
        assert (not miner_violations(position, p, field)) == (field in listed)


@FEW
@given(games)
def test_score_is_the_sum_of_its_breakdown_and_never_falls_as_roads_are_added(game):
    seed, players, rules = game
    played = replay(random_game(seed, players, rules, max_turns=200), rules)
    previous = [0] * len(players)
    for position in played.positions[::5] + (played.final,):
        result = score(position)
        for p, ps in enumerate(result.players):
            assert all(road.points == len(road.cities) * (len(road.cities) - 1) for road in ps.roads)
            assert ps.total == sum(r.points for r in ps.roads) + sum(
                position.layout.fields[c].value or 0 for c in ps.cities)
            assert ps.total >= previous[p]
            previous[p] = ps.total


@FEW
@given(games)
def test_rebuilding_an_own_connector_is_never_legal(game):
    seed, players, rules = game
    final = replay(random_game(seed, players, rules, max_turns=200), rules).final
    for p in range(len(players)):
        for edge in sorted(final.connectors[p])[:3]:
            assert not check_build(final, p, (edge,), rules).legal


def _random_walk_build(position, rng, steps):
    """A random set of connector slots grown by a walk from a random city (may branch, loop or dangle)."""
    layout = position.layout
    current = rng.choice(layout.cities)
    chosen: list[int] = []
    for _ in range(steps):
        options = [e for e in layout.field_edges[current]
                   if not any(layout.fields[f].is_desert for f in layout.edge_ends[e])]
        if not options:
            break
        edge = rng.choice(options)
        if edge not in chosen:
            chosen.append(edge)
        a, b = layout.edge_ends[edge]
        current = b if a == current else a
        if layout.fields[current].is_city and rng.random() < 0.7:
            break
        if rng.random() < 0.2 and chosen:
            current = rng.choice(layout.edge_ends[rng.choice(chosen)])
    return tuple(chosen)


@settings(max_examples=25, deadline=None)
@given(games, st.integers(0, 10_000), st.integers(1, 7))
def test_every_build_the_engine_allows_leaves_only_roads(game, pick, steps):
    import random as _random

    seed, players, _ = game
    positions = replay(random_game(seed, players, max_turns=60)).positions
    position = positions[pick % len(positions)]
    rng = _random.Random(pick)
    p = position.turn
    full = tuple(2 * sum(1 for f in position.layout.fields if f.color == c)
                 for c in ("yellow", "orange", "red", "green", "blue"))
    others = [(0,) * 5] * len(players)
    others[p] = full
    rich = position.with_changes(resources=tuple(others), stones=(0,) * len(position.stones))
    before = [part for part in road_parts(rich.layout, rich.connectors[p])]
    for _ in range(8):
        build = _random_walk_build(rich, rng, steps)
        for rules in (Ruleset(), Ruleset(turn_limit=False), Ruleset(chain_rule=True)):
            check = check_build(rich, p, build, rules)
            if not check.legal:
                continue
            after = road_parts(rich.layout, rich.connectors[p] | set(build))
            assert all(part.valid for part in after)
            assert check.payment is not None and sum(check.payment) == check.cost
            assert all(x <= y for x, y in zip(check.payment, rich.resources[p]))
            if rules.turn_limit:
                assert len(after) - len(before) in (1, 0, -1)
        if check_build(rich, p, build, Ruleset()).legal:
            assert check_build(rich, p, build, Ruleset(turn_limit=False)).legal


_SAMPLE = Path(__file__).resolve().parents[2] / "data" / "netzwerk" / "grid-three-players.json"
_JUNK = st.sampled_from([None, 1, -3, 2.5, True, "x", "0,0", "99,99", [], {}, ["0,0"], [["0,0", "0,1"]], {"a": 1}])


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            yield from _paths(item, prefix + (index,))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_damaged_documents_fail_only_with_input_errors(data):
    doc = json.loads(_SAMPLE.read_text())
    path = data.draw(st.sampled_from(list(_paths(doc))[1:]))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(_JUNK)
    options = {"any_layout": True, "miner": data.draw(st.one_of(st.none(), _JUNK)),
               "build": data.draw(st.one_of(st.none(), _JUNK))}
    for function in (api.score_document, api.legal_document):
        try:
            function(doc, options)
        except InputError:
            pass
