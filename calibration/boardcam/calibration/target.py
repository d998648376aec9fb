"""The printable ChArUco calibration target.

A ChArUco board is a chessboard whose white squares carry ArUco markers: the
markers say which corner is which (so a partly visible board still counts)
and the chessboard corners give sub-pixel precision.  The spec is written on
the sheet and stored with the calibration because a camera calibration is
only as right as the square size it assumed.

The default fits an A4 (or US Letter) sheet in landscape with room for the
legend: 7 x 5 squares of 30 mm (210 x 150 mm), 22 mm markers from
``DICT_5X5_100``.  An odd number of rows keeps OpenCV >= 4.6 and older
"legacy" layouts identical, so the sheet works with any OpenCV.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boardcam.engine.errors import FormatError, InputError

if TYPE_CHECKING:  # pragma: no cover
    import cv2
    import numpy as np
    from PIL import Image

__all__ = [
    "TargetSpec",
    "DEFAULT_TARGET",
    "PAPER_MM",
    "render_target",
    "write_target",
    "parse_squares",
    "mm_to_px",
    "draw_print_check",
    "write_sheet",
    "save_print_image",
]

#: Paper sizes in millimetres, portrait (width, height).
PAPER_MM: dict[str, tuple[float, float]] = {
    "A4": (210.0, 297.0),
    "A3": (297.0, 420.0),
    "A2": (420.0, 594.0),
    "LETTER": (215.9, 279.4),
}

#: Render resolution: 12 pixels per millimetre (304.8 dpi) makes every
#: millimetre a whole number of pixels, so squares are exactly their size.
PX_PER_MM = 12


def mm_to_px(mm: float, px_per_mm: float = PX_PER_MM) -> int:
    return int(round(mm * px_per_mm))


@dataclass(frozen=True)
class TargetSpec:
    """Geometry of a ChArUco board, in OpenCV's terms (lengths in mm)."""

    squares_x: int = 7
    squares_y: int = 5
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        if self.squares_x < 3 or self.squares_y < 3:
            raise FormatError(
                f"target: needs at least 3x3 squares, got {self.squares_x}x{self.squares_y}"
            )
        if not (0 < self.marker_mm < self.square_mm):
            raise FormatError(
                f"target: marker_mm ({self.marker_mm}) must be smaller than square_mm ({self.square_mm})"
            )
        if not self.dictionary.startswith("DICT_"):
            raise FormatError(f"target: unknown ArUco dictionary {self.dictionary!r}")
        import cv2  # only to validate the name; cheap once loaded

        if not hasattr(cv2.aruco, self.dictionary):
            raise FormatError(f"target: unknown ArUco dictionary {self.dictionary!r}")
        markers_needed = (self.squares_x * self.squares_y) // 2
        size = _dictionary_size(self.dictionary)
        if size is not None and markers_needed > size:
            raise FormatError(
                f"target: {self.squares_x}x{self.squares_y} squares need {markers_needed} markers, "
                f"{self.dictionary} has only {size}"
            )

    @property
    def width_mm(self) -> float:
        return self.squares_x * self.square_mm

    @property
    def height_mm(self) -> float:
        return self.squares_y * self.square_mm

    @property
    def inner_corners(self) -> int:
        """How many ChArUco (inner chessboard) corners the board has."""
        return (self.squares_x - 1) * (self.squares_y - 1)

    def board(self) -> cv2.aruco.CharucoBoard:
        """The OpenCV board object; object points are in millimetres."""
        import cv2

        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard(
            (self.squares_x, self.squares_y), self.square_mm, self.marker_mm, dictionary
        )

    def describe(self) -> str:
        return (
            f"ChArUco {self.squares_x} x {self.squares_y} squares, square {self.square_mm:g} mm, "
            f"marker {self.marker_mm:g} mm, {self.dictionary} "
            f"(board {self.width_mm:g} x {self.height_mm:g} mm)"
        )

    def opencv_call(self) -> str:
        """The exact OpenCV construction, printed on the sheet for other tools."""
        return (
            f"cv2.aruco.CharucoBoard(({self.squares_x}, {self.squares_y}), "
            f"{self.square_mm / 1000:g}, {self.marker_mm / 1000:g}, "
            f"cv2.aruco.getPredefinedDictionary(cv2.aruco.{self.dictionary}))  # metres"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "charuco",
            "squares_x": self.squares_x,
            "squares_y": self.squares_y,
            "square_mm": self.square_mm,
            "marker_mm": self.marker_mm,
            "dictionary": self.dictionary,
        }

    @classmethod
    def from_json(cls, data: Any) -> TargetSpec:
        if not isinstance(data, Mapping):
            raise FormatError(f"target must be an object, got {type(data).__name__}")
        if data.get("kind", "charuco") != "charuco":
            raise FormatError(f"target: kind must be 'charuco', got {data.get('kind')!r}")
        try:
            return cls(
                squares_x=_int_field(data, "squares_x"),
                squares_y=_int_field(data, "squares_y"),
                square_mm=_float_field(data, "square_mm"),
                marker_mm=_float_field(data, "marker_mm"),
                dictionary=str(data["dictionary"]),
            )
        except KeyError as missing:
            raise FormatError(f"target: missing field {missing.args[0]!r}") from None


