"""What the display should say, as plain data.

The referee core produces a :class:`Screen`; the OLED, the colour LCD and the
terminal each draw it their own way.  Keeping the model free of Pillow and
luma means the core stays pure and every layout is tested from the same value.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any


class ScreenKind(enum.Enum):
    SETUP = "setup"  # waiting for an empty board with all tiles
    CONFIRM = "confirm"  # layout read: confirm it
    TURN = "turn"  # whose turn, live score, pieces and caps left
    LOOKING = "looking"  # an unsure reading: looking again
    VERDICT = "verdict"  # an illegal move (or a board that is no move)
    FINAL = "final"  # game over: the breakdown tower by tower
    MESSAGE = "message"  # anything else worth one screen (errors, start-up)


@dataclass(frozen=True)
class PlayerLine:
    player: str  # "black" | "white"
    score: int
    pieces_left: int
    caps_left: int


@dataclass(frozen=True)
class TowerLine:
    """One scoring row of the final breakdown (a capped tower or a green bonus)."""

    player: str
    lot: str
    color: str
    points: int
    customers: int | None = None  # None for a green-tower bonus row
    competition: int | None = None
    bonus_from: str | None = None  # the green tower's lot for a bonus row


@dataclass(frozen=True)
class BoardSketch:
    """Just enough of a position to draw the mini map."""

    tiles: tuple[tuple[str, str, str], ...]  # (tile key, colour, icon lot)
    structures: tuple[tuple[str, str, str, str | None], ...]  # (lot, kind, colour, cap)

    @classmethod
    def from_position_json(cls, doc: dict[str, Any]) -> "BoardSketch":
        tiles = tuple(
            sorted((key, tile["color"], tile.get("icon", key)) for key, tile in doc.get("tiles", {}).items())
        )
        structures = tuple(
            sorted(
                (lot, s["kind"], s["color"], s.get("cap"))
                for lot, s in doc.get("structures", {}).items()
            )
        )
        return cls(tiles, structures)


@dataclass(frozen=True)
class Screen:
    kind: ScreenKind
    title: str  # the one line a glance should catch
    lines: tuple[str, ...] = ()  # detail, already in words
    players: tuple[PlayerLine, ...] = ()
    turn: str | None = None
    lot: str | None = None  # the lot to mark (offending or unsure)
    rule: int | None = None
    fix: str = ""
    board: BoardSketch | None = None
    towers: tuple[TowerLine, ...] = ()
    winner: str | None = None  # "black" | "white" | "tie"
    status: tuple[str, ...] = field(default=())  # trouble the players should know about

    def with_status(self, status: tuple[str, ...]) -> "Screen":
        return replace(self, status=status)


def sample_screens() -> dict[str, Screen]:
    """One screen of each kind with realistic content: golden tests and the README pictures."""
    colours = ["red", "blue", "green", "black"] * 5
    keys = [f"{c}{r}" for r in (1, 3, 5, 7, 9) for c in "ACEG"]
    tiles = {key: {"color": colours[(i * 7) % 4], "icon": key}
             for i, key in enumerate(keys)}
    position = {
        "tiles": tiles,
        "structures": {
            "B2": {"kind": "dome", "color": tiles["A1"]["color"]},
            "D4": {"kind": "tower", "color": "blue", "cap": "black"},
            "E6": {"kind": "tower", "color": "red"},
            "F5": {"kind": "dome", "color": "black"},
            "C8": {"kind": "tower", "color": "green", "cap": "white"},
        },
    }
    board = BoardSketch.from_position_json(position)
    players = (PlayerLine("black", 23, 9, 2), PlayerLine("white", 17, 10, 2))
    final = Screen(
        ScreenKind.FINAL, "Game over: White wins", ("White wins by 23",),
        players=(PlayerLine("white", 89, 0, 0), PlayerLine("black", 66, 0, 0)),
        towers=(
            TowerLine("white", "B9", "red", 16, 4, 4),
            TowerLine("white", "F8", "blue", 35, 7, 5),
            TowerLine("white", "C4", "green", 38, 2, 19),
            TowerLine("black", "G6", "red", 18, 6, 3),
            TowerLine("black", "F6", "blue", 24, 8, 3),
            TowerLine("black", "H2", "red", 24, 2, 12),
        ),
        winner="white",
    )
    return {
        "setup": Screen(ScreenKind.SETUP, "Setup", ("Clear the board and lay out all 20 tiles.",)),
        "confirm": Screen(
            ScreenKind.CONFIRM, "Layout read",
            ("red 5  blue 5  green 5  black 5", "Score button: confirm"),
            board=BoardSketch(board.tiles, ()),
        ),
        "turn": Screen(ScreenKind.TURN, "Black to play", ("White built red tower E6",),
                       players=players, turn="black", lot="E6", board=board),
        "looking": Screen(ScreenKind.LOOKING, "Looking again", ("Not sure about E6",),
                          players=players, turn="white", lot="E6", board=board),
        "verdict": Screen(
            ScreenKind.VERDICT, "Illegal: E6", ("Rule 4: the streets split into two networks.",),
            rule=4, fix="take the red tower off E6", lot="E6", board=board, players=players,
            turn="white",
        ),
        "final": final,
        # the same result with a note under it, which the small display wraps
        "final-void-cap": replace(final, lines=(*final.lines, "Cap on A7 does not score (final turn)")),
    }
