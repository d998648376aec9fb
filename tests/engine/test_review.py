"""Independent review of the Alien City engine against issue 2's wording.

The slow helpers here re-read the rules literally (re-flood the streets for
every question, recurse through rule 2's fallback and rule 5) and were
written without looking at ``tests/engine/reference.py``, so that the fast
engine is checked by a second, separate reading.  Each test that once
exposed a bug found in review now guards its fix.
"""

from __future__ import annotations

import random
from collections import Counter, deque

import pytest

from boardcam.engine.aliencity import (
    ABSTRACT_PLAY,
    ALL_PIECES,
    NEIGHBOURS,
    RULEBOOK,
    TILE_LOTS,
    TILE_OF,
    Analysis,
    Game,
    GameRecord,
    Move,
    Piece,
    Position,
    Structure,
    infer_move,
    parse_lot,
    random_layout,
    random_positions,
    score,
)
from boardcam.engine.aliencity.rules import FULL_SET
from boardcam.engine.errors import FormatError

from .boards import layout, position, uniform


def build(player: str, lot: str, piece: str = "black-dome", cap: str | None = None) -> Move:
    return Move(player, parse_lot(lot), Piece.parse(piece), None if cap is None else parse_lot(cap))


# --- a literal second reading of rules 1-5 -----------------------------------------


def _street_regions(occupied: set[int]) -> list[set[int]]:
    regions: list[set[int]] = []
    seen: set[int] = set()
    for start in range(80):
        if start in occupied or start in seen:
            continue
        region = {start}
        seen.add(start)
        todo = [start]
        while todo:
            for nb in NEIGHBOURS[todo.pop()]:
                if nb not in occupied and nb not in seen:
                    seen.add(nb)
                    region.add(nb)
                    todo.append(nb)
        regions.append(region)
    return regions


def _cut_off(occupied: set[int]) -> set[int]:
    return {lot for lot in occupied if all(nb in occupied for nb in NEIGHBOURS[lot])}


def streets_allow(occupied: set[int], lot: int) -> bool:
    """Rule 4, judged only for what the build makes worse (issue 2): no new split, nothing newly cut off."""
    region = next(r for r in _street_regions(occupied) if lot in r)
    after = occupied | {lot}
    if sum(1 for r in _street_regions(after) if r <= region) >= 2:
        return False
    return not (_cut_off(after) - _cut_off(occupied))


class LiteralRules:
    """Issue 2's rules 1-5 word by word, with memoised recursion (slow on purpose)."""

    def __init__(self, pos: Position, fallback_bound_by_rule3: bool):
        self.pos = pos
        self.bound = fallback_bound_by_rule3
        self.occupied = set(pos.structures)
        remaining = Counter(FULL_SET)
        for structure in pos.structures.values():
            remaining[structure.piece] -= 1
        self.supply = [piece for piece, n in remaining.items() if n > 0]
        self._streets: dict[int, bool] = {}
        self._memo: dict[tuple[int, Piece], bool] = {}
        self._busy: set[tuple[int, Piece]] = set()

    def _street(self, lot: int) -> bool:
        if lot not in self._streets:
            self._streets[lot] = streets_allow(self.occupied, lot)
        return self._streets[lot]

    def legal(self, lot: int, piece: Piece) -> bool:
        key = (lot, piece)
        if key not in self._memo:
            if key in self._busy:
                return False
            self._busy.add(key)
            self._memo[key] = self._legal(lot, piece)
            self._busy.discard(key)
        return self._memo[key]

    def _legal(self, lot: int, piece: Piece) -> bool:
        if lot in self.occupied or not self._street(lot):  # rules 1 and 4
            return False
        tile_color = self.pos.tile_color(lot)
        if piece.kind == "dome" and piece.color != tile_color:  # rule 2 and its fallback
            own = [x for x in range(80) if x not in self.occupied and self.pos.tile_color(x) == piece.color]
            if any(self.legal(x, piece) for x in own):
                return False
        on_tile = sum(1 for x in TILE_LOTS[TILE_OF[lot]] if x in self.occupied)
        if piece.color != tile_color and on_tile < 2:  # rule 3
            if piece.kind == "tower" and tile_color != "black":
                return False
            if piece.kind == "dome" and self.bound:
                return False
        if self.pos.is_icon(lot):  # rule 5: any piece still in either player's supply
            others = [x for x in TILE_LOTS[TILE_OF[lot]] if x != lot]
            if any(self.legal(x, other) for x in others for other in self.supply):
                return False
        return True


