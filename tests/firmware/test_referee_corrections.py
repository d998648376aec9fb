"""Recovering from a confident misread that was accepted into the game (issue 5).

Each test plays a generated game into the pure referee, with one ply read
wrong at the time (a legal but wrong piece), then shows the truth again —
the way a passing reflection fools the vision for a frame or two.
"""

import copy

import pytest

from boardcam.engine.aliencity import LOT_NAMES, Move, Piece, tile_of
from boardcam.firmware.gamelog import (
    GameLog,
    export_record,
    game_from_records,
    read_records,
    replay_log,
    unfinished_game,
)
from boardcam.firmware.display import NullDisplay
from boardcam.firmware.lights import ButtonEvent, Light, NoLights
from boardcam.firmware.referee import Observation, Phase, Referee, reread_history
from boardcam.firmware.runner import create_loop
from boardcam.firmware.config import Config, MotionConfig
from boardcam.firmware.screens import ScreenKind

from helpers import game_after, illegal_build, played_game, position, positions_of, with_structure
from scripted import Hand, ScriptedTable, Still

COLORS = ("red", "blue", "green", "black")


def seen(doc):
    return Observation(position(doc))


def settle(referee, doc, limit=12):
    """Observe one still board the way the loop does: again while the referee asks to."""
    outs = [referee.observe(seen(doc))]
    while outs[-1].look_again and len(outs) < limit:
        outs.append(referee.observe(seen(doc)))
    return outs


def records_of(outs):
    return [r for out in outs for r in out.records]


def started(boards, plies, log=None):
    referee = Referee()  # the defaults of the app: two readings confirm a warning
    outs = settle(referee, boards[0]) + [referee.press(ButtonEvent.SCORE)]
    for doc in boards[1 : plies + 1]:
        outs += settle(referee, doc)
    if log is not None:
        log.append(records_of(outs))
    assert referee.game.ply == plies and referee.phase is Phase.PLAYING
    return referee


def alternatives(move, swap):
    """Pieces the vision could take the moved piece for: another colour, or the other kind."""
    kind, color = move.piece.kind, move.piece.color
    if swap == "colour":
        return [Piece(kind, c) for c in COLORS if c != color and not (kind == "tower" and c == "black")]
    if kind == "dome" and color == "black":
        return []  # there are no black towers
    return [Piece("dome" if kind == "tower" else "tower", color)]


def find_misread(swap, *, seeds=range(1, 40), then_illegal=False):
    """(game, ply, misread move): a ply whose piece, read as another, is still a legal move.

    With ``then_illegal`` the misread also makes the same player's next move
    break a rule (it uses up a piece that move needs)."""
    for seed in seeds:
        game = played_game(seed)
        for ply in range(3, game.ply - 4):
            truth = game.moves[ply - 1]
            if truth.cap is not None or truth.piece is None:
                continue
            before = game_after(game, ply - 1)
            for piece in alternatives(truth, swap):
                wrong = Move(truth.player, truth.lot, piece)
                if before.supply[truth.player][piece] <= 0 or before.violations(wrong):
                    continue
                misread = before.copy()
                misread.push(wrong)
                later = game.moves[ply : ply + 2]
                legal_after = True
                for move in later:
                    legal_after = legal_after and not misread.violations(move)
                    misread.push(move)
                if then_illegal == legal_after:
                    continue
                if not then_illegal:
                    return game, ply, wrong
                if later[1].player == truth.player and later[1].piece == piece:
                    return game, ply, wrong
    raise LookupError("no such misread in the seeds tried")


def misread_board(boards, ply, wrong):
    return with_structure(boards[ply], wrong.lot, wrong.piece.kind, wrong.piece.color)


def play_rest(referee, boards, start, log=None):
    outs = []
    for doc in boards[start:]:
        outs += settle(referee, doc)
    if log is not None:
        log.append(records_of(outs))
    return outs


@pytest.mark.parametrize("swap", ["colour", "kind"])
def test_a_misread_ply_is_corrected_when_the_truth_shows(swap):
    game, ply, wrong = find_misread(swap)
    boards = positions_of(game)
    referee = started(boards, ply - 1)
    accepted = settle(referee, misread_board(boards, ply, wrong))
    assert referee.game.moves[-1] == wrong  # fooled, as the vision was
    assert accepted[-1].light is Light.GREEN
    outs = settle(referee, boards[ply + 1])
    assert all(o.light is not Light.RED for o in outs)
    (record,) = [r for r in records_of(outs) if r["type"] == "correction"]
    assert record["corrected"] == [ply] and record["undo"] == 1
    assert record["old"][0]["build"]["kind"] == wrong.piece.kind
    assert record["old"][0]["build"]["color"] == wrong.piece.color
    assert outs[-1].light is Light.GREEN
    name = LOT_NAMES[wrong.lot]
    assert outs[-1].screen.lines[0].startswith(
        f"corrected: {name} was a {game.moves[ply - 1].piece.words}")
    assert referee.game.moves == game.moves[: ply + 1]
    rest = play_rest(referee, boards, ply + 2)
    assert all(o.light is not Light.RED for o in rest)
    assert referee.phase is Phase.OVER and referee.game.moves == game.moves
    assert rest[-1].records[-1]["score"] == game.score().to_json()


