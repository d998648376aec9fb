"""Every placement rule with hand-built positions (see docs/rules.md)."""

from boardcam.engine.aliencity import ABSTRACT_PLAY, RULEBOOK, Analysis, Piece, parse_lot

from .boards import fill, layout, position, uniform

RED_TOWER = Piece("tower", "red")
BLUE_TOWER = Piece("tower", "blue")
RED_DOME = Piece("dome", "red")
BLUE_DOME = Piece("dome", "blue")
BLACK_DOME = Piece("dome", "black")


def rules_broken(pos, lot, piece, rules=RULEBOOK):
    return sorted({v.rule for v in Analysis(pos, rules).violations(parse_lot(lot), piece)})


def test_rule1_one_structure_per_lot():
    pos = position(uniform("K"), "C3=black-dome")
    assert rules_broken(pos, "C3", BLACK_DOME) == [1]
    assert rules_broken(pos, "C4", BLACK_DOME) == []


# --- rule 2 ---------------------------------------------------------------------

ONE_RED = layout(["KKKK", "KKKK", "KKKK", "KKKK", "RKKK"])  # red tile A1..B2, icon B2


def test_rule2_dome_goes_on_its_own_colour_while_one_can_take_it():
    pos = position(ONE_RED)
    assert rules_broken(pos, "E5", RED_DOME) == [2, 3]
    assert rules_broken(pos, "A1", RED_DOME) == []


def test_rule2_fallback_when_no_lot_of_the_colour_is_left():
    pos = position(ONE_RED, "A1=red-dome B1=red-dome A2=red-dome B2=red-tower")
    # the red tile is full: a red dome may go elsewhere, but rule 3 still binds a fresh black tile
    assert rules_broken(pos, "E5", RED_DOME) == [3]
    assert rules_broken(pos, "E5", RED_DOME, ABSTRACT_PLAY) == []
    # once the black tile holds two structures the fallback dome is fine under both rule sets
    pos2 = position(ONE_RED, "A1=red-dome B1=red-dome A2=red-dome B2=red-tower E5=black-dome F5=black-dome")
    assert rules_broken(pos2, "E6", RED_DOME) == []


def test_rule2_fallback_counts_lots_that_rule4_forbids_as_gone():
    # The only empty red lot A1 would face no street, so it cannot take the dome: fallback applies.
    pos = position(ONE_RED, "B1=red-dome A2=red-dome B2=red-tower C1=black-dome A3=black-dome")
    assert "A1" not in [v for v in ("A1",) if not rules_broken(pos, "A1", RED_DOME)]
    assert 4 in rules_broken(pos, "A1", RED_DOME)
    assert 2 not in rules_broken(pos, "E5", RED_DOME)


def test_rule2_other_colour_domes_still_need_their_tile_after_two():
    tiles = layout(["BBBB", "BBBB", "BBBB", "BBBB", "RBBB"])
    pos = position(tiles, "A1=red-dome B1=red-dome")
    # (A2 would cut A1 off the streets, so the icon lot B2 is free under rule 5)
    assert rules_broken(pos, "B2", RED_TOWER) == []
    assert rules_broken(pos, "B2", BLUE_TOWER) == []  # after two, towers of any colour
    assert rules_broken(pos, "B2", BLUE_DOME) == [2]  # but domes still follow rule 2


# --- rule 3 ---------------------------------------------------------------------

def test_rule3_first_two_structures_match_the_tile():
    tiles = layout(["BBBB", "BBBB", "BBBB", "BBBB", "RBBB"])
    assert rules_broken(position(tiles), "A1", BLUE_TOWER) == [3]
    assert rules_broken(position(tiles, "A1=red-tower"), "B1", BLUE_TOWER) == [3]
    assert rules_broken(position(tiles, "A1=red-tower B1=red-dome"), "B2", BLUE_TOWER) == []


def test_rule3_black_tiles_take_any_tower_at_any_time():
    pos = position(uniform("K"))
    for piece in (RED_TOWER, BLUE_TOWER, Piece("tower", "green")):
        assert rules_broken(pos, "C3", piece) == []
    # no red tile at all: rule 2 falls back, but rule 3 still wants black first on a fresh tile
    assert rules_broken(pos, "C3", RED_DOME) == [3]


# --- rule 4 ---------------------------------------------------------------------

