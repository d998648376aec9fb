"""Replayed frames: a folder of images, a video file, or a generated game.

Replays drive the tests, the demo and the benchmark, so their timestamps are
*simulated* (``index / fps``) unless ``realtime`` is asked for: a replay then
runs as fast as the machine allows while the loop still sees 30 fps time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .base import Frame, SourceBase, SourceError, make_lores

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".mjpeg", ".h264")


class ReplaySource(SourceBase):
    """Frames from any iterable of BGR images, produced lazily at ``open``.

    ``images`` is a zero-argument callable so a source can be reopened (the
    loop reopens sources after errors) and restart from the beginning.

    With ``hold_frames`` > 1 every picture is shown that many frames, the
    first of them marked ``cut``: photos taken one per move show a still
    table each, and the app reads a board only after several quiet frames
    and a change (a new piece alone may differ too little from the last
    photo to count as motion).  Frames cut from a video need no holding.
    """

    def __init__(
        self,
        images: Callable[[], Iterable[Any]],
        *,
        name: str = "replay",
        fps: float = 30.0,
        realtime: bool = False,
        lores_width: int = 160,
        on_item: Callable[[int, Any], None] | None = None,
        make_lores: bool = False,
        hold_frames: int = 1,
    ) -> None:
        if hold_frames < 1:
            raise SourceError(f"replay: each picture must be shown at least one frame, not {hold_frames}")
        self.name = name
        self.make_lores = make_lores
        self.fps = fps
        self.realtime = realtime
        self.lores_width = lores_width
        self._images = images
        self._iterator: Iterator[Any] | None = None
        self._count = 0
        self._started = 0.0
        self._on_item = on_item
        self.hold_frames = hold_frames
        self._held: tuple[Any, int] | None = None  # the picture being held, and for how many more frames

    def open(self) -> None:
        self._iterator = iter(self._images())
        self._held = None
        self._count = 0
        self._started = time.monotonic()

    def read(self, timeout: float = 2.0) -> Frame:
        if self._iterator is None:
            raise SourceError(f"{self.name}: read before open")
        cut = self._held is None or self._held[1] == 0
        if cut:
            self._held = (next(self._iterator), self.hold_frames)  # StopIteration ends the replay
        assert self._held is not None
        item, left = self._held
        self._held = (item, left - 1)
        if self._on_item is not None:
            self._on_item(self._count, item)
        image = _image_of(item)
        if self.realtime:
            due = self._started + self._count / self.fps
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            timestamp = time.monotonic()
        else:
            timestamp = self._count / self.fps
        frame = Frame(
            image=image,
            # The loop makes the small frame itself, so its cost counts in the
            # benchmark's CPU figure (a webcam pays it too; the Pi's ISP does not).
            lores=make_lores(image, self.lores_width) if self.make_lores else None,
            timestamp=timestamp,
            index=self._count,
            cut=cut and self.hold_frames > 1,
        )
        self._count += 1
        return frame

    def close(self) -> None:
        self._iterator = None


def _image_of(item: Any) -> np.ndarray:
    """Accept a bare image, a scene object with ``.image`` or an ``(image, ...)`` tuple."""
    if isinstance(item, np.ndarray):
        image = item
    elif hasattr(item, "image"):
        image = item.image
    elif isinstance(item, tuple) and item and isinstance(item[0], np.ndarray):
        image = item[0]
    else:
        raise SourceError(f"replay: cannot use a {type(item).__name__} as a frame")
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    return np.ascontiguousarray(image, dtype=np.uint8)


def folder_images(folder: Path) -> Callable[[], Iterator[np.ndarray]]:
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise SourceError(f"replay: no images ({', '.join(IMAGE_SUFFIXES)}) in {folder}")
    return picture_images(files)


def picture_images(files: list[Path]) -> Callable[[], Iterator[np.ndarray]]:
    """The pictures, read one at a time as the replay reaches them (a long series never sits in memory)."""

    def generate() -> Iterator[np.ndarray]:
        import cv2

        for path in files:
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                raise SourceError(f"replay: unreadable image {path}")
            yield image

    return generate


def video_images(path: Path) -> Callable[[], Iterator[np.ndarray]]:
    def generate() -> Iterator[np.ndarray]:
        import cv2

        capture = cv2.VideoCapture(str(path))
        if not capture.isOpened():
            raise SourceError(f"replay: cannot open video {path}")
        try:
            while True:
                ok, image = capture.read()
                if not ok:
                    return
                yield image
        finally:
            capture.release()

    return generate


@dataclass(frozen=True)
class GeneratedGame:
    """How a generated game is filmed: which positions, how long each is held, what happens."""

    positions: tuple[dict[str, Any], ...]
    seed: int = 0
    hold_frames: int = 15  # frames each still position is held (0.5 s at 30 fps)
    hand_frames: int = 3  # frames each rendered hand picture is held
    size: tuple[int, int] = (820, 616)
    light_change_at: tuple[int, ...] = ()  # rendered-picture indices (see scenegen.scene_series)
    bump_at: tuple[int, ...] = ()
    hands: bool = True
    # SceneParams fields to fix (e.g. yaw_deg near 0 films the board the way
    # round a calibrated camera sees it: row 1 nearest the bottom of the picture)
    scene: tuple[tuple[str, Any], ...] = ()


def generated_game_images(game: GeneratedGame) -> Callable[[], Iterator[Any]]:
    """Frames of a generated game rendered by the scene generator (benchmarks/scenegen).

    Rendering is the slow part, so each still picture is rendered once and
    held for ``hold_frames`` frames (a camera on a still table sees the same
    picture up to noise), and each hand picture for ``hand_frames``.
    """

    def generate() -> Iterator[Any]:
        scene_series = _scene_series()
        scenes = scene_series(game.seed, list(game.positions), 1, hands=game.hands,
                              light_change_at=game.light_change_at, bump_at=game.bump_at,
                              size=game.size, **dict(game.scene))
        for scene in scenes:
            repeat = game.hand_frames if scene.truth.get("hand") else game.hold_frames
            for _ in range(repeat):
                yield scene

    return generate


def _scene_series() -> Callable[..., Iterator[Any]]:
    """The scene generator lives in the checkout's benchmarks/, not in the package."""
    import sys

    try:
        from scenegen import scene_series
    except ImportError:
        checkout = Path(__file__).resolve().parents[4] / "benchmarks"
        if not (checkout / "scenegen").is_dir():
            raise SourceError(
                "replay: generated games need the scene generator in benchmarks/ (run from a checkout)"
            ) from None
        sys.path.insert(0, str(checkout))
        from scenegen import scene_series
    return scene_series  # type: ignore[no-any-return]


