import pytest

from boardcam.engine.aliencity import LOT_NAMES, NEIGHBOURS, TILE_KEYS, TILE_LOTS, TILE_OF, parse_lot
from boardcam.engine.errors import FormatError


def test_lot_ids_run_row_major_from_a1():
    assert parse_lot("A1") == 0
    assert parse_lot("H1") == 7
    assert parse_lot("A10") == 72
    assert parse_lot("h10") == 79
    assert LOT_NAMES[parse_lot("E6")] == "E6"


@pytest.mark.parametrize("bad", ["I1", "A11", "A0", "", "11", "AA"])
def test_unknown_lots_are_refused_by_name(bad):
    with pytest.raises(FormatError, match="unknown lot"):
        parse_lot(bad)


def test_neighbours_are_orthogonal_and_symmetric():
    assert sorted(LOT_NAMES[n] for n in NEIGHBOURS[parse_lot("A1")]) == ["A2", "B1"]
    assert sorted(LOT_NAMES[n] for n in NEIGHBOURS[parse_lot("E6")]) == ["D6", "E5", "E7", "F6"]
    assert len(NEIGHBOURS[parse_lot("H5")]) == 3
    for lot, nbs in enumerate(NEIGHBOURS):
        for nb in nbs:
            assert lot in NEIGHBOURS[nb]


def test_tiles_are_keyed_by_lower_left_lot():
    assert [LOT_NAMES[k] for k in TILE_KEYS[:5]] == ["A1", "C1", "E1", "G1", "A3"]
    assert len(TILE_KEYS) == 20
    assert [LOT_NAMES[x] for x in TILE_LOTS[parse_lot("C5")]] == ["C5", "D5", "C6", "D6"]
    assert LOT_NAMES[TILE_OF[parse_lot("D6")]] == "C5"
    assert sorted(x for lots in TILE_LOTS.values() for x in lots) == list(range(80))