def test_rule4_no_split_of_the_streets():
    wall = fill(uniform("K"), "D1 D2 D3 D4 D6 D7 D8 D9 D10")
    analysis = Analysis(wall, RULEBOOK)
    messages = [v.message for v in analysis.violations(parse_lot("D5"), BLACK_DOME)]
    assert any("splits the streets into 2 networks" in m for m in messages)
    assert 4 in rules_broken(wall, "C5", BLACK_DOME)  # the gap's approach is a bridge too
    assert rules_broken(wall, "B5", BLACK_DOME) == []


def test_rule4_no_structure_cut_off():
    pos = fill(uniform("K"), "A1 B1")
    # A1 faces only A2 now: building A2 would cut it off
    messages = [v.message for v in Analysis(pos, RULEBOOK).violations(parse_lot("A2"), BLACK_DOME)]
    assert any("cuts the black dome on A1 off" in m for m in messages)


def test_rule4_new_structure_must_face_a_street():
    pos = fill(uniform("K"), "A2 B1 C2 B3 C1 A3")
    # B2 is a street that only touches structures; A1 too (faces A2, B1 only)
    assert 4 in rules_broken(pos, "B2", BLACK_DOME)


def test_rule4_on_a_broken_position_only_what_gets_worse_counts():
    split = fill(uniform("K"), "D1 D2 D3 D4 D5 D6 D7 D8 D9 D10")  # already two networks
    assert rules_broken(split, "A5", BLACK_DOME) == []
    wall_in_left = fill(uniform("K"), "D1 D2 D3 D4 D5 D6 D7 D8 D9 D10 B1 B2 B3 B4 B6 B7 B8 B9 B10")
    assert 4 in rules_broken(wall_in_left, "B5", BLACK_DOME)  # a new split of the left part


def test_rule4_the_last_street_cannot_be_built():
    every = " ".join(f"{c}{r}" for c in "ABCDEFGH" for r in range(1, 11) if f"{c}{r}" != "H10")
    pos = fill(uniform("K"), every)
    assert 4 in rules_broken(pos, "H10", BLACK_DOME)


# --- rule 5 ---------------------------------------------------------------------

def test_rule5_icon_lot_waits_for_the_rest_of_its_tile():
    pos = position(uniform("K"))  # icons on each tile's upper-right lot
    assert rules_broken(pos, "B2", BLACK_DOME) == [5]
    assert rules_broken(fill(uniform("K"), "A1 B1 A2"), "B2", BLACK_DOME) == []


def test_rule5_icon_free_when_the_other_open_lots_break_rule4():
    # Rulebook example: D5 and E4 are legal because D6 and F4 would break rule 4.
    pos = fill(uniform("K"), "A1 B1")  # A2 would cut off A1
    assert rules_broken(pos, "B2", BLACK_DOME) == []


def test_rule5_icon_free_when_no_remaining_piece_fits_the_other_lots():
    tiles = layout(["BBBB", "BBBB", "BBBB", "BBBB", "RBBB"])  # red tile A1, icon B2
    # all eleven red pieces are on the board elsewhere: nothing left can open the red tile
    reds = "C1 D1 E1 F1 G1 H1 C3 D3 E3 F3 G3".split()
    spec = " ".join(f"{lot}=red-{'dome' if i < 6 else 'tower'}" for i, lot in enumerate(reds))
    pos = position(tiles, spec)
    assert 5 not in rules_broken(pos, "B2", BLUE_TOWER)
    assert rules_broken(pos, "A1", BLUE_TOWER) == [3]


def test_rule5_message_names_the_lots_to_build_first():
    pos = fill(uniform("K"), "A1")
    (violation,) = Analysis(pos, RULEBOOK).violations(parse_lot("B2"), BLACK_DOME)
    assert violation.rule == 5
    assert "B1" in violation.message and "A2" in violation.message


def test_legal_map_lists_every_piece():
    analysis = Analysis(position(uniform("K")), RULEBOOK)
    legal = analysis.legal_map()
    assert len(legal) == 7
    assert parse_lot("B2") not in legal[BLACK_DOME]
    assert parse_lot("A1") in legal[BLACK_DOME]
    # no red tile: red domes fall back, but rule 3 wants two black structures on a tile first
    assert legal[RED_DOME] == []
    two_down = fill(uniform("K"), "A1 B1")
    assert parse_lot("C1") not in Analysis(two_down, RULEBOOK).legal_map()[RED_DOME]
    assert Analysis(fill(uniform("K"), "A1 A2"), RULEBOOK).legal_map()[RED_DOME] == [parse_lot("B2")]  # B1 would cut A1 off
