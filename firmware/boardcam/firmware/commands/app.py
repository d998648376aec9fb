"""``boardcam run``, ``boardcam demo`` and ``boardcam export``: the referee app's commands.

(``boardcam replay LOG.jsonl`` is dispatched by commands/engine.py to
:func:`boardcam.firmware.gamelog.replay_log`.)
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[4]
DEMO_RECORD = REPO_ROOT / "examples" / "demo-game.json"
DEMO_SEED = 2026
DEMO_ILLEGAL_AFTER_PLY = 9  # the illegal build comes as the 10th move, then is put right
DEMO_LIGHT_CHANGE_AT = 40  # rendered picture from which new lamps shine
#: seconds a replayed photo stands for: photos taken one per move show a still
#: table, and the app reads a board only after several quiet frames
PHOTO_HOLD_S = 0.5
MAX_HOLD_S = 60.0


def register(subparsers: Any) -> None:
    run = subparsers.add_parser(
        "run", help="referee a game at the table (camera, lights, display)",
        description="Watch the board, judge every move, keep the score; resumes an unfinished game.")
    run.add_argument("--source", help="picamera2 | opencv[:N] | replay:PATH (default: from the config)")
    run.add_argument("--config", metavar="FILE", help="config file (default: $BOARDCAM_CONFIG, "
                     "/etc/boardcam/config.toml for the service, else ~/.config/boardcam/config.toml)")
    run.add_argument("--display", choices=("none", "ssd1306", "st7789", "terminal"),
                     help="override display.kind")
    run.add_argument("--hold", type=float, metavar="SECONDS", default=None,
                     help=f"replays: show every picture this long (default {PHOTO_HOLD_S:g} s for a folder "
                          "of photos or one photo, one frame each for a video; 0: one frame each)")
    run.add_argument("--max-frames", type=int, default=None, help=argparse.SUPPRESS)
    run.set_defaults(func=cmd_run)

    demo = subparsers.add_parser(
        "demo", help="the whole app on a bundled generated game (no camera needed)",
        description="Replays a bundled game rendered by the scene generator — with an illegal move "
                    "that is then corrected, hands over the board and a change of light — through "
                    "the real motion check, vision and referee. Lights and screens are shown in the "
                    "terminal; display frames are written as PNGs.")
    demo.add_argument("-o", "--out", default="boardcam-demo", help="output folder (default: %(default)s)")
    demo.add_argument("--record", default=None, help="game record to play (default: the bundled one)")
    demo.add_argument("--quiet", action="store_true", help="no terminal screens, only the result")
    demo.add_argument("--truth", action="store_true",
                      help="read the boards from the scene generator's ground truth instead of the "
                           "vision (shows the app's behaviour alone)")
    demo.set_defaults(func=cmd_demo)

    export = subparsers.add_parser("export", help="write a game log as the engine's game record JSON")
    export.add_argument("log", metavar="LOG", help="a game log (.jsonl) from the state directory")
    export.add_argument("-o", "--output", metavar="GAME.json", help="output file (default: stdout)")
    export.set_defaults(func=cmd_export)


def cmd_run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..config import load_config
    from ..runner import create_loop
    from ..service import systemd_heartbeat
    from ..sources import open_source

    config = load_config(args.config)
    if args.display:
        config = replace(config, display=replace(config.display, kind=args.display))
    if not getattr(args, "verbose", 0):  # -v on the command line wins over the config
        logging.getLogger("boardcam").setLevel(config.logging.level.upper())
    spec = (args.source or config.source.spec).strip()
    replay = spec.startswith("replay:")
    options = {}
    if replay:
        options = replay_hold(spec[len("replay:"):], args.hold, config.source.fps)
    elif args.hold is not None:
        raise InputError("--hold: only a replay (--source replay:PATH) can hold its pictures")
    source = open_source(spec, width=config.source.width, height=config.source.height,
                         fps=config.source.fps, lores_width=config.source.lores_width, **options)
    # a recording is a game of its own: it neither continues an unfinished game nor is continued
    loop = create_loop(config, source=source, heartbeat=systemd_heartbeat(), resume=not replay)
    log.info("refereeing from %s; game log in %s", source.name, loop.gamelog.directory if loop.gamelog else "-")
    try:
        stats = loop.run(max_frames=args.max_frames)
    except KeyboardInterrupt:
        pass
    else:
        if replay:
            if stats.frames and not stats.reads:
                log.warning("the replay never stood still long enough to read the board (%d frames); photos "
                            "taken one per move need --hold", stats.frames)
            loop.end_recording()
    finally:
        loop.close()
    return 0


def replay_hold(path: str, hold_s: float | None, fps: float) -> dict[str, int]:
    """The ``hold_frames`` option of a replay: photos are held, a video's frames are not unless asked."""
    from ..sources.replay import IMAGE_SUFFIXES

    if hold_s is not None and not 0 <= hold_s <= MAX_HOLD_S:
        raise InputError(f"--hold: must be 0 to {MAX_HOLD_S:g} seconds, got {hold_s:g}")
    if hold_s is None:
        target = Path(path).expanduser()
        photos = target.is_dir() or target.suffix.lower() in IMAGE_SUFFIXES
        if not photos:
            return {}  # a video, a game record or game:SEED: their own pace
        hold_s = PHOTO_HOLD_S
    return {"hold_frames": max(1, round(hold_s * fps))}


