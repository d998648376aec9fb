"""A position: the tile layout and what stands on each lot, with its JSON format."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from boardcam.engine.aliencity.board import (
    LOT_NAMES,
    TILE_KEYS,
    TILE_LOTS,
    TILE_OF,
    parse_lot,
    parse_tile_key,
)
from boardcam.engine.aliencity.pieces import COLORS, PLAYERS, Structure, Tile
from boardcam.engine.errors import FormatError
from boardcam.engine.jsonio import (
    expect_object,
    expect_str,
    reject_unknown_keys,
)

GAME_NAME = "alien-city"
TILES_PER_COLOR = 5


class Position:
    """Tiles plus structures.  Cheap to copy; the Game pushes and pops on one."""

    __slots__ = ("tiles", "structures")

    def __init__(self, tiles: Mapping[int, Tile], structures: Mapping[int, Structure] | None = None):
        self.tiles: dict[int, Tile] = dict(tiles)
        self.structures: dict[int, Structure] = dict(structures or {})

    def copy(self) -> Position:
        return Position(self.tiles, self.structures)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and self.tiles == other.tiles
            and self.structures == other.structures
        )

    def __hash__(self) -> int:
        return hash((frozenset(self.tiles.items()), frozenset(self.structures.items())))

    def __repr__(self) -> str:
        return f"Position({len(self.structures)} structures)"

    def tile_color(self, lot: int) -> str:
        return self.tiles[TILE_OF[lot]].color

    def is_icon(self, lot: int) -> bool:
        return self.tiles[TILE_OF[lot]].icon == lot

    def count_on_tile(self, tile_key: int) -> int:
        return sum(1 for lot in TILE_LOTS[tile_key] if lot in self.structures)

    def empty_board(self) -> Position:
        return Position(self.tiles)

    # --- JSON ---------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "game": GAME_NAME,
            "tiles": tiles_to_json(self.tiles),
            "structures": {
                LOT_NAMES[lot]: structure_to_json(self.structures[lot])
                for lot in sorted(self.structures)
            },
        }

    @classmethod
    def from_json(cls, doc: Any) -> Position:
        doc = expect_object(doc, "position")
        reject_unknown_keys(doc, {"game", "tiles", "structures", "confidence", "board",
                                  "occluded", "occluded_lots", "timing_ms"}, "")
        check_game_name(doc)
        if "tiles" not in doc:
            raise FormatError("tiles: missing (a position needs the 20 tiles)")
        tiles = tiles_from_json(doc["tiles"])
        structures = structures_from_json(doc.get("structures", {}))
        return cls(tiles, structures)


def check_game_name(doc: dict[str, Any]) -> None:
    game = doc.get("game", GAME_NAME)
    if game != GAME_NAME:
        raise FormatError(f"game: {game!r} is not {GAME_NAME!r} (use --game for other games)")


def tiles_to_json(tiles: Mapping[int, Tile]) -> dict[str, Any]:
    return {
        LOT_NAMES[key]: {"color": tiles[key].color, "icon": LOT_NAMES[tiles[key].icon]}
        for key in TILE_KEYS
        if key in tiles
    }


def tiles_from_json(value: Any) -> dict[int, Tile]:
    raw = expect_object(value, "tiles")
    tiles: dict[int, Tile] = {}
    for name, tile_doc in raw.items():
        field = f"tiles.{name}"
        key = parse_tile_key(name, field)
        if key in tiles:
            raise FormatError(f"{field}: tile {LOT_NAMES[key]} given twice")
        tile_doc = expect_object(tile_doc, field)
        reject_unknown_keys(tile_doc, {"color", "icon"}, field)
        for required in ("color", "icon"):
            if required not in tile_doc:
                raise FormatError(f"{field}.{required}: missing")
        color = expect_str(tile_doc["color"], f"{field}.color").lower()
        if color not in COLORS:
            raise FormatError(f"{field}.color: {color!r} is not one of {', '.join(COLORS)}")
        icon = parse_lot(expect_str(tile_doc["icon"], f"{field}.icon"), f"{field}.icon")
        if TILE_OF[icon] != key:
            raise FormatError(
                f"{field}.icon: {LOT_NAMES[icon]} is not on this tile "
                f"({', '.join(LOT_NAMES[lot] for lot in TILE_LOTS[key])})"
            )
        tiles[key] = Tile(color, icon)
    missing = [LOT_NAMES[key] for key in TILE_KEYS if key not in tiles]
    if missing:
        raise FormatError(f"tiles: missing {', '.join(missing)} (all 20 tiles are needed)")
    return tiles


def layout_warnings(tiles: Mapping[int, Tile]) -> list[str]:
    """The real game has five tiles of each colour; another mix is allowed but worth a word."""
    counts = Counter(tile.color for tile in tiles.values())
    odd = [f"{counts.get(color, 0)} {color}" for color in COLORS if counts.get(color, 0) != TILES_PER_COLOR]
    if not odd:
        return []
    return [f"tiles: {', '.join(odd)} (the game has {TILES_PER_COLOR} tiles of each colour)"]


def structure_to_json(structure: Structure) -> dict[str, Any]:
    doc: dict[str, Any] = {"kind": structure.kind, "color": structure.color}
    if structure.cap is not None:
        doc["cap"] = structure.cap
    return doc


def structure_from_json(value: Any, field: str) -> Structure:
    doc = expect_object(value, field)
    reject_unknown_keys(doc, {"kind", "color", "cap"}, field)
    for required in ("kind", "color"):
        if required not in doc:
            raise FormatError(f"{field}.{required}: missing")
    kind = expect_str(doc["kind"], f"{field}.kind").lower()
    color = expect_str(doc["color"], f"{field}.color").lower()
    cap = doc.get("cap")
    if cap is not None:
        cap = expect_str(cap, f"{field}.cap").lower()
        if kind == "dome":
            raise FormatError(f"{field}.cap: a dome cannot carry a cap")
        if cap not in PLAYERS:
            raise FormatError(f"{field}.cap: {cap!r} is not 'white' or 'black'")
    try:
        return Structure(kind, color, cap)
    except FormatError as error:
        raise FormatError(f"{field}.{error}") from None


def structures_from_json(value: Any) -> dict[int, Structure]:
    raw = expect_object(value, "structures")
    structures: dict[int, Structure] = {}
    for name, doc in raw.items():
        field = f"structures.{name}"
        lot = parse_lot(name, field)
        if lot in structures:
            raise FormatError(f"{field}: two structures on lot {LOT_NAMES[lot]}")
        structures[lot] = structure_from_json(doc, field)
    return structures
