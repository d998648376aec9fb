"""Game flow: supplies, turns, passes, caps, the end — and the game record format.

One :class:`Game` object with cheap ``push``/``pop`` (python-chess style).
``push`` applies a move without judging it (what is on the table is the
truth); ``play`` judges it first and still applies it, which is what a
referee beside a real board needs; ``push_legal`` refuses illegal moves.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from boardcam.engine.aliencity.board import LOT_NAMES, TILE_KEYS, TILE_LOTS, parse_lot
from boardcam.engine.aliencity.pieces import (
    ALL_PIECES,
    PLAYERS,
    Move,
    Piece,
    Structure,
    Tile,
    Violation,
    other_player,
)
from boardcam.engine.aliencity.position import (
    GAME_NAME,
    Position,
    check_game_name,
    tiles_from_json,
    tiles_to_json,
)
from boardcam.engine.aliencity.rules import RULEBOOK, Analysis, Ruleset
from boardcam.engine.aliencity.scoring import Score, score
from boardcam.engine.errors import FormatError, IllegalMoveError
from boardcam.engine.jsonio import (
    expect_list,
    expect_object,
    expect_str,
    reject_unknown_keys,
)

CAPS_PER_PLAYER = 3
RULE_CLAIM = 6
RULE_TURN = 7

STARTING_SUPPLY: dict[str, Counter[Piece]] = {
    "white": Counter({
        Piece("tower", "red"): 3, Piece("tower", "blue"): 2, Piece("tower", "green"): 2,
        **{Piece("dome", c): 3 for c in ("red", "blue", "green", "black")},
    }),
    "black": Counter({
        Piece("tower", "red"): 2, Piece("tower", "blue"): 3, Piece("tower", "green"): 2,
        **{Piece("dome", c): 3 for c in ("red", "blue", "green", "black")},
    }),
}


@dataclass(frozen=True)
class _Undo:
    move: Move
    turn: str
    supply_before: int
    caps_before: int
    built: bool
    capped: bool
    voided: bool


class Game:
    """An Alien City game in progress: position, supplies, caps left, whose turn."""

    def __init__(self, tiles: Mapping[int, Tile] | Position, rules: Ruleset = RULEBOOK):
        if isinstance(tiles, Position):
            if tiles.structures:
                raise ValueError("a Game starts from an empty board; use Game.from_record to resume")
            tiles = tiles.tiles
        self.position = Position(tiles)
        self.rules = rules
        self.turn = "black"
        self.supply: dict[str, Counter[Piece]] = {p: STARTING_SUPPLY[p].copy() for p in PLAYERS}
        self.caps_left = {p: CAPS_PER_PLAYER for p in PLAYERS}
        self.void_caps: set[int] = set()
        self._undo: list[_Undo] = []
        self._analysis: Analysis | None = None

    # --- queries -----------------------------------------------------------

    @property
    def analysis(self) -> Analysis:
        if self._analysis is None:
            self._analysis = Analysis(self.position, self.rules)
        return self._analysis

    @property
    def moves(self) -> list[Move]:
        return [u.move for u in self._undo]

    @property
    def ply(self) -> int:
        return len(self._undo)

    def can_build(self, player: str) -> bool:
        return self.analysis.any_legal(self.supply[player])

    def is_over(self) -> bool:
        """No one can build (which covers both supplies being empty)."""
        return not self.can_build(self.turn) and not self.can_build(other_player(self.turn))

    def legal_builds(self, player: str | None = None) -> list[tuple[int, Piece]]:
        player = player or self.turn
        analysis = self.analysis
        return [
            (lot, piece)
            for piece in ALL_PIECES
            if self.supply[player][piece] > 0
            for lot in analysis.legal_lots(piece)
        ]

    def cappable(self, player: str | None = None) -> list[int]:
        """Unclaimed towers the player could cap now (if they have a cap left)."""
        player = player or self.turn
        if self.caps_left[player] <= 0:
            return []
        return sorted(lot for lot, s in self.position.structures.items()
                      if s.kind == "tower" and s.cap is None)

    def score(self) -> Score:
        return score(self.position, self.rules, self.void_caps)

    def pieces_left(self, player: str) -> int:
        return sum(self.supply[player].values())

    # --- judging -----------------------------------------------------------

    def violations(self, move: Move) -> list[Violation]:
        """Every rule the move breaks; the game itself is left unchanged."""
        found: list[Violation] = []
        if move.is_pass:
            if self.can_build(move.player):
                example = self.legal_builds(move.player)[0]
                found.append(Violation(RULE_TURN, None,
                    f"{move.player} can still build (for example a {example[1].words} on "
                    f"{LOT_NAMES[example[0]]}); passing is not allowed"))
            return found
        assert move.lot is not None and move.piece is not None
        found.extend(self._turn_violations(move))
        found.extend(self.analysis.violations(move.lot, move.piece))
        if move.cap is not None:
            found.extend(self._cap_violations(move))
        return found

    def _turn_violations(self, move: Move) -> list[Violation]:
        found = []
        if move.player != self.turn:
            found.append(Violation(RULE_TURN, move.lot, f"it is {self.turn}'s turn, not {move.player}'s"))
        assert move.piece is not None
        if self.supply[move.player][move.piece] <= 0:
            found.append(Violation(RULE_TURN, move.lot, f"{move.player} has no {move.piece.words} left"))
        return found

    def _cap_violations(self, move: Move) -> list[Violation]:
        assert move.cap is not None
        cap = move.cap
        name = LOT_NAMES[cap]
        target = move.piece if cap == move.lot else None
        existing = self.position.structures.get(cap)
        if target is None:
            if existing is None:
                return [Violation(RULE_CLAIM, cap, f"there is no tower on {name} to cap")]
            if existing.kind != "tower":
                return [Violation(RULE_CLAIM, cap, f"{name} holds a dome; only towers can be capped")]
            if existing.cap is not None:
                return [Violation(RULE_CLAIM, cap, f"the tower on {name} is already claimed by {existing.cap}")]
        elif target.kind != "tower":
            return [Violation(RULE_CLAIM, cap, f"{name} holds a dome; only towers can be capped")]
        found = []
        if self.caps_left[move.player] <= 0:
            found.append(Violation(RULE_CLAIM, cap, f"{move.player} has used all {CAPS_PER_PLAYER} caps"))
        if self._would_end_game(move):
            found.append(Violation(RULE_CLAIM, cap,
                "a tower may not be claimed on the game's final turn; this cap does not score"))
        return found

    def _would_end_game(self, move: Move) -> bool:
        if move.lot in self.position.structures:
            return self.is_over()  # the build cannot happen; the board stays as it is
        self.push(Move(move.player, move.lot, move.piece))
        try:
            return self.is_over()
        finally:
            self.pop()

    # --- changing the game ---------------------------------------------------

    def push(self, move: Move) -> None:
        """Apply a move as it stands on the table, without judging it.

        A build on a lot that is already taken leaves the standing structure
        (one structure per lot) and takes nothing from the supply.  A cap
        beyond the player's three, or on the game's final turn, stays on the
        table but is void: it does not score.
        """
        turn_before = self.turn
        caps_before = self.caps_left[move.player]
        if move.is_pass:
            self._undo.append(_Undo(move, turn_before, 0, caps_before, False, False, False))
            self.turn = other_player(move.player)
            return
        assert move.lot is not None and move.piece is not None
        supply = self.supply[move.player]
        supply_before = supply[move.piece]
        built = move.lot not in self.position.structures
        if built:
            supply[move.piece] = max(0, supply_before - 1)
            self.position.structures[move.lot] = Structure(move.piece.kind, move.piece.color)
            self._analysis = None
        capped = voided = False
        if move.cap is not None:
            target = self.position.structures.get(move.cap)
            if target is not None and target.kind == "tower" and target.cap is None:
                self.position.structures[move.cap] = target.with_cap(move.player)
                self.caps_left[move.player] = max(0, caps_before - 1)
                capped = True
        self.turn = self._next_turn(move.player)
        if capped and (caps_before <= 0 or self.is_over()):
            assert move.cap is not None
            self.void_caps.add(move.cap)
            voided = True
        self._undo.append(_Undo(move, turn_before, supply_before, caps_before, built, capped, voided))

    def _next_turn(self, mover: str) -> str:
        other = other_player(mover)
        if self.can_build(other) or not self.can_build(mover):
            return other
        return mover  # the other player must pass: the mover goes on

    def pop(self) -> Move:
        undo = self._undo.pop()
        move = undo.move
        self.turn = undo.turn
        if move.is_pass:
            return move
        assert move.lot is not None and move.piece is not None
        if undo.capped:
            assert move.cap is not None
            self.position.structures[move.cap] = self.position.structures[move.cap].with_cap(None)
            self.caps_left[move.player] = undo.caps_before
        if undo.voided:
            assert move.cap is not None
            self.void_caps.discard(move.cap)
        if undo.built:
            del self.position.structures[move.lot]
            self.supply[move.player][move.piece] = undo.supply_before
            self._analysis = None
        return move

    def play(self, move: Move) -> list[Violation]:
        """Judge the move, then apply it anyway (the board is what it is)."""
        found = self.violations(move)
        self.push(move)
        return found

    def push_legal(self, move: Move) -> None:
        found = self.violations(move)
        if found:
            raise IllegalMoveError(found[0].message)
        self.push(move)

    def copy(self) -> Game:
        clone = Game.__new__(Game)
        clone.position = self.position.copy()
        clone.rules = self.rules
        clone.turn = self.turn
        clone.supply = {p: c.copy() for p, c in self.supply.items()}
        clone.caps_left = dict(self.caps_left)
        clone.void_caps = set(self.void_caps)
        clone._undo = list(self._undo)
        clone._analysis = None  # an analysis belongs to one Position object
        return clone

    # --- records ----------------------------------------------------------------

    def record(self) -> GameRecord:
        return GameRecord(dict(self.position.tiles), tuple(self.moves), self.rules.name)

    @classmethod
    def from_record(cls, record: GameRecord, rules: Ruleset = RULEBOOK) -> Game:
        game = cls(record.tiles, rules)
        for move in record.moves:
            game.push(move)
        return game


@dataclass(frozen=True)
class GameRecord:
    """The tiles and the moves of a game: the engine's game record JSON."""

    tiles: dict[int, Tile]
    moves: tuple[Move, ...]
    rules: str | None = None  # the rule set the game was played under, when recorded

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"game": GAME_NAME, "tiles": tiles_to_json(self.tiles),
                               "moves": [move_to_json(m) for m in self.moves]}
        if self.rules is not None:
            doc["rules"] = self.rules
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> GameRecord:
        doc = expect_object(doc, "record")
        reject_unknown_keys(doc, {"game", "tiles", "moves", "rules"}, "")
        check_game_name(doc)
        if "tiles" not in doc:
            raise FormatError("tiles: missing (a game record needs the 20 tiles)")
        tiles = tiles_from_json(doc["tiles"])
        moves = tuple(
            move_from_json(m, f"moves[{i}]") for i, m in enumerate(expect_list(doc.get("moves", []), "moves"))
        )
        rules = doc.get("rules")
        if rules is not None:
            rules = Ruleset.named(expect_str(rules, "rules")).name
        return cls(tiles, moves, rules)


