"""The miner: placement, steps, jumps over 1–3 opponents' miners, blocking, the compulsory move."""

from __future__ import annotations

from boardcam.engine.netzwerk import miner_moves, miner_violations

from .boards import LINE, fid, position, rules_of

FOUR = ["white", "purple", "cyan", "brown"]


def targets(pos, player):
    return sorted(pos.layout.key(m.to) for m in miner_moves(pos, player))


def test_steps_go_to_every_neighbouring_field_except_deserts_and_miners():
    pos = position(miners={"white": "1,1", "purple": "2,1"})
    # (1,1) touches (2,1) [purple], (0,1), (1,0), (2,0), (1,2) [desert], (0,2).
    assert "1,2" not in targets(pos, 0)
    assert {"0,1", "1,0", "2,0", "0,2"} <= set(targets(pos, 0))
    assert "2,1" not in targets(pos, 0)


def test_jump_over_one_opponent_onto_the_empty_field_behind():
    pos = position(miners={"white": "1,1", "purple": "2,1"})
    jump = [m for m in miner_moves(pos, 0) if m.over]
    assert [(pos.layout.key(m.to), [pos.layout.key(f) for f in m.over]) for m in jump] == [("3,1", ["2,1"])]


def test_jump_over_two_and_three_miners_in_a_line():
    pos = position(["white", "purple", "cyan"], rows=LINE, miners={"white": "0,0", "purple": "1,0", "cyan": "2,0"})
    assert targets(pos, 0) == ["3,0"]
    assert [pos.layout.key(f) for f in miner_moves(pos, 0)[0].over] == ["1,0", "2,0"]
    four = position(FOUR, rows=LINE, miners={"white": "0,0", "purple": "1,0", "cyan": "2,0", "brown": "3,0"})
    # behind the three miners lies the desert (4,0): no jump, and no step either: blocked.
    assert targets(four, 0) == []
    assert miner_violations(four, 0, None) == []


def test_no_jump_onto_a_desert_or_off_the_board():
    pos = position(miners={"white": "1,0", "purple": "1,1"})   # behind (1,1) going down lies the desert (1,2)
    assert "1,2" not in targets(pos, 0)
    edge = position(miners={"white": "2,2", "purple": "2,3"})  # behind (2,3) is off the board
    assert all(m.over == () or pos.layout.key(m.to) != "2,4" for m in miner_moves(edge, 0))
    assert not any(m.over for m in miner_moves(edge, 0))


def test_a_jump_needs_miners_on_every_field_it_passes():
    pos = position(miners={"white": "0,1", "purple": "1,1"})
    found = miner_violations(pos, 0, fid(pos, "3,1"))
    assert rules_of(found) == ["jump"] and "2,1 holds none" in found[0].message


def test_moves_that_are_not_steps_or_jumps_are_refused_with_the_reason():
    pos = position(miners={"white": "1,1", "purple": "2,1"})
    assert rules_of(miner_violations(pos, 0, fid(pos, "1,2"))) == ["desert"]
    assert rules_of(miner_violations(pos, 0, fid(pos, "2,1"))) == ["move"]
    assert rules_of(miner_violations(pos, 0, fid(pos, "5,3"))) == ["move"]
    assert miner_violations(pos, 0, fid(pos, "3,1")) == []


def test_the_move_is_compulsory_unless_blocked():
    pos = position(miners={"white": "1,1", "purple": "2,1"})
    assert rules_of(miner_violations(pos, 0, None)) == ["move"]


def test_placement_on_any_free_field_that_is_not_a_desert():
    pos = position(miners={"purple": "2,1"})
    places = targets(pos, 0)
    assert "2,1" not in places and "1,2" not in places
    assert len(places) == 24 - 1 - 1
    assert all(m.place for m in miner_moves(pos, 0))
    assert rules_of(miner_violations(pos, 0, fid(pos, "2,1"))) == ["placement"]
    assert rules_of(miner_violations(pos, 0, fid(pos, "1,2"))) == ["desert"]
    assert rules_of(miner_violations(pos, 0, None)) == ["placement"]
