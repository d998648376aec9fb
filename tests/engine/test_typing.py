"""The engine stays mypy --strict clean (configured in pyproject.toml)."""

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")
ROOT = Path(__file__).resolve().parents[2]


def test_engine_is_mypy_strict_clean():
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "engine" / "boardcam" / "engine")])
    assert status == 0, out + err
