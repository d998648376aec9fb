"""Writing files so that nothing is half-written after a power cut."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Temporary file in the same folder, fsync, rename: the old file or the new, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_save_image(image: Any, path: Path, format: str = "PNG") -> None:
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    atomic_write_bytes(path, buffer.getvalue())
