"""Board geometry: the homography, the camera above the board, the warp maps.

Board coordinates are in *tile units*: x runs from the A1 corner along row 1
to H1 (0..4), y from the A1 corner up to A10 (0..5), z up from the table.
The warped top-down image shows the board as in the rule book: A1 at the
bottom left, ``tile_px`` pixels per tile.

Knowing where the camera is (from the homography and a camera matrix) lets
the lot reader predict where a point at a given height above a lot lands in
that warped image.  That is how tall pyramids near the image edge are
attributed to the lot of their base instead of the lot their apex leans over.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from boardcam.vision.models import TILES_TALL, TILES_WIDE, BoardPose, CameraIntrinsics

#: Pi Camera Module 2/3 horizontal field of view is about 62–66°.
DEFAULT_HFOV_DEG = 64.0

BOARD_CORNERS_TILES = np.array(
    [[0.0, 0.0], [TILES_WIDE, 0.0], [TILES_WIDE, TILES_TALL], [0.0, TILES_TALL]], dtype=np.float64
)


def default_camera_matrix(image_size: tuple[int, int], hfov_deg: float = DEFAULT_HFOV_DEG) -> np.ndarray:
    """A plausible camera matrix when calibration has not measured one.

    Square pixels, centred principal point and the Pi camera's field of view:
    enough to know roughly where the camera is, which is all lean correction needs.
    """
    w, h = image_size
    f = (w / 2.0) / np.tan(np.radians(hfov_deg) / 2.0)
    return np.array([[f, 0.0, w / 2.0], [0.0, f, h / 2.0], [0.0, 0.0, 1.0]])


def camera_matrix_for(image_size: tuple[int, int], intrinsics: CameraIntrinsics | None) -> np.ndarray:
    if intrinsics is None:
        return default_camera_matrix(image_size)
    return np.array(intrinsics.scaled_to(image_size).camera_matrix, dtype=np.float64)


def board_to_image(pose: BoardPose) -> np.ndarray:
    """Homography from board tile units to (undistorted) image pixels."""
    corners = np.array(pose.ordered(), dtype=np.float64)
    return cv2.getPerspectiveTransform(BOARD_CORNERS_TILES.astype(np.float32), corners.astype(np.float32)).astype(np.float64)


def camera_centre(board_h: np.ndarray, camera_matrix: np.ndarray) -> np.ndarray:
    """Camera centre (x, y, z) in tile units above the board plane.

    The classic planar decomposition H ~ K [r1 r2 t]: scale so r1 and r2 are
    unit vectors, then C = -Rᵀ t.  The height is returned positive whichever
    way round the homography was built.
    """
    m = np.linalg.solve(camera_matrix, board_h)
    scale = 2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
    if m[2, 2] * scale < 0:  # the board must be in front of the camera
        scale = -scale
    r1, r2, t = m[:, 0] * scale, m[:, 1] * scale, m[:, 2] * scale
    r3 = np.cross(r1, r2)
    rotation = np.stack([r1, r2, r3], axis=1)
    u, _, vt = np.linalg.svd(rotation)  # nearest true rotation
    rotation = u @ vt
    centre = -rotation.T @ t
    centre[2] = abs(centre[2])
    return centre


def project_height(points_xy: np.ndarray, height: float, centre: np.ndarray) -> np.ndarray:
    """Where points ``height`` tile units above ``points_xy`` appear on the table plane.

    Seen from the camera, a raised point lines up with the table point
    further out on the same ray: C + (P - C) · Cz / (Cz - z).
    """
    cz = max(float(centre[2]), height + 1e-3)
    factor = cz / (cz - height)
    return centre[:2] + (np.asarray(points_xy, dtype=np.float64) - centre[:2]) * factor


@dataclass(frozen=True)
class WarpGeometry:
    """Everything needed to turn a frame into the top-down board image quickly."""

    tile_px: int
    margin_px: int  # table shown around the array on every side
    board_h: np.ndarray  # board tile units -> undistorted image px
    map1: np.ndarray
    map2: np.ndarray
    camera_centre: np.ndarray  # tile units

    @property
    def size(self) -> tuple[int, int]:
        return (TILES_WIDE * self.tile_px + 2 * self.margin_px, TILES_TALL * self.tile_px + 2 * self.margin_px)

    def board_to_warp(self, xy: np.ndarray) -> np.ndarray:
        """Board tile units -> pixel coordinates in :meth:`board_view` of the warped image."""
        xy = np.asarray(xy, dtype=np.float64)
        out = np.empty_like(xy)
        out[..., 0] = xy[..., 0] * self.tile_px
        out[..., 1] = (TILES_TALL - xy[..., 1]) * self.tile_px
        return out

    def board_view(self, warped: np.ndarray) -> np.ndarray:
        """The array itself inside a warped image (a view, no copy)."""
        m = self.margin_px
        return warped[m : m + TILES_TALL * self.tile_px, m : m + TILES_WIDE * self.tile_px]

    def warp(self, image: np.ndarray) -> np.ndarray:
        return cv2.remap(image, self.map1, self.map2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)


def distort_points(points: np.ndarray, intrinsics: CameraIntrinsics, image_size: tuple[int, int]) -> np.ndarray:
    """Undistorted pixel coordinates -> where the lens really put them."""
    k = camera_matrix_for(image_size, intrinsics)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    homog = np.hstack([pts, np.ones((len(pts), 1))])
    normalised = (np.linalg.inv(k) @ homog.T).T
    object_points = normalised.reshape(-1, 1, 3)
    projected, _ = cv2.projectPoints(
        object_points, np.zeros(3), np.zeros(3), k, np.array(intrinsics.dist_coeffs, dtype=np.float64)
    )
    return projected.reshape(np.asarray(points).shape)


def undistort_points(points: np.ndarray, intrinsics: CameraIntrinsics, image_size: tuple[int, int]) -> np.ndarray:
    k = camera_matrix_for(image_size, intrinsics)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    out = cv2.undistortPoints(pts, k, np.array(intrinsics.dist_coeffs, dtype=np.float64), P=k)
    return out.reshape(np.asarray(points).shape)


def through_homography(h: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the points (x, y) land through ``h``, broadcast: a row of x and a column of y give a whole grid.

    Plain 2-D arithmetic is far quicker than a product of stacked homogeneous points.
    """
    hom = h[2, 0] * x + h[2, 1] * y + h[2, 2]
    return (h[0, 0] * x + h[0, 1] * y + h[0, 2]) / hom, (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / hom


def board_points_in_frame(board_h: np.ndarray, points: np.ndarray, intrinsics: CameraIntrinsics | None,
                          image_size: tuple[int, int]) -> np.ndarray:
    """Board points (tile units, (N, 2)) -> where the raw frame shows them: through the pose's
    homography into the undistorted image, then the lens (when calibrated)."""
    points = np.asarray(points, dtype=np.float64)
    x, y = through_homography(board_h, points[:, 0], points[:, 1])
    pixels = np.stack([x, y], axis=1)
    return distort_points(pixels, intrinsics, image_size) if intrinsics is not None else pixels


def build_warp(
    pose: BoardPose,
    image_size: tuple[int, int],
    tile_px: int,
    intrinsics: CameraIntrinsics | None = None,
    margin_px: int = 0,
) -> WarpGeometry:
    """Precompute the remap tables from a pose (lens distortion folded in).

    One ``cv2.remap`` with fixed-point maps then replaces undistort + warp,
    which keeps the known-pose path to a few milliseconds.
    """
    return _build_warp_cached(
        tuple(tuple(round(v, 3) for v in p) for p in pose.ordered()),
        tuple(image_size),
        tile_px,
        intrinsics,
        margin_px,
    )


@lru_cache(maxsize=16)
def _build_warp_cached(
    corners: tuple[tuple[float, float], ...],
    image_size: tuple[int, int],
    tile_px: int,
    intrinsics: CameraIntrinsics | None,
    margin_px: int,
) -> WarpGeometry:
    pose = BoardPose.from_points(corners)
    board_h = board_to_image(pose)
    width, height = TILES_WIDE * tile_px + 2 * margin_px, TILES_TALL * tile_px + 2 * margin_px
    # each warped pixel's board point, through the homography (row and column vectors broadcast)
    bx = ((np.arange(width, dtype=np.float64) + 0.5 - margin_px) / tile_px)[None, :]
    by = (TILES_TALL - (np.arange(height, dtype=np.float64) + 0.5 - margin_px) / tile_px)[:, None]
    x, y = through_homography(board_h, bx, by)
    if intrinsics is not None:
        img = distort_points(np.stack([x, y], axis=-1).reshape(-1, 2), intrinsics, image_size).reshape(height, width, 2)
        x, y = img[..., 0], img[..., 1]
    map1, map2 = cv2.convertMaps(x.astype(np.float32), y.astype(np.float32), cv2.CV_16SC2)
    centre = camera_centre(board_h, camera_matrix_for(image_size, intrinsics))
    return WarpGeometry(tile_px, margin_px, board_h, map1, map2, centre)
