"""The code stays mypy --strict clean (configured in pyproject.toml).

The engine is strict without exceptions; the numpy and OpenCV packages may
return what those libraries type as Any (see the overrides in pyproject.toml).
"""

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")
ROOT = Path(__file__).resolve().parents[2]


def _mypy(*folders: str) -> tuple[int, str]:
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), *(str(ROOT / f) for f in folders)])
    return status, out + err


def test_engine_is_mypy_strict_clean():
    status, report = _mypy("engine/boardcam/engine")
    assert status == 0, report


def test_vision_calibration_and_firmware_are_mypy_clean():
    status, report = _mypy("vision", "calibration", "firmware")
    assert status == 0, report
