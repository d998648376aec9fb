"""Review of `boardcam score | legal | replay` for Alien City: output shapes and every bad input.

Bad input must give one line naming the field, exit status 2 and no traceback
(issue 2).  Tests here guard the fixes of bugs found in review.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardcam.firmware.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def black_tiles() -> dict[str, dict[str, str]]:
    """Twenty black tiles, icons on each tile's upper-right lot."""
    tiles = {}
    for row in (1, 3, 5, 7, 9):
        for col in "ACEG":
            tiles[f"{col}{row}"] = {"color": "black", "icon": f"{chr(ord(col) + 1)}{row + 1}"}
    return tiles


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, doc, name: str = "doc.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def assert_one_line_error(status: int, out: str, err: str, *words: str) -> None:
    assert status == 2 and out == ""
    assert err.startswith("boardcam: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


def position_doc(structures=None):
    return {"game": "alien-city", "tiles": black_tiles(), "structures": structures or {}}


DUPLICATE_LOT = ('{"game": "alien-city", "tiles": ' + json.dumps(black_tiles())
                 + ', "structures": {"E6": {"kind": "dome", "color": "black"}, '
                 '"E6": {"kind": "dome", "color": "red"}}}')
CASE_TWIN_LOT = DUPLICATE_LOT.replace('"E6": {"kind": "dome", "color": "red"}', '"e6": {"kind": "dome", "color": "red"}')

BAD_POSITIONS = {
    "unknown lot": (position_doc({"I4": {"kind": "dome", "color": "red"}}), ["structures.I4", "unknown lot"]),
    "lot row 11": (position_doc({"A11": {"kind": "dome", "color": "red"}}), ["structures.A11"]),
    "cap on a dome": (position_doc({"E6": {"kind": "dome", "color": "black", "cap": "white"}}), ["structures.E6.cap"]),
    "cap of a colour": (position_doc({"E6": {"kind": "tower", "color": "red", "cap": "red"}}), ["structures.E6.cap"]),
    "black tower": (position_doc({"E6": {"kind": "tower", "color": "black"}}), ["structures.E6.color"]),
    "kind missing": (position_doc({"E6": {"color": "black"}}), ["structures.E6.kind"]),
    "kind a number": (position_doc({"E6": {"kind": 1, "color": "black"}}), ["structures.E6.kind"]),
    "structure a string": (position_doc({"E6": "black-dome"}), ["structures.E6"]),
    "structures a list": ({**position_doc(), "structures": []}, ["structures"]),
    "unknown field": (position_doc({"E6": {"kind": "dome", "color": "black", "size": 2}}), ["structures.E6.size"]),
    "two structures on a lot": (DUPLICATE_LOT, ["E6"]),
    "two structures, one lower case": (CASE_TWIN_LOT, ["E6", "two structures"]),
    "malformed JSON": ('{"game": "alien-city", "tiles": {', ["not valid JSON"]),
    "empty file": ("", ["not valid JSON"]),
    "JSON array": ("[1, 2]", ["position", "array"]),
    "JSON null": ("null", ["position"]),
    "missing tiles": ({"game": "alien-city"}, ["tiles"]),
    "one tile missing": ({"tiles": {k: v for k, v in black_tiles().items() if k != "G9"}}, ["tiles", "G9"]),
    "tiles a list": ({"tiles": []}, ["tiles"]),
    "tile colour wrong": ({"tiles": {**black_tiles(), "A1": {"color": "pink", "icon": "A1"}}}, ["tiles.A1.color"]),
    "tile icon off the tile": ({"tiles": {**black_tiles(), "A1": {"color": "red", "icon": "C1"}}}, ["tiles.A1.icon"]),
    "tile icon a number": ({"tiles": {**black_tiles(), "A1": {"color": "red", "icon": 1}}}, ["tiles.A1.icon"]),
    "tile not a tile key": ({"tiles": {**black_tiles(), "B1": {"color": "red", "icon": "B1"}}}, ["tiles.B1"]),
    "another game": ({**position_doc(), "game": "chess"}, ["game"]),
}


@pytest.mark.parametrize("command", ["score", "legal"])
@pytest.mark.parametrize("case", sorted(BAD_POSITIONS))
def test_bad_positions_are_one_line_naming_the_field(tmp_path, capsys, command, case):
    doc, words = BAD_POSITIONS[case]
    extra = ["--piece", "red-tower"] if command == "legal" else []
    assert_one_line_error(*run(capsys, command, write(tmp_path, doc), *extra), *words)


def test_unreadable_files_are_one_line(tmp_path, capsys):
    assert_one_line_error(*run(capsys, "score", tmp_path / "nowhere.json"), "nowhere.json")
    (tmp_path / "folder.json").mkdir()
    assert_one_line_error(*run(capsys, "score", tmp_path / "folder.json"), "folder.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00{")
    assert_one_line_error(*run(capsys, "replay", binary), "binary.json")


BASE_RECORD = {"game": "alien-city", "tiles": black_tiles(),
               "moves": [{"player": "black", "build": {"lot": "A1", "kind": "tower", "color": "red"}}]}


@pytest.mark.parametrize(("change", "words"), [
    ({"moves": {}}, ["moves"]),
    ({"moves": ["A1"]}, ["moves[0]"]),
    ({"moves": [{"player": "grey", "pass": True}]}, ["moves[0].player"]),
    ({"moves": [{"player": "black", "build": {"lot": "Z1", "kind": "dome", "color": "red"}}]}, ["moves[0].build.lot"]),
    ({"moves": [{"player": "black", "build": {"lot": 3, "kind": "dome", "color": "red"}}]}, ["moves[0].build.lot"]),
    ({"moves": [{"player": "black", "build": {"lot": "A1", "kind": "dome"}}]}, ["moves[0].build.color"]),
    ({"moves": [{"player": "black", "build": {"lot": "A1", "kind": "dome", "color": "red"}, "cap": "K2"}]}, ["moves[0].cap"]),
    ({"moves": [{"player": "black", "pass": True, "cap": "A1"}]}, ["moves[0]"]),
    ({"moves": [{"player": "black", "pass": "yes"}]}, ["moves[0].pass"]),
    ({"moves": [{"player": "black"}]}, ["moves[0].build"]),
    ({"structures": {}}, ["structures"]),
])
def test_bad_records_are_one_line_naming_the_field(tmp_path, capsys, change, words):
    doc = {**BASE_RECORD, **change}
    assert_one_line_error(*run(capsys, "replay", write(tmp_path, doc)), *words)


def test_score_output_has_exactly_the_issue_shape(tmp_path, capsys):
    doc = position_doc({"A1": {"kind": "tower", "color": "red", "cap": "white"},
                        "C1": {"kind": "dome", "color": "black"},
                        "A3": {"kind": "tower", "color": "green"},
                        "G1": {"kind": "tower", "color": "red"}})
    status, out, _ = run(capsys, "score", write(tmp_path, doc))
    result = json.loads(out)
    assert status == 0 and set(result) == {"white", "black", "winner"}
    assert set(result["white"]) == {"total", "towers", "bonuses"}
    (tower,) = result["white"]["towers"]
    # A1 meets C1 over B1 and A3 over A2 (1 each); C1 walls row 1, so G1 is 7 street lots away
    # (B1 or A2, B2, C2, D2, then E2 F2 G2 or D1 E1 F1).
    assert tower == {"lot": "A1", "color": "red", "customers": 2, "customer_lots": ["C1", "A3"],
                     "competition": 7, "competitor_lots": ["G1"], "points": 14}
    assert result["white"]["bonuses"] == [{"green": "A3", "tower": "A1", "color": "red", "distance": 1, "points": 8}]
    assert result["white"]["total"] == 22 and result["black"] == {"total": 0, "towers": [], "bonuses": []}
    assert result["winner"] == "white"


def test_legal_lists_every_empty_lot_once_with_rule_and_message(tmp_path, capsys):
    doc = position_doc({"A1": {"kind": "dome", "color": "black"}, "A2": {"kind": "dome", "color": "black"}})
    status, out, _ = run(capsys, "legal", write(tmp_path, doc), "--piece", "Blue-Tower")
    result = json.loads(out)
    assert status == 0 and set(result) == {"piece", "legal", "illegal"}
    assert result["piece"] == "blue-tower"
    listed = result["legal"] + list(result["illegal"])
    assert len(listed) == len(set(listed)) == 78 and "A1" not in listed and "A2" not in listed
    assert all(set(v) == {"rule", "message"} for vs in result["illegal"].values() for v in vs)
    # B1 would cut the dome on A1 off (rule 4), so the icon B2 need not wait for it; D2 waits (rule 5).
    assert [v["rule"] for v in result["illegal"]["B1"]] == [4]
    assert "B2" in result["legal"]
    assert [v["rule"] for v in result["illegal"]["D2"]] == [5]


def test_replay_shape_ply_numbers_and_going_on_after_illegal_moves(tmp_path, capsys):
    doc = {**BASE_RECORD, "moves": [
        {"player": "white", "build": {"lot": "A1", "kind": "tower", "color": "red"}},  # out of turn
        {"player": "black", "build": {"lot": "A1", "kind": "dome", "color": "black"}},  # occupied
        {"player": "white", "build": {"lot": "C1", "kind": "tower", "color": "blue"}, "cap": "C1"},
        {"player": "black", "pass": True},  # black could build
    ]}
    status, out, _ = run(capsys, "replay", write(tmp_path, doc))
    result = json.loads(out)
    assert status == 0 and set(result) == {"moves", "over", "score"}
    assert [m["ply"] for m in result["moves"]] == [1, 2, 3, 4]
    assert [m["player"] for m in result["moves"]] == ["white", "black", "white", "black"]
    assert [m["legal"] for m in result["moves"]] == [False, False, True, False]
    assert all(set(m) == {"ply", "player", "legal", "violations"} for m in result["moves"])
    assert [v["rule"] for v in result["moves"][0]["violations"]] == [7]
    occupied = result["moves"][1]["violations"][0]
    assert set(occupied) == {"rule", "lot", "message"} and (occupied["rule"], occupied["lot"]) == (1, "A1")
    assert [v["rule"] for v in result["moves"][3]["violations"]] == [7]
    assert result["over"] is False and result["score"]["white"]["towers"][0]["lot"] == "C1"


def test_replay_rules_option_changes_the_tie_bonus(tmp_path, capsys):
    path = write(tmp_path, TIE_RECORD)
    rulebook = json.loads(run(capsys, "replay", path)[1])["score"]["black"]
    online = json.loads(run(capsys, "replay", path, "--rules", "abstract-play")[1])["score"]["black"]
    assert rulebook["bonuses"] == [{"green": "C1", "tower": "A1", "color": "red", "distance": 1, "points": 8,
                                    "tied_with": ["E1"]}]
    assert online["bonuses"] == [] and rulebook["total"] - online["total"] == 8


# Black caps both red towers 1 street lot from white's green tower: a tie paid only under rulebook.
TIE_RECORD = {"game": "alien-city", "tiles": black_tiles(), "moves": [
    {"player": "black", "build": {"lot": "A1", "kind": "tower", "color": "red"}, "cap": "A1"},
    {"player": "white", "build": {"lot": "C1", "kind": "tower", "color": "green"}},
    {"player": "black", "build": {"lot": "E1", "kind": "tower", "color": "red"}, "cap": "E1"},
]}


def test_replay_honours_the_rules_written_in_the_record(tmp_path, capsys):
    online = json.loads(run(capsys, "replay", write(tmp_path, TIE_RECORD), "--rules", "abstract-play")[1])
    from_record = json.loads(run(capsys, "replay", write(tmp_path, {**TIE_RECORD, "rules": "abstract-play"}, "r.json"))[1])
    assert from_record["score"] == online["score"]


def test_deeply_nested_json_is_a_one_line_error(tmp_path, capsys):
    path = write(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert_one_line_error(*run(capsys, "score", path), "doc.json")


def test_bad_piece_option_names_the_option(capsys):
    status, out, err = run(capsys, "legal", EXAMPLES / "alien-city-midgame.json", "--piece", "black-tower")
    assert_one_line_error(status, out, err, "piece")


def test_score_warns_but_does_not_refuse_an_unusual_tile_mix(tmp_path, capsys):
    status, out, err = run(capsys, "score", write(tmp_path, position_doc()))
    assert status == 0 and json.loads(out)["winner"] == "tie"
    assert err.startswith("boardcam: warning: tiles: ") and "20 black" in err


def test_replay_warns_about_an_unusual_tile_mix(tmp_path, capsys):
    status, _, err = run(capsys, "replay", write(tmp_path, BASE_RECORD))
    assert status == 0 and "boardcam: warning: tiles: " in err


def test_show_refuses_a_size_that_is_not_positive(tmp_path, capsys):
    status, out, err = run(capsys, "show", EXAMPLES / "alien-city-midgame.json", "-o", tmp_path / "b.png",
                           "--size", "0")
    assert_one_line_error(status, out, err, "--size")