def _random_structures(rng: random.Random, count: int) -> dict[int, Structure]:
    structures = {}
    for lot in rng.sample(range(80), count):
        if rng.random() < 0.4:
            structures[lot] = Structure("tower", rng.choice(("red", "blue", "green")),
                                        rng.choice((None, None, "white", "black")))
        else:
            structures[lot] = Structure("dome", rng.choice(("red", "blue", "green", "black")))
    return structures


def test_rule4_on_broken_positions_matches_a_literal_reading():
    """Random occupancy (often split streets, cut-off structures): illegal only for what gets worse."""
    rng = random.Random(11)
    tiles = uniform("K")
    for _ in range(60):
        pos = Position(tiles, {lot: Structure("dome", "black") for lot in rng.sample(range(80), rng.randint(25, 70))})
        analysis = Analysis(pos, RULEBOOK)
        occupied = set(pos.structures)
        for lot in range(80):
            if lot not in occupied:
                assert analysis.street_ok[lot] == streets_allow(occupied, lot), lot


@pytest.mark.parametrize("rules", [RULEBOOK, ABSTRACT_PLAY], ids=lambda r: r.name)
def test_rules_1_to_5_match_a_literal_reading_on_random_and_played_positions(rules):
    rng = random.Random(3)
    positions = [Position(random_layout(rng), _random_structures(rng, rng.randint(0, 60))) for _ in range(12)]
    for seed in range(4):
        positions.extend(Position.from_json(doc) for doc in random_positions(seed, rules.name)[10::6])
    for pos in positions:
        analysis = Analysis(pos, rules)
        literal = LiteralRules(pos, rules.fallback_dome_bound_by_rule3)
        for piece in ALL_PIECES:
            for lot in range(80):
                if lot in pos.structures:
                    continue
                expected = literal.legal(lot, piece)
                assert analysis.is_legal(lot, piece) == expected, (lot, piece)
                assert (not analysis.violations(lot, piece)) == expected, (lot, piece)


# --- rules 2, 3 and 5 by hand, under both rule sets ---------------------------------

# Tile A1 black (icon B2), everything else blue: no red or green lot exists, so red and
# green domes always fall back (rule 2).
BLUE_WITH_BLACK_A1 = layout(["BBBB", "BBBB", "BBBB", "BBBB", "KBBB"])


@pytest.mark.parametrize(("rules", "bound"), [(RULEBOOK, True), (ABSTRACT_PLAY, False)], ids=["rulebook", "abstract-play"])
def test_fallback_dome_and_rule3_on_an_empty_tile(rules, bound):
    analysis = Analysis(position(BLUE_WITH_BLACK_A1), rules)
    red_dome = Piece("dome", "red")
    rules_broken = [v.rule for v in analysis.violations(parse_lot("C1"), red_dome)]
    assert rules_broken == ([3] if bound else [])
    # A black tile is the black domes' colour: only towers are free there (rule 3's exception).
    rules_broken = [v.rule for v in analysis.violations(parse_lot("A1"), red_dome)]
    assert rules_broken == ([3] if bound else [])
    assert analysis.violations(parse_lot("A1"), Piece("tower", "green")) == []
    assert analysis.violations(parse_lot("A1"), Piece("dome", "black")) == []
    # A blue dome never falls back while blue lots are open: rule 2 under both rule sets.
    assert [v.rule for v in analysis.violations(parse_lot("A1"), Piece("dome", "blue"))] == [2, 3]
    assert [v.rule for v in analysis.violations(parse_lot("C1"), Piece("dome", "black"))] == [2, 3]


