"""Board geometry of Alien City: 80 lots, 20 tiles, neighbour tables.

Lots are small integers (python-chess style): ``lot = (row - 1) * 8 + column``
with columns A–H left to right and rows 1–10 bottom to top, as in the
rulebook's figures.  Everything here is computed once at import.
"""

from __future__ import annotations

from boardcam.engine.errors import FormatError

COLUMNS = "ABCDEFGH"
WIDTH = 8
HEIGHT = 10
LOT_COUNT = WIDTH * HEIGHT

LOT_NAMES: tuple[str, ...] = tuple(
    f"{COLUMNS[lot % WIDTH]}{lot // WIDTH + 1}" for lot in range(LOT_COUNT)
)
_LOT_BY_NAME = {name: lot for lot, name in enumerate(LOT_NAMES)}


def lot_name(lot: int) -> str:
    return LOT_NAMES[lot]


def parse_lot(name: str, field: str = "lot") -> int:
    """``"E6"`` -> 44.  Case-insensitive, because people type ``e6``."""
    if isinstance(name, str):
        lot = _LOT_BY_NAME.get(name.strip().upper())
        if lot is not None:
            return lot
    raise FormatError(f"{field}: unknown lot {name!r} (lots are A1..H10)")


def column_of(lot: int) -> int:
    return lot % WIDTH


def row_of(lot: int) -> int:
    """0-based row (0 is the rulebook's row 1)."""
    return lot // WIDTH


def _neighbours(lot: int) -> tuple[int, ...]:
    col, row = column_of(lot), row_of(lot)
    steps = ((0, -1), (-1, 0), (1, 0), (0, 1))
    return tuple(
        (row + dr) * WIDTH + (col + dc)
        for dc, dr in steps
        if 0 <= col + dc < WIDTH and 0 <= row + dr < HEIGHT
    )


NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours(lot) for lot in range(LOT_COUNT))

#: The lower-left lot of each tile, in reading order A1, C1, E1, G1, A3, ... G9.
TILE_KEYS: tuple[int, ...] = tuple(
    row * WIDTH + col for row in range(0, HEIGHT, 2) for col in range(0, WIDTH, 2)
)

#: tile key -> its four lots (lower-left, lower-right, upper-left, upper-right).
TILE_LOTS: dict[int, tuple[int, int, int, int]] = {
    key: (key, key + 1, key + WIDTH, key + WIDTH + 1) for key in TILE_KEYS
}

_TILE_OF = [0] * LOT_COUNT
for _key, _lots in TILE_LOTS.items():
    for _lot in _lots:
        _TILE_OF[_lot] = _key
#: lot -> key of the tile it lies on.
TILE_OF: tuple[int, ...] = tuple(_TILE_OF)


def tile_of(lot: int) -> int:
    return TILE_OF[lot]


def parse_tile_key(name: str, field: str = "tile") -> int:
    lot = parse_lot(name, field)
    if lot not in TILE_LOTS:
        raise FormatError(
            f"{field}: {LOT_NAMES[lot]} is not a tile's lower-left lot "
            f"(tiles are keyed {', '.join(LOT_NAMES[k] for k in TILE_KEYS[:4])}, ...)"
        )
    return lot
