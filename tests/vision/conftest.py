"""Shared generated scenes for the vision tests (small frames keep the suite quick)."""

from __future__ import annotations

import functools
from typing import Any

import pytest

SMALL = (820, 616)


def simple_position(structures: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fixed legal-looking layout: guilds cycle over the tiles, icons on varied lots."""
    colours = ["red", "blue", "green", "black"]
    tiles = {}
    n = 0
    for row in range(1, 11, 2):
        for col in range(0, 8, 2):
            key = f"{'ABCDEFGH'[col]}{row}"
            dx, dy = [(0, 0), (1, 0), (0, 1), (1, 1)][(n * 3) % 4]
            tiles[key] = {"color": colours[(n + row // 2) % 4], "icon": f"{'ABCDEFGH'[col + dx]}{row + dy}"}
            n += 1
    return {"game": "alien-city", "tiles": tiles, "structures": structures or {}}


@functools.lru_cache(maxsize=16)
def _render(key: tuple[Any, ...]) -> Any:
    from scenegen import SceneParams, render_scene

    structures, overrides = key
    params = SceneParams(size=SMALL, **dict(overrides))
    return render_scene(simple_position(dict((k, dict(v)) for k, v in structures)), params, seed=3)


def scene(structures: dict[str, Any] | None = None, **overrides: Any) -> Any:
    frozen = tuple(sorted((k, tuple(sorted(v.items()))) for k, v in (structures or {}).items()))
    return _render((frozen, tuple(sorted(overrides.items()))))


@pytest.fixture
def make_scene() -> Any:
    return scene
