"""The referee app benchmark: generated games replayed at 30 fps through the whole loop.

Each game is a random legal game (the engine's ``random_game``) with one
illegal build inserted and then put right, hands over the board before every
move, a change of lamps and a small bump of the camera, rendered by the
scene generator.  The loop runs exactly as at the table (motion check,
vision read when still, referee, log); latency is measured in the frames'
time from the last frame with motion to the verdict.

``bench_app(games=3, fps=30) -> dict`` with median_ms, p95_ms, cpu_s_per_min,
moves_total, moves_right, false_warnings, missed_illegal (``boardcam bench
app --json``).  ``reader="truth"`` replaces the vision by the scenes' ground
truth, which measures the loop alone; ``reader="noisy"`` is that truth with
realistic confident misreads injected (see :func:`noisy_reader`), which
measures how well the referee recovers from them.  The players answer the
screen as players would in one case only: asked whether the board they have
cleared is clear, they press the score button (:class:`PlayersAtTheTable`).
"""

from __future__ import annotations

import copy
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

from boardcam.engine.aliencity import Game, Move, Position, positions_after_moves, random_game, score
from boardcam.engine.errors import InputError
from boardcam.firmware.config import Config
from boardcam.firmware.display import NullDisplay
from boardcam.firmware.lights import ButtonEvent, Light, NoLights
from boardcam.firmware.referee import CLEAR_ALREADY, Observation
from boardcam.firmware.runner import create_loop, vision_reader
from boardcam.firmware.screens import Screen
from boardcam.firmware.sources.replay import GeneratedGame, ReplaySource, generated_game_images, picture_images


def game_with_a_mistake(seed: int) -> tuple[Game, list[dict[str, Any]], list[dict[str, Any]]]:
    """A random legal game; its positions with one illegal build inserted; the illegal boards."""
    rng = random.Random(seed)
    game = random_game(rng)
    replay = Game(game.position.tiles, game.rules)
    positions = [replay.position.to_json()]
    illegal: list[dict[str, Any]] = []
    mistake_at = rng.randrange(3, max(4, game.ply - 3))
    for ply, move in enumerate(game.moves):
        if ply == mistake_at and move.piece is not None:
            for lot in rng.sample(range(80), 80):
                if lot in replay.position.structures:
                    continue
                wrong = Move(replay.turn, lot, move.piece)
                if any(v.rule <= 5 for v in replay.violations(wrong)):
                    replay.push(wrong)
                    illegal.append(replay.position.to_json())
                    positions.append(illegal[-1])
                    replay.pop()
                    break
        replay.push(move)
        positions.append(replay.position.to_json())
    return game, positions, illegal


def _truth_reader(current: dict[str, Any]) -> Any:
    def read(image: Any) -> Observation:
        truth = current["truth"]
        return Observation(Position.from_json(truth["position"]), {},
                           occluded=bool(truth.get("occluded")))

    return read


GLITCH_RATE = 0.03  # share of readings on which a lighting glitch starts
GLITCH_READINGS = (1, 3)  # a glitch lasts this many readings, then the lot reads right again
GLITCH_ON_NEWEST = 0.5  # share of glitches on the piece just put down (askew, hand's shadow)
COLORS = ("red", "blue", "green", "black")


