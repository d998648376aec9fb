"""Small immutable values: colours, pieces, structures, tiles, moves, violations."""

from __future__ import annotations

from dataclasses import dataclass

from boardcam.engine.errors import FormatError

COLORS: tuple[str, ...] = ("red", "blue", "green", "black")
TOWER_COLORS: tuple[str, ...] = ("red", "blue", "green")
DOME_COLORS: tuple[str, ...] = COLORS
PLAYERS: tuple[str, ...] = ("black", "white")  # black builds first
KINDS: tuple[str, ...] = ("tower", "dome")


def other_player(player: str) -> str:
    return "white" if player == "black" else "black"


@dataclass(frozen=True, order=True)
class Piece:
    """A piece that can be built: a tower or a dome of one colour."""

    kind: str
    color: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise FormatError(f"kind: {self.kind!r} is not 'tower' or 'dome'")
        allowed = TOWER_COLORS if self.kind == "tower" else DOME_COLORS
        if self.color not in allowed:
            raise FormatError(f"color: a {self.kind} is {', '.join(allowed)}, not {self.color!r}")

    @classmethod
    def parse(cls, text: str) -> Piece:
        """``"red-tower"`` -> Piece("tower", "red")."""
        color, _, kind = text.strip().lower().partition("-")
        if not kind:
            raise FormatError(f"piece: {text!r} is not of the form COLOR-KIND, e.g. red-tower or black-dome")
        try:
            return cls(kind, color)
        except FormatError as error:
            raise FormatError(f"piece: {text!r}: {error}") from None

    def __str__(self) -> str:
        return f"{self.color}-{self.kind}"

    @property
    def words(self) -> str:
        return f"{self.color} {self.kind}"


ALL_PIECES: tuple[Piece, ...] = tuple(
    [Piece("tower", c) for c in TOWER_COLORS] + [Piece("dome", c) for c in DOME_COLORS]
)


@dataclass(frozen=True)
class Structure:
    """What stands on a lot; ``cap`` is the claiming player's colour (towers only)."""

    kind: str
    color: str
    cap: str | None = None

    def __post_init__(self) -> None:
        Piece(self.kind, self.color)  # validates kind and colour
        if self.cap is not None:
            if self.kind != "tower":
                raise FormatError("cap: only towers can be capped, not domes")
            if self.cap not in PLAYERS:
                raise FormatError(f"cap: {self.cap!r} is not 'white' or 'black'")

    @property
    def piece(self) -> Piece:
        return Piece(self.kind, self.color)

    def with_cap(self, cap: str | None) -> Structure:
        return Structure(self.kind, self.color, cap)

    @property
    def words(self) -> str:
        capped = f" ({self.cap} cap)" if self.cap else ""
        return f"{self.color} {self.kind}{capped}"


@dataclass(frozen=True)
class Tile:
    """A tile's guild colour and the lot that shows its icon."""

    color: str
    icon: int

    def __post_init__(self) -> None:
        if self.color not in COLORS:
            raise FormatError(f"color: {self.color!r} is not one of {', '.join(COLORS)}")


@dataclass(frozen=True)
class Move:
    """One turn: build ``piece`` on ``lot`` and optionally cap the tower on ``cap``.

    A pass has ``lot`` and ``piece`` None.
    """

    player: str
    lot: int | None = None
    piece: Piece | None = None
    cap: int | None = None

    @property
    def is_pass(self) -> bool:
        return self.lot is None


@dataclass(frozen=True)
class Violation:
    """A broken rule: its number (1–5 placement, 6 claiming, 7 turn and supply), the lot, the reason in words."""

    rule: int
    lot: int | None
    message: str

    def to_json(self) -> dict[str, object]:
        from boardcam.engine.aliencity.board import LOT_NAMES

        return {
            "rule": self.rule,
            "lot": None if self.lot is None else LOT_NAMES[self.lot],
            "message": self.message,
        }
