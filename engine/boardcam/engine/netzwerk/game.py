"""Turns, game records, replay and random legal games.

A turn is the miner phase (placement on the very first turn, else a step or
jump; nothing when blocked) followed by the optional building phase.  A
replay judges every turn and then plays it anyway — the board on the table is
what it is — so one mistake does not hide every later verdict.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from boardcam.engine.errors import FormatError
from boardcam.engine.jsonio import expect_list, expect_object, expect_str, reject_unknown_keys
from boardcam.engine.netzwerk.board import RESOURCE_COLORS, Layout, check_game_name, layout_from_pieces
from boardcam.engine.netzwerk.moves import MinerMove, collected_color, miner_moves, miner_violations
from boardcam.engine.netzwerk.position import Position, check_players, edges_from_json, resources_from_json
from boardcam.engine.netzwerk.roads import BuildCheck, check_build, payment_to_json
from boardcam.engine.netzwerk.rules import ORDER, OVER, RULEBOOK, Ruleset, Violation


@dataclass(frozen=True)
class Turn:
    """What a player did: the miner's field (placement or destination; None = it stayed), connectors, payment."""

    player: int
    miner: int | None
    build: tuple[int, ...] = ()
    pay: tuple[int, ...] | None = None

    def to_json(self, position: Position, placing: bool) -> dict[str, Any]:
        layout = position.layout
        doc: dict[str, Any] = {"player": position.players[self.player]}
        if self.miner is not None:
            doc["place" if placing else "miner"] = layout.key(self.miner)
        if self.build:
            doc["build"] = [layout.edge_to_json(e) for e in self.build]
        if self.pay is not None:
            doc["pay"] = payment_to_json(self.pay)
        return doc


def turn_from_json(position: Position, doc: Any, where: str) -> Turn:
    """A record move -> Turn.  "place" and "miner" mean the same field; the board decides which it is."""
    obj = expect_object(doc, where)
    reject_unknown_keys(obj, {"player", "place", "miner", "build", "pay"}, where)
    if "player" not in obj:
        raise FormatError(f"{where}.player: missing")
    player = position.player_index(expect_str(obj["player"], f"{where}.player"), f"{where}.player")
    if "place" in obj and "miner" in obj:
        raise FormatError(f"{where}: give either place (first turn) or miner, not both")
    miner: int | None = None
    for key in ("place", "miner"):
        if key in obj and obj[key] is not None:
            miner = position.layout.field_id(expect_str(obj[key], f"{where}.{key}"), f"{where}.{key}")
    build = edges_from_json(position.layout, obj.get("build", []), f"{where}.build")
    pay = resources_from_json(obj["pay"], f"{where}.pay") if "pay" in obj else None
    return Turn(player, miner, build, pay)


@dataclass(frozen=True)
class TurnReport:
    """The verdict on one turn and what it did to the table."""

    ply: int
    player: int
    miner_from: int | None
    miner: MinerMove | None
    collected: int | None
    build: BuildCheck
    violations: tuple[Violation, ...]
    ends_game: bool

    @property
    def legal(self) -> bool:
        return not self.violations

    def to_json(self, position: Position) -> dict[str, Any]:
        layout = position.layout
        doc: dict[str, Any] = {
            "ply": self.ply,
            "player": position.players[self.player],
            "legal": self.legal,
            "violations": [v.to_json() for v in self.violations],
        }
        if self.miner is None:
            doc["miner"] = None
        else:
            doc["miner"] = {
                "from": None if self.miner_from is None else layout.key(self.miner_from),
                "to": layout.key(self.miner.to),
                "over": [layout.key(f) for f in self.miner.over],
            }
        doc["collected"] = None if self.collected is None else RESOURCE_COLORS[self.collected]
        doc["build"] = {
            "connectors": [layout.edge_to_json(e) for e in self.build.edges],
            "cost": self.build.cost,
            "pay": None if self.build.payment is None else payment_to_json(self.build.payment),
        }
        doc["ends_game"] = self.ends_game
        return doc


