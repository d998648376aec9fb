"""JSON in, JSON out: what ``boardcam score|legal|replay --game netzwerk`` call.

``options`` is a plain mapping so the CLI (and later the app) need not know
the engine's types:

- ``turn_limit`` (bool, default True): the rulebook's "1 road, extend 1 road
  or join 2 roads" per turn; False is the translator's suggestion to drop it.
- ``chain_rule`` (bool, default False): translator's note 3, one chain with
  exactly 2 ends per turn.
- ``any_layout`` (bool, default False): accept a board that is not the boxed
  game's for the number of players (home-made or test boards); otherwise such
  a board is a FormatError naming what differs.
- ``legal`` only: ``miner`` (field name, the proposed placement or move),
  ``build`` (list of ``[field, field]`` connectors), ``pay`` (``{colour: n}``).

Every function raises FormatError / InputError with a one-line message that
names the field; nothing else escapes for bad input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boardcam.engine.errors import FormatError, InputError
from boardcam.engine.jsonio import expect_object
from boardcam.engine.netzwerk.board import Layout, layout_problems
from boardcam.engine.netzwerk.game import Record, Turn, play_turn, replay
from boardcam.engine.netzwerk.moves import miner_moves, miner_violations
from boardcam.engine.netzwerk.position import Position, edges_from_json, resources_from_json
from boardcam.engine.netzwerk.roads import check_build, payment_to_json
from boardcam.engine.netzwerk.rules import Ruleset
from boardcam.engine.netzwerk.scoring import score

_OPTION_KEYS = {"turn_limit", "chain_rule", "any_layout", "miner", "build", "pay"}


def ruleset_from_options(options: Mapping[str, Any]) -> Ruleset:
    unknown = sorted(set(options) - _OPTION_KEYS)
    if unknown:
        raise InputError(f"option {unknown[0]!r} is not a Netzwerk option")
    return Ruleset(
        turn_limit=_flag(options, "turn_limit", True),
        chain_rule=_flag(options, "chain_rule", False),
    )


def _flag(options: Mapping[str, Any], name: str, default: bool) -> bool:
    value = options.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InputError(f"option {name}: expected true or false")
    return value


def check_layout(layout: Layout, players: int, options: Mapping[str, Any]) -> list[str]:
    """The ways the board differs from the boxed game's; raises unless ``any_layout`` (then they are warnings)."""
    problems = layout_problems(layout, players)
    if problems and not _flag(options, "any_layout", False):
        raise FormatError(f"{problems[0]} (use --any-layout for a home-made board)")
    return problems


def document_kind(doc: Any) -> str:
    """'record' (has moves), 'position' (has players) or 'layout' (only the board)."""
    obj = expect_object(doc, "document")
    if "moves" in obj:
        return "record"
    if "players" in obj or set(obj) - {"game", "pieces"}:
        return "position"
    return "layout"


def load_position(doc: Any, options: Mapping[str, Any]) -> tuple[Position, list[str]]:
    """A position from a position document, or the final position of a record (played through)."""
    rules = ruleset_from_options(options)
    if document_kind(doc) == "record":
        record = Record.from_json(doc)
        warnings = check_layout(record.layout, len(record.players), options)
        return replay(record, rules).final, warnings
    position = Position.from_json(doc)
    return position, check_layout(position.layout, len(position.players), options)


def score_document(doc: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """Score JSON of a position (or of a record's final position)."""
    position, _ = load_position(doc, options)
    result = score(position).to_json()
    result["over"] = position.is_over()
    return result


def legal_document(doc: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """The mover's legal miner moves; with ``miner``/``build`` the verdict on that proposed turn."""
    rules = ruleset_from_options(options)
    position, _ = load_position(doc, options)
    layout = position.layout
    p = position.turn
    moves = miner_moves(position, p)
    here = position.miners[p]
    placing = here is None
    result: dict[str, Any] = {
        "player": position.player,
        "phase": "place" if placing else "move",
        "over": position.is_over(),
        "miner": {
            "from": None if here is None else layout.key(here),
            "legal": [m.to_json(position) for m in moves],
            "blocked": not moves,
        },
        "resources": payment_to_json(position.resources[p]),
        "connectors_left": position.connectors_left(p),
    }
    mid = position
    if options.get("miner") is not None:
        target = layout.field_id(_string(options["miner"], "miner"), "--miner")
        found = miner_violations(position, p, target)
        result["proposed_miner"] = {
            "to": layout.key(target),
            "legal": not found,
            "violations": [v.to_json() for v in found],
        }
        mid, _ = play_turn(position, Turn(p, target), rules)
        mid = mid.with_changes(turn=p)
    if options.get("build") is not None:
        edges = edges_from_json(layout, options["build"], "--build")
        pay = resources_from_json(options["pay"], "--pay") if options.get("pay") is not None else None
        check = check_build(mid, p, edges, rules, pay)
        result["build"] = check.to_json(layout)
        result["build"]["resources"] = payment_to_json(mid.resources[p])
    return result


def replay_document(record: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """Judge every turn of a game record: per move the verdict, then whether the game is over and the score."""
    rules = ruleset_from_options(options)
    parsed = Record.from_json(record)
    check_layout(parsed.layout, len(parsed.players), options)
    played = replay(parsed, rules)
    moves = [report.to_json(played.positions[i]) for i, report in enumerate(played.reports)]
    final = played.final
    return {
        "moves": moves,
        "over": final.is_over(),
        "ended_by": list(final.exhausted_colors()),
        "score": score(final).to_json(),
    }


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}: expected a field name 'q,r'")
    return value
