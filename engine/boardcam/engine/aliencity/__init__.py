"""Alien City: board, rules, game flow, move inference and scoring (standard library only)."""

from boardcam.engine.aliencity.board import (
    LOT_COUNT,
    LOT_NAMES,
    NEIGHBOURS,
    TILE_KEYS,
    TILE_LOTS,
    TILE_OF,
    lot_name,
    parse_lot,
    parse_tile_key,
    tile_of,
)
from boardcam.engine.aliencity.game import (
    STARTING_SUPPLY,
    Game,
    GameRecord,
    move_from_json,
    move_to_json,
    positions_after_moves,
    random_game,
    random_layout,
    random_moves,
    random_positions,
)
from boardcam.engine.aliencity.inference import Inference, infer_move
from boardcam.engine.aliencity.pieces import (
    ALL_PIECES,
    COLORS,
    PLAYERS,
    TOWER_COLORS,
    Move,
    Piece,
    Structure,
    Tile,
    Violation,
    other_player,
)
from boardcam.engine.aliencity.position import Position, layout_warnings
from boardcam.engine.aliencity.reachable import (
    Impossibility,
    colour_impossibilities,
    first_builds_fit,
    impossibilities,
    possible_icon_lots,
)
from boardcam.engine.aliencity.rules import ABSTRACT_PLAY, RULEBOOK, Analysis, Ruleset, remaining_pieces
from boardcam.engine.aliencity.scoring import Score, score, structure_distances

__all__ = [
    "ABSTRACT_PLAY", "ALL_PIECES", "COLORS", "LOT_COUNT", "LOT_NAMES", "NEIGHBOURS", "PLAYERS", "RULEBOOK",
    "STARTING_SUPPLY", "TILE_KEYS", "TILE_LOTS", "TILE_OF", "TOWER_COLORS", "Analysis", "Game", "GameRecord",
    "Impossibility", "Inference", "Move", "Piece", "Position", "Ruleset", "Score", "Structure", "Tile", "Violation",
    "colour_impossibilities", "first_builds_fit", "impossibilities", "infer_move", "layout_warnings", "lot_name",
    "move_from_json", "move_to_json", "other_player", "parse_lot", "parse_tile_key", "positions_after_moves",
    "possible_icon_lots",
    "random_game", "random_layout", "random_moves", "random_positions", "remaining_pieces", "score",
    "structure_distances", "tile_of",
]
