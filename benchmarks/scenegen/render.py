"""Render one camera frame of an Alien City board from its position and SceneParams.

How (and why it is fast enough): everything is drawn in linear light on an
undistorted pinhole "canvas" slightly larger than the frame, then bent by the
lens distortion with one remap.
- The table and every tile top are planes: top-down textures are put in place
  with one perspective warp each (no per-pixel Python).
- Lighting of the planes (lamp fall-off, Lambert, a little gloss) is computed on
  a coarse grid and upsampled; shadows are the silhouettes of the pieces
  projected from each lamp onto the tile plane, blurred for soft lamps.
- Pieces are analytic shapes (pyramids, half spheres, coins) ray cast only
  inside their own bounding boxes, with a z-buffer and Blinn-Phong shading.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from . import art
from .geometry import (
    ALL_LOTS,
    CAP_BASE_MM,
    CAP_HEIGHT_MM,
    TILE_KEYS,
    TOWER_BASE_MM,
    TOWER_HEIGHT_MM,
    Camera,
    Layout,
    bgr_to_linear,
    kelvin_to_linear_bgr,
    make_camera,
    make_layout,
    pixels_per_mm,
)
from .params import Hand, SceneParams
from .positions import Structure, parse_position

COARSE = 8  # pixel step of smooth maps (light fall-off, lens maps)

TOWER_BGR = {
    "opaque": {"red": (38, 32, 196), "blue": (165, 78, 22), "green": (58, 148, 34)},
    "translucent": {"red": (80, 70, 240), "blue": (225, 135, 50), "green": (100, 215, 80)},
}
CAP_BGR = {"white": (232, 234, 236), "black": (30, 30, 32)}
DOME_BGR = {"red": (34, 30, 172), "blue": (150, 62, 18), "green": (45, 128, 36), "black": (24, 24, 26)}


@dataclass(frozen=True)
class Scene:
    """A rendered frame (BGR uint8) and its ground truth (JSON-ready dict)."""

    image: np.ndarray
    truth: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- lens and canvas


@dataclass(frozen=True)
class _Canvas:
    matrix: np.ndarray  # intrinsics of the undistorted render canvas
    size: tuple[int, int]
    map1: np.ndarray
    map2: np.ndarray


def _coarse_positions(length: int, step: int) -> np.ndarray:
    """Sample positions whose cv2.resize by `step` (then cropping `step`) lands on pixel centres."""
    count = -(-length // step) + 2
    return np.arange(count) * step + (step - 1) / 2 - step


def _upsample(coarse: np.ndarray, width: int, height: int, step: int) -> np.ndarray:
    big = cv2.resize(coarse, (coarse.shape[1] * step, coarse.shape[0] * step), interpolation=cv2.INTER_LINEAR)
    return big[step:step + height, step:step + width]


@functools.lru_cache(maxsize=4)
def _canvas(width: int, height: int, focal: float, cx: float, cy: float, k1: float, k2: float) -> _Canvas:
    """The undistorted canvas covering the whole distorted frame, and the remap into the frame."""
    matrix = np.array([[focal, 0, cx], [0, focal, cy], [0, 0, 1]], dtype=np.float64)
    dist = np.array([k1, k2, 0, 0, 0], dtype=np.float64)
    xs = _coarse_positions(width, COARSE)
    ys = _coarse_positions(height, COARSE)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 1, 2)
    if k1 == 0 and k2 == 0:
        ideal = grid.reshape(-1, 2)
    else:
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)
        ideal = np.asarray(cv2.undistortPointsIter(grid.astype(np.float64), matrix, dist, np.eye(3), matrix,
                                                   criteria)).reshape(-1, 2)
    inside = ((grid[:, 0, 0] >= -1) & (grid[:, 0, 0] <= width) & (grid[:, 0, 1] >= -1) & (grid[:, 0, 1] <= height))
    lo = ideal[inside].min(axis=0)
    hi = ideal[inside].max(axis=0)
    ox, oy = math.ceil(-lo[0]) + 3, math.ceil(-lo[1]) + 3
    size = (int(math.ceil(hi[0])) + ox + 4, int(math.ceil(hi[1])) + oy + 4)
    canvas_matrix = matrix.copy()
    canvas_matrix[0, 2] += ox
    canvas_matrix[1, 2] += oy
    coarse = (ideal + np.array([ox, oy])).reshape(len(ys), len(xs), 2).astype(np.float32)
    full = _upsample(coarse, width, height, COARSE)
    map1, map2 = cv2.convertMaps(np.ascontiguousarray(full[..., 0]), np.ascontiguousarray(full[..., 1]),
                                 cv2.CV_16SC2)
    return _Canvas(canvas_matrix, size, map1, map2)


def canvas_for(camera: Camera) -> _Canvas:
    m = camera.matrix
    return _canvas(camera.size[0], camera.size[1], float(m[0, 0]), float(m[0, 2]), float(m[1, 2]),
                   float(camera.dist[0]), float(camera.dist[1]))


# --------------------------------------------------------------------------- lights


@dataclass(frozen=True)
class _Lamp:
    position: np.ndarray
    colour: np.ndarray  # linear BGR, luminance 1
    intensity: float
    ref_dist2: float  # squared distance to the board centre: intensity is given there
    radius: float


def _lamps(params: SceneParams) -> list[_Lamp]:
    out = []
    t = params.tile_thickness_mm
    for light in params.lights:
        pos = np.asarray(light.position_mm, dtype=np.float64)
        ref = float(np.sum((pos - np.array([0, 0, t])) ** 2))
        out.append(_Lamp(pos, kelvin_to_linear_bgr(light.kelvin).astype(np.float32), light.intensity, ref,
                         light.radius_mm))
    return out


def _reference_light(params: SceneParams, lamps: list[_Lamp]) -> np.ndarray:
    """Light colour x amount falling on the board centre: what auto exposure and AWB meter."""
    total = params.ambient * kelvin_to_linear_bgr(params.ambient_kelvin)
    for lamp in lamps:
        cos = (lamp.position[2] - params.tile_thickness_mm) / math.sqrt(lamp.ref_dist2)
        total = total + lamp.intensity * max(cos, 0.0) * lamp.colour
    return np.asarray(total, dtype=np.float64)


# --------------------------------------------------------------------------- pieces


@dataclass(frozen=True)
class _Material:
    albedo: np.ndarray  # linear BGR
    specular: float
    shininess: float
    translucent: bool = False


@dataclass(frozen=True)
class _Pyramid:
    base: np.ndarray  # 4x3
    apex: np.ndarray  # 3
    material: _Material
    pips: int = 0  # Looney pyramids carry 3 (large) or 1 (small) pips near the foot of each face

    def points(self) -> np.ndarray:
        return np.asarray(np.vstack([self.base, self.apex[None, :]]))

    def planes(self) -> tuple[np.ndarray, np.ndarray]:
        """Outward normals (5x3) and offsets: inside is normals @ x <= offsets for all five."""
        centroid = self.points().mean(axis=0)
        normals, offsets = [], []
        for i in range(4):
            a, b = self.base[i], self.base[(i + 1) % 4]
            n = np.cross(b - a, self.apex - a)
            n /= np.linalg.norm(n)
            if n.dot(centroid - a) > 0:
                n = -n
            normals.append(n)
            offsets.append(n.dot(a))
        normals.append(np.array([0.0, 0.0, -1.0]))
        offsets.append(-float(self.base[0, 2]))
        return np.array(normals), np.array(offsets)


@dataclass(frozen=True)
class _Occluder:
    """A tower that can shade other pieces from a lamp (translucent ones only partly)."""

    normals: np.ndarray
    offsets: np.ndarray
    strength: float
    centre: np.ndarray  # bounding sphere, to skip towers that cannot be in the way
    radius: float


def _bounding_radius(points: np.ndarray) -> float:
    centre = points.mean(axis=0)
    return float(np.sqrt(np.max(np.sum((points - centre) ** 2, axis=1))))


def _may_block(occ: _Occluder, centre: np.ndarray, radius: float, lamp_pos: np.ndarray) -> bool:
    """Cheap test: does the segment from the points' bounding sphere to the lamp pass near the occluder?"""
    seg = lamp_pos - centre
    length2 = float(seg.dot(seg))
    t = float(np.clip((occ.centre - centre).dot(seg) / max(length2, 1e-9), 0.0, 1.0))
    nearest = centre + t * seg
    return float(np.linalg.norm(occ.centre - nearest)) < occ.radius + radius