def move_to_json(move: Move) -> dict[str, Any]:
    if move.is_pass:
        return {"player": move.player, "pass": True}
    assert move.lot is not None and move.piece is not None
    doc: dict[str, Any] = {
        "player": move.player,
        "build": {"lot": LOT_NAMES[move.lot], "kind": move.piece.kind, "color": move.piece.color},
    }
    if move.cap is not None:
        doc["cap"] = LOT_NAMES[move.cap]
    return doc


def move_from_json(value: Any, field: str) -> Move:
    doc = expect_object(value, field)
    reject_unknown_keys(doc, {"player", "build", "cap", "pass"}, field)
    if "player" not in doc:
        raise FormatError(f"{field}.player: missing")
    player = expect_str(doc["player"], f"{field}.player").lower()
    if player not in PLAYERS:
        raise FormatError(f"{field}.player: {player!r} is not 'black' or 'white'")
    if doc.get("pass") is True:
        if "build" in doc or "cap" in doc:
            raise FormatError(f"{field}: a pass cannot also build or cap")
        return Move(player)
    if "pass" in doc and doc["pass"] is not False:
        raise FormatError(f"{field}.pass: expected true or false")
    if "build" not in doc:
        raise FormatError(f"{field}.build: missing (a move builds, or says \"pass\": true)")
    build = expect_object(doc["build"], f"{field}.build")
    reject_unknown_keys(build, {"lot", "kind", "color"}, f"{field}.build")
    for required in ("lot", "kind", "color"):
        if required not in build:
            raise FormatError(f"{field}.build.{required}: missing")
    lot = parse_lot(expect_str(build["lot"], f"{field}.build.lot"), f"{field}.build.lot")
    try:
        piece = Piece(expect_str(build["kind"], f"{field}.build.kind").lower(),
                      expect_str(build["color"], f"{field}.build.color").lower())
    except FormatError as error:
        raise FormatError(f"{field}.build.{error}") from None
    cap = None
    if doc.get("cap") is not None:
        cap = parse_lot(expect_str(doc["cap"], f"{field}.cap"), f"{field}.cap")
    return Move(player, lot, piece, cap)


