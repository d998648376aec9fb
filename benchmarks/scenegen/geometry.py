"""Board and camera geometry in millimetres.

World frame: the table plane is z = 0, x runs from column A to H, y from row 1
to row 10, and the origin is the nominal centre of the tile array.  Tiles are
boxes of thickness t, so every lot's top surface is the plane z = t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .params import SceneParams

COLUMNS = "ABCDEFGH"
TOWER_BASE_MM = 25.0
TOWER_HEIGHT_MM = 44.0
CAP_BASE_MM = 14.0
CAP_HEIGHT_MM = 25.0


def lot_name(col: int, row: int) -> str:
    """Name of the lot at 0-based column and row, e.g. (0, 0) -> 'A1'."""
    return f"{COLUMNS[col]}{row + 1}"


def parse_lot(name: str) -> tuple[int, int]:
    """'B7' -> (1, 6); raises ValueError naming the bad lot."""
    if len(name) < 2 or name[0] not in COLUMNS or not name[1:].isdigit():
        raise ValueError(f"lot: {name!r} is not a lot name like 'A1'..'H10'")
    row = int(name[1:]) - 1
    if not 0 <= row < 10:
        raise ValueError(f"lot: {name!r} is not a lot name like 'A1'..'H10'")
    return COLUMNS.index(name[0]), row


ALL_LOTS: tuple[str, ...] = tuple(lot_name(c, r) for r in range(10) for c in range(8))
TILE_KEYS: tuple[str, ...] = tuple(lot_name(c, r) for r in range(0, 10, 2) for c in range(0, 8, 2))


def tile_key_of(lot: str) -> str:
    col, row = parse_lot(lot)
    return lot_name(col - col % 2, row - row % 2)


@dataclass(frozen=True)
class TilePose:
    """Where one tile really lies: centre (mm), twist (radians) and its side."""

    key: str
    centre: tuple[float, float]
    twist: float
    size: float

    def local_to_world(self, local: np.ndarray) -> np.ndarray:
        """Tile-local (x right, y up, origin at tile centre) -> world xy."""
        c, s = math.cos(self.twist), math.sin(self.twist)
        rot = np.array([[c, -s], [s, c]])
        return np.asarray(np.asarray(local, dtype=np.float64) @ rot.T + np.asarray(self.centre))

    def corners(self) -> np.ndarray:
        """Corners lower-left, lower-right, upper-right, upper-left (world xy)."""
        h = self.size / 2
        return self.local_to_world(np.array([[-h, -h], [h, -h], [h, h], [-h, h]]))


@dataclass(frozen=True)
class Layout:
    tiles: dict[str, TilePose]
    pitch: float
    thickness: float

    def lot_centre(self, lot: str) -> np.ndarray:
        col, row = parse_lot(lot)
        tile = self.tiles[tile_key_of(lot)]
        q = tile.size / 4
        local = np.array([[(col % 2) * 2 * q - q, (row % 2) * 2 * q - q]])
        return np.asarray(tile.local_to_world(local)[0])

    def lot_corners(self, lot: str) -> np.ndarray:
        col, row = parse_lot(lot)
        tile = self.tiles[tile_key_of(lot)]
        h = tile.size / 2
        x0 = -h + (col % 2) * h
        y0 = -h + (row % 2) * h
        return tile.local_to_world(np.array([[x0, y0], [x0 + h, y0], [x0 + h, y0 + h], [x0, y0 + h]]))

    def outer_corners(self) -> dict[str, np.ndarray]:
        """Outer corners of the tile array, taken from the real corner tiles."""
        return {
            "A1": self.tiles["A1"].corners()[0],
            "H1": self.tiles["G1"].corners()[1],
            "H10": self.tiles["G9"].corners()[2],
            "A10": self.tiles["A9"].corners()[3],
        }


def make_layout(params: SceneParams) -> Layout:
    """Hand-laid tiles: each shifted and twisted a little around its grid spot."""
    rng = np.random.default_rng([params.layout_seed, 101])
    pitch = params.tile_mm + params.tile_gap_mm
    tiles: dict[str, TilePose] = {}
    for key in TILE_KEYS:
        col, row = parse_lot(key)
        i, j = col // 2, row // 2
        nominal = ((i - 1.5) * pitch, (j - 2.0) * pitch)
        shift = np.clip(rng.normal(0.0, 0.6 * params.tile_shift_mm, 2), -params.tile_shift_mm, params.tile_shift_mm)
        twist = float(np.clip(rng.normal(0.0, 0.6 * params.tile_twist_deg), -1.5 * params.tile_twist_deg,
                              1.5 * params.tile_twist_deg))
        tiles[key] = TilePose(key, (nominal[0] + shift[0], nominal[1] + shift[1]), math.radians(twist),
                              params.tile_mm)
    return Layout(tiles, pitch, params.tile_thickness_mm)


@dataclass(frozen=True)
class Camera:
    """Pinhole camera with radial distortion (OpenCV model k1, k2)."""

    matrix: np.ndarray  # 3x3
    dist: np.ndarray  # 5
    rotation: np.ndarray  # world -> camera
    translation: np.ndarray  # world -> camera
    size: tuple[int, int]

    @property
    def centre(self) -> np.ndarray:
        return np.asarray(-self.rotation.T @ self.translation)

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N,3) -> distorted image pixels (N,2), as in the final frame."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 3)
        rvec, _ = cv2.Rodrigues(self.rotation)
        out, _ = cv2.projectPoints(pts, rvec, self.translation.reshape(3, 1), self.matrix, self.dist)
        return out.reshape(-1, 2)

    def project_ideal(self, points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
        """World points -> undistorted pixels of a render canvas with intrinsics `matrix`."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        cam = pts @ self.rotation.T + self.translation
        uv = cam @ matrix.T
        return np.asarray(uv[:, :2] / uv[:, 2:3])

    def plane_homography(self, z: float, matrix: np.ndarray) -> np.ndarray:
        """Homography from table-plane (x, y) at height z to canvas pixels."""
        r = self.rotation
        m = np.column_stack([r[:, 0], r[:, 1], r[:, 2] * z + self.translation])
        h = matrix @ m
        return np.asarray(h / h[2, 2])

    def to_json(self) -> dict[str, object]:
        return {
            "camera_matrix": self.matrix.tolist(),
            "dist_coeffs": self.dist.tolist(),
            "image_size": list(self.size),
            "rotation": self.rotation.tolist(),
            "translation_mm": self.translation.tolist(),
        }


