"""A Netzwerk position: the board plus stones, miners, connectors, resources and whose turn it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from boardcam.engine.errors import FormatError
from boardcam.engine.jsonio import expect_int, expect_list, expect_object, expect_str, reject_unknown_keys
from boardcam.engine.netzwerk.board import (
    COLOR_INDEX,
    LANDSCAPE,
    RESOURCE_COLORS,
    Layout,
    check_game_name,
    layout_from_pieces,
)

STONES_PER_FIELD = 2
CONNECTORS_PER_PLAYER = 20
MIN_PLAYERS = 2
MAX_PLAYERS = 4
_PLAYER_RE = re.compile(r"^[a-z][a-z0-9_-]{0,19}$")
RESERVED_NAMES = frozenset({"tie"})

POSITION_KEYS = {"game", "pieces", "players", "turn", "stones", "miners", "connectors", "resources"}


@dataclass(frozen=True)
class Position:
    """Everything on and beside the table between two turns.

    Per field id: ``stones`` (0..2, landscape fields only).  Per player index
    (turn order = ``players`` order, clockwise): ``miners`` (field id or None
    before the initial placement), ``connectors`` (slot ids), ``resources``
    (count per colour in RESOURCE_COLORS order).  Immutable: a turn makes a
    new Position, so a replay can keep every step.
    """

    layout: Layout
    players: tuple[str, ...]
    turn: int
    stones: tuple[int, ...]
    miners: tuple[int | None, ...]
    connectors: tuple[frozenset[int], ...]
    resources: tuple[tuple[int, ...], ...]

    @classmethod
    def initial(cls, layout: Layout, players: Sequence[str]) -> Position:
        """The setup: 2 stones on every landscape field, no miners, no connectors, nothing in hand."""
        names = check_players(list(players), "players")
        n = len(names)
        return cls(
            layout=layout,
            players=names,
            turn=0,
            stones=tuple(STONES_PER_FIELD if f.kind == LANDSCAPE else 0 for f in layout.fields),
            miners=(None,) * n,
            connectors=(frozenset(),) * n,
            resources=((0,) * len(RESOURCE_COLORS),) * n,
        )

    # --- queries -----------------------------------------------------------

    @property
    def player(self) -> str:
        return self.players[self.turn]

    def player_index(self, name: str, where: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise FormatError(f"{where}: {name!r} is not a player ({', '.join(self.players)})") from None

    def connectors_left(self, player: int) -> int:
        return CONNECTORS_PER_PLAYER - len(self.connectors[player])

    def stones_on_board(self) -> tuple[int, ...]:
        """Stones still lying on the board, per colour."""
        totals = [0] * len(RESOURCE_COLORS)
        for fid, count in enumerate(self.stones):
            if count:
                totals[self.layout.color_of[fid]] += count
        return tuple(totals)

    def exhausted_colors(self) -> tuple[str, ...]:
        """Colours the board has fields of but no stones left on: the end condition."""
        present = self.layout.color_count()
        left = self.stones_on_board()
        return tuple(c for i, c in enumerate(RESOURCE_COLORS) if present.get(c, 0) and not left[i])

    def is_over(self) -> bool:
        """The game ends when one colour's stones are all taken, after that player's turn.

        Between turns that is simply: some colour is gone from the board.
        """
        return bool(self.exhausted_colors())

    def miner_at(self) -> dict[int, int]:
        """Field id -> player index of the miner standing there."""
        return {f: p for p, f in enumerate(self.miners) if f is not None}

    def connector_owners(self, edge: int) -> tuple[int, ...]:
        return tuple(p for p, own in enumerate(self.connectors) if edge in own)

    def next_turn(self, after: int) -> int:
        return (after + 1) % len(self.players)

    def with_changes(self, **changes: Any) -> Position:
        return replace(self, **changes)

    # --- JSON --------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        layout = self.layout
        return {
            "game": "netzwerk",
            "pieces": layout.pieces_to_json(),
            "players": list(self.players),
            "turn": self.player,
            "stones": {layout.key(f): self.stones[f] for f, field in enumerate(layout.fields)
                       if field.kind == LANDSCAPE},
            "miners": {
                name: None if at is None else layout.key(at) for name, at in zip(self.players, self.miners)
            },
            "connectors": {
                name: [layout.edge_to_json(e) for e in sorted(self.connectors[p])]
                for p, name in enumerate(self.players)
            },
            "resources": {
                name: {c: self.resources[p][i] for i, c in enumerate(RESOURCE_COLORS) if self.resources[p][i]}
                for p, name in enumerate(self.players)
            },
        }

    @classmethod
    def from_json(cls, doc: Any) -> Position:
        """Parse a position document.  Missing state keys mean the setup (2 stones per field, nothing placed)."""
        obj = expect_object(doc, "position")
        reject_unknown_keys(obj, POSITION_KEYS, "")
        check_game_name(obj)
        if "pieces" not in obj:
            raise FormatError("pieces: missing (a Netzwerk position includes its board)")
        layout = layout_from_pieces(obj["pieces"])
        if "players" not in obj:
            raise FormatError("players: missing (the player names in turn order)")
        players = check_players(expect_list(obj["players"], "players"), "players")
        start = cls.initial(layout, players)
        turn = 0
        if "turn" in obj:
            turn = start.player_index(expect_str(obj["turn"], "turn"), "turn")
        stones = _stones_from_json(layout, obj.get("stones"), start.stones)
        miners = _miners_from_json(start, obj.get("miners", {}))
        connectors = _connectors_from_json(start, obj.get("connectors", {}))
        resources = _resources_from_json(start, obj.get("resources", {}))
        position = cls(layout, players, turn, stones, miners, connectors, resources)
        _check_totals(position)
        return position


def check_players(raw: list[Any], where: str) -> tuple[str, ...]:
    names = tuple(expect_str(name, f"{where}[{i}]") for i, name in enumerate(raw))
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise FormatError(f"{where}: Netzwerk is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {len(names)}")
    for i, name in enumerate(names):
        if not _PLAYER_RE.match(name) or name in RESERVED_NAMES:
            raise FormatError(f"{where}[{i}]: {name!r} is not a player name (lower-case letters, digits, - or _)")
    if len(set(names)) != len(names):
        raise FormatError(f"{where}: a player is named twice")
    return names


def _stones_from_json(layout: Layout, value: Any, setup: tuple[int, ...]) -> tuple[int, ...]:
    if value is None:
        return setup
    raw = expect_object(value, "stones")
    stones = [0] * len(layout.fields)
    for name, count_doc in raw.items():
        where = f"stones.{name}"
        fid = layout.field_id(name, where)
        if layout.fields[fid].kind != LANDSCAPE:
            raise FormatError(f"{where}: stones lie only on landscape fields, this is a {layout.fields[fid].kind}")
        count = expect_int(count_doc, where)
        if not 0 <= count <= STONES_PER_FIELD:
            raise FormatError(f"{where}: {count} stones; a field holds 0 to {STONES_PER_FIELD}")
        stones[fid] = count
    return tuple(stones)


def _miners_from_json(start: Position, value: Any) -> tuple[int | None, ...]:
    raw = expect_object(value, "miners")
    miners: list[int | None] = [None] * len(start.players)
    where_of: dict[int, str] = {}
    for name, at in raw.items():
        where = f"miners.{name}"
        p = start.player_index(name, where)
        if at is None:
            continue
        fid = start.layout.field_id(expect_str(at, where), where)
        if start.layout.fields[fid].is_desert:
            raise FormatError(f"{where}: {start.layout.key(fid)} is a desert")
        if fid in where_of:
            raise FormatError(f"{where}: {start.layout.key(fid)} already holds the miner of {where_of[fid]}")
        where_of[fid] = name
        miners[p] = fid
    return tuple(miners)


def _connectors_from_json(start: Position, value: Any) -> tuple[frozenset[int], ...]:
    raw = expect_object(value, "connectors")
    result: list[frozenset[int]] = [frozenset()] * len(start.players)
    for name, edges_doc in raw.items():
        where = f"connectors.{name}"
        p = start.player_index(name, where)
        edges = edges_from_json(start.layout, edges_doc, where)
        if len(edges) > CONNECTORS_PER_PLAYER:
            raise FormatError(f"{where}: {len(edges)} connectors; a player has {CONNECTORS_PER_PLAYER}")
        result[p] = frozenset(edges)
    return tuple(result)


def edges_from_json(layout: Layout, value: Any, where: str) -> tuple[int, ...]:
    """A list of connectors; the same slot twice is an error (a player's two connectors there mean nothing)."""
    raw = expect_list(value, where)
    edges: list[int] = []
    for i, pair in enumerate(raw):
        edge = layout.edge_from_json(pair, f"{where}[{i}]")
        if edge in edges:
            raise FormatError(f"{where}[{i}]: connector {layout.edge_name(edge)} listed twice")
        edges.append(edge)
    return tuple(edges)


def resources_from_json(value: Any, where: str) -> tuple[int, ...]:
    raw = expect_object(value, where)
    counts = [0] * len(RESOURCE_COLORS)
    for color, count_doc in raw.items():
        cwhere = f"{where}.{color}"
        if color not in COLOR_INDEX:
            raise FormatError(f"{cwhere}: {color!r} is not one of {', '.join(RESOURCE_COLORS)}")
        count = expect_int(count_doc, cwhere)
        if count < 0:
            raise FormatError(f"{cwhere}: {count} is negative")
        counts[COLOR_INDEX[color]] = count
    return tuple(counts)


def _resources_from_json(start: Position, value: Any) -> tuple[tuple[int, ...], ...]:
    raw = expect_object(value, "resources")
    result = list(start.resources)
    for name, doc in raw.items():
        where = f"resources.{name}"
        result[start.player_index(name, where)] = resources_from_json(doc, where)
    return tuple(result)


def _check_totals(position: Position) -> None:
    """Stones on the board plus stones in hand cannot exceed the 2 per field the setup put down."""
    on_board = position.stones_on_board()
    present = position.layout.color_count()
    for i, color in enumerate(RESOURCE_COLORS):
        held = sum(r[i] for r in position.resources)
        limit = STONES_PER_FIELD * present.get(color, 0)
        if on_board[i] + held > limit:
            raise FormatError(
                f"resources: {held} {color} in hand and {on_board[i]} on the board, "
                f"but the board's {present.get(color, 0)} {color} fields started with {limit}"
            )
