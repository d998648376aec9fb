"""``boardcam score|legal|replay|show --game netzwerk`` through the real CLI, and the JSON-level API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardcam.engine.errors import FormatError, InputError
from boardcam.engine.netzwerk import api
from boardcam.firmware.cli import main

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "examples" / "netzwerk-game.json"
LAYOUT = ROOT / "examples" / "netzwerk-layout.json"
DATA = ROOT / "tests" / "data" / "netzwerk"
GRID = DATA / "grid-three-players.json"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_replay_plays_the_bundled_game_to_the_end(capsys):
    status, out, _ = run(capsys, "replay", str(GAME), "--game", "netzwerk")
    assert status == 0
    doc = json.loads(out)
    assert doc["over"] and doc["ended_by"]
    assert all(move["legal"] for move in doc["moves"])
    assert [m["ply"] for m in doc["moves"]] == list(range(1, len(doc["moves"]) + 1))
    assert doc["score"]["winner"] in {"white", "purple", "cyan", "tie"}


def test_replay_reports_mistakes_and_goes_on(capsys):
    status, out, _ = run(capsys, "replay", str(DATA / "record-mistakes.json"), "--game", "netzwerk", "--any-layout")
    assert status == 0
    moves = json.loads(out)["moves"]
    assert [m["legal"] for m in moves] == [True, False, True, False, False]
    assert moves[1]["violations"][0]["rule"] == "placement"


def test_score_of_a_hand_built_position(capsys):
    status, out, err = run(capsys, "score", str(GRID), "--game", "netzwerk", "--any-layout")
    assert status == 0 and "warning" in err
    doc = json.loads(out)
    assert doc["players"]["white"]["total"] == 6 + 1 + 3 + 4
    assert doc["players"]["purple"]["total"] == 2 + 1 + 3
    assert doc["players"]["cyan"]["not_roads"]
    status, out, _ = run(capsys, "score", str(GRID), "--game", "netzwerk", "--any-layout", "--text")
    assert status == 0 and "white: 14 points" in out


def test_legal_lists_miner_moves_and_judges_a_build(capsys):
    status, out, _ = run(capsys, "legal", str(GRID), "--game", "netzwerk", "--any-layout",
                         "--miner", "0,2", "--build", "0,2/1,1 1,1/2,0", "--build", "2,0/3,0")
    assert status == 0
    doc = json.loads(out)
    assert doc["player"] == "purple" and doc["phase"] == "move"
    assert {m["to"] for m in doc["miner"]["legal"]} >= {"0,2", "1,0"}
    jumps = [m for m in doc["miner"]["legal"] if m.get("over")]
    assert [(m["to"], m["over"]) for m in jumps] == [("3,1", ["1,1", "2,1"])]
    assert doc["proposed_miner"]["legal"]
    assert not doc["build"]["legal"]
    assert {v["rule"] for v in doc["build"]["violations"]} >= {"road-a"}


def test_legal_accepts_a_good_build_with_a_payment(capsys):
    status, out, _ = run(capsys, "legal", str(GRID), "--game", "netzwerk", "--any-layout",
                         "--build", "5,0/5,1", "--build", "5,1/4,2 4,2/3,2", "--pay", "blue=1,red=1")
    doc = json.loads(out)
    assert status == 0
    assert doc["build"]["cost"] == 3
    assert not doc["build"]["legal"]  # purple holds 2 blue + 1 red but offers only 2 of the 3
    status, out, _ = run(capsys, "legal", str(GRID), "--game", "netzwerk", "--any-layout",
                         "--build", "5,0/5,1 5,1/4,2 4,2/3,2", "--pay", "blue=2,red=1")
    doc = json.loads(out)
    assert doc["build"]["legal"], doc["build"]["violations"]
    assert doc["build"]["pay"] == {"red": 1, "blue": 2}


def test_show_draws_positions_layouts_and_records(tmp_path, capsys):
    from PIL import Image

    for source, extra in ((GRID, ["--any-layout"]), (LAYOUT, []), (GAME, ["--ply", "12"]), (GAME, [])):
        target = tmp_path / f"{source.stem}-{len(extra)}.png"
        status, _, err = run(capsys, "show", str(source), "--game", "netzwerk", "-o", str(target), *extra)
        assert status == 0, err
        with Image.open(target) as image:
            assert image.size[0] == 640 and image.size[1] > 300
            assert len(image.convert("RGB").resize((64, 64)).getcolors(4096) or []) > 8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "missing.json"], "no such file"),
        (["score", str(GRID)], "use --any-layout"),
        (["score", str(DATA / "layout-2p.json")], "players: missing"),
        (["replay", str(GRID), "--any-layout"], "not a Netzwerk game record"),
        (["legal", str(GRID), "--any-layout", "--build", "0,0-0,1"], "--build: '0,0-0,1'"),
        (["legal", str(GRID), "--any-layout", "--build", "0,0/4,0"], "--build[0]: fields 0,0 and 4,0"),
        (["legal", str(GRID), "--any-layout", "--miner", "9,9"], "--miner: field 9,9 is not on the board"),
        (["legal", str(GRID), "--any-layout", "--pay", "red=x"], "--pay: 'red=x'"),
        (["legal", str(GRID), "--any-layout", "--piece", "red-tower"], "--piece"),
        (["score", str(GRID), "--any-layout", "--rules", "abstract-play"], "--rules"),
        (["show", str(GRID), "--any-layout", "-o", "x.jpg"], "must end in .png"),
        (["show", str(GRID), "--any-layout", "-o", "x.png", "--ply", "3"], "--ply: only for a game record"),
        (["show", str(GAME), "-o", "x.png", "--ply", "999"], "--ply: 999 is outside"),
    ],
)
def test_cli_errors_exit_2_with_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, *argv, "--game", "netzwerk")
    assert status == 2
    last = err.strip().splitlines()[-1]
    assert message in last and last.startswith("boardcam: error: ")
    assert all(line.startswith("boardcam: warning: ") for line in err.strip().splitlines()[:-1])
    assert "Traceback" not in err and out == ""


def test_cli_error_for_malformed_json(capsys, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"game": "netzwerk", "pieces": [')
    status, _, err = run(capsys, "score", str(broken), "--game", "netzwerk")
    assert status == 2 and "not valid JSON" in err


# --- the JSON-level API -------------------------------------------------------


def test_api_options_are_checked():
    doc = json.loads(GRID.read_text())
    with pytest.raises(InputError, match="option 'colour'"):
        api.score_document(doc, {"colour": 1, "any_layout": True})
    with pytest.raises(InputError, match="option chain_rule"):
        api.score_document(doc, {"chain_rule": "yes", "any_layout": True})
    with pytest.raises(FormatError, match="use --any-layout"):
        api.score_document(doc, {})


def test_api_score_of_a_record_is_its_final_position():
    record = json.loads(GAME.read_text())
    replayed = api.replay_document(record, {})
    assert api.score_document(record, {}) == {**replayed["score"], "over": True}


def test_api_legal_judges_the_build_after_the_proposed_miner_move():
    doc = json.loads(GRID.read_text())
    # purple holds 2 blue + 1 red; stepping onto (0,1)... is its own field, so step to (1,0) (yellow).
    result = api.legal_document(doc, {"any_layout": True, "miner": "1,0",
                                      "build": [["0,0", "1,0"], ["1,0", "2,0"]]})
    assert result["proposed_miner"]["legal"]
    assert result["build"]["resources"]["yellow"] == 1


def test_api_refuses_the_full_board_for_two_players():
    layout = json.loads(LAYOUT.read_text())
    doc = {**layout, "players": ["white", "purple"]}
    with pytest.raises(FormatError, match="leave out the piece with city 6"):
        api.score_document(doc, {})
    assert api.score_document(doc, {"any_layout": True})["winner"] == "tie"
    three = {**layout, "players": ["white", "purple", "cyan"]}
    assert api.legal_document(three, {})["phase"] == "place"
