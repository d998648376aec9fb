"""Shared test settings: the `hardware` marker runs only on a real Raspberry Pi."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def _on_raspberry_pi() -> bool:
    try:
        return "raspberry pi" in Path("/proc/device-tree/model").read_text(errors="ignore").lower()
    except OSError:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _on_raspberry_pi():
        return
    skip = pytest.mark.skip(reason="needs a Raspberry Pi (run on the device: pytest -m hardware)")
    for item in items:
        if "hardware" in item.keywords:
            item.add_marker(skip)