def record_positions(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Position JSON after every move of a game record (index 0: the empty board)."""
    from boardcam.engine.aliencity import GameRecord, positions_after_moves

    parsed = GameRecord.from_json(record)
    return positions_after_moves(parsed.tiles, parsed.moves)


def replay_source(target: str, *, fps: float = 30.0, realtime: bool = False,
                  lores_width: int = 160, **options: Any) -> ReplaySource:
    """``replay:PATH`` where PATH is a folder, a video, a game record .json, or ``game:SEED``.

    ``hold_frames``: how many frames each picture of a folder, video or image
    is shown (see :class:`ReplaySource`), or each still position of a game.
    """
    if target.startswith("game:"):
        try:
            seed = int(target[5:] or 0)
        except ValueError:
            raise SourceError(f"replay: game:SEED needs a number, got {target!r}") from None
        from boardcam.engine.aliencity import random_positions

        images = generated_game_images(GeneratedGame(tuple(random_positions(seed)), seed=seed, **options))
        return ReplaySource(images, name=f"replay:{target}", fps=fps, realtime=realtime,
                            lores_width=lores_width)
    path = Path(target).expanduser()
    if not path.exists():
        raise SourceError(f"replay: no such file or folder: {path}")
    hold = int(options.get("hold_frames", 1))  # a game record holds its positions itself
    if path.is_dir():
        images = folder_images(path)
    elif path.suffix.lower() == ".json":
        import json

        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise SourceError(f"replay: {path} is not valid JSON ({error.msg})") from None
        images = generated_game_images(GeneratedGame(tuple(record_positions(record)), **options))
    elif path.suffix.lower() in VIDEO_SUFFIXES:
        images = video_images(path)
    elif path.suffix.lower() in IMAGE_SUFFIXES:
        images = picture_images([path])
    else:
        raise SourceError(f"replay: {path} is neither a folder, a video, an image nor a game record")
    return ReplaySource(images, name=f"replay:{path}", fps=fps, realtime=realtime,
                        lores_width=lores_width, hold_frames=1 if path.suffix.lower() == ".json" else hold)
