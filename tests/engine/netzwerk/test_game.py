"""Turns: collecting stones, paying, the end of the game, and replays that go on after a mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardcam.engine.errors import FormatError
from boardcam.engine.netzwerk import Position, Record, Turn, play_turn, replay

from .boards import edges, fid, pieces, position, position_doc, rules_of

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ALL_STONES = {f"{q},{r}": 2 for r in range(4) for q in range(6)
              if pieces()[r * 2 + q // 3][f"{q},{r}"]["kind"] == "landscape"}


def with_stones(**overrides: int) -> dict[str, int]:
    """The setup's stones, except the blue field (3,3) already emptied so players may hold blue."""
    stones = dict(ALL_STONES)
    stones["3,3"] = 0
    stones.update({key.replace("_", ","): value for key, value in overrides.items()})
    return stones


def test_a_miner_arriving_on_stones_takes_one():
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"})
    after, report = play_turn(pos, Turn(0, fid(pos, "0,1")))
    assert report.legal and report.collected == 4            # blue
    assert after.stones[fid(pos, "0,1")] == 1 and after.resources[0][4] == 1
    again, _ = play_turn(after.with_changes(turn=0, stones=tuple(
        1 if i == fid(pos, "1,0") else s for i, s in enumerate(after.stones))), Turn(0, fid(pos, "1,0")))
    assert again.stones[fid(pos, "1,0")] == 0 and again.resources[0][0] == 1


def test_an_empty_field_or_a_city_gives_nothing():
    stones = with_stones()
    stones["0,1"] = 0
    pos = position(stones=stones, miners={"white": "0,0", "purple": "5,3"})
    after, report = play_turn(pos, Turn(0, fid(pos, "0,1")))
    assert report.collected is None and after.resources == pos.resources
    after, report = play_turn(after, Turn(1, fid(pos, "5,2")))
    assert report.collected == 3


def test_the_initial_placement_collects_too():
    pos = position(stones=with_stones())
    after, report = play_turn(pos, Turn(0, fid(pos, "2,0")))
    assert report.legal and report.miner is not None and report.miner.place
    assert report.collected == 1 and after.stones[fid(pos, "2,0")] == 1


def test_collected_stone_can_pay_for_the_same_turns_road():
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"},
                   resources={"white": {"blue": 1}})
    after, report = play_turn(pos, Turn(0, fid(pos, "0,1"), edges(pos, "0,0/0,1", "0,1/0,2")))
    assert report.legal, report.violations
    assert after.resources[0] == (0, 0, 0, 0, 0), "spent resources leave the game"
    assert len(after.connectors[0]) == 2 and after.turn == 1


def test_the_game_ends_after_the_turn_that_takes_a_colours_last_stone():
    stones = with_stones()
    stones["2,0"] = 1                                              # the only orange field, last stone
    pos = position(stones=stones, miners={"white": "1,0", "purple": "5,3"}, resources={"white": {"blue": 2}})
    assert not pos.is_over()
    after, report = play_turn(pos, Turn(0, fid(pos, "2,0"), edges(pos, "0,0/0,1", "0,1/0,2")))
    assert report.legal, "the player who took the last one finishes their turn (and may build)"
    assert report.ends_game and after.is_over() and after.exhausted_colors() == ("orange",)
    _, late = play_turn(after, Turn(1, fid(pos, "5,2")))
    assert rules_of(late.violations) == ["over"]


def test_playing_out_of_turn_is_reported_and_the_board_is_taken_as_it_is():
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"})
    after, report = play_turn(pos, Turn(1, fid(pos, "5,2")))
    assert rules_of(report.violations) == ["order"]
    assert after.miners[1] == fid(pos, "5,2") and after.turn == 0


def test_an_illegal_build_still_stands_and_pays_what_it_can():
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"},
                   resources={"white": {"blue": 1}})
    after, report = play_turn(pos, Turn(0, fid(pos, "1,0"), edges(pos, "0,0/0,1", "0,1/0,2")))
    assert "cost" in rules_of(report.violations)
    assert len(after.connectors[0]) == 2 and min(after.resources[0]) >= 0


