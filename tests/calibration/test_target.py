"""The printable ChArUco target: exact physical size, detectable, spec validation."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from boardcam.calibration.camera import detect_view
from boardcam.calibration.target import (
    DEFAULT_TARGET,
    TargetSpec,
    parse_squares,
    render_target,
    write_target,
)
from boardcam.engine.errors import FormatError, InputError


def test_default_spec_is_documented_and_fits_a4() -> None:
    assert DEFAULT_TARGET == TargetSpec(7, 5, 30.0, 22.0, "DICT_5X5_100")
    assert (DEFAULT_TARGET.width_mm, DEFAULT_TARGET.height_mm) == (210.0, 150.0)
    assert DEFAULT_TARGET.inner_corners == 24
    assert TargetSpec.from_json(DEFAULT_TARGET.to_json()) == DEFAULT_TARGET


def test_rendered_sheet_has_exact_square_size_and_is_detected() -> None:
    px_per_mm = 4
    sheet = np.array(render_target(DEFAULT_TARGET, px_per_mm=px_per_mm))
    assert sheet.shape == (210 * px_per_mm, 297 * px_per_mm)  # A4 landscape
    view = detect_view(sheet, DEFAULT_TARGET)
    assert view is not None and view.count == DEFAULT_TARGET.inner_corners
    corners = view.corners.reshape(-1, 2)[np.argsort(view.ids.ravel())]
    spacing = np.diff(corners[:6, 0])  # first row of inner corners, left to right
    assert np.allclose(spacing, 30.0 * px_per_mm, atol=0.5)


def test_pdf_page_is_the_physical_paper_size(tmp_path: Path) -> None:
    path = write_target(tmp_path / "target.pdf")
    text = path.read_bytes().decode("latin-1")
    match = re.search(r"/MediaBox \[ ?0 0 ([\d.]+) ([\d.]+) ?\]", text)
    assert match, "no MediaBox"
    width_mm, height_mm = (float(v) / 72 * 25.4 for v in match.groups())
    assert width_mm == pytest.approx(297.0, abs=0.2) and height_mm == pytest.approx(210.0, abs=0.2)
    assert "DCTDecode" not in text  # not JPEG-compressed: marker edges stay sharp


def test_png_carries_its_print_density(tmp_path: Path) -> None:
    path = write_target(tmp_path / "target.png", TargetSpec(5, 3, 40.0, 30.0, "DICT_4X4_50"))
    with Image.open(path) as image:
        dpi = image.info["dpi"]
        assert dpi[0] == pytest.approx(304.8, abs=0.1)
        assert image.size[0] / dpi[0] * 25.4 == pytest.approx(297.0, abs=0.2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"marker_mm": 31.0}, "marker_mm"),
        ({"squares_x": 2}, "3x3"),
        ({"dictionary": "DICT_NOPE"}, "dictionary"),
        ({"squares_x": 12, "squares_y": 11, "dictionary": "DICT_4X4_50"}, "markers"),
    ],
)
def test_bad_specs_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        TargetSpec(**kwargs)


def test_too_large_for_paper_and_bad_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not fit"):
        render_target(TargetSpec(9, 7, 40.0, 30.0))
    with pytest.raises(InputError, match=".pdf or .png"):
        write_target(tmp_path / "target.jpg")


def test_parse_squares() -> None:
    assert parse_squares("7x5") == (7, 5)
    assert parse_squares(" 9 X 6 ") == (9, 6)
    with pytest.raises(InputError, match="--squares"):
        parse_squares("seven")
