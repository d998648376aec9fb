"""The printable marker mat agrees with vision's MatSpec to the pixel."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from boardcam.calibration.mat import mat_layout, render_mat, write_mat
from boardcam.engine.errors import InputError
from boardcam.vision.mat import MatSpec, find_mat
from boardcam.vision.models import CORNER_NAMES


def _photo_of(sheet: np.ndarray, angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Lay the printed sheet on a table, turned and seen slightly in perspective."""
    h, w = sheet.shape
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    centre = np.float32([800, 600])
    turn = np.deg2rad(angle_deg)
    rot = np.float32([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    dst = (src - [w / 2, h / 2]) @ rot.T * 0.55 + centre
    dst[2] += [25, 10]  # keystone
    dst[3] += [-20, 12]
    homography = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    photo = cv2.warpPerspective(sheet, homography, (1600, 1200), flags=cv2.INTER_AREA, borderValue=70)
    return photo, homography


@pytest.mark.parametrize("angle", [0.0, 90.0, 200.0])
def test_vision_finds_the_printed_tile_area(angle: float) -> None:
    spec = MatSpec()
    px_per_mm = 4
    sheet = np.array(render_mat(spec, paper="A3", px_per_mm=px_per_mm))
    photo, homography = _photo_of(sheet, angle)
    pose = find_mat(photo, spec)
    assert pose is not None
    layout = mat_layout(spec, "A3")
    expected_page = np.array(
        [layout.to_page_mm(x, y) for x, y in spec.tile_area_corners_mm()], np.float32
    ) * px_per_mm - 0.5  # pixel centres
    expected = cv2.perspectiveTransform(expected_page.reshape(-1, 1, 2), homography).reshape(-1, 2)
    for name, point in zip(CORNER_NAMES, expected):
        assert np.hypot(*(np.array(pose.corners_px[name]) - point)) < 2.0, name


def test_pdf_is_a3_and_lossless(tmp_path: Path) -> None:
    path = write_mat(tmp_path / "mat.pdf", MatSpec(), paper="A3", px_per_mm=4)
    text = path.read_bytes().decode("latin-1")
    match = re.search(r"/MediaBox \[ ?0 0 ([\d.]+) ([\d.]+) ?\]", text)
    assert match
    width_mm, height_mm = (float(v) / 72 * 25.4 for v in match.groups())
    assert (width_mm, height_mm) == (pytest.approx(297.0, abs=0.2), pytest.approx(420.0, abs=0.2))
    assert "DCTDecode" not in text


def test_larger_tiles_need_larger_paper(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="larger than A3"):
        mat_layout(MatSpec(tile_mm=75.0), "A3")
    layout = mat_layout(MatSpec(tile_mm=75.0), "A2")
    assert layout.page_mm == (420.0, 594.0)
    with pytest.raises(InputError, match="unknown paper"):
        mat_layout(MatSpec(), "B5")
    with pytest.raises(InputError, match=".pdf or .png"):
        write_mat(tmp_path / "mat.svg")


def test_everything_printed_stays_inside_the_printable_area() -> None:
    spec = MatSpec()
    px_per_mm = 2
    sheet = np.array(render_mat(spec, paper="A3", px_per_mm=px_per_mm))
    ink_rows, ink_cols = np.nonzero(sheet < 128)
    margin_px = 5 * px_per_mm
    assert ink_cols.min() >= margin_px and ink_cols.max() < sheet.shape[1] - margin_px
    assert ink_rows.min() >= margin_px and ink_rows.max() < sheet.shape[0] - margin_px
