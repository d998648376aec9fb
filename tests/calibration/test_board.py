"""Board calibration: orientation rules, pose from generated scenes, with and without the mat."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from boardcam.calibration.board import (
    CORNER_NAMES,
    calibrate_board,
    draw_board_overlay,
    learn_tile_colours,
    match_orientation,
    merge_colours,
    orient_corners,
    row1_side,
    white_balance_gains,
)
from boardcam.calibration.mat import mat_layout, render_mat
from boardcam.calibration.store import Calibration, load_calibration_with_message, save_calibration
from boardcam.engine.errors import InputError
from boardcam.vision.mat import MatSpec

# An upright array, row 1 at the bottom: A1 bottom-left, H1 bottom-right.
UPRIGHT = np.array([[100.0, 500.0], [400.0, 500.0], [400.0, 120.0], [100.0, 120.0]])


def test_orientation_rules() -> None:
    assert row1_side(UPRIGHT) == "bottom"
    assert np.array_equal(orient_corners(UPRIGHT, "bottom"), UPRIGHT)
    turned = orient_corners(UPRIGHT, "top")
    assert row1_side(turned) == "top"
    assert np.array_equal(turned[0], UPRIGHT[2])  # the old H10 is the new A1
    # a board lying sideways: row 1 may face left or right
    sideways = UPRIGHT[:, ::-1].copy()[[1, 0, 3, 2]]  # transpose keeps a proper winding after reorder
    assert row1_side(orient_corners(sideways, "left")) == "left"
    assert row1_side(orient_corners(sideways, "right")) == "right"
    with pytest.raises(InputError, match="--row1"):
        orient_corners(UPRIGHT, "north")


def test_match_orientation_keeps_the_players_choice_after_a_refind() -> None:
    chosen = orient_corners(UPRIGHT, "top")
    refound = UPRIGHT + 4.0  # the finder labels by its own rule, a little elsewhere
    matched = match_orientation(refound, chosen)
    assert np.allclose(matched, chosen + 4.0)


def test_learn_tile_colours_and_merge() -> None:
    tile_px = 20
    lab = np.zeros((5 * tile_px, 4 * tile_px, 3), np.float32)
    lab[4 * tile_px :, :tile_px] = (50.0, 60.0, 40.0)  # A1 tile (bottom-left): red-ish
    lab[4 * tile_px :, tile_px : 2 * tile_px] = (30.0, 5.0, -50.0)  # C1 tile: blue-ish
    colours = learn_tile_colours(lab, {"A1": {"color": "red"}, "C1": {"color": "blue"}}, tile_px)
    assert colours["tile:red"]["mean"] == [50.0, 60.0, 40.0]
    assert colours["tile:blue"]["mean"] == [30.0, 5.0, -50.0]
    merged = merge_colours({"tile_mm": 60.0, "colours": {"cap:white": {"mean": [90, 0, 0]}}}, colours)
    assert set(merged["colours"]) == {"cap:white", "tile:red", "tile:blue"}
    assert merged["tile_mm"] == 60.0


@pytest.fixture(scope="module")
def empty_position() -> dict:
    from scenegen import game_positions

    return game_positions(1)[0]


@pytest.mark.parametrize("yaw", [0.0, 200.0, 300.0])
def test_pose_and_row1_from_generated_scenes(empty_position: dict, yaw: float) -> None:
    from scenegen import SceneParams, render_scene

    scene = render_scene(empty_position, SceneParams(size=(960, 720), tile_mm=51.0, yaw_deg=yaw), 3)
    truth = scene.truth["corners_px"]
    side = row1_side(truth)
    result = calibrate_board(scene.image, Calibration(), row1=side)
    assert result.found_by == "markerless"
    assert result.row1 == side
    for name in CORNER_NAMES:
        assert np.hypot(*(np.array(result.corners_px[name]) - truth[name])) < 4.0, name
    # the layout's icon lots are read, tile colours are learned, white balance is fixed
    assert result.position is not None and len(result.position["tiles"]) == 20
    appearance = result.calibration.learned_appearance()
    assert appearance.white_balance is not None
    assert any(name.startswith("tile:") for name in appearance.colours)
    overlay = draw_board_overlay(scene.image, result)
    assert overlay.shape == scene.image.shape and not np.array_equal(overlay, scene.image)


def _mat_photo(spec: MatSpec, turn_deg: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A printed mat with coloured tiles on it, photographed turned and in slight perspective."""
    px_per_mm = 3
    sheet = cv2.cvtColor(np.array(render_mat(spec, paper="A3", px_per_mm=px_per_mm)), cv2.COLOR_GRAY2BGR)
    layout = mat_layout(spec, "A3")
    rng = np.random.default_rng(0)
    palette = [(40, 40, 190), (170, 90, 30), (50, 150, 50), (40, 40, 40)]
    step = spec.tile_mm + spec.gap_mm
    for column in range(4):
        for row in range(5):
            x0, y0 = layout.to_page_mm(column * step, row * step + spec.tile_mm)
            x1, y1 = layout.to_page_mm(column * step + spec.tile_mm, row * step)
            colour = palette[int(rng.integers(4))]
            cv2.rectangle(sheet, (int(x0 * px_per_mm), int(y0 * px_per_mm)),
                          (int(x1 * px_per_mm), int(y1 * px_per_mm)), colour, -1)
    h, w = sheet.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    turn = np.deg2rad(turn_deg)
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    dst = ((src - [w / 2, h / 2]) @ rot.T) * 0.6 + [640, 480]
    dst[0] += [10, 8]
    homography = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    photo = cv2.warpPerspective(sheet, homography, (1280, 960), flags=cv2.INTER_AREA, borderValue=(60, 80, 100))
    expected = {}
    for name, (x, y) in zip(CORNER_NAMES, spec.tile_area_corners_mm()):
        page = np.array(layout.to_page_mm(x, y)) * px_per_mm - 0.5
        expected[name] = cv2.perspectiveTransform(page.reshape(1, 1, 2).astype(np.float32), homography).reshape(2)
    return photo, expected


