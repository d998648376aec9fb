"""The frame loop: source → motion check → (when still) board read → referee → outputs + log.

Everything with a side effect lives here, around the pure referee.  The loop
is built to keep refereeing through trouble: a camera that stops delivering
is closed and reopened with a back-off (the game stays in memory), a display
that vanishes is dropped (the lights and the log go on), a full disk is
shown on the screen while the log waits in memory.

Latency is measured in the frames' own time domain, as a queue: a frame's
processing starts when it arrives or when the previous one is done, and
ends after its measured processing time.  On a live camera that is wall time;
on a replay at 30 fps it is what a live camera would have seen.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from boardcam.engine.errors import InputError

from .display import Display, NullDisplay
from .gamelog import GameLog
from .lights import ButtonEvent, Light, NoLights
from .motion import MotionDetector
from .referee import Observation, Outputs, Phase, Referee
from .sources.base import Frame, FrameSource, SourceError, SourceStalledError, make_lores

log = logging.getLogger(__name__)

#: how long a replay's last picture stays on the table, at most, while the referee still asks to look again
FINAL_STILL_S = 5.0

Reader = Callable[[np.ndarray], Observation]


class LightsLike(Protocol):
    def show(self, light: Light) -> None: ...

    def beep(self, beep: Any) -> None: ...

    def poll(self) -> list[ButtonEvent]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class LoopEvent:
    """Something the players would notice: a verdict, a new light, a new screen."""

    frame_index: int
    time: float  # frame-time domain, when the outputs were ready
    outputs: Outputs
    latency_ms: float | None  # from the last frame with motion, when this answered a board change


@dataclass
class LoopStats:
    frames: int = 0
    reads: int = 0
    read_failures: int = 0
    camera_errors: int = 0
    busy_s: float = 0.0  # CPU time spent in the loop (process time)
    events: list[LoopEvent] = field(default_factory=list)


class RefereeLoop:
    def __init__(
        self,
        source: FrameSource,
        referee: Referee,
        reader: Reader,
        *,
        lights: LightsLike | None = None,
        display: Display | None = None,
        gamelog: GameLog | None = None,
        motion: MotionDetector | None = None,
        lores_width: int = 160,
        reopen_delays: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0),
        sleep: Callable[[float], None] = time.sleep,
        heartbeat: Callable[[], None] | None = None,
        page_every_s: float = 4.0,
    ) -> None:
        self.source = source
        self.referee = referee
        self.reader = reader
        self.lights: LightsLike = lights or NoLights()
        self.display: Display = display or NullDisplay()
        self.gamelog = gamelog
        self.motion = motion or MotionDetector()
        self.lores_width = lores_width
        self.reopen_delays = reopen_delays
        self.sleep = sleep
        self.heartbeat = heartbeat
        self.page_every_s = page_every_s
        self.stats = LoopStats()
        self.camera_problem = ""
        self.display_problem = ""
        self.board_problem = ""
        self._need_read = True
        self._read_after = -1  # frame index before which a retry read waits
        self._last_motion_time: float | None = None
        self._answered_motion = True
        self._busy_until = 0.0
        self._opened = False
        self._delivered = False  # has the source ever delivered a frame?
        self._failures = 0
        self._last_page_time = 0.0
        self._shown: Outputs | None = None
        self._last_frame: Frame | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self, initial: Outputs | None = None) -> None:
        self._open_source()
        self._apply(initial or self.referee.outputs, frame_index=-1, now=0.0)

    def close(self) -> None:
        for closer in (self.source.close, self.lights.close, self.display.close):
            try:
                closer()
            except Exception as error:
                log.debug("closing: %s", error)

    def run(self, max_frames: int | None = None) -> LoopStats:
        """Run until the replay ends (or ``max_frames``); a live camera runs until interrupted."""
        if not self._opened:
            self.start()
        try:
            while max_frames is None or self.stats.frames < max_frames:
                if not self.step():
                    break
        finally:
            if self.gamelog is not None:
                self.gamelog.flush()
        return self.stats

    def end_recording(self) -> None:
        """The replay ran out: end the game under way (see Referee.recording_ended) and log it.

        First the table stays as the last picture shows it, for at most
        FINAL_STILL_S, while the referee still asks to look again: at a real
        table the last move stays on the board while the app makes up its
        mind, but a recording that ends on the photo of that move would end
        the game before an unsure last build is judged (path-traced game
        132: its last move, read at 0.899, was still being looked at when
        its photo ended, and was never logged).
        """
        last, fps = self._last_frame, float(getattr(self.source, "fps", 30.0))
        if last is not None:
            for step in range(1, round(FINAL_STILL_S * fps) + 1):
                if not self._need_read or self.referee.phase is Phase.OVER:
                    break
                self._frame(Frame(last.image, last.lores, last.timestamp + step / fps, last.index + step))
        self._apply(self.referee.recording_ended(), max(self.stats.frames - 1, 0), self._busy_until)
        if self.gamelog is not None:
            self.gamelog.flush()

    # ----------------------------------------------------------------- steps

    def step(self) -> bool:
        """One frame.  False when the source has no more frames (end of a replay)."""
        try:
            frame = self.source.read(timeout=2.0)
        except StopIteration:
            return False
        except SourceError as error:
            if not self._delivered and not isinstance(error, SourceStalledError):
                raise  # never one frame: a setup problem (wrong device, missing module), not a hiccup
            self._camera_trouble(error)
            return True
        self._delivered = True
        if self.camera_problem:
            log.warning("camera is back")
            self.camera_problem = ""
            self._failures = 0
            self._redraw(frame)
        started_cpu = time.process_time()
        started = time.perf_counter()
        self._last_frame = frame
        self._frame(frame)
        elapsed = time.perf_counter() - started
        self.stats.busy_s += time.process_time() - started_cpu
        self._busy_until = max(self._busy_until, frame.timestamp) + elapsed
        self.stats.frames += 1
        if self.heartbeat is not None:
            self.heartbeat()
        return True

    def _frame(self, frame: Frame) -> None:
        for event in self.lights.poll():
            outputs = self.referee.press(event)
            if outputs.board_clear:
                self._take_as_clear()
            self._apply(outputs, frame.index, self._now(frame))
        lores = frame.lores if frame.lores is not None else make_lores(frame.image, self.lores_width)
        if frame.cut:
            self.motion.reset()  # the next photo of a series: whatever changed, it came with no motion filmed
        state = self.motion.update(lores)
        if state.moving or (state.changed_since_read and not self._need_read):  # a change no motion showed
            self._last_motion_time = frame.timestamp
            self._answered_motion = False
            self.referee.board_moved()
            moved = getattr(self.reader, "board_moved", None)
            if moved is not None:
                moved()
            self._need_read = True
            self._read_after = -1
        if state.settled and self._need_read and frame.index >= self._read_after:
            self._read(frame)
        if frame.timestamp - self._last_page_time >= self.page_every_s:
            self._last_page_time = frame.timestamp
            next_page = getattr(self.display, "next_page", None)
            if next_page is not None:
                self._guard_display(next_page)

    def _read(self, frame: Frame) -> None:
        self.stats.reads += 1
        self.motion.note_read()
        try:
            observation = self.reader(frame.image)
        except Exception as error:
            # BoardNotFoundError and friends (InputError): the board is covered or
            # gone.  Anything else is a vision bug on an odd frame: logged with its
            # traceback, but the referee keeps the game and tries the next still board.
            self.stats.read_failures += 1
            self._read_after = frame.index + self.motion.still_needed
            if not isinstance(error, InputError):
                log.exception("reading the board failed")
            if not self.board_problem:
                if type(error).__name__ == "BoardNotFoundError":
                    self.board_problem = f"board not found ({error})"
                elif isinstance(error, InputError):
                    self.board_problem = f"unreadable board ({error})"
                else:
                    self.board_problem = f"vision error ({type(error).__name__})"
                log.info("%s", self.board_problem)
                self._redraw(frame)
            return
        if self.board_problem:
            self.board_problem = ""
            self._redraw(frame)
        if observation.occluded:
            self._read_after = frame.index + self.motion.still_needed
            return
        outputs = self.referee.observe(observation)
        self._need_read = outputs.look_again
        self._read_after = frame.index + 1
        self._apply(outputs, frame.index, self._now(frame))

    def _take_as_clear(self) -> None:
        """The players vouched for a clear board: the reader takes the board it last read as the
        empty one (a reader without an empty reference has nothing to take), and the next still
        frame is read."""
        take = getattr(self.reader, "take_as_clear", None)
        if take is not None:
            take()
        self._need_read = True
        self._read_after = -1

    def _now(self, frame: Frame) -> float:
        """Frame-time when the current processing will be done (see the module docstring)."""
        return max(self._busy_until, frame.timestamp)

    # --------------------------------------------------------------- outputs

    def _apply(self, outputs: Outputs, frame_index: int, now: float) -> None:
        try:
            self.lights.show(outputs.light)
            if outputs.beep is not None:
                self.lights.beep(outputs.beep)
        except Exception as error:  # a GPIO hiccup must not stop the referee
            log.warning("lights: %s", error)
        if outputs.records and self.gamelog is not None:
            self.gamelog.append(outputs.records)
        elif self.gamelog is not None and self.gamelog.pending:
            self.gamelog.flush()  # retry after a full disk
        self._show(outputs)
        changed = self._shown is None or outputs.light != self._shown.light or \
            outputs.screen != self._shown.screen or bool(outputs.records)
        self._shown = outputs
        if changed:
            latency = None
            if outputs.records and not self._answered_motion and self._last_motion_time is not None:
                latency = (now - self._last_motion_time) * 1000.0
                self._answered_motion = True
            self.stats.events.append(LoopEvent(frame_index, now, outputs, latency))

    def _status(self) -> tuple[str, ...]:
        problems = [self.camera_problem, self.board_problem,
                    self.gamelog.problem if self.gamelog else "", self.display_problem]
        return tuple(p for p in problems if p)

    def _show(self, outputs: Outputs) -> None:
        screen = outputs.screen.with_status(self._status())
        self._guard_display(lambda: self.display.show(screen))

    def _redraw(self, frame: Frame) -> None:
        self._show(self.referee.outputs)

    def _guard_display(self, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception as error:  # I2C/SPI errors surface as OSError or luma's own errors
            self.display_problem = "display lost"
            log.warning("display failed (%s); going on without it", error)
            try:
                self.display.close()
            except Exception:
                pass
            self.display = NullDisplay()

    # ---------------------------------------------------------------- camera

    def _open_source(self) -> None:
        self.source.open()
        self._opened = True

    def _camera_trouble(self, error: Exception) -> None:
        """Close, wait a little longer each time, reopen; the game stays in memory."""
        self.stats.camera_errors += 1
        kind = "not responding" if isinstance(error, SourceStalledError) else "unreadable"
        self.camera_problem = f"camera {kind}"
        log.warning("camera: %s", error)
        self._show(self.referee.outputs)
        delay = self.reopen_delays[min(self._failures, len(self.reopen_delays) - 1)]
        self._failures += 1
        try:
            self.source.close()
        except Exception as close_error:
            log.debug("closing the camera: %s", close_error)
        self.sleep(delay)
        try:
            self.source.open()
        except SourceError as open_error:
            log.warning("camera reopen failed: %s", open_error)
        self.motion.reset()
        self._need_read = True