def noisy_reader(current: dict[str, Any], seed: int, *, rate: float = GLITCH_RATE,
                 readings: tuple[int, int] = GLITCH_READINGS,
                 on_newest: float = GLITCH_ON_NEWEST) -> Any:
    """The ground truth with the vision's worst kind of error: a confident misread.

    On about ``rate`` of the readings a glitch starts on one built lot — the
    piece just put down with chance ``on_newest`` (it is the one most often
    askew or in the hand's shadow), else any: its colour or its kind is read
    wrong with high confidence, for a few readings in a row, then the lot
    reads right again.  Every lot gets a plausible confidence above the
    referee's ``min_confidence``, so the referee cannot tell the glitch by
    its score.  Seeded, so a run is repeatable.
    """
    rng = random.Random(seed * 7919 + 1)
    glitch: dict[str, Any] = {"lot": None, "left": 0, "swap": None}
    history: dict[str, Any] = {"last": {}, "newest": []}

    def read(image: Any) -> Observation:
        truth = current["truth"]
        if truth.get("occluded"):
            return Observation(Position.from_json(truth["position"]), {}, occluded=True)
        doc = copy.deepcopy(truth["position"])
        structures = doc["structures"]
        if set(structures) != set(history["last"]):
            history["newest"] = sorted(set(structures) - set(history["last"]))
            history["last"] = dict(structures)
        if glitch["left"] <= 0 and structures and rng.random() < rate:
            newest = history["newest"]
            lot = rng.choice(newest if newest and rng.random() < on_newest else sorted(structures))
            glitch.update(lot=lot, left=rng.randint(*readings), swap=_swapped(structures[lot], rng))
        confidence = {lot: round(rng.uniform(0.8, 1.0), 3) for lot in structures}
        if glitch["left"] > 0:
            glitch["left"] -= 1
            lot = glitch["lot"]
            if lot in structures:
                structures[lot] = dict(glitch["swap"])
                confidence[lot] = round(rng.uniform(0.85, 1.0), 3)
        return Observation(Position.from_json(doc), confidence)

    return read


