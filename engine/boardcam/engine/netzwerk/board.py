"""The Netzwerk board: hexagonal fields on an axial grid, laid from 3-field pieces.

Fields are named by their axial coordinates ``"q,r"`` (the same names the
vision will report later) and numbered 0..n-1 in the order the layout lists
them, so every rule works on small integers.  The neighbour and connector
tables are built once per :class:`Layout` because every rule, every miner move
and every road check walks them.

Geometry: pointy-top hexagons; the six neighbours of ``(q, r)`` are
``(q+1, r)``, ``(q+1, r-1)``, ``(q, r-1)``, ``(q-1, r)``, ``(q-1, r+1)``,
``(q, r+1)`` (directions 0..5, direction ``d`` opposite ``d+3``); a straight
line keeps one direction.  On a picture the centre of ``(q, r)`` is at
``x = √3·(q + r/2)``, ``y = 1.5·r`` (y downwards) times the hexagon's radius.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from boardcam.engine.errors import FormatError
from boardcam.engine.jsonio import expect_int, expect_list, expect_object, expect_str, reject_unknown_keys

GAME_NAME = "netzwerk"

#: The five resource (landscape) colours; resources are counted in this order.
RESOURCE_COLORS: tuple[str, ...] = ("yellow", "orange", "red", "green", "blue")
COLOR_INDEX: Mapping[str, int] = {color: index for index, color in enumerate(RESOURCE_COLORS)}

CITY = "city"
LANDSCAPE = "landscape"
DESERT = "desert"
KINDS: tuple[str, ...] = (CITY, LANDSCAPE, DESERT)

#: Axial steps to the six neighbours; direction d is opposite direction (d + 3) % 6.
DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
NO_FIELD = -1

FIELDS_PER_PIECE = 3
#: The boxed game (Czech rules, "Obsah"), and what the 2-player setup leaves out.
FULL_PIECES = 13
TWO_PLAYER_PIECES = 11
FULL_FIELDS_PER_COLOR = 5
FULL_CITIES = 9
FULL_DESERTS = 5
TWO_PLAYER_LEFT_OUT_CITY = 6

_KEY_RE = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


@dataclass(frozen=True)
class Field:
    """One hexagon: a city (with its printed value), a landscape field (with its colour) or a desert."""

    q: int
    r: int
    kind: str
    color: str | None = None
    value: int | None = None

    @property
    def key(self) -> str:
        return field_key(self.q, self.r)

    @property
    def is_city(self) -> bool:
        return self.kind == CITY

    @property
    def is_desert(self) -> bool:
        return self.kind == DESERT

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind}
        if self.kind == LANDSCAPE:
            doc["color"] = self.color
        elif self.kind == CITY:
            doc["value"] = self.value
        return doc

    @classmethod
    def from_json(cls, q: int, r: int, value: Any, where: str) -> Field:
        doc = expect_object(value, where)
        reject_unknown_keys(doc, {"kind", "color", "value"}, where)
        if "kind" not in doc:
            raise FormatError(f"{where}.kind: missing (city, landscape or desert)")
        kind = expect_str(doc["kind"], f"{where}.kind").lower()
        if kind == CITY:
            if "color" in doc:
                raise FormatError(f"{where}.color: a city is black and has no resource colour")
            if "value" not in doc:
                raise FormatError(f"{where}.value: missing (the number printed on the city)")
            number = expect_int(doc["value"], f"{where}.value")
            if number < 0:
                raise FormatError(f"{where}.value: {number} is negative")
            return cls(q, r, CITY, None, number)
        if kind == LANDSCAPE:
            if "value" in doc:
                raise FormatError(f"{where}.value: only cities carry a value")
            if "color" not in doc:
                raise FormatError(f"{where}.color: missing (one of {', '.join(RESOURCE_COLORS)})")
            color = expect_str(doc["color"], f"{where}.color").lower()
            if color not in COLOR_INDEX:
                raise FormatError(f"{where}.color: {color!r} is not one of {', '.join(RESOURCE_COLORS)}")
            return cls(q, r, LANDSCAPE, color, None)
        if kind == DESERT:
            extra = sorted(set(doc) - {"kind"})
            if extra:
                raise FormatError(f"{where}.{extra[0]}: a desert has no {extra[0]}")
            return cls(q, r, DESERT)
        raise FormatError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")


def field_key(q: int, r: int) -> str:
    return f"{q},{r}"


def parse_field_key(text: str, where: str) -> tuple[int, int]:
    """``"q,r"`` -> (q, r); anything else is a FormatError naming ``where``."""
    match = _KEY_RE.match(text)
    if not match:
        raise FormatError(f"{where}: {text!r} is not a field name 'q,r' (two integers)")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True, eq=False)
class Layout:
    """The laid-out board: pieces of three fields, plus tables built once.

    ``pieces[i]`` holds the field ids of piece i.  ``neighbours[f][d]`` is the
    field one step from ``f`` in direction ``d`` or :data:`NO_FIELD`.  Every
    pair of neighbouring fields is a connector *slot* ("edge") with an id:
    ``edge_ends[e] == (a, b)`` with ``a < b``, ``edge_id[(a, b)] == e`` and
    ``field_edges[f]`` the slots at f.  Slots touching a desert exist (a
    connector put there by mistake can still be described) but may not be built.
    """

    fields: tuple[Field, ...]
    pieces: tuple[tuple[int, ...], ...]
    index: Mapping[str, int] = field(init=False, repr=False)
    neighbours: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    edge_ends: tuple[tuple[int, int], ...] = field(init=False, repr=False)
    edge_id: Mapping[tuple[int, int], int] = field(init=False, repr=False)
    field_edges: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    cities: tuple[int, ...] = field(init=False, repr=False)
    is_city: tuple[bool, ...] = field(init=False, repr=False)
    color_of: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by_coord = {(f.q, f.r): i for i, f in enumerate(self.fields)}
        neighbours = tuple(
            tuple(by_coord.get((f.q + dq, f.r + dr), NO_FIELD) for dq, dr in DIRECTIONS)
            for f in self.fields
        )
        ends: list[tuple[int, int]] = []
        for a, row in enumerate(neighbours):
            for b in row:
                if b > a:
                    ends.append((a, b))
        ends.sort()
        edge_id = {pair: e for e, pair in enumerate(ends)}
        field_edges: list[list[int]] = [[] for _ in self.fields]
        for e, (a, b) in enumerate(ends):
            field_edges[a].append(e)
            field_edges[b].append(e)
        object.__setattr__(self, "index", {f.key: i for i, f in enumerate(self.fields)})
        object.__setattr__(self, "neighbours", neighbours)
        object.__setattr__(self, "edge_ends", tuple(ends))
        object.__setattr__(self, "edge_id", edge_id)
        object.__setattr__(self, "field_edges", tuple(tuple(x) for x in field_edges))
        object.__setattr__(self, "cities", tuple(i for i, f in enumerate(self.fields) if f.is_city))
        object.__setattr__(self, "is_city", tuple(f.is_city for f in self.fields))
        object.__setattr__(
            self,
            "color_of",
            tuple(COLOR_INDEX[f.color] if f.color is not None else NO_FIELD for f in self.fields),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self.fields == other.fields and self.pieces == other.pieces

    def __hash__(self) -> int:
        return hash((self.fields, self.pieces))

    # --- names -----------------------------------------------------------

    def field_id(self, key: str, where: str) -> int:
        """The id of the field named ``key``; a FormatError naming ``where`` if it is not on the board."""
        q, r = parse_field_key(key, where)
        found = self.index.get(field_key(q, r))
        if found is None:
            raise FormatError(f"{where}: field {field_key(q, r)} is not on the board")
        return found

    def key(self, field_id: int) -> str:
        return self.fields[field_id].key

    def edge_keys(self, edge: int) -> tuple[str, str]:
        a, b = self.edge_ends[edge]
        return self.fields[a].key, self.fields[b].key

    def edge_from_json(self, value: Any, where: str) -> int:
        """A connector ``["q,r", "q,r"]`` between two neighbouring fields -> its slot id."""
        pair = expect_list(value, where)
        if len(pair) != 2:
            raise FormatError(f"{where}: a connector is a pair of field names, got {len(pair)} items")
        a = self.field_id(expect_str(pair[0], f"{where}[0]"), f"{where}[0]")
        b = self.field_id(expect_str(pair[1], f"{where}[1]"), f"{where}[1]")
        slot = self.edge_id.get((min(a, b), max(a, b)))
        if slot is None:
            raise FormatError(
                f"{where}: fields {self.key(a)} and {self.key(b)} are not neighbours"
            )
        return slot

    def edge_to_json(self, edge: int) -> list[str]:
        return list(self.edge_keys(edge))

    def edge_name(self, edge: int) -> str:
        a, b = self.edge_keys(edge)
        return f"{a}/{b}"

    def step(self, field_id: int, direction: int) -> int:
        return self.neighbours[field_id][direction]

    def color_count(self) -> Counter[str]:
        return Counter(f.color for f in self.fields if f.color is not None)

    # --- JSON ------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"game": GAME_NAME, "pieces": self.pieces_to_json()}

    def pieces_to_json(self) -> list[dict[str, Any]]:
        return [{self.fields[i].key: self.fields[i].to_json() for i in piece} for piece in self.pieces]

    @classmethod
    def from_json(cls, doc: Any, where: str = "layout") -> Layout:
        """A layout document ``{"game": "netzwerk", "pieces": [...]}`` (extra position keys are the caller's)."""
        obj = expect_object(doc, where)
        check_game_name(obj)
        if "pieces" not in obj:
            raise FormatError("pieces: missing (a Netzwerk board is a list of 3-field pieces)")
        return layout_from_pieces(obj["pieces"])


def check_game_name(doc: Mapping[str, Any]) -> None:
    game = doc.get("game", GAME_NAME)
    if game != GAME_NAME:
        raise FormatError(f"game: {game!r} is not {GAME_NAME!r}")


def layout_from_pieces(value: Any) -> Layout:
    """Parse and check the structure of a board: three edge-joined fields per piece, no overlap, one connected shape."""
    raw = expect_list(value, "pieces")
    if not raw:
        raise FormatError("pieces: empty (a board needs pieces)")
    fields: list[Field] = []
    pieces: list[tuple[int, ...]] = []
    seen: dict[tuple[int, int], int] = {}
    for p, piece_doc in enumerate(raw):
        where = f"pieces[{p}]"
        piece_obj = expect_object(piece_doc, where)
        if len(piece_obj) != FIELDS_PER_PIECE:
            raise FormatError(f"{where}: a piece has {FIELDS_PER_PIECE} fields, got {len(piece_obj)}")
        ids: list[int] = []
        for name, field_doc in piece_obj.items():
            fwhere = f"{where}.{name}"
            q, r = parse_field_key(name, fwhere)
            if (q, r) in seen:
                raise FormatError(
                    f"{fwhere}: field {field_key(q, r)} is already on piece {seen[(q, r)]} (pieces overlap)"
                )
            seen[(q, r)] = p
            ids.append(len(fields))
            fields.append(Field.from_json(q, r, field_doc, fwhere))
        piece_fields = [fields[i] for i in ids]
        if not _connected([(f.q, f.r) for f in piece_fields]):
            raise FormatError(f"{where}: its 3 fields are not joined edge to edge")
        colours = [f.color if f.kind == LANDSCAPE else f.kind for f in piece_fields]
        if len(set(colours)) != len(colours):
            raise FormatError(f"{where}: two fields of the same colour ({_first_repeat(colours)}); "
                              "a piece has 3 fields of different colours")
        pieces.append(tuple(ids))
    if not _connected(list(seen)):
        raise FormatError("pieces: the board is not one connected shape")
    return Layout(tuple(fields), tuple(pieces))


def _first_repeat(items: Sequence[str | None]) -> str:
    counts = Counter(items)
    return next(str(item) for item in items if counts[item] > 1)


def _connected(coords: Sequence[tuple[int, int]]) -> bool:
    if not coords:
        return True
    todo = [coords[0]]
    cells = set(coords)
    seen = {coords[0]}
    while todo:
        q, r = todo.pop()
        for dq, dr in DIRECTIONS:
            nxt = (q + dq, r + dr)
            if nxt in cells and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return len(seen) == len(cells)


def layout_problems(layout: Layout, players: int) -> list[str]:
    """How this board differs from the boxed game's for ``players`` players (empty when it matches).

    The rules fix the contents (13 pieces; 25 landscape fields, 5 per colour;
    9 cities; 5 deserts) and the 2-player setup ("leave out the piece with
    city 6 and the piece holding the remaining 3 colours, so that exactly one
    field of each colour is missing").
    """
    problems: list[str] = []
    two = players == 2
    want_pieces = TWO_PLAYER_PIECES if two else FULL_PIECES
    want_color = FULL_FIELDS_PER_COLOR - 1 if two else FULL_FIELDS_PER_COLOR
    want_cities = FULL_CITIES - 1 if two else FULL_CITIES
    if len(layout.pieces) != want_pieces:
        extra = (" (leave out the piece with city 6 and the piece with the remaining 3 colours)"
                 if two else "")
        problems.append(f"pieces: {len(layout.pieces)} pieces; {players} players play with {want_pieces}{extra}")
    colors = layout.color_count()
    odd = [f"{colors.get(c, 0)} {c}" for c in RESOURCE_COLORS if colors.get(c, 0) != want_color]
    if odd:
        problems.append(f"pieces: {', '.join(odd)} fields; {players} players play with {want_color} of each colour")
    cities = sum(1 for f in layout.fields if f.is_city)
    if cities != want_cities:
        problems.append(f"pieces: {cities} cities; {players} players play with {want_cities}")
    deserts = sum(1 for f in layout.fields if f.is_desert)
    if deserts != FULL_DESERTS:
        problems.append(f"pieces: {deserts} deserts; the game has {FULL_DESERTS}")
    if two:
        six = [f.key for f in layout.fields if f.is_city and f.value == TWO_PLAYER_LEFT_OUT_CITY]
        if six:
            problems.append(f"pieces.{six[0]}: city {TWO_PLAYER_LEFT_OUT_CITY} is left out with 2 players")
    return problems


# --- the boxed pieces and random layouts -------------------------------------

#: The 13 pieces as kinds: a colour name, ("city", value) or "desert".  The
#: rules give the mix (9 cities, 5 deserts, 5 fields of each colour, three
#: different colours per piece, one piece with city 6 and two colours, one
#: piece of three colours for the 2-player setup); the printed city values are
#: not all known, so these are stand-ins and layouts carry their own values.
STANDARD_PIECES: tuple[tuple[str | tuple[str, int], ...], ...] = (
    (("city", 6), "yellow", "orange"),
    ("red", "green", "blue"),
    (("city", 1), "red", "green"),
    (("city", 2), "blue", "yellow"),
    (("city", 2), "orange", "red"),
    (("city", 3), "green", "blue"),
    (("city", 3), "yellow", "red"),
    (("city", 4), "orange", "green"),
    ("desert", "blue", "orange"),
    ("desert", "yellow", "green"),
    ("desert", "red", "blue"),
    ("desert", ("city", 4), "orange"),
    ("desert", ("city", 5), "yellow"),
)
#: Pieces 0 and 1 above are the two left out with 2 players.
TWO_PLAYER_LEFT_OUT = (0, 1)

_TRIOMINOES: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    ((0, 0), DIRECTIONS[a], (DIRECTIONS[a][0] + DIRECTIONS[b][0], DIRECTIONS[a][1] + DIRECTIONS[b][1]))
    for a in range(6)
    for b in range(6)
    if b != (a + 3) % 6
)


