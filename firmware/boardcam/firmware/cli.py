"""The ``boardcam`` command: a thin argparse wrapper over the packages.

Each group of subcommands lives in ``boardcam.firmware.commands.<name>`` and
exposes ``register(subparsers)``; heavy imports (OpenCV, luma) happen inside
the command functions so ``boardcam score`` stays quick.  Logging is
configured here and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from boardcam.engine.errors import InputError

COMMAND_MODULES = (
    "engine",
    "vision",
    "calibrate",
    "app",
    "bench",
    "doctor",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boardcam",
        description="A camera referee for real board games (Alien City, Netzwerk).",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"boardcam.firmware.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"boardcam.firmware.commands.{name}":
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as error:
        print(f"boardcam: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head and closed early: not an error of ours
        sys.stderr.close()
        return 0
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(f"boardcam: error: {error.strerror or error}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
