"""Faint builds: a piece the vision reads only as the doubt behind an unsure "empty"."""

import pytest

from boardcam.engine.aliencity import LOT_NAMES
from boardcam.firmware.lights import Light
from boardcam.firmware.referee import Referee, RunnerUp
from boardcam.firmware.screens import ScreenKind

from helpers import apply, game_after, illegal_build, seen


def three_plies_in(boards, confidence=None):
    """A referee with three plies judged (the third read with ``confidence``), and the fourth ply's lot and piece."""
    referee = Referee(max_looks=2, confirm_reads=1)
    for doc in boards[:3]:
        referee.observe(seen(doc))
    referee.observe(seen(boards[3], confidence))
    assert referee.game.ply == 3
    lot = next(name for name in boards[4]["structures"] if name not in boards[3]["structures"])
    return referee, lot, boards[4]["structures"][lot]


def faint(structure, probability=0.36, share=0.98):
    return RunnerUp(structure, probability, share)


def test_a_faint_build_is_looked_at_then_taken_and_kept(boards):
    referee, lot, piece = three_plies_in(boards)
    look = seen(boards[3], {lot: 0.64}, runners_up={lot: faint(piece)})
    for _ in range(2):
        out = referee.observe(look)
        assert out.light is Light.AMBER and out.look_again and out.screen.lot == lot and referee.game.ply == 3
    out = referee.observe(look)
    assert out.light is Light.GREEN and out.beep is None and referee.game.ply == 4
    assert referee.game.moves[-1].lot == LOT_NAMES.index(lot)
    assert [r["type"] for r in out.records] == ["move"] and out.records[0]["faint"] is True
    assert "check it" in referee.note
    # every later frame still reads it as a doubtful "empty": that is no take-back
    for _ in range(3):
        out = referee.observe(look)
        assert out.light is Light.GREEN and not out.records and referee.game.ply == 4


def test_the_next_move_follows_a_faint_build(boards):
    referee, lot, piece = three_plies_in(boards)
    look = seen(boards[3], {lot: 0.64}, runners_up={lot: faint(piece)})
    for _ in range(3):
        referee.observe(look)
    assert referee.game.ply == 4
    following = dict(boards[5], structures=dict(boards[5]["structures"]))
    del following["structures"][lot]  # still read as empty, the runner-up still the faint piece
    out = referee.observe(seen(following, {lot: 0.64}, runners_up={lot: faint(piece)}))
    assert out.light is Light.GREEN and referee.game.ply == 5
    assert referee.accepted.to_json()["structures"] == boards[5]["structures"]


def test_a_lot_unsure_since_the_last_move_is_no_faint_build(boards):
    """A lot next to the new piece (its shadow, its lean) was never read surely empty since: not a build."""
    lot = next(name for name in boards[4]["structures"] if name not in boards[3]["structures"])
    referee, _, piece = three_plies_in(boards, {lot: 0.7})
    for _ in range(4):
        out = referee.observe(seen(boards[3], {lot: 0.64}, runners_up={lot: faint(piece)}))
        assert out.light is Light.GREEN and not out.look_again and referee.game.ply == 3


@pytest.mark.parametrize("probability, share", [(0.1, 0.98), (0.36, 0.6)])
def test_a_weak_or_vague_doubt_is_no_build(boards, probability, share):
    referee, lot, piece = three_plies_in(boards)
    for _ in range(4):
        out = referee.observe(seen(boards[3], {lot: 0.64}, runners_up={lot: faint(piece, probability, share)}))
        assert out.light is Light.GREEN and referee.game.ply == 3


def test_two_faint_lots_at_once_are_neither_taken(boards):
    referee, lot, piece = three_plies_in(boards)
    other = next(name for name in LOT_NAMES if name not in boards[4]["structures"] and name != lot)
    doubts = {lot: faint(piece), other: faint({"kind": "dome", "color": "black"})}
    for _ in range(4):
        out = referee.observe(seen(boards[3], {lot: 0.64, other: 0.6}, runners_up=doubts))
        assert out.light is Light.GREEN and referee.game.ply == 3


def test_an_illegal_faint_build_is_only_looked_at_never_warned(game, boards):
    referee, _, _ = three_plies_in(boards)
    move = illegal_build(game_after(game, 3))
    lot = LOT_NAMES[move.lot]
    piece = apply(boards[3], move)["structures"][lot]
    outs = [referee.observe(seen(boards[3], {lot: 0.6}, runners_up={lot: faint(piece)})) for _ in range(4)]
    assert all(out.light is Light.AMBER and out.beep is None and not out.records for out in outs)
    assert outs[-1].screen.kind is ScreenKind.LOOKING and outs[-1].screen.title.startswith("Cannot read")
    assert referee.game.ply == 3


def test_a_sure_move_elsewhere_wins_over_a_faint_one(boards):
    referee, lot, piece = three_plies_in(boards)
    other = next(name for name in LOT_NAMES if name not in boards[4]["structures"])
    out = referee.observe(seen(boards[4], {other: 0.6}, runners_up={other: faint({"kind": "dome", "color": "black"})}))
    assert out.light is Light.GREEN and referee.game.ply == 4
    assert referee.game.moves[-1].lot == LOT_NAMES.index(lot)