def test_a_misread_that_makes_a_later_move_look_illegal_is_corrected_not_warned():
    game, ply, wrong = find_misread("colour", then_illegal=True)
    boards = positions_of(game)
    referee = started(boards, ply - 1)
    settle(referee, misread_board(boards, ply, wrong))
    # the reflection lasts one more move: the next board still shows the misread
    settle(referee, misread_board(boards, ply + 1, wrong))
    assert referee.game.ply == ply + 1
    poisoned = referee.game.copy()
    assert poisoned.violations(game.moves[ply + 1])  # the true next move looks illegal here
    outs = settle(referee, boards[ply + 2])
    assert all(o.light is not Light.RED and o.beep is None for o in outs)
    (record,) = [r for r in records_of(outs) if r["type"] == "correction"]
    assert record["undo"] == 2 and record["corrected"] == [ply]
    assert referee.game.moves == game.moves[: ply + 2]
    play_rest(referee, boards, ply + 3)
    assert referee.game.moves == game.moves
    assert referee.game.score().to_json() == game.score().to_json()


def test_a_correction_that_reveals_an_illegal_move_warns_as_usual():
    game = played_game(11)
    boards = positions_of(game)
    for ply in range(4, game.ply - 2):
        before = game_after(game, ply - 1)
        try:
            bad = illegal_build(before, {2})  # a dome on a tile of another colour
        except LookupError:
            continue
        wrong = Move(bad.player, bad.lot, Piece("dome", before.position.tiles[tile_of(bad.lot)].color))
        if before.supply[bad.player][wrong.piece] > 0 and not before.violations(wrong):
            break
    else:
        pytest.skip("no illegal dome that reads as a legal one")
    referee = started(boards, ply - 1)
    truth = with_structure(boards[ply - 1], bad.lot, "dome", bad.piece.color)
    misread = with_structure(boards[ply - 1], bad.lot, "dome", wrong.piece.color)
    assert settle(referee, misread)[-1].light is Light.GREEN  # the illegal dome read as legal
    outs = settle(referee, truth)
    assert outs[-1].light is Light.RED and outs[-1].screen.rule == 2
    assert [r["type"] for r in records_of(outs)] == ["verdict"]
    assert referee.game.moves[-1] == wrong  # nothing rewritten on an illegal reading
    back = settle(referee, misread)  # the players put the right dome there
    assert back[-1].light is Light.GREEN and referee.phase is Phase.PLAYING


def test_the_truth_shown_with_an_illegal_new_move_corrects_then_warns_about_that_move():
    game, ply, wrong = find_misread("colour")
    boards = positions_of(game)
    referee = started(boards, ply - 1)
    settle(referee, misread_board(boards, ply, wrong))
    bad = illegal_build(game_after(game, ply))
    board = with_structure(boards[ply], bad.lot, bad.piece.kind, bad.piece.color)
    outs = settle(referee, board)
    assert [r["type"] for r in records_of(outs)] == ["correction", "verdict"]
    assert referee.game.moves == game.moves[:ply]  # the history is right again
    assert outs[-1].light is Light.RED and referee.verdict.move == bad
    back = settle(referee, boards[ply])
    assert back[-1].light is Light.GREEN and referee.game.moves == game.moves[:ply]


def test_a_correction_survives_a_restart(tmp_path):
    game, ply, wrong = find_misread("colour")
    boards = positions_of(game)
    log = GameLog(tmp_path)
    referee = started(boards, ply - 1, log)
    log.append(records_of(settle(referee, misread_board(boards, ply, wrong))))
    log.append(records_of(settle(referee, boards[ply + 1])))
    path = unfinished_game(tmp_path)
    assert path is not None
    assert [r["type"] for r in read_records(path)].count("correction") == 1
    rebuilt = game_from_records(read_records(path))
    assert rebuilt.moves == game.moves[: ply + 1]  # the corrected history, not the misread
    assert export_record(path)["moves"] == game_after(game, ply + 1).record().to_json()["moves"]
    replayed = replay_log(path)
    assert replayed["corrections"] == 1 and all(m["legal"] for m in replayed["moves"])
    assert [m["ply"] for m in replayed["moves"]] == list(range(1, ply + 2))
    resumed = Referee()
    resumed.resume(rebuilt)
    again = GameLog(tmp_path)
    again.continue_game(path)
    play_rest(resumed, boards, ply + 2, again)
    assert resumed.phase is Phase.OVER and resumed.game.moves == game.moves
    assert replay_log(path)["score"] == game.score().to_json()