def play_turn(position: Position, turn: Turn, rules: Ruleset = RULEBOOK, ply: int = 1) -> tuple[Position, TurnReport]:
    """Judge ``turn`` and play it anyway; returns the position after it and the report.

    Whether the miner is placed or moved follows from the board (is it there
    yet?), not from the record's wording.  An illegal miner move is made as
    recorded, except onto a desert or a field holding another miner: no
    position can show that, so the miner stays where it was (and collects nothing).
    """
    violations: list[Violation] = []
    layout = position.layout
    p = turn.player
    if position.is_over():
        violations.append(Violation(OVER, "the game is over: a colour's stones are all taken"))
    if p != position.turn:
        violations.append(Violation(ORDER, f"it is {position.player}'s turn, not {position.players[p]}'s"))
    here = position.miners[p]
    violations.extend(miner_violations(position, p, turn.miner))
    stones = list(position.stones)
    resources = [list(r) for r in position.resources]
    miners = list(position.miners)
    move: MinerMove | None = None
    collected: int | None = None
    impossible = turn.miner is not None and (
        layout.fields[turn.miner].is_desert or position.miner_at().get(turn.miner, p) != p
    )
    if turn.miner is not None and not impossible:
        legal = {m.to: m for m in miner_moves(position, p)}
        move = legal.get(turn.miner, MinerMove(turn.miner, (), here is None))
        miners[p] = turn.miner
        color = collected_color(position, turn.miner)
        if color is not None:
            stones[turn.miner] -= 1
            resources[p][color] += 1
            collected = color
    mid = position.with_changes(
        stones=tuple(stones), miners=tuple(miners), resources=tuple(tuple(r) for r in resources)
    )
    check = check_build(mid, p, turn.build, rules, turn.pay)
    violations.extend(check.violations)
    connectors = list(mid.connectors)
    fresh = [e for e in check.edges if e not in connectors[p]]
    # a player cannot place connectors they do not have: beyond the 20 nothing is placed
    connectors[p] = connectors[p] | frozenset(fresh[: max(0, mid.connectors_left(p))])
    if check.payment is not None:
        payment = check.payment
    elif turn.pay is not None:
        payment = tuple(min(paid, have) for paid, have in zip(turn.pay, resources[p]))
    else:
        payment = _pay_what_there_is(mid, p, check)
    resources[p] = [have - paid for have, paid in zip(resources[p], payment)]
    after = mid.with_changes(
        connectors=tuple(connectors),
        resources=tuple(tuple(r) for r in resources),
        turn=position.next_turn(p),
    )
    ends = after.is_over() and not position.is_over()
    report = TurnReport(ply, p, here, move, collected, check, tuple(violations), ends)
    return after, report


def _pay_what_there_is(position: Position, player: int, check: BuildCheck) -> tuple[int, ...]:
    """After an unaffordable build the connectors stand anyway; take what the colours allow, never below 0."""
    layout = position.layout
    left = list(position.resources[player])
    paid = [0] * len(RESOURCE_COLORS)
    for e in check.edges:
        for f in layout.edge_ends[e]:
            color = layout.color_of[f]
            if color >= 0 and left[color] > 0:
                left[color] -= 1
                paid[color] += 1
                break
    return tuple(paid)


@dataclass(frozen=True)
class Record:
    """A game record: the board, the players in turn order and the turns as played."""

    layout: Layout
    players: tuple[str, ...]
    turns: tuple[Turn, ...]

    def start(self) -> Position:
        return Position.initial(self.layout, self.players)

    def to_json(self) -> dict[str, Any]:
        moves = []
        position = self.start()
        for turn in self.turns:
            placing = position.miners[turn.player] is None
            moves.append(turn.to_json(position, placing))
            position, _ = play_turn(position, turn)
        return {
            "game": "netzwerk",
            "pieces": self.layout.pieces_to_json(),
            "players": list(self.players),
            "moves": moves,
        }

    @classmethod
    def from_json(cls, doc: Any) -> Record:
        obj = expect_object(doc, "record")
        reject_unknown_keys(obj, {"game", "pieces", "players", "moves"}, "")
        check_game_name(obj)
        if "pieces" not in obj:
            raise FormatError("pieces: missing (a Netzwerk record includes its board)")
        layout = layout_from_pieces(obj["pieces"])
        if "players" not in obj:
            raise FormatError("players: missing (the player names in turn order)")
        players = check_players(expect_list(obj["players"], "players"), "players")
        if "moves" not in obj:
            raise FormatError("moves: missing")
        position = Position.initial(layout, players)
        turns = tuple(
            turn_from_json(position, move_doc, f"moves[{i}]")
            for i, move_doc in enumerate(expect_list(obj["moves"], "moves"))
        )
        return cls(layout, players, turns)


