"""Rendered screens against golden PNGs (regenerate: BOARDCAM_REGEN_SCREENS=1 pytest tests/firmware)."""

import os
from pathlib import Path

import numpy as np
import pytest
from luma.core.device import dummy
from PIL import Image

from boardcam.firmware.config import DisplayConfig
from boardcam.firmware.display import (
    LumaDisplay,
    NullDisplay,
    PngRecorder,
    TerminalDisplay,
    mono_pages,
    open_display,
    render_colour,
    wrap,
)
from boardcam.firmware.screens import Screen, sample_screens

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "screens"
REGENERATE = os.environ.get("BOARDCAM_REGEN_SCREENS") == "1"
SAMPLES = sample_screens()


def _check_golden(image: Image.Image, name: str) -> None:
    path = GOLDEN / f"{name}.png"
    if REGENERATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        image.save(path)
    expected = Image.open(path)
    assert expected.size == image.size
    difference = np.abs(np.asarray(expected.convert("RGB"), dtype=int)
                        - np.asarray(image.convert("RGB"), dtype=int))
    assert int(difference.max()) == 0, f"{name} differs from {path}; see the layout code"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_ssd1306_layout_on_the_dummy_device(name):
    device = dummy(width=128, height=64, mode="1")
    LumaDisplay(device, "mono").show(SAMPLES[name])
    assert device.image.mode == "1"
    _check_golden(device.image, f"{name}-ssd1306")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_st7789_layout_on_the_dummy_device(name):
    device = dummy(width=240, height=240, mode="RGB")
    LumaDisplay(device, "colour").show(SAMPLES[name])
    _check_golden(device.image, f"{name}-st7789")


def test_the_mini_map_marks_the_offending_lot():
    verdict = SAMPLES["verdict"]
    marked = np.asarray(render_colour(verdict))
    unmarked = np.asarray(render_colour(Screen(**{**verdict.__dict__, "lot": None})))
    rows, cols = np.nonzero(np.any(marked != unmarked, axis=2))
    # E6 is column 4, row 6 from the bottom: on the 11-pixel grid at (146, 38)
    assert 146 + 4 * 11 - 2 <= cols.min() and cols.max() <= 146 + 5 * 11 + 1
    assert 38 + 4 * 11 - 2 <= rows.min() and rows.max() <= 38 + 5 * 11 + 1


def test_the_final_breakdown_pages_on_the_small_display():
    final = SAMPLES["final"]
    assert mono_pages(final) == 3
    device = dummy(width=128, height=64, mode="1")
    display = LumaDisplay(device, "mono")
    display.show(final)
    pages = [device.image.copy()]
    for _ in range(3):
        display.next_page()
        pages.append(device.image.copy())
    assert pages[0].tobytes() != pages[1].tobytes() != pages[2].tobytes()
    assert pages[3].tobytes() == pages[0].tobytes()


def test_trouble_shows_on_every_layout():
    screen = SAMPLES["turn"].with_status(("disk full: 3 records kept in memory",))
    for layout, size in (("mono", (128, 64)), ("colour", (240, 240))):
        device = dummy(width=size[0], height=size[1], mode="1" if layout == "mono" else "RGB")
        LumaDisplay(device, layout).show(SAMPLES["turn"])
        before = device.image.copy()
        LumaDisplay(device, layout).show(screen)
        assert before.tobytes() != device.image.tobytes()


def test_wrap_never_overflows():
    from boardcam.firmware.display import _bitmap_font

    font = _bitmap_font()
    for line in wrap("Rule 4: the streets split into two networks " + "x" * 40, font, 124):
        assert font.getlength(line) <= 124


def test_terminal_view_prints_each_new_screen_once():
    from rich.console import Console

    console = Console(record=True, width=60, color_system=None)
    display = TerminalDisplay(console)
    display.show(SAMPLES["verdict"])
    display.show(SAMPLES["verdict"])
    text = console.export_text()
    assert text.count("Illegal: E6") == 1
    assert "Fix: take the red tower off E6" in text


def test_png_recorder_writes_each_distinct_screen(tmp_path):
    recorder = PngRecorder(NullDisplay(), tmp_path)
    for name in ("turn", "turn", "verdict"):
        recorder.show(SAMPLES[name])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "0001-turn-colour.png", "0001-turn-mono.png", "0002-verdict-colour.png", "0002-verdict-mono.png"]


def test_unavailable_panels_fall_back_to_no_display():
    # No I2C bus on a test machine: the app must go on without the display.
    display = open_display(DisplayConfig(kind="ssd1306", i2c_port=29))
    assert isinstance(display, NullDisplay)
    assert isinstance(open_display(DisplayConfig(kind="none")), NullDisplay)


def test_readme_pictures_are_current():
    """docs/screens/ holds the README's pictures: the same renders, scaled for reading."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "screens"
    for name, screen in SAMPLES.items():
        for layout in ("ssd1306", "st7789"):
            path = docs / f"{name}-{layout}.png"
            image = Image.open(GOLDEN / f"{name}-{layout}.png")
            if layout == "ssd1306":
                image = image.convert("L").resize((256, 128), Image.Resampling.NEAREST)
            if REGENERATE:
                docs.mkdir(parents=True, exist_ok=True)
                image.save(path)
            assert np.array_equal(np.asarray(Image.open(path)), np.asarray(image)), path
