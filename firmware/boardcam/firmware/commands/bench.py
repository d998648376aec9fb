"""``boardcam bench engine|vision|vision-game|hard-cases|photos|app|photo-game|teach|camera|drift|board|scenes``: harnesses.

The harnesses and the scene generator live in the source tree's
``benchmarks/`` folder (they are not part of the runtime package), so this
command works from a checkout (an editable install), and says so otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError
from boardcam.firmware.commands import TOWER_LOOKS


@dataclass(frozen=True)
class Harness:
    """One benchmark: ``module.function`` in benchmarks/, and what ``--count``/``--seed`` are called there.

    Harnesses name their sizes after what they count (tables, seeds, games);
    ``count``/``seed`` None means the harness takes no such option and the
    command refuses it rather than silently ignoring it.
    """

    module: str
    function: str
    count: str | None = "count"
    seed: str | None = "seed"
    counts: str = "scenes"  # what --count counts, for the help


HARNESSES = {
    "engine": Harness("bench_engine", "bench_engine", count=None, seed=None),
    "netzwerk": Harness("bench_netzwerk", "bench_netzwerk", count=None, seed=None),
    "vision": Harness("bench_vision", "bench_vision"),
    "vision-game": Harness("bench_vision", "bench_vision_in_game", count="games", counts="games"),
    "hard-cases": Harness("bench_vision", "bench_hard_cases", counts="scenes per hard case"),
    "photos": Harness("bench_vision", "bench_photos", count=None, seed=None),
    "app": Harness("bench_app", "bench_app", counts="games"),
    "photo-game": Harness("bench_app", "bench_photo_game", count=None, seed=None),
    "teach": Harness("bench_calibration", "bench_teach", count="tables", seed=None, counts="tables"),
    "camera": Harness("bench_calibration", "bench_camera", count="seeds", counts="calibrations"),
    "drift": Harness("bench_calibration", "bench_drift", count="tables", counts="tables"),
    "board": Harness("bench_find_board", "bench_find_board"),
    "scenes": Harness("scenegen.bench", "bench_scenes"),
}
#: the harnesses that read a folder of labelled photos (--dir) instead of generating scenes
FOLDER_HARNESSES = ("photos", "photo-game")


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", help="speed and accuracy benchmarks (from a source checkout)")
    bench.add_argument("what", choices=sorted(HARNESSES), help="which harness")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    counted = ", ".join(f"{name}: {h.counts}" for name, h in HARNESSES.items() if h.count)
    bench.add_argument("--count", type=int, default=None, help=f"how many to run ({counted})")
    bench.add_argument("--seed", type=int, default=None, help="first random seed")
    bench.add_argument("--reader", choices=("vision", "truth", "noisy"), default=None,
                       help="app only: the real vision (default), the scenes' truth, or the truth with misreads")
    bench.add_argument("--edition", choices=("A", "B", "C", "D", "R"), default=None,
                       help="vision, vision-game, hard-cases, app and board: every scene printed in this tile edition "
                            "(R: made-up art per scene)")
    bench.add_argument("--empty", action="store_true",
                       help="board and vision only: each scene's empty board with no hand (what the app's setup reads)")
    bench.add_argument("--clear-towers", action="store_true",
                       help="vision, vision-game and app only: every tower of clear coloured plastic (dark on a dark tile)")
    bench.add_argument("--towers", choices=TOWER_LOOKS, default=None,
                       help="vision, vision-game and app only: what the reader is told the set's towers are, "
                            "as `boardcam calibrate towers` tells it (default: not told, read as opaque)")
    bench.add_argument("--exposure", type=float, default=None, metavar="F",
                       help="vision only: every scene's camera exposes F times what its auto exposure chose "
                            "(F < 1: darker, as one metering a bright cloth around the board)")
    bench.add_argument("--dir", default=None, metavar="FOLDER",
                       help="photos and photo-game only: images with a <name>.json record beside each "
                            "(position, optional corners_px); photo-game: a game's photos in name order")
    bench.set_defaults(func=run)


def benchmarks_dir() -> Path:
    """The checkout's benchmarks/ folder, found from this package's location."""
    import boardcam.firmware

    root = Path(boardcam.firmware.__file__).resolve().parents[3]
    folder = root / "benchmarks"
    if not (folder / "bench_engine.py").is_file():
        raise InputError(
            "bench: the benchmarks/ folder is not here; run from a source checkout installed with pip install -e ."
        )
    return folder


def load_harness(what: str) -> Any:
    folder = str(benchmarks_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name, function = HARNESSES[what].module, HARNESSES[what].function
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name.split(".")[0]:
            raise InputError(f"bench {what}: harness {module_name}.py is not in {folder}") from None
        raise
    return getattr(module, function)


def harness_options(what: str, count: int | None, seed: int | None) -> dict[str, Any]:
    """The harness's keyword arguments for ``--count``/``--seed``; InputError for one it lacks."""
    harness = HARNESSES[what]
    options: dict[str, Any] = {}
    for flag, value, name in (("--count", count, harness.count), ("--seed", seed, harness.seed)):
        if value is None:
            continue
        if name is None:
            raise InputError(f"bench {what}: {flag} is not an option of this harness")
        if flag == "--count" and value < 1:
            raise InputError(f"bench {what}: --count must be at least 1, got {value}")
        options[name] = value
    return options