@pytest.mark.parametrize("rules", [RULEBOOK, ABSTRACT_PLAY], ids=lambda r: r.name)
def test_fallback_dome_after_two_structures_on_the_tile(rules):
    tiles = layout(["BBBB", "BBBB", "BBBB", "BBBB", "KBBB"], icons={"A1": "A1"})
    pos = position(tiles, "D1=blue-dome D2=blue-tower A1=black-dome A2=green-tower")
    analysis = Analysis(pos, rules)
    assert analysis.violations(parse_lot("C2"), Piece("dome", "red")) == []
    assert analysis.violations(parse_lot("B2"), Piece("dome", "green")) == []
    # after two, towers of any colour; domes still by rule 2
    assert analysis.violations(parse_lot("C1"), Piece("tower", "red")) == []
    assert [v.rule for v in analysis.violations(parse_lot("B2"), Piece("dome", "blue"))] == [2]


# Tile A1 red (icon B2), everything else black: blue and green domes always fall back.
RED_A1 = layout(["KKKK", "KKKK", "KKKK", "KKKK", "RKKK"])
ALL_RED_ELSEWHERE = "A5 C5 E5 G5 A7 C7 E7 G7 A9 C9 E9"  # 11 lots on black tiles, streets stay whole


def _red_elsewhere(domes: int) -> Position:
    lots = ALL_RED_ELSEWHERE.split()
    spec = [f"{lot}=red-tower" for lot in lots[:5]] + [f"{lot}=red-dome" for lot in lots[5:5 + domes]]
    return position(RED_A1, " ".join(spec))


@pytest.mark.parametrize(("rules", "icon_waits"), [(RULEBOOK, False), (ABSTRACT_PLAY, True)], ids=["rulebook", "abstract-play"])
def test_rule5_counts_only_pieces_that_could_legally_go_next_to_the_icon(rules, icon_waits):
    """All 5 red towers and 6 red domes stand elsewhere: no red piece is left in either supply.
    The red tile's other lots can then take only a fallback blue/green dome, which rule 3
    forbids under rulebook (so the icon is free) but not under abstract-play (so it waits)."""
    analysis = Analysis(_red_elsewhere(domes=6), rules)
    found = [v.rule for v in analysis.violations(parse_lot("B2"), Piece("dome", "blue"))]
    if icon_waits:
        assert found == [5]
    else:
        assert found == [3]


@pytest.mark.parametrize("rules", [RULEBOOK, ABSTRACT_PLAY], ids=lambda r: r.name)
def test_rule5_one_red_dome_left_in_either_supply_keeps_the_icon_waiting(rules):
    analysis = Analysis(_red_elsewhere(domes=5), rules)
    found = analysis.violations(parse_lot("B2"), Piece("dome", "red"))
    assert [v.rule for v in found] == [5]
    assert all(name in found[0].message for name in ("A1", "B1", "A2"))
    assert analysis.violations(parse_lot("A1"), Piece("dome", "red")) == []


# --- scoring -----------------------------------------------------------------------


def street_distance(pos: Position, a: int, b: int) -> int | None:
    """Street lots on the shortest streets-only path from structure a to structure b."""
    depth: dict[int, int] = {}
    queue: deque[int] = deque()
    for nb in NEIGHBOURS[a]:
        if nb not in pos.structures:
            depth[nb] = 1
            queue.append(nb)
    while queue:
        lot = queue.popleft()
        if b in NEIGHBOURS[lot]:
            return depth[lot]
        for nb in NEIGHBOURS[lot]:
            if nb not in pos.structures and nb not in depth:
                depth[nb] = depth[lot] + 1
                queue.append(nb)
    return None


