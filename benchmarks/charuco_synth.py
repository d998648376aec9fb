"""Synthetic photos of the ChArUco target through a known camera.

The board is rendered flat, placed in front of a pinhole camera with a
random pose, projected through a known camera matrix and then distorted with
known Brown-Conrady coefficients by ``cv2.remap``: for every pixel of the
(distorted) photo we look up where it came from on the flat sheet.  The
calibration under test has to recover exactly those K and distortion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from boardcam.calibration.target import TargetSpec

SHEET_PX_PER_MM = 4.0
PAPER_MARGIN_MM = 12.0


@dataclass(frozen=True)
class SynthCamera:
    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    image_size: tuple[int, int]


def pi_like_camera(width: int = 960, height: int = 720) -> SynthCamera:
    """About 62 degrees horizontal field of view, mild barrel distortion."""
    focal = (width / 2) / math.tan(math.radians(31))
    matrix = np.array([[focal, 0, width / 2 + 7.0], [0, focal * 1.002, height / 2 - 5.0], [0, 0, 1]])
    dist = np.array([-0.14, 0.06, 0.0004, -0.0003, 0.0])
    return SynthCamera(matrix, dist, (width, height))


def sheet_image(spec: TargetSpec) -> tuple[np.ndarray, np.ndarray]:
    """The flat sheet (board plus white paper margin) and the sheet-px -> board-mm affine."""
    ppm = SHEET_PX_PER_MM
    board_w = int(round(spec.width_mm * ppm))
    board_h = int(round(spec.height_mm * ppm))
    board = spec.board().generateImage((board_w, board_h), marginSize=0, borderBits=1)
    margin = int(round(PAPER_MARGIN_MM * ppm))
    sheet = np.full((board_h + 2 * margin, board_w + 2 * margin), 255, np.uint8)
    sheet[margin : margin + board_h, margin : margin + board_w] = board
    # Board frame (mm, origin at the board's top-left, y down) of a sheet pixel centre.
    # Pixel i spans [i - 0.5, i + 0.5] in remap coordinates, so its left edge is i - 0.5.
    offset = (0.5 - margin) / ppm
    to_mm = np.array([[1 / ppm, 0, offset], [0, 1 / ppm, offset], [0, 0, 1]])
    # Pre-blur: the sheet is oversampled relative to the photo; avoid aliasing.
    sheet = cv2.GaussianBlur(sheet, (0, 0), 1.2)
    return sheet, to_mm


def undistortion_lookup(camera: SynthCamera) -> np.ndarray:
    """For every photo pixel, the ideal (undistorted) pixel it shows: (H, W, 2) float32."""
    width, height = camera.image_size
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    points = np.stack([xs, ys], axis=-1).reshape(-1, 1, 2)
    ideal = cv2.undistortPointsIter(
        points,
        camera.camera_matrix,
        camera.dist_coeffs,
        None,
        camera.camera_matrix,
        (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 40, 1e-6),
    )
    return ideal.reshape(height, width, 2).astype(np.float32)


def rotation(rx: float, ry: float, rz: float) -> np.ndarray:
    """Roll the sheet in its own plane by ``rz``, then tilt it by (rx, ry)."""
    rot_z, _ = cv2.Rodrigues(np.array([0.0, 0.0, rz]))
    tilt, _ = cv2.Rodrigues(np.array([rx, ry, 0.0]))
    return tilt @ rot_z


def pose_for(
    camera: SynthCamera, spec: TargetSpec, centre_px: tuple[float, float], depth_mm: float,
    tilt_x: float, tilt_y: float, roll: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and translation that put the board centre on ``centre_px`` at ``depth_mm``."""
    rot = rotation(tilt_x, tilt_y, roll)
    ray = np.linalg.inv(camera.camera_matrix) @ np.array([centre_px[0], centre_px[1], 1.0])
    centre_world = ray / ray[2] * depth_mm
    board_centre = np.array([spec.width_mm / 2, spec.height_mm / 2, 0.0])
    translation = centre_world - rot @ board_centre
    return rot, translation


def render_view(
    camera: SynthCamera,
    spec: TargetSpec,
    rot: np.ndarray,
    translation: np.ndarray,
    lookup: np.ndarray,
    sheet: np.ndarray,
    to_mm: np.ndarray,
    rng: np.random.Generator,
    noise: float = 2.0,
) -> np.ndarray:
    """One photo: table grey, the sheet in perspective, lens distortion, sensor noise."""
    plane_to_ideal = camera.camera_matrix @ np.column_stack([rot[:, 0], rot[:, 1], translation])
    sheet_to_ideal = plane_to_ideal @ to_mm
    ideal_to_sheet = np.linalg.inv(sheet_to_ideal)
    h, w = lookup.shape[:2]
    pts = np.concatenate([lookup.reshape(-1, 2), np.ones((h * w, 1), np.float32)], axis=1)
    mapped = pts @ ideal_to_sheet.T.astype(np.float32)
    mapped = mapped[:, :2] / mapped[:, 2:3]
    map_x = mapped[:, 0].reshape(h, w).astype(np.float32)
    map_y = mapped[:, 1].reshape(h, w).astype(np.float32)
    photo = cv2.remap(sheet, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=90)
    photo = photo.astype(np.float32) * rng.uniform(0.75, 1.0) + rng.normal(0, noise, photo.shape)
    photo = np.clip(photo, 0, 255).astype(np.uint8)
    return cv2.cvtColor(photo, cv2.COLOR_GRAY2BGR)


def synth_views(
    count: int = 14,
    seed: int = 1,
    camera: SynthCamera | None = None,
    spec: TargetSpec | None = None,
    *,
    spread: float = 1.0,
    depth_range: tuple[float, float] = (330.0, 520.0),
) -> tuple[SynthCamera, list[np.ndarray]]:
    """``count`` photos of the target at poses spread over the frame.

    ``spread`` scales how far from the centre the board centres are placed
    (0 = all in the middle: the poor-coverage case).
    """
    camera = camera or pi_like_camera()
    spec = spec or TargetSpec()
    rng = np.random.default_rng(seed)
    lookup = undistortion_lookup(camera)
    sheet, to_mm = sheet_image(spec)
    width, height = camera.image_size
    photos = []
    for index in range(count):
        # Walk a 3x3 grid of frame positions so the corners get visited.
        gx, gy = (index % 3) - 1, ((index // 3) % 3) - 1
        centre = (
            width / 2 + spread * gx * width * 0.30 + rng.uniform(-20, 20),
            height / 2 + spread * gy * height * 0.28 + rng.uniform(-20, 20),
        )
        rot, translation = pose_for(
            camera,
            spec,
            centre,
            rng.uniform(*depth_range),
            tilt_x=rng.uniform(-0.55, 0.55),
            tilt_y=rng.uniform(-0.55, 0.55),
            roll=rng.uniform(-0.6, 0.6) + (math.pi if index % 4 == 3 else 0.0),
        )
        photos.append(render_view(camera, spec, rot, translation, lookup, sheet, to_mm, rng))
    return camera, photos
