"""Narrow exceptions shared by every game engine.

The CLI turns any :class:`InputError` into a one-line message and exit
status 2, so every message must name the field or value that is wrong.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input from a user or a file: shown as one line, never a traceback."""


class FormatError(InputError):
    """A position, record or layout document that does not follow its format."""


class IllegalMoveError(ValueError):
    """A move that the rules (or the mover's supply) do not allow."""
