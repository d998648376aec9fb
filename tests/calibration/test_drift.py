"""Drift: a bumped board is noticed, pieces and noise are not mistaken for it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from boardcam.calibration.drift import (
    CORNER_NAMES,
    DriftCheck,
    check_drift,
    corner_displacement,
    drift_reference,
    poses_differ,
)

TILE_PX = 60
COLOURS = [(40, 40, 200), (200, 90, 30), (40, 160, 40), (35, 35, 35)]


def flat_board(seed: int) -> np.ndarray:
    """A 4x5 array of tiles (guild colour, an icon, a cream border) seen from above."""
    rng = np.random.default_rng(seed)
    board = np.zeros((5 * TILE_PX, 4 * TILE_PX, 3), np.uint8)
    for row in range(5):
        for col in range(4):
            y, x = row * TILE_PX, col * TILE_PX
            colour = COLOURS[int(rng.integers(4))]
            board[y : y + TILE_PX, x : x + TILE_PX] = (200, 215, 225)
            board[y + 4 : y + TILE_PX - 4, x + 4 : x + TILE_PX - 4] = colour
            icon_x = x + int(rng.choice([15, 45]))
            icon_y = y + int(rng.choice([15, 45]))
            cv2.circle(board, (icon_x, icon_y), 9, (230, 230, 230), -1)
    return board


def table(seed: int, size: tuple[int, int] = (960, 720)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    wood = rng.normal(120, 6, (size[1], size[0], 3)).astype(np.float32)
    wood += np.sin(np.linspace(0, 40, size[0]))[None, :, None] * 8
    return np.clip(wood, 0, 255).astype(np.uint8)


def corners_for(shift: tuple[float, float] = (0.0, 0.0), turn_deg: float = 0.0) -> np.ndarray:
    base = np.float32([[300, 560], [580, 580], [560, 220], [290, 210]])  # A1, H1, H10, A10
    centre = base.mean(axis=0)
    turn = np.deg2rad(turn_deg)
    rot = np.float32([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    return ((base - centre) @ rot.T + centre + np.float32(shift)).astype(np.float32)


def photo(corners: np.ndarray, *, seed: int = 0, board_seed: int = 1) -> np.ndarray:
    board = flat_board(board_seed)
    h, w = board.shape[:2]
    # board image: row 1 at the bottom, so A1 is its bottom-left corner
    src = np.float32([[0, h], [w, h], [w, 0], [0, 0]])
    homography = cv2.getPerspectiveTransform(src, corners)
    image = table(7)
    warped = cv2.warpPerspective(board, homography, (image.shape[1], image.shape[0]))
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), homography, (image.shape[1], image.shape[0]))
    image[mask > 127] = warped[mask > 127]
    noise = np.random.default_rng(seed).normal(0, 3, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def reference():  # type: ignore[no-untyped-def]
    return drift_reference(photo(corners_for()), corners_for())


def test_same_board_with_new_noise_is_steady(reference) -> None:  # type: ignore[no-untyped-def]
    check = check_drift(reference, photo(corners_for(), seed=5))
    assert check.status == "steady"
    assert len(check.corner_shift_px) == 4 and len(check.shift_px) >= 6
    assert check.max_shift_px < 1.5


def test_a_bumped_board_is_noticed_and_its_shift_measured(reference) -> None:  # type: ignore[no-untyped-def]
    check = check_drift(reference, photo(corners_for(shift=(12.0, -5.0)), seed=6))
    assert check.moved
    for name in CORNER_NAMES:
        dx, dy = check.corner_shift_px[name]
        assert dx == pytest.approx(12.0, abs=1.5) and dy == pytest.approx(-5.0, abs=1.5)


def test_a_small_twist_is_noticed(reference) -> None:  # type: ignore[no-untyped-def]
    assert check_drift(reference, photo(corners_for(turn_deg=2.5), seed=7)).moved


def test_pieces_placed_on_the_board_are_not_drift(reference) -> None:  # type: ignore[no-untyped-def]
    image = photo(corners_for(), seed=8)
    rng = np.random.default_rng(3)
    for _ in range(25):
        centre = (int(rng.integers(320, 560)), int(rng.integers(240, 550)))
        cv2.circle(image, centre, 11, (30, 30, 220), -1)
    # and one tower on the A1 corner lot
    cv2.circle(image, (318, 540), 13, (220, 60, 20), -1)
    assert check_drift(reference, image).status == "steady"


def test_an_arm_over_the_corners_is_unsure_not_moved(reference) -> None:  # type: ignore[no-untyped-def]
    image = photo(corners_for(), seed=9)
    cv2.rectangle(image, (0, 150), (960, 620), (120, 150, 200), -1)  # sleeve over most of it
    check = check_drift(reference, image)
    assert check.status == "unsure"
    assert not check.moved


def test_another_resolution_means_the_pose_no_longer_applies(reference) -> None:  # type: ignore[no-untyped-def]
    small = cv2.resize(photo(corners_for()), (640, 480))
    assert check_drift(reference, small).moved


def test_pose_comparison() -> None:
    before = {name: tuple(p) for name, p in zip(CORNER_NAMES, corners_for())}
    after = corners_for(shift=(0.0, 6.0))
    assert corner_displacement(before, after) == pytest.approx(6.0)
    assert poses_differ(before, after)
    assert not poses_differ(before, corners_for(shift=(0.0, 1.0)))
    assert not poses_differ(before, after, tolerance_px=10.0)


def test_undistorted_pose_is_mapped_back_onto_the_raw_frame() -> None:
    from boardcam.vision.geometry import undistort_points
    from boardcam.vision.models import CameraIntrinsics

    intrinsics = CameraIntrinsics(((700.0, 0.0, 480.0), (0.0, 700.0, 360.0), (0.0, 0.0, 1.0)),
                                  (-0.12, 0.03, 0.0, 0.0, 0.0), (960, 720))
    raw = corners_for()
    ideal = undistort_points(raw.astype(np.float64), intrinsics, (960, 720))
    assert np.abs(ideal - raw).max() > 3  # the lens matters here
    image = photo(raw)
    reference = drift_reference(image, ideal, intrinsics)
    assert np.allclose(np.array(reference.corners_px), raw, atol=0.05)
    assert check_drift(reference, photo(raw, seed=3)).status == "steady"


@pytest.mark.parametrize("seed", [6, 9])
def test_generated_tables_bumps_pieces_and_hands(seed: int) -> None:
    from scenegen import Hand, SceneParams, game_positions, render_scene

    positions = game_positions(seed)
    params = SceneParams(size=(1296, 972), tile_mm=51.0, yaw_deg=10.0 + 40 * seed,
                         table=("wood", "cloth", "plain")[seed % 3])
    empty = render_scene(positions[0], params, 1)
    reference = drift_reference(empty.image, empty.truth["corners_px"])
    late = positions[-1]
    assert check_drift(reference, render_scene(late, params, 2).image).status == "steady"
    # a knocked camera sees the same table and prints (table_view), only from elsewhere
    shifted = render_scene(late, params.replace(target_offset_mm=(5.0, -3.0)), 3, table_view=params)
    bumped = check_drift(reference, shifted.image)
    assert bumped.moved and bumped.max_shift_px > bumped.tolerance_px
    turned = render_scene(late, params.replace(yaw_deg=params.yaw_deg + 2.0), 4, table_view=params)
    assert check_drift(reference, turned.image).moved
    hand = Hand(target_mm=(40.0, -60.0), angle_deg=250.0, height_mm=90.0)
    assert not check_drift(reference, render_scene(late, params.replace(hand=hand), 5).image).moved


def _check(shifts: dict[str, tuple[float, float]], tolerance: float = 3.0) -> DriftCheck:
    return DriftCheck("unsure", shifts, {name: 0.9 for name in shifts}, tolerance)


def test_anchors_that_all_moved_alike_agree_on_their_mean_shift() -> None:
    shift = _check({"colA": (-6.9, -0.6), "colH": (-6.8, -1.3)}).agreed_shift()
    assert shift is not None and shift == pytest.approx((-6.85, -0.95))


@pytest.mark.parametrize("shifts", [
    {"colA": (-6.9, -0.6)},  # one anchor is no agreement
    {"colA": (-6.9, -0.6), "colH": (-0.5, 0.2)},  # one stayed put
    {"colA": (-6.9, -0.6), "colH": (6.8, 1.0)},  # moved apart: a turn, or patches dragged off
    {},
])
def test_no_agreed_shift_without_two_anchors_that_moved_alike(shifts: dict[str, tuple[float, float]]) -> None:
    assert _check(shifts).agreed_shift() is None
