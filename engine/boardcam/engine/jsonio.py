"""Reading JSON documents with one-line errors that name what is wrong.

Every game's formats go through here so that malformed files, duplicate keys
(which ``json`` silently collapses: two structures on one lot would vanish)
and wrong types all surface as :class:`FormatError` with a field path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from boardcam.engine.errors import FormatError


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise FormatError(f"duplicate key {key!r} in a JSON object")
        seen[key] = value
    return seen


def parse_json_text(text: str, source: str = "input") -> Any:
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as error:
        raise FormatError(
            f"{source}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    except FormatError as error:
        raise FormatError(f"{source}: {error}") from None
    except RecursionError:
        raise FormatError(f"{source}: JSON nested too deeply") from None


def load_json_file(path: str | Path) -> Any:
    """Read a JSON file; a missing or unreadable file is an InputError, not an OSError trace."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FormatError(f"{path}: is a directory, expected a JSON file") from None
    except UnicodeDecodeError:
        raise FormatError(f"{path}: not a UTF-8 text file") from None
    except OSError as error:
        raise FormatError(f"{path}: cannot read ({error.strerror})") from None
    return parse_json_text(text, str(path))


def expect_object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"{field}: expected a JSON object, got {_kind(value)}")
    return value


def expect_list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(f"{field}: expected a JSON array, got {_kind(value)}")
    return value


def expect_str(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"{field}: expected a string, got {_kind(value)}")
    return value


def expect_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{field}: expected an integer, got {_kind(value)}")
    return value


def reject_unknown_keys(obj: dict[str, Any], allowed: set[str], field: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        where = f"{field}." if field else ""
        raise FormatError(f"{where}{unknown[0]}: unknown field (expected one of {', '.join(sorted(allowed))})")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)
