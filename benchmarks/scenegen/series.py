"""A game being played in front of a fixed camera: frames for replay tests and `boardcam demo`.

Between moves a hand reaches to the lot that changes (first with the old
position, then with the new piece already placed), so the app's motion and
occlusion logic is exercised the way a real table does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .geometry import make_layout
from .params import Hand, SceneParams
from .render import Scene, render_scene
from .sampling import relit, sample_hand, sample_params


def _changed_lot(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    old = before.get("structures") or {}
    new = after.get("structures") or {}
    for lot in sorted(set(old) | set(new)):
        if old.get(lot) != new.get(lot):
            return str(lot)
    return None


def scene_series(seed: int, positions: Iterable[dict[str, Any]], frames_per_position: int = 2, *,
                 hands: bool = True, light_change_at: Iterable[int] = (), bump_at: Iterable[int] = (),
                 size: tuple[int, int] = (1640, 1232), params: SceneParams | None = None,
                 **overrides: Any) -> Iterator[Scene]:
    """Yield frames of `positions` played in order with the same camera and lights.

    - frames_per_position still frames of each position;
    - hands: before each new position, two frames with a hand over the lot that
      changes (truth occluded=True when it covers lots);
    - light_change_at: frame indices from which a new set of lamps shines;
    - bump_at: frame indices from which the camera sits slightly moved (a knock).
    Each truth carries "frame_index", "position_index" and "hand" (bool).
    """
    rng = np.random.default_rng([seed, 77])
    if params is None:
        overrides.setdefault("hand", None)
        params = sample_params(rng, size, overrides)
    light_changes = set(light_change_at)
    bumps = set(bump_at)
    layout = make_layout(params)
    current = params
    frame_index = 0
    previous: dict[str, Any] | None = None

    def emit(position: dict[str, Any], position_index: int, hand: Hand | None) -> Scene:
        nonlocal current, frame_index
        if frame_index in light_changes:
            current = relit(current, rng)
        if frame_index in bumps:
            current = dataclasses.replace(
                current,
                yaw_deg=current.yaw_deg + float(rng.normal(0, 0.4)),
                tilt_deg=float(np.clip(current.tilt_deg + rng.normal(0, 0.3), 0, 20)),
                target_offset_mm=(current.target_offset_mm[0] + float(rng.normal(0, 1.5)),
                                  current.target_offset_mm[1] + float(rng.normal(0, 1.5))),
            )
        scene = render_scene(position, dataclasses.replace(current, hand=hand), seed * 100003 + frame_index,
                             table_view=params)
        scene.truth["frame_index"] = frame_index
        scene.truth["position_index"] = position_index
        scene.truth["hand"] = hand is not None
        frame_index += 1
        return scene

    for index, position in enumerate(positions):
        if hands and previous is not None:
            lot = _changed_lot(previous, position)
            hand = sample_hand(rng, current)
            if lot is not None:
                centre = layout.lot_centre(lot)
                # fingertips on the lot: the palm centre lies ~80 mm back towards the player
                angle = np.radians(hand.angle_deg)
                target = (float(centre[0] + 80 * np.cos(angle)), float(centre[1] + 80 * np.sin(angle)))
                hand = dataclasses.replace(hand, target_mm=target, height_mm=float(rng.uniform(55, 110)))
            yield emit(previous, index - 1, hand)
            yield emit(position, index, dataclasses.replace(hand, height_mm=hand.height_mm + 40,
                                                            target_mm=(hand.target_mm[0] + 60 * np.cos(np.radians(hand.angle_deg)),
                                                                       hand.target_mm[1] + 60 * np.sin(np.radians(hand.angle_deg)))))
        for _ in range(frames_per_position):
            yield emit(position, index, None)
        previous = position
