"""Final scoring: customers × competition per capped tower, plus green bonuses.

Distance between two structures is the number of street lots on the shortest
path that runs only through streets: two structures facing the same street
lot are 1 apart; neighbouring structures are not adjacent unless through a
street (the rulebook's tower C route of 19 spaces is counted this way).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from boardcam.engine.aliencity.board import LOT_COUNT, LOT_NAMES, NEIGHBOURS
from boardcam.engine.aliencity.pieces import PLAYERS
from boardcam.engine.aliencity.position import Position
from boardcam.engine.aliencity.rules import RULEBOOK, Ruleset

CUSTOMER_REACH = 2
BONUS_REACH = 4


def structure_distances(position: Position, start: int) -> dict[int, int]:
    """Street distance from the structure on ``start`` to every other reachable structure.

    One breadth-first pass over the streets: a structure is first met from a
    street lot at its shortest distance, so it is recorded then.
    """
    structures = position.structures
    seen = [False] * LOT_COUNT
    seen[start] = True
    found: dict[int, int] = {}
    frontier = []
    for nb in NEIGHBOURS[start]:
        if nb not in structures:
            seen[nb] = True
            frontier.append(nb)
    step = 1
    while frontier:
        nxt = []
        for lot in frontier:
            for nb in NEIGHBOURS[lot]:
                if seen[nb]:
                    continue
                seen[nb] = True
                if nb in structures:
                    found[nb] = step
                else:
                    nxt.append(nb)
        frontier = nxt
        step += 1
    return found


@dataclass(frozen=True)
class TowerScore:
    lot: int
    color: str
    customers: int
    customer_lots: tuple[int, ...]
    competition: int
    competitor_lots: tuple[int, ...]
    points: int

    def to_json(self) -> dict[str, Any]:
        return {
            "lot": LOT_NAMES[self.lot],
            "color": self.color,
            "customers": self.customers,
            "customer_lots": [LOT_NAMES[x] for x in self.customer_lots],
            "competition": self.competition,
            "competitor_lots": [LOT_NAMES[x] for x in self.competitor_lots],
            "points": self.points,
        }


@dataclass(frozen=True)
class Bonus:
    green: int
    towers: tuple[int, ...]  # the nearest tower(s) of ``color``, all owned by the player paid
    color: str
    distance: int
    points: int

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "green": LOT_NAMES[self.green],
            "tower": LOT_NAMES[self.towers[0]],
            "color": self.color,
            "distance": self.distance,
            "points": self.points,
        }
        if len(self.towers) > 1:
            doc["tied_with"] = [LOT_NAMES[x] for x in self.towers[1:]]
        return doc


@dataclass(frozen=True)
class PlayerScore:
    towers: tuple[TowerScore, ...] = ()
    bonuses: tuple[Bonus, ...] = ()

    @property
    def total(self) -> int:
        return sum(t.points for t in self.towers) + sum(b.points for b in self.bonuses)

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "towers": [t.to_json() for t in self.towers],
            "bonuses": [b.to_json() for b in self.bonuses],
        }


@dataclass(frozen=True)
class Score:
    players: dict[str, PlayerScore] = field(default_factory=dict)

    @property
    def winner(self) -> str:
        white, black = self.players["white"].total, self.players["black"].total
        if white == black:
            return "tie"
        return "white" if white > black else "black"

    def total(self, player: str) -> int:
        return self.players[player].total

    def to_json(self) -> dict[str, Any]:
        return {
            "white": self.players["white"].to_json(),
            "black": self.players["black"].to_json(),
            "winner": self.winner,
        }

    def to_text(self) -> str:
        lines = []
        for player in ("white", "black"):
            ps = self.players[player]
            lines.append(f"{player.capitalize()}: {ps.total} points")
            for t in ps.towers:
                lines.append(
                    f"  {t.color:<5} tower {LOT_NAMES[t.lot]:<3}  {t.customers} customers x "
                    f"{t.competition} to competition = {t.points:>3}"
                )
            for b in ps.bonuses:
                lines.append(
                    f"  bonus: green {LOT_NAMES[b.green]} <- {b.color} {LOT_NAMES[b.towers[0]]} "
                    f"at {b.distance} = {b.points:>3}"
                )
        winner = self.winner
        lines.append("Tie." if winner == "tie" else f"{winner.capitalize()} wins.")
        return "\n".join(lines)


def _owner(position: Position, lot: int, void_caps: frozenset[int]) -> str | None:
    return None if lot in void_caps else position.structures[lot].cap


def score(
    position: Position,
    rules: Ruleset = RULEBOOK,
    void_caps: Iterable[int] = (),
) -> Score:
    """Score a position as if the game ended now.

    ``void_caps``: lots whose cap does not score (a cap placed on the game's
    final turn); those towers count as unclaimed.
    """
    void = frozenset(void_caps)
    structures = position.structures
    towers = sorted(lot for lot, s in structures.items() if s.kind == "tower")
    by_player: dict[str, list[TowerScore]] = {p: [] for p in PLAYERS}
    bonuses: dict[str, list[Bonus]] = {p: [] for p in PLAYERS}
    for lot in towers:
        owner = _owner(position, lot, void)
        green_unclaimed = owner is None and structures[lot].color == "green"
        if owner is None and not green_unclaimed:
            continue
        distances = structure_distances(position, lot)
        if owner is not None:
            by_player[owner].append(_tower_score(position, lot, distances))
        else:
            for player, bonus in _green_bonuses(position, lot, distances, rules, void):
                bonuses[player].append(bonus)
    return Score({p: PlayerScore(tuple(by_player[p]), tuple(bonuses[p])) for p in PLAYERS})


def _tower_score(position: Position, lot: int, distances: dict[int, int]) -> TowerScore:
    structures = position.structures
    color = structures[lot].color
    customers = tuple(sorted(
        other for other, d in distances.items()
        if d <= CUSTOMER_REACH and structures[other].color != color
    ))
    rivals = {
        other: d for other, d in distances.items()
        if structures[other].kind == "tower" and structures[other].color == color
    }
    competition = min(rivals.values(), default=0)
    competitor_lots = tuple(sorted(o for o, d in rivals.items() if d == competition)) if rivals else ()
    return TowerScore(lot, color, len(customers), customers, competition, competitor_lots,
                      len(customers) * competition)


def _green_bonuses(
    position: Position, green: int, distances: dict[int, int], rules: Ruleset, void: frozenset[int]
) -> list[tuple[str, Bonus]]:
    structures = position.structures
    paid = []
    for color in ("red", "blue"):
        near = {o: d for o, d in distances.items()
                if structures[o].kind == "tower" and structures[o].color == color}
        if not near:
            continue
        distance = min(near.values())
        if distance > BONUS_REACH:
            continue
        nearest = tuple(sorted(o for o, d in near.items() if d == distance))
        owners = {_owner(position, o, void) for o in nearest}
        if len(owners) != 1 or None in owners:
            continue
        if len(nearest) > 1 and not rules.tie_pays_sole_owner:
            continue
        (owner,) = owners
        assert owner is not None
        paid.append((owner, Bonus(green, nearest, color, distance, 10 - 2 * distance)))
    return paid
