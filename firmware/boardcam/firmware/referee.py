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
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from boardcam.engine.aliencity import (
    LOT_NAMES,
    Game,
    Move,
    Position,
    Ruleset,
    Violation,
    infer_move,
    layout_warnings,
    move_to_json,
    parse_lot,
)

from .lights import Beep, ButtonEvent, Light
from .screens import BoardSketch, PlayerLine, Screen, ScreenKind, TowerLine


class Phase(enum.Enum):
    SETUP = "setup"
    PLAYING = "playing"
    ILLEGAL = "illegal"
    OVER = "over"


@dataclass(frozen=True)
class Observation:
    """What the referee needs from one reading of a still board."""

    position: Position
    lot_confidence: Mapping[str, float] = field(default_factory=dict)
    tile_confidence: Mapping[str, float] = field(default_factory=dict)
    occluded: bool = False

    @classmethod
    def from_reading(cls, reading: Any) -> "Observation":
        """Adapt the vision's Reading (duck-typed: the vision package is not imported here)."""
        return cls(
            position=reading.position,
            lot_confidence=dict(getattr(reading, "lot_confidence", {}) or {}),
            tile_confidence=dict(getattr(reading, "tile_confidence", {}) or {}),
            occluded=bool(getattr(reading, "occluded", False)),
        )