def literal_totals(pos: Position, tie_pays_sole_owner: bool) -> dict[str, int]:
    totals = {"white": 0, "black": 0}
    s = pos.structures
    for lot, tower in s.items():
        if tower.kind != "tower":
            continue
        if tower.cap:
            reach = {o: street_distance(pos, lot, o) for o in s if o != lot}
            customers = sum(1 for o, d in reach.items() if d is not None and d <= 2 and s[o].color != tower.color)
            rivals = [d for o, d in reach.items() if d is not None and s[o].kind == "tower" and s[o].color == tower.color]
            totals[tower.cap] += customers * (min(rivals) if rivals else 0)
        elif tower.color == "green":
            for color in ("red", "blue"):
                near = {o: street_distance(pos, lot, o) for o in s if s[o].kind == "tower" and s[o].color == color}
                near = {o: d for o, d in near.items() if d is not None}
                if not near or min(near.values()) > 4:
                    continue
                d = min(near.values())
                nearest = [o for o, x in near.items() if x == d]
                owners = {s[o].cap for o in nearest}
                if len(owners) == 1 and None not in owners and (len(nearest) == 1 or tie_pays_sole_owner):
                    totals[owners.pop()] += 10 - 2 * d
    return totals


@pytest.mark.parametrize("rules", [RULEBOOK, ABSTRACT_PLAY], ids=lambda r: r.name)
def test_scoring_matches_a_literal_reading_on_random_positions(rules):
    rng = random.Random(17)
    for _ in range(40):
        pos = Position(uniform("K"), _random_structures(rng, rng.randint(8, 60)))
        result = score(pos, rules)
        expected = literal_totals(pos, rules.tie_pays_sole_owner)
        assert {p: result.total(p) for p in expected} == expected


def test_green_bonus_stops_after_four_street_lots():
    tiles = uniform("K")
    four = score(position(tiles, "A1=green-tower A6=red-tower/white"))
    assert four.to_json()["white"]["bonuses"] == [
        {"green": "A1", "tower": "A6", "color": "red", "distance": 4, "points": 2}]
    five = score(position(tiles, "A1=green-tower A7=red-tower/white"))
    assert five.to_json()["white"]["bonuses"] == [] and five.total("white") == 0


def test_customers_exclude_the_towers_own_colour_and_count_black_domes():
    tiles = uniform("K")
    # C1 capped red: B1/D1/C2 are its streets.  A1 red dome (same colour: no), E1 black dome (yes),
    # C3 blue tower at 2 (yes), C4 green dome at 3 (no).  Rival red tower on G1.
    pos = position(tiles, "C1=red-tower/black A1=red-dome E1=black-dome C3=blue-tower C5=green-dome G1=red-tower")
    (tower,) = score(pos).to_json()["black"]["towers"]
    assert tower["customer_lots"] == ["E1", "C3"]
    # E1 walls off row 1: C1 reaches G1 over D1 (or C2), D2, E2, F2, then F1 (or G2)
    assert tower["competition"] == street_distance(pos, parse_lot("C1"), parse_lot("G1")) == 5
    assert tower["competitor_lots"] == ["G1"] and tower["points"] == 10


def test_unclaimed_towers_do_not_score_and_a_tie_for_score_is_a_tie():
    pos = position(uniform("K"), "A1=red-tower C1=blue-tower E1=green-tower")
    assert score(pos).to_json() == {
        "white": {"total": 0, "towers": [], "bonuses": []},
        "black": {"total": 0, "towers": [], "bonuses": []},
        "winner": "tie",
    }


# --- game flow ---------------------------------------------------------------------


def test_black_moves_first_in_a_record():
    game = Game(uniform("K"))
    found = game.violations(build("white", "A1"))
    assert [v.rule for v in found] == [7]


