import cv2
import numpy as np
import pytest

from boardcam.vision.geometry import board_to_image, build_warp, camera_centre, default_camera_matrix, project_height
from boardcam.vision.models import BoardPose


def synthetic_pose(height_tiles: float, offset=(0.0, 0.0)):
    """Project the board corners through a camera straight above (2, 2.5) + offset."""
    k = default_camera_matrix((1640, 1232))
    centre = np.array([2.0 + offset[0], 2.5 + offset[1], height_tiles])
    rotation = np.diag([1.0, -1.0, -1.0])  # looking down, image y towards board -y
    corners = np.array([[0, 0, 0], [4, 0, 0], [4, 5, 0], [0, 5, 0]], float)
    cam = (rotation @ (corners - centre).T).T
    px = (k @ cam.T).T
    return BoardPose.from_points(px[:, :2] / px[:, 2:3]), k, centre


@pytest.mark.parametrize("height, offset", [(8.0, (0, 0)), (11.0, (1.5, -2.0))])
def test_camera_centre_from_homography(height, offset):
    pose, k, centre = synthetic_pose(height, offset)
    got = camera_centre(board_to_image(pose), k)
    assert np.allclose(got, centre, atol=1e-6)


def test_raised_points_lean_away_from_the_camera():
    centre = np.array([2.0, 2.5, 8.0])
    near, far = project_height(np.array([[2.0, 2.5], [4.0, 5.0]]), 0.8, centre)
    assert np.allclose(near, [2.0, 2.5])
    lean = far - np.array([4.0, 5.0])
    assert lean[0] > 0 and lean[1] > 0  # outward
    assert np.linalg.norm(lean) == pytest.approx(np.hypot(2, 2.5) * 0.8 / (8.0 - 0.8))


def test_warp_maps_board_to_top_down_image():
    pose, _, _ = synthetic_pose(8.0)
    image = np.zeros((1232, 1640, 3), np.uint8)
    a1 = tuple(int(v) for v in pose.corners_px["A1"])
    cv2.circle(image, a1, 12, (0, 0, 255), -1)
    geometry = build_warp(pose, (1640, 1232), 32, None, 8)
    warped = geometry.warp(image)
    board = geometry.board_view(warped)
    assert board.shape[:2] == (160, 128)
    assert board[-2, 1, 2] > 100  # A1 is the lower-left corner of the top-down board
    assert board[1, -2, 2] == 0