@dataclass(frozen=True)
class Outputs:
    light: Light
    screen: Screen
    beep: Beep | None = None
    records: tuple[dict[str, Any], ...] = ()
    look_again: bool = False  # read another still frame soon (an unsure lot)


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

    def resume(self, game: Game) -> Outputs:
        """Continue a game rebuilt from the log after a restart."""
        self.game = game
        self.accepted = game.position.copy()
        self.verdict = None
        self.note = "game resumed"
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

    def press(self, event: ButtonEvent) -> Outputs:
        if event is not ButtonEvent.NEW:
            self._new_pending = False
        if event is ButtonEvent.SCORE:
            if self.phase is Phase.SETUP:
                return self._start_game() if self.layout is not None else self._emit(
                    Light.AMBER, _setup_screen("No layout read yet: clear the board."))
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
            if self.layout is not None and len(position.structures) == 1:
                # The first piece went down without the confirm press: that is a
                # confirmation (of the layout read on the empty board, which is
                # the better reading: nothing stood on the tiles then).
                started = self._start_game()
                played = self._observe_game(observation)
                return Outputs(played.light, played.screen, played.beep,
                               started.records + played.records, played.look_again)
            return self._emit(Light.AMBER, _setup_screen("Clear the board to start a new game."))
        if unsure_tiles:
            if self._looks < self.max_looks:
                self._looks += 1
                return self._emit(Light.AMBER, Screen(
                    ScreenKind.LOOKING, "Reading tiles", (f"Not sure about {', '.join(unsure_tiles)}",)),
                    look_again=True)
        # Still unsure after every look: the confirmation is exactly the human
        # check needed, so show the layout with the doubtful tiles named.
        self.layout = Position(position.tiles)
        counts = {c: sum(1 for t in position.tiles.values() if t.color == c)
                  for c in ("red", "blue", "green", "black")}
        doubts = [f"Check tile {', '.join(unsure_tiles)}"] if unsure_tiles else []
        lines = ["  ".join(f"{c} {n}" for c, n in counts.items()), *doubts,
                 *layout_warnings(position.tiles)[:1], "Score button: confirm"]
        screen = Screen(ScreenKind.CONFIRM, "Layout read", tuple(lines),
                        board=BoardSketch.from_position_json(self.layout.to_json()),
                        lot=unsure_tiles[0] if unsure_tiles else None)
        return self._emit(Light.AMBER, screen)

    def _start_game(self) -> Outputs:
        assert self.layout is not None
        self.game = Game(self.layout.tiles, self.rules)
        self.accepted = self.game.position.copy()
        self.phase = Phase.PLAYING
        self.verdict = None
        self.note = ""
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
        # The tiles are fixed for the whole game: a misread tile must never
        # turn into a warning, so only the structures are taken from the reading.
        after = Position(self.accepted.tiles, observation.position.structures)
        changed = _changed_lots(self.accepted, after)
        if not changed:
            self._suspect = None
            if self.phase is Phase.ILLEGAL:
                return self._clear("the board is back to the last legal position")
            return self._emit(self._outputs.light, self._outputs.screen)
        after, unsure = self._merge_looks(after, changed, observation.lot_confidence)
        if unsure:
            return self._looking(unsure)
        if not after.structures and len(self.accepted.structures) >= 2:
            return self._cleared_mid_game(observation, after)
        self._looks = 0
        inference = infer_move(self.accepted, after, self.game)
        if inference.kind == "unchanged":
            return self._emit(self._outputs.light, self._outputs.screen)
        if inference.kind == "move":
            assert inference.move is not None
            violations = self.game.violations(inference.move)
            if not violations:
                return self._accept(inference.move, after, override=False)
            return self._illegal(Verdict(after, inference.move, tuple(violations)))
        amended = self._late_cap(after)
        if amended is not None:
            return amended
        caught_up = self._catch_up(after)
        if caught_up is not None:
            return caught_up
        return self._illegal(Verdict(after, None, problems=tuple(inference.problems)))

    def _merge_looks(
        self, after: Position, changed: list[str], confidence: Mapping[str, float]
    ) -> tuple[Position, list[str]]:
        """Keep, per changed lot, the most confident reading since the board last moved."""
        doc = after.to_json()
        structures = doc["structures"]
        for lot in changed:
            score = float(confidence.get(lot, 1.0))
            best = self._best.get(lot)
            if best is None or score >= best[0]:
                self._best[lot] = (score, structures.get(lot))
            else:
                if best[1] is None:
                    structures.pop(lot, None)
                else:
                    structures[lot] = best[1]
        unsure = [lot for lot in changed if self._best[lot][0] < self.min_confidence]
        return Position.from_json(doc), unsure

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

    def _accept(self, move: Move, after: Position, *, override: bool) -> Outputs:
        assert self.game is not None
        violations = self.game.violations(move) if override else []
        self.game.push(move)
        self.accepted = self.game.position.copy()
        self.verdict = None
        self._suspect = None
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
            finished = self._finish("no-moves")
            return Outputs(finished.light, finished.screen, finished.beep, (record,) + finished.records)
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
        assert self.game is not None and self.accepted is not None
        old, new = self.accepted.structures, after.structures
        added = sorted(set(new) - set(old))
        if not 2 <= len(added) <= MAX_CATCH_UP or not set(old) <= set(new):
            return None
        if any(old[lot].with_cap(None) != new[lot].with_cap(None) for lot in old):
            return None
        capped = [lot for lot in new if new[lot].cap is not None
                  and (lot not in old or old[lot].cap is None)]
        moves = _legal_sequence(self.game.copy(), added, capped, new)
        if moves is None:
            return None
        if not self._confirmed(after):
            return self._emit(self._outputs.light, self._outputs.screen, look_again=True)
        records: list[dict[str, Any]] = []
        for move in moves:
            self.game.push(move)
            records.append({"type": "move", "ply": self.game.ply, "move": move_to_json(move),
                            "position": self.game.position.to_json(), "caught_up": True})
        self.accepted = self.game.position.copy()
        self.verdict = None
        self.phase = Phase.PLAYING
        self.board_moved()
        self.note = f"{len(moves)} moves at once: " + "; ".join(_move_words(m) for m in moves)
        if self.game.is_over():
            finished = self._finish("no-moves")
            return Outputs(finished.light, finished.screen, finished.beep,
                           tuple(records) + finished.records)
        return self._emit(Light.GREEN, self._turn_screen(), records=tuple(records))

    def _illegal(self, verdict: Verdict) -> Outputs:
        same = self.verdict is not None and self.verdict.observed == verdict.observed
        if not same and not self._confirmed(verdict.observed):
            return self._emit(self._outputs.light, self._outputs.screen, look_again=True)
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

    def _confirmed(self, observed: Position) -> bool:
        """Whether ``confirm_reads`` readings in a row have shown this same board."""
        if self.confirm_reads <= 1:
            return True
        seen = self._suspect[1] + 1 if self._suspect and self._suspect[0] == observed else 1
        self._suspect = (observed, seen)
        if seen < self.confirm_reads:
            return False
        self._suspect = None
        return True

    def _cleared_mid_game(self, observation: Observation, after: Position) -> Outputs:
        """Every piece gone: the players ended this game their own way; a new one begins."""
        if not self._confirmed(after):
            return self._emit(self._outputs.light, self._outputs.screen, look_again=True)
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
            screen = self._verdict_screen(self.verdict)
            screen = Screen(screen.kind, screen.title, screen.lines,
                            players=screen.players, turn=screen.turn, lot=screen.lot,
                            fix="this is no single move; put the board back",
                            board=screen.board)
            return self._emit(Light.RED, screen)
        return self._accept(self.verdict.move, self.verdict.observed, override=True)

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
        title = "Game over: tie" if winner == "tie" else f"Game over: {winner.capitalize()} wins"
        lines = ["A tie." if winner == "tie" else f"{winner.capitalize()} wins by {margin}"]
        if self.game.void_caps:
            lines.append("Cap on " + ", ".join(LOT_NAMES[x] for x in sorted(self.game.void_caps))
                         + " does not score (final turn)")
        players = tuple(
            PlayerLine(p, score.total(p), self.game.pieces_left(p), self.game.caps_left[p])
            for p in ("white", "black")
        )
        return Screen(ScreenKind.FINAL, title, tuple(lines), players=players, towers=tuple(rows),
                      winner=winner, board=self._sketch())

    def _emit(self, light: Light, screen: Screen, beep: Beep | None = None,
              records: tuple[dict[str, Any], ...] = (), look_again: bool = False) -> Outputs:
        self._outputs = Outputs(light, screen, beep, records, look_again)
        return self._outputs


