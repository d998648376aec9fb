"""Balancing a frame's colours: for the board itself (colour.board_gains, with the exposure lift) and to
match the empty-board reference (colour.gains_matching and its helpers)."""

from __future__ import annotations

import numpy as np
import pytest

from boardcam.vision.colour import (
    BOARD_P,
    EXPOSURE_FLOOR,
    MAX_EXPOSURE_LIFT,
    board_gains,
    gains_matching,
    lab_lots_to_bgr,
    lot_means,
    magnitude,
    shades_of_grey_gains,
    to_lab,
)
from boardcam.vision.models import EmptyBoardReference

LOT = 16


def _printed_board(seed: int = 0) -> np.ndarray:
    """80 lots (BGR uint8) of flat inks with a lighter print on each: four guilds and neutral cards."""
    rng = np.random.default_rng(seed)
    inks = np.array([[60, 60, 190], [190, 90, 50], [70, 160, 60], [55, 55, 55], [200, 205, 210]], np.float32)
    lots = np.empty((80, LOT, LOT, 3), np.float32)
    for lot in range(80):
        ink = inks[(lot // 4) % len(inks)]
        lots[lot] = ink
        y, x = rng.integers(2, LOT - 6, 2)
        lots[lot, y:y + 4, x:x + 4] = np.clip(ink * 0.5 + 110, 0, 255)
    return lots.astype(np.uint8)


def _reference(board: np.ndarray) -> EmptyBoardReference:
    lab = to_lab(board.reshape(-1, LOT, 3), np.ones(3)).reshape(board.shape)
    return EmptyBoardReference(lot_px=LOT, lab=lab, tiles={f"T{i}": {"color": "red", "icon": "A1"} for i in range(20)})


def test_lot_means_are_the_mean_of_each_lot_exactly() -> None:
    board = np.random.default_rng(3).integers(0, 256, (80, LOT, LOT, 3)).astype(np.uint8)
    assert np.array_equal(lot_means(board), board.reshape(80, -1, 3).astype(np.float32).mean(axis=1))


def test_the_reference_means_are_worked_out_once() -> None:
    reference = _reference(_printed_board())
    means = reference.bgr_means_at(LOT)
    assert reference.bgr_means_at(LOT) is means
    assert np.array_equal(means, lot_means(lab_lots_to_bgr(reference.lots_at(LOT))))
    assert reference.bgr_means_at(2 * LOT) == pytest.approx(means, abs=1e-3)  # the same lots, each pixel repeated


def test_a_dimmer_warmer_lamp_is_matched_whatever_the_pieces_on_a_minority_of_lots() -> None:
    board = _printed_board()
    reference = _reference(board)
    lamp = np.array([0.7, 0.85, 1.1])
    relit = np.clip(board * lamp, 0, 255).astype(np.uint8)
    relit[::4, 4:12, 4:12] = (20, 20, 230)  # a red piece on a quarter of the lots, known to no one
    gains = gains_matching(relit, reference.bgr_means_at(LOT))
    assert gains == pytest.approx(1.0 / lamp, rel=0.03)
    believed_empty = np.ones(80, bool)
    believed_empty[::4] = False
    assert gains_matching(relit, reference.bgr_means_at(LOT), believed_empty) == pytest.approx(1.0 / lamp, rel=0.02)


def _brightest_percent_grey(board: np.ndarray, gains: np.ndarray) -> float:
    grey = (board.reshape(-1, 3).astype(np.float32) * gains) @ np.array([0.114, 0.587, 0.299], np.float32)
    return float(np.percentile(grey, 99))


def test_a_board_exposed_within_the_fitted_range_is_only_balanced() -> None:
    board = _printed_board().reshape(-1, LOT, 3)
    assert _brightest_percent_grey(board, np.ones(3)) > EXPOSURE_FLOOR
    assert np.array_equal(board_gains(board), shades_of_grey_gains(board, p=BOARD_P))


def test_an_underexposed_board_is_brightened_to_the_floor_keeping_its_balance() -> None:
    dark = (_printed_board().reshape(-1, LOT, 3) * 0.45).astype(np.uint8)
    balance = shades_of_grey_gains(dark, p=BOARD_P)
    gains = board_gains(dark)
    lift = gains / balance
    assert lift == pytest.approx(np.full(3, lift[0]))  # one gain for all three channels: the colours stay
    assert lift[0] > 1.1
    assert _brightest_percent_grey(dark, gains) == pytest.approx(EXPOSURE_FLOOR, abs=1.0)


def test_a_frame_too_dark_to_tell_is_brightened_only_so_far() -> None:
    nearly_black = (_printed_board().reshape(-1, LOT, 3) * 0.1).astype(np.uint8)
    lift = board_gains(nearly_black) / shades_of_grey_gains(nearly_black, p=BOARD_P)
    assert lift == pytest.approx(np.full(3, MAX_EXPOSURE_LIFT))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_magnitude_is_hypot_to_the_last_places_whatever_the_layout(dtype: type) -> None:
    rng = np.random.default_rng(3)
    lab = (rng.normal(0.0, 40.0, (80, 16, 16, 3))).astype(dtype)
    a, b = lab[..., 1], lab[..., 2]  # strided views, as the reader passes them
    got = magnitude(a, b)
    assert got.shape == a.shape and got.dtype == dtype
    np.testing.assert_allclose(got, np.hypot(a, b), rtol=4 * np.finfo(dtype).eps, atol=0)
    assert magnitude(np.float32([3.0]), np.float32([4.0]))[0] == 5.0
