"""``boardcam score | legal | replay | show``: the rules engines from the command line.

``--game`` picks the game (Alien City by default, Netzwerk through its own
module); ``replay`` also takes an app game log (``.jsonl``) and re-runs it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

GAMES = ("alien-city", "netzwerk")
MIN_PICTURE, MAX_PICTURE = 64, 8000


def register(subparsers: Any) -> None:
    score = subparsers.add_parser("score", help="score a position (JSON) as if the game ended now")
    _common(score, "POSITION.json")
    score.add_argument("--text", action="store_true", help="a readable table instead of JSON")
    score.set_defaults(func=lambda args: _dispatch("score", args))

    legal = subparsers.add_parser("legal", help="where a piece may be built, and why not elsewhere")
    _common(legal, "POSITION.json")
    legal.add_argument("--piece", help="COLOR-KIND, e.g. red-tower or black-dome (Alien City)")
    legal.set_defaults(func=lambda args: _dispatch("legal", args))

    replay = subparsers.add_parser("replay", help="judge every move of a game record (or an app game log)")
    _common(replay, "GAME.json|LOG.jsonl")
    replay.set_defaults(func=lambda args: _dispatch("replay", args))

    show = subparsers.add_parser("show", help="draw a position as a top-down picture (PNG)")
    _common(show, "POSITION.json")
    show.add_argument("-o", "--output", required=True, help="PNG file to write")
    show.add_argument("--size", type=int, default=640, help="picture width in pixels (default 640)")
    show.set_defaults(func=lambda args: _dispatch("show", args))

    for parser in (score, legal, replay, show):
        _netzwerk_arguments(parser, parser.prog.split()[-1])


def _common(parser: argparse.ArgumentParser, metavar: str) -> None:
    parser.add_argument("file", metavar=metavar)
    parser.add_argument("--game", choices=GAMES, default="alien-city", help="which game (default alien-city)")
    parser.add_argument("--rules", default=None,
                        help="Alien City rule set: rulebook (default) or abstract-play")


def _netzwerk_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    try:
        module = importlib.import_module("boardcam.firmware.commands.netzwerk_cli")
    except ModuleNotFoundError as error:
        if error.name != "boardcam.firmware.commands.netzwerk_cli":
            raise
        return
    module.add_arguments(parser, command)


def _dispatch(command: str, args: argparse.Namespace) -> int:
    if args.game == "netzwerk":
        module = importlib.import_module("boardcam.firmware.commands.netzwerk_cli")
        return int(module.run(command, args))
    if command == "replay" and Path(args.file).suffix == ".jsonl":
        from boardcam.firmware.gamelog import replay_log

        _print_json(replay_log(Path(args.file)))
        return 0
    return int(_ALIEN_CITY[command](args))


def _rules(args: argparse.Namespace, recorded: str | None = None) -> Any:
    """``--rules`` wins; otherwise the rule set a record names; otherwise the rulebook."""
    from boardcam.engine.aliencity import Ruleset

    if args.rules is not None:
        return Ruleset.named(args.rules)
    return Ruleset.named(recorded or "rulebook")


def _load_position(args: argparse.Namespace) -> Any:
    from boardcam.engine.aliencity import Position, layout_warnings
    from boardcam.engine.jsonio import load_json_file

    position = Position.from_json(load_json_file(args.file))
    _warn(layout_warnings(position.tiles))
    return position


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"boardcam: warning: {warning}", file=sys.stderr)


def warn_if_no_game_leaves(position: Any, rules: Any = None) -> None:
    """One warning line for each thing about ``position`` that no legal game leaves on the board."""
    from boardcam.engine.aliencity import RULEBOOK, impossibilities

    _warn([f"no legal game leaves this board: {found.reason} ({found.rule})"
           for found in impossibilities(position, rules or RULEBOOK)])


def _score(args: argparse.Namespace) -> int:
    from boardcam.engine.aliencity import score

    position, rules = _load_position(args), _rules(args)
    warn_if_no_game_leaves(position, rules)  # scored all the same: a mistake on the table, or a misreading
    result = score(position, rules)
    if args.text:
        print(result.to_text())
    else:
        _print_json(result.to_json())
    return 0


def _legal(args: argparse.Namespace) -> int:
    from boardcam.engine.aliencity import LOT_COUNT, LOT_NAMES, Analysis, Piece

    if not args.piece:
        raise InputError("--piece: required for Alien City (e.g. --piece red-tower)")
    piece = Piece.parse(args.piece)
    position = _load_position(args)
    analysis = Analysis(position, _rules(args))
    legal: list[str] = []
    illegal: dict[str, list[dict[str, Any]]] = {}
    for lot in range(LOT_COUNT):
        if lot in position.structures:
            continue
        found = analysis.violations(lot, piece)
        if found:
            illegal[LOT_NAMES[lot]] = [{"rule": v.rule, "message": v.message} for v in found]
        else:
            legal.append(LOT_NAMES[lot])
    _print_json({"piece": str(piece), "legal": legal, "illegal": illegal})
    return 0


def replay_record(record: Any, rules: Any) -> dict[str, Any]:
    """Judge every move of a game record, going on after illegal ones (the board is what it is)."""
    from boardcam.engine.aliencity import Game

    game = Game(record.tiles, rules)
    moves = []
    for ply, move in enumerate(record.moves, start=1):
        found = game.play(move)
        moves.append({
            "ply": ply,
            "player": move.player,
            "legal": not found,
            "violations": [v.to_json() for v in found],
        })
    return {"moves": moves, "over": game.is_over(), "score": game.score().to_json()}


def _replay(args: argparse.Namespace) -> int:
    from boardcam.engine.aliencity import GameRecord, layout_warnings
    from boardcam.engine.jsonio import load_json_file

    record = GameRecord.from_json(load_json_file(args.file))
    _warn(layout_warnings(record.tiles))
    _print_json(replay_record(record, _rules(args, record.rules)))
    return 0


def _show(args: argparse.Namespace) -> int:
    from boardcam.firmware.pictures.aliencity import draw_position

    if not MIN_PICTURE <= args.size <= MAX_PICTURE:
        raise InputError(f"--size: {args.size} is not between {MIN_PICTURE} and {MAX_PICTURE} pixels")
    output = Path(args.output)
    if output.suffix.lower() != ".png":
        raise InputError(f"--output: {output} must end in .png")
    position = _load_position(args)
    image = draw_position(position, width=args.size)
    from boardcam.firmware.files import atomic_save_image

    atomic_save_image(image, output)
    return 0


_ALIEN_CITY = {"score": _score, "legal": _legal, "replay": _replay, "show": _show}


def _print_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")
