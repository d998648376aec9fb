"""Never lose a game: an append-only JSON Lines log per game, fsynced per record.

One file per game in ``<state dir>/games/``; each line one record: ``start``
(tiles, rules), ``move`` (an accepted move and the position after it),
``verdict`` (an illegal board, or its clearing), ``override`` (a move the
players accepted as a house ruling), ``correction`` (the last ``undo`` moves
were misread: they are replaced by ``moves``), ``end`` (reason and score).  Every
record is written with a single ``os.write`` on an ``O_APPEND`` descriptor
and fsynced before the referee goes on, so a power cut loses at most the
record being written — and the reader skips a torn last line.

A full disk is survived: records wait in memory (and the display says so)
and are written, in order, as soon as a retry succeeds.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from boardcam.engine.aliencity import (
    Game,
    GameRecord,
    Position,
    Ruleset,
    move_from_json,
    move_to_json,
)
from boardcam.calibration.store import state_dir
from boardcam.engine.errors import FormatError, InputError

log = logging.getLogger(__name__)

LOG_SUFFIX = ".jsonl"
RECORD_TYPES = ("start", "move", "verdict", "override", "correction", "tiles", "end")


def games_dir(configured: str = "") -> Path:
    """``logging.game_dir`` from the config, else ``<state dir>/games``."""
    return Path(configured).expanduser() if configured else state_dir() / "games"


class GameLog:
    """Writes the referee's records; survives ENOSPC and other write errors by holding them."""

    def __init__(
        self,
        directory: Path,
        *,
        clock: Callable[[], float] = time.time,
        write: Callable[[int, bytes], int] = os.write,
        fsync: Callable[[int], None] = os.fsync,
    ) -> None:
        self.directory = Path(directory)
        self.path: Path | None = None
        self.pending: list[bytes] = []
        self.problem = ""
        self._clock = clock
        self._write = write
        self._fsync = fsync
        self._torn = False  # a failed write may have left half a line

    # ------------------------------------------------------------ writing

    def continue_game(self, path: Path) -> None:
        """Append to an existing log (after a restart)."""
        self.path = Path(path)
        self._torn = _ends_mid_line(self.path)

    def append(self, records: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> None:
        for record in records:
            if record.get("type") == "start" or self.path is None:
                self._begin()  # a new game; or records with no game file yet: never drop them
            stamped = {"time": round(self._clock(), 3), **record}
            self.pending.append((json.dumps(stamped, separators=(",", ":")) + "\n").encode())
        self.flush()

    def _begin(self) -> None:
        """A new file for a new game (named by its start time, so names sort by age)."""
        self.flush()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
        candidate = self.directory / f"game-{stamp}{LOG_SUFFIX}"
        number = 1
        while candidate.exists():
            number += 1
            candidate = self.directory / f"game-{stamp}-{number}{LOG_SUFFIX}"
        self.path = candidate
        self._torn = False

    def flush(self) -> bool:
        """Write what is pending; False (and ``problem`` set) when it has to wait."""
        if not self.pending or self.path is None:
            return not self.pending
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if created:
                _fsync_directory(self.directory)  # the new name must survive a power cut too
            try:
                if self._torn:
                    self._write_all(fd, b"\n")
                    self._torn = False
                while self.pending:
                    self._torn = True
                    self._write_all(fd, self.pending[0])
                    self._fsync(fd)
                    self._torn = False
                    self.pending.pop(0)
            finally:
                os.close(fd)
        except OSError as error:
            full = error.errno in (errno.ENOSPC, errno.EDQUOT)
            self.problem = (f"disk full: {len(self.pending)} records kept in memory" if full
                            else f"cannot write the game log: {error.strerror or error}")
            log.warning("game log %s: %s", self.path, self.problem)
            return False
        if self.problem:
            log.warning("game log %s: written again after: %s", self.path, self.problem)
        self.problem = ""
        return True

    def _write_all(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._write(fd, bytes(view))
            view = view[written:]


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot; the records themselves are synced
    finally:
        os.close(fd)


def _ends_mid_line(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:
        return False


# ------------------------------------------------------------------ reading


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of one log; a torn or garbled line (power cut) is skipped with a warning."""
    records = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"game log not found: {path}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            log.warning("%s:%d: skipping a damaged line", path, number)
            continue
        if isinstance(record, dict) and record.get("type") in RECORD_TYPES:
            records.append(record)
    return records


def game_logs(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(directory.glob(f"*{LOG_SUFFIX}"), key=lambda p: (p.stat().st_mtime, p.name))


def unfinished_game(directory: Path) -> Path | None:
    """The newest log if its game never ended (a restart should pick it up)."""
    logs = game_logs(directory)
    if not logs:
        return None
    records = read_records(logs[-1])
    if not records or records[0].get("type") != "start":
        return None
    return None if any(r["type"] == "end" for r in records) else logs[-1]


def game_from_records(records: list[dict[str, Any]], origin: str = "log") -> Game:
    """Rebuild the engine's Game from a log: the start's tiles, then every accepted move."""
    if not records or records[0].get("type") != "start":
        raise FormatError(f"{origin}: the first record is not a game start")
    start = records[0]
    try:
        game = Game(Position.from_json({"game": "alien-city", "tiles": start["tiles"]}).tiles,
                    Ruleset.named(start.get("rules", "rulebook")))
    except KeyError:
        raise FormatError(f"{origin}: start record has no tiles") from None
    for index, record in enumerate(records[1:], 2):
        if record["type"] == "tiles":  # a tile's icon settled by play: the same moves on the new layout
            game = _on_tiles(game, record.get("tiles"), f"{origin}: record {index}.tiles")
            continue
        if record["type"] == "correction":
            undo, moves = _correction(record, game.ply, f"{origin}: record {index}")
            for _ in range(undo):
                game.pop()
            for move in moves:
                game.push(move)
            continue
        if record["type"] not in ("move", "override"):
            continue
        move = move_from_json(record.get("move"), f"{origin}: record {index}.move")
        if record.get("amends"):
            game.pop()  # a late cap replaces the move it belongs to
        game.push(move)
    return game


def _on_tiles(game: Game, tiles: Any, where: str) -> Game:
    try:
        layout = Position.from_json({"game": "alien-city", "tiles": tiles}).tiles
    except (ValueError, KeyError, TypeError) as error:
        raise FormatError(f"{where}: not a tile layout ({error})") from None
    replay = Game(layout, game.rules)
    for move in game.moves:
        replay.push(move)
    return replay


def _correction(record: dict[str, Any], ply: int, where: str) -> tuple[int, list[Any]]:
    """A correction record's ``undo`` (how many accepted moves were misread) and new ``moves``."""
    undo = record.get("undo")
    if not isinstance(undo, int) or isinstance(undo, bool) or not 0 <= undo <= ply:
        raise FormatError(f"{where}.undo: expected a count of moves up to {ply}, got {undo!r}")
    moves = record.get("moves")
    if not isinstance(moves, list):
        raise FormatError(f"{where}.moves: expected a list of moves")
    return undo, [move_from_json(m, f"{where}.moves[{i}]") for i, m in enumerate(moves)]


def export_record(path: Path) -> dict[str, Any]:
    """The engine's game-record JSON for a log (``boardcam export``)."""
    records = read_records(path)
    game = game_from_records(records, str(path))
    document = GameRecord(dict(game.position.tiles), tuple(game.moves)).to_json()
    document["rules"] = game.rules.name
    return document


def replay_log(path: str | Path) -> dict[str, Any]:
    """Re-run a logged game through the engine (``boardcam replay LOG.jsonl``).

    Same shape as ``boardcam replay GAME.json`` plus what only a log knows:
    the verdicts shown at the table, the house rulings and how the game ended.
    """
    path = Path(path)
    records = read_records(path)
    game = game_from_records(records[:1], str(path))
    moves: list[dict[str, Any]] = []
    verdicts = overrides = corrections = 0
    end: dict[str, Any] | None = None
    for index, record in enumerate(records[1:], 2):
        kind = record["type"]
        if kind == "verdict" and not record.get("legal", False):
            verdicts += 1
        elif kind == "end":
            end = record
        elif kind == "tiles":
            game = _on_tiles(game, record.get("tiles"), f"{path}: record {index}.tiles")
        elif kind == "correction":
            undo, replacements = _correction(record, game.ply, f"{path}: record {index}")
            for _ in range(undo):
                game.pop()
                moves.pop()
            for move in replacements:
                violations = game.play(move)
                moves.append(_replayed(len(moves) + 1, move, violations, house_ruling=False,
                                       corrected=True))
            corrections += 1
        elif kind in ("move", "override"):
            move = move_from_json(record.get("move"), f"{path}: record {index}.move")
            if record.get("amends"):
                game.pop()
                moves.pop()
            violations = game.play(move)
            overrides += kind == "override"
            moves.append(_replayed(len(moves) + 1, move, violations, house_ruling=kind == "override"))
    return {
        "log": str(path),
        "rules": game.rules.name,
        "moves": moves,
        "illegal_verdicts": verdicts,
        "house_rulings": overrides,
        "corrections": corrections,
        "ended": None if end is None else end.get("reason"),
        "over": game.is_over(),
        "score": game.score().to_json(),
    }


def _replayed(ply: int, move: Any, violations: list[Any], *, house_ruling: bool,
              corrected: bool = False) -> dict[str, Any]:
    entry = {
        "ply": ply,
        "player": move.player,
        "move": move_to_json(move),
        "legal": not violations,
        "house_ruling": house_ruling,
        "violations": [v.to_json() for v in violations],
    }
    if corrected:
        entry["corrected"] = True  # read again from a later board (a misread at the time)
    return entry


def iter_positions(path: Path) -> Iterator[dict[str, Any]]:
    """The accepted positions in a log, in order (for tools and tests)."""
    for record in read_records(path):
        if record["type"] in ("move", "override", "correction") and "position" in record:
            yield record["position"]