def test_a_replay_judges_every_move_and_goes_on():
    doc = {"game": "netzwerk", "pieces": pieces(), "players": ["white", "purple"], "moves": [
        {"player": "white", "place": "0,1"},
        {"player": "purple", "place": "0,1"},                   # occupied: placement broken
        {"player": "white", "miner": "1,0"},
        {"player": "purple", "miner": None},                    # still has to place: compulsory
        {"player": "white", "miner": "2,0", "build": [["0,0", "0,1"], ["0,1", "0,2"]]},
        {"player": "purple", "place": "2,1"},
        {"player": "white", "miner": "1,2"},                    # a desert
        {"player": "purple", "miner": "1,1"},
        {"player": "white", "miner": "1,1"},                    # a neighbour, but purple stands there
    ]}
    played = replay(Record.from_json(doc))
    verdicts = [rules_of(r.violations) for r in played.reports]
    assert verdicts[0] == [] and verdicts[2] == [] and verdicts[5] == [] and verdicts[7] == []
    assert verdicts[1] == ["placement"]
    assert played.positions[2].miners[1] is None, "two miners cannot share a field: the placement is not made"
    assert verdicts[3] == ["placement"]
    assert "cost" in verdicts[4] and len(played.positions[5].connectors[0]) == 2
    assert verdicts[6] == ["desert"] and played.positions[7].miners[0] == fid(played.positions[0], "2,0")
    assert verdicts[8] == ["move"] and played.positions[9].miners[0] == fid(played.positions[0], "2,0")
    assert len(played.positions) == 10


def test_record_round_trip_and_the_bundled_example_plays_to_the_end():
    doc = json.loads((EXAMPLES / "netzwerk-game.json").read_text())
    record = Record.from_json(doc)
    again = Record.from_json(record.to_json())
    assert again.turns == record.turns and again.layout == record.layout
    played = replay(record)
    assert all(r.legal for r in played.reports)
    assert played.final.is_over() and played.reports[-1].ends_game


@pytest.mark.parametrize(
    ("move", "message"),
    [
        ({"place": "0,0"}, "moves[0].player: missing"),
        ({"player": "nobody", "place": "0,0"}, "moves[0].player: 'nobody' is not a player"),
        ({"player": "white", "place": "9,9"}, "moves[0].place: field 9,9 is not on the board"),
        ({"player": "white", "place": "0,0", "miner": "0,1"}, "moves[0]: give either place"),
        ({"player": "white", "build": [["0,0", "2,0"]]}, "moves[0].build[0]: fields 0,0 and 2,0 are not neighbours"),
        ({"player": "white", "build": [["0,0", "0,1"], ["0,1", "0,0"]]}, "listed twice"),
        ({"player": "white", "pay": {"black": 1}}, "moves[0].pay.black: 'black' is not one of"),
        ({"player": "white", "jump": "0,0"}, "moves[0].jump: unknown field"),
    ],
)
def test_bad_record_moves_name_the_field(move, message):
    doc = {"game": "netzwerk", "pieces": pieces(), "players": ["white", "purple"], "moves": [move]}
    with pytest.raises(FormatError, match=None) as caught:
        Record.from_json(doc)
    assert message in str(caught.value)


def test_position_after_a_turn_round_trips_through_json():
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"}, resources={"white": {"blue": 1}})
    after, _ = play_turn(pos, Turn(0, fid(pos, "0,1"), edges(pos, "0,0/0,1", "0,1/0,2")))
    assert Position.from_json(json.loads(json.dumps(after.to_json()))) == after
    assert position_doc()["players"] == ["white", "purple"]


def test_an_illegal_build_never_places_more_than_the_twenty_connectors():
    slots = [["0,0", "1,0"], ["1,0", "2,0"], ["2,0", "3,0"], ["3,0", "4,0"], ["4,0", "5,0"],
             ["0,1", "1,1"], ["1,1", "2,1"], ["2,1", "3,1"], ["3,1", "4,1"], ["4,1", "5,1"],
             ["2,2", "3,2"], ["3,2", "4,2"], ["4,2", "5,2"], ["1,0", "1,1"],
             ["2,0", "2,1"], ["3,0", "3,1"], ["4,0", "4,1"], ["5,0", "5,1"], ["2,1", "2,2"]]
    pos = position(stones=with_stones(), miners={"white": "0,0", "purple": "5,3"}, connectors={"white": slots},
                   resources={"white": {"blue": 2}})
    after, report = play_turn(pos, Turn(0, fid(pos, "0,1"), edges(pos, "0,0/0,1", "0,1/0,2"), pay=(0, 0, 0, 0, 1)))
    assert "supply" in rules_of(report.violations) and "cost" in rules_of(report.violations)
    assert len(after.connectors[0]) == 20 and after.connectors_left(0) == 0
    assert after.resources[0][4] == 2, "the recorded payment (1 blue of the 3 in hand) is what left the game"
    assert Position.from_json(after.to_json()) == after
