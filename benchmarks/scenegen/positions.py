"""Positions to render: parsing Position JSON and drawing random game positions.

Random positions come from the engine's random legal games
(``boardcam.engine.aliencity.random_positions``) so benchmarks see boards that
really occur.  A small stand-in generator exists only for when the engine is
not importable (it places pieces without checking the rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .geometry import ALL_LOTS, TILE_KEYS, lot_name, parse_lot, tile_key_of

GUILDS = ("red", "blue", "green", "black")
TOWER_COLOURS = ("red", "blue", "green")
CAP_COLOURS = ("white", "black")


@dataclass(frozen=True)
class TileArt:
    key: str
    color: str
    icon_lot: str


@dataclass(frozen=True)
class Structure:
    lot: str
    kind: str  # 'tower' | 'dome'
    color: str
    cap: str | None


def parse_position(position: dict[str, Any]) -> tuple[dict[str, TileArt], dict[str, Structure]]:
    """Read Position JSON (see issue 2) into tiles and structures; errors name the field."""
    tiles_json = position.get("tiles")
    if not isinstance(tiles_json, dict):
        raise ValueError("position.tiles: missing or not an object")
    tiles: dict[str, TileArt] = {}
    for key in TILE_KEYS:
        entry = tiles_json.get(key)
        if not isinstance(entry, dict):
            raise ValueError(f"position.tiles.{key}: missing")
        color = entry.get("color")
        icon = entry.get("icon")
        if color not in GUILDS:
            raise ValueError(f"position.tiles.{key}.color: {color!r} is not one of {GUILDS}")
        if not isinstance(icon, str) or tile_key_of(icon) != key:
            raise ValueError(f"position.tiles.{key}.icon: {icon!r} is not a lot of this tile")
        tiles[key] = TileArt(key, color, icon)
    structures: dict[str, Structure] = {}
    for lot, entry in (position.get("structures") or {}).items():
        parse_lot(lot)
        kind = entry.get("kind")
        color = entry.get("color")
        cap = entry.get("cap")
        if kind == "tower":
            if color not in TOWER_COLOURS:
                raise ValueError(f"position.structures.{lot}.color: {color!r} is not a tower colour")
            if cap not in (None, *CAP_COLOURS):
                raise ValueError(f"position.structures.{lot}.cap: {cap!r}")
        elif kind == "dome":
            if color not in GUILDS:
                raise ValueError(f"position.structures.{lot}.color: {color!r} is not a dome colour")
            cap = None
        else:
            raise ValueError(f"position.structures.{lot}.kind: {kind!r} is not 'tower' or 'dome'")
        structures[lot] = Structure(lot, kind, color, cap)
    return tiles, structures


def _stand_in_positions(seed: int) -> list[dict[str, Any]]:
    """Plausible but unchecked game positions (only used without the engine)."""
    rng = np.random.default_rng([seed, 7])
    colours = [c for c in GUILDS for _ in range(5)]
    rng.shuffle(colours)
    tiles: dict[str, Any] = {}
    for key, colour in zip(TILE_KEYS, colours):
        col, row = parse_lot(key)
        dc, dr = divmod(int(rng.integers(4)), 2)
        tiles[key] = {"color": colour, "icon": lot_name(col + dc, row + dr)}
    supply = (["tower:red"] * 5 + ["tower:blue"] * 5 + ["tower:green"] * 4
              + [f"dome:{c}" for c in GUILDS for _ in range(6)])
    order = rng.permutation(len(supply))
    lots = list(rng.permutation(len(ALL_LOTS)))
    caps = {"white": 3, "black": 3}
    structures: dict[str, Any] = {}
    positions = [{"game": "alien-city", "tiles": tiles, "structures": {}}]
    for ply, index in enumerate(order[: int(rng.integers(30, 45))]):
        kind, colour = supply[index].split(":")
        lot = ALL_LOTS[lots.pop()]
        entry: dict[str, Any] = {"kind": kind, "color": colour}
        if kind == "tower":
            entry["cap"] = None
        structures[lot] = entry
        mover = "black" if ply % 2 == 0 else "white"
        towers = [k for k, v in structures.items() if v["kind"] == "tower" and v["cap"] is None]
        if towers and caps[mover] and rng.random() < 0.25:
            structures[towers[int(rng.integers(len(towers)))]]["cap"] = mover
            caps[mover] -= 1
        positions.append({"game": "alien-city", "tiles": tiles,
                          "structures": {k: dict(v) for k, v in structures.items()}})
    return positions


def game_positions(seed: int) -> list[dict[str, Any]]:
    """Positions after each ply of a random legal game (engine), index 0 = empty board."""
    try:
        from boardcam.engine.aliencity import random_positions
    except ImportError:
        return _stand_in_positions(seed)
    return list(random_positions(seed))


#: why a game for photographing needs the engine (the CLIs' refusal, after their option's name)
ENGINE_NEEDED = ("needs the boardcam engine importable (e.g. PYTHONPATH=../engine): without it the moves are "
                 "a stand-in, not a legal game")


def engine_available() -> bool:
    try:
        from boardcam.engine.aliencity import random_positions  # noqa: F401
    except ImportError:
        return False
    return True
