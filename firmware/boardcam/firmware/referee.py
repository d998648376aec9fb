"""The referee's brain: a pure state machine from readings and button presses to outputs.

No I/O, no clock, no camera: the loop feeds it :class:`Observation` values
(what the vision read on a still board) and :class:`ButtonEvent` values, and
gets back :class:`Outputs` — which light, whether to beep, what the screen
says, which records to append to the game log and whether to look again.
That makes every rule of refereeing testable in microseconds.

Phases: SETUP (wait for an empty board, read and confirm the layout) →
PLAYING → ILLEGAL (until the board returns to the last legal position or a
legal successor, or a long press accepts it as a house ruling) → OVER (the
engine says no one can build, or the score button) → SETUP again once the
board is cleared.

Two promises shape the code: *never warn on an unsure reading* (a changed
lot read below ``min_confidence`` means amber and another look, and after
``max_looks`` a polite request, never red), and *never lose a move* (every
accepted position, verdict and override becomes a log record).

A third follows from the vision being fallible even when it is sure: *one
confident misread must not poison the rest of the game*.  When a structure
that was accepted earlier now reads differently, and the reading holds for
more looks than the old one ever had, the last few plies are read again
from the board (:func:`reread_history`); a legal re-reading rewrites them
(a ``correction`` record), an illegal one is a warning like any other.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from boardcam.engine.aliencity import (
    COLORS,
    LOT_NAMES,
    NEIGHBOURS,
    Game,
    Move,
    Piece,
    Position,
    PLAYERS,
    Ruleset,
    Structure,
    TILE_LOTS,
    TILE_OF,
    TOWER_COLORS,
    Tile,
    Violation,
    infer_move,
    layout_warnings,
    move_to_json,
    parse_lot,
)
from boardcam.engine.aliencity.board import column_of, row_of
from boardcam.engine.aliencity.game import RULE_CLAIM, RULE_TURN
from boardcam.engine.aliencity.position import TILES_PER_COLOR, structure_from_json

from .lights import Beep, ButtonEvent, Light
from .screens import BoardSketch, PlayerLine, Screen, ScreenKind, TowerLine


class Phase(enum.Enum):
    SETUP = "setup"
    PLAYING = "playing"
    ILLEGAL = "illegal"
    OVER = "over"


@dataclass(frozen=True)
class RunnerUp:
    """The next likeliest answer of a lot read unsurely (None for empty), its probability, its
    share of everything but the chosen answer, and how probable the lot is empty (None: not said)."""

    structure: Structure | None
    probability: float
    share: float
    empty: float | None = None


@dataclass(frozen=True)
class Observation:
    """What the referee needs from one reading of a still board."""

    position: Position
    lot_confidence: Mapping[str, float] = field(default_factory=dict)
    tile_confidence: Mapping[str, float] = field(default_factory=dict)
    occluded: bool = False
    runners_up: Mapping[str, RunnerUp] = field(default_factory=dict)  # by lot name, for lots read unsurely
    # lot names whose look changed since the reading before (each read again, not kept)
    departed: frozenset[str] = frozenset()
    # whether something came or went in the picture around the board since the reading before (a hand
    # beside it, whose shade may be what changed those looks)
    moved_beside: bool = False
    # by tile name: the tile's lots (ids) from likeliest icon to least, where the reading ranked them
    icon_order: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: tile name -> the guilds from likeliest to least (see Referee._recolour_tile)
    colour_order: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_reading(cls, reading: Any) -> "Observation":
        """Adapt the vision's Reading (duck-typed: the vision package is not imported here)."""
        runners_up = {name: RunnerUp(None if alt.structure is None
                                     else structure_from_json(alt.structure, f"runners_up.{name}"),
                                     float(alt.probability), float(alt.share),
                                     None if getattr(alt, "empty", None) is None else float(alt.empty))
                      for name, alt in (getattr(reading, "runners_up", {}) or {}).items()}
        tiles = getattr(reading, "tiles", {}) or {}
        return cls(
            position=reading.position,
            lot_confidence=dict(getattr(reading, "lot_confidence", {}) or {}),
            tile_confidence=dict(getattr(reading, "tile_confidence", {}) or {}),
            occluded=bool(getattr(reading, "occluded", False)),
            runners_up=runners_up,
            departed=frozenset(getattr(reading, "departed", {}) or {}),
            moved_beside=bool(getattr(reading, "moved_beside", False)),
            icon_order={key: tuple(int(lot) for lot in tile.icon_order)
                        for key, tile in tiles.items() if getattr(tile, "icon_order", ())},
            colour_order={key: tuple(tile.colour_order) for key, tile in tiles.items()
                          if getattr(tile, "colour_order", ())},
        )


@dataclass(frozen=True)
class MendedLayout:
    """The game replayed on tiles mended against the setup's reading: a tile's ``icon`` moved
    and/or its (and a swap partner's) ``colour`` changed, by tile name, as a ``tiles`` record logs."""

    game: Game
    colour: Mapping[str, str] | None = None
    icon: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Outputs:
    light: Light
    screen: Screen
    beep: Beep | None = None
    records: tuple[dict[str, Any], ...] = ()
    look_again: bool = False  # read another still frame soon (an unsure lot)
    # the players say the board is clear: the reader takes the board it last read as the empty one
    board_clear: bool = False


