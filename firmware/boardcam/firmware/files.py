"""Writing pictures so that nothing is half-written after a power cut."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from boardcam.calibration.store import atomic_write_bytes


def atomic_save_image(image: Any, path: Path, format: str = "PNG") -> None:
    """Save through the project's one atomic writer; a new picture is world-readable."""
    path = Path(path)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    atomic_write_bytes(path, buffer.getvalue())
    path.chmod(mode)