def test_a_lot_that_reads_two_ways_by_turns_corrects_nothing():
    game = played_game(11)
    boards = positions_of(game)
    referee = started(boards, 8)
    lot = game.moves[7].lot  # built a ply ago: the easiest kind to re-read
    truth = boards[8]["structures"][LOT_NAMES[lot]]
    others = [c for c in COLORS if c != truth["color"] and not (truth["kind"] == "tower" and c == "black")]
    one, two = (with_structure(boards[8], lot, truth["kind"], c) for c in others[:2])
    outs = [referee.observe(seen(doc)) for doc in [one, two] * 6]
    assert not records_of(outs) and all(o.light is not Light.RED for o in outs)
    assert outs[-1].light is Light.AMBER and outs[-1].screen.kind is ScreenKind.LOOKING
    assert outs[-1].screen.lot == LOT_NAMES[lot] and not outs[-1].look_again  # asks, then waits
    # the truth and a glitch by turns: no storm of corrections either, and green again
    outs = [referee.observe(seen(doc)) for doc in [one, boards[8]] * 6]
    assert not records_of(outs) and outs[-1].light is Light.GREEN
    assert referee.game.moves == game.moves[:8]


def test_a_short_glitch_on_a_well_seen_structure_is_waited_out():
    game = played_game(11)
    boards = positions_of(game)
    referee = started(boards, 6)
    lot = game.moves[3].lot  # read right at every move since
    doc = copy.deepcopy(boards[7])
    structure = doc["structures"][LOT_NAMES[lot]]
    structure["kind"] = "dome" if structure["kind"] == "tower" else "tower"
    structure.pop("cap", None)
    outs = [referee.observe(seen(doc)) for _ in range(3)]  # three frames of a reflection
    assert all(o.look_again and o.light is Light.GREEN and not o.records for o in outs)
    out = referee.observe(seen(boards[7]))
    assert out.records[0]["type"] == "move" and referee.game.moves == game.moves[:7]


def test_history_is_reread_with_the_fewest_plies_and_nothing_is_erased():
    game = played_game(11)
    boards = positions_of(game)
    accepted = game_after(game, 6)
    taken_back = position(boards[5])  # the last move gone: a take-back, not a misread
    assert reread_history(accepted, taken_back) is None
    truth = game.moves[5]
    other = next(p for p in alternatives(truth, "kind"))
    wrong_game = game_after(game, 5)
    wrong_game.push(Move(truth.player, truth.lot, other))
    found = reread_history(wrong_game, position(boards[6]))
    if found is None or found.violations:
        pytest.skip("this ply misread is not a legal move")
    assert len(found.popped) == 1 and found.moves == (truth,)


def test_a_misread_corrected_through_the_loop_is_resumed_after_a_restart(tmp_path):
    game, ply, wrong = find_misread("kind")
    boards = positions_of(game)
    config = Config(motion=MotionConfig(still_frames=3))

    def script(docs):
        return [item for doc in docs for item in (Still(doc), Hand(5))]

    first_half = script(boards[: ply] + [misread_board(boards, ply, wrong)] + boards[ply + 1 : ply + 3])
    table = ScriptedTable(first_half)
    loop = create_loop(config, source=table.source(), reader=table.reader, lights=NoLights(),
                       display=NullDisplay(), log_dir=tmp_path)
    loop.run()
    loop.close()
    assert loop.referee.game.moves == game.moves[: ply + 2]
    table = ScriptedTable(script(boards[ply + 2 :]))
    loop = create_loop(config, source=table.source(), reader=table.reader, lights=NoLights(),
                       display=NullDisplay(), log_dir=tmp_path)
    assert loop.referee.game.moves == game.moves[: ply + 2]  # resumed with the corrected history
    loop.run()
    loop.close()
    assert loop.referee.phase is Phase.OVER
    assert loop.referee.game.score().to_json() == game.score().to_json()
    (path,) = tmp_path.iterdir()
    assert replay_log(path)["corrections"] == 1


def test_moves_caught_up_keep_the_order_the_camera_saw_them_in():
    for seed in range(1, 30):
        game = played_game(seed)
        for ply in range(2, game.ply - 2):
            first, second = game.moves[ply - 1 : ply + 1]
            if first.lot < second.lot or first.cap is not None or second.cap is not None:
                continue  # sorted by lot would give the right order anyway
            swapped = game_after(game, ply - 1)
            for move in (Move(first.player, second.lot, second.piece), Move(second.player, first.lot, first.piece)):
                if swapped.violations(move):
                    break
                swapped.push(move)
            else:
                break  # the other order is legal too: only the camera can tell
        else:
            continue
        break
    else:
        pytest.skip("no two moves that fit both ways round")
    boards = positions_of(game)
    referee = Referee(confirm_reads=1)
    settle(referee, boards[0])
    referee.press(ButtonEvent.SCORE)
    for doc in boards[1:ply]:
        settle(referee, doc)
    name = LOT_NAMES[first.lot]
    out = referee.observe(Observation(position(boards[ply]), {name: 0.3}))  # seen, not read
    assert out.light is Light.AMBER and referee.game.ply == ply - 1
    referee.board_moved()
    outs = settle(referee, boards[ply + 1])
    assert [r.get("caught_up") for r in records_of(outs)] == [True, True]
    assert referee.game.moves == game.moves[: ply + 1]
