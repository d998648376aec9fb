import cv2
import numpy as np

from boardcam.vision.occlusion import (
    SURROUNDINGS_SHARE,
    board_layout,
    find_occlusion,
    surroundings,
    surroundings_changed,
)
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


def test_fingertips_just_over_the_edge_are_occluded():
    """Fingers that cross the table band but reach only half a lot into the array still hide lots."""
    fingers = (slice(0, MARGIN + int(0.4 * LOT)), slice(MARGIN + 3 * LOT, MARGIN + int(4.5 * LOT)))
    lab = frame(fingers)
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert 0.5 <= result.score < 1.0
    assert result.occluded and lot_id(3, 9) in result.lots
    assert lot_id(3, 8) not in result.lots


def test_a_fingertip_barely_on_the_board_hides_the_lot_it_touches():
    fingers = (slice(0, MARGIN + int(0.2 * LOT)), slice(MARGIN + int(3.2 * LOT), MARGIN + int(4.6 * LOT)))
    lab = frame(fingers)
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert result.score < 0.5
    assert result.occluded and result.lots == (lot_id(3, 9), lot_id(4, 9))
    tip = (slice(0, MARGIN + 1), slice(MARGIN + 3 * LOT - 6, MARGIN + int(4.3 * LOT)))  # a pixel onto the board
    lab = frame(tip)
    assert find_occlusion(lab, MARGIN, LOT, diff_of(lab)).lots == (lot_id(3, 9),)  # the lot it covers most


def test_a_towers_long_shadow_across_the_band_is_no_hand_but_a_sleeve_of_its_shape_is():
    """A low lamp throws an edge tower's shadow over the band to the rim: the table's own colour, dimmer."""
    shadow = (24.5, 6.1, 15.3)  # the wood at 0.55 of its light
    for colour, hand in ((shadow, False), ((30.0, 20.0, -30.0), True)):  # a dark blue sleeve
        lab = frame()
        lab[: MARGIN + 2, MARGIN + 2 * LOT : MARGIN + int(3.4 * LOT)] = colour
        lab[MARGIN : MARGIN + int(0.8 * LOT), MARGIN + 2 * LOT + 3 : MARGIN + int(2.8 * LOT)] = (30.0, 60.0, 40.0)
        assert find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded is hand


def test_something_lying_against_the_board_hides_nothing():
    """A card pushed up to the board's edge crosses the band, but no lot is under it."""
    lab = frame((slice(0, MARGIN), slice(MARGIN + 2 * LOT, MARGIN + 5 * LOT)))
    assert not find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded


def test_fingers_crossing_the_band_apart_enter_together():
    """Each finger is narrower than a piece; the hand they belong to is not."""
    lab = frame()
    reach = slice(0, MARGIN + int(0.6 * LOT))
    for finger in range(3):  # fingers 0.45 lots wide, 0.2 lots apart
        left = MARGIN + 2 * LOT + int(finger * 0.65 * LOT)
        lab[reach, left : left + int(0.45 * LOT)] = (70.0, 15.0, 20.0)
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert result.occluded and lot_id(2, 9) in result.lots


def _spread_fingers(touching: int | None, reach_px: int) -> np.ndarray:
    """Four fingers 0.35 lots wide and 0.45 lots apart cross the band and stop at the board's edge;
    finger ``touching`` reaches ``reach_px`` onto it."""
    lab = frame()
    for finger in range(4):
        left = MARGIN + 2 * LOT + int(finger * 0.8 * LOT)
        tip = MARGIN + (reach_px if finger == touching else 0)
        lab[:tip, left : left + int(0.35 * LOT)] = (70.0, 15.0, 20.0)
    return lab


def test_spread_fingers_whose_tip_touches_the_board_hide_the_lot_it_touches():
    """A hand resting its fingertips on the edge shades the lots there; a pixel of contact is enough."""
    lab = _spread_fingers(touching=1, reach_px=1)
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert result.occluded and result.lots == (lot_id(2, 9),)


def test_spread_fingers_stopping_short_of_the_board_hide_nothing():
    lab = _spread_fingers(touching=None, reach_px=0)
    assert not find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded


