"""Tests of what benchmarks/train_lot_net.py caches for the network (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import train_lot_net


def _prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, **looks: bool) -> dict[str, np.ndarray]:
    monkeypatch.setattr(train_lot_net, "CACHE", tmp_path / name)
    path = train_lot_net.prepare_one(500_003, size=(820, 616), **looks)
    with np.load(path) as cached:
        return {key: cached[key] for key in cached.files}


def test_a_relit_reference_changes_the_setup_look_and_not_the_frame(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The app keeps its setup reference when a lamp changes; the relit scenes teach that case."""
    same = _prepared(tmp_path, monkeypatch, "same")
    relit = _prepared(tmp_path, monkeypatch, "relit", relit=True)
    assert np.array_equal(same["lab_frame"], relit["lab_frame"])
    assert np.array_equal(same["expected_frame"], relit["expected_frame"])
    assert np.array_equal(same["labels"], relit["labels"])
    shift = np.abs(same["expected_ref"].astype(np.float32) - relit["expected_ref"].astype(np.float32)).mean()
    assert shift > 0.5  # Lab units; the frame's own look averages about 23