def run(args: argparse.Namespace) -> int:
    options = harness_options(args.what, args.count, args.seed)
    if getattr(args, "reader", None) is not None:
        if args.what != "app":
            raise InputError(f"bench {args.what}: --reader is an option of bench app only")
        options["reader"] = args.reader
    if getattr(args, "edition", None) is not None:
        if args.what not in ("vision", "vision-game", "hard-cases", "app", "board"):
            raise InputError(f"bench {args.what}: --edition is an option of bench vision, vision-game, hard-cases, "
                             "app and board only")
        options["edition"] = args.edition
    if getattr(args, "empty", False):
        if args.what not in ("board", "vision"):
            raise InputError(f"bench {args.what}: --empty is an option of bench board and vision only")
        options["empty"] = True
    if getattr(args, "clear_towers", False):
        if args.what not in ("vision", "vision-game", "app"):
            raise InputError(f"bench {args.what}: --clear-towers is an option of bench vision, vision-game and app only")
        options["clear_towers"] = True
    if getattr(args, "towers", None) is not None:
        if args.what not in ("vision", "vision-game", "app"):
            raise InputError(f"bench {args.what}: --towers is an option of bench vision, vision-game and app only")
        options["towers"] = args.towers
    if getattr(args, "exposure", None) is not None:
        if args.what != "vision":
            raise InputError(f"bench {args.what}: --exposure is an option of bench vision only")
        if not 0.0 < args.exposure <= 4.0:
            raise InputError(f"bench vision: --exposure must be above 0 and at most 4, got {args.exposure}")
        options["exposure"] = args.exposure
    takes_folder = args.what in FOLDER_HARNESSES
    if (getattr(args, "dir", None) is not None) != takes_folder:
        raise InputError(f"bench {args.what} needs --dir FOLDER" if takes_folder
                         else f"bench {args.what}: --dir is an option of bench photos and photo-game only")
    if takes_folder:
        options["folder"] = args.dir
    if args.what == "engine":
        figures: dict[str, Any] = load_harness("engine")()
        try:
            figures["netzwerk"] = load_harness("netzwerk")()
        except InputError:
            pass
    else:
        figures = load_harness(args.what)(**options)
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(figures)
    return 0


def _print_table(figures: dict[str, Any], indent: str = "") -> None:
    for key, value in figures.items():
        if isinstance(value, dict):
            print(f"{indent}{key}:")
            _print_table(value, indent + "  ")
        else:
            print(f"{indent}{key:<22} {value}")
