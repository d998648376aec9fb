"""Assembling the app from the configuration: source, reader, lights, display, log, referee.

Kept apart from the loop so tests and the demo can swap any part (a scripted
source, a fake reader, mock pins, a PNG-recording display) and still get the
same wiring — including picking up an unfinished game after a restart.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from boardcam.engine.aliencity import parse_lot

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

    It reads the way the vision is most reliable at a table that stays put:

    * the board is searched once (or its pose comes from calibration); after
      that every still frame is read at that pose, and after motion a cheap
      drift check (calibration.drift) decides whether the board or camera was
      bumped — only then is it searched again, so a knock is never read
      through a stale pose and a hand is never a reason for a full search;
    * the first empty board it sees becomes the empty-board reference (or the
      calibration's, taken by ``boardcam calibrate board``): pieces are then
      what differs from it, and the tiles are those read on the empty board;
    * each reading is passed the previous one, so lots that look as they did
      keep their answers and only the lots a hand touched are decided again.
    """

    EMPTY_TILE_CONFIDENCE = 0.5  # below this an "empty board" read is not trusted as the reference
    # a lot read "empty" whose runner-up is a piece at least this probable shows print the network takes
    # for a piece (see _maybe_take_reference)
    PRINT_TAKEN_FOR_PIECE = 0.5
    STILL_COVER_MOVES = 1  # a "hand" that stays put while the board moves this often is no hand
    # lots of a still "hand" that a move under it may change (its piece, its shadow), a tenth of the
    # patch at most, and the patch stays print (see _still_cover)
    MOVED_UNDER_COVER = 2
    NUDGE_PX = 1.5  # a corner this far off the reference's registration: the camera or board was knocked

    def __init__(self, calibration: Any = None) -> None:
        from boardcam.calibration.drift import check_drift, drift_reference
        from boardcam.vision import empty_board_reference, read_board
        from boardcam.vision.align import align_to_reference
        from boardcam.vision.lots import changed_lots
        from boardcam.vision.models import largest_corner_move
        from boardcam.vision.reader import HAND_LOTS, SEARCHED_VIEWS, SURE, layout_read

        self._read_board = read_board
        self._align = align_to_reference
        self._thorough = SEARCHED_VIEWS  # views for a frame that shows a change
        self._empty_board_reference = empty_board_reference
        self._layout_read = layout_read
        self._sure = SURE  # a structure read this surely means the board is not the empty one
        self._hand_lots = HAND_LOTS  # a cover this large is a hand unless its picture stays the same
        self._changed_lots = changed_lots
        self._corner_move = largest_corner_move
        self._drift_reference = drift_reference
        self._check_drift = check_drift
        self._parts = _vision_parts(calibration)
        self._pose: Any = self._parts.pop("pose", None)
        appearance = self._parts.get("appearance")
        self._reference: Any = getattr(appearance, "reference", None)
        self._drift: Any = None
        self._unsure_check: Any = None  # the last drift check, when it could not tell whether the board moved
        self._previous: Any = None
        self._moved = True
        # the lots the last occluded reading saw covered, and how often the board
        # moved (a hand came and went) while the same lots stayed covered
        self._cover: tuple[str, ...] = ()
        self._cover_look: np.ndarray | None = None  # every lot's look in the reading that saw that cover
        self._cover_outlived = 0
        self._moved_since_cover = False
        self._last_clear_candidate: tuple[np.ndarray, Any] | None = None  # the last board read, unhidden
        # the last board read with no pieces whose tiles were too unsure for a reference: the
        # reference after all when a later board shows unsure pieces (see _maybe_take_reference)
        self._doubted_empty: tuple[np.ndarray, Any, dict[str, Any]] | None = None

    def board_moved(self) -> None:
        """Something moved over the board: check for a bump before the next reading."""
        self._moved = True
        self._moved_since_cover = True

    def __call__(self, image: np.ndarray) -> Observation:
        reading = self._read(image)
        self._moved = False
        if getattr(reading, "occluded", False):
            observation = Observation.from_reading(reading)
            if self._still_cover(tuple(getattr(reading, "occluded_lots", ())), getattr(reading, "lot_lab", None)):
                # those lots stay unread (confidence 0), the rest of the board is judged
                return dataclasses.replace(observation, occluded=False)
            return observation
        self._cover = ()
        self._previous = reading
        self._last_clear_candidate = (image, reading.pose)
        if self._maybe_take_reference(image, reading):
            # the prints taken for pieces are the empty look now, or the last
            # empty board is: this frame, which the referee may see only once
            # (a still board is not read again), is read again against it
            reading = self._read_board(image, pose=reading.pose, reference=self._reference, **self._parts)
            self._previous = None if getattr(reading, "occluded", False) else reading
        return Observation.from_reading(reading)

    def take_as_clear(self) -> None:
        """The players say the board last read is clear: it becomes the empty-board reference,
        whatever was read on it (print the vision took surely for pieces), its tiles read as
        those of an empty board."""
        if self._last_clear_candidate is None:
            return
        image, pose = self._last_clear_candidate
        self._reference = self._empty_board_reference(image, pose, intrinsics=self._parts.get("intrinsics"),
                                                      vouched=True)
        self._previous = None
        log.info("board taken as clear on the players' word: its pieces are print")

    def _still_cover(self, lots: tuple[str, ...], look: np.ndarray | None = None) -> bool:
        """Whether lots read as covered (``lots`` now, overlapping the last such reading's) have
        stayed so while the board moved ``STILL_COVER_MOVES`` times: print or shade the vision
        takes for a hand, not a hand.

        Why: a hand over the board comes and goes with the moves; a plain
        tile under a new lamp that the board network sees as skin stays, and
        while it stayed, every frame was "occluded" and the game went
        unwatched (made-up-art game 802 missed eight moves to its A9 corner,
        covered at 0.94).  Such lots are left unread, not the whole board.
        A real hand spans a dozen lots and, photographed twice while it
        moves, overlaps itself (the recorded series).  So a patch of
        ``reader.HAND_LOTS`` lots or more is taken for print only when the
        lots it kept covering also look exactly as they did (``look``: the
        reading's ``lot_lab``; vision's ``changed_lots``): a hand shifts
        between two pictures, a print does not.  After a lamp change in
        made-up-art game 2303 the network saw a hand, at 0.9998, over 31 to
        37 lots of every still frame, and 27 moves went unwatched.  Moves
        go on under such a patch, and each changes a lot or two of it; so
        ``MOVED_UNDER_COVER`` lots may change, if they are at most a tenth
        of the patch (game 2303 again: with no lot allowed to change, every
        move under the patch made it a hand again, the moves there went
        unread until five stood at once, and the game ended in warnings).
        """
        kept = set(lots) & set(self._cover)
        if not kept or (len(lots) >= self._hand_lots and not self._looks_as_before(kept, look)):
            self._cover_outlived = 0  # (overlapping, not equal: a patch's rim lots come and go)
        elif self._moved_since_cover:
            self._cover_outlived += 1
        self._cover = lots
        self._cover_look = look
        self._moved_since_cover = False
        return self._cover_outlived >= self.STILL_COVER_MOVES

    def _looks_as_before(self, lots: set[str], look: np.ndarray | None) -> bool:
        """Whether ``lots`` look as they did in the reading that last saw a cover (too few to be
        a hand's, or any of them changed: no)."""
        before = self._cover_look
        if len(lots) < self._hand_lots or look is None or before is None or before.shape != look.shape:
            return False
        changed = self._changed_lots(look, before)
        moved = sum(bool(changed[parse_lot(name)]) for name in lots)
        return moved <= min(self.MOVED_UNDER_COVER, len(lots) // 10)

    def _read(self, image: np.ndarray) -> Any:
        if self._drift is None:  # first frame, or no good search yet: a calibrated pose is only the fallback
            return self._search(image)
        if self._moved and self._bumped(image):
            log.info("the board or camera moved: searching the board again")
            self._previous = None
            return self._search(image)
        unvouched = self._unsure_check if self._moved else None
        self._unsure_check = None
        reading = self._read_board(image, pose=self._pose, reference=self._reference, previous=self._previous,
                                   **self._parts)
        if unvouched is not None and not getattr(reading, "occluded", False):
            reading = self._nudged(image, reading, unvouched)
        if (self._previous is not None and not getattr(reading, "occluded", False)
                and _structures(reading) != _structures(self._previous)):
            # something was built (or seems to be), in plain view: the verdict
            # rests on this frame, so it is read again in two views, which errs
            # a third less
            reading = self._read_board(image, pose=self._pose, reference=self._reference, previous=self._previous,
                                       views=self._thorough, **self._parts)
        return reading

    def _search(self, image: np.ndarray) -> Any:
        from boardcam.engine.errors import InputError

        try:
            reading = self._read_board(image, pose=None, reference=self._reference, **self._parts)
        except InputError:
            if self._pose is None:
                raise
            log.info("board not found: reading at the last pose")
            return self._read_board(image, pose=self._pose, reference=self._reference, **self._parts)
        if self._pose is not None:  # a re-find names the corners as the game (or calibration) did
            reading = self._same_naming(image, reading)
        # a hand over the board can hide a side and drag the grid off: a pose
        # found under one is used for this frame only, and the search goes on
        if not getattr(reading, "occluded", False):
            reading = self._on_reference(image, reading)
            self._remember_pose(image, reading.pose)
        return reading

    def _on_reference(self, image: np.ndarray, reading: Any) -> Any:
        """The reading again at the found pose registered on the empty-board reference, when there is one.

        A search after a bump puts the grid up to a pixel or so of the warped
        view off where the setup frame had it; compared with the reference,
        every printed edge would then look like a piece.
        """
        if self._reference is None:
            return reading
        aligned = self._align(image, reading.pose, self._reference, self._parts.get("intrinsics"),
                              structures=reading.position_dict.get("structures"))
        if aligned is reading.pose:
            return reading
        return self._read_board(image, pose=aligned, reference=self._reference, **self._parts)

    def _nudged(self, image: np.ndarray, reading: Any, check: Any) -> Any:
        """The reading again at the pose registered on the reference, when the board now lies
        NUDGE_PX or more off it: a knock the drift check (``check``, unsure after this motion) did not see.

        Why: a board filling the frame's height leaves the drift check few
        anchors, and a knock of 3 or 4 pixels is within its tolerance anyway,
        yet every lot is then compared with its empty look a tenth of a lot
        away, and printed edges read as pieces (made-up-art game 2005: 20 of
        38 moves).  The shift is believed only where both halves of the
        board agree on it: a knock that turned the camera is not a shift.
        Registering on the reference's print is absolute, so small knocks
        do not add up.  A steady check is trusted: registering after every
        motion cost printed game 100 eight moves.
        """
        if self._reference is None:
            return reading
        structures = reading.position_dict.get("structures")
        aligned = self._align(image, reading.pose, self._reference, self._parts.get("intrinsics"),
                              structures=structures, halves_agree=True)
        outline_shift = check.agreed_shift() if aligned is reading.pose else None
        if outline_shift is not None:
            aligned = self._registered_as_the_outline_moved(image, reading.pose, structures, outline_shift,
                                                            check.tolerance_px)
        moved = 0.0 if aligned is reading.pose else self._corner_move(aligned, reading.pose)
        if moved < self.NUDGE_PX:
            return reading
        log.info("the board lies %.1f pixels off its pose: reading it where it is", moved)
        self._previous = None  # every lot is sampled elsewhere now
        self._remember_pose(image, aligned)
        return self._read_board(image, pose=aligned, reference=self._reference, **self._parts)

    def _registered_as_the_outline_moved(self, image: np.ndarray, pose: Any, structures: Any,
                                         outline_shift: tuple[float, float], tolerance_px: float) -> Any:
        """The whole board's registration on the reference when it moves the corners as the drift check's
        anchors moved (within the check's tolerance); ``pose`` itself otherwise.

        Why: the two halves of a late board cannot always be registered apart
        (one is too crowded with pieces to have print enough), and then no
        knock was followed.  The outline's anchors, measured on the table
        around the array, are an independent second opinion.  A camera bumped
        by 6 pixels in made-up-art game 3100 went unfollowed: a green dome
        then stood across two lots and was never read, and every later move
        was logged a ply late (19 of 36 moves).
        """
        whole = self._align(image, pose, self._reference, self._parts.get("intrinsics"), structures=structures)
        if whole is pose:
            return pose
        corners_moved = (np.array(whole.ordered(), np.float64) - np.array(pose.ordered(), np.float64)).mean(axis=0)
        if float(np.hypot(*(corners_moved - np.array(outline_shift)))) > tolerance_px:
            return pose
        log.info("the board's outline and print agree it moved %.1f pixels", float(np.hypot(*corners_moved)))
        return whole

    def _same_naming(self, image: np.ndarray, reading: Any) -> Any:
        """The search names row 1 by its own rule; the game's naming (and its reference) must survive."""
        from boardcam.calibration.board import match_orientation
        from boardcam.calibration.drift import corner_points
        from boardcam.vision.models import BoardPose

        found = reading.pose.to_json()["corners_px"]
        points = match_orientation(found, self._pose.to_json()["corners_px"])
        if np.allclose(points, corner_points(found)):
            return reading
        return self._read_board(image, pose=BoardPose.from_points(points), reference=self._reference, **self._parts)

    def _bumped(self, image: np.ndarray) -> bool:
        import cv2

        try:
            check = self._check_drift(self._drift, image)
        except (ValueError, cv2.error) as error:  # another frame size: the camera was reconfigured
            log.info("drift check impossible (%s)", error)
            return True
        self._unsure_check = check if check.status == "unsure" else None
        return bool(check.moved)

    def _remember_pose(self, image: np.ndarray, pose: Any) -> None:
        self._pose = pose
        corners = pose.to_json()["corners_px"]
        self._drift = self._drift_reference(image, corners, self._parts.get("intrinsics"))

    def _layout_of(self, reading: Any) -> dict[str, Any]:
        """The reading's tiles for the reference, with how surely each was read where the reading says."""
        tiles = getattr(reading, "tiles", None)
        return self._layout_read(tiles) if tiles else reading.position_dict["tiles"]  # type: ignore[no-any-return]

    def _maybe_take_reference(self, image: np.ndarray, reading: Any) -> bool:
        """Keep the first empty board as the reference pieces are compared with.

        Returns whether the reading disagrees with the reference just taken
        (it showed unsure "pieces") and should be read again against it.

        A board counts as empty when nothing on it is read as a piece with
        confidence: tile art the vision has not seen can make a printed icon
        look a little like a dome, and such an unsure "piece" on the setup
        board must not keep the app from ever taking its reference (against
        which the print is simply the empty look).  A real piece is read
        surely, so a played board is never taken.

        A board whose tiles read too unsurely (``EMPTY_TILE_CONFIDENCE``: a
        hand-laid array half done) is not taken, but it is remembered: when a
        later board shows unsure pieces and no sure one, that board, not the
        later one, is taken.  Taking the board with the unsure pieces made a
        real tower part of the empty look (Cycles made-up-art game 105: an
        icon read at 0.29 kept the setup board from being taken, the first
        tower read at 0.8 went into the reference, and only its cap was ever
        seen).  A first piece read surely still leaves the game without a
        reference: taking the remembered board then too lost games 1100 and
        1102 (38 → 24 and 19 of 38 moves), read well without one.

        Such a print also spoils the tiles: the icon search does not look
        under a piece, so the tile whose icon was taken for one is read
        unsurely, with its icon elsewhere.  When the board shows unsure
        "pieces", its tiles are therefore read again as those of an empty
        board, where any lot may hold the icon.

        A lot the reading calls empty while the network behind it saw a
        piece (``_print_read_as_empty``: the reading found the tile's icon
        there) is print taken for a piece as well, and the unsure tiles do
        not hold such a board back: without the reference every later frame
        reads that print as a piece again, with nothing to compare it with
        (Cycles made-up-art game 125: ring icons read as blue domes at 0.97,
        one icon near a lot's edge read at 0.37; 10 of 38 moves without the
        reference, 38 with it).  On a board whose print the network reads
        as print, an unsure tile still keeps the reference back: game 1100's
        setup board read an icon at 0.39, and against a reference of it a
        hard lamp later made printed squares read as capped towers (24 of
        38 moves, against 38 without one).

        Of two such boards of the same array (the same tile colours, the
        board unmoved) the first is remembered: a later one may already hold
        the first piece, read so faintly that it looked empty, and taken as
        the empty look that piece is never seen (path-traced game 135: a red
        tower on a red card read "empty 0.64" on the second board, which
        became the reference when the third showed a piece).
        """
        structures = reading.position_dict.get("structures") or {}
        if self._reference is not None:
            return False
        if any(reading.lot_confidence.get(lot, 0.0) >= self._sure for lot in structures):
            return False
        print_like = bool(structures) or self._print_read_as_empty(reading, structures)
        doubted = self._doubted_here(reading.pose)
        if print_like and doubted is not None:
            # unsure pieces on the board last read empty: that board, not this one, is the empty look
            self._keep_reference(*doubted, "the last empty board, its tiles read unsurely, kept as the reference")
            return True
        tiles: dict[str, Any] | None = None
        if not structures:
            tiles = self._layout_of(reading)
            if not print_like and min(reading.tile_confidence.values(), default=0.0) < self.EMPTY_TILE_CONFIDENCE:
                if not self._same_array(self._doubted_here(reading.pose), tiles):
                    self._doubted_empty = (image, reading.pose, tiles)
                return False
        self._keep_reference(image, reading.pose, tiles, "empty board kept as the reference" +
                             (" (its unsure pieces taken for print)" if print_like else ""))
        return print_like

    def _doubted_here(self, pose: Any) -> tuple[np.ndarray, Any, dict[str, Any]] | None:
        """The board remembered as doubted, when the board has not moved since it was read (else None)."""
        doubted = self._doubted_empty
        return doubted if doubted is not None and self._corner_move(doubted[1], pose) <= self.NUDGE_PX else None

    @staticmethod
    def _same_array(doubted: tuple[np.ndarray, Any, dict[str, Any]] | None, tiles: dict[str, Any]) -> bool:
        """Whether ``doubted`` (a remembered board, if any) shows the array ``tiles`` do: the same tile colours."""
        def colours(layout: dict[str, Any]) -> dict[str, str]:
            return {key: tile["color"] for key, tile in layout.items()}

        return doubted is not None and colours(doubted[2]) == colours(tiles)

    def _print_read_as_empty(self, reading: Any, structures: dict[str, Any]) -> bool:
        """Whether some lot read "empty" has a piece for its runner-up, PRINT_TAKEN_FOR_PIECE or more probable.

        The reading itself may call such a lot empty (it found the tile's
        icon there, in print), yet the network behind it saw a piece: the
        print looks like one.  ``structures``: the reading's."""
        hidden = set(getattr(reading, "occluded_lots", ()))
        return any(name not in structures and name not in hidden and runner.structure is not None
                   and runner.probability >= self.PRINT_TAKEN_FOR_PIECE
                   for name, runner in (getattr(reading, "runners_up", None) or {}).items())

    def _keep_reference(self, image: np.ndarray, pose: Any, tiles: dict[str, Any] | None, words: str) -> None:
        self._reference = self._empty_board_reference(image, pose, intrinsics=self._parts.get("intrinsics"),
                                                      tiles=tiles)
        self._previous = None  # read the next board against the reference from scratch
        self._doubted_empty = None
        log.info(words)


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
    resume: bool = True,
) -> RefereeLoop:
    """A ready loop; resumes the newest unfinished game in the log directory unless told not to."""
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
                      max_looks=config.motion.max_looks, confirm_reads=config.motion.confirm_reads)
    initial = None
    unfinished = unfinished_game(directory) if resume else None
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
                            still_frames=config.motion.still_frames,
                            change_pixels=config.motion.change_pixels)
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


def _structures(reading: Any) -> Any:
    """What a reading says stands on the board (the part a move changes)."""
    return reading.position_dict.get("structures") or {}
