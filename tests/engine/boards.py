"""Compact builders for hand-made Alien City positions in tests.

``layout(["RBGK", ...])`` lists tile colours top row (rows 9–10) first, four
letters each (R red, B blue, G green, K black); icons default to each tile's
upper-right lot unless given.  ``position(tiles, "E6=blue-tower/black D5=black-dome")``.
"""

from __future__ import annotations

from boardcam.engine.aliencity import (
    TILE_KEYS,
    TILE_LOTS,
    Position,
    Structure,
    Tile,
    parse_lot,
)

LETTERS = {"R": "red", "B": "blue", "G": "green", "K": "black"}


def layout(rows: list[str], icons: dict[str, str] | None = None) -> dict[int, Tile]:
    assert len(rows) == 5 and all(len(r) == 4 for r in rows)
    icons = icons or {}
    tiles = {}
    for band, letters in enumerate(reversed(rows)):
        for col, letter in enumerate(letters):
            key = TILE_KEYS[band * 4 + col]
            tiles[key] = Tile(LETTERS[letter], TILE_LOTS[key][3])
    for lot_name in icons.values():
        lot = parse_lot(lot_name)
        key = next(k for k, lots in TILE_LOTS.items() if lot in lots)
        tiles[key] = Tile(tiles[key].color, lot)
    return tiles


def uniform(color_letter: str) -> dict[int, Tile]:
    return layout([color_letter * 4] * 5)


def position(tiles: dict[int, Tile], spec: str = "") -> Position:
    structures = {}
    for item in spec.split():
        lot, _, what = item.partition("=")
        piece, _, cap = what.partition("/")
        color, _, kind = piece.partition("-")
        structures[parse_lot(lot)] = Structure(kind, color, cap or None)
    return Position(tiles, structures)


def fill(tiles: dict[int, Tile], lots: str, piece: str = "black-dome") -> Position:
    """A position with the same piece on every lot named (space separated)."""
    return position(tiles, " ".join(f"{lot}={piece}" for lot in lots.split()))
