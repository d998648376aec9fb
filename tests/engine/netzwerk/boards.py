"""Hand-made Netzwerk boards and positions for tests, written as the JSON formats.

GRID is a 24-field board, 6 columns (q = 0..5) by 4 rows (r = 0..3), read
as axial coordinates (row r is shifted half a field right of row r-1 on a
picture).  Codes: ``C<n>`` city of value n, ``D`` desert, y/o/r/g/b landscape.

    r=0:  C1  y   o  | r   g   C2
    r=1:  b   r   g  | y   C5  b
    r=2:  C3  D   y  | C4  r   g
    r=3:  g   C6  r  | b   y   C7

Pieces are the horizontal triples.  Useful neighbours: (0,0)C1–(0,1)b–(0,2)C3;
(0,1),(1,0),(1,1) form a triangle; (4,1)C5 touches the cities (5,0)C2 and (3,2)C4.

LINE is six fields in a straight row (q = 0..5, r = 0): C1 y o | r D C2,
for jumps over up to three miners and a blocked miner.
"""

from __future__ import annotations

from typing import Any

from boardcam.engine.netzwerk import Position

COLORS = {"y": "yellow", "o": "orange", "r": "red", "g": "green", "b": "blue"}

GRID = [
    ["C1", "y", "o", "r", "g", "C2"],
    ["b", "r", "g", "y", "C5", "b"],
    ["C3", "D", "y", "C4", "r", "g"],
    ["g", "C6", "r", "b", "y", "C7"],
]
LINE = [["C1", "y", "o", "r", "D", "C2"]]


def field_doc(code: str) -> dict[str, Any]:
    if code.startswith("C"):
        return {"kind": "city", "value": int(code[1:])}
    if code == "D":
        return {"kind": "desert"}
    return {"kind": "landscape", "color": COLORS[code]}


def pieces(rows: list[list[str]] = GRID) -> list[dict[str, Any]]:
    """Horizontal triples of the grid as the layout's piece list."""
    result = []
    for r, row in enumerate(rows):
        for start in range(0, len(row), 3):
            result.append({f"{q},{r}": field_doc(row[q]) for q in range(start, start + 3)})
    return result


def position_doc(players: list[str] | None = None, rows: list[list[str]] = GRID, **state: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"game": "netzwerk", "pieces": pieces(rows), "players": players or ["white", "purple"]}
    doc["stones"] = {}  # hand positions start with the stones gone unless a test lays some down
    doc.update(state)
    return doc


def position(players: list[str] | None = None, rows: list[list[str]] = GRID, **state: Any) -> Position:
    """A Position from keyword state in the JSON format: connectors={"white": [["0,0", "0,1"]]}, ...

    No stones lie on the board unless ``stones`` is given, so resources in
    hand may go up to the 2 per field the setup put down.
    """
    return Position.from_json(position_doc(players, rows, **state))


def edges(pos: Position, *pairs: str) -> tuple[int, ...]:
    """Slot ids from "a/b" strings, e.g. edges(pos, "0,0/0,1", "0,1/0,2")."""
    layout = pos.layout
    result = []
    for pair in pairs:
        a, b = pair.split("/")
        result.append(layout.edge_from_json([a, b], pair))
    return tuple(result)


def fid(pos: Position, key: str) -> int:
    return pos.layout.field_id(key, key)


def rules_of(violations: Any) -> list[str]:
    return [v.rule for v in violations]
