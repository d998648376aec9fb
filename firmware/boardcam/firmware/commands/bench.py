"""``boardcam bench engine|vision|app|teach``: speed and accuracy harnesses.

The harnesses and the scene generator live in the source tree's
``benchmarks/`` folder (they are not part of the runtime package), so this
command works from a checkout (an editable install), and says so otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

# what -> (module in benchmarks/, function)
HARNESSES = {
    "engine": ("bench_engine", "bench_engine"),
    "netzwerk": ("bench_netzwerk", "bench_netzwerk"),
    "vision": ("bench_vision", "bench_vision"),
    "app": ("bench_app", "bench_app"),
    "teach": ("bench_calibration", "bench_teach"),
    "scenes": ("scenegen.bench", "bench_scenes"),
}


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", help="speed and accuracy benchmarks (from a source checkout)")
    bench.add_argument("what", choices=sorted(HARNESSES), help="which harness")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    bench.add_argument("--count", type=int, default=None, help="scenes or games to run (vision, app, teach)")
    bench.add_argument("--seed", type=int, default=None, help="first random seed")
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
    module_name, function = HARNESSES[what]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name.split(".")[0]:
            raise InputError(f"bench {what}: harness {module_name}.py is not in {folder}") from None
        raise
    return getattr(module, function)


def run(args: argparse.Namespace) -> int:
    options: dict[str, Any] = {}
    if args.count is not None:
        options["count"] = args.count
    if args.seed is not None:
        options["seed"] = args.seed
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
