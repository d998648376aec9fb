"""Netzwerk: hex board, miners, resources, roads and scoring (standard library only).

The second game on the same engine shape as Alien City: frozen values,
integer ids with tables built once, JSON formats with one-line errors, a
replay that judges every turn and goes on, and random legal games for tests
and benchmarks.
"""

from boardcam.engine.netzwerk.board import (
    CITY,
    DESERT,
    DIRECTIONS,
    LANDSCAPE,
    RESOURCE_COLORS,
    STANDARD_PIECES,
    Field,
    Layout,
    field_key,
    layout_problems,
    parse_field_key,
    random_layout,
)
from boardcam.engine.netzwerk.game import (
    Record,
    Replay,
    Turn,
    TurnReport,
    play_turn,
    random_game,
    random_positions,
    random_turn,
    replay,
)
from boardcam.engine.netzwerk.moves import MinerMove, miner_moves, miner_violations
from boardcam.engine.netzwerk.position import CONNECTORS_PER_PLAYER, STONES_PER_FIELD, Position
from boardcam.engine.netzwerk.roads import BuildCheck, RoadPart, check_build, road_parts
from boardcam.engine.netzwerk.rules import RULE_IDS, RULEBOOK, Ruleset, Violation
from boardcam.engine.netzwerk.scoring import PlayerScore, Score, score

__all__ = [
    "CITY", "CONNECTORS_PER_PLAYER", "DESERT", "DIRECTIONS", "LANDSCAPE", "RESOURCE_COLORS", "RULEBOOK",
    "RULE_IDS", "STANDARD_PIECES", "STONES_PER_FIELD",
    "BuildCheck", "Field", "Layout", "MinerMove", "PlayerScore", "Position", "Record", "Replay", "RoadPart",
    "Ruleset", "Score", "Turn", "TurnReport", "Violation",
    "check_build", "field_key", "layout_problems", "miner_moves", "miner_violations", "parse_field_key",
    "play_turn", "random_game", "random_layout", "random_positions", "random_turn", "replay", "road_parts",
    "score",
]
