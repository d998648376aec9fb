"""Camera calibration recovers a known lens from synthetic views, and refuses bad sets."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from boardcam.calibration.camera import (
    CalibrationLimits,
    CalibrationRefused,
    CharucoView,
    calibrate_images,
    calibrate_views,
    detect_view,
    frame_coverage,
    load_image_dir,
    make_detector,
)
from boardcam.calibration.target import DEFAULT_TARGET
from boardcam.engine.errors import InputError
from charuco_synth import SynthCamera, synth_views


@pytest.fixture(scope="module")
def good_set() -> tuple[SynthCamera, list[np.ndarray]]:
    return synth_views(14, seed=3)


@pytest.fixture(scope="module")
def good_views(good_set: tuple[SynthCamera, list[np.ndarray]]) -> list[CharucoView]:
    detector = make_detector(DEFAULT_TARGET)
    views = [detect_view(photo, DEFAULT_TARGET, detector=detector) for photo in good_set[1]]
    assert all(view is not None for view in views)
    return [view for view in views if view is not None]


def test_recovers_known_focal_length_and_distortion(good_set: tuple[SynthCamera, list[np.ndarray]]) -> None:
    camera, photos = good_set
    result = calibrate_images([(f"view{i}", photo) for i, photo in enumerate(photos)])
    true_fx, true_fy = camera.camera_matrix[0, 0], camera.camera_matrix[1, 1]
    assert result.focal_px[0] == pytest.approx(true_fx, rel=0.01)
    assert result.focal_px[1] == pytest.approx(true_fy, rel=0.01)
    assert result.dist_coeffs[0] == pytest.approx(camera.dist_coeffs[0], abs=0.02)
    assert result.rms_px < 0.5
    assert result.views_used == result.views_total == len(photos)
    assert result.image_size == camera.image_size
    assert 0.35 <= result.coverage <= 1.0
    document = result.to_json()
    assert set(document) >= {"rms_px", "camera_matrix", "dist_coeffs", "image_size", "views_used"}
    assert len(document["camera_matrix"]) == 3 and all(len(row) == 3 for row in document["camera_matrix"])


def test_undistorting_with_the_result_straightens_the_target(
    good_set: tuple[SynthCamera, list[np.ndarray]], good_views: list[CharucoView]
) -> None:
    """The practical test: corners of one target row lie on a straight line afterwards."""
    result = calibrate_views(good_views)
    matrix = np.array(result.camera_matrix)
    dist = np.array(result.dist_coeffs)
    worst_before = worst_after = 0.0
    for view in good_views:
        ids = view.ids.ravel()
        for row in range(DEFAULT_TARGET.squares_y - 1):
            wanted = np.arange(row * 6, row * 6 + 6)
            if not np.isin(wanted, ids).all():
                continue
            points = np.array([view.corners[list(ids).index(i), 0] for i in wanted], np.float64)
            straight = cv2.undistortPoints(points.reshape(-1, 1, 2), matrix, dist, P=matrix).reshape(-1, 2)
            worst_before = max(worst_before, _line_residual(points))
            worst_after = max(worst_after, _line_residual(straight))
    assert worst_before > 0.4  # the lens visibly bends straight rows
    assert worst_after < 0.25 * worst_before


def _line_residual(points: np.ndarray) -> float:
    """Largest distance (px) of a point from the best straight line through all."""
    centred = points - points.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    return float(np.abs(centred @ axes[-1]).max())


def test_refuses_too_few_views(good_views: list[CharucoView]) -> None:
    with pytest.raises(CalibrationRefused, match="only 4 of 4") as refusal:
        calibrate_views(good_views[:4])
    assert refusal.value.reason == "too_few_views"


def test_refuses_when_the_target_is_never_seen() -> None:
    blank = [(f"blank{i}", np.full((480, 640, 3), 128, np.uint8)) for i in range(7)]
    with pytest.raises(CalibrationRefused, match="not found in any of 7") as refusal:
        calibrate_images(blank)
    assert refusal.value.reason == "too_few_views"


def test_refuses_too_few_corners(good_views: list[CharucoView]) -> None:
    sparse = [
        CharucoView(view.corners[:5], view.ids[:5], view.image_size, view.name) for view in good_views
    ]
    with pytest.raises(CalibrationRefused, match="at least 8 target corners") as refusal:
        calibrate_views(sparse)
    assert refusal.value.reason == "too_few_corners"


def test_refuses_poor_coverage() -> None:
    _, photos = synth_views(8, seed=5, spread=0.0, depth_range=(750.0, 800.0))
    with pytest.raises(CalibrationRefused, match="cover only") as refusal:
        calibrate_images([(str(i), photo) for i, photo in enumerate(photos)])
    assert refusal.value.reason == "poor_coverage"
    assert refusal.value.figures["coverage"] < 0.35


def test_refuses_high_error(good_views: list[CharucoView]) -> None:
    rng = np.random.default_rng(0)
    shaky = [
        CharucoView(
            (view.corners + rng.normal(0, 2.5, view.corners.shape)).astype(np.float32),
            view.ids,
            view.image_size,
        )
        for view in good_views
    ]
    with pytest.raises(CalibrationRefused, match="reprojection error") as refusal:
        calibrate_views(shaky)
    assert refusal.value.reason == "error_too_high"
    assert refusal.value.figures["rms_px"] > 1.0
    # the same views pass when the user explicitly accepts a larger error
    assert calibrate_views(shaky, limits=CalibrationLimits(max_rms_px=10.0)).rms_px > 1.0


def test_views_of_different_sizes_are_an_input_error(good_views: list[CharucoView]) -> None:
    odd = CharucoView(good_views[0].corners, good_views[0].ids, (640, 480))
    with pytest.raises(InputError, match="different sizes"):
        calibrate_views([*good_views, odd])


def test_frame_coverage_counts_the_union_of_hulls() -> None:
    square = np.array([[0, 0], [50, 0], [50, 50], [0, 50]], np.float32).reshape(-1, 1, 2)
    view = CharucoView(square, np.arange(4).reshape(-1, 1), (100, 100))
    moved = CharucoView(square + 50, np.arange(4).reshape(-1, 1), (100, 100))
    assert frame_coverage([view], (100, 100)) == pytest.approx(0.25, abs=0.06)
    assert frame_coverage([view, view], (100, 100)) == pytest.approx(0.25, abs=0.06)
    assert frame_coverage([view, moved], (100, 100)) == pytest.approx(0.5, abs=0.1)


def test_load_image_dir_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a folder"):
        load_image_dir(tmp_path / "missing")
    with pytest.raises(InputError, match="no images"):
        load_image_dir(tmp_path)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    with pytest.raises(InputError, match="cannot read image"):
        load_image_dir(tmp_path)
