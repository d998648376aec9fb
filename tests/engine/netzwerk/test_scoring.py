"""Scoring: n × (n − 1) per road, each city reached counted once, nothing for what is not a road."""

from __future__ import annotations

from boardcam.engine.netzwerk import score

from .boards import position

R1 = [["0,0", "0,1"], ["0,1", "0,2"]]                                     # C1 - C3
TREE = [["0,2", "1,1"], ["1,1", "1,0"], ["1,0", "0,0"],                   # C3, C1 and C4 on one road
        ["1,1", "2,1"], ["2,1", "2,2"], ["2,2", "3,2"]]
FROM_C3 = [["0,2", "1,1"], ["1,1", "2,1"], ["2,1", "2,2"], ["2,2", "3,2"]]  # C3 - C4


def test_road_values_are_n_times_n_minus_one():
    result = score(position(connectors={"white": R1, "purple": TREE}))
    white, purple = result.players
    assert [r.points for r in white.roads] == [2] and white.city_points == 1 + 3 and white.total == 6
    assert [r.points for r in purple.roads] == [6] and purple.city_points == 1 + 3 + 4 and purple.total == 14
    assert result.winner == "purple"


def test_a_city_reached_by_two_own_roads_counts_once():
    result = score(position(connectors={"white": R1 + FROM_C3}))
    white = result.players[0]
    assert [r.points for r in white.roads] == [2, 2]
    assert white.city_points == 1 + 3 + 4
    assert white.total == 12


def test_connectors_that_are_not_a_road_score_nothing_but_are_listed():
    dangling = [["0,0", "1,0"], ["1,0", "2,0"]]
    result = score(position(connectors={"white": R1 + dangling}))
    white = result.players[0]
    assert white.total == 2 + 1 + 3
    assert len(white.not_roads) == 1 and white.not_roads[0].problems[0][0] == "road-a"
    doc = result.to_json()
    assert doc["players"]["white"]["not_roads"][0]["problems"][0]["rule"] == "road-a"


def test_ties_are_not_broken():
    result = score(position(connectors={"white": R1, "purple": R1}, players=["white", "purple"]))
    assert result.winner == "tie"
    assert score(position()).winner == "tie"


def test_score_json_breakdown():
    doc = score(position(connectors={"purple": TREE})).to_json()
    purple = doc["players"]["purple"]
    assert purple["total"] == 14 and purple["road_points"] == 6 and purple["city_points"] == 8
    assert purple["roads"][0]["cities"] == ["0,0", "0,2", "3,2"]
    assert len(purple["roads"][0]["connectors"]) == 6
    assert {c["field"]: c["value"] for c in purple["cities"]} == {"0,0": 1, "0,2": 3, "3,2": 4}
    assert doc["winner"] == "purple"
    assert "purple: 14 points" in score(position(connectors={"purple": TREE})).to_text()
