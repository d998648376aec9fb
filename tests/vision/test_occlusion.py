import numpy as np

from boardcam.vision.occlusion import board_layout, find_occlusion
from boardcam.vision.tiles import lot_grid, lot_id

LOT = 24
MARGIN = 24


def frame(arm: tuple[slice, slice] | None = None) -> np.ndarray:
    """Warped Lab with margin: table all round, a plain board, optionally an arm (rows, cols) over both."""
    rng = np.random.default_rng(0)
    h, w = 10 * LOT + 2 * MARGIN, 8 * LOT + 2 * MARGIN
    lab = np.empty((h, w, 3), np.float32)
    lab[:] = (45.0, 10.0, 25.0)  # wood
    lab += rng.normal(0, 1.5, lab.shape).astype(np.float32)
    lab[MARGIN:-MARGIN, MARGIN:-MARGIN] = (50.0, 40.0, 30.0)
    if arm is not None:
        lab[arm] = (70.0, 15.0, 20.0)  # skin
    return lab


def diff_of(lab: np.ndarray, expected: tuple[float, float, float] = (50.0, 40.0, 30.0)) -> np.ndarray:
    board = lab[MARGIN:-MARGIN, MARGIN:-MARGIN]
    return np.linalg.norm(lot_grid(board, LOT) - np.array(expected, np.float32), axis=-1)


def test_board_layout_undoes_lot_grid():
    board = np.random.default_rng(1).random((10 * LOT, 8 * LOT)).astype(np.float32)
    assert np.array_equal(board_layout(lot_grid(board[..., None], LOT)[..., 0]), board)


def test_arm_from_the_table_edge_is_occluded():
    lab = frame((slice(0, MARGIN + 3 * LOT), slice(MARGIN + 5 * LOT, MARGIN + 7 * LOT)))  # from the top edge
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert result.occluded
    assert lot_id(5, 9) in result.lots and lot_id(6, 7) in result.lots
    assert lot_id(0, 0) not in result.lots


def test_pieces_near_the_edge_and_a_big_patch_inside_are_not_an_arm():
    lab = frame()
    lab[MARGIN - 10 : MARGIN + LOT - 4, MARGIN + 4 : MARGIN + LOT - 4] = (30.0, 60.0, 40.0)  # a tower leaning out
    lab[MARGIN + 3 * LOT : MARGIN + 7 * LOT, MARGIN + 2 * LOT : MARGIN + 6 * LOT] = (20.0, 0.0, 0.0)  # inside only
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert not result.occluded and result.lots == ()