def _dotted_cloth() -> np.ndarray:
    """A cloth printed with dots a quarter of a lot wide and apart, all round the board and up to
    its edge, in an ink like the board's own colour (red dots beside red tiles)."""
    lab = frame()
    band = np.ones(lab.shape[:2], bool)
    band[MARGIN:-MARGIN, MARGIN:-MARGIN] = False
    yy, xx = np.mgrid[0 : lab.shape[0], 0 : lab.shape[1]]
    dots = (xx // (LOT // 4) % 2 == 0) & (yy // (LOT // 4) % 2 == 0)
    lab[band & dots] = (55.0, 45.0, 32.0)
    return lab


def test_a_cloths_print_all_round_the_board_is_table_not_a_hand():
    lab = _dotted_cloth()
    assert not find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded
    arm = (slice(0, MARGIN + 3 * LOT), slice(MARGIN + 5 * LOT, MARGIN + 7 * LOT))
    lab[arm] = (70.0, 15.0, 20.0)
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert result.occluded and lot_id(5, 9) in result.lots


def test_things_lying_on_the_table_apart_do_not_enter_together():
    lab = frame()
    reach = slice(0, MARGIN + int(0.6 * LOT))
    for crumb in range(3):  # each narrower than a piece, a lot apart
        left = MARGIN + 1 * LOT + 2 * crumb * LOT
        lab[reach, left : left + int(0.45 * LOT)] = (70.0, 15.0, 20.0)
    assert not find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded


def test_a_shadow_beside_a_marker_is_not_a_hand():
    """Side by side they are wider than a piece, but unlike in colour they are two things, not fingers."""
    lab = frame()
    reach = slice(0, MARGIN + int(0.6 * LOT))
    left = MARGIN + 2 * LOT
    lab[reach, left : left + int(0.7 * LOT)] = (25.0, 5.0, 15.0)  # a piece's shadow on the wood
    lab[reach, left + int(0.85 * LOT) : left + int(1.55 * LOT)] = (5.0, 0.0, 0.0)  # a black marker
    assert not find_occlusion(lab, MARGIN, LOT, diff_of(lab)).occluded


def test_pieces_near_the_edge_and_a_big_patch_inside_are_not_an_arm():
    lab = frame()
    lab[MARGIN - 10 : MARGIN + LOT - 4, MARGIN + 4 : MARGIN + LOT - 4] = (30.0, 60.0, 40.0)  # a tower leaning out
    lab[MARGIN + 3 * LOT : MARGIN + 7 * LOT, MARGIN + 2 * LOT : MARGIN + 6 * LOT] = (20.0, 0.0, 0.0)  # inside only
    result = find_occlusion(lab, MARGIN, LOT, diff_of(lab))
    assert not result.occluded and result.lots == ()


def _table_with_board() -> tuple[np.ndarray, np.ndarray]:
    """A 1296 × 972 frame: wooden table, a tilted board in the middle; and the board's corners."""
    image = np.full((972, 1296, 3), (60, 100, 150), np.uint8)
    corners = np.array([[420, 700], [860, 760], [900, 250], [460, 200]], np.float32)
    cv2.fillConvexPoly(image, corners.astype(np.int32), (90, 160, 90))
    return image, corners


def test_a_hand_beside_the_board_changes_its_surroundings():
    image, corners = _table_with_board()
    hand = image.copy()
    cv2.ellipse(hand, (1000, 850), (110, 60), 20, 0, 360, (120, 150, 200), -1)  # a palm off the board's corner
    before, after = surroundings(image, corners), surroundings(hand, corners)
    assert surroundings_changed(before, after) >= SURROUNDINGS_SHARE
    assert surroundings_changed(after, before) >= SURROUNDINGS_SHARE  # or leaves
    assert surroundings_changed(before, surroundings(image.copy(), corners)) == 0.0


def test_pieces_on_the_board_its_edge_and_sensor_noise_leave_the_surroundings_unchanged():
    image, corners = _table_with_board()
    built = image.copy()
    cv2.circle(built, (660, 480), 40, (20, 20, 200), -1)  # a piece in the middle
    cv2.circle(built, (430, 695), 25, (200, 40, 20), -1)  # a tower at the corner, leaning out
    noisy = np.clip(image + np.random.default_rng(3).normal(0, 3, image.shape), 0, 255).astype(np.uint8)
    before = surroundings(image, corners)
    assert surroundings_changed(before, surroundings(built, corners)) == 0.0
    assert surroundings_changed(before, surroundings(noisy, corners)) < SURROUNDINGS_SHARE