def _blocked(points: np.ndarray, lamp_pos: np.ndarray, occ: _Occluder) -> np.ndarray:
    """Does the segment from each point to the lamp pass through the occluder? (slab clipping)"""
    seg = lamp_pos[None, :] - points
    num = occ.offsets[None, :] - points @ occ.normals.T  # >= 0: point inside that half-space
    den = seg @ occ.normals.T
    t_in = np.full(len(points), 1e-6)
    t_out = np.ones(len(points))
    outside_parallel = np.zeros(len(points), bool)
    for k in range(len(occ.offsets)):
        d, n = den[:, k], num[:, k]
        parallel = np.abs(d) < 1e-12
        outside_parallel |= parallel & (n < 0)
        t = n / np.where(parallel, 1.0, d)
        t_in = np.where((d < 0) & ~parallel, np.maximum(t_in, t), t_in)
        t_out = np.where((d > 0) & ~parallel, np.minimum(t_out, t), t_out)
    return np.asarray((t_in <= t_out) & ~outside_parallel)


@dataclass(frozen=True)
class _Dome:
    centre: np.ndarray  # centre of the base disc
    radius: float
    height: float  # 0 for a half sphere, coin thickness otherwise
    material: _Material

    def points(self) -> np.ndarray:
        r = self.radius
        top = self.height if self.height > 0 else r
        offs = np.array([[dx, dy, dz] for dx in (-r, r) for dy in (-r, r) for dz in (0.0, top)])
        return np.asarray(self.centre[None, :] + offs)

    def silhouette_points(self, count: int = 16) -> np.ndarray:
        a = np.linspace(0, 2 * np.pi, count, endpoint=False)
        pts = []
        levels = (0.0, self.height) if self.height > 0 else (0.0, 0.5, 0.8, 0.95)
        for level in levels:
            if self.height > 0:
                rr, z = self.radius, level
            else:
                z = level * self.radius
                rr = math.sqrt(max(self.radius ** 2 - z ** 2, 0.0))
            pts.append(np.column_stack([self.centre[0] + rr * np.cos(a), self.centre[1] + rr * np.sin(a),
                                        np.full(count, self.centre[2] + z)]))
        if self.height == 0:
            pts.append(self.centre[None, :] + np.array([[0, 0, self.radius]]))
        return np.vstack(pts)


