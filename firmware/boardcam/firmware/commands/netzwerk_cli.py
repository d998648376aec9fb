"""``boardcam score|legal|replay|show FILE --game netzwerk``: Netzwerk's options and its side of the commands.

commands/engine.py owns the subcommands (FILE, --game, --rules, --text,
-o/--output, --size); this module adds Netzwerk's own options and runs the
command through ``boardcam.engine.netzwerk.api`` so the JSON is the engine's.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

_BUILD_SPLIT = re.compile(r"[\s;]+")


def add_arguments(parser: argparse.ArgumentParser, command_name: str) -> None:
    """Netzwerk's options for one of score / legal / replay / show."""
    group = parser.add_argument_group("Netzwerk (with --game netzwerk)")
    group.add_argument("--no-turn-limit", action="store_true",
                       help="drop the '1 road, extend 1 road or join 2 roads per turn' limit "
                            "(the translator's suggestion)")
    group.add_argument("--chain-rule", action="store_true",
                       help="one chain of connectors with exactly 2 ends per turn (translator's note 3)")
    group.add_argument("--any-layout", action="store_true",
                       help="accept a board that is not the boxed game's for this number of players")
    if command_name == "legal":
        group.add_argument("--miner", metavar="FIELD",
                           help="judge this miner placement or move (field 'q,r'); the build is judged after it")
        group.add_argument("--build", metavar="A/B", action="append",
                           help="judge building these connectors, e.g. --build '0,0/1,0 1,0/1,1' (repeatable)")
        group.add_argument("--pay", metavar="COLOR=N,...",
                           help="the resources the player pays, e.g. red=1,blue=1 (default: found by the engine)")
    if command_name == "show":
        group.add_argument("--ply", type=int, default=None,
                           help="for a game record: draw the position after this many moves (default: the end)")


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    rules = getattr(args, "rules", None)
    if rules not in (None, "rulebook"):
        raise InputError(f"--rules: {rules!r} is an Alien City rule set; Netzwerk takes "
                         "--no-turn-limit and --chain-rule")
    options: dict[str, Any] = {
        "turn_limit": not getattr(args, "no_turn_limit", False),
        "chain_rule": bool(getattr(args, "chain_rule", False)),
        "any_layout": bool(getattr(args, "any_layout", False)),
    }
    if getattr(args, "miner", None) is not None:
        options["miner"] = args.miner
    if getattr(args, "build", None) is not None:
        options["build"] = parse_build(args.build)
    if getattr(args, "pay", None) is not None:
        options["pay"] = parse_pay(args.pay)
    return options


def parse_build(values: list[str]) -> list[list[str]]:
    """``["0,0/1,0 1,0/1,1", ...]`` -> ``[["0,0", "1,0"], ["1,0", "1,1"]]``."""
    connectors: list[list[str]] = []
    for value in values:
        for item in _BUILD_SPLIT.split(value.strip()):
            if not item:
                continue
            ends = item.split("/")
            if len(ends) != 2 or not all(ends):
                raise InputError(f"--build: {item!r} is not a connector 'q,r/q,r'")
            connectors.append(ends)
    return connectors


def parse_pay(value: str) -> dict[str, int]:
    """``"red=1,blue=2"`` -> ``{"red": 1, "blue": 2}`` (the engine checks the colours)."""
    pay: dict[str, int] = {}
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        color, _, count = item.partition("=")
        if not count.strip().isdigit():
            raise InputError(f"--pay: {item!r} is not COLOR=N")
        pay[color.strip().lower()] = pay.get(color.strip().lower(), 0) + int(count)
    return pay


def run(command_name: str, args: argparse.Namespace) -> int:
    """Run ``command_name`` for Netzwerk; JSON goes to stdout, layout warnings to stderr."""
    from boardcam.engine.jsonio import load_json_file
    from boardcam.engine.netzwerk import api

    if getattr(args, "piece", None):
        raise InputError("--piece: an Alien City option; for Netzwerk use --miner and --build")
    options = options_from_args(args)
    doc = load_json_file(args.file)
    if command_name == "score":
        position, warnings = api.load_position(doc, options)
        _warn(warnings)
        if getattr(args, "text", False):
            from boardcam.engine.netzwerk import score

            print(score(position).to_text())
        else:
            _print_json(api.score_document(doc, options))
        return 0
    if command_name == "legal":
        _warn(api.load_position(doc, options)[1])
        _print_json(api.legal_document(doc, options))
        return 0
    if command_name == "replay":
        if api.document_kind(doc) != "record":
            raise InputError(f"{args.file}: not a Netzwerk game record (no 'moves')")
        _print_json(api.replay_document(doc, options))
        return 0
    if command_name == "show":
        return _show(doc, args, options)
    raise InputError(f"{command_name}: not a Netzwerk command")


def _show(doc: Any, args: argparse.Namespace, options: dict[str, Any]) -> int:
    from boardcam.engine.netzwerk import Layout, Record, replay
    from boardcam.engine.netzwerk.api import check_layout, document_kind, load_position, ruleset_from_options
    from boardcam.firmware.files import atomic_save_image
    from boardcam.firmware.pictures.netzwerk import draw_board

    output = Path(args.output)
    if output.suffix.lower() != ".png":
        raise InputError(f"--output: {output} must end in .png")
    width = int(getattr(args, "size", 640) or 640)
    if width < 64:
        raise InputError(f"--size: {width} pixels is too small (at least 64)")
    kind = document_kind(doc)
    ply = getattr(args, "ply", None)
    if ply is not None and kind != "record":
        raise InputError("--ply: only for a game record")
    if kind == "layout":
        image = draw_board(Layout.from_json(doc), None, width)
    elif kind == "record" and ply is not None:
        record = Record.from_json(doc)
        _warn(check_layout(record.layout, len(record.players), options))
        positions = replay(record, ruleset_from_options(options)).positions
        if not 0 <= ply < len(positions):
            raise InputError(f"--ply: {ply} is outside 0..{len(positions) - 1}")
        image = draw_board(record.layout, positions[ply], width)
    else:
        position, warnings = load_position(doc, options)
        _warn(warnings)
        image = draw_board(position.layout, position, width)
    atomic_save_image(image, output)
    return 0


def _warn(warnings: list[str]) -> None:
    """One line for a home-made board (accepted with --any-layout): the first difference and how many more."""
    if warnings:
        more = f" (and {len(warnings) - 1} more differences)" if len(warnings) > 1 else ""
        print(f"boardcam: warning: not the boxed game's board: {warnings[0]}{more}", file=sys.stderr)


def _print_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")
