import json

import pytest

from boardcam.engine.aliencity import GameRecord, Position
from boardcam.firmware.cli import main
from boardcam.firmware.commands.app import DEMO_RECORD, demo_script
from boardcam.firmware.gamelog import GameLog
from boardcam.firmware.lights import ButtonEvent
from boardcam.firmware.referee import Observation, Referee

from helpers import played_game, positions_of


def test_export_writes_the_engine_game_record(tmp_path, capsys):
    game = played_game(5)
    boards = positions_of(game)
    log = GameLog(tmp_path)
    referee = Referee()
    log.append(referee.observe(Observation(Position.from_json(boards[0]))).records)
    log.append(referee.press(ButtonEvent.SCORE).records)
    for doc in boards[1:8]:
        log.append(referee.observe(Observation(Position.from_json(doc))).records)
    out = tmp_path / "game.json"
    assert main(["export", str(log.path), "-o", str(out)]) == 0
    assert GameRecord.from_json(json.loads(out.read_text())).moves == tuple(game.moves[:7])
    assert main(["export", str(log.path)]) == 0
    assert json.loads(capsys.readouterr().out)["game"] == "alien-city"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "/no/such.jsonl"], "game log not found: /no/such.jsonl"),
        (["run", "--source", "opencv:x"], "needs a device number"),
        (["run", "--source", "replay:/no/such/folder"], "no such file or folder"),
        (["demo", "--record", "/no/such.json"], "game record not found"),
    ],
)
def test_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_config_is_named(tmp_path, capsys):
    path = tmp_path / "config.toml"
    path.write_text("[display]\nkind = 'hdmi'\n")
    assert main(["run", "--config", str(path)]) == 2
    assert "display.kind" in capsys.readouterr().err


def test_the_demo_films_the_bundled_game_with_one_illegal_build():
    record = json.loads(DEMO_RECORD.read_text())
    positions, words = demo_script(record)
    moves = len(record["moves"])
    assert len(positions) == moves + 2  # empty board, every move, and the mistake
    assert "rule" in words
    illegal = [i for i in range(1, len(positions))
               if len(positions[i]["structures"]) == len(positions[i - 1]["structures"])]
    assert len(illegal) == 1  # the correction moves the piece: same count as the mistake


def test_the_demo_read_by_the_vision_warns_once_and_scores_the_record(tmp_path, capsys):
    """What the README's quick start promises: the red light for the one illegal build, and the
    final score of the game record (the real vision, about 25 seconds)."""
    assert main(["demo", "--quiet", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 illegal-move warning(s)" in out
    assert "final score matches the game record" in out


def test_run_survives_frames_without_a_board(tmp_path, monkeypatch, capsys):
    import cv2
    import numpy as np

    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(12):
        cv2.imwrite(str(frames / f"{i:03d}.png"), np.full((120, 160, 3), 90, np.uint8))
    monkeypatch.setenv("BOARDCAM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("BOARDCAM_CONFIG", raising=False)
    assert main(["run", "--source", f"replay:{frames}", "--display", "terminal"]) == 0
    out = capsys.readouterr().out
    assert "board not found" in out and "Setup" in out