# --- random games (property tests, benchmarks, the scene generator) ------------


def random_layout(rng: random.Random) -> dict[int, Tile]:
    """A shuffled tile array: five tiles of each colour, each turned at random."""
    colors = [c for c in ("red", "blue", "green", "black") for _ in range(5)]
    rng.shuffle(colors)
    return {key: Tile(color, rng.choice(TILE_LOTS[key])) for key, color in zip(TILE_KEYS, colors)}


def random_moves(
    rng: random.Random,
    tiles: Mapping[int, Tile] | None = None,
    rules: Ruleset = RULEBOOK,
    cap_chance: float = 0.3,
) -> Iterator[tuple[Game, Move]]:
    """Play a random legal game, yielding (game before the move, move) each turn."""
    game = Game(tiles if tiles is not None else random_layout(rng), rules)
    while not game.is_over():
        player = game.turn
        builds = game.legal_builds(player)
        if not builds:
            move = Move(player)
        else:
            lot, piece = rng.choice(builds)
            move = Move(player, lot, piece, _random_cap(game, player, lot, piece, rng, cap_chance))
        yield game, move
        game.push(move)


def _random_cap(game: Game, player: str, lot: int, piece: Piece, rng: random.Random, chance: float) -> int | None:
    if game.caps_left[player] <= 0 or rng.random() >= chance:
        return None
    game.push(Move(player, lot, piece))
    try:
        if game.is_over():
            return None
        towers = game.cappable(player)
    finally:
        game.pop()
    return rng.choice(towers) if towers else None


def random_game(
    rng: random.Random,
    tiles: Mapping[int, Tile] | None = None,
    rules: Ruleset = RULEBOOK,
    cap_chance: float = 0.3,
) -> Game:
    """A whole random legal game, played to its end."""
    game = Game(tiles if tiles is not None else random_layout(rng), rules)
    for game, _ in random_moves(rng, game.position.tiles, rules, cap_chance):
        pass  # the generator pushes each move before yielding the next
    return game


def random_positions(seed: int, rules: str = "rulebook") -> list[dict[str, Any]]:
    """Position JSON after every ply of a random legal game (index 0: the empty board)."""
    game = random_game(random.Random(seed), rules=Ruleset.named(rules))
    return positions_after_moves(game.position.tiles, game.moves, game.rules)


def positions_after_moves(tiles: Mapping[int, Tile], moves: Iterable[Move],
                          rules: Ruleset = RULEBOOK) -> list[dict[str, Any]]:
    """Position JSON of the empty board and after each move, played from ``tiles`` (a record, a log, a game)."""
    replay = Game(tiles, rules)
    positions = [replay.position.to_json()]
    for move in moves:
        replay.push(move)
        positions.append(replay.position.to_json())
    return positions