@pytest.mark.parametrize("turn", [0.0, 160.0])
def test_pose_and_orientation_from_the_mat(turn: float) -> None:
    spec = MatSpec()
    photo, expected = _mat_photo(spec, turn)
    result = calibrate_board(photo, Calibration(mat=spec.to_json()))
    assert result.found_by == "mat"
    # the mat's marker 0 decides A1, whichever way up the mat lies
    for name in CORNER_NAMES:
        assert np.hypot(*(np.array(result.corners_px[name]) - expected[name])) < 2.5, name
    assert result.row1 == ("bottom" if turn == 0.0 else "top")


def test_board_result_survives_the_file(tmp_path, empty_position: dict) -> None:  # type: ignore[no-untyped-def]
    from scenegen import SceneParams, render_scene

    scene = render_scene(empty_position, SceneParams(size=(960, 720), tile_mm=51.0), 4)
    result = calibrate_board(scene.image, row1="bottom", tile_mm=51.0)
    save_calibration(result.calibration, tmp_path / "c.json")
    loaded, message = load_calibration_with_message(tmp_path / "c.json")
    assert message is None and loaded is not None
    pose = loaded.board_pose()
    assert np.allclose(pose.corners_px["A1"], result.corners_px["A1"], atol=0.01)
    assert loaded.learned_appearance().tile_mm == 51.0


def test_no_board_is_a_clear_error() -> None:
    from boardcam.vision.errors import BoardNotFoundError

    table = np.full((480, 640, 3), 110, np.uint8)
    with pytest.raises(BoardNotFoundError):
        calibrate_board(table)
    with pytest.raises(InputError, match="colour"):
        calibrate_board(np.zeros((480, 640), np.uint8))


def test_implausible_findings_are_refused() -> None:
    from boardcam.calibration.board import implausible_array

    assert implausible_array(UPRIGHT, (640, 480)) is None
    collapsed = np.array([[300, 300], [301, 300], [301, 301], [300, 301]], float)
    assert "only" in implausible_array(collapsed, (640, 480))
    twisted = UPRIGHT[[0, 2, 1, 3]]
    assert "convex" in implausible_array(twisted, (640, 480))
    sliver = np.array([[100, 300], [500, 300], [500, 340], [100, 340]], float)
    assert "ratio" in implausible_array(sliver, (640, 480))


def test_a_default_mat_is_used_even_when_none_is_stored() -> None:
    photo, expected = _mat_photo(MatSpec(), 30.0)
    result = calibrate_board(photo, Calibration())
    assert result.found_by == "mat"
    assert np.hypot(*(np.array(result.corners_px["A1"]) - expected["A1"])) < 2.5


def test_the_players_layout_wins_over_the_reading(empty_position: dict) -> None:
    from scenegen import SceneParams, render_scene

    from boardcam.calibration.board import board_at

    scene = render_scene(empty_position, SceneParams(size=(960, 720), tile_mm=51.0), 6)
    result = board_at(scene.image, scene.truth["corners_px"], layout=empty_position)
    assert result.position["tiles"] == empty_position["tiles"]
    assert set(result.learned) == {f"tile:{c}" for c in {t["color"] for t in empty_position["tiles"].values()}}
    appearance = result.calibration.learned_appearance()
    assert appearance.reference is not None and dict(appearance.reference.tiles) == empty_position["tiles"]
    with pytest.raises(InputError, match="20 tiles"):
        board_at(scene.image, scene.truth["corners_px"], layout={"tiles": {"A1": {"color": "red", "icon": "A1"}}})


def test_the_stored_white_balance_brightens_an_underexposed_board_as_the_vision_does() -> None:
    from boardcam.vision.colour import EXPOSURE_FLOOR, shades_of_grey_gains

    rng = np.random.default_rng(4)
    board = rng.integers(20, 230, (160, 128, 3)).astype(np.uint8)
    assert np.array_equal(white_balance_gains(board), shades_of_grey_gains(board))  # well exposed: balance only
    dark = (board * 0.35).astype(np.uint8)
    gains = white_balance_gains(dark)
    lift = gains / shades_of_grey_gains(dark)
    assert lift == pytest.approx(np.full(3, lift[0])) and lift[0] > 1.0
    grey = (dark.reshape(-1, 3) * gains.astype(np.float32)) @ np.array([0.114, 0.587, 0.299], np.float32)
    assert float(np.percentile(grey, 99)) == pytest.approx(EXPOSURE_FLOOR, abs=1.5)
