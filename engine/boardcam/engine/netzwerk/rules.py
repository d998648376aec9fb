"""Rule options (the translator's variants) and violations, named by the clause they break."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Rule ids used in violations; docs/rules.md (section Netzwerk) quotes the sentence behind each.
ORDER = "order"              # not this player's turn
OVER = "over"                # the game has ended
PLACEMENT = "placement"      # initial placement of the miner
MOVE = "move"                # the miner's step: neighbouring, not a desert, not occupied, compulsory
JUMP = "jump"                # jumping over 1-3 opponents' miners in a straight line
DESERT = "desert"            # no connector onto a desert
ROAD_A = "road-a"            # a road connects at least 2 cities
ROAD_B = "road-b"            # leaves each city by at most 1 connector
ROAD_C = "road-c"            # no superfluous connector (no loop, no dead end, no doubled own connector)
ROAD_D = "road-d"            # touches another own road only in cities
TURN_LIMIT = "turn-limit"    # 1 road, extending 1 road or joining 2 roads per turn
CHAIN = "chain"              # translator's note 3: one chain with exactly 2 ends per turn
COST = "cost"                # paying with resources of the fields' colours
TWO_PLAYER = "two-player"    # no second connector between two fields with 2 players
SUPPLY = "supply"            # 20 connectors per player

RULE_IDS: tuple[str, ...] = (
    ORDER, OVER, PLACEMENT, MOVE, JUMP, DESERT, ROAD_A, ROAD_B, ROAD_C, ROAD_D,
    TURN_LIMIT, CHAIN, COST, TWO_PLAYER, SUPPLY,
)


@dataclass(frozen=True)
class Ruleset:
    """Which version of the per-turn building limit applies.

    ``turn_limit`` is the rule "in one turn a player may build 1 road, extend
    1 road or join 2 roads into 1" (the translator calls it unnecessary and
    suggests dropping it: ``turn_limit=False``).  ``chain_rule`` adds the
    author's unwritten rule from translator's note 3: one chain of connectors
    with exactly 2 ends per turn.
    """

    turn_limit: bool = True
    chain_rule: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"turn_limit": self.turn_limit, "chain_rule": self.chain_rule}


RULEBOOK = Ruleset()


@dataclass(frozen=True)
class Violation:
    """A broken rule: its id (see RULE_IDS), where (a field or connector name, or None), the reason in words."""

    rule: str
    message: str
    field: str | None = None
    connector: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"rule": self.rule}
        if self.field is not None:
            doc["field"] = self.field
        if self.connector is not None:
            doc["connector"] = list(self.connector)
        doc["message"] = self.message
        return doc
