"""Positions for referee tests, made with the engine so they follow the rules."""

from __future__ import annotations

import copy
import random
from typing import Any

from boardcam.engine.aliencity import (
    ALL_PIECES,
    LOT_NAMES,
    Game,
    Move,
    Position,
    positions_after_moves,
    random_game,
)
from boardcam.engine.aliencity.board import column_of, row_of
from boardcam.firmware.referee import Observation


def seen(doc: dict[str, Any], confidence: dict[str, float] | None = None, **kwargs: Any) -> Observation:
    """What the referee gets from a vision that read ``doc`` (sure of every lot unless ``confidence`` says otherwise)."""
    return Observation(Position.from_json(doc), confidence or {}, **kwargs)


def lots_apart(a: int, b: int) -> int:
    """How many lots apart two lots are, a diagonal step counting one."""
    return max(abs(column_of(a) - column_of(b)), abs(row_of(a) - row_of(b)))


def played_game(seed: int) -> Game:
    return random_game(random.Random(seed))


def positions_of(game: Game) -> list[dict[str, Any]]:
    """Position JSON after each ply (index 0 = the empty board)."""
    return positions_after_moves(game.position.tiles, game.moves, game.rules)


def game_after(game: Game, plies: int) -> Game:
    replay = Game(game.position.tiles, game.rules)
    for move in game.moves[:plies]:
        replay.push(move)
    return replay


def with_structure(position: dict[str, Any], lot: int, kind: str, color: str,
                   cap: str | None = None) -> dict[str, Any]:
    doc = copy.deepcopy(position)
    structure = {"kind": kind, "color": color}
    if cap:
        structure["cap"] = cap
    doc["structures"][LOT_NAMES[lot]] = structure
    return doc


def illegal_build(game: Game, rules: set[int] = {1, 2, 3, 4, 5}) -> Move:
    """A build by the player to move, from their supply, that breaks a placement rule."""
    for piece in ALL_PIECES:
        if game.supply[game.turn][piece] <= 0:
            continue
        for lot in range(80):
            if lot in game.position.structures:
                continue
            move = Move(game.turn, lot, piece)
            found = game.violations(move)
            if found and {v.rule for v in found} <= rules:
                return move
    raise LookupError("no illegal build found")


def apply(position: dict[str, Any], move: Move) -> dict[str, Any]:
    assert move.lot is not None and move.piece is not None
    doc = with_structure(position, move.lot, move.piece.kind, move.piece.color)
    if move.cap is not None:
        doc["structures"][LOT_NAMES[move.cap]]["cap"] = move.player
    return doc


def position(doc: dict[str, Any]) -> Position:
    return Position.from_json(doc)
