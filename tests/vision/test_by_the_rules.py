"""Reconsidering unsure lots of a reading that breaks the rules (vision/by_the_rules.py)."""

import numpy as np

from boardcam.engine.aliencity import parse_lot
from boardcam.vision import by_the_rules, lot_net
from boardcam.vision.tiles import TILE_KEYS, TILE_LOT_IDS, TileReading

EMPTY = lot_net.CLASSES.index((None, None, None))
RED_TOWER = lot_net.CLASSES.index(("tower", "red", None))
RED_DOME = lot_net.CLASSES.index(("dome", "red", None))


def _tiles(colour: str = "red") -> dict[str, TileReading]:
    """Every tile one colour, its icon on its upper-right lot."""
    return {key: TileReading(colour, int(TILE_LOT_IDS[t][3]), 1.0, 1.0) for t, key in enumerate(TILE_KEYS)}


def _joint(**answers: tuple[int, float, int]) -> np.ndarray:
    """Every lot surely empty except ``LOT=(class, probability, runner-up class)``."""
    joint = np.full((80, len(lot_net.CLASSES)), 0.001)
    joint[:, EMPTY] = 1.0
    for name, (cls, p, other) in answers.items():
        lot = parse_lot(name)
        joint[lot] = 0.001
        joint[lot, cls] = p
        joint[lot, other] = 1.0 - p
    return joint / joint.sum(1, keepdims=True)


def test_a_reading_the_rules_allow_is_left_alone():
    assert by_the_rules.mend(_joint(A1=(RED_DOME, 0.6, EMPTY)), _tiles()) == {}


def test_an_unsure_phantom_that_walls_a_lot_in_is_taken_away():
    # A1 is built; B1 and A2 close it in. The unsure one of the two goes.
    joint = _joint(A1=(RED_DOME, 0.99, EMPTY), B1=(RED_DOME, 0.98, EMPTY), A2=(RED_TOWER, 0.6, EMPTY))
    assert by_the_rules.mend(joint, _tiles()) == {parse_lot("A2"): EMPTY}


def test_a_sure_answer_is_kept_even_when_the_board_breaks_a_rule():
    joint = _joint(A1=(RED_DOME, 0.99, EMPTY), B1=(RED_DOME, 0.98, EMPTY), A2=(RED_TOWER, 0.95, EMPTY))
    assert by_the_rules.mend(joint, _tiles()) == {}


def test_the_cheapest_mending_change_is_taken():
    # A green tower on a red tile's first build breaks rule 3; it is likelier red than gone
    green_tower = lot_net.CLASSES.index(("tower", "green", None))
    joint = _joint(C3=(green_tower, 0.55, RED_TOWER))
    joint[parse_lot("C3"), RED_TOWER] = 0.3
    joint[parse_lot("C3"), EMPTY] = 0.15
    joint /= joint.sum(1, keepdims=True)
    assert by_the_rules.mend(joint, _tiles()) == {parse_lot("C3"): RED_TOWER}


def test_a_missed_piece_next_to_an_icon_built_early_is_found():
    # the icon lot D4 holds a dome and C4 reads empty; rule 5 says C4 was built first
    joint = _joint(C3=(RED_DOME, 0.99, EMPTY), D3=(RED_DOME, 0.99, EMPTY), D4=(RED_DOME, 0.99, EMPTY),
                   C4=(EMPTY, 0.6, RED_TOWER))
    assert by_the_rules.mend(joint, _tiles()) == {parse_lot("C4"): RED_TOWER}
    # two lots read empty that should not be: mended as a pair
    joint = _joint(C3=(RED_DOME, 0.99, EMPTY), D3=(EMPTY, 0.7, RED_DOME), D4=(RED_DOME, 0.99, EMPTY),
                   C4=(EMPTY, 0.6, RED_TOWER))
    assert by_the_rules.mend(joint, _tiles()) == {parse_lot("C4"): RED_TOWER, parse_lot("D3"): RED_DOME}


def test_a_rule_5_breach_on_a_tile_with_an_unsure_icon_moves_no_piece():
    # the same board, but the tile's icon was barely read: the icon is more likely elsewhere
    joint = _joint(C3=(RED_DOME, 0.99, EMPTY), D3=(RED_DOME, 0.99, EMPTY), D4=(RED_DOME, 0.99, EMPTY),
                   C4=(EMPTY, 0.6, RED_TOWER))
    tiles = _tiles()
    tiles["C3"] = TileReading("red", parse_lot("D4"), 1.0, 0.6)
    assert by_the_rules.mend(joint, tiles) == {}


def test_a_lot_below_the_bar_the_reader_passes_may_change():
    # the reader reports a network probability of 0.9-0.99 as unsure (0.899): such a lot is mended
    joint = _joint(A1=(RED_DOME, 0.99, EMPTY), B1=(RED_DOME, 0.98, EMPTY), A2=(RED_TOWER, 0.95, EMPTY))
    assert by_the_rules.mend(joint, _tiles(), unsure=0.99) == {parse_lot("A2"): EMPTY}
    assert by_the_rules.mend(joint, _tiles(), unsure=0.93) == {}


def _eight_red_towers(unsure_ones: dict[str, float]) -> np.ndarray:
    """Red towers on A2, C2, E2, G2, A4, C4, E4, G4 (the set has five): sure but for ``unsure_ones``."""
    lots = ("A2", "C2", "E2", "G2", "A4", "C4", "E4", "G4")
    return _joint(**{name: (RED_TOWER, unsure_ones.get(name, 0.999), EMPTY) for name in lots})


def test_three_phantoms_are_taken_away_step_by_step():
    # no one or two changes bring eight red towers down to five; three do, the least sure first
    joint = _eight_red_towers({"C2": 0.6, "E4": 0.7, "G4": 0.55, "A4": 0.8})
    assert by_the_rules.mend(joint, _tiles()) == {parse_lot("G4"): EMPTY, parse_lot("C2"): EMPTY,
                                                  parse_lot("E4"): EMPTY}


def test_a_board_step_by_step_changes_cannot_mend_is_left_alone():
    # only two of the eight towers are unsure: taking both away still leaves six, so nothing changes
    joint = _eight_red_towers({"C2": 0.6, "E4": 0.7})
    assert by_the_rules.mend(joint, _tiles()) == {}


def test_a_coin_missed_where_a_dome_off_its_colour_could_have_gone_is_found():
    # One blue tile (C3 D3 C4 D4) with three blue domes; a sure blue dome on the red F7 is legal only
    # once no blue lot was open, so D4, read empty unsurely, holds the dome the network half saw: far
    # from F7, where the breach is.
    blue_dome = lot_net.CLASSES.index(("dome", "blue", None))
    tiles = _tiles()
    tiles["C3"] = TileReading("blue", parse_lot("D4"), 1.0, 1.0)
    joint = _joint(C3=(blue_dome, 0.99, EMPTY), D3=(blue_dome, 0.99, EMPTY), C4=(blue_dome, 0.99, EMPTY),
                   E7=(RED_DOME, 0.99, EMPTY), E8=(RED_DOME, 0.99, EMPTY), F7=(blue_dome, 0.99, EMPTY),
                   D4=(EMPTY, 0.6, blue_dome))
    assert by_the_rules.mend(joint, tiles) == {parse_lot("D4"): blue_dome}
