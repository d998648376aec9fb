import cv2
import numpy as np
import pytest

from boardcam.vision.mat import MatSpec, detect_markers, find_mat, missing_marker_centres


def render_mat(spec: MatSpec, px_per_mm: float, turn: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A top-down picture of the mat's markers (row 10 at the top), turned by turn*90°."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    pad = spec.marker_mm + spec.margin_mm + 10
    w_mm, h_mm = spec.area_mm
    width, height = int((w_mm + 2 * pad) * px_per_mm), int((h_mm + 2 * pad) * px_per_mm)
    image = np.full((height, width), 255, np.uint8)

    def to_px(pt: np.ndarray) -> np.ndarray:
        return np.array([(pt[0] + pad) * px_per_mm, (h_mm + pad - pt[1]) * px_per_mm])

    side = int(round(spec.marker_mm * px_per_mm))
    for marker_id, quad in spec.marker_corners_mm().items():
        top_left = to_px(quad[0]).round().astype(int)
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
        image[top_left[1] : top_left[1] + side, top_left[0] : top_left[0] + side] = marker
    corners = {name: to_px(p) for name, p in zip(("A1", "H1", "H10", "A10"), spec.tile_area_corners_mm())}
    for _ in range(turn):
        h = image.shape[0]
        image = np.ascontiguousarray(np.rot90(image))  # counter-clockwise: (x, y) -> (y, w-1-x)
        corners = {k: np.array([v[1], image.shape[0] - 1 - v[0]]) for k, v in corners.items()}
    return image, corners


@pytest.mark.parametrize("turn", [0, 1, 2])
def test_find_mat_recovers_corners_and_orientation(turn):
    spec = MatSpec()
    image, truth = render_mat(spec, 2.0, turn)
    pose = find_mat(image, spec)
    assert pose is not None
    for name, point in truth.items():
        assert np.hypot(*(np.array(pose.corners_px[name]) - point)) < 3.0


def test_find_mat_without_markers_is_none():
    assert find_mat(np.full((300, 400), 200, np.uint8)) is None


def test_marker_layout_lies_outside_the_tile_area():
    spec = MatSpec()
    w, h = spec.area_mm
    for quad in spec.marker_corners_mm().values():
        inside = (quad[:, 0] > 0) & (quad[:, 0] < w) & (quad[:, 1] > 0) & (quad[:, 1] < h)
        assert not inside.any()
    assert MatSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("hidden", [(), (3,), (2, 3)])
def test_a_mat_of_unknown_layout_is_placed_by_its_marker_centres(hidden):
    real = MatSpec(tile_mm=60.0, gap_mm=2.0, marker_mm=20.0, margin_mm=5.0)  # not the default layout
    image, truth = render_mat(real, 2.0, 1)
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker_id in hidden:  # a piece or a hand over a marker, or one too small to be seen
        found = cv2.aruco.ArucoDetector(dictionary).detectMarkers(image)
        quad = found[0][list(found[1].ravel()).index(marker_id)].reshape(4, 2)
        cv2.fillConvexPoly(image, quad.astype(np.int32), 255)
    lot_px = 30.0 * 2.0
    guessed = find_mat(image, MatSpec(), layout_known=False)
    assert guessed is not None
    worst = max(np.hypot(*(np.array(guessed.corners_px[k]) - p)) for k, p in truth.items())
    assert worst < 1.0 * lot_px  # well inside the 1.5 lots the markerless grid is checked against
    as_if_known = find_mat(image, MatSpec())  # the default layout taken at its word
    assert max(np.hypot(*(np.array(as_if_known.corners_px[k]) - p)) for k, p in truth.items()) > worst


def test_where_a_missing_marker_should_be_is_said_from_two_or_more_found():
    spec = MatSpec()
    image, _ = render_mat(spec, 2.0, 1)
    every = detect_markers(image, spec)
    assert sorted(every) == [0, 1, 2, 3]
    side = np.linalg.norm(every[0][1] - every[0][0])
    for hidden in ((2,), (0, 3)):
        found = {i: q for i, q in every.items() if i not in hidden}
        expected = missing_marker_centres(found, spec)
        assert sorted(expected) == list(hidden)
        for marker_id, centre in expected.items():
            assert np.hypot(*(centre - every[marker_id].mean(axis=0))) < 0.5 * side
    assert missing_marker_centres({0: every[0]}, spec) == {}  # one marker places nothing
    assert missing_marker_centres(every, spec) == {}
