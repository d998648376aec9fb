"""What no legal game can leave on the board (engine/aliencity/reachable.py)."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardcam.engine.aliencity import (
    ABSTRACT_PLAY,
    LOT_NAMES,
    RULEBOOK,
    Game,
    Position,
    impossibilities,
    parse_lot,
    possible_icon_lots,
    random_game,
)

from .boards import layout, position, uniform


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from([RULEBOOK, ABSTRACT_PLAY]))
def test_no_position_of_a_legal_game_is_called_impossible(seed, rules):
    game = random_game(random.Random(seed), rules=rules)
    replay = Game(game.position.tiles, rules)
    for move in game.moves:
        replay.push(move)
        assert impossibilities(replay.position, rules) == []
        for key, tile in replay.position.tiles.items():
            assert tile.icon in possible_icon_lots(replay.position, key, rules)


def _rules_broken(pos: Position) -> list[tuple[str, list[str]]]:
    return [(found.rule, found.to_json()["lots"]) for found in impossibilities(pos)]


def test_a_legal_looking_board_has_nothing_to_report():
    tiles = uniform("R")
    assert _rules_broken(position(tiles, "A1=red-dome B1=red-tower/white C4=red-dome")) == []


def test_more_pieces_or_caps_than_the_game_has():
    tiles = uniform("B")
    spec = " ".join(f"{lot}=blue-tower" for lot in ("A1", "C1", "E1", "G1", "A5", "C5"))
    assert _rules_broken(position(tiles, spec)) == [("supply", ["A1", "C1", "E1", "G1", "A5", "C5"])]
    capped = " ".join(f"{lot}=blue-tower/white" for lot in ("A1", "C1", "E1", "G1"))
    assert _rules_broken(position(tiles, capped)) == [("supply", ["A1", "C1", "E1", "G1"])]


def test_split_streets_and_a_structure_facing_none():
    tiles = uniform("K")
    corner = position(tiles, "B1=black-dome A2=black-dome")  # A1 cut off from the other streets
    assert _rules_broken(corner) == [("rule 4", ["B1", "A2"])]
    walled = position(tiles, "A1=black-dome B1=black-dome A2=black-dome")
    assert ("rule 4", ["A1"]) in _rules_broken(walled)


def test_a_coloured_tile_whose_first_two_pieces_cannot_have_been_its_colour():
    tiles = uniform("G")
    assert _rules_broken(position(tiles, "A1=red-tower")) == [("rule 3", ["A1"])]
    assert _rules_broken(position(tiles, "A1=red-tower B1=green-dome")) == [("rule 3", ["A1", "B1"])]
    assert _rules_broken(position(tiles, "C3=red-tower D3=green-dome C4=green-dome")) == []
    assert _rules_broken(position(layout(["KKKK"] * 5), "A1=red-tower")) == []  # black tiles take any tower


def test_an_icon_lot_built_while_its_tile_could_still_take_a_piece():
    tiles = layout(["RRRR"] * 5, icons={"C3": "D4"})
    early = position(tiles, "D4=red-dome")
    assert _rules_broken(early) == [("rule 5", ["D4", "C3", "D3", "C4"])]
    # the tile's other lots built first: the icon lot may be built last
    assert _rules_broken(position(tiles, "C3=red-dome D3=red-dome C4=red-tower D4=red-dome")) == []



def test_a_dome_on_another_guilds_tile_while_its_own_guild_has_room():
    tiles = layout(["RRRR", "RRRR", "RRRR", "RRRR", "BBBB"])  # the bottom row of tiles is blue
    assert _rules_broken(position(tiles, "C3=blue-dome")) == [("rule 2", ["C3"]), ("rule 3", ["C3"])]
    assert _rules_broken(position(tiles, "C3=red-dome D3=red-dome C4=blue-dome")) == [("rule 2", ["C4"])]
    # with no blue lot anywhere, rule 2's fallback is open from the start
    no_blue = uniform("R")
    assert _rules_broken(position(no_blue, "C3=red-dome D3=red-dome C4=blue-dome")) == []


def test_a_dome_off_its_colour_names_the_lots_of_its_colour_still_open():
    # one blue tile (A1 B1 A2 B2) with three blue domes: B2 could still take the blue dome on C4
    tiles = layout(["RRRR", "RRRR", "RRRR", "RRRR", "BRRR"])
    (breach,) = [found for found in impossibilities(position(tiles, "A1=blue-dome B1=blue-dome A2=blue-dome "
                                                                    "C4=blue-dome")) if found.rule == "rule 2"]
    assert [LOT_NAMES[lot] for lot in breach.lots] == ["C4"]
    assert [LOT_NAMES[lot] for lot in breach.open_lots] == ["B2"]
    assert "B2 could still take it" in breach.reason
    assert breach.to_json()["open_lots"] == ["B2"]


def _possible_icons(pos: Position, key: str) -> list[str]:
    return [LOT_NAMES[lot] for lot in possible_icon_lots(pos, parse_lot(key))]


def test_an_icon_under_a_piece_is_where_the_last_build_can_have_been():
    tiles = uniform("R")
    # rule 3: a red tile's first two pieces were red, so neither red one was built last
    assert _possible_icons(position(tiles, "C3=red-dome D3=blue-tower C4=red-tower D4=green-tower"), "C3") == [
        "D3", "D4"]
    assert _possible_icons(position(tiles, "C3=red-dome D3=red-dome C4=red-tower D4=red-tower"), "C3") == [
        "C3", "D3", "C4", "D4"]
    # rule 5: while D4 could still take a piece, none of the others was the icon
    assert _possible_icons(position(tiles, "C3=red-dome D3=red-dome C4=red-tower"), "C3") == ["D4"]
    # A1 is walled in by B1 and A2: it could not take a piece, so B2 may have been built last; B1 or A2
    # could not, as A1 faced a street before them
    assert _possible_icons(position(tiles, "B1=red-dome A2=red-dome B2=red-tower"), "A1") == ["A1", "B2"]


def test_a_black_tile_gives_no_colour_hint_for_its_hidden_icon():
    tiles = uniform("K")
    assert _possible_icons(position(tiles, "C3=red-tower D3=blue-tower C4=green-tower D4=red-tower"), "C3") == [
        "C3", "D3", "C4", "D4"]