@dataclass(frozen=True)
class Replay:
    positions: tuple[Position, ...]
    reports: tuple[TurnReport, ...]

    @property
    def final(self) -> Position:
        return self.positions[-1]


def replay(record: Record, rules: Ruleset = RULEBOOK) -> Replay:
    """Play every turn of ``record`` from the setup, judging each and going on after illegal ones."""
    position = record.start()
    positions = [position]
    reports = []
    for ply, turn in enumerate(record.turns, start=1):
        position, report = play_turn(position, turn, rules, ply)
        positions.append(position)
        reports.append(report)
    return Replay(tuple(positions), tuple(reports))


# --- random legal games ------------------------------------------------------

#: How often a random miner prefers a field with stones when it can reach one
#: (pure random walks leave the last stones of a colour lying for hundreds of turns).
STONE_BIAS = 0.6


def random_turn(position: Position, rng: random.Random, rules: Ruleset = RULEBOOK,
                tries: int = 6) -> Turn:
    """A random legal turn: a random miner move, then (when one is found and affordable) one shortest chain.

    Chains run from a city or the player's own road through landscape fields
    to another city, so they obey every version of the building rules; the
    engine still judges each candidate and only a legal one is built.
    """
    p = position.turn
    moves = miner_moves(position, p)
    collecting = tuple(m for m in moves if position.stones[m.to])
    if collecting and rng.random() < STONE_BIAS:
        moves = collecting
    target = rng.choice(moves).to if moves else None
    mid = position
    if target is not None:
        mid, _ = play_turn(position, Turn(p, target), rules)
        mid = mid.with_changes(turn=p)
    if sum(mid.resources[p]) < 2:
        return Turn(p, target)
    for _ in range(tries):
        chain = random_chain(mid, p, rng)
        if chain and check_build(mid, p, chain, rules).legal:
            return Turn(p, target, tuple(chain))
    return Turn(p, target)


def random_chain(position: Position, player: int, rng: random.Random) -> list[int]:
    """A shortest chain (random among equals) from a random city or own-road field to another city.

    The search goes on only through landscape fields off the player's roads,
    so the chain's interior touches no city and no own road.
    """
    layout = position.layout
    fields = layout.fields
    own = position.connectors[player]
    on_road = {f for e in own for f in layout.edge_ends[e] if not fields[f].is_city}
    others = {e for q, edges in enumerate(position.connectors) if q != player for e in edges}
    two_players = len(position.players) == 2
    start = rng.choice(list(layout.cities) + sorted(on_road))
    parent: dict[int, tuple[int, int]] = {start: (-1, -1)}
    frontier = [start]
    while frontier:
        rng.shuffle(frontier)
        reached = []
        for f in frontier:
            for e in layout.field_edges[f]:
                if e in own or (two_players and e in others):
                    continue
                a, b = layout.edge_ends[e]
                g = b if a == f else a
                if g in parent or fields[g].is_desert or (fields[f].is_city and fields[g].is_city):
                    continue
                parent[g] = (f, e)
                if fields[g].is_city:
                    return _path(parent, g)
                if g not in on_road:
                    reached.append(g)
        frontier = reached
    return []


def _path(parent: dict[int, tuple[int, int]], end: int) -> list[int]:
    edges = []
    f = end
    while parent[f][0] != -1:
        f, e = parent[f]
        edges.append(e)
    return edges


def random_game(seed: int, players: Sequence[str] = ("white", "purple"), rules: Ruleset = RULEBOOK,
                layout: Layout | None = None, max_turns: int = 400) -> Record:
    """A random legal game from the setup to its end (or ``max_turns``), on a random board unless given one."""
    rng = random.Random(seed)
    board = layout if layout is not None else _random_board(seed, len(players))
    position = Position.initial(board, players)
    turns: list[Turn] = []
    while not position.is_over() and len(turns) < max_turns:
        turn = random_turn(position, rng, rules)
        position, _ = play_turn(position, turn, rules)
        turns.append(turn)
    return Record(board, position.players, tuple(turns))


def _random_board(seed: int, players: int) -> Layout:
    from boardcam.engine.netzwerk.board import random_layout

    return random_layout(seed, players)


def random_positions(seed: int, players: Sequence[str] = ("white", "purple"),
                     rules: Ruleset = RULEBOOK) -> list[dict[str, Any]]:
    """Position JSON after each turn of a random legal game (index 0 = the setup)."""
    record = random_game(seed, players, rules)
    return [p.to_json() for p in replay(record, rules).positions]