MAX_CATCH_UP = 3  # more missed moves than this is no longer a guess worth making


def _legal_sequence(game: Game, lots: list[int], caps: list[int],
                    target: Mapping[int, Any]) -> list[Move] | None:
    """Some order of builds on ``lots`` (turn by turn, with the new caps placed by
    their owners) that is legal from ``game`` and ends exactly at ``target``."""
    if not lots:
        return [] if not caps and dict(game.position.structures) == dict(target) else None
    mover = game.turn
    for lot in lots:
        structure = target[lot]
        piece = structure.piece
        own_caps = [c for c in caps if target[c].cap == mover]
        for cap in [None, *own_caps]:
            if cap is not None and cap != lot and cap not in game.position.structures:
                continue
            move = Move(mover, lot, piece, cap)
            if game.violations(move):
                continue
            game.push(move)
            rest = _legal_sequence(game, [x for x in lots if x != lot],
                                   [c for c in caps if c != cap], target)
            game.pop()
            if rest is not None:
                return [move, *rest]
    return None


def _setup_screen(detail: str = "Clear the board and lay out all 20 tiles.") -> Screen:
    return Screen(ScreenKind.SETUP, "Setup", (detail,))


def _changed_lots(before: Position, after: Position) -> list[str]:
    lots = set(before.structures) | set(after.structures)
    return sorted((LOT_NAMES[lot] for lot in lots
                   if before.structures.get(lot) != after.structures.get(lot)),
                  key=parse_lot)


def _move_words(move: Move) -> str:
    if move.is_pass or move.piece is None or move.lot is None:
        return f"{move.player.capitalize()} passed"
    words = f"{move.player.capitalize()} built a {move.piece.words} on {LOT_NAMES[move.lot]}"
    if move.cap is not None:
        words += f", capped {LOT_NAMES[move.cap]}"
    return words