def _int_field(data: Mapping[str, Any], name: str) -> int:
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"target: {name} must be an integer, got {value!r}")
    return value


def _float_field(data: Mapping[str, Any], name: str) -> float:
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FormatError(f"target: {name} must be a number, got {value!r}")
    return float(value)


def _dictionary_size(name: str) -> int | None:
    match = re.fullmatch(r"DICT_\d+X\d+_(\d+)", name)
    return int(match.group(1)) if match else None


DEFAULT_TARGET = TargetSpec()


def parse_squares(text: str) -> tuple[int, int]:
    """``"7x5"`` -> (7, 5); a clear InputError otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match:
        raise InputError(f"--squares: expected COLSxROWS like 7x5, got {text!r}")
    return int(match.group(1)), int(match.group(2))


def _fonts(px_per_mm: float) -> tuple[Any, Any]:
    from PIL import ImageFont

    big = ImageFont.load_default(size=max(10, int(4.2 * px_per_mm)))
    small = ImageFont.load_default(size=max(8, int(3.2 * px_per_mm)))
    return big, small


def render_target(
    spec: TargetSpec = DEFAULT_TARGET,
    *,
    paper: str = "A4",
    px_per_mm: int = PX_PER_MM,
) -> Image.Image:
    """The whole printable sheet as a greyscale PIL image at ``px_per_mm``.

    Landscape paper; the board is centred a little above the middle, with a
    legend (spec, OpenCV call, print instructions) and a 100 mm scale bar
    below it so the print can be checked with a ruler.
    """
    import numpy as np
    from PIL import Image, ImageDraw

    paper_key = paper.upper()
    if paper_key not in PAPER_MM:
        raise InputError(f"--paper: unknown paper {paper!r} (choose from {', '.join(PAPER_MM)})")
    short, long = PAPER_MM[paper_key]
    page_w_mm, page_h_mm = long, short  # landscape
    margin_mm = 10.0
    legend_mm = 32.0
    if (
        spec.width_mm > page_w_mm - 2 * margin_mm
        or spec.height_mm > page_h_mm - 2 * margin_mm - legend_mm
    ):
        raise InputError(
            f"target: a {spec.width_mm:g} x {spec.height_mm:g} mm board does not fit on {paper_key} "
            f"with its legend; choose smaller squares or larger paper"
        )
    page = np.full((mm_to_px(page_h_mm, px_per_mm), mm_to_px(page_w_mm, px_per_mm)), 255, np.uint8)
    board_w = spec.squares_x * mm_to_px(spec.square_mm, px_per_mm)
    board_h = spec.squares_y * mm_to_px(spec.square_mm, px_per_mm)
    board_img = spec.board().generateImage((board_w, board_h), marginSize=0, borderBits=1)
    left = (page.shape[1] - board_w) // 2
    top = max(mm_to_px(margin_mm, px_per_mm), (page.shape[0] - board_h - mm_to_px(legend_mm, px_per_mm)) // 2)
    page[top : top + board_h, left : left + board_w] = board_img

    image = Image.fromarray(page, mode="L")
    draw = ImageDraw.Draw(image)
    big, small = _fonts(px_per_mm)
    y = top + board_h + mm_to_px(4, px_per_mm)
    left = min(left, mm_to_px(15, px_per_mm))  # the legend may be wider than the board
    draw.text((left, y), f"boardcam calibration target: {spec.describe()}", fill=0, font=big)
    y += mm_to_px(7, px_per_mm)
    draw.text((left, y), f"OpenCV: {spec.opencv_call()}", fill=0, font=small)
    y += mm_to_px(5, px_per_mm)
    y = draw_print_check(
        draw, (left, y), "Print at 100 % (no 'fit to page'); glue flat on card. Check: the bar below must measure 100 mm.",
        small, px_per_mm, bar_mm=2.0,
    )
    bar_len = mm_to_px(100, px_per_mm)
    bar_h = mm_to_px(2, px_per_mm)
    for tick_mm in range(0, 101, 10):
        x = left + mm_to_px(tick_mm, px_per_mm) - (1 if tick_mm == 100 else 0)
        draw.line((x, y - mm_to_px(1.5, px_per_mm), x, y + bar_h), fill=0, width=max(1, px_per_mm // 4))
    draw.text((left + bar_len + mm_to_px(3, px_per_mm), y - mm_to_px(1, px_per_mm)), "100 mm", fill=0, font=small)
    image.info["dpi"] = (px_per_mm * 25.4, px_per_mm * 25.4)
    return image


def draw_print_check(
    draw: Any, xy: tuple[int, int], instruction: str, font: Any, px_per_mm: float, *, bar_mm: float
) -> int:
    """Every printed sheet's check: the instruction line and, 6 mm below, a 100 mm bar.

    A printer's "fit to page" silently shrinks a sheet by a few per cent, and
    a target or mat that is not to scale is worse than none; the bar lets a
    ruler catch it.  Returns the y of the bar's top edge (for tick marks).
    """
    x, y = xy
    draw.text((x, y), instruction, fill=0, font=font)
    y += mm_to_px(6, px_per_mm)
    draw.rectangle((x, y, x + mm_to_px(100, px_per_mm) - 1, y + mm_to_px(bar_mm, px_per_mm) - 1), fill=0)
    return y


def write_sheet(path: str | Path, render: Callable[[], Image.Image], px_per_mm: float) -> Path:
    """Check ``path`` is .pdf or .png, then render the sheet and write it at its physical size.

    The name is checked first so a typo costs no rendering.
    """
    path = Path(path)
    if path.suffix.lower() not in (".pdf", ".png"):
        raise InputError(f"-o: {path} must end in .pdf or .png")
    save_print_image(render(), path, px_per_mm)
    return path


def save_print_image(image: Image.Image, path: Path, px_per_mm: float) -> None:
    """Write a sheet as PDF or PNG at its exact physical size, atomically.

    Pillow's PDF writer sizes the page from ``resolution`` (dpi), so giving it
    the render density makes 1 mm on paper = 1 mm in the drawing.  PNG gets
    the same density in its pHYs chunk for printing tools that honour it.
    """
    import io

    from boardcam.calibration.store import atomic_write_bytes

    dpi = px_per_mm * 25.4
    suffix = path.suffix.lower()
    buffer = io.BytesIO()
    if suffix == ".pdf":
        # Pillow would embed a greyscale page as JPEG, softening the marker
        # edges; a black-and-white page goes in losslessly (CCITT G4).
        if image.mode == "L":
            image = image.point(lambda value: 255 if value >= 128 else 0).convert("1")
        image.save(buffer, format="PDF", resolution=dpi)
    elif suffix == ".png":
        image.save(buffer, format="PNG", dpi=(dpi, dpi), optimize=True)
    else:
        raise InputError(f"-o: {path} must end in .pdf or .png")
    atomic_write_bytes(path, buffer.getvalue())


def write_target(
    path: str | Path,
    spec: TargetSpec = DEFAULT_TARGET,
    *,
    paper: str = "A4",
    px_per_mm: int = PX_PER_MM,
) -> Path:
    """Render the target and write it to ``path`` (.pdf or .png)."""
    return write_sheet(path, lambda: render_target(spec, paper=paper, px_per_mm=px_per_mm), px_per_mm)