def _swapped(structure: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The same piece read as another colour, or as the other kind (a capped tower read as
    a dome loses its cap: domes are never capped)."""
    if rng.random() < 0.5:
        colors = [c for c in COLORS if c != structure["color"]
                  and not (structure["kind"] == "tower" and c == "black")]  # no black towers exist
        return {**structure, "color": rng.choice(colors)}
    if structure["kind"] == "tower":
        return {"kind": "dome", "color": structure["color"]}
    if structure["color"] == "black":
        return {"kind": "tower", "color": rng.choice(("red", "blue", "green"))}
    return {"kind": "tower", "color": structure["color"]}


class PlayersAtTheTable(NullDisplay):
    """The display as the players read it: asked whether a board they have cleared is clear
    (the app reads tile print as pieces), they press the score button, and only then."""

    def __init__(self, lights: NoLights, current: dict[str, Any]) -> None:
        self.lights = lights
        self.current = current

    def show(self, screen: Screen) -> None:
        truth = self.current.get("truth")
        if CLEAR_ALREADY in screen.lines and truth is not None and not truth.get("occluded") \
                and not truth["position"]["structures"]:
            self.lights.events.put(ButtonEvent.SCORE)


def run_game(seed: int, *, fps: int = 30, reader: str = "vision",
             size: tuple[int, int] = (820, 616), glitch_rate: float = GLITCH_RATE,
             edition: str | None = None, clear_towers: bool = False, towers: str = "opaque") -> dict[str, Any]:
    game, positions, illegal = game_with_a_mistake(seed)
    pictures = 2 * len(positions)
    look: tuple[tuple[str, Any], ...] = () if edition is None else (("edition", edition),)
    if clear_towers:
        from scenegen import CLEAR_TOWERS

        look = (*look, *CLEAR_TOWERS)
    film = GeneratedGame(tuple(positions), seed=seed, size=size, hold_frames=fps // 2,
                         light_change_at=(pictures // 3,), bump_at=(2 * pictures // 3,),
                         # the table as a calibrated camera sees it: row 1 at the bottom, give or take
                         scene=(("yaw_deg", random.Random(seed).uniform(-20.0, 20.0)), *look))
    current: dict[str, Any] = {}
    source = ReplaySource(generated_game_images(film), name=f"bench:{seed}", fps=fps,
                          on_item=lambda index, scene: current.__setitem__("truth", scene.truth))
    if reader == "truth":
        read = _truth_reader(current)
    elif reader == "noisy":
        read = noisy_reader(current, seed, rate=glitch_rate)
    else:
        read = vision_reader(_told(towers))
    with tempfile.TemporaryDirectory() as logs:
        lights = NoLights()
        loop = create_loop(Config(), source=source, reader=read, lights=lights,
                           display=PlayersAtTheTable(lights, current), log_dir=Path(logs))
        stats = loop.run()
        loop.end_recording()  # as `boardcam run --source replay:…` does: the final screen for a game under way
        loop.close()
    played = loop.referee.game.moves if loop.referee.game is not None else []
    # ply by ply: a missed or invented move shifts everything after it, and counts so
    right = sum(1 for got, want in zip(played, game.moves) if got == want)
    warned = [e.outputs for e in stats.events if e.outputs.light is Light.RED and e.outputs.records]
    warned_boards = [r["position"] for o in warned for r in o.records
                     if r.get("type") == "verdict" and not r.get("legal")]
    illegal_keys = [_key(p) for p in illegal]
    corrections = [r for e in stats.events for r in e.outputs.records if r.get("type") == "correction"]
    return {
        "latencies_ms": [e.latency_ms for e in stats.events if e.latency_ms is not None],
        "busy_s": stats.busy_s,
        "play_s": stats.frames / fps,
        "moves_total": game.ply,
        "moves_right": right,
        "false_warnings": sum(1 for b in warned_boards if _key(b) not in illegal_keys),
        "missed_illegal": sum(1 for k in illegal_keys if k not in [_key(b) for b in warned_boards]),
        "corrections": len(corrections),
        "score_right": loop.referee.game is not None
        and loop.referee.game.score().to_json() == game.score().to_json(),
        "winner_right": loop.referee.game is not None and loop.referee.game.score().winner == game.score().winner,
    }


def _told(towers: str) -> Any:
    """The calibration of a table whose players told the app its towers (``boardcam calibrate towers``),
    or None (told nothing)."""
    from bench_vision import told_appearance

    from boardcam.calibration.store import Calibration

    told = told_appearance(towers)
    return None if told is None else Calibration(appearance=told.to_json())


def _key(position: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    return tuple(sorted((lot, s["kind"], s["color"]) for lot, s in position["structures"].items()))


def bench_app(games: int = 3, fps: int = 30, *, count: int | None = None, seed: int = 100,
              reader: str = "vision", size: tuple[int, int] = (820, 616),
              glitch_rate: float = GLITCH_RATE, edition: str | None = None,
              clear_towers: bool = False, towers: str = "opaque") -> dict[str, Any]:
    """Figures over ``games`` generated games (``count`` is the CLI's name for the same).

    ``reader``: "vision" (the real one), "truth" (the scenes' ground truth) or
    "noisy" (the truth with confident misreads on ``glitch_rate`` of the readings).
    ``edition``: every game's tiles printed in this edition ("R": art made up
    per game, which no fitted part of the vision has seen).  ``clear_towers``:
    every tower of clear coloured plastic, as many real pyramids are (the
    default games draw the renderer's mix of opaque and milky ones).  ``towers``: what
    the app is told the set's towers are, as ``boardcam calibrate towers`` tells it
    ("opaque": told nothing)."""
    if count is not None:
        games = count
    if reader not in ("vision", "truth", "noisy"):
        raise ValueError(f"reader: expected vision, truth or noisy, got {reader!r}")
    results = [run_game(seed + g, fps=fps, reader=reader, size=size, glitch_rate=glitch_rate, edition=edition,
                        clear_towers=clear_towers, towers=towers)
               for g in range(games)]
    latencies = sorted(x for r in results for x in r["latencies_ms"])
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))] if latencies else None
    play_s = sum(r["play_s"] for r in results)
    return {
        "games": games,
        "fps": fps,
        "reader": reader,
        **({"glitch_rate": glitch_rate} if reader == "noisy" else {}),
        **({"edition": edition} if edition is not None else {}),
        **({"towers": "clear plastic"} if clear_towers else {}),
        **({"towers_told": towers} if towers != "opaque" else {}),
        "frame_size": list(size),
        "median_ms": round(statistics.median(latencies), 1) if latencies else None,
        "p95_ms": round(p95, 1) if p95 is not None else None,
        "cpu_s_per_min": round(sum(r["busy_s"] for r in results) / (play_s / 60.0), 2) if play_s else None,
        "moves_total": sum(r["moves_total"] for r in results),
        "moves_right": sum(r["moves_right"] for r in results),
        "false_warnings": sum(r["false_warnings"] for r in results),
        "missed_illegal": sum(r["missed_illegal"] for r in results),
        "corrections": sum(r["corrections"] for r in results),
        "scores_right": sum(1 for r in results if r["score_right"]),
        "winners_right": sum(1 for r in results if r["winner_right"]),
    }


def bench_photo_game(folder: str | Path, *, hold_s: float = 0.5, fps: int = 30) -> dict[str, Any]:
    """The app on a game recorded as photos (one or more per move), each with its ``.json`` truth beside it.

    What ``boardcam run --source replay:FOLDER`` does (each photo held
    ``hold_s``), with figures that need no knowledge of how the photos were
    made.  The truth boards, in name order, are walked with the engine: a
    board one legal move on from the last accepted one is the next ply; any
    other change (``illegal_in_truth``) is a board the app should warn about.
    ``moves_right`` compares what changed at each ply of the app's log with
    the accepted truth's (a misread carried along is wrong once, at its ply;
    ``final_board_right`` says whether the game ended on the true board,
    and ``winner_right`` whether the final screen's leader is the true board's);
    ``warnings`` counts the app's warnings, with their reasons; ``wrong``
    lists each ply whose logged change differs from the truth's, to look at.
    Photos marked ``occluded`` are shown to the app but are not truth boards.
    """
    from bench_vision import photo_pairs, truth_in_reader_convention

    from boardcam.engine.aliencity.inference import infer_move

    pairs = photo_pairs(folder, "bench photo-game")
    shown = [truth_in_reader_convention(t)[1] if t.get("corners_px") is not None else t["position"]
             for _, t in pairs if not t.get("occluded")]
    if not shown:
        raise InputError(f"bench photo-game: every photo in {str(folder)!r} is marked occluded")
    boards = [b for i, b in enumerate(shown) if i == 0 or b["structures"] != shown[i - 1]["structures"]]
    accepted, illegal = [boards[0]], 0
    walk = Game(Position.from_json(boards[0]))
    for board in boards[1:]:
        inference = infer_move(walk.position, Position.from_json(board), walk)
        if inference.kind == "move" and inference.move is not None and not walk.violations(inference.move):
            walk.push(inference.move)
            accepted.append(board)
        elif inference.kind != "unchanged":
            illegal += 1
    source = ReplaySource(picture_images([path for path, _ in pairs]), name=f"photos:{folder}", fps=fps,
                          hold_frames=max(1, round(hold_s * fps)))
    with tempfile.TemporaryDirectory() as logs:
        loop = create_loop(Config(), source=source, reader=vision_reader(None), lights=NoLights(),
                           display=NullDisplay(), log_dir=Path(logs), resume=False)
        stats = loop.run()
        loop.end_recording()
        loop.close()
    game = loop.referee.game  # None: the app never left setup
    logged = [] if game is None else positions_after_moves(game.position.tiles, game.moves, game.rules)
    moves = [{"ply": ply,
              "truth": _change(accepted[ply - 1], accepted[ply]) if ply < len(accepted) else None,
              "logged": _change(logged[ply - 1], logged[ply]) if ply < len(logged) else None}
             for ply in range(1, max(len(accepted), len(logged)))]
    warnings = ["; ".join([*r["problems"], *(v["message"] for v in r["violations"])])
                for e in stats.events for r in e.outputs.records if r.get("type") == "verdict" and not r.get("legal")]
    return {
        "photos": len(pairs),
        "hold_s": hold_s,
        "tiles_right": bool(logged) and logged[0]["tiles"] == boards[0]["tiles"],
        "moves_total": len(accepted) - 1,
        "moves_right": sum(1 for move in moves if move["truth"] == move["logged"]),
        "final_board_right": bool(logged) and logged[-1]["structures"] == accepted[-1]["structures"],
        "winner_right": game is not None and game.score().winner == score(Position.from_json(accepted[-1])).winner,
        "illegal_in_truth": illegal,
        "warnings": len(warnings),
        "warning_reasons": warnings,
        "wrong": [move for move in moves if move["truth"] != move["logged"]],
    }


def _change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The lots whose structure differs between two boards, with what stands there after."""
    old, new = before["structures"], after["structures"]
    return {lot: new.get(lot) for lot in sorted(set(old) | set(new)) if old.get(lot) != new.get(lot)}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench_app(games=int(sys.argv[1]) if len(sys.argv) > 1 else 1,
                               reader=sys.argv[2] if len(sys.argv) > 2 else "vision"), indent=1))
