"""Final scoring: n × (n − 1) per road of n cities, plus each city value reached by the player's roads once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boardcam.engine.netzwerk.position import Position
from boardcam.engine.netzwerk.roads import RoadPart, road_parts


@dataclass(frozen=True)
class PlayerScore:
    """One player's points with the breakdown per road, the cities counted, and parts that are not roads."""

    player: str
    roads: tuple[RoadPart, ...]
    cities: tuple[int, ...]
    road_points: int
    city_points: int
    not_roads: tuple[RoadPart, ...]

    @property
    def total(self) -> int:
        return self.road_points + self.city_points


@dataclass(frozen=True)
class Score:
    position: Position
    players: tuple[PlayerScore, ...]

    @property
    def winner(self) -> str:
        """The player with most points, or "tie" (the rules break no ties)."""
        best = max(p.total for p in self.players)
        leaders = [p.player for p in self.players if p.total == best]
        return leaders[0] if len(leaders) == 1 else "tie"

    def to_json(self) -> dict[str, Any]:
        layout = self.position.layout
        doc: dict[str, Any] = {}
        for p in self.players:
            doc[p.player] = {
                "total": p.total,
                "road_points": p.road_points,
                "city_points": p.city_points,
                "roads": [
                    {
                        "cities": [layout.key(c) for c in road.cities],
                        "connectors": [layout.edge_to_json(e) for e in sorted(road.edges)],
                        "points": road.points,
                    }
                    for road in p.roads
                ],
                "cities": [{"field": layout.key(c), "value": layout.fields[c].value} for c in p.cities],
                "not_roads": [
                    {
                        "connectors": [layout.edge_to_json(e) for e in sorted(part.edges)],
                        "problems": [{"rule": rule, "message": message} for rule, message in part.problems],
                    }
                    for part in p.not_roads
                ],
            }
        return {"players": doc, "winner": self.winner}

    def to_text(self) -> str:
        layout = self.position.layout
        lines = []
        for p in self.players:
            lines.append(f"{p.player}: {p.total} points ({p.road_points} for roads, {p.city_points} for cities)")
            for road in p.roads:
                names = " ".join(layout.key(c) for c in road.cities)
                lines.append(f"  road of {len(road.cities)} cities [{names}]: {road.points}")
            if p.not_roads:
                lines.append(f"  {len(p.not_roads)} group(s) of connectors that are not roads: 0")
        lines.append(f"winner: {self.winner}")
        return "\n".join(lines)


def score(position: Position) -> Score:
    """Score every player as if the game ended now.

    Connectors that do not form a valid road (a mistake left on the table)
    score nothing and are listed under ``not_roads`` instead of refusing to score.
    """
    layout = position.layout
    result = []
    for p, name in enumerate(position.players):
        parts = road_parts(layout, position.connectors[p])
        roads = tuple(part for part in parts if part.valid)
        cities = tuple(sorted({c for road in roads for c in road.cities}))
        result.append(PlayerScore(
            player=name,
            roads=roads,
            cities=cities,
            road_points=sum(road.points for road in roads),
            city_points=sum(layout.fields[c].value or 0 for c in cities),
            not_roads=tuple(part for part in parts if not part.valid),
        ))
    return Score(position, tuple(result))