def test_a_pass_cannot_carry_a_cap_and_a_build_needs_all_fields():
    tiles = GameRecord(uniform("K"), ()).to_json()["tiles"]
    with pytest.raises(FormatError, match=r"moves\[0\]"):
        GameRecord.from_json({"tiles": tiles, "moves": [{"player": "black", "pass": True, "cap": "A1"}]})
    with pytest.raises(FormatError, match=r"moves\[0\]\.build\.color: missing"):
        GameRecord.from_json({"tiles": tiles, "moves": [{"player": "black", "build": {"lot": "A1", "kind": "dome"}}]})


def test_a_cap_on_another_players_claimed_tower_is_refused_and_not_taken():
    game = Game(uniform("K"))
    game.push(build("black", "A1", "blue-tower", "A1"))
    found = game.play(build("white", "C1", "black-dome", "A1"))
    assert [v.rule for v in found] == [6]
    assert game.position.structures[parse_lot("A1")].cap == "black"
    assert game.caps_left == {"black": 2, "white": 3}


def test_judging_a_capped_build_on_an_occupied_lot_leaves_the_game_unchanged():
    game = Game(uniform("K"))
    game.push(build("black", "A1", "red-tower", "A1"))
    before = game.position.copy()
    found = game.violations(build("white", "A1", "blue-tower", "A1"))
    assert 1 in [v.rule for v in found]
    assert game.position == before


def test_push_then_pop_of_a_build_on_an_occupied_lot_restores_the_board():
    game = Game(uniform("K"))
    game.push(build("black", "A1", "red-tower", "A1"))
    before = game.position.copy()
    game.push(build("white", "A1", "blue-tower"))
    game.pop()
    assert game.position == before


def test_a_copied_game_does_not_depend_on_the_original():
    game = Game(uniform("K"))
    game.push(build("black", "A1"))
    assert game.analysis is not None
    clone = game.copy()
    game.pop()
    assert [v.rule for v in clone.violations(build("white", "A1"))] == [1]


# --- move inference ------------------------------------------------------------------


def test_inference_move_with_a_cap_on_an_older_tower():
    tiles = uniform("K")
    game = Game(tiles)
    game.push(build("black", "A1", "red-tower"))
    game.push(build("white", "C1", "blue-tower"))
    inference = infer_move(game.position, position(tiles, "A1=red-tower/black C1=blue-tower E1=green-dome"), game)
    assert inference.kind == "move"
    assert inference.move == build("black", "E1", "green-dome", "A1")


@pytest.mark.parametrize(("spec", "words"), [
    ("A1=red-tower/black", "removed"),  # white's tower gone
    ("A1=red-tower/black C1=blue-tower/white E1=green-dome", "white cap"),
    ("A1=red-tower C1=blue-tower E1=green-dome", "black cap on A1 was removed"),
    ("A1=red-tower/black C1=blue-tower/black", "without a build"),
    ("A1=red-tower/white C1=blue-tower E1=green-dome", "replaced by a white cap"),
    ("A1=red-tower/black C1=red-tower", "became a red tower"),
    ("A1=red-tower/black C1=blue-tower E1=green-dome G1=green-dome", "2 structures appeared"),
    ("A1=red-tower/black E1=blue-tower", "moved from C1 to E1"),
])
def test_inference_reports_everything_else_plainly(spec, words):
    tiles = uniform("K")
    game = Game(tiles)
    game.push(build("black", "A1", "red-tower", "A1"))
    game.push(build("white", "C1", "blue-tower"))
    inference = infer_move(game.position, position(tiles, spec), game)
    assert inference.kind == "problem" and inference.move is None
    assert any(words in p for p in inference.problems), inference.problems


def test_inference_reports_a_new_structure_beside_a_removal():
    tiles = uniform("K")
    game = Game(tiles)
    game.push(build("black", "A1", "red-tower", "A1"))
    game.push(build("white", "C1", "blue-tower"))
    inference = infer_move(game.position, position(tiles, "A1=red-tower/black E1=green-dome"), game)
    assert inference.kind == "problem"
    assert any("E1" in p for p in inference.problems), inference.problems
