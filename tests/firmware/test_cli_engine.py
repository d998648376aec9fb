"""`boardcam score | legal | replay | show` for Alien City, and their errors."""

import json
import random
from pathlib import Path

import pytest

from boardcam.engine.aliencity import random_game
from boardcam.firmware.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_score_prints_the_documented_json(capsys):
    status, out, _ = run(capsys, "score", EXAMPLES / "alien-city-final.json")
    doc = json.loads(out)
    assert status == 0
    assert set(doc) == {"white", "black", "winner"}
    tower = doc["white"]["towers"][0]
    assert set(tower) == {"lot", "color", "customers", "customer_lots", "competition", "competitor_lots", "points"}


def test_score_warns_about_a_board_no_legal_game_leaves_and_scores_it(tmp_path, capsys):
    position = json.loads((EXAMPLES / "alien-city-final.json").read_text())
    streets = [f"{c}{r}" for r in range(1, 11) for c in "ABCDEFGH" if f"{c}{r}" not in position["structures"]]
    position["structures"][streets[0]] = {"kind": "dome", "color": "black"}
    position["structures"].update({lot: {"kind": "tower", "color": "red", "cap": None} for lot in streets[1:7]})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(position))
    status, out, err = run(capsys, "score", path)
    assert status == 0 and set(json.loads(out)) == {"white", "black", "winner"}
    assert "boardcam: warning: no legal game leaves this board: " in err and "red towers; the game has 5" in err


def test_a_final_board_of_a_legal_game_gets_no_such_warning(capsys):
    status, _, err = run(capsys, "score", EXAMPLES / "alien-city-final.json")
    assert status == 0 and "no legal game" not in err


def test_score_text_table(capsys):
    status, out, _ = run(capsys, "score", EXAMPLES / "alien-city-final.json", "--text")
    assert status == 0 and "points" in out and ("wins" in out or "Tie" in out)


def test_legal_lists_every_empty_lot(capsys):
    status, out, _ = run(capsys, "legal", EXAMPLES / "alien-city-midgame.json", "--piece", "red-tower")
    doc = json.loads(out)
    position = json.loads((EXAMPLES / "alien-city-midgame.json").read_text())
    empty = 80 - len(position["structures"])
    assert status == 0 and doc["piece"] == "red-tower"
    assert len(doc["legal"]) + len(doc["illegal"]) == empty
    for reasons in doc["illegal"].values():
        assert all(isinstance(r["rule"], int) and r["message"] for r in reasons)


def test_replay_judges_every_move_and_goes_on(tmp_path, capsys):
    game = random_game(random.Random(11))
    record = game.record().to_json()
    move = record["moves"][2]
    record["moves"][2] = {"player": move["player"], "build": dict(move["build"], lot=record["moves"][0]["build"]["lot"])}
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    status, out, _ = run(capsys, "replay", path)
    doc = json.loads(out)
    assert status == 0
    assert [m["ply"] for m in doc["moves"]] == list(range(1, len(record["moves"]) + 1))
    assert doc["moves"][2]["legal"] is False and doc["moves"][2]["violations"][0]["rule"] == 1
    assert "over" in doc and "winner" in doc["score"]


def test_replay_bundled_example_is_all_legal(capsys):
    status, out, _ = run(capsys, "replay", EXAMPLES / "alien-city-game.json", "--rules", "abstract-play")
    doc = json.loads(out)
    assert status == 0 and doc["over"] is True and all(m["legal"] for m in doc["moves"])


def test_show_writes_a_png(tmp_path, capsys):
    out = tmp_path / "board.png"
    status, _, _ = run(capsys, "show", EXAMPLES / "alien-city-final.json", "-o", out)
    assert status == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON (line 1"),
        ('{"tiles": {}}', "tiles: missing A1"),
        (None, "no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, expected):
    path = tmp_path / "pos.json"
    if content is not None:
        path.write_text(content)
    status, out, err = run(capsys, "score", path)
    assert status == 2 and out == ""
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_position_fields_are_named(tmp_path, capsys):
    doc = json.loads((EXAMPLES / "alien-city-final.json").read_text())
    doc["structures"]["A1"] = {"kind": "dome", "color": "red", "cap": "white"}
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(doc))
    status, _, err = run(capsys, "score", path)
    assert status == 2 and "structures.A1.cap: a dome cannot carry a cap" in err


def test_bad_options_exit_2(capsys):
    assert run(capsys, "legal", EXAMPLES / "alien-city-midgame.json", "--piece", "purple-tower")[0] == 2
    assert run(capsys, "score", EXAMPLES / "alien-city-final.json", "--rules", "house")[0] == 2
    status, _, err = run(capsys, "legal", EXAMPLES / "alien-city-midgame.json")
    assert status == 2 and "--piece" in err