def demo_script(record: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The positions the demo films: the game, with one illegal build put right at once.

    The illegal build is chosen by the engine (the first lot, in lot order,
    where the mover's next piece breaks a placement rule); the next picture
    shows the piece moved to where the record really put it.
    """
    from boardcam.engine.aliencity import LOT_NAMES, Game, GameRecord, Move

    from ..sources.replay import record_positions

    positions = record_positions(record)
    parsed = GameRecord.from_json(record)
    game = Game(parsed.tiles)
    ply = min(DEMO_ILLEGAL_AFTER_PLY, max(0, len(parsed.moves) - 1))
    for move in parsed.moves[:ply]:
        game.push(move)
    real = parsed.moves[ply]
    assert real.piece is not None
    for lot in range(80):
        if lot in game.position.structures:
            continue
        wrong = Move(game.turn, lot, real.piece)
        found = [v for v in game.violations(wrong) if v.rule <= 5]
        if found:
            game.push(wrong)
            illegal = game.position.to_json()
            words = f"{real.piece.words} on {LOT_NAMES[lot]} (rule {found[0].rule})"
            return positions[: ply + 1] + [illegal] + positions[ply + 1 :], words
    return positions, "none"


def cmd_demo(args: argparse.Namespace) -> int:
    from rich.console import Console

    from boardcam.engine.aliencity import GameRecord, Game

    from ..config import Config, MotionConfig
    from ..display import NullDisplay, PngRecorder, TerminalDisplay
    from ..lights import ConsoleLights
    from ..referee import Phase
    from ..runner import create_loop, vision_reader
    from ..sources.replay import GeneratedGame, ReplaySource, generated_game_images

    console = Console(quiet=args.quiet)
    record = _load_record(Path(args.record) if args.record else None)
    positions, illegal_words = demo_script(record)
    out = Path(args.out)
    games = out / "games"
    screens = out / "screens"
    for folder in (games, screens):  # a demo always starts a fresh game
        if folder.exists():
            shutil.rmtree(folder)
    film = GeneratedGame(tuple(positions), seed=DEMO_SEED, light_change_at=(DEMO_LIGHT_CHANGE_AT,),
                         scene=(("yaw_deg", 6.0),))
    current: dict[str, Any] = {}
    source = ReplaySource(generated_game_images(film), name="demo", fps=30,
                          on_item=lambda index, scene: current.__setitem__("truth", scene.truth))
    console.print(f"[bold]boardcam demo[/]: {len(positions) - 1} boards filmed at 30 fps, "
                  f"an illegal {illegal_words} put right, hands over the board, new lamps "
                  f"from picture {DEMO_LIGHT_CHANGE_AT}")
    display = PngRecorder(TerminalDisplay(console) if not args.quiet else NullDisplay(), screens)
    config = Config(motion=MotionConfig())
    reader = _truth_reader(current) if args.truth else vision_reader(None)
    loop = create_loop(config, source=source, reader=reader, lights=ConsoleLights(console),
                       display=display, log_dir=games)
    try:
        stats = loop.run()
    finally:
        loop.close()
    referee = loop.referee
    expected = Game.from_record(GameRecord.from_json(record)).score()
    print()
    if referee.game is None:
        print("boardcam demo: the game never started (the layout was not read)")
        return 1
    score = referee.game.score()
    print(score.to_text())
    warnings = sum(1 for e in stats.events if e.outputs.beep is not None and e.outputs.light.value == "red")
    latencies = sorted(e.latency_ms for e in stats.events if e.latency_ms is not None)
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else 0.0
    print(f"\n{stats.frames} frames, {stats.reads} board reads, {warnings} illegal-move warning(s), "
          f"p95 verdict latency {p95:.0f} ms")
    print(f"display frames: {screens}/  game log: {loop.gamelog.path if loop.gamelog else '-'}")
    same = score.to_json() == expected.to_json() and referee.phase is Phase.OVER
    print("final score matches the game record" if same else
          "final score DIFFERS from the game record (see the log)")
    return 0 if same else 1


def _truth_reader(current: dict[str, Any]) -> Any:
    from boardcam.engine.aliencity import Position

    from ..referee import Observation

    def read(image: Any) -> Observation:
        truth = current["truth"]
        return Observation(Position.from_json(truth["position"]), {},
                           occluded=bool(truth.get("occluded")))

    return read


def _load_record(path: Path | None) -> dict[str, Any]:
    from boardcam.engine.errors import InputError

    chosen = path or DEMO_RECORD
    if not chosen.is_file():
        if path is None:  # an installed wheel without examples/: make the same kind of game
            import random

            from boardcam.engine.aliencity import GameRecord, random_game

            game = random_game(random.Random(DEMO_SEED))
            return GameRecord(dict(game.position.tiles), tuple(game.moves)).to_json()
        raise InputError(f"game record not found: {chosen}")
    try:
        document = json.loads(chosen.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"{chosen}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(document, dict):
        raise InputError(f"{chosen}: a game record is a JSON object")
    return document


def cmd_export(args: argparse.Namespace) -> int:
    from ..gamelog import export_record

    document = export_record(Path(args.log))
    text = json.dumps(document, indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
