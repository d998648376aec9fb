"""Errors raised by the vision stages.

They derive from :class:`boardcam.engine.errors.InputError` so the CLI shows
them as one line and exits with status 2: a frame without a board is bad
input, not a crash.
"""

from __future__ import annotations

from boardcam.engine.errors import InputError


class BoardNotFoundError(InputError):
    """No 4×5 tile array (and no marker mat) could be found in the frame."""