def _square(centre: np.ndarray, half: float, angle: float, z: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    offs = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    rot = offs @ np.array([[c, -s], [s, c]]).T
    return np.column_stack([centre[0] + rot[:, 0], centre[1] + rot[:, 1], np.full(4, z)])


def _piece_palette(params: SceneParams) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([params.layout_seed, 303])
    j = params.palette_jitter
    pal: dict[str, np.ndarray] = {}
    for prefix, table in (("tower", TOWER_BGR[params.tower_look]), ("cap", CAP_BGR), ("dome", DOME_BGR)):
        for name, bgr in table.items():
            base = np.asarray(bgr, dtype=np.float64) * (1 + j * rng.uniform(-0.12, 0.12)) + j * rng.uniform(-10, 10, 3)
            pal[f"{prefix}:{name}"] = bgr_to_linear(np.clip(base, 0, 255))
    return pal


def _tower_shapes(centre: np.ndarray, angle: float, colour: str, cap: str | None, pal: dict[str, np.ndarray],
                  params: SceneParams, rng: np.random.Generator) -> list[Any]:
    """A tower (large pyramid) standing at centre (base centre, 3D), with its cap if any."""
    translucent = params.tower_look == "translucent"
    half = TOWER_BASE_MM / 2
    z = float(centre[2])
    mat = _Material(pal[f"tower:{colour}"], 0.25 if not translucent else 0.35, 60.0, translucent)
    shapes: list[Any] = [_Pyramid(_square(centre, half, angle, z), centre + [0, 0, TOWER_HEIGHT_MM], mat,
                                  3 if params.pips else 0)]
    if cap is not None:
        seat = TOWER_HEIGHT_MM * (1 - (CAP_BASE_MM / 2 - 0.8) / half)
        cap_angle = angle + rng.normal(0, math.radians(6))
        shapes.append(_cap_shape(centre + [0, 0, seat], cap_angle, cap, pal, params.pips))
    return shapes


def _cap_shape(centre: np.ndarray, angle: float, cap: str, pal: dict[str, np.ndarray], pips: bool) -> _Pyramid:
    cap_mat = _Material(pal[f"cap:{cap}"], 0.25, 50.0, False)
    return _Pyramid(_square(centre, CAP_BASE_MM / 2, angle, float(centre[2])), centre + [0, 0, CAP_HEIGHT_MM], cap_mat,
                    1 if pips else 0)


def _dome_shape(centre: np.ndarray, radius: float, colour: str, pal: dict[str, np.ndarray],
                params: SceneParams) -> _Dome:
    if params.dome_look == "bead":
        return _Dome(centre, radius, 0.0, _Material(pal[f"dome:{colour}"], 0.6, 120.0))
    # a glossier coin mirrors the lamps in a stronger, broader sheen that pales and lightens its top (COIN_GLOSS)
    gloss = params.coin_gloss
    specular = COIN_SPECULAR + (COIN_GLOSS_SPECULAR - COIN_SPECULAR) * gloss
    shininess = COIN_SHININESS / (1.0 + (COIN_SHININESS / COIN_GLOSS_SHININESS - 1.0) * gloss)
    return _Dome(centre, radius, 3.2, _Material(pal[f"dome:{colour}"], specular, shininess))


#: a coin's Blinn-Phong specular weight and exponent at coin_gloss 0 and at 1.  Why the range: path-traced
#: glossy coins (Cycles, roughness 0.4) of their tile's colour often show a top as light as the tile and paler,
#: only the thin rim telling them apart; the ray caster's coin was always darker and as saturated as its ink.
#: At 1 the ray caster's coins on frame 7104 show the pale tops Cycles gives its red and green coins there
COIN_SPECULAR, COIN_SHININESS = 0.12, 40.0
COIN_GLOSS_SPECULAR, COIN_GLOSS_SHININESS = 0.5, 10.0


def _pieces(structures: dict[str, Structure], layout: Layout, params: SceneParams) -> dict[str, list[Any]]:
    """3D shapes per occupied lot; placement jitter is fixed per lot so a series stays still."""
    pal = _piece_palette(params)
    t = layout.thickness
    lot_size = params.tile_mm / 2
    out: dict[str, list[Any]] = {}
    for lot, st in structures.items():
        rng = np.random.default_rng([params.layout_seed, 500 + ALL_LOTS.index(lot)])
        centre2 = layout.lot_centre(lot)
        tile_twist = layout.tiles[_tile_key(lot)].twist
        if st.kind == "tower":
            # turn as far as the lot allows (neighbouring pyramids would collide)
            room = lot_size / 2 + 1.0
            half = TOWER_BASE_MM / 2
            max_turn = math.pi / 4 if half * math.sqrt(2) <= room else _max_turn(half, room)
            angle = tile_twist + rng.uniform(-max_turn, max_turn)
            jitter = np.clip(rng.normal(0, params.piece_jitter_mm / 2, 2), -params.piece_jitter_mm,
                             params.piece_jitter_mm)
            centre = np.array([centre2[0] + jitter[0], centre2[1] + jitter[1], t])
            out[lot] = _tower_shapes(centre, angle, st.color, st.cap, pal, params, rng)
        else:
            radius = params.dome_mm / 2 * (1 + rng.uniform(-0.03, 0.03))
            room = max(lot_size / 2 - radius, 0.0)
            jitter = np.clip(rng.normal(0, params.piece_jitter_mm / 2, 2), -min(room + 0.5, params.piece_jitter_mm),
                             min(room + 0.5, params.piece_jitter_mm))
            centre = np.array([centre2[0] + jitter[0], centre2[1] + jitter[1], t])
            out[lot] = [_dome_shape(centre, radius, st.color, pal, params)]
    return out


SPARE_KINDS = ("tower:red", "tower:blue", "tower:green", "cap:white", "cap:black", "dome:red", "dome:blue",
               "dome:green", "dome:black")


def _spares(params: SceneParams, layout: Layout) -> list[list[Any]]:
    """Players' unplayed pieces standing on the table around the board (not part of the position)."""
    if params.spare_pieces <= 0:
        return []
    pal = _piece_palette(params)
    rng = np.random.default_rng([params.layout_seed, 808])
    half_w, half_h = 2 * layout.pitch, 2.5 * layout.pitch
    keep_out = 12.0 if params.mat is None else params.mat.margin_mm + params.mat.marker_mm + 14.0
    placed: list[np.ndarray] = []
    out: list[list[Any]] = []
    for _ in range(params.spare_pieces * 20):
        if len(out) >= params.spare_pieces:
            break
        side = int(rng.integers(4))
        away = rng.uniform(keep_out + 8.0, keep_out + 110.0)
        along = rng.uniform(-1.1, 1.1)
        if side == 0:
            xy = np.array([along * half_w, -half_h - away])
        elif side == 1:
            xy = np.array([along * half_w, half_h + away])
        elif side == 2:
            xy = np.array([-half_w - away, along * half_h])
        else:
            xy = np.array([half_w + away, along * half_h])
        if any(np.linalg.norm(xy - q) < 30.0 for q in placed):
            continue
        placed.append(xy)
        kind, colour = SPARE_KINDS[int(rng.integers(len(SPARE_KINDS)))].split(":")
        centre = np.array([xy[0], xy[1], 0.0])
        angle = float(rng.uniform(0, math.pi / 2))
        if kind == "tower":
            out.append(_tower_shapes(centre, angle, colour, None, pal, params, rng))
        elif kind == "cap":
            out.append([_cap_shape(centre, angle, colour, pal, params.pips)])
        else:
            out.append([_dome_shape(centre, params.dome_mm / 2, colour, pal, params)])
    return out


def _tile_key(lot: str) -> str:
    from .geometry import tile_key_of

    return tile_key_of(lot)


def _max_turn(half: float, room: float) -> float:
    """Largest turn a square of half side `half` can make and still reach only `room` from its centre."""
    ratio = room / half  # cos a + sin a <= ratio
    if ratio <= 1.0:
        return 0.0
    return max(0.0, math.asin(min(1.0, ratio / math.sqrt(2))) - math.pi / 4)


# --------------------------------------------------------------------------- rendering context


@dataclass
class _Frame:
    """Mutable buffers of one render (kept inside render_scene)."""

    camera: Camera
    matrix: np.ndarray
    size: tuple[int, int]
    image: np.ndarray  # linear BGR float32, canvas size
    depth: np.ndarray
    ray_matrix: np.ndarray  # canvas pixel (u, v, 1) -> world ray direction (camera z = 1)
    cam_centre: np.ndarray
    lamps: list[_Lamp]
    ambient: np.ndarray  # linear BGR
    window: np.ndarray  # unit vector towards the brighter side of the room
    ids: np.ndarray  # which piece shape drew each pixel (-1: none)
    ppm: float  # pixels per mm at the board
    reflections: float = 0.0  # SceneParams.piece_reflections
    clarity: float = SceneParams.tower_clarity
    glass: float = 0.0  # SceneParams.tower_glass
    coin_rim: float = 1.0  # SceneParams.coin_rim
    plane_z: float = 0.0  # height of the tile tops
    surroundings: np.ndarray | None = None  # the lit board and table before the pieces, blurred: what plastic mirrors


def _project(frame: _Frame, points: np.ndarray) -> np.ndarray:
    return frame.camera.project_ideal(points, frame.matrix)


def _bbox(uv: np.ndarray, size: tuple[int, int], pad: int = 2) -> tuple[int, int, int, int] | None:
    x0 = max(int(math.floor(uv[:, 0].min())) - pad, 0)
    y0 = max(int(math.floor(uv[:, 1].min())) - pad, 0)
    x1 = min(int(math.ceil(uv[:, 0].max())) + pad + 1, size[0])
    y1 = min(int(math.ceil(uv[:, 1].max())) + pad + 1, size[1])
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _shade(frame: _Frame, points: np.ndarray, normals: np.ndarray, mat: _Material,
           occluders: tuple[_Occluder, ...] = (), mirror: bool = True) -> np.ndarray:
    """Blinn-Phong under every lamp plus ambient; translucent plastic also glows; nearby towers cast shadows."""
    view = frame.cam_centre[None, :] - points
    view /= np.linalg.norm(view, axis=1, keepdims=True)
    diffuse = np.zeros((len(points), 3), np.float32)
    spec = np.zeros((len(points), 3), np.float32)
    glow = np.zeros((len(points), 3), np.float32)
    if occluders:
        centre = points.mean(axis=0)
        radius = float(np.sqrt(np.max(np.sum((points - centre) ** 2, axis=1))))
    for lamp in frame.lamps:
        lv = lamp.position[None, :] - points
        d2 = np.einsum("ij,ij->i", lv, lv)
        lv /= np.sqrt(d2)[:, None]
        att = lamp.intensity * lamp.ref_dist2 / d2
        for occ in occluders:
            if _may_block(occ, centre, radius, lamp.position):
                att = att * np.where(_blocked(points, lamp.position, occ), 1.0 - occ.strength, 1.0)
        ndl = np.einsum("ij,ij->i", normals, lv)
        lit = np.clip(ndl, 0, None)
        diffuse += (att * lit)[:, None].astype(np.float32) * lamp.colour
        half = lv + view
        half /= np.linalg.norm(half, axis=1, keepdims=True)
        ndh = np.clip(np.einsum("ij,ij->i", normals, half), 0, None)
        # broad lamps give broad, dimmer highlights (normalised Blinn-Phong)
        shininess = mat.shininess / (1.0 + lamp.radius / 40.0)
        strength = (shininess + 8.0) / (8.0 * math.pi)
        spec += (att * strength * ndh ** shininess * (ndl > 0))[:, None].astype(np.float32) * lamp.colour
        if mat.translucent:
            glow += (att * 0.35)[:, None].astype(np.float32) * lamp.colour
    fresnel = (1 - np.clip(np.einsum("ij,ij->i", normals, view), 0, 1)) ** 4
    # room light is brighter from the window side: faces of a pyramid differ even under a lamp overhead
    sky = (0.55 + 0.45 * np.clip(normals @ frame.window, 0, None)) / _SKY_ON_TABLE
    colour = mat.albedo[None, :] * (sky[:, None].astype(np.float32) * frame.ambient[None, :] + diffuse + glow)
    colour += mat.specular * spec + (mat.specular * 0.25 * fresnel)[:, None].astype(np.float32) * frame.ambient
    if mirror and frame.reflections > 0 and frame.surroundings is not None:
        colour = _mirrored(frame, points, normals, view, colour)
    return np.asarray(colour, dtype=np.float32)


PLASTIC_F0 = 0.04  # reflectance of plastic (refractive index 1.5) seen head on
_NO_ALBEDO = np.zeros(3, np.float32)  # a material that only reflects: the highlights of clear plastic


def _mirrored(frame: _Frame, points: np.ndarray, normals: np.ndarray, view: np.ndarray,
              colour: np.ndarray) -> np.ndarray:
    """Glossy plastic mirrors what is around it, the more the more grazing the view (Schlick's Fresnel).

    Why it matters: a pyramid's faces are steep, so the camera above sees them
    at a grazing angle, and they mirror the tiles and table beside the piece
    (a fifth of the light and more): a path tracer shows towers paler and
    tinted by their neighbours, which a pure Blinn-Phong piece never is.
    """
    cos = np.clip(np.einsum("ij,ij->i", normals, view), 0.0, 1.0)
    fresnel = (PLASTIC_F0 + (1 - PLASTIC_F0) * (1 - cos) ** 5) * frame.reflections
    seen = _floor_at(frame, points, 2 * cos[:, None] * normals - view)
    return np.asarray((1 - fresnel[:, None]) * colour + fresnel[:, None] * seen, dtype=np.float32)


def _rays(frame: _Frame, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    m = frame.ray_matrix
    return np.column_stack([m[0, 0] * xs + m[0, 1] * ys + m[0, 2],
                            m[1, 0] * xs + m[1, 1] * ys + m[1, 2],
                            m[2, 0] * xs + m[2, 1] * ys + m[2, 2]])


def _floor_at(frame: _Frame, points: np.ndarray, rays: np.ndarray) -> np.ndarray:
    """The lit board and table where rays from points meet the tile plane, or the room where they go up."""
    assert frame.surroundings is not None
    seen = np.broadcast_to(frame.ambient, points.shape).astype(np.float32)
    down = rays[:, 2] < -1e-3
    if down.any():
        reach = (frame.plane_z - points[down, 2]) / rays[down, 2]
        hit = points[down] + reach[:, None] * rays[down]
        uv = frame.camera.project_ideal(hit, frame.matrix).astype(np.float32)
        h, w = frame.surroundings.shape[:2]
        xs = np.clip(np.round(uv[:, 0]).astype(np.int64), 0, w - 1)
        ys = np.clip(np.round(uv[:, 1]).astype(np.int64), 0, h - 1)
        seen[down] = frame.surroundings[ys, xs]
    return seen


def _through_clear_plastic(frame: _Frame, points: np.ndarray, normal: np.ndarray, mat: _Material) -> np.ndarray:
    """What a face of a clear coloured pyramid shows, with no light of its own: the floor under the
    tower through the wall, and the board beside it mirrored off the wall's two faces.

    Why it matters: a path tracer (and a real acrylic pyramid) shows a green
    tower on a black tile dark green, because what comes back through the
    plastic is the little light the black tile returns, tinted twice (the lamp's
    light goes in through a wall, and out through one to the camera). The
    translucent look without this, a lit colour mixed with some of what lies
    behind, stays bright on any tile, so a network fitted to it takes the
    dark one for something else. Looney pyramids are thin hollow shells, open
    at the base, so a ray goes through a wall nearly unbent (its small
    sideways shift is left out).
    """
    incoming = points - frame.cam_centre[None, :]
    incoming /= np.linalg.norm(incoming, axis=1, keepdims=True)
    cos = np.clip(-(incoming @ normal), 0.0, 1.0)
    once = PLASTIC_F0 + (1 - PLASTIC_F0) * (1 - cos) ** 5
    walls = (2 * once / (1 + once))[:, None].astype(np.float32)  # a wall's two faces, light bouncing between
    transmitted = _floor_at(frame, points, incoming) * mat.albedo[None, :].astype(np.float32)
    mirrored = _floor_at(frame, points, incoming + 2 * cos[:, None] * normal[None, :])
    return np.asarray(walls * mirrored + (1 - walls) * transmitted, dtype=np.float32)


def _write(frame: _Frame, xs: np.ndarray, ys: np.ndarray, depth: np.ndarray, colour: np.ndarray,
           mat: _Material, ident: int, clear: np.ndarray | None = None) -> None:
    """Put a shape's pixels in the frame; translucent plastic shows some of what lies behind it, and
    `clear` (the look of clear plastic) takes the share frame.glass of the colour."""
    if mat.translucent:
        behind = frame.image[ys, xs]
        tint = mat.albedo / max(float(mat.albedo.max()), 1e-6)
        colour = (1 - frame.clarity) * colour + frame.clarity * behind * tint[None, :]
        if clear is not None:
            colour = (1 - frame.glass) * colour + frame.glass * clear
    frame.image[ys, xs] = colour
    frame.depth[ys, xs] = depth
    frame.ids[ys, xs] = ident


def _draw_pyramid(frame: _Frame, pyr: _Pyramid, ident: int, occluders: tuple[_Occluder, ...] = ()) -> None:
    pts = pyr.points()
    uv_all = _project(frame, pts)
    box = _bbox(uv_all, frame.size)
    if box is None:
        return
    x0, y0, x1, y1 = box
    centroid = pts.mean(axis=0)
    for i in range(4):
        tri = np.array([pyr.base[i], pyr.base[(i + 1) % 4], pyr.apex])
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        normal /= np.linalg.norm(normal)
        if normal.dot(tri.mean(axis=0) - centroid) < 0:
            normal = -normal
        if normal.dot(frame.cam_centre - tri[0]) <= 0:
            continue  # back face
        uv = _project(frame, tri) - np.array([x0, y0])
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round(uv * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        ys, xs = np.nonzero(mask)
        if len(xs) == 0:
            continue
        xs = xs + x0
        ys = ys + y0
        rays = _rays(frame, xs.astype(np.float64), ys.astype(np.float64))
        denom = rays @ normal
        denom = np.where(np.abs(denom) < 1e-9, 1e-9, denom)
        lam = (normal.dot(tri[0] - frame.cam_centre)) / denom
        keep = (lam > 0) & (lam < frame.depth[ys, xs])
        if not keep.any():
            continue
        xs, ys, lam, rays = xs[keep], ys[keep], lam[keep], rays[keep]
        points = frame.cam_centre[None, :] + lam[:, None] * rays
        normals = np.broadcast_to(normal, points.shape)
        colour = _shade(frame, points, normals, pyr.material, occluders)
        clear = None
        if pyr.material.translucent and frame.glass > 0:
            highlights = _shade(frame, points, normals, dataclasses.replace(pyr.material, albedo=_NO_ALBEDO),
                                occluders, mirror=False)
            clear = _through_clear_plastic(frame, points, normal, pyr.material) + highlights
        if pyr.pips:
            colour *= _pip_shade(points, tri, pyr.pips)[:, None]
            if clear is not None:
                clear *= _pip_shade(points, tri, pyr.pips)[:, None]
        _write(frame, xs, ys, lam, colour, pyr.material, ident, clear)
    _draw_edges(frame, pyr, uv_all - np.array([x0, y0]), (x0, y0, x1, y1), ident)


def _pip_shade(points: np.ndarray, tri: np.ndarray, count: int) -> np.ndarray:
    """Darkening of the small moulded dimples (pips) near the foot of a pyramid face."""
    foot0, foot1, apex = tri
    up = 0.13 if count == 3 else 0.2
    radius = 0.05 * float(np.linalg.norm(foot1 - foot0))
    shade = np.ones(len(points), np.float32)
    for k in range(count):
        along = (k + 1) / (count + 1) if count > 1 else 0.5
        along = 0.5 + (along - 0.5) * 0.9
        foot = foot0 + (foot1 - foot0) * along
        centre = foot + (apex - foot) * up
        d2 = np.sum((points - centre[None, :]) ** 2, axis=1)
        shade *= np.where(d2 < radius * radius, np.float32(0.62), np.float32(1.0))
    return shade


def _draw_edges(frame: _Frame, pyr: _Pyramid, uv: np.ndarray, box: tuple[int, int, int, int], ident: int) -> None:
    """Slightly rounded plastic edges: darker creases on opaque pyramids, bright rims on translucent ones."""
    x0, y0, x1, y1 = box
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    pts = np.round(uv * 16).astype(np.int32)
    thickness = max(1, int(round(0.5 * frame.ppm)))
    for i in range(4):
        cv2.line(mask, tuple(int(v) for v in pts[i]), tuple(int(v) for v in pts[4]), 255, thickness, cv2.LINE_AA, 4)
        cv2.line(mask, tuple(int(v) for v in pts[i]), tuple(int(v) for v in pts[(i + 1) % 4]), 255, thickness,
                 cv2.LINE_AA, 4)
    roi = (slice(y0, y1), slice(x0, x1))
    weight = mask.astype(np.float32) / 255.0 * (frame.ids[roi] == ident)
    factor = 1.0 + (0.3 if pyr.material.translucent else -0.25) * weight
    frame.image[roi] *= factor[..., None]


def _draw_dome(frame: _Frame, dome: _Dome, ident: int, occluders: tuple[_Occluder, ...] = ()) -> None:
    uv_all = _project(frame, dome.points())
    box = _bbox(uv_all, frame.size)
    if box is None:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[y0:y1, x0:x1]
    xs = xs.ravel().astype(np.float64)
    ys = ys.ravel().astype(np.float64)
    rays = _rays(frame, xs, ys)
    c = frame.cam_centre
    q = dome.centre
    r = dome.radius
    if dome.height == 0:  # half sphere resting on its flat side
        oc = c - q
        a = np.einsum("ij,ij->i", rays, rays)
        b = 2 * rays @ oc
        cc = oc.dot(oc) - r * r
        disc = b * b - 4 * a * cc
        hit = disc > 0
        lam = np.full(len(xs), np.inf)
        lam[hit] = (-b[hit] - np.sqrt(disc[hit])) / (2 * a[hit])
        z = c[2] + lam * rays[:, 2]
        hit &= z >= q[2] - 1e-6
        lam = np.where(hit, lam, np.inf)
        normals_fn = "sphere"
    else:  # coin: flat top plus cylinder side
        top = q[2] + dome.height
        lam_top = (top - c[2]) / rays[:, 2]
        px = c[0] + lam_top * rays[:, 0] - q[0]
        py = c[1] + lam_top * rays[:, 1] - q[1]
        hit_top = px * px + py * py <= r * r
        dx, dy = rays[:, 0], rays[:, 1]
        ox, oy = c[0] - q[0], c[1] - q[1]
        a = dx * dx + dy * dy
        b = 2 * (dx * ox + dy * oy)
        cc = ox * ox + oy * oy - r * r
        disc = b * b - 4 * a * cc
        ok = disc > 0
        lam_side = np.full(len(xs), np.inf)
        lam_side[ok] = (-b[ok] - np.sqrt(disc[ok])) / (2 * a[ok])
        zs = c[2] + lam_side * rays[:, 2]
        ok &= (zs >= q[2]) & (zs <= top)
        lam = np.where(hit_top, lam_top, np.inf)
        side_first = ok & (lam_side < lam)
        lam = np.where(side_first, lam_side, lam)
        hit = np.isfinite(lam)
        normals_fn = "coin"
    ix = xs.astype(np.int64)
    iy = ys.astype(np.int64)
    keep = hit & (lam < frame.depth[iy, ix])
    if not keep.any():
        return
    ix, iy, lam, rays = ix[keep], iy[keep], lam[keep], rays[keep]
    points = c[None, :] + lam[:, None] * rays
    if normals_fn == "sphere":
        normals = (points - q[None, :]) / r
    else:
        # flat top with a rounded (bevelled) rim, then the cylinder side; coin_rim < 1 turns both less
        # from the light: local shading leaves out the light the table bounces into them, which a path
        # tracer shows as a ring much fainter than this one
        radial = points - q[None, :]
        radial[:, 2] = 0
        dist = np.linalg.norm(radial, axis=1)
        outward = radial / np.maximum(dist, 1e-9)[:, None]
        bevel = min(1.5, 0.15 * r)
        tilt = np.clip((dist - (r - bevel)) / bevel, 0, 1) * 1.2 * frame.coin_rim
        on_side = side_first[keep]
        tilt[on_side] = math.pi / 2 * frame.coin_rim
        normals = outward * np.sin(tilt)[:, None]
        normals[:, 2] = np.cos(tilt)
    _write(frame, ix, iy, lam, _shade(frame, points, normals, dome.material, occluders), dome.material, ident)


# --------------------------------------------------------------------------- planes


def _plane_lighting(frame: _Frame, params: SceneParams, homography_t: np.ndarray) -> tuple[list[np.ndarray],
                                                                                          list[np.ndarray]]:
    """Per lamp: irradiance and specular maps on the tile plane (full canvas, upsampled)."""
    w, h = frame.size
    xs = _coarse_positions(w, COARSE)
    ys = _coarse_positions(h, COARSE)
    gx, gy = np.meshgrid(xs, ys)
    inv = np.linalg.inv(homography_t)
    pts = np.stack([gx, gy, np.ones_like(gx)], axis=-1) @ inv.T
    wx = pts[..., 0] / pts[..., 2]
    wy = pts[..., 1] / pts[..., 2]
    t = params.tile_thickness_mm
    view = np.stack([frame.cam_centre[0] - wx, frame.cam_centre[1] - wy, np.full_like(wx, frame.cam_centre[2] - t)],
                    axis=-1)
    view /= np.linalg.norm(view, axis=-1, keepdims=True)
    irr_maps, spec_maps = [], []
    for lamp in frame.lamps:
        lv = np.stack([lamp.position[0] - wx, lamp.position[1] - wy, np.full_like(wx, lamp.position[2] - t)], axis=-1)
        d2 = np.sum(lv * lv, axis=-1)
        lv /= np.sqrt(d2)[..., None]
        att = lamp.intensity * lamp.ref_dist2 / d2
        irr = att * np.clip(lv[..., 2], 0, None)
        half = lv + view
        half /= np.linalg.norm(half, axis=-1, keepdims=True)
        shininess = 30.0 / (1.0 + lamp.radius / 60.0)
        spec = att * np.clip(half[..., 2], 0, None) ** shininess
        both = np.stack([irr, spec], axis=-1).astype(np.float32)
        full = _upsample(both, w, h, COARSE)
        irr_maps.append(np.ascontiguousarray(full[..., 0]))
        spec_maps.append(np.ascontiguousarray(full[..., 1]))
    return irr_maps, spec_maps


def _shadow_polygon_from_lamp(lamp: _Lamp, points: np.ndarray, plane_z: float) -> np.ndarray | None:
    """Where the points' shadow falls on the plane z = plane_z (xy), or None if the lamp is too low."""
    lz = lamp.position[2]
    if np.any(points[:, 2] >= lz - 1.0):
        return None
    scale = (lz - plane_z) / (lz - points[:, 2])
    return np.asarray(lamp.position[None, :2] + (points[:, :2] - lamp.position[None, :2]) * scale[:, None])


def _fill_hulls(mask: np.ndarray, polys_uv: list[np.ndarray], value: int) -> None:
    for uv in polys_uv:
        hull = cv2.convexHull(np.round(uv * 16).astype(np.int32).reshape(-1, 1, 2))
        cv2.fillConvexPoly(mask, hull, value, cv2.LINE_AA, 4)


def _to_uv(homography: np.ndarray, xy: np.ndarray) -> np.ndarray:
    pts = np.column_stack([xy, np.ones(len(xy))]) @ homography.T
    return np.asarray(pts[:, :2] / pts[:, 2:3])


# --------------------------------------------------------------------------- hand


def _hand_polygons(hand: Hand) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """2D outline pieces (mm, table coordinates) of arm+sleeve and of the bare hand."""
    a = math.radians(hand.angle_deg)
    along = np.array([math.cos(a), math.sin(a)])  # palm -> shoulder
    across = np.array([-along[1], along[0]])
    palm = np.asarray(hand.target_mm, dtype=np.float64)
    w = hand.arm_width_mm

    def quad(p0: np.ndarray, p1: np.ndarray, w0: float, w1: float) -> np.ndarray:
        return np.array([p0 + across * w0 / 2, p1 + across * w1 / 2, p1 - across * w1 / 2, p0 - across * w0 / 2])

    def ellipse(centre: np.ndarray, ra: float, rc: float) -> np.ndarray:
        t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        return centre[None, :] + np.outer(np.cos(t) * ra, along) + np.outer(np.sin(t) * rc, across)

    wrist = palm + along * 45
    arm = [quad(wrist, palm + along * 900, w * 0.75, w * 1.15)]
    bare = [ellipse(palm, 48, w * 0.62), quad(palm, wrist + along * 10, w * 1.1, w * 0.75)]
    finger_len = 70 * (1 - 0.5 * hand.finger_curl)
    for k, off in enumerate((-0.36, -0.12, 0.12, 0.36)):
        base = palm - along * 35 + across * off * w * 1.15
        length = finger_len * (0.85 if k in (0, 3) else 1.0)
        tip = base - along * length + across * off * 18
        bare.append(quad(base, tip, 19, 15))
        bare.append(ellipse(tip, 8, 7.5))
    thumb_base = palm + across * w * 0.5
    thumb_tip = thumb_base + across * 30 - along * 35
    bare.append(quad(thumb_base, thumb_tip, 24, 18))
    if hand.sleeve_bgr is None:
        return [], arm + bare
    return arm, bare


def _draw_hand(frame: _Frame, hand: Hand) -> np.ndarray:
    """Paint the hand/arm; returns its coverage mask (uint8, canvas size)."""
    sleeve, bare = _hand_polygons(hand)
    w, h = frame.size
    cover = np.zeros((h, w), np.uint8)
    sleeve_mask = np.zeros((h, w), np.uint8)
    for poly_set, target in ((sleeve, sleeve_mask), (bare, cover)):
        for poly in poly_set:
            pts3 = np.column_stack([poly, np.full(len(poly), hand.height_mm)])
            uv = _project(frame, pts3)
            cv2.fillConvexPoly(target, np.round(uv * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    cover = np.maximum(cover, sleeve_mask)
    bx, by, bw, bh = cv2.boundingRect(cover)
    if bw == 0 or bh == 0:
        return cover
    x0, x1, y0, y1 = bx, bx + bw, by, by + bh
    roi = (slice(y0, y1), slice(x0, x1))
    solid = (cover[roi] > 127).astype(np.uint8)
    dist = cv2.distanceTransform(np.pad(solid, 1), cv2.DIST_L2, 3)[1:-1, 1:-1]
    scale = _project(frame, np.array([[0, 0, hand.height_mm], [hand.arm_width_mm / 2, 0, hand.height_mm]]))
    half_px = max(float(np.linalg.norm(scale[1] - scale[0])), 1.0)
    rounding = 0.5 + 0.5 * np.sqrt(np.clip(dist / half_px, 0, 1))
    light = frame.ambient.astype(np.float64).copy()
    for lamp in frame.lamps:
        cos = (lamp.position[2] - hand.height_mm) / math.sqrt(lamp.ref_dist2)
        light = light + lamp.intensity * max(cos, 0.0) * 0.9 * lamp.colour
    skin = bgr_to_linear(hand.skin_bgr)
    colour = np.broadcast_to(skin, (y1 - y0, x1 - x0, 3)).copy()
    if hand.sleeve_bgr is not None:
        sleeve_only = sleeve_mask[roi] > 127
        colour[sleeve_only] = bgr_to_linear(hand.sleeve_bgr)
    colour *= (rounding[..., None] * light[None, None, :]).astype(np.float32)
    alpha = (cover[roi].astype(np.float32) / 255.0)[..., None]
    frame.image[roi] = alpha * colour + (1 - alpha) * frame.image[roi]
    return cover


# --------------------------------------------------------------------------- the frame


_SKY_ON_TABLE = 0.55 + 0.45 * math.sqrt(0.5)  # the sky term of an upward normal: planes keep ambient as given


def _window(params: SceneParams) -> np.ndarray:
    a = math.radians(params.window_deg)
    return np.array([math.cos(a), math.sin(a), 1.0]) / math.sqrt(2.0)


def table_art(params: SceneParams, camera: Camera, canvas: _Canvas,
              art_rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The table top the camera sees (sRGB uint8, top-down) and the map from its pixels to table mm.

    The first draw from a scene's art generator (the tiles' palette and prints
    come after it), so another renderer that calls it first prints the same
    tiles as this one.
    """
    cw, ch = canvas.size
    h_table = camera.plane_homography(0.0, canvas.matrix)
    corners = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], dtype=np.float64)
    ground = _to_uv(np.linalg.inv(h_table), corners)
    lo = np.maximum(ground.min(axis=0) - 10, -1500)
    hi = np.minimum(ground.max(axis=0) + 10, 1500)
    r_tab = float(np.clip(pixels_per_mm(camera, params.tile_thickness_mm) * 0.6, 0.4, 2.0))
    tw, th = int((hi[0] - lo[0]) * r_tab) + 2, int((hi[1] - lo[1]) * r_tab) + 2
    table = art.table_texture(params.table, params.table_bgr, (th, tw), r_tab, art_rng)
    tex_to_plane = np.array([[1 / r_tab, 0, lo[0] + 0.5 / r_tab], [0, -1 / r_tab, hi[1] - 0.5 / r_tab], [0, 0, 1]])
    return table, tex_to_plane


def render_scene(position: dict[str, Any], params: SceneParams, seed: int = 0, *,
                 table_view: SceneParams | None = None) -> Scene:
    """Render `position` as the camera of `params` sees it; `seed` drives only the sensor noise.

    `table_view`: the scene whose camera first framed this table (default: this
    one).  The table top's texture covers what that camera saw, and its random
    draws come before the tiles' prints: a camera knocked since must see the
    same table and the same prints, not ones drawn anew for its new view.
    """
    tiles, structures = parse_position(position)
    layout = make_layout(params)
    camera = make_camera(params)
    canvas = canvas_for(camera)
    cw, ch = canvas.size
    kc = canvas.matrix
    t = params.tile_thickness_mm
    ppm = pixels_per_mm(camera, t)
    # exposure and white balance are folded into the light colours: every light path is linear in them
    gain = _camera_gain(params, _lamps(params))
    lamps = [dataclasses.replace(lamp, colour=(lamp.colour * gain).astype(np.float32)) for lamp in _lamps(params)]
    ambient = (params.ambient * kelvin_to_linear_bgr(params.ambient_kelvin) * gain).astype(np.float32)
    ray_matrix = camera.rotation.T @ np.linalg.inv(kc)
    frame = _Frame(camera, kc, (cw, ch), np.zeros((ch, cw, 3), np.float32), np.full((ch, cw), np.inf),
                   ray_matrix, camera.centre, lamps, ambient, _window(params), np.full((ch, cw), -1, np.int32), ppm)
    art_rng = np.random.default_rng([params.layout_seed, 202])
    h_table = camera.plane_homography(0.0, kc)
    h_tile = camera.plane_homography(t, kc)

    # table: top-down texture over the visible part of the table, one warp
    if table_view is None:
        table_u8, tex_to_plane = table_art(params, camera, canvas, art_rng)
    else:
        first_camera = make_camera(table_view)
        table_u8, tex_to_plane = table_art(params, first_camera, canvas_for(first_camera), art_rng)
    table = art.to_linear(table_u8)
    cv2.warpPerspective(table, h_table @ tex_to_plane, (cw, ch), dst=frame.image, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REFLECT)

    mat_truth = None if params.mat is None else _draw_mat(frame, params, h_table, layout)

    # tile sides (cut edges), then tile tops
    palette = art.guild_palette(art_rng, params.palette_jitter)
    style = art.style_of(params.layout_seed) if params.edition == "R" else None
    cam_c = camera.centre
    for key in TILE_KEYS:
        pose = layout.tiles[key]
        top = pose.corners()
        edge = bgr_to_linear(art.tile_edge_bgr(params.edition, tiles[key].color, palette)) * 0.8
        for i in range(4):
            p0, p1 = top[i], top[(i + 1) % 4]
            mid = (p0 + p1) / 2
            outward = mid - np.asarray(pose.centre)
            if outward.dot(cam_c[:2] - mid) <= 0:
                continue
            quad = np.array([[*p0, 0.0], [*p1, 0.0], [*p1, t], [*p0, t]])
            uv = _project(frame, quad)
            cv2.fillConvexPoly(frame.image, np.round(uv * 16).astype(np.int32),
                               tuple(float(v) for v in edge), cv2.LINE_8, 4)
    r_tile = float(np.clip(ppm * 1.25, 1.0, 6.0))
    n = max(16, int(round(params.tile_mm * r_tile)))
    r_eff = n / params.tile_mm
    s = params.tile_mm
    tex_to_local = np.array([[1 / r_eff, 0, 0.5 / r_eff - s / 2], [0, -1 / r_eff, s / 2 - 0.5 / r_eff], [0, 0, 1]])
    tile_cover = np.zeros((ch, cw), np.float32)
    ones = np.ones((n, n), np.float32)
    for key in TILE_KEYS:
        pose = layout.tiles[key]
        tile_art = tiles[key]
        tex = art.to_linear(art.tile_texture(params.edition, tile_art.color, tile_art.icon_lot, key, n, palette,
                                             art_rng, style))
        c, sn = math.cos(pose.twist), math.sin(pose.twist)
        local_to_world = np.array([[c, -sn, pose.centre[0]], [sn, c, pose.centre[1]], [0, 0, 1]])
        m = h_tile @ local_to_world @ tex_to_local
        box = _bbox(_to_uv(h_tile, pose.corners()), (cw, ch))
        if box is None:
            continue
        x0, y0, x1, y1 = box
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ m
        warped = cv2.warpPerspective(tex, shift, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT)
        alpha = cv2.warpPerspective(ones, shift, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT)
        roi = (slice(y0, y1), slice(x0, x1))
        frame.image[roi] = warped + (1 - alpha[..., None]) * frame.image[roi]
        np.maximum(tile_cover[roi], alpha, out=tile_cover[roi])

    # lighting of the planes: fall-off, Lambert, gloss, shadows, contact shadows
    pieces = _pieces(structures, layout, params)
    spares = _spares(params, layout)
    shapes = [shape for lot_shapes in [*pieces.values(), *spares] for shape in lot_shapes]
    irr_maps, spec_maps = _plane_lighting(frame, params, h_tile)
    contact = np.zeros((ch, cw), np.uint8)
    for lot_shapes in [*pieces.values(), *spares]:
        base = lot_shapes[0]
        if isinstance(base, _Pyramid):
            foot = base.base[:, :2]
            mid2 = foot.mean(axis=0)
            foot = mid2 + (foot - mid2) * 1.12
        else:
            a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            foot = base.centre[None, :2] + 1.1 * base.radius * np.column_stack([np.cos(a), np.sin(a)])
        _fill_hulls(contact, [_to_uv(h_tile, foot)], 255)
    if shapes:
        occlusion = np.ones((ch, cw), np.float32)
        _darken(occlusion, contact, max(1.0, 1.8 * ppm), 0.45)
    else:
        occlusion = np.ones((ch, cw), np.float32)
    hand_alpha_shadow = params.hand
    # light and gloss are accumulated per colour plane with OpenCV (about twice as fast as numpy broadcasting)
    light_planes = [occlusion * np.float32(ambient[c]) for c in range(3)]
    shine_planes = [np.zeros((ch, cw), np.float32) for _ in range(3)]
    gloss = (params.tile_gloss - 0.03) * tile_cover + np.float32(0.03)
    for lamp, irr, spec in zip(lamps, irr_maps, spec_maps):
        shadow = np.zeros((ch, cw), np.uint8)
        translucent_shadow = np.zeros((ch, cw), np.uint8)
        for shape in shapes:
            outline = shape.points() if isinstance(shape, _Pyramid) else shape.silhouette_points()
            xy = _shadow_polygon_from_lamp(lamp, outline, t)
            if xy is None:
                continue
            target = translucent_shadow if shape.material.translucent else shadow
            _fill_hulls(target, [_to_uv(h_tile, xy)], 255)
        penumbra_mm = max(lamp.radius * 30.0 / max(lamp.position[2] - 30.0, 1.0), 0.4)
        sigma = max(0.6, penumbra_mm * ppm * 0.5)
        factor = np.ones((ch, cw), np.float32)
        _darken(factor, shadow, sigma, 1.0)
        _darken(factor, translucent_shadow, sigma, 0.45)
        if hand_alpha_shadow is not None:
            hand_mask = np.zeros((ch, cw), np.uint8)
            sleeve, bare = _hand_polygons(hand_alpha_shadow)
            for poly in sleeve + bare:
                pts3 = np.column_stack([poly, np.full(len(poly), hand_alpha_shadow.height_mm)])
                xy = _shadow_polygon_from_lamp(lamp, pts3, t)
                if xy is not None:
                    _fill_hulls(hand_mask, [_to_uv(h_tile, xy)], 255)
            pen = (lamp.radius + 15.0) * (hand_alpha_shadow.height_mm - t) / max(lamp.position[2] - hand_alpha_shadow.height_mm, 1.0)
            hand_sigma = max(1.0, pen * ppm * 0.5)
            _darken(factor, hand_mask, hand_sigma, 0.85)
        np.clip(factor, 0.0, 1.0, out=factor)
        lit = cv2.multiply(cv2.multiply(irr, factor), occlusion)
        sheen = cv2.multiply(cv2.multiply(spec, factor), gloss)
        for c in range(3):
            light_planes[c] = np.asarray(cv2.scaleAdd(lit, float(lamp.colour[c]), light_planes[c]))
            shine_planes[c] = np.asarray(cv2.scaleAdd(sheen, float(lamp.colour[c]), shine_planes[c]))
    frame.image = np.asarray(cv2.add(cv2.multiply(frame.image, cv2.merge(light_planes)), cv2.merge(shine_planes)))

    # pieces, far to near so translucent plastic shows what is behind it
    frame.clarity, frame.glass, frame.coin_rim = params.tower_clarity, params.tower_glass, params.coin_rim
    frame.reflections, frame.plane_z = params.piece_reflections, t
    if params.piece_reflections > 0 or params.tower_glass > 0:
        frame.surroundings = np.asarray(cv2.GaussianBlur(frame.image, (0, 0), max(1.0, 1.5 * ppm)))
    order = sorted(shapes, key=lambda sh: -float(np.linalg.norm(sh.points().mean(axis=0) - cam_c)))
    groups = [*pieces.values(), *spares]
    group_of = {id(shape): k for k, group in enumerate(groups) for shape in group}
    towers = [(group_of[id(group[0])], group[0]) for group in groups
              if isinstance(group[0], _Pyramid) and float(group[0].apex[2] - group[0].base[0, 2]) > 40.0]
    tower_occluders = [(k, pyr.apex[:2], _Occluder(*pyr.planes(), 0.45 if pyr.material.translucent else 1.0,
                                                   pyr.points().mean(axis=0), _bounding_radius(pyr.points())))
                       for k, pyr in towers]
    for ident, shape in enumerate(order):
        here = group_of[id(shape)]
        centre = shape.points().mean(axis=0)[:2]
        near = tuple(occ for k, xy, occ in tower_occluders
                     if k != here and float(np.linalg.norm(xy - centre)) < 95.0)
        if isinstance(shape, _Pyramid):
            _draw_pyramid(frame, shape, ident, near)
        else:
            _draw_dome(frame, shape, ident, near)

    occluded_lots: list[str] = []
    if params.hand is not None:
        cover = _draw_hand(frame, params.hand)
        occluded_lots = _occluded_lots(frame, layout, pieces, cover)

    image = _develop(frame, camera, canvas, params, lamps, seed)
    truth = _truth(position, params, seed, camera, layout, occluded_lots)
    if mat_truth is not None:
        truth["mat"] = mat_truth
    return Scene(image, truth)


def _mat_origin(layout: Layout) -> np.ndarray:
    """World xy of the printed tile area's A1 corner (mat coordinates start there)."""
    gap = layout.pitch - next(iter(layout.tiles.values())).size
    return np.array([-2 * layout.pitch + gap / 2, -2.5 * layout.pitch + gap / 2])


def mat_marker_corners_mm(params: SceneParams, layout: Layout) -> dict[int, np.ndarray]:
    """Marker corners in mat millimetres, ArUco order (as MatSpec.marker_corners_mm)."""
    assert params.mat is not None
    m, s = params.mat.margin_mm, params.mat.marker_mm
    w = 4 * params.tile_mm + 3 * params.tile_gap_mm
    h = 5 * params.tile_mm + 4 * params.tile_gap_mm
    origins = [(-m - s, -m - s), (w + m, -m - s), (w + m, h + m), (-m - s, h + m)]
    return {marker_id: np.array([[x0, y0 + s], [x0 + s, y0 + s], [x0 + s, y0], [x0, y0]])
            for marker_id, (x0, y0) in zip(params.mat.marker_ids, origins)}


def _draw_mat(frame: _Frame, params: SceneParams, h_table: np.ndarray, layout: Layout) -> dict[str, Any]:
    """Paper sheet with the printed tile-area outline and four ArUco markers, lying on the table."""
    mat = params.mat
    assert mat is not None
    origin = _mat_origin(layout)
    w = 4 * params.tile_mm + 3 * params.tile_gap_mm
    h = 5 * params.tile_mm + 4 * params.tile_gap_mm
    reach = mat.margin_mm + mat.marker_mm + mat.paper_mm
    sheet = np.array([[-reach, -reach], [w + reach, -reach], [w + reach, h + reach], [-reach, h + reach]]) + origin
    paper = bgr_to_linear(mat.paper_bgr)
    cv2.fillConvexPoly(frame.image, np.round(_to_uv(h_table, sheet) * 16).astype(np.int32),
                       tuple(float(v) for v in paper), cv2.LINE_8, 4)
    outline = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64) + origin
    ink = tuple(float(v) for v in paper * 0.45)
    cv2.polylines(frame.image, [np.round(_to_uv(h_table, outline) * 16).astype(np.int32)], True, ink, 1,
                  cv2.LINE_8, 4)
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    cells = aruco.markerSize + 2
    k = max(8, int(math.ceil(frame.ppm * mat.marker_mm * 1.5 / cells)))
    side = cells * k
    markers_px: dict[str, list[list[float]]] = {}
    for marker_id, corners_mm in mat_marker_corners_mm(params, layout).items():
        marker = cv2.aruco.generateImageMarker(aruco, marker_id, side)
        tex = art.to_linear(cv2.cvtColor(np.where(marker > 127, 236, 22).astype(np.uint8), cv2.COLOR_GRAY2BGR))
        world = corners_mm + origin
        src = np.array([[-0.5, -0.5], [side - 0.5, -0.5], [side - 0.5, side - 0.5], [-0.5, side - 0.5]],
                       dtype=np.float32)
        dst = _to_uv(h_table, world).astype(np.float32)
        box = _bbox(dst.astype(np.float64), frame.size)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        m = cv2.getPerspectiveTransform(src, dst - np.array([x0, y0], dtype=np.float32))
        warped = cv2.warpPerspective(tex, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT)
        alpha = cv2.warpPerspective(np.ones((side, side), np.float32), m, (x1 - x0, y1 - y0),
                                    flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        roi = (slice(y0, y1), slice(x0, x1))
        frame.image[roi] = warped + (1 - alpha[..., None]) * frame.image[roi]
        pts3 = np.column_stack([world, np.zeros(4)])
        markers_px[str(marker_id)] = [_round_pt(p) for p in frame.camera.project(pts3)]
    return {**mat.to_json(), "tile_mm": params.tile_mm, "gap_mm": params.tile_gap_mm, "markers_px": markers_px}


def _occluded_lots(frame: _Frame, layout: Layout, pieces: dict[str, list[Any]], cover: np.ndarray) -> list[str]:
    """Lots whose top (or whose piece) is at least 3 % covered by the hand."""
    out = []
    t = layout.thickness
    for lot in ALL_LOTS:
        corners = layout.lot_corners(lot)
        pts = np.column_stack([corners, np.full(4, t)])
        if lot in pieces:
            pts = np.vstack([pts] + [shape.points() for shape in pieces[lot]])
        uv = _project(frame, pts)
        box = _bbox(uv, frame.size, pad=0)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        region = np.zeros((y1 - y0, x1 - x0), np.uint8)
        hull = cv2.convexHull(np.round((uv - [x0, y0]) * 16).astype(np.int32).reshape(-1, 1, 2))
        cv2.fillConvexPoly(region, hull, 1, cv2.LINE_8, 4)
        area = int(region.sum())
        if area == 0:
            continue
        covered = int(np.count_nonzero((cover[y0:y1, x0:x1] > 127) & (region > 0)))
        if covered >= 0.03 * area:
            out.append(lot)
    return out


def _camera_gain(params: SceneParams, lamps: list[_Lamp]) -> np.ndarray:
    """Auto exposure (board centre to mid grey) and a partial auto white balance, per channel."""
    reference = _reference_light(params, lamps)
    lum = 0.0722 * reference[0] + 0.7152 * reference[1] + 0.2126 * reference[2]
    gains = (reference / lum) ** -params.awb
    gains /= 0.0722 * gains[0] * reference[0] / lum + 0.7152 * gains[1] * reference[1] / lum \
        + 0.2126 * gains[2] * reference[2] / lum
    return np.asarray((0.62 / lum) * params.exposure * gains, dtype=np.float32)


def _darken(target: np.ndarray, mask: np.ndarray, sigma: float, weight: float) -> None:
    """target -= weight * (mask blurred by sigma, in [0, 1]), touching only the area around what is drawn.

    Wide blurs (soft lamps, a high hand) are done at reduced resolution: a Gaussian of
    sigma 40 px costs ~30x more than one of sigma 4 on a quarter-size image, and looks the same.
    """
    bx, by, bw, bh = cv2.boundingRect(mask)
    if bw == 0 or bh == 0:
        return
    pad = int(3 * sigma) + 2
    x0, y0 = max(bx - pad, 0), max(by - pad, 0)
    x1, y1 = min(bx + bw + pad, mask.shape[1]), min(by + bh + pad, mask.shape[0])
    roi = mask[y0:y1, x0:x1].astype(np.float32) * (1.0 / 255.0)
    step = int(sigma // 4)
    if step >= 2 and min(roi.shape) > 4 * step:
        small = cv2.resize(roi, ((x1 - x0 + step - 1) // step, (y1 - y0 + step - 1) // step),
                           interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), sigma / step)
        roi = np.asarray(cv2.resize(small, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR))
    else:
        roi = np.asarray(cv2.GaussianBlur(roi, (0, 0), sigma))
    target[y0:y1, x0:x1] -= np.float32(weight) * roi


def _develop(frame: _Frame, camera: Camera, canvas: _Canvas, params: SceneParams, lamps: list[_Lamp],
             seed: int) -> np.ndarray:
    """Lens, vignetting, blur, sensor noise, gamma, JPEG (exposure and AWB are already in the lights)."""
    width, height = camera.size
    img = np.asarray(cv2.remap(frame.image, canvas.map1, canvas.map2, cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE), dtype=np.float32)
    xs = (np.arange(width, dtype=np.float32) - (width - 1) / 2) / (0.5 * math.hypot(width, height))
    ys = (np.arange(height, dtype=np.float32) - (height - 1) / 2) / (0.5 * math.hypot(width, height))
    vignette = 1.0 - params.vignette * (xs[None, :] ** 2 + ys[:, None] ** 2)
    img *= vignette[..., None]
    if params.blur_sigma > 0:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), params.blur_sigma), dtype=np.float32)
    rng = np.random.default_rng([seed, 909])
    np.clip(img, 0.0, 1.0, out=img)
    # the camera's tone curve (a plain 1/2.2 gamma); noise is added after it, as it looks in a processed
    # frame: a few grey levels, mostly in brightness, less in colour
    img = np.asarray(cv2.pow(img, 1 / 2.2), dtype=np.float32)
    if params.noise > 0 or params.shot_noise > 0:
        sigma = img * np.float32(params.shot_noise ** 2)
        sigma += np.float32(params.noise ** 2)
        np.sqrt(sigma, out=sigma)
        # demosaicing correlates noise over ~2 px: draw it at half resolution (also 4x cheaper)
        half = rng.standard_normal(((height + 1) // 2, (width + 1) // 2, 3), dtype=np.float32)
        luma = half.mean(axis=2, keepdims=True)
        half = 1.2 * luma + 0.6 * (half - luma)
        sigma *= cv2.resize(half, (width, height), interpolation=cv2.INTER_LINEAR) * np.float32(1.5)
        img += sigma
    out = cv2.convertScaleAbs(img, alpha=255.0)
    if params.jpeg_quality is not None:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(params.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
        if decoded is None:
            raise RuntimeError("JPEG decoding failed")
        out = decoded
    return out


def _round_pt(p: np.ndarray) -> list[float]:
    return [round(float(p[0]), 3), round(float(p[1]), 3)]


def _truth(position: dict[str, Any], params: SceneParams, seed: int, camera: Camera, layout: Layout,
           occluded_lots: list[str]) -> dict[str, Any]:
    t = layout.thickness
    corners = layout.outer_corners()
    names = list(corners)
    uv = camera.project(np.array([[*corners[k], t] for k in names]))
    tile_uv = camera.project(np.array([[*layout.tiles[k].centre, t] for k in TILE_KEYS]))
    lot_uv = camera.project(np.array([[*layout.lot_centre(k), t] for k in ALL_LOTS]))
    width = camera.size[0]
    return {
        "position": json.loads(json.dumps(position)),
        "corners_px": {k: _round_pt(p) for k, p in zip(names, uv)},
        "tile_centers_px": {k: _round_pt(p) for k, p in zip(TILE_KEYS, tile_uv)},
        "lot_centers_px": {k: _round_pt(p) for k, p in zip(ALL_LOTS, lot_uv)},
        "occluded": bool(occluded_lots),
        "occluded_lots": occluded_lots,
        "camera": camera.to_json(),
        "board_width_fraction": round(float((uv[:, 0].max() - uv[:, 0].min()) / width), 4),
        "seed": seed,
        "params": params.to_json(),
    }