@dataclass(frozen=True)
class Verdict:
    """Why the board on the table is not accepted."""

    observed: Position
    move: Move | None  # the move to accept on a long press; None for a board that is no move
    violations: tuple[Violation, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def lot(self) -> str | None:
        for violation in self.violations:
            if violation.lot is not None:
                return LOT_NAMES[violation.lot]
        if self.move is not None and self.move.lot is not None:
            return LOT_NAMES[self.move.lot]
        return None


#: an accepted structure read as gone counts only this surely (see Referee._bar)
REMOVAL_CONFIDENCE = 0.95
#: ...an accepted cap read as gone (its tower bare) this surely: as surely as the reading calls sure
CAP_GONE_CONFIDENCE = 0.9
#: ...and a new structure on an icon lot that the tile's rules keep free this surely (see Referee._bar)
ICON_ARRIVAL_CONFIDENCE = 0.93
#: ...and one beside other arrivals, where a second build, and an illegal one, is rarer still
#: (Referee._doubtful_below)
ICON_BESIDE_A_MOVE = 0.99
#: the rules about what may go on a lot of a tile (colour: 2 and 3; the icon lot last: 5)
TILE_RULES = frozenset({2, 3, 5})
CLEAR_ALREADY = "Clear already? Press score."  # the setup's way past print read as pieces
# A tile read at least this surely at setup keeps its icon and guild when play goes on past a
# warning about them for one move (see Referee._played_past_layout): then the warning more likely
# comes from a build the referee missed, or misread, than from the tile...
TILE_CERTAIN = 0.99
#: ...but not when it goes on for this many moves, all legal on the tile mended
PLAYED_PAST_CERTAIN = 2
#: builds played on past a warning about one illegal build, left standing, that make it the players' ruling
#: (see Referee._played_on)
PLAYED_PAST_RULED = 2
#: a build the colour rules forbid on a tile read less surely than this at setup, with a swap partner the
#: setup asked about, is the players saying what the tile is (see Referee._recolour_tile)
TILE_DOUBTED = 0.9
#: a move accepted less surely than this may be taken back when the turn order later shows it never
#: happened (see Referee._retract_doubtful); a lot so retracted then counts a build only this surely
DOUBTFUL_MOVE = 0.9
RETRACTED_CONFIDENCE = 0.95
#: ...and one accepted less surely than this, once it reads surely gone (see Referee._retract_doubtful)
DOUBTFUL_GONE = 0.95
#: a lot read empty this surely since the last move may later show a faint build (see Referee._faint_builds)
SEEN_EMPTY = 0.9
#: ...when the piece behind its unsure "empty" is this probable, and this clearly the piece it would be
FAINT_PIECE_PROBABILITY = 0.2
FAINT_PIECE_SHARE = 0.9
#: a lot whose look changed while it read empty is remembered with its runner-up piece when that is more
#: probable than every other piece together (see Referee._note_departed)
DEPARTED_PIECE_SHARE = 0.5
#: a cap the reading shows only faintly on an older tower (see Referee._faint_cap): this probable now,
FAINT_CAP_PROBABILITY = 0.25
#: ...and this much more probable than on any still reading since the last move
FAINT_CAP_RISE = 0.2
#: how many lots from a new piece of each kind its shadow and lean may change a lot's look
BUILD_SHADOW_REACH = {"tower": 2, "dome": 1}
#: a new piece read below DOUBTFUL_MOVE whose runner-up answer is this probable and the one legal
#: move is taken as that answer (see Referee._legal_runner_up)
LEGAL_RUNNER_UP = 0.2
#: ...or this probable when the piece read is one neither player has left (any runner-up the reader gives,
#: which it does below its SURE answer; Referee._legal_runner_up)
IMPOSSIBLE_RUNNER_UP = 0.01
#: a new piece's answer and runner-up together this probable: surely one of the two (Referee._one_legal_answer)
SURELY_A_PIECE = 0.9
#: a new piece read unsurely, surely empty since the last move and seen before the change read surely now,
#: is a move of its own when some piece is at least this probable there (Referee._pending_arrivals)
PENDING_PIECE = 0.8
#: a new piece read too unsurely to count, this probably some piece, is judged as read after the looks when it
#: breaks a rule whichever piece it is (Referee._breach_whatever_it_is)
BREACH_PIECE = 0.65
#: "empty" read below this on a lot a cap alone needs a build on is no reading of an empty lot
DOUBTED_EMPTY = 0.5


class Referee:
    def __init__(self, rules: str = "rulebook", *, min_confidence: float = 0.75, max_looks: int = 4,
                 confirm_reads: int = 2):
        self.rules = Ruleset.named(rules)
        self.min_confidence = min_confidence
        self.max_looks = max_looks
        # A warning is raised only when this many readings in a row show the
        # same wrong board: one glitched frame must never turn the light red.
        self.confirm_reads = confirm_reads
        self._suspect: tuple[Position, int] | None = None
        self.phase = Phase.SETUP
        self.game: Game | None = None
        self.accepted: Position | None = None  # last legal (or ruled) position
        self.layout: Position | None = None  # setup: the empty board read, awaiting confirmation
        self.verdict: Verdict | None = None
        self.end_reason = ""
        self.note = ""  # one line under the turn/final screen (last move, why it ended...)
        self._looks = 0
        self._best: dict[str, tuple[float, Any]] = {}  # lot -> (confidence, structure JSON or None)
        self._new_pending = False
        # Corrections.  How many confident readings agreed with each accepted
        # structure: a structure seen right many times needs as many looks the
        # other way before its history is re-read (a passing glitch never does).
        self._support: dict[int, int] = {}
        self._vouched: Position | None = None  # a disputed board that held for enough looks
        self._vouched_reads = 0  # ...for this many readings in a row
        self._last_dispute: Position | None = None
        self._dispute_reads = 0  # looks at a disputed board since the board last moved
        self._flips = 0  # ...of which showed a different board than the look before
        # When each structure not yet accepted was first read: moves the camera
        # saw one after the other are caught up (or re-read) in that order.
        self._first_seen: dict[int, int] = {}
        self._cap_seen: dict[int, int] = {}  # the same for new caps, by the capped lot
        self._landed_at: dict[int, int] = {}  # ...kept for the accepted builds and caps, by lot
        self._changed_arrivals: set[int] = set()  # new lots first read as their look changed (_note_arrivals)
        self._set_down_alone: set[int] = set()  # new lots whose look alone changed as they first showed
        self._readings = 0
        self._accepted_at = 0  # the reading the last move was accepted with
        # Faint builds: the lots read empty surely since the last move, and the
        # structures accepted from a runner-up answer, by lot
        self._seen_empty: set[str] = set()
        self._setup_empty: set[str] = set()  # lots the latest empty-board reading was sure of
        self._empty_now: set[str] = set()  # ...of which this reading's
        self._faint: dict[int, Structure] = {}
        # Lots whose look changed while they read empty, away from any change, with their runner-up
        # piece, since the accepted board they were seen after (see _note_departed)
        self._departed: dict[int, Structure] = {}
        self._departed_since: Position | None = None
        self._looks_changed: set[int] = set()  # every lot whose look changed since that board
        self._departed_builds: set[int] = set()  # the faint builds taken so, which read "empty" surely
        # Lots whose reading must meet a higher bar than min_confidence until
        # they read surely empty: icon lots where a structure showed while
        # rule 5 kept them free, and lots of moves taken back (see Referee._bar)
        self._held_bars: dict[int, float] = {}
        # ...and of those, the lots left out as a tower's shadow (their cap's doubt adds nothing to their
        # piece's: see Referee._build_confidence)
        self._shadows: set[int] = set()
        # the readings (by number) that first showed a structure later left out as a phantom
        self._phantom_readings: set[int] = set()
        # the faint builds (Referee._faint_builds) shown since the last move, by lot, until read surely empty
        self._faint_since: dict[int, Structure] = {}
        # the plies (numbered as Game.ply after each) last taken on a mended layout, and the tiles before
        # the mend (see Referee._unmended)
        self._mend: tuple[frozenset[int], dict[int, Tile]] | None = None
        # How surely each accepted build was read when it was accepted, by lot
        self._accepted_confidence: dict[int, float] = {}
        self._cap_confidence: dict[int, float] = {}  # ...and each accepted cap, by the capped lot
        self._arrived_together: set[int] = set()  # ...and the builds first seen with another one
        # ...and those read surely as some piece, only which one in doubt (see Referee._retract_doubtful)
        self._built_surely: set[int] = set()
        # ...and those the camera lost that the players ruled still there (see Referee._kept_unseen)
        self._unseen: set[int] = set()
        # the caps read doubtfully that a player had none left for, by lot (see Referee._bare_past_a_fourth_cap)
        self._refused_caps: dict[int, str] = {}
        self._observation: Observation | None = None  # the reading being judged
        self._departed_before: frozenset[str] = frozenset()  # the lots whose look changed in the reading before
        # the lots whose look changed in this reading but not in the one before: a lot that changes on
        # reading after reading is restless, a flicker and no piece (see _looks_set_down_alone)
        self._newly_departed: frozenset[str] = frozenset()
        # Lots new to the accepted board that showed a structure read too unsurely to count: the
        # structure and the reading it was first so shown at (see _stood_unread)
        self._read_unsurely: dict[int, tuple[Structure, int]] = {}
        # Every structure a new lot read below DOUBTFUL_MOVE showed, answer or likely runner-up, since
        # it was last read surely empty (see _note_structures_seen, _pieces_read_otherwise, _legal_as_seen)
        self._structures_seen: dict[int, set[Structure]] = {}
        self._no_retraction: tuple[Position, int, list[int]] | None = None  # see _retract_doubtful
        # Faint caps: per (tower lot, cap colour), the most that cap was
        # possible on the still readings since the last move
        self._cap_before: dict[tuple[int, str], float] = {}
        self._caps_now: dict[tuple[int, str], float] = {}  # ...on this reading
        # new pieces whose reading doubted only the cap: how surely the cap was read (_build_confidence)
        self._cap_doubted: dict[int, float] = {}
        # The setup's reading of each tile, for play to settle a tile it read unsurely (the display
        # asked to check it): how surely it was read, its lots from likeliest icon to least (see
        # _reseat_icon, _played_past_layout) and its guilds from likeliest to least (_recolour_tile)
        self._tile_confidence: dict[int, float] = {}
        self._icon_orders: dict[int, tuple[int, ...]] = {}
        self._colour_orders: dict[int, tuple[str, ...]] = {}
        self._pieces_at_setup = False  # the latest setup reading showed pieces
        # The warning about a move that the board still shows while later builds make it no single
        # move any more (see _played_past_layout)
        self._warned: Verdict | None = None
        self._outputs = Outputs(Light.AMBER, _setup_screen())

    # ------------------------------------------------------------ entry points

    @property
    def outputs(self) -> Outputs:
        """The current outputs without any records or beeps (for redrawing)."""
        return Outputs(self._outputs.light, self._outputs.screen)

    def board_moved(self) -> None:
        """Something moved over the board: earlier looks no longer describe it."""
        self._looks = 0
        self._best.clear()
        self._dispute_reads = 0
        self._flips = 0

    def resume(self, game: Game) -> Outputs:
        """Continue a game rebuilt from the log after a restart."""
        self.game = game
        self.accepted = game.position.copy()
        self.verdict = None
        self.note = "game resumed"
        self._support.clear()  # unknown: treated as well seen (see _needed_reads)
        self._vouched = None
        if game.is_over():
            return self._finish("no-moves", record=False)
        self.phase = Phase.PLAYING
        return self._emit(Light.GREEN, self._turn_screen())

    def observe(self, observation: Observation) -> Outputs:
        self._new_pending = False
        if observation.occluded:
            return self._emit(self._outputs.light, self._outputs.screen)
        if self.phase is Phase.SETUP:
            return self._observe_setup(observation)
        if self.phase is Phase.OVER:
            return self._observe_over(observation)
        return self._observe_game(observation)

    def recording_ended(self) -> Outputs:
        """A replayed recording ran out: a game under way ends there, scored as it stands.

        Left unfinished, the next ``boardcam run`` would resume the recorded
        game at the live table (or a second recording would continue the first).
        """
        if self.game is None or self.phase is Phase.OVER:
            return self._emit(self._outputs.light, self._outputs.screen)
        return self._finish("recording ended")

    def press(self, event: ButtonEvent) -> Outputs:
        if event is not ButtonEvent.NEW:
            self._new_pending = False
        if event is ButtonEvent.SCORE:
            if self.phase is Phase.SETUP:
                if self.layout is not None:
                    return self._start_game()
                if self._pieces_at_setup:
                    return self._vouched_clear()
                return self._emit(Light.AMBER, _setup_screen("No layout read yet: clear the board."))
            if self.phase in (Phase.PLAYING, Phase.ILLEGAL):
                return self._finish("button")
            return self._emit(self._outputs.light, self._outputs.screen)
        if event is ButtonEvent.ACCEPT:
            return self._accept_house_ruling()
        # NEW: a fresh game.  In mid-game it needs a second press so a stray
        # touch never throws away a game.
        if self.phase is Phase.OVER:
            return self._back_to_setup()
        if self.phase is Phase.SETUP:
            return self._emit(self._outputs.light, self._outputs.screen)
        if not self._new_pending:
            self._new_pending = True
            screen = Screen(ScreenKind.MESSAGE, "New game?", ("Press again to end this game",
                                                               "and start a new one."))
            return Outputs(Light.AMBER, screen)
        self._new_pending = False
        finished = self._finish("abandoned")
        setup = self._back_to_setup()
        return Outputs(setup.light, setup.screen, records=finished.records + setup.records)

    # ------------------------------------------------------------------ setup

    def _observe_setup(self, observation: Observation) -> Outputs:
        position = observation.position
        unsure_tiles = sorted(k for k, c in observation.tile_confidence.items() if c < self.min_confidence)
        if position.structures:
            if self.layout is not None and self._one_first_piece(observation):
                # The first piece went down without the confirm press: that is a
                # confirmation (of the layout read on the empty board, which is
                # the better reading: nothing stood on the tiles then).
                started = self._start_game()
                played = self._observe_game(observation)
                return Outputs(played.light, played.screen, played.beep,
                               started.records + played.records, played.look_again)
            self._pieces_at_setup = True
            return self._emit(Light.AMBER, _setup_screen("Clear the board to start a new game.", CLEAR_ALREADY))
        self._pieces_at_setup = False
        # the latest empty board read is the layout a first piece confirms, even while tiles are looked at again
        self.layout = Position(position.tiles)
        self._setup_empty = {name for name in LOT_NAMES if observation.lot_confidence.get(name, 1.0) >= SEEN_EMPTY}
        self._tile_confidence = {parse_lot(key): c for key, c in observation.tile_confidence.items()}
        self._icon_orders = {parse_lot(key): order for key, order in observation.icon_order.items()
                             if parse_lot(key) in position.tiles}
        self._colour_orders = {parse_lot(key): order for key, order in observation.colour_order.items()
                               if parse_lot(key) in position.tiles}
        if unsure_tiles:
            if self._looks < self.max_looks:
                self._looks += 1
                return self._emit(Light.AMBER, Screen(
                    ScreenKind.LOOKING, "Reading tiles", (f"Not sure about {', '.join(unsure_tiles)}",)),
                    look_again=True)
        # Still unsure after every look: the confirmation is exactly the human
        # check needed, so show the layout with the doubtful tiles named.
        counts = {c: sum(1 for t in position.tiles.values() if t.color == c)
                  for c in ("red", "blue", "green", "black")}
        doubts = [f"Check tile {', '.join(unsure_tiles)}"] if unsure_tiles else []
        lines = ["  ".join(f"{c} {n}" for c, n in counts.items()), *doubts,
                 *layout_warnings(position.tiles)[:1], "Score button: confirm"]
        screen = Screen(ScreenKind.CONFIRM, "Layout read", tuple(lines),
                        board=BoardSketch.from_position_json(self.layout.to_json()),
                        lot=unsure_tiles[0] if unsure_tiles else None)
        return self._emit(Light.AMBER, screen)

    def _vouched_clear(self) -> Outputs:
        """The players pressed the score button on a setup board read with pieces on it: they say
        it is clear, and the reader takes the board it last read as the empty one.

        Why: tile art the vision has never seen can hold a shape it reads
        surely as a piece (a printed tower).  Such a board never reads empty,
        so the app would wait for a clear board for ever, and the players,
        looking at a clear board, could not start.  Their word is the check
        the camera cannot make; what it read as pieces is the empty look from
        then on.  A piece really left on the board would be read as print
        for the whole game, which is why it takes the press and is not
        guessed.
        """
        self._pieces_at_setup = False
        self.board_moved()
        outputs = self._emit(Light.AMBER, Screen(ScreenKind.LOOKING, "Reading tiles",
                                                 ("Taking the board as clear",)), look_again=True)
        return dataclasses.replace(outputs, board_clear=True)

    def _one_first_piece(self, observation: Observation) -> bool:
        """One structure, or up to ``MAX_CATCH_UP`` read surely, beside any read doubtfully.

        A doubtful extra beside the first piece is most likely a misreading
        (tile art taken for a dome); the game's own checks look at it again
        and leave it out if it does not hold, where refusing to start would
        leave the whole game unwatched.  So are two or three sure pieces on
        the board just read empty: the first moves, made before the camera
        saw the board still, which the game catches up like any others
        (made-up-art game 1904 showed its first two at once, and the app
        asked for the board to be cleared for the rest of the game).
        """
        names = [LOT_NAMES[lot] for lot in observation.position.structures]
        sure = [name for name in names if observation.lot_confidence.get(name, 1.0) >= self.min_confidence]
        return len(names) == 1 or 1 <= len(sure) <= MAX_CATCH_UP

    def _start_game(self) -> Outputs:
        assert self.layout is not None
        self.game = Game(self.layout.tiles, self.rules)
        self.accepted = self.game.position.copy()
        self.phase = Phase.PLAYING
        self.verdict = None
        self.note = ""
        self._support.clear()
        self._vouched = None
        self._seen_empty = set(self._setup_empty)  # the empty board is the board before the first move
        self._accepted_at = self._readings
        self._faint.clear()
        self._departed_builds.clear()
        self._held_bars.clear()
        self._shadows.clear()
        self._phantom_readings.clear()
        self._faint_since.clear()
        self._mend = None
        self._accepted_confidence.clear()
        self._built_surely.clear()
        self._unseen.clear()
        self._refused_caps.clear()
        self._cap_confidence.clear()
        self._arrived_together.clear()
        self._read_unsurely.clear()
        self._structures_seen.clear()
        self._cap_before.clear()
        self._landed_at.clear()
        self._changed_arrivals.clear()
        self._set_down_alone.clear()
        self.board_moved()
        record = {"type": "start", "tiles": self.layout.to_json()["tiles"], "rules": self.rules.name}
        return self._emit(Light.GREEN, self._turn_screen(), Beep.ATTENTION, (record,))

    def _back_to_setup(self) -> Outputs:
        self.phase = Phase.SETUP
        self.game = None
        self.accepted = None
        self.layout = None
        self.verdict = None
        self.board_moved()
        return self._emit(Light.AMBER, _setup_screen())

    # -------------------------------------------------------------- the game

    def _observe_game(self, observation: Observation) -> Outputs:
        assert self.game is not None and self.accepted is not None
        self._observation = observation
        self._newly_departed = observation.departed - self._departed_before
        self._departed_before = observation.departed
        # The tiles are fixed for the whole game: a misread tile must never
        # turn into a warning, so only the structures are taken from the reading.
        after = self._with_faint_builds(Position(self.accepted.tiles, observation.position.structures), observation)
        after = self._without_refused_caps(self._with_unseen(after), observation)
        changed = _changed_lots(self.accepted, after)
        self._note_departed(observation, changed)
        faint = self._faint_builds(observation)
        self._faint_since.update((parse_lot(name), structure) for name, structure in faint)
        self._note_seen_empty(observation)
        self._caps_now = self._cap_chances(observation)
        if not changed:
            self._suspect = None
            self._count_support(after)
            for key, chance in self._caps_now.items():
                self._cap_before[key] = max(self._cap_before.get(key, 0.0), chance)
            if self.phase is Phase.ILLEGAL:
                return self._clear("the board is back to the last legal position")
            taken = self._take_faint_builds(faint)
            if taken is not None:
                return taken
            taken = self._departed_build(observation)
            if taken is not None:
                return taken
            return self._doubt_passed()  # a doubt about an old lot passed
        after, unsure = self._merge_looks(after, changed, self._build_confidence(observation))
        unread: Position | None = None  # the board with the builds read too unsurely to count
        self._note_arrivals(after)  # an unsure look still shows that something is there
        self._note_structures_seen(observation)
        for name in unsure:
            lot = parse_lot(name)
            if lot in after.structures and self._read_unsurely.get(lot, (None, 0))[0] != after.structures[lot]:
                self._read_unsurely[lot] = (after.structures[lot], self._readings)
        if unsure:
            breach = self._breach_under_warning(after, unsure)
            if breach is None and (self._looks < self.max_looks or set(unsure) == set(changed)):
                if self._looks >= self.max_looks:  # nothing sure moved: the faint builds, or the rules, may tell
                    taken = None if self._unsure_arrivals(after, unsure) else self._take_faint_builds(faint)
                    if taken is None:
                        taken = self._one_legal_answer(after, unsure, observation)
                    if taken is None:
                        taken = self._one_new_unsure_piece(after, unsure, changed, observation)
                    if taken is not None:
                        return taken
                    if all(parse_lot(name) in self._shadows for name in unsure):
                        return self._doubt_passed()
                    breach = self._breach_whatever_it_is(after, unsure, observation)
                if breach is None:
                    return self._looking(unsure)
            if breach is not None:
                after = _as_accepted(after, self.accepted, [name for name in unsure if name != breach])
            else:
                # Looked enough: a lot that stays unsure must not hold up a move read
                # confidently elsewhere.  It counts as it was; once it reads clearly,
                # whatever it shows is judged then (a late move is caught up), or
                # when the turn order shows it was a move (_with_unread_builds).
                taken = self._one_new_unsure_piece(after, unsure, changed, observation)
                if taken is not None:
                    return taken
                arrivals = self._unsure_arrivals(after, unsure)
                pending = self._pending_arrivals(arrivals, changed, unsure, observation)
                if pending:
                    caught_up = self._caught_up_with_pending(
                        _as_accepted(after, self.accepted, [name for name in unsure if name not in pending]),
                        pending, observation)
                    if caught_up is not None:
                        return caught_up
                unread = _as_accepted(after, self.accepted, [name for name in unsure if name not in arrivals]) \
                    if arrivals else None
                after = _as_accepted(after, self.accepted, unsure)
        if not after.structures and len(self.accepted.structures) >= 2:
            return self._cleared_mid_game(observation, after)
        looks, self._looks = self._looks, 0
        self._count_support(after)
        disputed = _disputed_lots(self.accepted, after)
        if not disputed:
            self._last_dispute = None
        elif self.verdict is None or self.verdict.observed != after:  # (else: judged already)
            waiting = self._weigh_dispute(after, disputed)
            if waiting is not None:
                # The board is still being weighed: the looks at the unsure lots beside it
                # keep their count, or each of its readings would start a fresh round of them.
                self._looks = looks
                return waiting
            corrected = self._correct_history(after)
            if corrected is not None:
                return corrected
            uncapped = self._uncap_doubtful(after, observation)
            if uncapped is not None:
                return uncapped
        inference = infer_move(self.accepted, after, self.game)
        if inference.kind == "unchanged":
            return self._emit(self._outputs.light, self._outputs.screen)
        if inference.kind == "move":
            assert inference.move is not None
            violations = self.game.violations(inference.move)
            if not violations:
                faint_cap = self._faint_cap(inference.move, observation)
                if faint_cap is not None and faint_cap.cap is not None:
                    capped = self.accepted.structures[faint_cap.cap].with_cap(faint_cap.player)
                    return self._accept_faint(faint_cap, {faint_cap.cap: capped})
                came_now = self._cap_come_now(inference.move, after)
                if came_now is not None:
                    return came_now
                return self._accept(inference.move, override=False)
            turn_only = all(v.rule == RULE_TURN for v in violations)
            if turn_only:
                # the doubt in this frame first: see _legal_runner_up
                second = self._legal_runner_up(after, observation)
                if second is not None:
                    return second
                retracted = self._retract_doubtful(after, observation)
                if retracted is not None:
                    return retracted
                caught_up = self._with_unread_builds(unread, after, observation) \
                    or self._caught_up_with_faint(after)
                if caught_up is not None:
                    return caught_up
            if self._out_of_caps(inference.move, violations):
                uncapped = self._uncap_doubtful(after, observation, making_room_for=inference.move)
                if uncapped is not None:
                    return uncapped
                bare = self._bare_past_a_fourth_cap(inference.move, after, observation)
                if bare is not None:
                    return bare
            mended = self._mended_layout(inference.move, violations)
            if mended is not None:
                return self._take_with_layout(mended.game, (inference.move,), colour=mended.colour, icon=mended.icon)
            # (a turn-order breach had its runner-ups and take-backs tried above, on the same board)
            second = (None if turn_only else self._legal_runner_up(after, observation)) or self._legal_as_seen(after)
            if second is not None:
                return second
            retracted = None if turn_only else self._retract_doubtful(after, observation)
            if retracted is not None:
                return retracted
            return self._illegal(Verdict(after, inference.move, tuple(violations)))
        amended = self._late_cap(after)
        if amended is not None:
            return amended
        completed = self._completed_by_departed(after, observation) \
            or self._completed_by_doubted_empty(after, observation)
        if completed is not None:
            return completed
        overruled = self._played_past_layout(after, frozenset(TILE_OF[parse_lot(name)] for name in unsure))
        if overruled is not None:
            return overruled
        caught_up = self._catch_up(after) or self._caught_up_with_faint(after)
        if caught_up is not None:
            return caught_up
        second = self._legal_runner_up(after, observation)  # (before a take-back, as above)
        if second is not None:
            return second
        used_up = self._piece_used_up(after)
        repieced = self._repiece_doubtful(after, observation) if used_up else None
        if repieced is not None:
            return repieced
        retracted = self._retract_doubtful(after, observation)
        if retracted is not None:
            return retracted
        dropped = self._without_doubtful_arrival(after)
        if dropped is not None:
            return dropped
        caught_up = self._with_unread_builds(unread, after, observation)
        if caught_up is not None:
            return caught_up
        second = self._legal_as_seen(after)
        if second is not None:
            return second
        repieced = None if used_up else self._repiece_doubtful(after, observation)
        if repieced is not None:
            return repieced
        other_kind = self._as_a_piece_still_in_play(after, observation)
        if other_kind is not None:
            return other_kind
        if self._free_lots_unread(observation):
            return self._emit(self._outputs.light, self._outputs.screen)  # judged once the cover goes
        # the last answer before a warning: "empty" read below the referee's own bar, not only below even odds
        completed = self._completed_by_doubted_empty(after, observation, below=self.min_confidence)
        if completed is not None:
            return completed
        beside = self._illegal_beside_doubtful(after)
        if beside is not None:
            return self._illegal(beside)
        return self._illegal(Verdict(after, None, problems=tuple(inference.problems)))

    def _free_lots_unread(self, observation: Observation) -> bool:
        """Whether the reading left a lot unread (confidence 0: covered) that is free on the accepted board.

        Why: a board that is no move may be one whose build stands under the
        cover.  The runner reads a still board through a cover that stays
        (print, or a hand held still: ``VisionReader._still_cover``) with
        the covered lots unread, so a cap put on a tower while the other hand
        still lies over the new build reads as a cap without a build.  The
        project's renderer's fresh game 133 warned so (photo 44, its red tower
        on C3 under the hand that had put it down); the next picture, the
        hand gone, showed the move.  A cover over built lots only can hide
        no build, and such a board is still judged.  The light and screen
        stay as they were, as for a frame the vision calls occluded.
        """
        assert self.accepted is not None
        return any(confidence == 0.0 and parse_lot(name) not in self.accepted.structures
                   for name, confidence in observation.lot_confidence.items())

    def _as_a_piece_still_in_play(self, after: Position, observation: Observation) -> Outputs | None:
        """The one new structure, read doubtfully (below ``DOUBTFUL_MOVE``) as a piece that neither
        player has left (with a cap or without), taken as the same colour's other kind (a dome for a
        tower, a tower for a dome) when that is a legal move, or, with every tower built, as the one
        dome the rules leave there (``_the_one_legal_dome``); faint.  None otherwise.

        Why: every piece of that kind and colour already stands on the
        board, so the piece just put down is something else, and a dome
        read as a tower of its colour (or the reverse) is the network's
        likeliest slip.  Fresh made-up-art game 4201: black's red dome read
        "red tower 0.83", when no red tower was left to either player; the
        warning "black has no red tower left" stood, the next move was
        taken as black's, and the final score was wrong.  Only when neither
        player has the piece: when the other player still has one, the turn
        order is in doubt, not the piece.  Tried after the earlier builds
        are re-read (``_repiece_doubtful``), since one of them misread may
        be what used the piece up.
        """
        assert self.game is not None
        added = self._added_since_accepted(after)
        if added is None or len(added) != 1:
            return None
        lot = added[0]
        read = after.structures[lot]
        if observation.lot_confidence.get(LOT_NAMES[lot], 1.0) >= DOUBTFUL_MOVE:
            return None
        other = self._other_kind_if_used_up(read.with_cap(None))
        if other is None:
            return None
        found = self._legal_as(after, lot, other)
        if found is None and read.kind == "tower" and self._no_tower_left():
            found = self._the_one_legal_dome(after, lot)
        if found is None:
            return None
        return self._accept_faint(found[1], {lot: found[0]})

    def _legal_as(self, after: Position, lot: int, piece: Structure) -> tuple[Structure, Move] | None:
        """``piece`` on ``lot`` of ``after``, with the legal move that makes that board; None if none does."""
        move = self._legal_move_to(Position(after.tiles, {**after.structures, lot: piece}))
        return None if move is None else (piece, move)

    def _no_tower_left(self) -> bool:
        """Whether every tower of every colour is built (as the game was read)."""
        return all(self._none_left(Piece("tower", colour)) for colour in TOWER_COLORS)

    def _the_one_legal_dome(self, after: Position, lot: int) -> tuple[Structure, Move] | None:
        """The dome on ``lot`` when exactly one colour of dome the mover has left is legal there.

        Why: with every tower built, a new piece read as a tower is a dome,
        and a glossy dome under a lamp can take any colour on camera: its
        top's highlight reads as a white cap and its tint as the tile beside
        it (path-traced game 131, ply 22: white's black dome on the black
        tile E1, glared pale, read "red tower with a white cap 0.86"; the
        next build was taken as white's, and every move after it went to the
        other player).  The rules then leave one dome the players can have
        put there, taken faint for them to check.
        """
        found = [legal for colour in COLORS if (legal := self._legal_as(after, lot, Structure("dome", colour)))]
        return found[0] if len(found) == 1 else None

    def _pending_arrivals(self, arrivals: list[str], changed: list[str], unsure: list[str],
                          observation: Observation) -> list[str]:
        """The new pieces read too unsurely to count that were a move of their own: each some
        piece at least ``PENDING_PIECE`` probable (``_piece_probability``), on a lot something came
        to since the last move (``_arrived_on``), and first seen before every change read surely now.

        Why: a red dome that a leaning neighbour half hides can read "red
        tower, 0.6; red dome, 0.4" for as long as it stands, and when the
        players move on without setting it straight the next build came
        after it, turn by turn.  Left unread, that build went to the wrong
        player, and so did every build after it (made-up-art game 2700:
        from ply 16 on, every move, then warnings at the end).  A print
        taken for a piece is no such arrival: it was not read surely empty
        since the last move, or it came with that move's own change.

        Which piece is in doubt need not be between two pieces: the same
        kind of dome read "red tower with a white cap, 0.52; empty, 0.17"
        (made-up-art game 3901, just after it read "red dome 0.42, the
        capped tower 0.40", which began the looks again) is a piece at 0.83.
        """
        sure = [parse_lot(name) for name in changed if name not in unsure]
        if not sure:
            return []
        first_sure = min(self._first_seen.get(lot, self._readings) for lot in sure)
        return [name for name in arrivals
                if self._arrived_on(lot := parse_lot(name)) and self._first_seen.get(lot, self._readings) < first_sure
                and _piece_probability(observation, name) >= PENDING_PIECE]

    def _caught_up_with_pending(self, board: Position, pending: list[str],
                                observation: Observation) -> Outputs | None:
        """``board`` (the pending arrivals as read, the other unsure lots as accepted) caught up
        turn by turn, the pending arrivals first (``_catch_up``), or with one of them taken as its
        runner-up when only that order is legal; marked faint.  None when no catch-up fits: the
        pending arrivals then stay unread, as any unsure lot does.

        A pending tower read with a cap of the other player's colour is tried bare first: the cap
        is part of what was read too unsurely to count, and it could only be the second half of
        the next player's move, which a catch-up cannot check as it checks a player capping the
        tower just built.  Taken with it, a doubtful black cap on white's clear tower went into
        black's next build and stayed there (path-traced game 132)."""
        assert self.game is not None
        bare = Position(board.tiles, {**board.structures, **{
            lot: board.structures[lot].with_cap(None) for lot in map(parse_lot, pending)
            if board.structures[lot].cap not in (None, self.game.turn)}})
        moves = self._missed_moves(bare) if bare != board else None
        if moves is not None:
            board = bare
        else:
            moves = self._missed_moves(board)
        if moves is None:
            return self._caught_up_as_runner_up(board, observation) or self._pending_on_a_mended_layout(board, pending)
        board, moves, caps = self._with_caps_come_alongside(board, moves, pending, observation)
        if not self._confirmed(board):
            return self._look_again()
        faint = _pieces_at(board, [*map(parse_lot, pending), *caps])
        return self._marked_faint(self._caught_up(moves), faint, caps=set(caps))

    def _pending_on_a_mended_layout(self, board: Position, pending: list[str]) -> Outputs | None:
        """``board`` caught up turn by turn, the pending arrival first, on a layout with one tile
        the setup asked about mended (its icon on its next likeliest lot, or it in another guild;
        ``_played_after``), with a ``tiles`` record and the pending arrival faint; None when no
        such layout makes the moves legal.

        Why: a lone build that breaks only the tile rules on such a tile moves the icon
        (``_reseat_icon``), but a build caught up behind a pending one was judged on the layout
        as read.  Path-traced game 134: black's green tower read "capped 0.41" for its whole
        photo, then white's capped tower came on D1, which the setup had taken for black tile
        C1's icon at 0.7 and asked about; no catch-up was legal, and every later move went to
        the wrong player.  Only the one pending piece and the one sure build, on the lot read as
        the icon of the one tile mended, its look changed as it first showed
        (``_changed_arrivals``): let any catch-up mend tiles, icon prints read as pieces as the
        light changed were caught up as moves (made-up-art games 3304 and 3603).
        """
        assert self.game is not None
        added = self._added_since_accepted(board)
        waiting = {parse_lot(name) for name in pending}
        if added is None or len(added) != 2 or len(waiting & set(added)) != 1:
            return None
        found = self._played_after(self.game, self._arrival_order(added), board.structures)
        if found is None:
            return None
        tiles, moves = found
        colour, icon = _layout_changes(self.game.position.tiles, tiles)
        mended = {parse_lot(name) for name in (*colour, *icon)}
        if len(mended) != 1:
            return None
        (tile_lot,) = mended
        (sure,) = set(added) - waiting
        if not self._unsure_at_setup(tile_lot) or self.game.position.tiles[tile_lot].icon != sure \
                or sure not in self._changed_arrivals:
            return None
        if not self._confirmed(board):
            return self._look_again()
        replay = _replayed(tiles, self.game)
        assert replay is not None  # every move so far was legal on it when it was found
        faint = _pieces_at(board, map(parse_lot, pending))
        return self._marked_faint(self._take_with_layout(replay, moves, colour=colour, icon=icon), faint, caps=set())

    def _with_caps_come_alongside(self, board: Position, moves: list[Move], pending: list[str],
                                  observation: Observation) -> tuple[Position, list[Move], list[int]]:
        """``board`` and its catch-up ``moves`` with the caps read unsurely on accepted towers that
        were first seen in the reading that first showed a pending arrival, when the moves stay legal
        with them; and those caps' lots.

        Why: a cap comes with a build, and one first seen together with a build the turn order
        shows was a move came with it.  Left out, it waited for a later build of its player and went
        into that one (path-traced game 133: black's red tower on F8 read too unsurely to count,
        black's cap on C4 with it; the tower was caught up in its turn, the cap two plies late with
        black's next tower).
        """
        assert self.accepted is not None
        arrived = {self._first_seen.get(parse_lot(name)) for name in pending} - {None}
        read = observation.position.structures
        caps = [lot for lot in _new_caps(self.accepted.structures, read)
                if lot in self.accepted.structures and self._cap_seen.get(lot) in arrived
                and board.structures.get(lot) == self.accepted.structures[lot]]
        if not caps:
            return board, moves, []
        capped = Position(board.tiles, {**board.structures, **{lot: read[lot] for lot in caps}})
        with_caps = self._missed_moves(capped)
        return (capped, with_caps, caps) if with_caps is not None else (board, moves, [])

    def _one_legal_answer(self, after: Position, unsure: list[str], observation: Observation) -> Outputs | None:
        """The one new piece read unsurely, after the looks, taken as whichever of its answer and
        runner-up is a legal move, when the two are surely one or the other and exactly one is.

        Why: a piece read "blue tower 0.64, blue dome 0.36" on every frame
        is surely there, and the doubt is only which; looking again does not
        settle it, and the game waits ("Cannot read G8") until the next
        moves give it away (printed game 2403: caught up three plies late,
        eight moves counted wrong).  The rules often do settle it: when only
        one of the two is a move the player could make, that was the move.
        Taken faint, as ``_legal_runner_up`` takes its move; when both are
        legal, the players are still asked to set the piece straight.
        """
        assert self.accepted is not None
        if len(unsure) != 1:
            return None
        name = unsure[0]
        lot = parse_lot(name)
        read = observation.position.structures.get(lot)
        alt = observation.runners_up.get(name)
        if lot in self.accepted.structures or lot in self._shadows or read is None or alt is None \
                or alt.structure is None or not _surely_a_piece(observation, name):
            return None
        options = [found for structure in (read, alt.structure) if (found := self._legal_as(after, lot, structure))]
        if len(options) != 1:
            return None
        structure, move = options[0]
        return self._accept_faint(move, {lot: structure})

    def _one_new_unsure_piece(self, after: Position, unsure: list[str], changed: list[str],
                              observation: Observation) -> Outputs | None:
        """After the looks, with nothing read surely changed: the one new piece read unsurely on a
        lot read surely empty since the last move, whose runner-up is "empty", taken as read when
        that is a legal move (faint).

        Why: a black coin on a black tile can read "black dome, 0.63; empty,
        0.38" for as long as it stands, the mirror of a faint build ("empty,
        0.62; black dome, 0.38"), which is taken.  Left unread, it waited
        for the players to set it straight; the next move then came first,
        and the two went to the wrong players (made-up-art game 1901 from
        ply 12, 28 plies counted wrong; game 2002's first two moves).  A
        lot that was already unsure when the last move was taken (print
        that reads like a piece now and then) is not new, and two new
        unsure pieces at once are left to the looks as before.  A doubt
        between two pieces is the rules' to settle (``_one_legal_answer``),
        else the players'.
        """
        assert self.accepted is not None
        if any(name not in unsure for name in changed):
            return None
        new = self._new_unsure_arrivals(after, unsure)
        if len(new) != 1:
            return None
        alt = observation.runners_up.get(new[0])
        if alt is None or alt.structure is not None:
            return None
        lot = parse_lot(new[0])
        structure = after.structures[lot]
        move = self._legal_move_to(Position(after.tiles, {**self.accepted.structures, lot: structure}))
        if move is None:
            return None
        return self._accept_faint(move, {lot: structure})

    def _breach_under_warning(self, after: Position, unsure: list[str]) -> str | None:
        """The unsure new piece the standing warning judged (``_breach_whatever_it_is``), read as
        it was then; None when there is none.  It is not looked at again: a warning that went
        amber for the looks and red again after them would blink at the players."""
        if self.phase is not Phase.ILLEGAL or self.verdict is None or self.accepted is None:
            return None
        judged = self.verdict.observed.structures
        for name in unsure:
            lot = parse_lot(name)
            if lot not in self.accepted.structures and lot in after.structures \
                    and judged.get(lot) == after.structures[lot]:
                return name
        return None

    def _breach_whatever_it_is(self, after: Position, unsure: list[str], observation: Observation) -> str | None:
        """After the looks, with nothing read surely changed: the one new piece read unsurely, on a
        lot read surely empty since the last move whose look changed as it came
        (``_note_changed_arrivals``), at least ``BREACH_PIECE`` probably a piece, and no legal move
        as whichever piece it reads (its answer, or a runner-up piece) -- the lot, to be judged as
        read; None otherwise.

        Why: the doubt is only which piece, or whether there is a piece at
        all when that is likely; either way the board breaks a rule, and the
        players are told which (made-up-art game 100: black's dome on G1,
        against rule 2, read "black dome 0.67, empty 0.13", and the game
        waited "Cannot read G1" until the players moved it, with no warning;
        game 2002: a green dome on the blue tile's H4, "0.71, empty 0.29").
        Judged as read, the board still goes through every mend and runner-up
        a surely read one does before it is warned about.  A lot held to a
        higher bar (an icon print the tile's rules keep free, a build taken
        back) is not judged below it.
        """
        assert self.accepted is not None
        new = self._new_unsure_arrivals(after, unsure)
        if len(new) != 1 or _piece_probability(observation, new[0]) < BREACH_PIECE:
            return None
        lot = parse_lot(new[0])
        if lot not in self._changed_arrivals or self._held_bars.get(lot, 0.0) >= ICON_ARRIVAL_CONFIDENCE:
            return None  # no look changed as it came, or a bar it must meet (an icon print, a piece taken back)
        alt = observation.runners_up.get(new[0])
        pieces = [after.structures[lot], *([alt.structure] if alt is not None and alt.structure is not None else [])]
        if any(self._legal_move_to(Position(after.tiles, {**self.accepted.structures, lot: piece}))
               for piece in pieces):
            return None
        return new[0]

    def _legal_runner_up(self, after: Position, observation: Observation) -> Outputs | None:
        """A board that breaks a rule, which is one legal move when one new piece read doubtfully
        is taken as its runner-up answer; None unless exactly one such piece makes it so.

        Why: the network's doubt is often between two pieces, and the rules
        know which of them the players could have put there.  A black coin
        read "green tower with a black cap, 0.74; black dome, 0.26" on white's
        turn is a white move under its second answer and an out-of-turn cap
        under its first (printed game 1001).  Players break a rule far more
        rarely than a reading that unsure is wrong, and a warning taken on
        it cannot be cleared by any move of theirs: the piece stays misread.
        The move is marked faint (check it), and a later reading that is
        sure of the first answer corrects it as any misread move is.

        A piece neither player has left is no piece anyone put down: then
        any runner-up piece of the lot is tried (``IMPOSSIBLE_RUNNER_UP``),
        however surely the first answer reads (the reader names a runner-up
        only below its own sure bar).  A blue dome read "blue tower, 0.95;
        blue dome, 0.05" after the fifth blue tower was built gave "white
        has no blue tower left", and as the misread stayed, every later
        board was a warning (made-up-art game 2403).

        It is tried before a doubtful build plies back is taken back
        (``_retract_doubtful``) when the turn order is what the board
        breaks: a bare red tower on a black tile read "capped black, 0.65;
        bare, 0.34" on white's turn made the cap legal with black's tower
        three plies back, read "0.899, empty 0.03", taken away, and every
        later move went to the wrong player (path-traced game 121: 29 of 38
        moves right; 37 with the frame's own doubt first).
        """
        assert self.game is not None and self.accepted is not None
        candidates = []
        for name in observation.runners_up:
            lot = parse_lot(name)
            read = after.structures.get(lot)
            fresh = read if read is not None and lot not in self.accepted.structures else None
            impossible = fresh is not None and self._none_left(fresh.piece)
            cap_in_doubt = read is not None and self._cap_not_the_movers(lot, read, observation, name)
            runner_up = _runner_up_to_try(observation, name,
                                          IMPOSSIBLE_RUNNER_UP if impossible or cap_in_doubt else LEGAL_RUNNER_UP)
            if (runner_up is None or observation.lot_confidence.get(name, 1.0) >= DOUBTFUL_MOVE and not impossible
                    or after.structures.get(lot) != observation.position.structures.get(lot)
                    or after.structures.get(lot) == self.accepted.structures.get(lot)):
                continue
            candidates.append((lot, runner_up))
        return self._the_one_legal(after, candidates)

    def _legal_as_seen(self, after: Position) -> Outputs | None:
        """A board that breaks a rule, which is one legal move when one new lot is taken as a
        structure it was read as unsurely in an earlier look (``_structures_seen``); None unless
        exactly one such structure makes it so.

        Why: a reading can swing between two answers on one still photo.  A
        green tower on a black tile read "green tower with a black cap,
        0.54; green tower, 0.47" on the frames read in two views and "the
        capped tower, 0.98" on those read in one (path-traced game 120);
        only the sure frames reached the rules, which found a black cap on
        white's turn and warned, and the players played on past it (three
        moves counted wrong).  The doubt was in view, only not in the frame
        judged: the rules settle it as they settle a runner-up in the frame
        itself (``_legal_runner_up``), marked faint, and a later sure
        reading of the first answer corrects it as any misread move is.
        """
        assert self.accepted is not None
        candidates = [(lot, structure) for lot, seen in self._structures_seen.items()
                      if (read := after.structures.get(lot)) is not None and lot not in self.accepted.structures
                      for structure in sorted(seen - {read}, key=lambda s: (s.kind, s.color, s.cap or ""))]
        return self._the_one_legal(after, candidates)

    def _the_one_legal(self, after: Position, candidates: list[tuple[int, Structure]]) -> Outputs | None:
        """The legal move ``after`` is with one candidate structure put on its lot, taken faint (once
        the board is confirmed), when exactly one candidate makes it one; None otherwise."""
        options = [(lot, found) for lot, structure in candidates if (found := self._legal_as(after, lot, structure))]
        if len(options) != 1:
            return None
        lot, (structure, move) = options[0]
        if not self._confirmed(after):
            return self._look_again()
        return self._accept_faint(move, {lot: structure})

    def _cap_not_the_movers(self, lot: int, read: Structure, observation: Observation, name: str) -> bool:
        """Whether ``read`` puts the cap of the player not on turn on a new tower, or on the accepted
        bare tower on ``lot``, with the same tower as its runner-up: on a new tower bare or with the
        mover's cap (the tower read surely, only its cap in doubt), on an older one with the mover's
        cap (the cap surely put down, only its colour in doubt).

        Why: the caps are the players' own pieces ("3 small white" for one,
        "3 small black" for the other), so the mover has none of the other's
        to put down; and the top of a dark translucent tower is what a black
        cap looks like from above.  A blue tower read "capped black, 0.80;
        bare, 0.14" on white's turn (path-traced game 126, its corners found
        on the step from the table) is white's blue tower: warned about, the
        misread stays, and every later board is a warning.  Likewise a white
        cap on white's older blue tower read "capped black, 0.83; capped
        white, 0.18" (made-up-art app game 2901) was "a black cap appeared on
        A4 but it is white's turn".

        Why not a bare runner-up on an older tower: the cap is all that
        changed on the lot, and reading it away drops a change the camera
        saw.  When the turn is what breaks, an earlier doubtful build may be
        what was wrong (``_correct_history``, ``_retract_doubtful``): in the
        renderer's made-up-art game 146, black's cap on a green tower, read
        "capped black, 0.83; bare, 0.15" while a phantom blue tower had given
        black a ply too many, was taken bare, and every later board warned
        "a cap appeared on H2 without a build".
        """
        assert self.game is not None and self.accepted is not None
        alt = observation.runners_up.get(name)
        if read.kind != "tower" or read.cap is None or read.cap == self.game.turn or alt is None:
            return False
        accepted = self.accepted.structures.get(lot)
        if accepted is None:
            return _only_its_cap_in_doubt(read, alt)
        return accepted == read.with_cap(None) and alt.structure == read.with_cap(self.game.turn)

    def _piece_used_up(self, after: Position) -> bool:
        """Whether ``after`` is one build of a piece the player on turn has none of left (as the
        game was read).

        Why it matters which explanation goes first: such a board is either
        an older build misread (``_repiece_doubtful``), which the supply shows
        only when it runs out, or a doubtful build of the last plies that never
        happened and put the turns out by one (``_retract_doubtful``).  A
        taken-back build still read there is a piece the camera sees thrown
        away; a re-read keeps every piece and changes one reading to what that
        lot shows or showed.  Made-up-art game 3703: white's red tower on H9
        read "red dome, 0.64–0.82; red tower, 0.10–0.29" for fourteen plies,
        using up white's red domes; white's real red dome on B3 then took back
        black's red dome on H8, read 0.77 and still there, as the misread, and
        gave B3 to black (32 of 38 moves).
        """
        assert self.game is not None
        added = self._added_since_accepted(after)
        return added is not None and len(added) == 1 \
            and self.game.supply[self.game.turn][after.structures[added[0]].piece] <= 0

    def _none_left(self, piece: Piece) -> bool:
        """Whether every one of ``piece`` in the game is on the board already (as the game was read)."""
        assert self.game is not None
        return all(self.game.supply[player][piece] <= 0 for player in self.game.supply)

    def _with_unread_builds(self, unread: Position | None, after: Position,
                            observation: Observation) -> Outputs | None:
        """The board with the builds read too unsurely to count, when the board without them is
        no legal move (it breaks the turn order, or is no one move) and with them is one legal
        move (taken as a faint one), or two or three moves turn by turn; None otherwise.

        Why: a flat coin of its tile's colour or a dark tower can read at
        0.6 for as long as it stands.  Left out, the next player's build is
        taken as the missing player's, and the first cap after it comes "out
        of turn".  The players' turns say it was a move, as a doubtful build
        caught up wrongly is taken back by them (``_retract_doubtful``).
        Left out of a move that caps a tower with it, it leaves "a cap
        without a build" (printed game 1001: a red coin at 0.57 put down
        with a black cap).  Only a cap first seen in the same reading as the
        build is its own: a cap whose build the camera never saw is not
        given to the next doubtful piece to show (made-up-art game 700).
        When no such move or catch-up fits, the unread builds first seen
        longest ago are left out one by one (``_older_unread_left_out``),
        then the unread towers are tried without the caps they were read
        with (``_unread_caps_off``), and then the last plies are read again
        with them (``_reread_with_unread_builds``).
        """
        if unread is None:
            return None
        boards = list(self._older_unread_left_out(unread, after))
        boards += [bare for board in boards if (bare := _unread_caps_off(board, after)) is not None]
        for board in boards:
            found = self._with_these_unread_builds(board, observation)
            if found is not None:
                return found
        for board in boards:
            found = self._reread_with_unread_builds(board, after)
            if found is not None:
                return found
        return None

    def _older_unread_left_out(self, unread: Position, after: Position) -> Iterator[Position]:
        """``unread``, then without its unread build first seen longest ago, then without the two
        oldest, and so on while one is left.

        Why: a piece that stood unread while moves elsewhere were accepted
        turn by turn is less likely a move made now than one first seen
        since.  A green tower leaning over its neighbour read there as a
        green dome at 0.8-0.9 for ten plies (made-up-art game 1605); when a
        black dome read at 0.7 then stood unread as the next player built,
        the two unread pieces together were no legal catch-up, and every
        later move went to the wrong player.
        """
        oldest_first = self._arrival_order(sorted(set(unread.structures) - set(after.structures)))
        for dropped in range(len(oldest_first)):
            yield Position(unread.tiles, {lot: s for lot, s in unread.structures.items()
                                          if lot not in oldest_first[:dropped]})

    def _reread_with_unread_builds(self, unread: Position, after: Position) -> Outputs | None:
        """The last plies read again (:func:`reread_history`) with the builds read too unsurely to
        count, when that is a legal history; the unread builds in it taken faint.

        Why: a build that stood unread while the next player built had the
        next build given to its player, and the history looked legal until
        the player after showed a piece only the other one had left
        (made-up-art game 1605: a red tower read at 0.6 for two turns,
        the green dome after it taken as white's, then "black has no red
        tower left").  Catching up cannot mend that: a popped ply must be
        given back to its player.  So a re-reading that leaves every popped
        ply as it was is a catch-up, already judged, and is not taken; nor
        is one that gives an unread build a cap not first seen with it
        (the guard of ``_with_unread_builds``).
        """
        assert self.game is not None and self.accepted is not None
        found = reread_history(self.game, unread, arrival=self._arrival_order, caps_seen=self._caps_seen_with())
        if found is None or found.violations or found.popped == found.moves[: len(found.popped)]:
            return None
        faint = {move.lot: unread.structures[move.lot] for move in found.moves
                 if move.lot is not None and move.lot not in after.structures}
        if not faint or any(move.lot in faint and move.cap is not None and not self._cap_seen_with_build(move)
                            for move in found.moves):
            return None
        if not self._confirmed(unread):
            return self._look_again()
        record = self._rewrite(found)
        self.note = found.words()
        return self._marked_faint(self._settled(record, unread), faint, caps=set())

    def _with_these_unread_builds(self, unread: Position, observation: Observation) -> Outputs | None:
        move = self._legal_move_to(unread)
        if move is None or move.lot is None or move.cap is None or not self._cap_seen_with_build(move):
            return self._catch_up(unread) or self._caught_up_as_runner_up(unread, observation)
        if not self._confirmed(unread):
            return self._look_again()
        return self._accept_faint(move, {move.lot: unread.structures[move.lot]})

    def _caught_up_as_runner_up(self, unread: Position, observation: Observation) -> Outputs | None:
        """``unread`` (see ``_with_unread_builds``) caught up with one of its unread builds taken
        as that lot's runner-up answer, when exactly one such build makes the moves legal.

        Why: a build too unsure to count is unsure between two answers, and
        when the turn order shows it was a move, the rules know which of
        them the player could have built (printed game 1204: a green tower
        read "green dome, 0.54-0.81" all the while, on a tile where a green
        dome could not go, was left out, and the next two moves were given
        to the wrong players).  Taken faint, as ``_legal_runner_up`` does.
        """
        assert self.accepted is not None
        options = []
        for lot in set(unread.structures) - set(self.accepted.structures):
            runner_up = _runner_up_to_try(observation, LOT_NAMES[lot])
            if runner_up is None:
                continue
            board = Position(unread.tiles, {**unread.structures, lot: runner_up})
            moves = self._missed_moves(board)
            if moves is not None:
                options.append((board, moves, lot, runner_up))
        if len(options) != 1:
            return None
        board, moves, lot, structure = options[0]
        if not self._confirmed(board):
            return self._look_again()
        return self._marked_faint(self._caught_up(moves), {lot: structure}, caps=set())

    def _note_seen_empty(self, observation: Observation) -> None:
        assert self.accepted is not None
        structures = observation.position.structures
        self._empty_now = {LOT_NAMES[lot] for lot in range(len(LOT_NAMES))
                           if lot not in structures and lot not in self.accepted.structures
                           and observation.lot_confidence.get(LOT_NAMES[lot], 1.0) >= SEEN_EMPTY}
        self._seen_empty |= self._empty_now
        for name in self._empty_now:
            self._held_bars.pop(parse_lot(name), None)
            self._shadows.discard(parse_lot(name))
            self._faint_since.pop(parse_lot(name), None)
            self._structures_seen.pop(parse_lot(name), None)

    def _note_structures_seen(self, observation: Observation) -> None:
        """Remember the structures each new lot read below DOUBTFUL_MOVE shows: its answer, and its
        runner-up when that is a piece at least LEGAL_RUNNER_UP probable."""
        assert self.accepted is not None
        for name, confidence in observation.lot_confidence.items():
            lot = parse_lot(name)
            if confidence >= DOUBTFUL_MOVE or lot in self.accepted.structures:
                continue
            read = observation.position.structures.get(lot)
            runner_up = _runner_up_to_try(observation, name)
            for structure in (read, runner_up):
                if structure is not None:
                    self._structures_seen.setdefault(lot, set()).add(structure)

    def _faint_builds(self, observation: Observation) -> list[tuple[str, Structure]]:
        """The lots that were read empty surely since the last move and now read empty only
        unsurely, each with a piece clearly behind that doubt.

        Why: the board shows no change, yet a player's hand came and went.  A
        clear tower of its tile's own colour, or a flat coin on its own colour,
        can read "empty, 0.64" with "red tower, 0.36" behind it, and that
        is the move.  A lot merely near a new piece (its shadow, a lean) never
        read surely empty since that move, and its doubt does not count.
        """
        assert self.accepted is not None
        candidates = []
        for name, alt in observation.runners_up.items():
            lot = parse_lot(name)
            if (name in self._seen_empty and lot not in self.accepted.structures
                    and lot not in observation.position.structures
                    and observation.lot_confidence.get(name, 1.0) < self.min_confidence
                    and alt.structure is not None and alt.probability >= FAINT_PIECE_PROBABILITY):
                other = self._other_kind_if_used_up(alt.structure)
                if other is not None:
                    candidates.append((name, other))
                elif alt.share >= FAINT_PIECE_SHARE:
                    candidates.append((name, alt.structure))
        return candidates

    def _other_kind_if_used_up(self, read: Structure) -> Structure | None:
        """The same colour's other kind, bare, when neither player has ``read``'s piece left and
        it has another kind (no black dome); None otherwise.

        Why: every such piece already stands, and a dome read as a tower of
        its colour is the network's likeliest slip (``_as_a_piece_still_in_play``);
        the doubt behind "empty" then names the wrong kind, and its share of
        the pieces says nothing of the right one (made-up-art game 3901, ply
        24: black's red dome on A10 read "empty 0.53" with "red tower" behind
        it when every red tower stood built).
        """
        if self.game is None or not self._none_left(read.piece) \
                or (read.kind == "dome" and read.color not in TOWER_COLORS):
            return None
        return Structure("dome" if read.kind == "tower" else "tower", read.color)

    def _note_departed(self, observation: Observation, changed: list[str]) -> None:
        """Remember each lot whose look changed while it read empty, with the piece its runner-up
        names (a share of at least DEPARTED_PIECE_SHARE), since the accepted board; not a lot beside
        a changed structure or one whose look changed (a tower set straight), whose shadow and
        lean change its neighbours' looks.

        Nor any lot when something came or went in the picture around the
        board since the reading before (``Observation.moved_beside``): a
        hand resting beside the board, or held above it, covers no lot and
        is no occlusion, but its shade changes the looks it falls on.  The
        project's renderer's photo game 101 took a hand's shade on A2
        ("empty 0.9999", "green dome" 0.51 of the pieces behind it) for
        white's move while the hand still lay beside A1, and white's real
        move then came "out of turn"; games 102 and 104 took the lifting of
        a hand's shade for a red tower (H1) and a blue one (F10).
        """
        assert self.accepted is not None
        if self._departed_since is not self.accepted:
            self._departed_since, self._departed, self._looks_changed = self.accepted, {}, set()
        self._looks_changed |= {parse_lot(name) for name in self._newly_departed}
        if observation.moved_beside:
            return
        standing = set(self.accepted.structures) | set(observation.position.structures)
        moved = [parse_lot(name) for name in changed] + \
            [lot for lot in map(parse_lot, observation.departed) if lot in standing]
        for name in observation.departed:
            lot, alt = parse_lot(name), observation.runners_up.get(name)
            if (lot not in observation.position.structures and lot not in self.accepted.structures
                    and not any(_touching(lot, other) for other in moved)
                    and alt is not None and alt.structure is not None and alt.share >= DEPARTED_PIECE_SHARE):
                self._departed[lot] = alt.structure

    def _departed_piece(self, observation: Observation) -> tuple[int, Structure] | None:
        """The one lot remembered by ``_note_departed`` that reads empty still and was read surely
        empty since the last move, with its piece; None when there is none or more than one."""
        if self._departed_since is not self.accepted:
            return None
        candidates = [(lot, structure) for lot, structure in self._departed.items()
                      if lot not in observation.position.structures and LOT_NAMES[lot] in self._seen_empty
                      and observation.lot_confidence.get(LOT_NAMES[lot], 1.0) > 0.0]
        return candidates[0] if len(candidates) == 1 else None

    def _departed_build(self, observation: Observation) -> Outputs | None:
        """On a board that reads as it did: the one lot whose look changed since the last move while
        every reading called it empty, taken (after the looks) as its runner-up piece when that is a
        legal move, marked faint.

        Why: a black dome on a black tile can read "empty" at 0.9 to 0.99,
        too surely for a faint build, while its rim and gloss still change
        the lot's look past the bar for a change.  A hand came and went and
        one lot alone looks different: that is the move.  Cycles made-up-art
        game 105 lost four such domes (B8, G9, G2, B7), each time with the
        lot the only one departed away from a new piece and "black dome"
        behind "empty"; the first cost every later move.  Two such lots at
        once (a bumped tile, a moved lamp) are no single move and are left.
        """
        assert self.accepted is not None
        found = self._departed_move(self.accepted, observation)
        if found is None:
            return None
        if self._looks < self.max_looks:
            return self._looking([LOT_NAMES[found[0]]])
        return self._accept_departed(*found)

    def _completed_by_departed(self, after: Position, observation: Observation) -> Outputs | None:
        """A board that is no move, made one legal move by the departed lot's piece
        (``_departed_piece``): accepted so, that piece marked faint.

        Why: a cap seen alone is no move, and in game 105 the build that went
        with it was a black dome on a black tile that read "empty", its lot
        the only one departed away from the cap.
        """
        found = self._departed_move(after, observation)
        return None if found is None else self._accept_departed(*found)

    def _completed_by_doubted_empty(self, after: Position, observation: Observation,
                                    below: float = DOUBTED_EMPTY) -> Outputs | None:
        """A board that is no move, made one legal move by the one lot read surely empty since the
        last move that now reads "empty" below ``below`` (even odds) with a piece as its runner-up:
        that piece, or, when neither player has one left, its colour's other kind.  Accepted so,
        marked faint.

        Why: a cap seen alone is no move, and its build may be a piece the
        network splits between two answers and "empty", none of them above
        even odds (made-up-art game 3901, ply 21: white's green dome on D9,
        put down with a cap on C7, read "empty 0.34, green tower 0.33" when
        every green tower was built; the cap was warned about as one without
        a build, the next build was taken as white's with it, and the turns
        stayed one out).  "Empty" that unsure, on the one lot a hand could
        have built on, is not the reading of an empty lot.

        Asked again with ``below`` at ``min_confidence`` only when every other
        answer has failed and the board would be warned about: the project's
        renderer's fresh game 131 (photo 38) put a black cap on F4 with a
        blue tower on A8 that read "empty 0.65, blue tower 0.37", and the
        red light came for a cap without a build.  Earlier in the chain the
        wider bar would take the place of answers that did better.
        """
        assert self.accepted is not None
        doubted = [name for name, alt in observation.runners_up.items()
                   if name in self._seen_empty and alt.structure is not None
                   and (lot := parse_lot(name)) not in self.accepted.structures
                   and lot not in observation.position.structures
                   and observation.lot_confidence.get(name, 1.0) < below]
        if len(doubted) != 1:
            return None
        lot, read = parse_lot(doubted[0]), observation.runners_up[doubted[0]].structure
        assert read is not None
        other = self._other_kind_if_used_up(read)
        pieces = [read.with_cap(None), *([other] if other is not None else [])]
        found = [legal for piece in pieces if (legal := self._legal_as(after, lot, piece))]
        if len(found) != 1:
            return None
        piece, move = found[0]
        return self._accept_faint(move, {lot: piece})

    def _departed_move(self, board: Position, observation: Observation) -> tuple[int, Structure, Move] | None:
        """The departed lot (``_departed_piece``), its piece, and the legal move ``board`` with that
        piece added is; None when there is no such lot or that is no legal move."""
        found = self._departed_piece(observation)
        if found is None:
            return None
        lot, structure = found
        move = self._legal_move_to(Position(board.tiles, {**board.structures, lot: structure}))
        return None if move is None else (lot, structure, move)

    def _accept_departed(self, lot: int, structure: Structure, move: Move) -> Outputs:
        self._departed_builds.add(lot)
        return self._accept_faint(move, {lot: structure})

    def _unsure_arrivals(self, after: Position, unsure: list[str]) -> list[str]:
        """The lots read unsurely whose answer is a new piece.

        While there is one, no faint build is taken: such a piece is better
        evidence of the move than one that is only the runner-up behind
        "empty".  Made-up-art game 2802: black's blue tower on B8 read 0.64
        for a few frames while the empty F4 read "empty, 0.62" with a red
        tower behind the doubt; that faint tower was taken as black's move,
        and B8, read surely a move later, was caught up as a move of its
        own.  Ten plies on, black's real red tower was one too many, and
        the game was lost.  Looking on lets the tower read surely.

        A lot left out as a tower's shadow (``_shadow_of_a_tower_set_down``)
        is no such piece: it is ruled on, and only a surer reading makes it
        a piece again (``_bar``).  Else, after the looks, its "tower, or the
        tower capped" was taken as the next player's move by the rules
        (``_one_legal_answer``), or caught up as a pending arrival.
        """
        assert self.accepted is not None
        return [name for name in unsure
                if (lot := parse_lot(name)) in after.structures and lot not in self.accepted.structures
                and lot not in self._shadows]

    def _new_unsure_arrivals(self, after: Position, unsure: list[str]) -> list[str]:
        """The unsure arrivals (``_unsure_arrivals``) on lots read surely empty since the last move:
        pieces come since then, not print that reads like a piece now and then."""
        return [name for name in self._unsure_arrivals(after, unsure) if name in self._seen_empty]

    def _take_faint_builds(self, faint: list[tuple[str, Structure]]) -> Outputs | None:
        """One faint build taken as ``_take_faint_build`` does; two or three taken as moves missed
        turn by turn when some order of them is legal (after as many looks), each marked faint;
        None when there are none, more than ``MAX_CATCH_UP``, or several and no legal order
        (judged as before).

        Why: two coins on their own colour can go down while the board is
        never read still between them (made-up-art game 2401: black domes
        on black D7 and C5 read "empty, 0.62-0.67" side by side, and the
        game went on with both missing).  A print that reads like a piece
        beside a real faint build makes a second "move" too; the next move
        of the player it was given to then puts the turns out, and a build
        taken faint is taken back for that (``_retract_doubtful``).
        """
        if not faint:
            return None
        if len(faint) == 1:
            return self._take_faint_build(*faint[0])
        assert self.accepted is not None
        if len(faint) > MAX_CATCH_UP:
            return None
        if self._looks < self.max_looks:
            return self._looking([name for name, _ in faint])
        structures = {parse_lot(name): structure for name, structure in faint}
        board = Position(self.accepted.tiles, {**self.accepted.structures, **structures})
        moves = self._missed_moves(board)
        if moves is None:
            return None
        return self._marked_faint(self._caught_up(moves), structures, caps=set())

    def _caught_up_with_faint(self, after: Position) -> Outputs | None:
        """``after``, a board that is no legal move, with the faint builds shown since the last move
        (``_faint_builds``) on lots it leaves empty added, caught up turn by turn (``_missed_moves``),
        each faint build marked; None when there are none or no order of them all is legal.

        Why: a faint build is taken alone only while nothing else changed,
        and the next player need not wait for it.  Printed game 4003: black's
        red dome on its red tile G1 read "empty 0.57, red dome 0.43" on a lot
        read surely empty since white's last move, and a frame later white's
        red tower on E8 read surely.  Judged as black's, that was "black has
        no red tower left", a warning, and the two builds were later caught
        up in the wrong turns (32 of 37 moves, 3 false warnings).  The dome
        first, then the tower, is the one order the turns allow.  The
        dome's doubt comes and goes ("empty" at 0.57 to 0.88 on the next
        readings), so a faint build counts until its lot reads surely empty.
        """
        structures = {lot: structure for lot, structure in self._faint_since.items() if lot not in after.structures}
        if not structures:
            return None
        board = Position(after.tiles, {**after.structures, **structures})
        moves = self._missed_moves(board)
        if moves is None:
            return None
        if not self._confirmed(after):
            return self._look_again()
        return self._marked_faint(self._caught_up(moves), structures, caps=set())

    def _take_faint_build(self, lot: str, structure: Structure) -> Outputs:
        """Look again while looks are left; then accept the faint build if it is a legal move (amber if not).
        Any other lot still read unsurely counts as it was."""
        assert self.game is not None and self.accepted is not None
        if self._looks < self.max_looks:
            return self._looking([lot])
        after = Position(self.accepted.tiles, {**self.accepted.structures, parse_lot(lot): structure})
        inference = infer_move(self.accepted, after, self.game)
        if inference.kind != "move" or inference.move is None or self.game.violations(inference.move):
            return self._looking([lot])
        return self._accept_faint(inference.move, {parse_lot(lot): structure})

    def _accept_faint(self, move: Move, faint: Mapping[int, Structure]) -> Outputs:
        """Accept a legal move part of which only the readings' doubt showed (``faint``: lot ->
        the structure taken), marked for the players to check."""
        assert self.game is not None
        return self._marked_faint(self._accept(move, override=False), faint, caps={move.cap})

    def _marked_faint(self, accepted: Outputs, faint: Mapping[int, Structure], caps: set[int | None]) -> Outputs:
        """What accepting moves showed, the moves building or capping a ``faint`` lot marked for the
        players to check (their records ``"faint": true``), those lots as doubtful as a move gets."""
        self._faint.update(faint)
        for lot in faint:
            if lot in caps:
                self._cap_confidence[lot] = 0.0
            else:
                self._accepted_confidence[lot] = 0.0
                self._built_surely.discard(lot)
        names = {LOT_NAMES[lot] for lot in faint}
        records = tuple(dict(r, faint=True) if r["type"] == "move"
                        and {r["move"].get("build", {}).get("lot"), r["move"].get("cap")} & names else r
                        for r in accepted.records)
        return self._noted(accepted, " (faint: check it)", records)

    def _noted(self, accepted: Outputs, words: str, records: tuple[dict[str, Any], ...]) -> Outputs:
        """What accepting a move showed, with ``words`` after the last move's note and ``records``
        logged instead of its own."""
        if self.phase is not Phase.PLAYING:  # the game ended with it: the final screen stands
            return self._emit(accepted.light, accepted.screen, accepted.beep, records)
        self.note += words
        return self._emit(accepted.light, self._turn_screen(), accepted.beep, records)

    def _cap_chances(self, observation: Observation) -> dict[tuple[int, str], float]:
        """The most each cap on each unclaimed tower can be, on this reading."""
        assert self.accepted is not None
        return {(lot, player): _cap_chance(observation, lot, tower.with_cap(player), at_most=True)
                for lot, tower in self.accepted.structures.items()
                if tower.kind == "tower" and tower.cap is None for player in PLAYERS}

    def _faint_cap(self, move: Move, observation: Observation) -> Move | None:
        """``move`` with the one cap its reading shows only faintly, if that makes a legal move; else None.

        Why: a black cap on a blue or green tower can read "uncapped, 0.52"
        with "capped, 0.48" behind it.  Read in the very reading that shows
        the mover's build, on a tower whose cap was out of the question on
        every still reading before, that cap is the build's claim; taken
        later, it would be a cap without a build.  A tower whose look
        changed since the last move, alone away from the build, counts even
        when its cap was as probable before (``_capped_as_it_changed``).
        """
        assert self.game is not None and self.accepted is not None
        if move.is_pass or move.cap is not None:
            return None
        candidates = []
        for lot, tower in self.accepted.structures.items():
            if tower.kind != "tower" or tower.cap is not None or (lot, move.player) not in self._cap_before:
                continue
            chance = _cap_chance(observation, lot, tower.with_cap(move.player), at_most=False)
            if chance >= FAINT_CAP_PROBABILITY and (
                    chance - self._cap_before[(lot, move.player)] >= FAINT_CAP_RISE
                    or self._capped_as_it_changed(lot, move)):
                candidates.append(lot)
        if len(candidates) != 1:
            return None
        amended = Move(move.player, move.lot, move.piece, candidates[0])
        return None if self.game.violations(amended) else amended

    def _cap_come_now(self, move: Move, after: Position) -> Outputs | None:
        """The cap of a tower that was taken as capped by its own build, doubtfully, moved to ``move``
        when the tower's look changed with it (``_capped_as_it_changed``); None unless exactly one
        such tower makes every move since legal that way.

        Why: seen from above, a clear tower's dark top reads as a black cap
        from the frame the tower comes in, and its builder may cap their own
        new tower, so "black built a red tower and capped it" is a legal
        move and was taken (path-traced game 133, ply 13: "capped black,
        0.88").  When black really capped it 22 plies later the reading said
        what it had said all along, the cap was missed and the final board
        was wrong.  A cap set on a tower changes its look, away from the
        build and with nothing else changed, and a cap never leaves: the cap
        came now, and the tower stood bare until then.  The history is
        rewritten without the early cap, then the board is judged as usual.
        """
        assert self.game is not None and self.accepted is not None
        if move.is_pass or move.cap is not None:
            return None
        found = []
        for lot, tower in self.accepted.structures.items():
            if tower.kind != "tower" or tower.cap != move.player \
                    or self._cap_confidence.get(lot, 1.0) >= DOUBTFUL_MOVE \
                    or not self._capped_as_it_changed(lot, move):
                continue
            uncapping = self._history_without_cap(lot)
            if uncapping is None or uncapping.popped[0].lot != lot:
                continue  # only a cap taken with its own tower's build: one read from the frame it came in
            if _legal_from(self.game, len(uncapping.popped),
                           (*uncapping.moves, Move(move.player, move.lot, move.piece, lot))):
                found.append((lot, uncapping))
        if len(found) != 1:
            return None
        if not self._confirmed(after):
            return self._look_again()
        lot, rereading = found[0]
        record = self._rewrite(rereading)
        record["uncapped"] = LOT_NAMES[lot]
        self._cap_confidence.pop(lot, None)
        self.note = f"corrected: the cap on {LOT_NAMES[lot]} came now"
        return self._settled(record, after)

    def _history_without_cap(self, lot: int) -> "Rereading | None":
        """The plies from the one that capped ``lot`` on, re-read with that cap off (each later ply as
        it was); None when no ply capped it."""
        assert self.game is not None
        capped_at = max((i for i, m in enumerate(self.game.moves) if m.cap == lot), default=None)
        if capped_at is None:
            return None
        popped = tuple(self.game.moves[capped_at:])
        return Rereading(popped, (Move(popped[0].player, popped[0].lot, popped[0].piece, None), *popped[1:]))

    def _capped_as_it_changed(self, tower: int, move: Move) -> bool:
        """Whether the tower's look changed since the last move, away from ``move``'s build, with
        every other lot whose look changed since beside the build or the tower.

        Why: seen from nearly above, a blue tower's face turned from the
        lamps is as dark under its apex as a black cap, so the tower can
        read "capped black" from the frame it came in.  When black caps it
        later, the reading says what it said before and no cap rises; but a
        cap set on a tower changes its look.  Path-traced game 126: black
        built on G1 and capped E4, whose tower had read "capped black" at
        0.7 to 0.9 since white built it; the lots whose look changed were
        G1, its neighbours and E4, and the cap was missed.  A moved lamp or
        a bumped board changes lots all over, and is no cap; and a new
        tower's shadow reaches two lots (a dome's, one), so a tower that
        near the build may have changed its look by that alone.  The looks
        are counted over every reading since the last move, as the build may
        be read too unsurely to count in the reading that saw the cap come,
        each but for a lot that changed in the reading before as well
        (restless: see ``_looks_set_down_alone``).
        """
        if self._departed_since is not self.accepted or tower not in self._looks_changed \
                or move.lot is None or move.piece is None:
            return False
        reach = BUILD_SHADOW_REACH[move.piece.kind]
        if _lots_apart(tower, move.lot) <= reach:
            return False
        return all(_lots_apart(lot, move.lot) <= reach or _touching(lot, tower) for lot in self._looks_changed)

    def _with_faint_builds(self, after: Position, observation: Observation) -> Position:
        """``after`` with each faint build still standing where the reading's doubt still points to it.

        A faint build reads as unsurely empty on every frame after it was
        taken; that is no take-back.  Read surely empty, or surely as
        something else, it is (``_doubt_points_to``).
        One taken from a departed look (``_departed_build``) reads "empty"
        surely all along: it stands until its look changes again.
        """
        assert self.accepted is not None
        if not self._faint:
            return after
        structures = dict(after.structures)
        for lot, structure in list(self._faint.items()):
            if self.accepted.structures.get(lot) != structure:
                del self._faint[lot]  # taken back or corrected since
                self._departed_builds.discard(lot)
                continue
            alt = observation.runners_up.get(LOT_NAMES[lot])
            unmoved = lot in self._departed_builds and lot not in structures \
                and LOT_NAMES[lot] not in observation.departed and observation.lot_confidence.get(LOT_NAMES[lot], 1.0) > 0.0
            if structures.get(lot) != structure and (unmoved or self._doubt_points_to(lot, structure, alt, observation)):
                structures[lot] = structure
        return Position(after.tiles, structures)

    @staticmethod
    def _doubt_points_to(lot: int, structure: Structure, alt: RunnerUp | None, observation: Observation) -> bool:
        """Whether the reading of a faint build's lot still doubts its "empty" toward that build:
        its runner-up, read below REMOVAL_CONFIDENCE.

        Why not at any confidence: a runner-up is kept at 0.00 on a lot
        read "empty" at 0.98, and the faint build then stood on a lot the
        camera saw surely bare.  The project's renderer's game 120 (on a
        red gingham) took a shade beside a new capped tower for white's
        black dome on A1 ("empty 0.65, black dome 0.35" on five still
        frames); white's real build, a green tower on B1, came with A1
        read "empty 0.98", was given to black, and two warnings that the
        dome was removed came before a re-reading of the plies mended it.
        Read surely empty, the faint build is the dispute any accepted
        piece gone is, and the re-reading comes first.
        """
        return alt is not None and alt.structure == structure \
            and observation.lot_confidence.get(LOT_NAMES[lot], 1.0) < REMOVAL_CONFIDENCE

    def _merge_looks(
        self, after: Position, changed: list[str], confidence: Mapping[str, float]
    ) -> tuple[Position, list[str]]:
        """Per changed lot, an unsure reading gives way to the most confident one since the
        board last moved.  A confident reading always stands: a glitch read with high
        confidence must not outlive the frames that showed it."""
        doc = after.to_json()
        structures = doc["structures"]
        for name in changed:
            score = float(confidence.get(name, 1.0))
            best = self._best.get(name)
            if best is None or score >= best[0] or score >= self.min_confidence:
                self._best[name] = (score, structures.get(name))
            else:
                if best[1] is None:
                    structures.pop(name, None)
                else:
                    structures[name] = best[1]
        built = self.accepted.structures if self.accepted is not None else {}
        for name in changed:
            lot, now = parse_lot(name), self._best[name][1]
            if now is None or lot in built or not self._icon_kept_free(lot, now):
                continue
            if lot not in self._first_seen and self._looks_set_down_alone(lot, now, changed):
                self._set_down_alone.add(lot)
            if lot not in self._set_down_alone:
                self._held_bars[lot] = max(self._held_bars.get(lot, 0.0), ICON_ARRIVAL_CONFIDENCE)
        unsure = [name for name in changed
                  if self._best[name][0] < self._bar(parse_lot(name), parse_lot(name) in built, self._best[name][1])]
        return Position.from_json(doc), unsure

    def _looks_set_down_alone(self, lot: int, now: Mapping[str, Any], changed: list[str]) -> bool:
        """Whether ``lot``'s look changed in this reading (``Observation.departed``), every other lot
        whose look changed (but restless ones) lies within the shadow of ``now`` (position JSON) set
        there, and no other lot first shows a piece.

        Why: an icon read as a piece is the print misread, mostly after a
        lamp change, which changes the look of lots all over the board,
        or all along, which changes none.  A piece set down changes its own
        lot's look and its shadow's.  So an arrival on an icon lot the
        tile's rules keep free, seen so, is a build like any other, and an
        illegal one gets its warning: 19 of the 26 illegal builds that 134
        generated app games missed were pieces on icon lots read at 0.75 to
        0.93, looked at until the players, who put them right within half a
        second, had taken them back (printed game 3400: a black dome on a
        red tile's icon lot read "black dome, 0.90" five times over).  A
        lot whose look changed in the reading before as well is restless (a
        flicker of its light or of the frame, not a piece) and is left out:
        made-up-art game 2001's C1 changed on every reading, and a red dome
        on an icon lot, read at 0.93, never looked set down alone.
        """
        departed = self._observation.departed if self._observation is not None else frozenset()
        if LOT_NAMES[lot] not in departed:
            return False
        reach = BUILD_SHADOW_REACH[now["kind"]]
        if not all(_lots_apart(parse_lot(name), lot) <= reach for name in self._newly_departed):
            return False
        assert self.accepted is not None
        return not any(other != lot and other not in self.accepted.structures and other not in self._first_seen
                       for other in map(parse_lot, changed))

    def _bar(self, lot: int, was_built: bool, now: Any) -> float:
        """The confidence a changed lot's reading needs to count.

        Pieces never leave an Alien City board in play, while the one piece
        a camera can barely see (a black coin on a black tile, a flat coin of
        the tile's own colour) is exactly one it may come to read as gone.
        So an accepted structure read as gone needs ``REMOVAL_CONFIDENCE``;
        below that it stays as it was while the move elsewhere is judged.
        The same holds for one read as another piece (a tower as a dome of
        its colour under a lamp that flattens it): swapping a piece is
        taking one off, and an accepted move is put right (a correction)
        only on a reading that sure.
        Caps never leave either, and a black cap is the piece most often
        read in doubt, so an accepted cap read as gone needs
        ``CAP_GONE_CONFIDENCE``, what the reading itself calls sure
        (made-up-art game 2703: a real black cap read bare at 0.899 beside
        a new neighbour, "the black cap on A5 was removed" on two boards).
        A cap put down in doubt and then read surely bare is still taken off
        its move (``_uncap_doubtful``), which asks the same.

        Likewise a tile's icon is the print most like a piece (a disc the
        size of a dome), and after a lamp change it can read as one for many
        frames; a build there while rule 5 still keeps the lot free is rare
        by comparison.  So such an arrival needs ``ICON_ARRIVAL_CONFIDENCE``
        (0.93: above the icon prints read as pieces in the app bench, below
        a real dome on an icon lot read at 0.948; docs/app.md).  The bar is
        the one the arrival met when it first showed (``_merge_looks`` holds
        it), and it holds until the lot reads surely empty: once the tile's
        other lots are built, rule 5 no longer keeps the lot free, but a
        print read as a piece since then is no build made now.  A lot whose
        move was taken back as never made (``_retract_doubtful``) is held at
        ``RETRACTED_CONFIDENCE`` the same way: what was read there is still
        read there.
        """
        if was_built and (now is None or self._replaced(lot, now)):
            return max(self.min_confidence, REMOVAL_CONFIDENCE)
        if was_built and self._uncapped(lot, now):
            return max(self.min_confidence, CAP_GONE_CONFIDENCE)
        if not was_built and now is not None:
            return max(self.min_confidence, self._held_bars.get(lot, 0.0))
        return self.min_confidence

    def _uncapped(self, lot: int, now: Mapping[str, Any]) -> bool:
        """Whether ``now`` (position JSON) is the accepted capped tower on ``lot`` without its cap."""
        assert self.accepted is not None
        return self.accepted.structures[lot].cap is not None and now.get("cap") is None

    def _replaced(self, lot: int, now: Mapping[str, Any]) -> bool:
        """Whether ``now`` (position JSON) is another piece than the one accepted on ``lot``
        (a cap put on it is no other piece)."""
        assert self.accepted is not None
        built = self.accepted.structures[lot]
        return (now["kind"], now["color"]) != (built.kind, built.color)

    def _icon_kept_free(self, lot: int, structure: Mapping[str, Any]) -> bool:
        """Whether ``lot`` is its tile's icon lot, as the setup read it surely enough not to ask,
        and the tile's rules (``TILE_RULES``) forbid building ``structure`` (position JSON) there now.

        Rule 5 most often, but not only: under a new lamp a green ring icon
        read as a black dome breaks rule 2 before rule 5 is asked (made-up-art
        game 2105: read at 0.83 beside a real move, the two taken as "2
        structures at once", and the game held up for good).  An illegal
        build on a print shaped like a piece is rarer than the print read as
        one.  Not the turn order, though: that breaks when the referee missed
        a move, and a real piece it then holds up is a second move lost
        (made-up-art game 1904: a red dome read at 0.92 on an icon lot while
        the black coin before it still read unsurely).

        Why the setup's doubt matters: on a tile it asked the players to
        check, the icon may well be elsewhere, and a piece on the lot taken
        for it is a build like any other; rule 5 is then the layout's
        mistake, which ``_reseat_icon`` mends (made-up-art game 1504: a red
        dome read at 0.92 on the lot of a tile read at 0.48, held up, and
        every move after it was lost).
        """
        return not self._unsure_at_setup(TILE_OF[lot]) and self._on_icon_kept_free(lot, structure)

    def _on_icon_kept_free(self, lot: int, structure: Mapping[str, Any]) -> bool:
        """Whether ``lot`` is its tile's icon lot as the setup read it, however surely, and the
        tile's rules forbid building ``structure`` (position JSON) there now."""
        assert self.game is not None and self.accepted is not None
        if not self.accepted.is_icon(lot):
            return False
        move = Move(self.game.turn, lot, Piece(structure["kind"], structure["color"]))
        return any(v.rule in TILE_RULES for v in self.game.violations(move))

    def _doubt_passed(self) -> Outputs:
        """The light and screen as they were before the looks: green where they were amber.

        Used when a doubt about an old lot passed, and after the looks at
        lots left out as towers' shadows: there "Cannot read G7, set the piece
        straight" sends the players to a piece that is not there, and keeps
        the light amber until the next move (printed game 4002: most of the
        game, once G7 was known for the new G6 tower's shadow).  The shadow
        is ruled on; a piece there still counts once it reads surely (``_bar``).
        """
        if self._outputs.light is Light.AMBER:
            return self._emit(Light.GREEN, self._turn_screen())
        return self._emit(self._outputs.light, self._outputs.screen)

    def _looking(self, unsure: list[str]) -> Outputs:
        base = self._turn_screen()
        if self._looks < self.max_looks:
            self._looks += 1
            screen = Screen(ScreenKind.LOOKING, "Looking again",
                            (f"Not sure about {', '.join(unsure)}",), players=base.players,
                            turn=base.turn, lot=unsure[0], board=base.board)
            return self._emit(Light.AMBER, screen, look_again=True)
        screen = Screen(ScreenKind.LOOKING, "Cannot read " + unsure[0],
                        (f"Set the piece on {', '.join(unsure)} straight in its lot.",),
                        players=base.players, turn=base.turn, lot=unsure[0], board=base.board)
        return self._emit(Light.AMBER, screen)

    def _accept(self, move: Move, *, override: bool) -> Outputs:
        assert self.game is not None
        violations = self.game.violations(move) if override else []
        self.game.push(move)
        self.accepted = self.game.position.copy()
        self.verdict = None
        self._suspect = None
        self._vouched = None
        if move.lot is not None:
            self._support[move.lot] = 1  # the reading that accepted it
        self._note_accepted(move)
        # a new piece throws shadows and leans: only the sure looks of the reading that shows it, and later ones, count
        self._seen_empty = self._empty_now - ({LOT_NAMES[move.lot]} if move.lot is not None else set())
        self._accepted_at = self._readings
        # the reading that showed this move is the next one's "before", for the tower it built too
        self._cap_before = self._cap_chances(self._observation) if self._observation is not None \
            else dict(self._caps_now)
        self.phase = Phase.PLAYING
        self.board_moved()
        self.note = _move_words(move) + (" (house ruling)" if override else "")
        record: dict[str, Any] = {
            "type": "override" if override else "move",
            "ply": self.game.ply,
            "move": move_to_json(move),
            "position": self.accepted.to_json(),
        }
        if override:
            record["violations"] = [v.to_json() for v in violations]
        if self.game.is_over():
            return self._finished_with(record)
        return self._emit(Light.GREEN, self._turn_screen(), records=(record,))

    def _late_cap(self, after: Position) -> Outputs | None:
        """A cap put on after the build was already accepted belongs to that move."""
        assert self.game is not None and self.accepted is not None
        if not self.game.moves:
            return None
        last = self.game.moves[-1]
        old, new = self.accepted.structures, after.structures
        if set(old) != set(new) or last.is_pass or last.cap is not None:
            return None
        capped = [lot for lot in old if old[lot] != new[lot]]
        if len(capped) != 1:
            return None
        lot = capped[0]
        if old[lot].with_cap(new[lot].cap) != new[lot] or new[lot].cap != last.player:
            return None
        if self.game.turn == last.player:  # the other player passed: a cap now is a new turn's
            return None
        amended = Move(last.player, last.lot, last.piece, lot)
        self.game.pop()
        violations = self.game.violations(amended)
        if violations:
            self.game.push(last)
            return self._illegal(Verdict(after, None, tuple(violations)))
        self.game.push(amended)
        self._cap_confidence[lot] = self._best_confidence(lot)
        self.accepted = self.game.position.copy()
        self.phase = Phase.PLAYING
        self.verdict = None
        self.board_moved()
        self.note = _move_words(amended)
        record = {"type": "move", "ply": self.game.ply, "move": move_to_json(amended),
                  "position": self.accepted.to_json(), "amends": self.game.ply}
        return self._emit(Light.GREEN, self._turn_screen(), records=(record,))

    def _catch_up(self, after: Position) -> Outputs | None:
        """Two or three structures appeared at once: moves made while the board was never
        still long enough to read.  When some order of them, turn by turn, is entirely
        legal, those moves are what happened; otherwise it stays a plain problem."""
        moves = self._missed_moves(after)
        if moves is None:
            return None
        if not self._confirmed(after):
            return self._look_again()
        return self._caught_up(moves)

    def _missed_moves(self, after: Position) -> list[Move] | None:
        """The moves, turn by turn, that make the accepted board ``after`` when two or three
        structures appeared at once (see ``_catch_up``); None when no order is legal."""
        added = self._added_since_accepted(after)
        if added is None or not 2 <= len(added) <= MAX_CATCH_UP:
            return None
        moves = self._sequence_to(after, added)
        if moves is None or self._doubtful_extras(after, added):
            # (with doubtful extras: one move beside a phantom, _without_doubtful_arrival)
            return self._missed_moves_beside_shadows(after, added)
        return moves

    def _missed_moves_beside_shadows(self, after: Position, added: list[int]) -> list[Move] | None:
        """The moves, turn by turn, that make the accepted board ``after`` less the towers
        ``_tower_shadows`` names, when two or more structures are left; None when there are
        no such towers, or no legal order of what is left.

        Why: the light that casts a shadow stays, and so does the shadow,
        while the players play on.  Printed game 4605: E4's "blue tower"
        from the lamp change stood at 0.80 while black's green dome on H7,
        read at 0.54, went unread until white had built on A5; the three
        were caught up as black's E4, white's A5 and black's H7, and the
        turns were out for the rest of the game.  Without the shadow the
        two real builds are two moves in turn.
        """
        shadows = self._tower_shadows(after, added)
        rest = [lot for lot in added if lot not in shadows]
        if not shadows or len(rest) < 2:
            return None
        board = _without(after, *shadows)
        moves = self._sequence_to(board, rest)
        return None if moves is None or self._doubtful_extras(board, rest) else moves

    def _moves_to_board_as_it_stands(self, after: Position) -> list[Move] | None:
        """Moves, turn by turn, from the accepted board to ``after``: a legal order if the search
        finds one, else any order that gives each new cap to its owner; None when ``after``
        took a structure away or changed one (no moves make that).

        Why: a long press on a board that is no single move (several
        structures at once, more than a catch-up guesses at) is the players
        saying the board is right.  Without it, moves played on while a
        warning stood pile up, and the referee never sees a legal board
        again: the only way out was to give up the game.
        """
        added = self._added_since_accepted(after)
        if not added:
            return None
        return self._sequence_to(after, added) or self._sequence_to(after, added, judged=False)

    def _added_since_accepted(self, after: Position) -> list[int] | None:
        """The lots ``after`` built on since the accepted board, in the order the camera first saw
        them; None when it took a structure away or changed one, which no moves make (a cap put on
        is part of a move)."""
        assert self.accepted is not None
        old, new = self.accepted.structures, after.structures
        if not set(old) <= set(new) or any(old[lot].with_cap(None) != new[lot].with_cap(None) for lot in old):
            return None
        return self._arrival_order(sorted(set(new) - set(old)))

    def _sequence_to(self, after: Position, added: list[int], *, judged: bool = True) -> list[Move] | None:
        """Builds on ``added``, turn by turn, with the new caps placed by their owners, from the
        accepted board to ``after`` (``_legal_sequence``): a legal order, each cap first seen with a
        build tried with it first; not ``judged``, any order."""
        assert self.game is not None and self.accepted is not None
        caps = _new_caps(self.accepted.structures, after.structures)
        prefer = self._caps_seen_with() if judged else None
        return _legal_sequence(self.game.copy(), added, caps, after.structures, prefer, judged=judged)

    def _caught_up(self, moves: list[Move], *, ruled: bool = False, why: str = "") -> Outputs:
        """Accept ``moves``, which appeared at once, in turn (``ruled``: as the players' long press
        took them, each one that breaks a rule a house ruling; ``why`` leads the note)."""
        assert self.game is not None
        added = [move.lot for move in moves if move.lot is not None]
        records: list[dict[str, Any]] = []
        seen_at = [self._first_seen.get(lot) for lot in added]
        self._arrived_together.update(lot for lot, at in zip(added, seen_at) if seen_at.count(at) > 1)
        for move in moves:
            violations = self.game.violations(move) if ruled else []
            self.game.push(move)
            if move.lot is not None:
                self._support[move.lot] = 1
            self._note_accepted(move)
            record: dict[str, Any] = {"type": "override" if violations else "move", "ply": self.game.ply,
                                      "move": move_to_json(move), "position": self.game.position.to_json(),
                                      "caught_up": True}
            if violations:
                record["violations"] = [v.to_json() for v in violations]
            records.append(record)
        self.accepted = self.game.position.copy()
        self.verdict = None
        self.phase = Phase.PLAYING
        self.board_moved()
        self.note = why + f"{len(moves)} moves {'taken as the board stands' if ruled else 'at once'}: " \
            + "; ".join(_move_words(m) for m in moves)
        if self.game.is_over():
            return self._finished_with(*records)
        return self._emit(Light.GREEN, self._turn_screen(), records=tuple(records))

    def _doubtful_extras(self, after: Position, added: list[int]) -> list[int]:
        """The new lots read doubtfully, first read as pieces since the last move and never
        surely empty in between, without which the board is one legal move.

        Why: such a board is either two real moves (the one read doubtfully
        too: a dark coin on a dark tile) or one move beside a phantom (tile
        art read as a coin as the light changed with the hand).  Taken as two,
        a phantom puts the turn order out for the rest of the game; taken as
        one, a real coin is a move missed.  A lot read surely empty since the
        last move and now showing something has changed: a piece, however
        faintly read.  So has a lot whose look changed in the reading that
        first showed the piece (``_arrived_on``).  So has a lot that has
        shown the same doubtful piece since before the last move: a print
        does not come and stay with a move.  A lot that did neither is one
        whose print already looked half like a piece, and a doubtful piece
        there is that print again.  Except beside a tower that has lost its
        shape (``_displaced_tower``): a lot read surely empty until then is
        that tower's top, not a piece.  With no such lot, two or more
        doubtful towers beside towers of their colour may be those towers'
        shadows together (``_shadows_of_towers``).  And a tower that first
        showed with a tower set down beside it may be that tower's shadow,
        however surely a tower is read there (``_shadow_of_a_tower_set_down``).
        """
        assert self.game is not None and self.accepted is not None
        doubtful = []
        for lot in added:
            if self._shadow_of_a_tower_set_down(lot, after):
                if self._one_legal_move_without(after, lot) is not None:
                    doubtful.append(lot)
                continue
            if self._best_confidence(lot) >= DOUBTFUL_MOVE:
                continue
            if (self._arrived_on(lot) or self._first_seen.get(lot, self._readings) <= self._accepted_at
                    and not self._came_with_a_taller_neighbour(lot)) \
                    and not self._displaced_tower(lot, after.structures[lot]):
                continue
            if self._one_legal_move_without(after, lot) is not None:
                doubtful.append(lot)
        return doubtful or self._shadows_of_towers(after, added)

    def _shadows_of_towers(self, after: Position, added: list[int]) -> list[int]:
        """Two or more new towers read doubtfully, first read in one reading, each beside an
        accepted tower of its colour, without which the board is one legal move; else none.
        Or one such tower, first read in a reading that first showed another structure since left
        out as a phantom (``_without_doubtful_arrival``).

        Why: when the lamp moves, a tall tower's shadow falls on a lot beside
        it, and its dark outline on the print reads as a tower of that colour.
        Printed game 4605: the lamp changed as black built on D7, and the
        lots beside the capped blue tower on E3 and the capped green tower on
        G7, both surely empty before, read "blue tower 0.82" and "green tower
        0.85"; caught up as three moves with D7, they put the turns out for
        the rest of the game (8 of 38 moves, 6 false warnings).  Each alone
        is no phantom by the rule above, as its lot read surely empty, but
        two moves more than the one a hand made, each the shape and colour
        of the tower beside it, are likelier the light than the players.
        The pair stays a pair: in that game E4's "blue tower" stood on at
        0.79 to 0.89 after G8's phantom had once read at 0.90 (too surely
        to count among the doubtful here), and five plies on it was caught
        up as white's move with black's real tower on C2, which put the
        turns out again.  A reading that showed one phantom showed the
        light changing, and a doubtful tower it first showed beside a tower
        of its colour is that light too.
        """
        towers = self._tower_shadows(after, added)
        if not towers:
            return []
        board, rest = _without(after, *towers), [lot for lot in added if lot not in towers]
        if len(rest) >= 2:  # moves made while the board was never still, beside the shadows
            return towers if self._sequence_to(board, rest) is not None else []
        return towers if self._legal_move_to(board) is not None else []

    def _tower_shadows(self, after: Position, added: list[int]) -> list[int]:
        """The towers ``_shadows_of_towers`` takes for shadows, whatever the board is without them."""
        assert self.accepted is not None
        towers = [lot for lot in added if self._best_confidence(lot) < DOUBTFUL_MOVE
                  and _beside_a_tower_like(self.accepted, lot, after.structures[lot])]
        firsts = {self._first_seen.get(lot) for lot in towers}
        if len(firsts) != 1 or len(towers) < 2 and not firsts <= self._phantom_readings:
            return []
        return towers

    def _shadow_of_a_tower_set_down(self, lot: int, after: Position) -> bool:
        """Whether ``lot``'s new structure is a tower of its tile's colour, or of a tower beside it,
        read less surely than ``RETRACTED_CONFIDENCE`` now, first read in the reading that first read
        another tower within a tower's shadow of it (``BUILD_SHADOW_REACH``): a new one read surely,
        or one accepted since.

        Why: a pyramid's shadow is a dark triangle, and on a tile's print it
        looks like the shaded face of a pyramid of the print's colour.
        Printed game 4002: black set a green tower on G6, its shadow fell on
        G7, a blue tile's lot read surely empty until then, and G7 read
        "blue tower" at 0.78 to 0.90 from that reading on, its runner-up the
        same tower capped, so a tower there looked sure.  Caught up as black's
        G6 and white's G7, the turns were out for the rest of the game (14 of
        38 moves, 5 false warnings).  One hand sets down one piece, and a
        second tower come exactly with the first, beside it, not read as
        surely as a tower set down reads, is the first one's shadow.  The
        lot's own confidence counts here, not its piece's with the cap in
        doubt (``_build_confidence``): a shadow is no tower, capped or not.
        """
        assert self.accepted is not None
        structure = after.structures.get(lot)
        first = self._first_seen.get(lot)
        if structure is None or structure.kind != "tower" or first is None or self._observation is None \
                or lot in self.accepted.structures:
            return False
        if self._observation.lot_confidence.get(LOT_NAMES[lot], 1.0) >= RETRACTED_CONFIDENCE:
            return False
        if structure.color != after.tiles[TILE_OF[lot]].color \
                and not _beside_a_tower_like(self.accepted, lot, structure):
            return False
        reach = BUILD_SHADOW_REACH["tower"]
        return any(_lots_apart(other, lot) <= reach and self._set_down_with(other, first, after)
                   for other in after.structures if other != lot)

    def _set_down_with(self, tower: int, reading: int, after: Position) -> bool:
        """Whether ``after``'s tower on ``tower`` was first read in ``reading``: accepted so, or new
        and read surely."""
        assert self.accepted is not None
        if after.structures[tower].kind != "tower":
            return False
        if tower in self.accepted.structures:
            return self._landed_at.get(tower) == reading
        return self._first_seen.get(tower) == reading and self._best_confidence(tower) >= DOUBTFUL_MOVE

    def _arrived_on(self, lot: int) -> bool:
        """Whether something came to ``lot`` since the last move: it read surely empty since, or
        its look changed as a piece first showed there (``_note_changed_arrivals``)."""
        return LOT_NAMES[lot] in self._seen_empty or lot in self._changed_arrivals

    def _came_with_a_taller_neighbour(self, lot: int) -> bool:
        """Whether ``lot``'s doubtful piece was first read in the reading that first showed an
        accepted tower, or a cap on one, beside it.

        Why: a print does not come and stay with a move, but a lean does.  A
        tower, and more so a capped one, leans outward in the image over the
        lot beside it, and the reader can take its top for a piece there: a
        red tower read on A7 at 0.69–0.80 from the reading that showed
        white's cap on the red tower on A6 (made-up-art game 1100, its
        corners placed on the step from the table).  Counted as a piece that
        stayed since before the last move, it was caught up as white's move
        with white's next real build as black's, and the turn order was out
        for the rest of the game.
        """
        assert self.accepted is not None
        first = self._first_seen.get(lot)
        return first is not None and any(self._landed_at.get(beside) == first
                                         for beside in _towers_beside(self.accepted, lot))

    def _displaced_tower(self, lot: int, new: Structure) -> bool:
        """Whether an accepted tower of ``new``'s colour beside ``lot`` reads, since the board last
        moved, as something other than that tower.

        Why: a pyramid leans outward in the image, and after a lamp or
        camera change the reader can put it one lot over: its own lot reads
        as a dome of its colour, the neighbour's as a tower (printed game
        1502: a blue tower read as a blue dome at 0.80 and a blue tower
        beside it at 0.80, with a real move elsewhere; taken as two moves,
        the turn order was out for the rest of the game).
        """
        assert self.accepted is not None
        for beside in _towers_beside(self.accepted, lot, new.color):
            best = self._best.get(LOT_NAMES[beside])
            if best is None:
                continue
            read = best[1]
            if read is None or read.get("kind") != "tower" or read.get("color") != new.color:
                return True
        return False

    def _one_legal_move_without(self, after: Position, lot: int) -> Move | None:
        """The legal move the board is with ``lot``'s structure left out; None when it is no such move."""
        return self._legal_move_to(_without(after, lot))

    def _legal_move_to(self, board: Position) -> Move | None:
        """The legal move from the accepted board to ``board``; None when it is no such move."""
        assert self.game is not None
        move = self._one_move_to(board)
        return move if move is not None and not self.game.violations(move) else None

    def _one_move_to(self, board: Position) -> Move | None:
        """The one move, legal or not, from the accepted board to ``board``; None when it is no one move."""
        assert self.game is not None and self.accepted is not None
        inference = infer_move(self.accepted, board, self.game)
        return inference.move if inference.kind == "move" else None

    def _note_accepted(self, move: Move) -> None:
        """Remember how surely the move's build, and its cap, were read when it was accepted, and
        the reading each was first seen in; forget the faint builds shown before it."""
        self._faint_since.clear()
        if move.lot is not None:
            self._landed_at[move.lot] = self._first_seen.get(move.lot, self._readings)
            self._accepted_confidence[move.lot] = self._best_confidence(move.lot)
            if self._observation is not None and _surely_a_piece(self._observation, LOT_NAMES[move.lot]):
                self._built_surely.add(move.lot)
            else:
                self._built_surely.discard(move.lot)
            self._read_unsurely.pop(move.lot, None)  # counted now
        if move.cap is not None:
            self._landed_at[move.cap] = self._cap_seen.get(move.cap, self._readings)
            self._cap_confidence[move.cap] = min(self._best_confidence(move.cap),
                                                 self._cap_doubted.get(move.cap, 1.0))

    def _build_confidence(self, observation: Observation) -> dict[str, float]:
        """The lots' confidences, a new piece's taken as the sum of its answer and its runner-up
        when the two are the same piece with and without a cap (or with the other cap).

        Why: a tower standing in its neighbour's shadow can read "green tower,
        0.52; with a black cap, 0.48" for as long as it stands (printed game
        1502).  That is a green tower read surely, and only its cap in doubt;
        left unread, every later move goes to the wrong player.  Which cap
        the rules settle (``_legal_runner_up``: a black cap on white's turn),
        and later readings (``_late_cap``, ``_uncap_doubtful``: the cap is
        noted as read as unsurely as it was).  Not on a lot left out as a
        tower's shadow (``_shadow_of_a_tower_set_down``): there "the tower, or
        the tower capped" is the shadow's shape, and only a surer reading
        of the piece itself makes it one.
        """
        assert self.accepted is not None
        confidence = dict(observation.lot_confidence)
        self._cap_doubted = {}
        for name, alt in observation.runners_up.items():
            lot = parse_lot(name)
            read = observation.position.structures.get(lot)
            if read is None or lot in self.accepted.structures or lot in self._shadows \
                    or not _only_its_cap_in_doubt(read, alt):
                continue
            self._cap_doubted[lot] = float(confidence.get(name, 1.0))
            confidence[name] = min(1.0, self._cap_doubted[lot] + alt.probability)
        return confidence

    def _best_confidence(self, lot: int) -> float:
        """The surest reading of ``lot`` since the board last moved (1.0 when it did not change)."""
        return self._best.get(LOT_NAMES[lot], (1.0, None))[0]

    def _retract_doubtful(self, after: Position, observation: Observation) -> Outputs | None:
        """A board the turn order cannot explain, explained by a doubtful build of the last
        plies that never happened; None when there is none such.

        A piece read unsurely just as a real one went down (the top of a
        neighbour's tower leaning over the lot, an icon print) can be caught
        up as a move of its own.  The turn order is then out by one, and the
        next cap of the mover's colour shows up "out of turn".  When some
        build of the last ``MAX_RETRACTION`` plies was accepted below
        ``DOUBTFUL_MOVE``, still reads below it, and without it a legal
        history turn by turn ends exactly at the board (less that lot), the
        build is taken back: a correction record, the light stays green.
        A build first seen in the same reading as another one (caught up
        with it) is looked for further back: the board may show it only
        turns later, when the next cap puts the turn order to the test
        (made-up-art game 1005 took a shade beside a new tower for a black
        coin four plies before a white cap showed it).  A build seen
        arriving alone was a hand's doing, and is not taken back that late
        (made-up-art game 700 reads a real blue tower at 0.88 all game; in
        recorded Cycles game 100 the first move, read at 0.63 until the
        second came, was caught up with it).
        What was read on its lot is still read there, so a build there counts
        from then on only at ``RETRACTED_CONFIDENCE``, until the lot reads
        surely empty.  A doubtful build that now reads surely gone (at
        ``REMOVAL_CONFIDENCE``) is looked for as far back as one caught up
        with another: pieces never leave the board in play, so as with a
        doubtful cap later read surely bare, the build was the misread
        (printed game 1104: the shade beside a new tower, read as a black
        coin at 0.87, was taken with white's cap; four plies on it read
        surely empty, "the black dome on G7 was removed", and the rest of
        the game was lost).  Such a build need only have been accepted below
        ``DOUBTFUL_GONE``: a capped tower read "0.73 capped, 0.18 bare" counts
        as a tower read at 0.91 (``_build_confidence``), and a shade beside a
        new tower can read so (made-up-art game 900, on another setup frame,
        caught one up with the tower as a move of its own, and read it surely
        gone seven plies on).  A move that breaks a placement rule is
        explained away like this only when nothing else makes it legal (a
        mended layout, a runner-up): the history without the doubtful build
        must be legal with that move in it, so the build is what the move
        broke the rule against (made-up-art game 3705: a print beside a new
        tower read as a black dome at 0.899 blocked a street, and the next
        real dome was warned as cutting a tower off the streets).  Nor is a
        build accepted when it read surely as some piece
        (``_built_surely``): the doubt was which piece,
        not whether one went down (fresh printed game 4003: a red tower
        accepted at 0.76 with "red dome" at 0.23 was taken back when a missed
        dome put the turn order out, and the game was lost from there).  Its
        reading since does not tell: a print read as a black dome at 0.899
        with "empty" at 0.03 was a phantom to take back (made-up-art game
        3705), the tower read so a real build.
        """
        assert self.game is not None
        plies = {m.lot: self.game.ply - i for i, m in enumerate(self.game.moves) if m.lot is not None}
        gone = {lot for lot in plies if lot not in after.structures}  # read as gone, at REMOVAL_CONFIDENCE
        reach = {lot: MAX_RETRACTION if lot in self._arrived_together or lot in gone else MAX_CORRECTION
                 for lot in plies}
        doubt_below = {lot: DOUBTFUL_GONE if lot in gone else DOUBTFUL_MOVE for lot in plies}
        doubtful = sorted((lot for lot, back in plies.items() if back <= reach[lot]
                           and self._accepted_confidence.get(lot, 1.0) < doubt_below[lot]
                           and (lot in gone or (observation.lot_confidence.get(LOT_NAMES[lot], 1.0) < DOUBTFUL_MOVE
                                                and lot not in self._built_surely))),
                          key=lambda lot: (plies[lot], self._accepted_confidence[lot]))
        tried = (after, self.game.ply, doubtful)
        if tried == self._no_retraction:  # searched in vain on an earlier reading of this board
            return None
        for lot in doubtful:
            found = reread_history(self.game, _without(after, lot), max(MAX_CORRECTION, plies[lot]),
                                   arrival=self._arrival_order, caps_seen=self._caps_seen_with())
            if found is None or found.violations or lot not in {m.lot for m in found.popped}:
                continue
            if not self._confirmed(after):
                return self._look_again()
            return self._take_back(lot, found)
        self._no_retraction = tried
        return None

    def _mended_layout(self, move: Move, violations: list[Violation]) -> MendedLayout | None:
        """The layout on which ``move``, breaking only the tile rules on a tile the setup doubted,
        is legal with the whole game (``_reseat_icon``, else ``_recolour_tile``); None when none is."""
        return self._reseat_icon(move, violations) or self._recolour_tile(move, violations)

    def _reseat_icon(self, move: Move, violations: list[Violation]) -> MendedLayout | None:
        """For a move whose only fault is rule 5 on a tile read unsurely at setup, the game with that
        tile's icon on the likeliest other lot that keeps the whole game legal; None when there is none.

        Why: the app cannot accuse the players on the strength of a tile it
        could not read (it asked them to check it), and the players know
        where their icons are.  Building on the lot the layout took for the
        icon, ahead of the tile's other lots, says it is not the icon.  The
        icon goes to the next lot of the setup's ranking on which every move
        so far and this one are legal, and a ``tiles`` record logs the new
        layout.  A tile read surely keeps its icon: there rule 5 is a warning.
        """
        assert self.game is not None
        if move.lot is None or not violations or any(v.rule != 5 for v in violations):
            return None
        tile_lot = TILE_OF[move.lot]
        ranking = self._icon_orders.get(tile_lot)
        if ranking is None or not self._unsure_at_setup(tile_lot):
            return None
        for icon, replay in self._icon_moves(tile_lot, ranking, move):
            return MendedLayout(replay, icon={LOT_NAMES[tile_lot]: LOT_NAMES[icon]})
        return None

    def _unsure_at_setup(self, tile_lot: int) -> bool:
        """Whether the setup read the tile below ``min_confidence`` (and asked for it to be checked)."""
        return self._read_below(tile_lot, self.min_confidence)

    def _read_below(self, tile_lot: int, bar: float) -> bool:
        """Whether the setup read the tile less surely than ``bar`` (a game resumed from its log
        read none, and its layout stands)."""
        return self._tile_confidence.get(tile_lot, 1.0) < bar

    def _icon_moves(self, tile_lot: int, ranking: tuple[int, ...], move: Move,
                    game: Game | None = None) -> Iterator[tuple[int, Game]]:
        """Each lot of ``ranking`` other than ``move``'s and the tile's icon on which the game so far
        (``game``, by default the game) and ``move`` are legal, in order, with the game replayed with
        the icon there."""
        game = self.game if game is None else game
        assert game is not None
        tile = game.position.tiles[tile_lot]
        for icon in ranking:
            if icon in (tile.icon, move.lot):
                continue
            replay = _replayed({**game.position.tiles, tile_lot: Tile(tile.color, icon)}, game)
            if replay is not None and not replay.violations(move):
                yield icon, replay

    def _recolour_tile(self, move: Move, violations: list[Violation]) -> MendedLayout | None:
        """For a move whose only faults are the colour rules (2 and 3), with or without rule 5, on a
        tile read below ``TILE_DOUBTED`` at setup, the game with that tile in the likeliest other
        guild (and, if rule 5 was broken too, its icon on the likeliest other lot) that keeps the
        whole game legal; None when there is none.

        Why: as for an icon (``_reseat_icon``), the app cannot accuse the
        players on the strength of a tile it asked them to check, and a
        player who builds a green dome there is saying the tile is green
        (made-up-art game 1200: a green tile read blue at 0.60 warned about
        the first green dome on it, and the game was lost from there).  The
        icon search weighs a lot against the tile's guild, so a tile read
        in the wrong guild often has its icon wrong too (made-up-art game
        2001: a red tile read green at 0.46 with its icon on E10, and the
        first red dome there broke rules 2, 3 and 5 at once).

        The set has five tiles of each guild, and the setup's reading keeps
        to that, so a tile read in the wrong guild comes with another read
        in its guild: an unsure tile of the new guild that can legally take
        the old one (the likeliest such) moves back to it.  With no such
        tile the layout would hold six of a guild, and the move is judged
        as read (made-up-art game 401: a real red dome on a black tile read
        at 0.6 was taken that way and its warning missed).  One of the two
        must be a tile the setup asked about (below ``min_confidence``),
        the other need only be read below ``TILE_DOUBTED``: made-up-art
        game 2202 read two blue tiles green at 0.77 and 0.89 and two green
        ones blue at 0.70 and 0.50, and its first blue dome on the tile read
        at 0.77 was warned about, and every move after it too; game 2000
        read a red tile blue at 0.48 and a blue one red at 0.756, and its
        first red dome was warned about.
        """
        if move.lot is None or not violations:
            return None
        rules = {v.rule for v in violations}
        if not rules & {2, 3} or not rules <= TILE_RULES:
            return None
        tile_lot = TILE_OF[move.lot]
        if not self._read_below(tile_lot, TILE_DOUBTED):
            return None
        partner_below = TILE_DOUBTED if self._unsure_at_setup(tile_lot) else self.min_confidence
        for changed, icon, replay in self._recolourings(tile_lot, move, partner_below=partner_below,
                                                        icons=self._icon_choices(tile_lot, rules)):
            return MendedLayout(replay, colour=changed, icon=icon)
        return None

    def _icon_choices(self, tile_lot: int, rules: set[int], game: Game | None = None) -> tuple[int | None, ...]:
        """The icons to try with a tile's guild changed: the one read (``None``) and, when rule 5
        was broken too, every other lot of the tile, likeliest first."""
        game = self.game if game is None else game
        assert game is not None
        if 5 not in rules:
            return (None,)
        read = game.position.tiles[tile_lot].icon
        return (None, *(lot for lot in self._icon_ranking(tile_lot) if lot != read))

    def _icon_ranking(self, tile_lot: int) -> tuple[int, ...]:
        """The tile's lots from likeliest icon to least, as the setup ranked them (in lot order when
        it ranked none: a game resumed from its log)."""
        return self._icon_orders.get(tile_lot) or TILE_LOTS[tile_lot]

    def _recolourings(self, tile_lot: int, move: Move, *, partner_below: float,
                      icons: tuple[int | None, ...] = (None,), game: Game | None = None
                      ) -> Iterator[tuple[dict[str, str], dict[str, str] | None, Game]]:
        """Each guild of the tile's ranking but its own (with each of ``icons``, ``None`` keeping the
        icon read) under which the game so far (``game``, by default the game) and ``move`` are
        legal, likeliest first, as the tiles recoloured (with a swap partner read below
        ``partner_below`` when the set would otherwise hold six of a guild), the icon moved, and
        the game replayed."""
        game = self.game if game is None else game
        assert game is not None
        tiles = game.position.tiles
        old_colour = tiles[tile_lot].color
        counts = Counter(tile.color for tile in tiles.values())
        for colour in self._colour_orders.get(tile_lot, ()):
            if colour == old_colour:
                continue
            for icon in icons:
                if icon == move.lot:
                    continue
                recoloured = {**tiles, tile_lot: Tile(colour, tiles[tile_lot].icon if icon is None else icon)}
                replay = _replayed(recoloured, game)
                if replay is None or replay.violations(move):
                    continue
                changed = {LOT_NAMES[tile_lot]: colour}
                if counts[colour] >= TILES_PER_COLOR or counts[old_colour] <= TILES_PER_COLOR:
                    partner = self._swap_partner(recoloured, tile_lot, old_colour, move, below=partner_below,
                                                 game=game)
                    if partner is None:
                        continue  # a sixth tile of a guild: likelier a misread piece, or a real breach
                    lot, replay = partner
                    changed[LOT_NAMES[lot]] = old_colour
                yield changed, None if icon is None else {LOT_NAMES[tile_lot]: LOT_NAMES[icon]}, replay

    def _swap_partner(self, tiles: Mapping[int, Tile], moved: int, colour: str, move: Move, *,
                      below: float, game: Game | None = None) -> tuple[int, Game] | None:
        """The tile of ``moved``'s new guild read below ``below`` at setup that ranks ``colour``
        highest and can take it with the game so far (``game``, by default the game) and ``move``
        legal, and the game replayed with it in ``colour``; None when no tile can."""
        game = self.game if game is None else game
        assert game is not None
        new_colour = tiles[moved].color
        ranked = sorted((order.index(colour), lot) for lot, order in self._colour_orders.items()
                        if lot != moved and self._read_below(lot, below) and tiles[lot].color == new_colour
                        and colour in order)
        for _, lot in ranked:
            swapped = {**tiles, lot: Tile(colour, tiles[lot].icon)}
            replay = _replayed(swapped, game)
            if replay is not None and not replay.violations(move):
                return lot, replay
        return None

    def _played_past_layout(self, after: Position, unsure_tiles: frozenset[int] = frozenset()) -> Outputs | None:
        """The move warned about for the tile rules alone (rule 5, or the colour rules 2 and 3),
        still standing, with legal moves played after it: accepted with its tile mended (the icon
        on the likeliest other lot, or the tile in its likeliest other guild) so that the whole
        game is legal; None when the board is not that or no mending makes it so.

        Why: where an icon is and what guild a tile is are facts of the
        table that the players see and the camera read once, at setup.  A
        tile read surely can still be read wrong (made-up tile art, a glare,
        a dim lamp on dark print), and then every build that the misreading
        forbids is warned about, and no move of the players clears the
        warning.  Playing on past the warning, with the piece left where it
        stands, is the players' word that the tile is not what was read.
        The warning was shown, beeped and logged; the game goes on with the
        tile mended and a ``tiles`` record of the new layout.  A guild
        changes only with a swap partner as ``_recolour_tile``'s, here any
        tile read below ``TILE_CERTAIN``: the set has five of each.

        Not while a lot of the tile reads unsurely (``unsure_tiles``), and on
        a tile read at ``TILE_CERTAIN`` or above only once
        ``PLAYED_PAST_CERTAIN`` moves were played past the warning: a
        warning also comes from a build the referee has not counted (a
        piece it could not read, beside the tile), and mending a rightly
        read tile then spoils the rest of the game (made-up-art game 1205).
        An unsure lot elsewhere says nothing about the tile (until
        2026-11-29 any did: fresh made-up-art game 3705 kept two print lots
        unsure all game, and its warning, about a misread icon, never
        cleared).  But a tile read surely wrong at setup
        that is never mended loses the whole game (made-up-art game 2003:
        a black tile's icon read at 0.995 on the wrong lot).
        """
        verdict = self.verdict if self.phase is Phase.ILLEGAL else None
        if verdict is not None and verdict.move is None:
            verdict = self._warned  # later builds made the board no single move
        warned = verdict.move if verdict is not None else None
        if verdict is None or warned is None or warned.lot is None or not verdict.violations:
            return None
        rules = {v.rule for v in verdict.violations}
        if not rules <= TILE_RULES:
            return None
        assert self.game is not None and self.accepted is not None
        structures, old = after.structures, self.accepted.structures
        if not set(old) <= set(structures) or not _same_piece(structures.get(warned.lot),
                                                             verdict.observed.structures.get(warned.lot)):
            return None  # (a cap put on it since is a later move's: fresh made-up-art game 3705)
        later = self._arrival_order(sorted(set(structures) - set(old) - {warned.lot}))
        if not 1 <= len(later) < MAX_CATCH_UP:  # with none, the warning stands as it was judged
            return None
        found = self._played_past_mended(self.game, warned, rules, later, structures, unsure_tiles)
        if found is None:
            return None
        if not self._confirmed(after):
            return self._look_again()
        tiles, moves = found
        replay = _replayed(tiles, self.game)
        assert replay is not None  # every move so far was legal on it when it was found
        colour, icon = _layout_changes(self.game.position.tiles, tiles)
        return self._take_with_layout(replay, moves, colour=colour, icon=icon, words=" (played on past the warning)")

    def _mended_layouts(self, tile_lot: int, move: Move, rules: set[int], game: Game) -> Iterator[Game]:
        """``game`` replayed on each layout, likeliest first, that mends ``tile_lot`` against the
        broken ``rules`` with ``move`` legal."""
        if rules == {5}:
            for _, replay in self._icon_moves(tile_lot, self._icon_ranking(tile_lot), move, game):
                yield replay
        else:
            for _, _, replay in self._recolourings(tile_lot, move, partner_below=TILE_CERTAIN,
                                                   icons=self._icon_choices(tile_lot, rules, game), game=game):
                yield replay

    def _played_past_mended(self, game: Game, move: Move, rules: set[int], later: list[int],
                            structures: Mapping[int, Structure], unsure_tiles: frozenset[int] = frozenset()
                            ) -> tuple[Mapping[int, Tile], tuple[Move, ...]] | None:
        """``move``, which breaks only the tile ``rules`` on its tile, and builds on ``later`` after
        it, legal from ``game`` on a layout with that tile mended and, where the builds after it
        break the tile rules on other tiles, those mended too: the layout and the moves; None when
        there is none, or the tile was read too surely for as few moves played past it, or one of
        its lots reads unsurely now (``unsure_tiles``).

        Why more than one tile: tile art the vision has not seen can
        misread several tiles of a guild alike (fresh made-up-art game
        3705: five black tiles' icons on the wrong lot), and the move played
        past one such warning may itself be built beside another misread
        icon.  Each tile mended needs its own moves played past it, as the
        first does.
        """
        if move.lot is None:
            return None
        tile_lot = TILE_OF[move.lot]
        if tile_lot in unsure_tiles or len(later) < self._moves_past_needed(tile_lot):
            return None
        for replay in self._mended_layouts(tile_lot, move, rules, game):
            replay.push(move)
            found = self._played_after(replay, later, structures, unsure_tiles)
            if found is not None:
                return found[0], (move, *found[1])
        return None

    def _moves_past_needed(self, tile_lot: int) -> int:
        """How many moves played past a tile-rule breach on the tile say the tile was misread: none
        on a tile the setup asked about (as for a lone build there, ``_reseat_icon``), one on a
        tile read less than certainly, ``PLAYED_PAST_CERTAIN`` on one read with certainty."""
        if self._unsure_at_setup(tile_lot):
            return 0
        return 1 if self._read_below(tile_lot, TILE_CERTAIN) else PLAYED_PAST_CERTAIN

    def _played_after(self, game: Game, later: list[int], structures: Mapping[int, Structure],
                      unsure_tiles: frozenset[int] = frozenset()) -> tuple[Mapping[int, Tile], tuple[Move, ...]] | None:
        """Builds on ``later`` from ``game`` up to ``structures``: legal in some order, or else in
        their arrival order with the first that breaks only the tile rules played past as
        ``_played_past_mended`` allows; the layout and the moves, or None."""
        caps = _new_caps(game.position.structures, structures)
        moves = _legal_sequence(game, later, caps, structures, self._caps_seen_with())
        if moves is not None:
            return game.position.tiles, tuple(moves)
        if not later:
            return None
        lot, rest = later[0], later[1:]
        for cap in (None, *(c for c in caps if structures[c].cap == game.turn)):
            if cap is not None and cap != lot and cap not in game.position.structures:
                continue
            move = Move(game.turn, lot, structures[lot].piece, cap)
            rules = {v.rule for v in game.violations(move)}
            if not rules:
                trial = game.copy()
                trial.push(move)
                found = self._played_after(trial, rest, structures, unsure_tiles)
                if found is not None:
                    return found[0], (move, *found[1])
            elif rules <= TILE_RULES:
                mended = self._played_past_mended(game, move, rules, rest, structures, unsure_tiles)
                if mended is not None:
                    return mended  # (its moves begin with ``move``)
        return None

    def _take_with_layout(self, replay: Game, moves: tuple[Move, ...], colour: Mapping[str, str] | None = None,
                          icon: Mapping[str, str] | None = None, words: str = "") -> Outputs:
        """Accept ``moves`` in turn on ``replay`` (the game so far on a mended layout: a tile's
        ``icon`` moved, or its ``colour`` changed), logging the new layout first."""
        assert self.game is not None
        before = dict(self.game.position.tiles)
        records: list[dict[str, Any]] = [self._on_layout(replay, colour, icon)]
        for move in moves:
            outputs = self._accept(move, override=False)
            records.extend(outputs.records)
        self._mend = (frozenset(range(self.game.ply - len(moves) + 1, self.game.ply + 1)), before)
        mended = [f"{key}'s icon on {lot}" for key, lot in (icon or {}).items()] + \
                 [f"{key} taken as {c}" for key, c in (colour or {}).items()]
        return self._noted(outputs, f" ({'; '.join(mended)}){words}", tuple(records))

    def _on_layout(self, replay: Game, colour: Mapping[str, str] | None,
                   icon: Mapping[str, str] | None) -> dict[str, Any]:
        """Go on with ``replay`` (the game so far on another layout); its ``tiles`` record for the
        log, naming the tiles whose ``colour`` or ``icon`` changed."""
        self.game = replay
        self.layout = Position(replay.position.tiles)
        record: dict[str, Any] = {"type": "tiles", "ply": replay.ply, "tiles": self.layout.to_json()["tiles"]}
        if icon:
            record["icon"] = dict(icon)
        if colour:
            record["color"] = dict(colour)
        return record

    def _without_doubtful_arrival(self, after: Position) -> Outputs | None:
        """A board that is no move, which is one legal move without the new structures read
        doubtfully (all of them, or all but one); None unless exactly one such choice makes it so.

        Why: two structures appearing at once is no turn.  When one of them is
        read surely and the other only doubtfully (a shade or a lamp change
        read as a black coin beside a real move), the sure one alone being a
        legal move says what happened.  Taking it is better than a red light
        that no move of the players can clear: the phantom stays read, so
        every later board would be wrong too.  A lamp change can make several
        such phantoms at once (made-up-art game 2004: three towers read at
        0.80-0.90 on a blue tile's print beside a real dome), so all of them
        go, not just one; the one real piece among them, if any, is the one
        whose keeping leaves a legal move (or, when no choice does, a move
        legal once a tile the setup doubted is mended: ``_move_to_mended``).
        Each left-out lot is then held at ``RETRACTED_CONFIDENCE`` (an
        icon lot's at ``ICON_BESIDE_A_MOVE``), as a build taken back is, and
        a real piece there counts once it reads that surely.

        A structure that stood, read too unsurely to count, while the last
        move was accepted is as doubtful however surely it reads now: print
        that looks half like a piece reads surely now and then, as a hand's
        shadow or the next move changes its light (made-up-art game 1305: a
        black "dome" on B8 read at 0.58-0.90 for five plies, then at 0.96 as
        the next tower went down, and every later board was "structures
        appeared at once").  A real piece that stood unread comes back as
        a move once the turns show it (``_catch_up``, tried first).
        """
        assert self.game is not None and self.accepted is not None
        doubtful, shadows = self._doubtful_arrivals(after)
        options = []
        for kept in (None, *doubtful):
            left_out = [lot for lot in doubtful if lot != kept]
            found = self._move_to_mended(_without(after, *left_out)) if left_out else None
            if found is not None:
                options.append((left_out, found))
        legal = [(left_out, found) for left_out, found in options if found[1] is None]
        choices = legal or options  # a move legal as read wins over one that needs a tile mended
        if len(choices) != 1:
            return None
        left_out, (move, mended) = choices[0]
        if not self._confirmed(after):
            return self._look_again()
        for lot in left_out:  # each needs what it failed to meet, to count later
            bar = max(RETRACTED_CONFIDENCE, self._doubtful_below(lot, after.structures[lot]))
            self._held_bars[lot] = max(self._held_bars.get(lot, 0.0), bar)
            if lot in shadows:
                self._shadows.add(lot)
            if lot in self._first_seen:
                self._phantom_readings.add(self._first_seen[lot])
        if mended is not None:
            return self._take_with_layout(mended.game, (move,), colour=mended.colour, icon=mended.icon)
        return self._accept(move, override=False)

    def _doubtful_arrivals(self, after: Position) -> tuple[list[int], set[int]]:
        """The structures new to the accepted board that ``after`` shows only doubtfully (read below
        their bar since the board last moved, standing unread before the last move, or in the shadow
        of a tower set down beside them), and which of them are such shadows."""
        assert self.accepted is not None
        old = self.accepted.structures
        shadows = {lot for lot in after.structures if lot not in old and self._shadow_of_a_tower_set_down(lot, after)}
        doubtful = [lot for lot in after.structures if lot not in old
                    and (self._best_confidence(lot) < self._doubtful_below(lot, after.structures[lot])
                         or self._stood_unread(lot, after) or lot in shadows)]
        return doubtful, shadows

    def _illegal_beside_doubtful(self, after: Position) -> Verdict | None:
        """The warning about the one illegal build ``after`` shows beside structures read doubtfully,
        on the board without them; None unless the board less every doubtful arrival is one such build.

        Why: "2 structures appeared at once (E6, F9)" names a phantom the
        players cannot take away, where a sure illegal build beside it is
        what they should put right.  Made-up-art app game 2803: black set an
        illegal green tower on E6 as a red tile print on F9, which reads
        "empty" or "red dome" at 0.58 to 0.90 all game, read as a dome; the
        warning named both lots and no rule.  Leaving the phantoms out is
        what ``_without_doubtful_arrival`` does for a legal build; here the
        build breaks a rule, so it is warned about, with its rule, as any
        illegal build is.
        """
        assert self.game is not None and self.accepted is not None
        doubtful, _ = self._doubtful_arrivals(after)
        if not doubtful:
            return None
        board = _without(after, *doubtful)
        move = self._one_move_to(board)
        if move is None or move.lot is None:
            return None
        violations = self.game.violations(move)
        return Verdict(board, move, tuple(violations)) if violations else None

    def _move_to_mended(self, board: Position) -> tuple[Move, MendedLayout | None] | None:
        """The move from the accepted board to ``board`` when it is legal (with no layout to mend), or
        legal once a tile the setup doubted is mended (``_mended_layout``); None when it is neither.

        Why the mended ones: the arrival left out as a phantom is judged by
        the rest being one turn, and the real build beside it may be the one
        that shows a doubted tile read wrong (made-up-art game 3304: a green
        tower on the lot the setup had taken, at 0.54, for the black tile's
        icon, beside a red icon read as a dome)."""
        assert self.game is not None
        move = self._one_move_to(board)
        if move is None:
            return None
        violations = self.game.violations(move)
        if not violations:
            return move, None
        mended = self._mended_layout(move, violations)
        return None if mended is None else (move, mended)

    def _doubtful_below(self, lot: int, structure: Structure) -> float:
        """How surely a structure that arrived beside others must read not to be left out as a phantom:
        ``DOUBTFUL_MOVE``, or ``ICON_BESIDE_A_MOVE`` on a lot the setup took for its tile's icon
        where the tile's rules forbid it now, however unsurely the setup read that tile.

        Why not only on tiles read surely (as ``_bar`` holds a lone arrival):
        there the doubt about the tile is what lets a lone build on the lot
        count (made-up-art game 1504), but beside a sure build elsewhere the
        question is which arrivals are a turn, and a print read as a piece
        is far likelier on the lot the setup found most like an icon than a
        second, illegal, build.  Made-up-art game 3304 (`bench app --edition R
        --seed 3300`): after the lamp change the red icons of two tiles read
        at 0.67 and 0.70 at setup showed as a red dome at 0.91 and a red
        tower at 0.80 beside white's green dome; "3 structures appeared at
        once", then taken as the board stood when play went on (7 of 38
        moves right, 25 false warnings).  Why 0.99 and not the icon lots'
        own 0.93: fresh game 3603 read two such prints at 0.899 and 0.95
        beside a real capped tower (8 of 38 moves, 17 false warnings at
        0.93; 38 of 38 at 0.99)."""
        doc = {"kind": structure.kind, "color": structure.color}
        return ICON_BESIDE_A_MOVE if self._on_icon_kept_free(lot, doc) else DOUBTFUL_MOVE

    def _stood_unread(self, lot: int, after: Position) -> bool:
        """Whether ``lot``, new to the accepted board, showed its structure in ``after`` read too
        unsurely to count before the last move was accepted."""
        shown = self._read_unsurely.get(lot)
        return shown is not None and shown[0] == after.structures.get(lot) and shown[1] <= self._accepted_at

    def _uncap_doubtful(self, after: Position, observation: Observation, *,
                        making_room_for: Move | None = None) -> Outputs | None:
        """A cap accepted doubtfully that now surely is not there, taken off the move that put it
        down, however long ago; None when there is none such.

        Caps never leave the board in play, so a tower that held a cap and
        now reads surely bare was misread, then or now.  When the cap was
        read below ``DOUBTFUL_MOVE`` and the tower now reads bare at
        ``DOUBTFUL_MOVE`` or more, the cap was the misread (a dark tower's
        shaded apex, a glint): every move from that one on is replayed with
        the cap off, and if all are still legal the history is rewritten (a
        correction record).  Without this a false cap accepted with a move
        turned, once the tower read right, into "the black cap on G10 was
        removed" for the rest of the game: re-reading covers only the last
        plies, and a cap misread is older by the time it shows.

        Caps never change colour either: a tower with a doubtful cap that
        now reads surely with the other player's cap had no cap before.
        The old cap is taken off the same way, and the new one is judged as
        that player's claim, with their build (path-traced game 130: a
        clear blue tower's dark apex accepted as black's cap at 0.899;
        when white capped it, every later board was "the black cap on E2
        was replaced by a white cap").

        ``making_room_for``: a cap being placed now by a player who, by the
        accepted history, has none left.  The rules say one of that
        player's caps is wrong; a doubtful one whose tower now reads bare
        (however unsurely) is the likelier mistake than the cap in hand,
        so the bar on the bare reading is dropped, and the move must be
        legal once the old cap is off (made-up-art game 1604: a faint
        black cap on a blue tower, read bare at 0.81 when black capped
        their third tower, held every later move up).
        """
        assert self.game is not None and self.accepted is not None
        for lot, before in self.accepted.structures.items():
            now = (after if making_room_for is None else observation.position).structures.get(lot)
            if before.cap is None or self._cap_confidence.get(lot, 1.0) >= DOUBTFUL_MOVE:
                continue
            recapped = making_room_for is None and now is not None and now.cap not in (None, before.cap) \
                and now.with_cap(None) == before.with_cap(None)
            if now != before.with_cap(None) and not recapped:
                continue
            if making_room_for is None:
                if observation.lot_confidence.get(LOT_NAMES[lot], 1.0) < DOUBTFUL_MOVE:
                    continue
            elif before.cap != making_room_for.player:
                continue
            uncapping = self._history_without_cap(lot)
            if uncapping is None:
                continue
            popped, moves = uncapping.popped, uncapping.moves
            then = () if making_room_for is None else (making_room_for,)
            if _legal_from(self.game, len(popped), moves + then) is None:
                continue
            if not recapped:
                after = Position(after.tiles, {**after.structures, lot: before.with_cap(None)})
            if not self._confirmed(after):
                return self._look_again()
            record = self._rewrite(Rereading(popped, moves))
            record["uncapped"] = LOT_NAMES[lot]
            self._cap_confidence.pop(lot, None)
            self.note = f"corrected: no cap on {LOT_NAMES[lot]}"
            return self._settled(record, after)
        return None

    def _repiece_doubtful(self, after: Position, observation: Observation) -> Outputs | None:
        """A build accepted doubtfully, however long ago, re-read as the piece its lot shows now,
        when that alone makes a board that is no legal move one; None unless exactly one does.

        Pieces never change in play, so an old build that now reads as
        another piece was misread, then or now.  When it was accepted below
        ``DOUBTFUL_MOVE`` and reads otherwise now, and the
        board as it stands is no legal move with it but is one (or no
        change) with the build re-read, every move from that one on is
        replayed with the piece now read.  Without this a red dome read as
        a tower at 0.80 when it went down, and as a dome at 0.83-0.90 for
        the fourteen plies after, turned its player's third red tower into
        "white has no red tower left" (printed game 2403): re-reading
        reaches only the last plies, and such a misread shows itself only
        when the supply runs out.  A lot whose build is read again this
        way keeps its cap, and the move that put the cap on keeps its place;
        a dome read as a tower its player capped at once goes back to no cap
        (made-up-art game 3901: a red dome read "red tower, white cap" ran
        white out of red towers, and the re-read kept the cap on the dome).

        The piece the lot shows now may also be read less surely than the
        build was, or be its runner-up (``_pieces_read_otherwise``).
        """
        assert self.game is not None and self.accepted is not None
        options = []
        for index, move in enumerate(self.game.moves):
            lot = move.lot
            if lot is None or move.piece is None or lot not in after.structures:
                continue
            for read in self._pieces_read_otherwise(lot, move, observation):
                cap = after.structures[lot].cap if read.kind == "tower" else None
                board = Position(after.tiles, {**after.structures, lot: Structure(read.kind, read.color, cap)})
                found = _build_read_as(self.game, index, read.piece)
                if found is None:
                    continue
                popped, moves, trial = found
                now = infer_move(trial.position, board, trial)
                if now.kind == "unchanged" or (now.kind == "move" and now.move is not None
                                               and not trial.violations(now.move)):
                    options.append((lot, board, popped, moves))
        if len(options) != 1:
            return None
        lot, board, popped, moves = options[0]
        if not self._confirmed(board):
            return self._look_again()
        record = self._rewrite(Rereading(popped, moves), repieced=lot)
        self.note = f"corrected: {LOT_NAMES[lot]} was a {board.structures[lot].piece.words}"
        return self._settled(record, board)

    def _pieces_read_otherwise(self, lot: int, move: Move, observation: Observation) -> list[Structure]:
        """Pieces other than ``move``'s that ``lot``, built doubtfully by ``move``, may hold: what it
        reads as now, its runner-up when the lot reads below ``DOUBTFUL_MOVE``, and the pieces it
        was read as before the build was taken.

        Why also a reading less sure than the build was, and a runner-up: a
        green coin at the board's edge read "green tower, 0.54-0.9; green
        dome, 0.46" when it went down, and dome or tower at 0.51 to 0.6 ever
        after (made-up-art game 2700).  The tower it was taken for ran its
        player out of green towers ten plies later; the app warned, then
        lost the turn order for the rest of the game.  A doubtful lot's
        readings are each a coin toss, so the rules decide between the
        pieces: ``_repiece_doubtful`` takes a re-reading only when exactly
        one makes the board legal.

        So are the pieces the lot was read as before the build was taken
        (``_structures_seen``): a red dome read "red dome 0.42, red tower with a
        white cap 0.40" as it went down, then the capped tower at 0.5 to 0.75
        with "empty" behind it for the rest of the game (made-up-art game 3901).
        """
        read = observation.position.structures.get(lot)
        if self._accepted_confidence.get(lot, 1.0) >= DOUBTFUL_MOVE or read is None:
            return []
        pieces = [read] if read.piece != move.piece else []
        name = LOT_NAMES[lot]
        runner_up = _runner_up_to_try(observation, name)
        if (observation.lot_confidence.get(name, 1.0) < DOUBTFUL_MOVE and runner_up is not None
                and runner_up.piece not in (move.piece, read.piece)):
            pieces.append(runner_up)
        seen_pieces = {seen.piece for seen in self._structures_seen.get(lot, ())}
        for piece in sorted(seen_pieces, key=lambda p: (p.kind, p.color)):
            if piece not in (move.piece, *(seen.piece for seen in pieces)):
                pieces.append(Structure(piece.kind, piece.color))
        return pieces

    def _out_of_caps(self, move: Move, violations: list[Violation]) -> bool:
        """Whether ``move`` breaks the rules only by a cap its player has run out of."""
        assert self.game is not None
        return (move.cap is not None and self.game.caps_left[move.player] <= 0
                and all(v.rule == RULE_CLAIM for v in violations))

    def _bare_past_a_fourth_cap(self, move: Move, after: Position, observation: Observation) -> Outputs | None:
        """``move`` taken without its cap, when the cap is one its player has none left for and is
        read below ``DOUBTFUL_MOVE``, and the build alone is legal; else None.

        Why: a player has three caps, and the accepted history has used
        them all, so a fourth is a misread somewhere: the new one or an
        older one.  An older cap still read as it was accepted cannot be
        told from a real one (``_uncap_doubtful`` takes one off only when its
        tower reads bare); a new one read doubtfully is the likelier misread.
        Path-traced game 133: the dark top of a clear blue tower under a warm
        lamp, read "capped black" at 0.85, was black's fourth cap and a
        warning ("black has used all 3 caps") on a legal board.  The cap is
        held refused while it reads below ``DOUBTFUL_MOVE`` (the tower
        counts as bare, ``_without_refused_caps``); read surely, it is a cap
        like any other, and a warning.  The move is marked for the players
        to check.
        """
        assert self.game is not None
        if move.cap is None or _cap_chance(observation, move.cap, after.structures[move.cap], at_most=False) \
                >= DOUBTFUL_MOVE:
            return None
        bare = Move(move.player, move.lot, move.piece, None)
        if self.game.violations(bare):
            return None
        self._refused_caps[move.cap] = move.player
        accepted = self._accept(bare, override=False)
        records = tuple(dict(r, cap_not_taken=LOT_NAMES[move.cap]) if r["type"] == "move" else r
                        for r in accepted.records)
        return self._noted(accepted, f" (a {move.player} cap on {LOT_NAMES[move.cap]} not taken: check it)", records)

    def _without_refused_caps(self, after: Position, observation: Observation) -> Position:
        """``after`` with each refused cap (``_bare_past_a_fourth_cap``) off its tower while it reads
        below ``DOUBTFUL_MOVE``; read surely, the cap is no longer refused, and is judged."""
        if not self._refused_caps:
            return after
        structures = dict(after.structures)
        for lot, player in list(self._refused_caps.items()):
            now = structures.get(lot)
            if now is None or now.cap != player:
                continue  # read bare (or not at all): the refusal stands
            if _cap_chance(observation, lot, now, at_most=False) >= DOUBTFUL_MOVE:
                del self._refused_caps[lot]
            else:
                structures[lot] = now.with_cap(None)
        return Position(after.tiles, structures)

    def _settled(self, record: dict[str, Any], after: Position, *more: dict[str, Any]) -> Outputs:
        """Outputs after a history rewrite logged by ``record`` (and ``more`` records after it); what
        the board shows beyond the rewritten history (the move being made now, or a late cap) is
        judged as usual."""
        assert self.game is not None
        if self.game.is_over():
            return self._finished_with(record, *more)
        settled = self._emit(Light.GREEN, self._turn_screen(), records=(record, *more))
        if after != self.accepted:
            rest = self._observe_game(Observation(after))
            return Outputs(rest.light, rest.screen, rest.beep, settled.records + rest.records,
                           rest.look_again)
        return settled

    def _take_back(self, lot: int, found: "Rereading") -> Outputs:
        record = self._rewrite(found)
        record["retracted"] = LOT_NAMES[lot]
        self._held_bars[lot] = max(self._held_bars.get(lot, 0.0), RETRACTED_CONFIDENCE)
        self._accepted_confidence.pop(lot, None)
        self._built_surely.discard(lot)
        self._support.pop(lot, None)
        retracted = next(m for m in found.popped if m.lot == lot)
        self.note = f"corrected: no {retracted.piece.words if retracted.piece else 'piece'} on {LOT_NAMES[lot]}"
        assert self.accepted is not None
        return self._settled(record, self.accepted)  # the lot's reading is left to the held bar

    def _rewrite(self, found: "Rereading", repieced: int | None = None) -> dict[str, Any]:
        """Replace the popped plies by the re-read moves; the correction record for the log (naming
        the lot whose build was read as another piece, ``repieced``, when that is the change)."""
        assert self.game is not None
        for _ in found.popped:
            self.game.pop()
        for move in found.moves:
            self.game.push(move)
            self._note_accepted(move)
        self.accepted = self.game.position.copy()
        self.verdict = None
        self._suspect = None
        self.phase = Phase.PLAYING
        self.board_moved()
        return {
            "type": "correction",
            "ply": self.game.ply - len(found.moves) + 1,
            "undo": len(found.popped),
            "old": [move_to_json(m) for m in found.popped],
            "moves": [move_to_json(m) for m in found.moves],
            "position": self.accepted.to_json(),
            **({"repieced": LOT_NAMES[repieced]} if repieced is not None else {}),
        }

    def _finished_with(self, *records: dict[str, Any]) -> Outputs:
        """The game over after the moves ``records`` log: their records, then the end."""
        finished = self._finish("no-moves")
        return Outputs(finished.light, finished.screen, finished.beep, records + finished.records)

    # ------------------------------------------------------------ corrections

    def _count_support(self, after: Position) -> None:
        """One more confident reading that agrees with these accepted structures."""
        assert self.accepted is not None
        for lot, structure in self.accepted.structures.items():
            if after.structures.get(lot) == structure:
                self._support[lot] = self._support.get(lot, self.max_looks) + 1

    def _note_arrivals(self, after: Position) -> None:
        assert self.accepted is not None
        self._readings += 1
        old = self.accepted.structures
        new = [lot for lot in after.structures if lot not in old]
        self._first_seen = {lot: self._first_seen.get(lot, self._readings) for lot in new}
        self._cap_seen = {lot: self._cap_seen.get(lot, self._readings) for lot in _new_caps(old, after.structures)}
        self._note_changed_arrivals()
        self._set_down_alone &= set(self._first_seen)

    def _note_changed_arrivals(self) -> None:
        """Remember the new lots whose look changed (``Observation.departed``) in the reading that
        first showed a piece there, with no other build or cap first showing beside them then.

        Why: a doubtful new piece counts as an arrival when its lot read
        surely empty since the last move, and a lot whose print looks a
        little like a piece may never have (made-up-art game 2802: a red
        dome on its red tile read "red dome 0.61, red tower 0.38" from the
        frame it came in, on a lot that had read empty only unsurely; left
        uncounted, the next build went to the wrong player: 30 of 38 moves,
        2 false warnings).  A print does not change its look between two
        still frames, but a piece set on it does.  So does a lean or a
        shadow, when a tower or a cap lands beside it in the same reading:
        those lots are left out (game 1104: white's cap on H7 changed the
        look of G7, which then read "black dome" unsurely, and counted, it
        was caught up as a move).
        """
        departed = self._observation.departed if self._observation is not None else frozenset()
        fresh = {lot for lot, seen in self._first_seen.items() if seen == self._readings}
        landed = fresh | {lot for lot, seen in self._cap_seen.items() if seen == self._readings}
        kept = {lot for lot in self._changed_arrivals if lot in self._first_seen}
        self._changed_arrivals = kept | {lot for lot in fresh if LOT_NAMES[lot] in departed
                                         and not any(beside in landed for beside in NEIGHBOURS[lot])}

    def _arrival_order(self, lots: list[int]) -> list[int]:
        """``lots`` in the order the camera first saw them (unseen ones last, by lot)."""
        return sorted(lots, key=lambda lot: (self._first_seen.get(lot, self._readings + 1), lot))

    def _caps_seen_with(self) -> dict[int, int | None]:
        """New build lot -> the new cap first seen in the same reading (the cap of that move)."""
        return {lot: cap for cap, seen in self._cap_seen.items()
                for lot, built in self._first_seen.items() if built == seen}

    def _cap_seen_with_build(self, move: Move) -> bool:
        """Whether ``move``'s cap is on its own tower or was first seen in the reading its build was:
        a cap whose build the camera never saw is not given to the next doubtful piece to show."""
        return move.lot is not None and move.cap in (move.lot, self._caps_seen_with().get(move.lot))

    def _needed_reads(self, disputed: list[int]) -> int:
        """Readings in a row a disputed board needs before it counts.

        ``confirm_reads`` more than the old reading of the best-seen disputed
        lot ever had, at most ``max_looks`` more: a move misread once is put
        right after three looks, while a glitch on a structure read right for
        a few moves fades long before it could win.  (The two are the same
        evidence seen in opposite order, so the longer run wins.)"""
        support = max(self._support.get(lot, self.max_looks) for lot in disputed)
        return max(self.confirm_reads, min(support, self.max_looks) + self.confirm_reads)

    def _weigh_dispute(self, after: Position, disputed: list[int]) -> Outputs | None:
        """None once the disputed board held for enough readings; else what to show meanwhile."""
        if self._vouched == after:
            return None
        needed = self._needed_reads(disputed)
        if self._confirmed(after, needed):
            self._vouched = after
            self._vouched_reads = needed
            self._last_dispute = None
            return None
        if self._last_dispute is not None and self._last_dispute != after:
            self._flips += 1  # the lot reads one way, then another: not a board to act on
        self._last_dispute = after
        self._dispute_reads += 1
        names = [LOT_NAMES[lot] for lot in disputed]
        if self._dispute_reads > needed + self.max_looks:
            base = self._turn_screen()
            return self._emit(Light.AMBER, Screen(
                ScreenKind.LOOKING, "Cannot read " + names[0],
                (f"Set the piece on {', '.join(names)} straight in its lot.",),
                players=base.players, turn=base.turn, lot=names[0], board=base.board))
        if self._flips:
            base = self._turn_screen()
            return self._emit(Light.AMBER, Screen(
                ScreenKind.LOOKING, "Looking again", (f"Not sure about {', '.join(names)}",),
                players=base.players, turn=base.turn, lot=names[0], board=base.board),
                look_again=True)
        return self._look_again()

    def _correct_history(self, after: Position) -> Outputs | None:
        """Re-read the last plies from a board that contradicts them (see :func:`reread_history`)."""
        assert self.game is not None
        found = reread_history(self.game, after, arrival=self._arrival_order,
                               caps_seen=self._caps_seen_with())
        if found is None:
            return None
        if found.violations:
            # The board's only reading has an illegal move in the past: the
            # players put it right on the table, as for any illegal move.
            return self._illegal(Verdict(after, None, found.violations))
        for move in found.moves:
            if move.lot is not None:  # seen this way in every reading that vouched for it
                self._support[move.lot] = max(self._support.get(move.lot, 0), self._vouched_reads)
        record = self._rewrite(found)
        record["corrected"] = [record["ply"] + i for i, (old, new) in enumerate(zip(found.popped, found.moves))
                               if old != new]
        self.note = found.words()
        unmended = self._unmended(record["corrected"])
        if unmended is not None:
            self.note += " (the tiles as set up)"
            return self._settled(record, after, unmended)
        # The plies re-read in place; what remains is the move being made now
        # (an illegal one, or a late cap): judged as usual, the board still vouched for.
        return self._settled(record, after)

    def _unmended(self, corrected: list[int]) -> dict[str, Any] | None:
        """The layout as it was before the last mend, back, with its ``tiles`` record for the log,
        when a re-reading changed a move taken with that mend (``corrected``: ply numbers) and the
        game so far is legal on it; None otherwise.

        Why: a mend rests on the build it made legal, and nothing else.
        Made-up-art game 1103 (`bench app --edition R --count 6 --seed
        1100`): white set a red tower on C3, against rule 3, and the
        referee, whose setup had read two tiles unsurely, took it as C3
        being red and G1 green; the players then moved the tower to C7 (a
        correction), but the swapped tiles stayed, and four plies later a
        legal red dome on G2 was warned about.
        """
        assert self.game is not None
        if self._mend is None or not set(corrected) & self._mend[0]:
            return None
        before = self._mend[1]
        self._mend = None
        replay = _replayed(before, self.game)
        if replay is None:
            return None
        colour, icon = _layout_changes(self.game.position.tiles, before)
        record = self._on_layout(replay, colour, icon)
        self.accepted = self.game.position.copy()
        return record

    def _illegal(self, verdict: Verdict) -> Outputs:
        same = self.verdict is not None and self.verdict.observed == verdict.observed
        if not same and not self._confirmed(verdict.observed, self._warning_reads(verdict)):
            return self._look_again()
        played_on = self._played_on(verdict.observed)
        if played_on is not None:
            return played_on
        if verdict.move is not None:
            self._warned = verdict
        elif self.phase is not Phase.ILLEGAL:
            self._warned = None
        self.phase = Phase.ILLEGAL
        self.verdict = verdict
        if same:
            return self._emit(Light.RED, self._outputs.screen)
        self.board_moved()
        record = {
            "type": "verdict",
            "legal": False,
            "move": None if verdict.move is None else move_to_json(verdict.move),
            "violations": [v.to_json() for v in verdict.violations],
            "problems": list(verdict.problems),
            "position": verdict.observed.to_json(),
        }
        return self._emit(Light.RED, self._verdict_screen(verdict), Beep.WARNING, (record,))

    def _warning_reads(self, verdict: Verdict) -> int:
        """Readings in a row a warning needs: ``confirm_reads``, and ``max_looks`` more for a board
        that is no move at all when a lot it changes was read below ``DOUBTFUL_MOVE`` this time.

        Why: a lot read at 0.75 to 0.9 counts as a change, and a phantom
        there (a tower's shadow, the top of a leaning neighbour) can last a
        couple of readings while the move beside it settles.  Over the 134
        generated app games five warnings were such boards: "white has no
        green tower left" for a phantom green tower (made-up-art game 1905),
        "black has no green tower left" (game 3901), "2 structures appeared
        at once" (printed game 4605).  A board that is one build breaking a
        rule is still warned about after ``confirm_reads``, however unsurely
        the build was read: the players who put an illegal piece down take
        it back within a second or two, and a warning that waits for more
        readings comes too late (the icon lots, docs/app.md).
        """
        assert self.accepted is not None
        if verdict.move is not None or self._observation is None:
            return self.confirm_reads
        confidence = self._observation.lot_confidence
        if any(confidence.get(name, 1.0) < DOUBTFUL_MOVE for name in _changed_lots(self.accepted, verdict.observed)):
            return self.confirm_reads + self.max_looks
        return self.confirm_reads

    def _played_on(self, observed: Position) -> Outputs | None:
        """The board taken as it stands, as a long press takes it, when the players built on past a
        warning; None unless ``observed`` keeps every structure of the warned board as it was (a
        cap put on since aside) and adds more: one build or more past a warning about a board
        that is no single move, ``PLAYED_PAST_RULED`` past a warning about one illegal build.

        Why: such a warning (two caps at once, a cap out of turn, several
        structures at once) names no build the players could take back, and
        the players who play on past it have ruled.  When it came from a
        misread they cannot see (a blue tower's shaded apex read as a black
        cap at 0.97, Cycles game 108), nothing they do clears it: every later
        board was one more warning ("3 structures appeared at once", ...),
        21 in all, and the game was lost from there.  Each move that breaks
        a rule is logged as a house ruling, as with the long press.

        A warning about one illegal build names the build to take back, so
        one build past it may be the next player not waiting for that; but
        when both players have built on past it, the build stands by their
        ruling.  Until 2026-11-29 such a warning stayed up for the rest of
        the game: in printed game 4002 a phantom tower caught up as a move
        made a later legal build "split the streets", the players played on,
        and the red light stayed on for twelve more moves, each one more
        warning (17 in all).  A misread layout is mended first, where the
        tile rules allow it (``_played_past_layout``).
        """
        if self.phase is not Phase.ILLEGAL or self.verdict is None:
            return None
        one_build = self._warned if self._warned is not None else \
            self.verdict if self.verdict.move is not None else None
        warned_board = (one_build or self.verdict).observed
        held, lost = self._kept_unseen(observed, warned_board)
        warned, now = self._kept_unseen(warned_board)[0].structures, held.structures
        if not set(warned) < set(now) or not all(_same_piece(now[lot], then) for lot, then in warned.items()):
            return None
        if one_build is not None and len(set(now) - set(warned)) < PLAYED_PAST_RULED:
            return None
        moves = self._moves_to_board_as_it_stands(held)
        if moves is None:
            return None
        self._unseen.update(lost)
        return self._repieced_held(self._caught_up(moves, ruled=True, why="played on past the warning: "), observed)

    def _kept_unseen(self, board: Position, also_on: Position | None = None) -> tuple[Position, list[int]]:
        """``board`` with every accepted structure it shows gone, turned into another piece or with
        its cap changed (and ``also_on`` shows so too) put back as accepted, and those lots.

        Why: pieces never leave an Alien City board in play, so players
        who build on past a warning that a piece was removed, or hold the
        new-game button on it, are saying it is still there and the
        camera has lost it.  Until then every later board is one more
        warning (path-traced game 130 with its photos held 2 s: a black
        coin beside a tower that white had just capped read "empty, 0.99"
        from that frame on, and all eight warnings to the end began "the
        black dome on E1 was removed").  Such lots are held as accepted
        while they read empty (``_with_unseen``).

        A cap is never taken off or swapped in play either, so a cap the
        referee accepted that now reads gone or of the other colour is held
        the same way.  Without it such a board was no move at all, even
        for the long press ("put the board back", which the players
        cannot do when the board is right): in clear-tower game 122 the
        caps on two clear towers read as the other colour, and every later
        board was one more warning, 21 in all.

        Nor does any move turn a piece into another (that takes one off
        the board), so an accepted piece read as another is held the same
        way.  Clear towers tell it most: a dome beside a clear tower read
        as a tower and then as the dome it is became a "tower turned into
        a dome" warning that even the long press could not clear, and in
        told clear-tower game 130 every later board was one more warning.
        A real swap, a knocked piece put back as the wrong one, is held as
        the piece the game accepted, which is the game's history either way.
        """
        assert self.accepted is not None
        lost = [lot for lot in self.accepted.structures if _unlike_accepted(self.accepted, board, lot)
                and (also_on is None or _unlike_accepted(self.accepted, also_on, lot))]
        return (_as_accepted(board, self.accepted, [LOT_NAMES[lot] for lot in lost]) if lost else board), lost

    def _repieced_held(self, ruled: Outputs, board: Position) -> Outputs:
        """``ruled`` (the outputs of a players' ruling that held pieces as accepted), with each held
        build that was accepted doubtfully and that ``board`` shows surely as another piece read
        again as that piece, when the game from its ply on stays legal so.

        Why: the ruling says the table is right and the camera misreads a
        lot, then or now.  A build taken below ``DOUBTFUL_MOVE`` is the
        likelier misread when the lot now reads surely as another piece.
        Told clear-tower game 130: a blue dome beside a clear tower, read
        "blue tower, 0.53" once as it went down and a blue dome at 0.9 and
        more from then on, was held as the tower past the warning, and the
        game scored it as one (``_repiece_doubtful`` did not reach it:
        two builds had come with the dome's sure reading, so the board was
        no single move with it re-read either).
        """
        if self.game is None or self.phase is not Phase.PLAYING:
            return ruled
        records = [record for lot in sorted(self._unseen) if (record := self._repiece_held(lot, board)) is not None]
        if not records:
            return ruled
        accepted = self.game.position.structures
        self.note += "; corrected: " + ", ".join(
            f"{r['repieced']} was a {accepted[parse_lot(r['repieced'])].piece.words}" for r in records)
        return self._emit(ruled.light, self._turn_screen(), ruled.beep, ruled.records + tuple(records))

    def _repiece_held(self, lot: int, board: Position) -> dict[str, Any] | None:
        """The correction record of re-reading held ``lot``'s build as the piece ``board`` shows
        (``_repieced_held``); None, and nothing changed, unless that is sure, the build was
        doubtful and the game stays legal."""
        assert self.game is not None and self.accepted is not None
        read, held = board.structures.get(lot), self.accepted.structures.get(lot)
        confidence = self._observation.lot_confidence.get(LOT_NAMES[lot], 1.0) if self._observation else 0.0
        if read is None or held is None or read.piece == held.piece or confidence < DOUBTFUL_MOVE \
                or self._accepted_confidence.get(lot, 1.0) >= DOUBTFUL_MOVE:
            return None
        found = _build_read_as(self.game, next(i for i, move in enumerate(self.game.moves) if move.lot == lot),
                               read.piece)
        if found is None:
            return None
        self._unseen.discard(lot)
        return self._rewrite(Rereading(found[0], found[1]), repieced=lot)

    def _kept_words(self, lot: int, board: Position) -> str:
        """How the players are told of a lot held as accepted: its name when it reads gone, its
        cap's (``F5's white cap``) when the board shows the tower and only the cap otherwise, and
        its piece's (``F5's red tower``) when the board shows another piece there."""
        assert self.accepted is not None
        then, now = self.accepted.structures[lot], board.structures.get(lot)
        if now is None:
            return LOT_NAMES[lot]
        if now.piece == then.piece and then.cap is not None:
            return f"{LOT_NAMES[lot]}'s {then.cap} cap"
        return f"{LOT_NAMES[lot]}'s {then.piece.words}"

    def _with_unseen(self, after: Position) -> Position:
        """``after`` with the pieces the players ruled still there as they were (``_kept_unseen``)
        as accepted while it reads them gone (or another piece, or their caps changed); a lot that
        shows its piece as accepted is read as usual from then on."""
        assert self.accepted is not None
        self._unseen = {lot for lot in self._unseen
                        if lot in self.accepted.structures and _unlike_accepted(self.accepted, after, lot)}
        return _as_accepted(after, self.accepted, [LOT_NAMES[lot] for lot in self._unseen]) if self._unseen \
            else after

    def _confirmed(self, observed: Position, needed: int | None = None) -> bool:
        """Whether ``needed`` (default ``confirm_reads``) readings in a row have shown this board."""
        if self._vouched is not None and self._vouched == observed:
            return True
        needed = self.confirm_reads if needed is None else needed
        if needed <= 1:
            return True
        seen = self._suspect[1] + 1 if self._suspect and self._suspect[0] == observed else 1
        self._suspect = (observed, seen)
        if seen < needed:
            return False
        self._suspect = None
        return True

    def _cleared_mid_game(self, observation: Observation, after: Position) -> Outputs:
        """Every piece gone: the players ended this game their own way; a new one begins."""
        if not self._confirmed(after):
            return self._look_again()
        finished = self._finish("cleared")
        self._back_to_setup()
        setup = self._observe_setup(observation)
        return Outputs(setup.light, setup.screen, None, finished.records + setup.records,
                       setup.look_again)

    def _clear(self, why: str) -> Outputs:
        self._suspect = None
        self.phase = Phase.PLAYING
        self.verdict = None
        self.note = why
        return self._emit(Light.GREEN, self._turn_screen(),
                          records=({"type": "verdict", "legal": True, "cleared": why},))

    def _accept_house_ruling(self) -> Outputs:
        if self.phase is not Phase.ILLEGAL or self.verdict is None:
            return self._emit(self._outputs.light, self._outputs.screen)
        if self.verdict.move is None:
            board, lost = self._kept_unseen(self.verdict.observed)
            observed = self.verdict.observed
            if lost and board == self.accepted:  # only pieces read gone: still there, say the players
                self._unseen.update(lost)
                return self._repieced_held(self._clear(f"{', '.join(self._kept_words(lot, observed) for lot in lost)} "
                                                       "still there, by the players"), observed)
            moves = self._moves_to_board_as_it_stands(board)
            if moves is not None:
                self._unseen.update(lost)
                return self._repieced_held(self._caught_up(moves, ruled=True), observed)
            screen = self._verdict_screen(self.verdict)
            screen = Screen(screen.kind, screen.title, screen.lines,
                            players=screen.players, turn=screen.turn, lot=screen.lot,
                            fix="this is no single move; put the board back",
                            board=screen.board)
            return self._emit(Light.RED, screen)
        return self._accept(self.verdict.move, override=True)

    # ---------------------------------------------------------------- the end

    def _finish(self, reason: str, *, record: bool = True) -> Outputs:
        assert self.game is not None
        self.phase = Phase.OVER
        self.verdict = None
        self.end_reason = reason
        score = self.game.score()
        records: tuple[dict[str, Any], ...] = ()
        if record:
            records = ({"type": "end", "reason": reason, "ply": self.game.ply,
                        "score": score.to_json()},)
        return self._emit(Light.GREEN, self._final_screen(), Beep.ATTENTION, records)

    def _observe_over(self, observation: Observation) -> Outputs:
        if not observation.position.structures:
            self._back_to_setup()
            return self._observe_setup(observation)
        return self._emit(self._outputs.light, self._outputs.screen)

    # --------------------------------------------------------------- screens

    def _players(self) -> tuple[PlayerLine, ...]:
        assert self.game is not None
        score = self.game.score()
        return tuple(
            PlayerLine(p, score.total(p), self.game.pieces_left(p), self.game.caps_left[p])
            for p in ("black", "white")
        )

    def _sketch(self, position: Position | None = None) -> BoardSketch:
        assert self.accepted is not None
        return BoardSketch.from_position_json((position or self.accepted).to_json())

    def _turn_screen(self) -> Screen:
        assert self.game is not None
        lines = (self.note,) if self.note else ()
        last = self.game.moves[-1] if self.game.moves else None
        lot = LOT_NAMES[last.lot] if last is not None and last.lot is not None else None
        return Screen(ScreenKind.TURN, f"{self.game.turn.capitalize()} to play", lines,
                      players=self._players(), turn=self.game.turn, lot=lot, board=self._sketch())

    def _verdict_screen(self, verdict: Verdict) -> Screen:
        lot = verdict.lot
        if verdict.violations:
            first = verdict.violations[0]
            lines = tuple(f"Rule {v.rule}: {v.message}" for v in verdict.violations[:2])
            rule: int | None = first.rule
        else:
            lines = tuple(p[:1].upper() + p[1:] for p in verdict.problems[:2])
            rule = None
        title = f"Illegal: {lot}" if lot and verdict.violations else "Check the board"
        return Screen(ScreenKind.VERDICT, title, lines, players=self._players(),
                      turn=self.game.turn if self.game else None, lot=lot, rule=rule,
                      fix=self._fix(verdict), board=self._sketch(verdict.observed))

    def _fix(self, verdict: Verdict) -> str:
        assert self.game is not None
        move = verdict.move
        if move is None or move.lot is None or move.piece is None:
            if any(v.rule == 6 for v in verdict.violations):
                return "take the cap off again"
            if move is None:
                board, lost = self._kept_unseen(verdict.observed)
                if lost and board == self.accepted or self._moves_to_board_as_it_stands(board) is not None:
                    if lost:
                        return f"put it back, or hold new game if {self._kept_words(lost[0], verdict.observed)} is still there"
                    return "put it back, or hold new game to take it as it is"  # (3 lines on the small display)
            return "put the board back as it was"
        rules = {v.rule for v in verdict.violations}
        if rules == {6} and move.cap is not None:
            return f"take the cap off {LOT_NAMES[move.cap]}"
        fix = f"take the {move.piece.words} off {LOT_NAMES[move.lot]}"
        if 7 not in rules:
            legal = [LOT_NAMES[lot] for lot, piece in self.game.legal_builds(move.player)
                     if piece == move.piece][:3]
            if legal:
                fix += f"; it may go on {', '.join(legal)}"
        return fix

    def _final_screen(self) -> Screen:
        assert self.game is not None
        score = self.game.score()
        rows: list[TowerLine] = []
        for player in ("white", "black"):
            for tower in score.players[player].towers:
                rows.append(TowerLine(player, LOT_NAMES[tower.lot], tower.color, tower.points,
                                      tower.customers, tower.competition))
            for bonus in score.players[player].bonuses:
                rows.append(TowerLine(player, LOT_NAMES[bonus.towers[0]], bonus.color, bonus.points,
                                      bonus_from=LOT_NAMES[bonus.green]))
        winner = score.winner
        margin = abs(score.total("white") - score.total("black"))
        # a replay that ran out may have stopped mid-game: the score as it stands, not a result
        heading, verb, by = ("Recording ended", "leads", "ahead by") if self.end_reason == "recording ended" \
            else ("Game over", "wins", "wins by")
        title = f"{heading}: tie" if winner == "tie" else f"{heading}: {winner.capitalize()} {verb}"
        lines = ["A tie." if winner == "tie" else f"{winner.capitalize()} {by} {margin}"]
        if self.game.void_caps:
            lines.append("Cap on " + ", ".join(LOT_NAMES[x] for x in sorted(self.game.void_caps))
                         + " does not score (final turn)")
        players = tuple(
            PlayerLine(p, score.total(p), self.game.pieces_left(p), self.game.caps_left[p])
            for p in ("white", "black")
        )
        return Screen(ScreenKind.FINAL, title, tuple(lines), players=players, towers=tuple(rows),
                      winner=winner, board=self._sketch())

    def _look_again(self) -> Outputs:
        """The same light and screen, and another still frame soon: a board not yet seen often enough."""
        return self._emit(self._outputs.light, self._outputs.screen, look_again=True)

    def _emit(self, light: Light, screen: Screen, beep: Beep | None = None,
              records: tuple[dict[str, Any], ...] = (), look_again: bool = False) -> Outputs:
        self._outputs = Outputs(light, screen, beep, records, look_again)
        return self._outputs


MAX_CATCH_UP = 3  # more missed moves than this is no longer a guess worth making
MAX_CORRECTION = 3  # plies that may be read again; older ones have been seen right too often
MAX_RETRACTION = 8  # ...but a doubtful build may be taken back from this far (Referee._retract_doubtful)
SEQUENCE_TRIES = 400  # moves one search for a legal order tries before it gives up (_legal_sequence)
MAX_NEW_IN_CORRECTION = 2  # moves made since, re-read with them (the search grows factorially)


@dataclass(frozen=True)
class Rereading:
    """The last plies read again from the board: ``popped`` (as accepted) become ``moves``.

    ``moves`` re-reads the popped plies and may go on with the moves made
    since (then it ends exactly at the board; else what is left is judged
    as usual).  ``violations`` is set instead of ``moves`` when the only
    reading of the board has an illegal move in the past.
    """

    popped: tuple[Move, ...]
    moves: tuple[Move, ...] = ()
    violations: tuple[Violation, ...] = ()

    def words(self) -> str:
        """What changed, for the display: "corrected: E6 was a blue dome"."""
        fixes = [_correction_words(old, new) for old, new in zip(self.popped, self.moves) if old != new]
        words = "corrected: " + "; ".join(fixes)
        if len(self.moves) > len(self.popped):
            words += "; " + _move_words(self.moves[-1])
        return words


def reread_history(game: Game, after: Position, max_plies: int = MAX_CORRECTION,
                   arrival: Callable[[list[int]], list[int]] = sorted,
                   caps_seen: Mapping[int, int | None] | None = None) -> Rereading | None:
    """Explain a board that disagrees with accepted structures by a corrected history.

    Pop the last k plies (k = 1.. ``max_plies``, the fewest that works) and
    look for a legal sequence of builds, turn by turn from there, that ends
    exactly at ``after``: the popped plies read again, plus the moves made
    since (at most ``MAX_NEW_IN_CORRECTION``: play goes on while the referee
    looks).  Nothing is ever erased: a structure gone without a replacement is
    a take-back for the players to explain, not a misread.  The search
    prefers the accepted order and caps, so a correction changes as little
    as it can (``arrival`` orders the other new lots, ``caps_seen`` pairs
    them with the caps first seen with them).  When no order is legal, the plies are read again in place
    (same lots, same players): if that is legal the move made since is what
    breaks a rule, and it is left to be judged; else that reading's first
    broken rule is returned.
    """
    first_consistent: tuple[Game, list[Move]] | None = None
    target = after.structures
    for k in range(1, min(max_plies, game.ply) + 1):
        trial = game.copy()
        popped = [trial.pop() for _ in range(k)][::-1]
        if any(m.is_pass or m.lot is None for m in popped):
            return None  # a pass in between: the turn order itself is in doubt
        base = trial.position.structures
        if not all(lot in target and target[lot].with_cap(None) == s.with_cap(None)
                   and (s.cap is None or target[lot].cap == s.cap) for lot, s in base.items()):
            continue
        added = [m.lot for m in popped if m.lot in target and m.lot not in base]
        added += arrival([lot for lot in target if lot not in base and lot not in added])
        if not k <= len(added) <= k + MAX_NEW_IN_CORRECTION:
            continue
        prefer = {**(caps_seen or {}), **{m.lot: m.cap for m in popped if m.lot is not None}}
        moves = _legal_sequence(trial.copy(), added, _new_caps(base, target), target, prefer)
        if moves is not None:
            return Rereading(tuple(popped), tuple(moves))
        if first_consistent is None:
            first_consistent = (trial, popped)
    if first_consistent is None:
        return None
    trial, popped = first_consistent
    in_place: list[Move] = []
    for move in popped:
        assert move.lot is not None
        structure = target.get(move.lot)
        if structure is None:
            return None
        cap = move.cap if move.cap is not None and target.get(move.cap) is not None \
            and target[move.cap].cap == move.player else None
        reread = Move(move.player, move.lot, structure.with_cap(None).piece, cap)
        violations = trial.violations(reread)
        if violations:
            return Rereading(tuple(popped), violations=tuple(violations))
        trial.push(reread)
        in_place.append(reread)
    if in_place == popped:
        return None
    return Rereading(tuple(popped), tuple(in_place))


def _unlike_accepted(accepted: Position, board: Position, lot: int) -> bool:
    """Whether ``board`` shows the accepted structure on ``lot`` gone, turned into another piece,
    or with its accepted cap gone or of the other colour: what no move does (see
    Referee._kept_unseen)."""
    return not _same_piece(board.structures.get(lot), accepted.structures[lot])


def _same_piece(now: Structure | None, then: Structure | None) -> bool:
    """Whether a lot holds the piece it held, capped since or not."""
    return now is not None and then is not None and now.piece == then.piece and then.cap in (None, now.cap)


def _layout_changes(old: Mapping[int, Tile], new: Mapping[int, Tile]) -> tuple[dict[str, str], dict[str, str]]:
    """The tiles of ``new`` in another guild than in ``old``, and those with their icon elsewhere
    (as ``Referee._take_with_layout`` logs them)."""
    colour = {LOT_NAMES[lot]: tile.color for lot, tile in new.items() if tile.color != old[lot].color}
    icon = {LOT_NAMES[lot]: LOT_NAMES[tile.icon] for lot, tile in new.items() if tile.icon != old[lot].icon}
    return colour, icon


def _new_caps(before: Mapping[int, Structure], after: Mapping[int, Structure]) -> list[int]:
    """The lots of ``after`` whose structure carries a cap it did not carry in ``before``."""
    return [lot for lot, s in after.items() if s.cap is not None and (lot not in before or before[lot].cap is None)]


def _without(position: Position, *lots: int) -> Position:
    """``position`` with the structures of ``lots`` left out."""
    return Position(position.tiles, {k: s for k, s in position.structures.items() if k not in lots})


def _replayed(tiles: Mapping[int, Tile], game: Game) -> Game | None:
    """``game``'s moves played again on ``tiles``; None when one of them is then illegal."""
    replay = Game(tiles, game.rules)
    for move in game.moves:
        if replay.violations(move):
            return None
        replay.push(move)
    return replay


def _build_read_as(game: Game, index: int, piece: Piece) -> tuple[tuple[Move, ...], tuple[Move, ...], Game] | None:
    """The plies from ``index`` on as accepted, the same with that ply's build read as ``piece``, and
    the game they make; None when that is illegal.  A cap the mover put on the build itself stays
    only while the piece is a tower (a dome read as a tower its player capped at once goes back to
    no cap)."""
    popped = tuple(game.moves[index:])
    build = popped[0]
    kept_cap = build.cap if build.cap != build.lot or piece.kind == "tower" else None
    moves = (Move(build.player, build.lot, piece, kept_cap), *popped[1:])
    trial = _legal_from(game, len(popped), moves)
    return None if trial is None else (popped, moves, trial)


def _legal_from(game: Game, undo: int, moves: tuple[Move, ...]) -> Game | None:
    """A copy of ``game`` with its last ``undo`` plies taken back and ``moves`` played in turn;
    None when one of them is illegal."""
    trial = game.copy()
    for _ in range(undo):
        trial.pop()
    for move in moves:
        if trial.violations(move):
            return None
        trial.push(move)
    return trial


def _legal_sequence(game: Game, lots: list[int], caps: list[int],
                    target: Mapping[int, Any], prefer: Mapping[int, int | None] | None = None,
                    *, judged: bool = True) -> list[Move] | None:
    """Some order of builds on ``lots`` (turn by turn, with the new caps placed by
    their owners) that is legal from ``game`` and ends exactly at ``target``.
    ``lots`` are tried in the order given, and a lot's cap in ``prefer`` first.
    ``judged=False``: any such order, legal or not (the players' own ruling).

    Orders grow factorially with the lots; a search that has tried
    ``SEQUENCE_TRIES`` moves without finding one gives up (None), as a
    board no short history explains is no guess worth the wait.
    """
    tries = SEQUENCE_TRIES

    def search(lots: list[int], caps: list[int]) -> list[Move] | None:
        nonlocal tries
        if not lots:
            return [] if not caps and dict(game.position.structures) == dict(target) else None
        mover = game.turn
        for lot in lots:
            piece = target[lot].piece
            own_caps = [c for c in caps if target[c].cap == mover]
            # a ruling takes any order, so each cap goes on as early as it can: fewer dead ends
            options: list[int | None] = [None, *own_caps] if judged else [*own_caps, None]
            wanted = (prefer or {}).get(lot)
            if wanted in own_caps:
                options = [wanted, *[o for o in options if o != wanted]]
            for cap in options:
                if cap is not None and cap != lot and cap not in game.position.structures:
                    continue
                if tries <= 0:
                    return None
                tries -= 1
                move = Move(mover, lot, piece, cap)
                if judged and game.violations(move):
                    continue
                game.push(move)
                rest = search([x for x in lots if x != lot], [c for c in caps if c != cap])
                game.pop()
                if rest is not None:
                    return [move, *rest]
        return None

    return search(lots, caps)


def _unread_caps_off(unread: Position, after: Position) -> Position | None:
    """``unread`` with its unread towers (not in ``after``) bare; None when none of them has a cap.

    Why: a build too unsure to count is unsure about its cap too, and
    whether a cap went with a build is the rules' to say (a clear red tower
    on a black tile reads "capped black, 0.41" from its first frame, its
    apex as dark as the tile under it).  Caught up with that cap, white's
    tower in Cycles game 123 (ply 8) could only be legal with black's next
    move re-read to a cap two plies early; bare, the two moves are what
    was played.
    """
    capped = [lot for lot, s in unread.structures.items()
              if lot not in after.structures and s.kind == "tower" and s.cap is not None]
    if not capped:
        return None
    return Position(unread.tiles, {**unread.structures, **{lot: unread.structures[lot].with_cap(None)
                                                           for lot in capped}})


def _cap_chance(observation: Observation, lot: int, capped: Structure, *, at_most: bool) -> float:
    """How probable the reading makes ``capped`` on ``lot``: its confidence when it is the answer,
    its probability when it is the runner-up; otherwise 0, or with ``at_most`` the most it can be."""
    name = LOT_NAMES[lot]
    confidence = float(observation.lot_confidence.get(name, 1.0))
    if observation.position.structures.get(lot) == capped:
        return confidence
    alt = observation.runners_up.get(name)
    if alt is not None and alt.structure == capped:
        return alt.probability
    if not at_most:
        return 0.0
    rest = max(0.0, 1.0 - confidence)
    return rest if alt is None else min(alt.probability, max(0.0, rest - alt.probability))


def _setup_screen(*lines: str) -> Screen:
    return Screen(ScreenKind.SETUP, "Setup", lines or ("Clear the board and lay out all 20 tiles.",))


def _touching(a: int, b: int) -> bool:
    """Whether two lots are the same or side by side, diagonals included."""
    return _lots_apart(a, b) <= 1


def _lots_apart(a: int, b: int) -> int:
    """How many lots apart two lots are, a diagonal step counting one."""
    return max(abs(column_of(a) - column_of(b)), abs(row_of(a) - row_of(b)))


def _changed_lots(before: Position, after: Position) -> list[str]:
    lots = set(before.structures) | set(after.structures)
    return sorted((LOT_NAMES[lot] for lot in lots
                   if before.structures.get(lot) != after.structures.get(lot)),
                  key=parse_lot)


def _towers_beside(board: Position, lot: int, colour: str | None = None) -> list[int]:
    """The lots beside ``lot`` on which ``board`` has a tower (of ``colour``, when given)."""
    return [beside for beside in NEIGHBOURS[lot]
            if (tower := board.structures.get(beside)) is not None and tower.kind == "tower"
            and colour in (None, tower.color)]


def _beside_a_tower_like(board: Position, lot: int, structure: Structure) -> bool:
    """Whether ``structure`` is a tower and ``board`` has a tower of its colour on a lot beside ``lot``."""
    return structure.kind == "tower" and bool(_towers_beside(board, lot, structure.color))


def _only_its_cap_in_doubt(read: Structure, alt: RunnerUp) -> bool:
    """Whether the runner-up is the piece read with the other cap, or none: the piece sure, its cap
    in doubt (a runner-up is never the answer itself)."""
    return alt.structure is not None and alt.structure.with_cap(None) == read.with_cap(None)


def _runner_up_to_try(observation: Observation, name: str, bar: float = LEGAL_RUNNER_UP) -> Structure | None:
    """The lot's runner-up answer when it is a piece probable enough (``bar``) for the rules to try
    in place of what was read; otherwise None."""
    alt = observation.runners_up.get(name)
    return alt.structure if alt is not None and alt.probability >= bar else None


def _surely_a_piece(observation: Observation, name: str) -> bool:
    """Whether the lot's answer and runner-up are both pieces, together ``SURELY_A_PIECE`` or more
    probable: surely a piece, only which one in doubt."""
    alt = observation.runners_up.get(name)
    return (observation.position.structures.get(parse_lot(name)) is not None and alt is not None
            and alt.structure is not None
            and observation.lot_confidence.get(name, 0.0) + alt.probability >= SURELY_A_PIECE)


def _pieces_at(board: Position, lots: Iterable[int]) -> dict[int, Structure]:
    """What ``board`` has on each of ``lots`` (each holds a structure)."""
    return {lot: board.structures[lot] for lot in lots}


def _piece_probability(observation: Observation, name: str) -> float:
    """How probable some piece is on the lot, as far as its answer and runner-up tell: all but the
    runner-up's share when that is "empty"; when both are pieces, all but the reader's "empty" where
    it says it, else at least the two together.

    Why the reader's "empty": a tower read "red with a black cap, 0.44; red,
    0.28" leaves 0.28 that may be other towers or nothing, and whether some
    piece came decides whether it was a move (path-traced game 132: a clear
    blue tower read so, "empty" 0.05, was taken for no move, and the next
    two builds went to the wrong players)."""
    confidence = observation.lot_confidence.get(name, 0.0)
    if observation.position.structures.get(parse_lot(name)) is None:
        return 1.0 - confidence
    alt = observation.runners_up.get(name)
    if alt is None:
        return confidence
    if alt.structure is None:
        return 1.0 - alt.probability
    return max(confidence + alt.probability, 1.0 - alt.empty if alt.empty is not None else 0.0)


def _as_accepted(after: Position, accepted: Position, lots: list[str]) -> Position:
    """``after`` with ``lots`` showing what the accepted position has there."""
    doc = after.to_json()
    was = accepted.to_json()["structures"]
    for lot in lots:
        if lot in was:
            doc["structures"][lot] = was[lot]
        else:
            doc["structures"].pop(lot, None)
    return Position.from_json(doc)


def _disputed_lots(accepted: Position, after: Position) -> list[int]:
    """Accepted structures the board now shows otherwise: gone, another piece, another cap.
    (A cap added to an uncapped tower is no dispute: that is a late cap or a new claim.)"""
    disputed = []
    for lot, old in accepted.structures.items():
        new = after.structures.get(lot)
        if new is None or new.with_cap(None) != old.with_cap(None) or (
                old.cap is not None and new.cap != old.cap):
            disputed.append(lot)
    return sorted(disputed)


def _correction_words(old: Move, new: Move) -> str:
    if new.lot is None or new.piece is None:
        return _move_words(new)
    lot = LOT_NAMES[new.lot]
    if old.lot != new.lot:
        words = f"the {new.piece.words} is on {lot}"
    elif old.piece != new.piece:
        words = f"{lot} was a {new.piece.words}"
    else:
        words = f"{lot} as read"
    if old.cap != new.cap:
        words += f", capped {LOT_NAMES[new.cap]}" if new.cap is not None else ", no cap"
    return words


def _move_words(move: Move) -> str:
    if move.is_pass or move.piece is None or move.lot is None:
        return f"{move.player.capitalize()} passed"
    words = f"{move.player.capitalize()} built a {move.piece.words} on {LOT_NAMES[move.lot]}"
    if move.cap is not None:
        words += f", capped {LOT_NAMES[move.cap]}"
    return words
