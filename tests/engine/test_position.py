import json

import pytest

from boardcam.engine.aliencity import Position, Structure, layout_warnings, parse_lot
from boardcam.engine.errors import FormatError
from boardcam.engine.jsonio import parse_json_text

from .boards import layout, position


def doc(**changes):
    tiles = layout(["RBGK", "KRBG", "GKRB", "BGKR", "RBGK"])
    base = position(tiles, "E6=blue-tower/black D5=black-dome").to_json()
    base.update(changes)
    return base


def test_round_trip_keeps_everything():
    original = doc()
    assert Position.from_json(original).to_json() == original
    again = Position.from_json(json.loads(json.dumps(original)))
    assert again == Position.from_json(original)


def test_format_matches_the_documented_shape():
    d = doc()
    assert d["game"] == "alien-city"
    assert d["tiles"]["A1"] == {"color": "red", "icon": "B2"}
    assert d["structures"] == {"D5": {"kind": "dome", "color": "black"},
                               "E6": {"kind": "tower", "color": "blue", "cap": "black"}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"structures": {"Z9": {"kind": "dome", "color": "red"}}}, r"structures\.Z9: unknown lot"),
        ({"structures": {"D5": {"kind": "dome", "color": "black", "cap": "white"}}}, r"structures\.D5\.cap: a dome"),
        ({"structures": {"D5": {"kind": "tower", "color": "black"}}}, r"structures\.D5\.color"),
        ({"structures": {"D5": {"kind": "castle", "color": "red"}}}, r"structures\.D5\.kind"),
        ({"structures": {"D5": {"kind": "tower", "color": "red", "cap": "grey"}}}, r"structures\.D5\.cap"),
        ({"structures": {"D5": {"color": "red"}}}, r"structures\.D5\.kind: missing"),
        ({"structures": {"D5": {"kind": "dome", "color": "red"}, "d5": {"kind": "dome", "color": "red"}}},
         "two structures on lot D5"),
        ({"game": "chess"}, "game"),
        ({"structures": []}, "structures: expected a JSON object"),
    ],
)
def test_bad_positions_name_the_field(change, message):
    with pytest.raises(FormatError, match=message):
        Position.from_json(doc(**change))


def test_missing_tiles_are_listed():
    d = doc()
    del d["tiles"]["C5"], d["tiles"]["G9"]
    with pytest.raises(FormatError, match="tiles: missing C5, G9"):
        Position.from_json(d)


def test_icon_must_lie_on_its_tile():
    d = doc()
    d["tiles"]["A1"]["icon"] = "C1"
    with pytest.raises(FormatError, match=r"tiles\.A1\.icon: C1 is not on this tile"):
        Position.from_json(d)


def test_tile_keys_must_be_lower_left_lots():
    d = doc()
    d["tiles"]["B1"] = d["tiles"].pop("A1")
    with pytest.raises(FormatError, match=r"tiles\.B1"):
        Position.from_json(d)


def test_duplicate_json_keys_are_not_silently_merged():
    text = '{"tiles": {}, "structures": {"E6": {"kind": "dome", "color": "red"}, "E6": {"kind": "dome", "color": "blue"}}}'
    with pytest.raises(FormatError, match="duplicate key 'E6'"):
        parse_json_text(text, "pos.json")


def test_malformed_json_names_line_and_column():
    with pytest.raises(FormatError, match=r"pos.json: not valid JSON \(line 1, column"):
        parse_json_text('{"tiles": ', "pos.json")


def test_unusual_colour_mix_warns_but_loads():
    tiles = layout(["RRRR", "RRRR", "RBGK", "BGKB", "GKBG"])
    assert layout_warnings(tiles)
    assert not layout_warnings(layout(["RBGK", "KRBG", "GKRB", "BGKR", "RBGK"]))
    assert Position.from_json(position(tiles).to_json()).tiles == tiles


def test_vision_output_keys_are_accepted():
    d = doc(confidence={"lots": {}}, board={"corners_px": {}}, occluded=False, timing_ms={})
    assert Position.from_json(d).structures[parse_lot("E6")] == Structure("tower", "blue", "black")
