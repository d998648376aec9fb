"""Random scenes spread over the ranges real tables have (issue 3, "The scene").

Camera poses are drawn by rejection: a pose is kept only when the whole tile
array is inside the frame and fills 35-80 % of its width, because that is the
promise the vision code is built against.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .geometry import make_camera, make_layout
from .params import PRINTED_EDITIONS, Hand, Light, Mat, SceneParams
from .positions import game_positions
from .render import Scene, _mat_origin, mat_marker_corners_mm, render_scene

SKIN_BGR = ((150, 178, 222), (128, 160, 205), (105, 135, 180), (80, 108, 150), (55, 75, 110), (40, 55, 85))
SLEEVE_BGR = ((40, 40, 40), (120, 70, 30), (60, 60, 150), (170, 170, 170), (50, 110, 60), (200, 200, 200))
TABLE_BGR = ((70, 105, 145), (50, 75, 110), (95, 140, 180), (120, 120, 120), (60, 90, 60), (150, 160, 170),
             (35, 45, 60), (110, 80, 60))


def board_fit(params: SceneParams) -> tuple[bool, float]:
    """Is the whole tile array in frame (with a margin)? and the share of the width it fills."""
    camera = make_camera(params)
    layout = make_layout(params)
    corners = np.array([[*p, params.tile_thickness_mm] for p in layout.outer_corners().values()])
    uv = camera.project(corners)
    must_see = uv
    if params.mat is not None:  # the mat's markers must be in frame too
        origin = _mat_origin(layout)
        marks = np.vstack([c + origin for c in mat_marker_corners_mm(params, layout).values()])
        must_see = np.vstack([uv, camera.project(np.column_stack([marks, np.zeros(len(marks))]))])
    width, height = params.size
    margin = 0.03 * width
    inside = bool(np.all(must_see[:, 0] > margin) and np.all(must_see[:, 0] < width - margin)
                  and np.all(must_see[:, 1] > margin) and np.all(must_see[:, 1] < height - margin))
    return inside, float((uv[:, 0].max() - uv[:, 0].min()) / width)


def sample_lights(rng: np.random.Generator) -> tuple[tuple[Light, ...], float, float]:
    """1-3 lamps of 2700-6500 K, hard or soft, plus room (ambient) light."""
    count = int(rng.choice([1, 2, 3], p=[0.5, 0.3, 0.2]))
    lights = []
    weights = rng.dirichlet(np.full(count, 2.0))
    soft = rng.random() < 0.5
    for k in range(count):
        azimuth = rng.uniform(0, 2 * math.pi)
        reach = rng.uniform(150, 1100)
        height = rng.uniform(650, 1700)
        radius = rng.uniform(60, 250) if soft else rng.uniform(4, 25)
        lights.append(Light((reach * math.cos(azimuth), reach * math.sin(azimuth), height),
                            float(rng.uniform(2700, 6500)), float(rng.uniform(0.55, 0.9) * weights[k] * count ** 0.3),
                            float(radius)))
    ambient = float(rng.uniform(0.12, 0.45))
    ambient_kelvin = float(rng.uniform(3200, 6500))
    return tuple(lights), ambient, ambient_kelvin


#: a low lamp's elevation above the table, in degrees: below sample_lights' lowest (31 degrees), down to
#: a desk lamp beside the table or a window's evening light
LOW_LAMP_ELEVATION_DEG = (14.0, 32.0)


def low_lamp(params: SceneParams, rng: np.random.Generator) -> SceneParams:
    """The table lit mainly by one low lamp, whose shadows reach across two or more lots, with
    another lamp from above or none, and little room light (training scenes only: the
    benchmarks' scenes keep sample_lights' lamps)."""
    azimuth = rng.uniform(0, 2 * math.pi)
    elevation = math.radians(rng.uniform(*LOW_LAMP_ELEVATION_DEG))
    distance = rng.uniform(900, 1600)
    lamps = [Light((distance * math.cos(elevation) * math.cos(azimuth), distance * math.cos(elevation) * math.sin(azimuth),
                    distance * math.sin(elevation)), float(rng.uniform(2700, 6500)), float(rng.uniform(0.7, 1.0)),
                   float(rng.uniform(4, 25) if rng.random() < 0.6 else rng.uniform(60, 200)))]
    if rng.random() < 0.4:
        lamps.append(sample_lights(rng)[0][0])
        lamps[-1] = dataclasses.replace(lamps[-1], intensity=lamps[-1].intensity * float(rng.uniform(0.2, 0.6)))
    return dataclasses.replace(params, lights=tuple(lamps), ambient=float(rng.uniform(0.1, 0.3)))


def relit(params: SceneParams, rng: np.random.Generator) -> SceneParams:
    """The same table under a newly drawn set of lamps and room light (a lamp switched during a game)."""
    lights, ambient, ambient_kelvin = sample_lights(rng)
    return dataclasses.replace(params, lights=lights, ambient=ambient, ambient_kelvin=ambient_kelvin)


def sample_hand(rng: np.random.Generator, params: SceneParams) -> Hand:
    pitch = params.tile_mm + params.tile_gap_mm
    target = (float(rng.uniform(-2.2, 2.2) * pitch), float(rng.uniform(-2.7, 2.7) * pitch))
    sleeve = None if rng.random() < 0.35 else SLEEVE_BGR[int(rng.integers(len(SLEEVE_BGR)))]
    return Hand(target_mm=target, angle_deg=float(rng.uniform(0, 360)), height_mm=float(rng.uniform(60, 180)),
                arm_width_mm=float(rng.uniform(62, 85)), skin_bgr=SKIN_BGR[int(rng.integers(len(SKIN_BGR)))],
                sleeve_bgr=sleeve, finger_curl=float(rng.uniform(0, 0.8)))


def sample_params(rng: np.random.Generator, size: tuple[int, int] = (1640, 1232),
                  overrides: dict[str, Any] | None = None, hand_probability: float = 0.15) -> SceneParams:
    """Draw every knob; fields named in `overrides` are taken as given."""
    fixed = dict(overrides or {})
    valid = {f.name for f in dataclasses.fields(SceneParams)}
    unknown = set(fixed) - valid
    if unknown:
        raise ValueError(f"overrides: unknown SceneParams field(s) {sorted(unknown)}")

    def pick(name: str, value: Any) -> Any:
        return fixed[name] if name in fixed else value

    lights, ambient, ambient_kelvin = sample_lights(rng)
    base = SceneParams(
        size=tuple(pick("size", size)),
        tile_mm=pick("tile_mm", float(rng.uniform(51, 75))),
        tile_gap_mm=pick("tile_gap_mm", float(rng.uniform(0.3, 2.5))),
        tile_thickness_mm=pick("tile_thickness_mm", float(rng.uniform(2.0, 3.2))),
        tile_shift_mm=pick("tile_shift_mm", float(rng.uniform(1.0, 2.0))),
        tile_twist_deg=pick("tile_twist_deg", float(rng.uniform(0.5, 1.5))),
        edition=pick("edition", PRINTED_EDITIONS[int(rng.integers(len(PRINTED_EDITIONS)))]),
        palette_jitter=pick("palette_jitter", float(rng.uniform(0, 1))),
        tile_gloss=pick("tile_gloss", float(rng.uniform(0.0, 0.25))),
        layout_seed=pick("layout_seed", int(rng.integers(2 ** 31))),
        table=pick("table", ("wood", "cloth", "plain")[int(rng.integers(3))]),
        table_bgr=pick("table_bgr", TABLE_BGR[int(rng.integers(len(TABLE_BGR)))]),
        fov_deg=pick("fov_deg", float(rng.uniform(62, 66))),
        k1=pick("k1", float(rng.uniform(-0.05, 0.0))),
        k2=pick("k2", 0.0),
        lights=pick("lights", lights),
        ambient=pick("ambient", ambient),
        ambient_kelvin=pick("ambient_kelvin", ambient_kelvin),
        window_deg=pick("window_deg", float(rng.uniform(0, 360))),
        awb=pick("awb", float(rng.uniform(0.4, 0.95))),
        exposure=pick("exposure", float(rng.uniform(0.8, 1.2))),
        vignette=pick("vignette", float(rng.uniform(0.0, 0.35))),
        tower_look=pick("tower_look", ("opaque", "translucent")[int(rng.integers(2))]),
        dome_look=pick("dome_look", ("bead", "coin")[int(rng.integers(2))]),
        dome_mm=pick("dome_mm", float(rng.uniform(18, 22))),
        piece_jitter_mm=pick("piece_jitter_mm", float(rng.uniform(0.5, 2.0))),
        pips=pick("pips", bool(rng.random() < 0.5)),
        noise=pick("noise", float(rng.uniform(0.002, 0.012))),
        shot_noise=pick("shot_noise", float(rng.uniform(0.004, 0.02))),
        blur_sigma=pick("blur_sigma", float(rng.uniform(0.3, 1.1))),
        jpeg_quality=pick("jpeg_quality", None if rng.random() < 0.5 else int(rng.integers(70, 96))),
        mat=pick("mat", Mat(marker_mm=float(rng.uniform(20, 35)), margin_mm=float(rng.uniform(4, 12)))
                 if rng.random() < 0.2 else None),
        spare_pieces=pick("spare_pieces", int(rng.integers(1, 13)) if rng.random() < 0.4 else 0),
    )
    # camera pose: by rejection so the board is in frame at the promised size
    camera_fields = ("camera_height_mm", "tilt_deg", "tilt_azimuth_deg", "yaw_deg", "target_offset_mm")
    best = None
    for _ in range(300):
        fraction = rng.uniform(0.35, 0.80)
        yaw = float(rng.uniform(0, 360))
        tilt = float(rng.uniform(0, 15))
        pitch = base.tile_mm + base.tile_gap_mm
        ang = math.radians(yaw)
        extent = abs(4 * pitch * math.cos(ang)) + abs(5 * pitch * math.sin(ang))
        focal = (base.size[0] / 2) / math.tan(math.radians(base.fov_deg) / 2)
        height = focal * extent / (fraction * base.size[0])
        height = float(np.clip(height + rng.normal(0, 10), 400, 650))
        candidate = dataclasses.replace(
            base,
            camera_height_mm=pick("camera_height_mm", height),
            tilt_deg=pick("tilt_deg", tilt),
            tilt_azimuth_deg=pick("tilt_azimuth_deg", float(rng.uniform(0, 360))),
            yaw_deg=pick("yaw_deg", yaw),
            target_offset_mm=pick("target_offset_mm", (float(rng.normal(0, 15)), float(rng.normal(0, 15)))),
        )
        inside, width_share = board_fit(candidate)
        if best is None:
            best = candidate
        if inside and 0.35 <= width_share <= 0.80:
            best = candidate
            break
        if all(name in fixed for name in camera_fields):
            break
    assert best is not None
    if "hand" not in fixed:
        best = dataclasses.replace(best, hand=sample_hand(rng, best) if rng.random() < hand_probability else None)
    return dataclasses.replace(best, **fixed)


MADE_UP_JITTER = 2.5  # how far past the benchmarks' ink jitter (at most 1) made-up training art goes


def made_up_art(seed: int) -> dict[str, Any]:
    """Overrides that print a training scene in made-up tile art (edition R), inks and piece colours
    jittered up to MADE_UP_JITTER (drawn from the seed, so a cached scene renders again the same)."""
    return {"edition": "R", "palette_jitter": float(np.random.default_rng([seed, 5]).uniform(0, MADE_UP_JITTER))}


def _seed_game(rng: np.random.Generator) -> list[dict[str, Any]]:
    """The positions of the random legal game a scene's generator draws first."""
    return game_positions(int(rng.integers(2 ** 31)))


def random_inputs(seed: int, size: tuple[int, int] = (1640, 1232), position: dict[str, Any] | None = None,
                  overrides: dict[str, Any] | None = None) -> tuple[dict[str, Any], SceneParams]:
    """The position (a random ply of a random legal game, unless given) and parameters of seed's scene."""
    rng = np.random.default_rng([seed, 1])
    if position is None:
        positions = _seed_game(rng)
        position = positions[int(rng.integers(len(positions)))]
    return position, sample_params(rng, size, overrides)


def random_scene(seed: int, size: tuple[int, int] = (1640, 1232), position: dict[str, Any] | None = None,
                 **overrides: Any) -> Scene:
    """One random frame: a random ply of a random legal game (unless `position` is given)."""
    position, params = random_inputs(seed, size, position, overrides)
    return render_scene(position, params, seed)


def empty_board_scene(seed: int, size: tuple[int, int] = (1640, 1232), **overrides: Any) -> Scene:
    """The empty board of the game `random_scene(seed)` draws from, with no hand: what the app's
    setup reads from scratch (camera and lamps drawn as for a scene given its position)."""
    empty = _seed_game(np.random.default_rng([seed, 1]))[0]
    return random_scene(seed, size, empty, **{"hand": None, **overrides})
