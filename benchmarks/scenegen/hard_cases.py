"""Named hard cases of issue 3 ("Hard cases that real tables have"), each as a random scene.

Why a helper: vision tests should name the difficulty they cover, e.g.
``hard_case_scene("black_dome_on_black_tile", seed)`` — and get it for sure,
not by luck of the random draw.  Positions start from a random engine game; where
the case needs a particular piece, that piece is put on a free lot (the board is
then not necessarily reachable by legal play, which reading does not need).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from .geometry import ALL_LOTS, parse_lot, tile_key_of
from .params import Hand, Light
from .positions import game_positions
from .sampling import random_scene
from .render import Scene

HARD_CASES = (
    "black_dome_on_black_tile",
    "black_cap_on_blue_tower",
    "white_cap_warm_light",
    "edge_lean",
    "glare",
    "long_shadows",
    "many_lamps",
    "hand",
)


def _free_lots(position: dict[str, Any], colour: str | None = None) -> list[str]:
    taken = set(position.get("structures") or {})
    lots = [lot for lot in ALL_LOTS if lot not in taken]
    if colour is not None:
        lots = [lot for lot in lots if position["tiles"][tile_key_of(lot)]["color"] == colour]
    return lots


def _put(position: dict[str, Any], rng: np.random.Generator, entry: dict[str, Any], colour: str | None = None,
         lots: list[str] | None = None) -> str:
    """Place entry on a free lot (of a tile of `colour`, or among `lots`); returns the lot."""
    free = _free_lots(position, colour)
    if lots is not None:
        free = [lot for lot in free if lot in lots] or free
    if not free:  # a full board: replace some structure instead
        free = [lot for lot in ALL_LOTS if colour is None or position["tiles"][tile_key_of(lot)]["color"] == colour]
    lot = free[int(rng.integers(len(free)))]
    position.setdefault("structures", {})[lot] = dict(entry)
    return lot


def hard_case_scene(name: str, seed: int = 0, size: tuple[int, int] = (1640, 1232)) -> Scene:
    """A random scene that certainly shows the named hard case (see HARD_CASES)."""
    if name not in HARD_CASES:
        raise ValueError(f"hard case: {name!r} is not one of {HARD_CASES}")
    rng = np.random.default_rng([seed, 4242, HARD_CASES.index(name)])
    game = game_positions(int(rng.integers(2 ** 31)))
    position = copy.deepcopy(game[int(rng.integers(len(game) // 3, len(game)))])
    overrides: dict[str, Any] = {"hand": None}
    if name == "black_dome_on_black_tile":
        for _ in range(2):
            _put(position, rng, {"kind": "dome", "color": "black"}, colour="black")
    elif name == "black_cap_on_blue_tower":
        for _ in range(2):
            _put(position, rng, {"kind": "tower", "color": "blue", "cap": "black"})
    elif name == "white_cap_warm_light":
        for _ in range(2):
            _put(position, rng, {"kind": "tower", "color": str(rng.choice(["red", "green", "blue"])), "cap": "white"})
        lamp = Light((float(rng.uniform(-300, 300)), float(rng.uniform(-300, 300)), float(rng.uniform(700, 1200))),
                     float(rng.uniform(2700, 3000)), 0.85, float(rng.uniform(10, 150)))
        overrides.update(lights=(lamp,), ambient_kelvin=2900.0, awb=float(rng.uniform(0.2, 0.5)))
    elif name == "edge_lean":
        corner_lots = ["A1", "H1", "A10", "H10", "B1", "G10", "A9", "H2"]
        for lot in corner_lots[:6]:
            position.setdefault("structures", {})[lot] = {"kind": "tower", "color": str(rng.choice(["red", "green",
                                                                                                        "blue"]))}
        overrides.update(camera_height_mm=400.0, tile_mm=float(rng.uniform(68, 75)), tilt_deg=float(rng.uniform(8, 15)))
    elif name == "glare":
        for _ in range(3):
            _put(position, rng, {"kind": "dome", "color": str(rng.choice(["red", "green", "blue", "black"]))})
        overrides.update(dome_look="bead", tile_gloss=0.3,
                         lights=(Light((float(rng.uniform(-150, 150)), float(rng.uniform(-150, 150)), 800.0),
                                       float(rng.uniform(4000, 6000)), 0.9, 5.0),))
    elif name == "long_shadows":
        a = rng.uniform(0, 2 * math.pi)
        overrides.update(lights=(Light((1200 * math.cos(a), 1200 * math.sin(a), 650.0), float(rng.uniform(3000, 6000)),
                                       0.9, float(rng.uniform(4, 20))),), ambient=0.15)
    elif name == "many_lamps":
        lights = []
        for k in range(3):
            a = rng.uniform(0, 2 * math.pi)
            lights.append(Light((700 * math.cos(a), 700 * math.sin(a), float(rng.uniform(650, 1200))),
                                (2700.0, 4500.0, 6500.0)[k], 0.45, float(rng.uniform(5, 200))))
        overrides.update(lights=tuple(lights))
    elif name == "hand":
        structures = list((position.get("structures") or {}).keys()) or ["D5"]
        col, row = parse_lot(structures[int(rng.integers(len(structures)))])
        overrides["hand"] = Hand(target_mm=(float((col - 3.5) * 30), float((row - 4.5) * 30)),
                                 angle_deg=float(rng.uniform(0, 360)), height_mm=float(rng.uniform(60, 150)))
    scene = random_scene(int(rng.integers(2 ** 31)), size=size, position=position, **overrides)
    scene.truth["hard_case"] = name
    return scene
