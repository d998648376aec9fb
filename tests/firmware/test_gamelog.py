import errno
import json

import pytest

from boardcam.engine.aliencity import GameRecord, Move, Piece, Position, move_to_json
from boardcam.engine.errors import InputError
from boardcam.firmware.gamelog import (
    GameLog,
    export_record,
    game_from_records,
    games_dir,
    read_records,
    replay_log,
    unfinished_game,
)
from boardcam.firmware.lights import ButtonEvent
from boardcam.firmware.referee import Observation, Referee

from helpers import apply, game_after, illegal_build, played_game, positions_of


def play_into_log(log, boards, upto, game=None, illegal_at=None):
    referee = Referee(confirm_reads=1)
    log.append(referee.observe(Observation(Position.from_json(boards[0]))).records)
    log.append(referee.press(ButtonEvent.SCORE).records)
    for ply in range(1, upto + 1):
        if ply == illegal_at:
            bad = apply(boards[ply - 1], illegal_build(game_after(game, ply - 1)))
            log.append(referee.observe(Observation(Position.from_json(bad))).records)
            log.append(referee.press(ButtonEvent.ACCEPT).records)
            return referee
        log.append(referee.observe(Observation(Position.from_json(boards[ply]))).records)
    return referee


@pytest.fixture(scope="module")
def game():
    return played_game(4)


def test_every_record_is_fsynced_as_one_line(tmp_path, game):
    synced = []
    log = GameLog(tmp_path, fsync=lambda fd: synced.append(fd))
    play_into_log(log, positions_of(game), 3)
    lines = log.path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["start", "move", "move", "move"]
    assert len(synced) == 4
    assert all("time" in json.loads(line) for line in lines)


def test_restart_in_mid_game_resumes_where_it_was(tmp_path, game):
    boards = positions_of(game)
    log = GameLog(tmp_path)
    before = play_into_log(log, boards, 9)
    path = unfinished_game(tmp_path)
    assert path == log.path
    rebuilt = game_from_records(read_records(path))
    assert rebuilt.position == before.game.position and rebuilt.turn == before.game.turn
    referee = Referee()
    referee.resume(rebuilt)
    resumed = GameLog(tmp_path)
    resumed.continue_game(path)
    out = referee.observe(Observation(Position.from_json(boards[10])))
    resumed.append(out.records)
    assert [r["type"] for r in read_records(path)][-1] == "move"
    assert game_from_records(read_records(path)).ply == 10


def test_a_torn_last_line_is_skipped_and_the_next_record_starts_clean(tmp_path, game):
    log = GameLog(tmp_path)
    play_into_log(log, positions_of(game), 2)
    with log.path.open("a") as handle:
        handle.write('{"type": "move", "ply": 3, "mo')  # the power went off here
    assert len(read_records(log.path)) == 3
    again = GameLog(tmp_path)
    again.continue_game(log.path)
    again.append([{"type": "verdict", "legal": True, "cleared": "test"}])
    records = read_records(log.path)
    assert len(records) == 4 and records[-1]["cleared"] == "test"


def test_a_full_disk_keeps_records_in_memory_and_writes_them_later(tmp_path, game):
    full = {"on": True}

    def write(fd, data):
        if full["on"]:
            raise OSError(errno.ENOSPC, "No space left on device")
        import os

        return os.write(fd, data)

    log = GameLog(tmp_path, write=write)
    play_into_log(log, positions_of(game), 3)
    assert log.problem.startswith("disk full: 4 records")
    assert len(log.pending) == 4
    full["on"] = False
    assert log.flush()
    assert log.problem == "" and not log.pending
    assert [r["type"] for r in read_records(log.path)] == ["start", "move", "move", "move"]


def test_export_gives_the_engine_game_record(tmp_path, game):
    boards = positions_of(game)
    log = GameLog(tmp_path)
    play_into_log(log, boards, 6)
    record = export_record(log.path)
    parsed = GameRecord.from_json(record)
    assert parsed.moves == tuple(game.moves[:6])
    assert record["rules"] == "rulebook"


def test_replay_of_a_log_reports_house_rulings(tmp_path, game):
    boards = positions_of(game)
    log = GameLog(tmp_path)
    play_into_log(log, boards, 5, game=game, illegal_at=5)
    result = replay_log(log.path)
    assert [m["legal"] for m in result["moves"]] == [True] * 4 + [False]
    assert result["moves"][-1]["house_ruling"] and result["moves"][-1]["violations"]
    assert result["illegal_verdicts"] == 1 and result["house_rulings"] == 1
    assert result["ended"] is None and result["over"] is False


def test_finished_games_are_not_resumed(tmp_path, game):
    log = GameLog(tmp_path)
    referee = play_into_log(log, positions_of(game), 2)
    log.append(referee.press(ButtonEvent.SCORE).records)
    assert unfinished_game(tmp_path) is None
    assert unfinished_game(tmp_path / "nothing-here") is None


def test_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_records(tmp_path / "missing.jsonl")
    path = tmp_path / "odd.jsonl"
    path.write_text('{"type": "move", "move": {}}\n')
    with pytest.raises(InputError, match="odd.jsonl"):
        export_record(path)


def test_games_go_to_the_state_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("BOARDCAM_STATE_DIR", str(tmp_path))
    assert games_dir() == tmp_path / "games"
    assert games_dir(str(tmp_path / "elsewhere")) == tmp_path / "elsewhere"


def test_a_correction_record_replaces_the_moves_it_undoes(tmp_path, game):
    boards = positions_of(game)
    log = GameLog(tmp_path)
    play_into_log(log, boards, 4)
    wrong = Move(game.moves[3].player, game.moves[3].lot, Piece("dome", "black"))
    log.append([{"type": "correction", "ply": 4, "undo": 1, "old": [move_to_json(wrong)],
                 "moves": [move_to_json(m) for m in game.moves[3:5]], "corrected": [4]}])
    assert game_from_records(read_records(log.path)).moves == game.moves[:5]
    result = replay_log(log.path)
    assert result["corrections"] == 1 and [m["ply"] for m in result["moves"]] == [1, 2, 3, 4, 5]
    assert [m.get("corrected", False) for m in result["moves"]] == [False] * 3 + [True] * 2


def test_a_damaged_correction_record_is_named(tmp_path, game):
    log = GameLog(tmp_path)
    play_into_log(log, positions_of(game), 2)
    log.append([{"type": "correction", "ply": 1, "undo": 5, "moves": []}])
    with pytest.raises(InputError, match=r"record 4\.undo"):
        export_record(log.path)


def test_a_tiles_record_replays_the_game_on_the_settled_layout(tmp_path, game):
    boards = positions_of(game)
    log = GameLog(tmp_path)
    play_into_log(log, boards, 3)
    tiles = dict(boards[0]["tiles"])
    key = next(iter(tiles))
    others = [lot for lot in (key, f"{chr(ord(key[0]) + 1)}{key[1:]}") if lot != tiles[key]["icon"]]
    tiles[key] = {"color": tiles[key]["color"], "icon": others[0]}
    log.append([{"type": "tiles", "ply": 3, "tiles": tiles, "icon": {key: others[0]}}])
    replayed = game_from_records(read_records(log.path))
    assert replayed.moves == game.moves[:3]
    assert replay_log(log.path)["score"] == replayed.score().to_json()
    assert Position(replayed.position.tiles).to_json()["tiles"][key]["icon"] == others[0]
    log.append([{"type": "tiles", "ply": 3, "tiles": {"A1": {"color": "pink"}}}])
    with pytest.raises(InputError, match=r"record 6\.tiles: not a tile layout"):
        export_record(log.path)
