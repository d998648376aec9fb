"""Accuracy and speed of markerless board finding on generated scenes.

``bench_find_board(count, seed)`` renders ``count`` random scenes and runs
:func:`boardcam.vision.find_board.find_board` on each (no markers used, no
intrinsics).  Figures, over the frames *without* a hand unless said:

* ``found_rate`` – share of frames where a board came back with every corner
  within a quarter of a lot of the truth (a wrong board counts as not found);
  ``returned_rate`` – share where anything came back at all;
* ``corner_err_lots`` – median and 95th percentile, over found frames, of the
  worst corner's error in lots (a lot is half a tile);
* ``within_eighth_lot`` – share of frames with every corner within ⅛ lot;
* ``orientation_right`` – share of found frames whose A1 is the reader's A1
  (row 1 = the short side lower in the image);
* ``hand_found_rate`` – ``found_rate`` over the frames with a hand;
* ``mat_found_rate`` – ``found_rate`` over frames whose tiles lie on a printed mat;
* ``placed_rate`` / ``mat_placed_rate`` – the same as ``found_rate`` and
  ``mat_found_rate`` for the reader's placing (:func:`boardcam.vision.reader.locate_board`:
  a mat's markers when seen, refined onto the grid, else markerless), which
  is what ``boardcam read`` and the app's setup use;
* ``ms`` – median and 95th percentile time per frame, one thread.

``edition`` prints every scene in one tile edition ("R": made-up art per
scene); ``empty`` shows each scene's empty board with no hand, the frame the
app's setup reads from scratch.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from bench_vision import CORNER_NAMES, lot_px, truth_in_reader_convention



def corner_errors(found: dict[str, Any], truth: dict[str, Any]) -> tuple[float, bool]:
    """Worst corner error in pixels, whatever the labelling, and whether the labelling is the truth's."""
    f = np.array([found[n] for n in CORNER_NAMES], float)
    t = np.array([truth[n] for n in CORNER_NAMES], float)
    best: tuple[float, bool] | None = None
    for order in (f, f[::-1]):
        for k in range(4):
            err = float(np.max(np.linalg.norm(np.roll(order, k, axis=0) - t, axis=1)))
            same = order is f and k == 0
            if best is None or err < best[0] - 1e-9:
                best = (err, same)
    assert best is not None
    return best


def _scene(seed: int, size: tuple[int, int], edition: str | None, empty: bool) -> Any:
    from scenegen.sampling import empty_board_scene, random_scene

    overrides: dict[str, Any] = {} if edition is None else {"edition": edition}
    return (empty_board_scene if empty else random_scene)(seed, size, **overrides)


def _worst_lots(pose: Any, corners: dict[str, Any]) -> float:
    if pose is None:
        return float("inf")
    return corner_errors(pose.to_json()["corners_px"], corners)[0] / lot_px(corners)


def bench_find_board(count: int = 100, seed: int = 0, size: tuple[int, int] = (1640, 1232), verbose: bool = False,
                     edition: str | None = None, empty: bool = False) -> dict[str, Any]:
    """Find the board in ``count`` generated scenes; returns the figures in the module docstring."""
    import cv2

    from boardcam.vision.errors import BoardNotFoundError
    from boardcam.vision.find_board import find_board
    from boardcam.vision.reader import locate_board

    cv2.setNumThreads(1)
    errors: list[float] = []
    times: list[float] = []
    plain = plain_found = returned = eighth = oriented = 0
    hands = hands_found = mats = mats_found = placed = mats_placed = 0
    failures: list[int] = []
    for index in range(count):
        scene = _scene(seed + index, size, edition, empty)
        corners, _ = truth_in_reader_convention(scene.truth)
        params = scene.truth["params"]
        start = time.perf_counter()
        try:
            pose = find_board(scene.image)
        except BoardNotFoundError:
            pose = None
        times.append((time.perf_counter() - start) * 1000)
        ok = False
        err_lots = float("inf")
        same = False
        if pose is not None:
            err_px, same = corner_errors(pose.to_json()["corners_px"], corners)
            err_lots = err_px / lot_px(corners)
            ok = err_lots <= 0.25
        if verbose:
            print(seed + index, "hand" if params.get("hand") else "", "mat" if params.get("mat") else "",
                  params["edition"], f"{err_lots:.3f}", same, f"{times[-1]:.0f}ms", flush=True)
        if params.get("hand"):
            hands += 1
            hands_found += ok
            continue
        try:
            placed_pose = locate_board(scene.image, None, None)[0]
        except BoardNotFoundError:
            placed_pose = None
        placed_ok = _worst_lots(placed_pose, corners) <= 0.25
        if params.get("mat"):
            mats += 1
            mats_found += ok
            mats_placed += placed_ok
        placed += placed_ok
        plain += 1
        returned += pose is not None
        plain_found += ok
        if ok:
            errors.append(err_lots)
            eighth += err_lots <= 0.125
            oriented += same
        else:
            failures.append(seed + index)
    return {
        "scenes": count,
        "frames_without_hand": plain,
        "found_rate": plain_found / max(plain, 1),
        "returned_rate": returned / max(plain, 1),
        "corner_err_lots": {
            "median": statistics.median(errors) if errors else None,
            "p95": float(np.percentile(errors, 95)) if errors else None,
        },
        "within_eighth_lot": eighth / max(plain, 1),
        "orientation_right": oriented / max(plain_found, 1),
        "hand_frames": hands,
        "hand_found_rate": hands_found / max(hands, 1),
        "mat_frames": mats,
        "mat_found_rate": mats_found / max(mats, 1),
        "placed_rate": placed / max(plain, 1),
        "mat_placed_rate": mats_placed / max(mats, 1),
        "ms": {"median": statistics.median(times), "p95": float(np.percentile(times, 95))},
        "failed_seeds": failures,
    }


if __name__ == "__main__":
    import json
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(json.dumps(bench_find_board(n, s, verbose=True), indent=2))
