"""Assembling the app from the configuration: source, reader, lights, display, log, referee.

Kept apart from the loop so tests and the demo can swap any part (a scripted
source, a fake reader, mock pins, a PNG-recording display) and still get the
same wiring — including picking up an unfinished game after a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .config import Config
from .display import Display, open_display
from .gamelog import GameLog, game_from_records, games_dir, read_records, unfinished_game
from .lights import open_lights
from .loop import LightsLike, Reader, RefereeLoop
from .motion import MotionDetector
from .referee import Observation, Referee
from .sources import FrameSource, open_source

log = logging.getLogger(__name__)


class VisionReader:
    """The real board reader: ``boardcam.vision.read_board`` with the stored calibration.

    After the board moved (hands, a bump) the board is searched afresh — a
    knocked camera or board must never be read through a stale pose — and
    only when that search fails is the last good pose used.  Looking again at
    a still board reuses the pose, which skips the search.
    """

    def __init__(self, calibration: Any = None) -> None:
        from boardcam.vision import read_board

        self._read_board = read_board
        self._parts = _vision_parts(calibration)
        self._pose: Any = self._parts.pop("pose", None)
        self._search = True

    def board_moved(self) -> None:
        self._search = True

    def __call__(self, image: np.ndarray) -> Observation:
        from boardcam.engine.errors import InputError

        if self._search or self._pose is None:
            try:
                reading = self._read_board(image, pose=None, **self._parts)
            except InputError:
                if self._pose is None:
                    raise
                reading = self._read_board(image, pose=self._pose, **self._parts)
        else:
            reading = self._read_board(image, pose=self._pose, **self._parts)
        self._pose = getattr(reading, "pose", None) or self._pose
        self._search = False
        return Observation.from_reading(reading)


def vision_reader(calibration: Any = None) -> Reader:
    return VisionReader(calibration)


def _vision_parts(calibration: Any) -> dict[str, Any]:
    """Turn the calibration's stored JSON into the vision's objects (missing parts stay None)."""
    if calibration is None:
        return {}
    from boardcam.vision import models

    parts: dict[str, Any] = {}
    for name, cls_name, key in (("intrinsics", "CameraIntrinsics", "intrinsics"),
                                ("appearance", "Appearance", "appearance")):
        doc = getattr(calibration, key, None)
        if doc:
            try:
                parts[name] = getattr(models, cls_name).from_json(doc)
            except Exception as error:  # a stale calibration must not stop the referee
                log.warning("calibration %s unusable (%s); reading without it", key, error)
    board = getattr(calibration, "board", None)
    if board and "corners_px" in board:
        try:
            parts["pose"] = models.BoardPose.from_json(board)
        except Exception as error:
            log.warning("calibration board pose unusable (%s)", error)
    mat = getattr(calibration, "mat", None)
    if mat:
        try:
            from boardcam.vision.mat import MatSpec

            parts["mat"] = MatSpec.from_json(mat)
        except Exception as error:
            log.warning("calibration mat unusable (%s)", error)
    return parts


def create_loop(
    config: Config,
    *,
    source: FrameSource | None = None,
    reader: Reader | None = None,
    lights: LightsLike | None = None,
    display: Display | None = None,
    log_dir: Path | None = None,
    heartbeat: Callable[[], None] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> RefereeLoop:
    """A ready loop; resumes the newest unfinished game in the log directory."""
    if source is None:
        source = open_source(config.source.spec, width=config.source.width,
                             height=config.source.height, fps=config.source.fps,
                             lores_width=config.source.lores_width)
    if reader is None:
        from boardcam.calibration.store import load_calibration

        reader = vision_reader(load_calibration())
    directory = log_dir if log_dir is not None else games_dir(config.logging.game_dir)
    gamelog = GameLog(directory)
    referee = Referee(config.game.rules, min_confidence=config.motion.min_confidence,
                      max_looks=config.motion.max_looks)
    initial = None
    unfinished = unfinished_game(directory)
    if unfinished is not None:
        try:
            game = game_from_records(read_records(unfinished), str(unfinished))
        except Exception as error:  # a damaged log starts a new game rather than no game
            log.warning("cannot resume %s (%s); starting fresh", unfinished, error)
        else:
            gamelog.continue_game(unfinished)
            initial = referee.resume(game)
            log.info("resumed %s at ply %d", unfinished.name, game.ply)
    motion = MotionDetector(pixel_threshold=config.motion.pixel_threshold,
                            motion_fraction=config.motion.motion_fraction,
                            still_frames=config.motion.still_frames)
    extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
    loop = RefereeLoop(
        source, referee, reader,
        lights=lights if lights is not None else open_lights(config.pins),
        display=display if display is not None else open_display(config.display),
        gamelog=gamelog, motion=motion, lores_width=config.source.lores_width,
        heartbeat=heartbeat, **extra,
    )
    loop.start(initial)
    return loop

