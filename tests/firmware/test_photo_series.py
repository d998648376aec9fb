"""`boardcam run --source replay:FOLDER` on photos taken one per move, through the real vision.

Between two such photos no motion was filmed, and a new dome may differ from
the last photo by too few pixels to count as motion; each photo must be held
and taken as a change, or the app never reads a board.
"""

import json
import logging

import cv2
import pytest

from boardcam.engine.aliencity import GameRecord, Position
from boardcam.firmware.cli import main
from boardcam.firmware.gamelog import GameLog, game_logs
from boardcam.firmware.lights import ButtonEvent
from boardcam.firmware.referee import Observation, Referee

from helpers import played_game, positions_of

scenegen = pytest.importorskip("scenegen")


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """The empty board and the first three moves of a game, one JPEG each, camera and lamps fixed."""
    game = played_game(31)
    folder = tmp_path_factory.mktemp("photos")
    series = scenegen.scene_series(31, positions_of(game)[:4], 1, hands=False, size=(820, 616), yaw_deg=5.0)
    for index, scene in enumerate(series):
        cv2.imwrite(str(folder / f"IMG_{index:04d}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return folder, game


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("BOARDCAM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("BOARDCAM_CONFIG", raising=False)
    return tmp_path / "state"


def _logged_moves(state, tmp_path):
    logs = game_logs(state / "games")  # newest last
    if not logs:
        return ()
    out = tmp_path / "game.json"
    assert main(["export", str(logs[-1]), "-o", str(out)]) == 0
    return GameRecord.from_json(json.loads(out.read_text())).moves


def test_a_folder_of_photos_one_per_move_is_refereed(photos, state, tmp_path):
    folder, game = photos
    assert main(["run", "--source", f"replay:{folder}", "--display", "none"]) == 0
    assert _logged_moves(state, tmp_path) == tuple(game.moves[:3])


def test_a_recording_is_a_game_of_its_own(photos, state, tmp_path):
    """It ends where the recording ends, so a second replay (or the live table) does not continue it."""
    folder, game = photos
    for _ in range(2):
        assert main(["run", "--source", f"replay:{folder}", "--display", "none"]) == 0
    logs = sorted((state / "games").glob("*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        records = [json.loads(line) for line in log.read_text().splitlines()]
        assert [r["type"] for r in records].count("move") == 3
        assert records[-1]["type"] == "end" and records[-1]["reason"] == "recording ended"


def test_photos_shown_one_frame_each_are_never_read_and_the_run_says_why(photos, state, tmp_path, caplog):
    folder, _ = photos
    with caplog.at_level(logging.WARNING, logger="boardcam"):
        assert main(["run", "--source", f"replay:{folder}", "--display", "none", "--hold", "0"]) == 0
    assert _logged_moves(state, tmp_path) == ()
    assert "need --hold" in caplog.text


@pytest.mark.parametrize(
    ("source", "hold", "message"),
    [
        ("opencv:0", "1", "--hold: only a replay"),
        ("PHOTOS", "-1", "--hold: must be 0 to 60 seconds"),
        ("PHOTOS", "nan", "--hold: must be 0 to 60 seconds"),
    ],
)
def test_bad_hold_is_named(photos, source, hold, message, state, capsys):
    folder, _ = photos
    source = f"replay:{folder}" if source == "PHOTOS" else source
    assert main(["run", "--source", source, "--hold", hold]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_recording_does_not_continue_a_game_left_unfinished_at_the_table(photos, state, tmp_path):
    folder, game = photos
    other = positions_of(played_game(5))
    live = GameLog(state / "games")
    referee = Referee()
    live.append(referee.observe(Observation(Position.from_json(other[0]))).records)
    live.append(referee.press(ButtonEvent.SCORE).records)
    for board in other[1:4]:
        live.append(referee.observe(Observation(Position.from_json(board))).records)
    assert main(["run", "--source", f"replay:{folder}", "--display", "none"]) == 0
    assert _logged_moves(state, tmp_path) == tuple(game.moves[:3])