def _field_from_kind(q: int, r: int, kind: str | tuple[str, int]) -> Field:
    if isinstance(kind, tuple):
        return Field(q, r, CITY, None, kind[1])
    if kind == DESERT:
        return Field(q, r, DESERT)
    return Field(q, r, LANDSCAPE, kind, None)


def random_layout(seed: int, players: int = 4) -> Layout:
    """A legal-looking board: the boxed pieces shuffled and laid edge to edge into a compact blob.

    Each new piece takes a free cell next to the board nearest the middle and
    grows two more cells from it, so the shape is connected and the pieces fit.
    """
    rng = random.Random(seed)
    kinds = [p for i, p in enumerate(STANDARD_PIECES) if players > 2 or i not in TWO_PLAYER_LEFT_OUT]
    rng.shuffle(kinds)
    taken: set[tuple[int, int]] = set()
    fields: list[Field] = []
    pieces: list[tuple[int, ...]] = []
    for kind in kinds:
        cells = _place_piece(rng, taken)
        contents = list(kind)
        rng.shuffle(contents)
        ids = []
        for (q, r), what in zip(cells, contents):
            taken.add((q, r))
            ids.append(len(fields))
            fields.append(_field_from_kind(q, r, what))
        pieces.append(tuple(ids))
    return Layout(tuple(fields), tuple(pieces))


def _place_piece(rng: random.Random, taken: set[tuple[int, int]]) -> list[tuple[int, int]]:
    if not taken:
        shape = rng.choice(_TRIOMINOES)
        return [(q, r) for q, r in shape]
    frontier = sorted(
        {(q + dq, r + dr) for q, r in taken for dq, dr in DIRECTIONS} - taken,
        key=lambda c: (_hex_distance(c), rng.random()),
    )
    for q0, r0 in frontier:
        shapes = list(_TRIOMINOES)
        rng.shuffle(shapes)
        for shape in shapes:
            cells = [(q0 + dq, r0 + dr) for dq, dr in shape]
            if not any(c in taken for c in cells):
                return cells
    raise AssertionError("an unbounded grid always has room")  # pragma: no cover


def _hex_distance(cell: tuple[int, int]) -> int:
    q, r = cell
    return (abs(q) + abs(r) + abs(q + r)) // 2
