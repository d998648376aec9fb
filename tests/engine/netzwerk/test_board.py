"""The board and the formats: layouts, neighbour tables, the boxed game's counts, position JSON errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from boardcam.engine.errors import FormatError
from boardcam.engine.netzwerk import DIRECTIONS, Layout, Position, layout_problems, random_layout

from .boards import pieces, position_doc

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DATA = Path(__file__).resolve().parents[2] / "data" / "netzwerk"


def test_neighbour_tables_are_symmetric_and_slots_are_neighbour_pairs():
    layout = Layout.from_json({"pieces": pieces()})
    for f, row in enumerate(layout.neighbours):
        for d, g in enumerate(row):
            if g >= 0:
                assert layout.neighbours[g][(d + 3) % 6] == f
                a, b = layout.fields[f], layout.fields[g]
                assert (b.q - a.q, b.r - a.r) == DIRECTIONS[d]
    assert len(layout.edge_ends) == sum(1 for row in layout.neighbours for g in row if g >= 0) // 2
    for e, (a, b) in enumerate(layout.edge_ends):
        assert layout.edge_id[(a, b)] == e and e in layout.field_edges[a] and e in layout.field_edges[b]


def test_layout_round_trip_keeps_pieces_and_order():
    doc = json.loads((EXAMPLES / "netzwerk-layout.json").read_text())
    layout = Layout.from_json(doc)
    assert layout.to_json() == doc
    assert layout_problems(layout, 4) == [] and layout_problems(layout, 3) == []
    assert any("11" in p for p in layout_problems(layout, 2))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_layouts_are_the_boxed_game(players):
    for seed in range(5):
        layout = random_layout(seed, players)
        assert layout_problems(layout, players) == []
        assert Layout.from_json(layout.to_json()) == layout


def test_two_player_board_must_leave_out_city_6():
    layout = random_layout(1, 2)
    doc = layout.to_json()
    for piece in doc["pieces"]:
        for field in piece.values():
            if field["kind"] == "city" and field["value"] == 5:
                field["value"] = 6
                break
    assert any("city 6" in p for p in layout_problems(Layout.from_json(doc), 2))


def bad(mutate):
    doc = {"game": "netzwerk", "pieces": pieces()}
    mutate(doc)
    with pytest.raises(FormatError) as caught:
        Layout.from_json(doc)
    return str(caught.value)


def test_layout_errors_name_the_piece_and_field():
    assert "pieces[0]: a piece has 3 fields" in bad(lambda d: d["pieces"][0].pop("0,0"))
    assert "not joined edge to edge" in bad(lambda d: d["pieces"][0].update({"9,9": d["pieces"][0].pop("2,0")}))
    assert "pieces overlap" in bad(lambda d: d["pieces"].append(copy.deepcopy(d["pieces"][0])))
    assert "same colour" in bad(lambda d: d["pieces"][0].update({"1,0": {"kind": "city", "value": 2}}))
    assert "pieces[0].0,0.kind" in bad(lambda d: d["pieces"][0].update({"0,0": {"kind": "lake"}}))
    assert "pieces[0].1,0.color: 'purple'" in bad(
        lambda d: d["pieces"][0].update({"1,0": {"kind": "landscape", "color": "purple"}}))
    assert "'q,r'" in bad(lambda d: d["pieces"][0].update({"a,b": d["pieces"][0].pop("0,0")}))
    assert "not one connected shape" in bad(lambda d: d["pieces"].append(
        {"20,0": {"kind": "desert"}, "21,0": {"kind": "city", "value": 1}, "22,0": {"kind": "landscape",
                                                                                  "color": "red"}}))
    assert "game: 'alien-city'" in bad(lambda d: d.update(game="alien-city"))


def bad_position(**state):
    with pytest.raises(FormatError) as caught:
        Position.from_json(position_doc(**state))
    return str(caught.value)


def test_position_errors_name_the_field():
    assert "miners.white: 1,2 is a desert" in bad_position(miners={"white": "1,2"})
    assert "already holds the miner of white" in bad_position(miners={"white": "0,0", "purple": "0,0"})
    assert "stones.0,0: stones lie only on landscape" in bad_position(stones={"0,0": 1})
    assert "stones.1,0: 3 stones" in bad_position(stones={"1,0": 3})
    assert "turn: 'nobody' is not a player" in bad_position(turn="nobody")
    assert "players: Netzwerk is for 2-4 players" in bad_position(players=["solo"])
    assert "a player is named twice" in bad_position(players=["ann", "ann"])
    assert "connectors.white[0]: fields 0,0 and 5,0 are not neighbours" in bad_position(
        connectors={"white": [["0,0", "5,0"]]})
    assert "resources: 3 orange in hand" in bad_position(resources={"white": {"orange": 3}})
    assert "resources.white.black" in bad_position(resources={"white": {"black": 1}})
    assert "colour: unknown field" in bad_position(colour="red")


def test_fixtures_load_and_round_trip():
    files = sorted(DATA.glob("*.json"))
    assert files
    for path in files:
        doc = json.loads(path.read_text())
        if "moves" in doc:
            continue
        if "players" not in doc:
            assert Layout.from_json(doc).to_json() == doc
            continue
        position = Position.from_json(doc)
        assert Position.from_json(position.to_json()) == position