def make_camera(params: SceneParams) -> Camera:
    """Camera hanging over the board, tilted and turned as the params say."""
    width, height = params.size
    focal = (width / 2) / math.tan(math.radians(params.fov_deg) / 2)
    matrix = np.array([[focal, 0, (width - 1) / 2], [0, focal, (height - 1) / 2], [0, 0, 1]], dtype=np.float64)
    dist = np.array([params.k1, params.k2, 0.0, 0.0, 0.0])
    tilt = math.radians(params.tilt_deg)
    az = math.radians(params.tilt_azimuth_deg)
    forward = np.array([math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), -math.cos(tilt)])
    target = np.array([params.target_offset_mm[0], params.target_offset_mm[1], 0.0])
    centre = target - forward * (params.camera_height_mm / math.cos(tilt))
    yaw = math.radians(params.yaw_deg)
    # image "right" direction, projected perpendicular to the view direction
    right = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    right = right - right.dot(forward) * forward
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.vstack([right, down, forward])
    translation = -rotation @ centre
    return Camera(matrix, dist, rotation, translation, (width, height))


def pixels_per_mm(camera: Camera, thickness: float) -> float:
    """Image scale at the board centre: sets texture resolutions."""
    pts = np.array([[-5.0, 0.0, thickness], [5.0, 0.0, thickness], [0, -5.0, thickness], [0, 5.0, thickness]])
    uv = camera.project_ideal(pts, camera.matrix)
    return float(max(np.linalg.norm(uv[1] - uv[0]), np.linalg.norm(uv[3] - uv[2])) / 10.0)


def kelvin_to_linear_bgr(kelvin: float) -> np.ndarray:
    """Colour of a black-body lamp as linear BGR with luminance 1.

    Uses the well-known curve fit of black-body sRGB values (accurate to a few
    percent from 1000 to 40000 K), which is all a tint needs.
    """
    t = kelvin / 100.0
    if t <= 66:
        r = 255.0
        g = 99.4708025861 * math.log(t) - 161.1195681661
    else:
        r = 329.698727446 * (t - 60) ** -0.1332047592
        g = 288.1221695283 * (t - 60) ** -0.0755148492
    if t >= 66:
        b = 255.0
    elif t <= 19:
        b = 0.0
    else:
        b = 138.5177312231 * math.log(t - 10) - 305.0447927307
    srgb = np.clip(np.array([b, g, r]) / 255.0, 0.0, 1.0)
    lin = srgb_to_linear(srgb)
    lum = 0.0722 * lin[0] + 0.7152 * lin[1] + 0.2126 * lin[2]
    return np.asarray(lin / lum)


def srgb_to_linear(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def bgr_to_linear(bgr: tuple[int, int, int] | np.ndarray) -> np.ndarray:
    return srgb_to_linear(np.asarray(bgr, dtype=np.float64) / 255.0).astype(np.float32)
