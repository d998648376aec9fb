"""Register a board pose on the empty-board reference.

Why: the app compares every lot with how it looked empty at setup.  After a
bump of the camera the board is searched again, and the grid a search finds
sits up to a pixel or so of the warped view off where the setup frame put
it; against the reference every printed edge then shows as a departure, and
fine art (thin icons, printed blocks) reads as pieces.  The reference itself
is the best template of this board there is, so the new pose is moved until
the warped frame lies on it: OpenCV's ECC registration finds the affine map
between the two (the grid's many straight edges make it sharp to a tenth of
a pixel; the pieces placed since are a minority of the board), and the
corners move by it.
"""

from __future__ import annotations

import cv2
import numpy as np

from boardcam.vision.colour import board_gains, to_lab
from boardcam.vision.geometry import BOARD_CORNERS_TILES, board_to_image, build_warp
from boardcam.vision.models import TILES_TALL, BoardPose, CameraIntrinsics, EmptyBoardReference

ALIGN_TILE_PX = 32  # the reading's resolution: a pixel here is a thirty-second of a tile
#: below this correlation between the frame and the reference the registration is not trusted
MIN_CORRELATION = 0.5
ECC_STOP = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5)
#: a correction larger than this (tiles) is not a registration error but a wrong grid: the pose is kept
MAX_SHIFT_TILES = 0.25


def align_to_reference(
    image_bgr: np.ndarray,
    pose: BoardPose,
    reference: EmptyBoardReference,
    intrinsics: CameraIntrinsics | None = None,
) -> BoardPose:
    """``pose`` moved so the frame's warped board lies on ``reference``; ``pose`` itself when that cannot be told."""
    template = _lightness(reference.lots_at(ALIGN_TILE_PX // 2))
    correction = _board_correction(image_bgr, pose, template, reference, intrinsics)
    return pose if correction is None else _corrected(pose, correction)


def _lightness(lots: np.ndarray) -> np.ndarray:
    from boardcam.vision.lot_net import board_image

    return np.ascontiguousarray(board_image(np.asarray(lots, np.float32))[..., 0])


def _board_correction(image_bgr: np.ndarray, pose: BoardPose, template: np.ndarray,
                      reference: EmptyBoardReference, intrinsics: CameraIntrinsics | None) -> np.ndarray | None:
    """(2, 3) affine map in board tile units from where the reference is to where this frame shows it."""
    h, w = image_bgr.shape[:2]
    geometry = build_warp(pose, (w, h), ALIGN_TILE_PX, intrinsics, 0)
    warped = geometry.warp(image_bgr)
    gains = np.array(reference.white_balance) if reference.white_balance is not None else board_gains(warped)
    seen = np.ascontiguousarray(to_lab(warped, gains)[..., 0])
    warp = np.eye(2, 3, dtype=np.float32)
    try:
        correlation, warp = cv2.findTransformECC(template, seen, warp, cv2.MOTION_AFFINE, ECC_STOP, None, 3)
    except cv2.error:  # no convergence: nothing on the board to lock on to
        return None
    if correlation < MIN_CORRELATION:
        return None
    # the pixel map (template -> this view) in board tile units, y up
    to_board = np.array([[1.0 / ALIGN_TILE_PX, 0.0, 0.0], [0.0, -1.0 / ALIGN_TILE_PX, TILES_TALL], [0, 0, 1]])
    to_pixels = np.linalg.inv(to_board)
    affine = (to_board @ np.vstack([warp.astype(np.float64), [0, 0, 1]]) @ to_pixels)[:2]
    corners = BOARD_CORNERS_TILES.astype(np.float64)
    moved = corners @ affine[:, :2].T + affine[:, 2]
    if np.abs(moved - corners).max() > MAX_SHIFT_TILES:
        return None
    return affine


def _corrected(pose: BoardPose, affine: np.ndarray) -> BoardPose:
    """The pose whose board point b is the old pose's point affine(b): where the reference's print now is."""
    homography = board_to_image(pose)
    moved = BOARD_CORNERS_TILES.astype(np.float64) @ affine[:, :2].T + affine[:, 2]
    image = cv2.perspectiveTransform(moved.reshape(-1, 1, 2), homography).reshape(-1, 2)
    return BoardPose.from_points(image)
