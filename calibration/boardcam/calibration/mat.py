"""The optional printed mat: where the tiles go, with an ArUco marker at each corner.

Geometry is vision's :class:`boardcam.vision.mat.MatSpec` (the reader and
the printout must agree to the millimetre, so there is one definition); this
module only draws it.  The sheet is printed with row 10 at the top: mat
coordinates have y up, the page has y down.

Printed: the four markers, the outline of every tile place (thin, so
it guides hands without looking like a tile edge),
column letters and row numbers outside the area, a legend with the spec and
a 100 mm scale bar to check the print scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from boardcam.calibration.target import PAPER_MM, draw_print_check, mm_to_px, write_sheet
from boardcam.engine.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from boardcam.vision.mat import MatSpec

__all__ = ["MAT_PX_PER_MM", "MatLayout", "mat_layout", "render_mat", "write_mat"]

#: 10 px/mm (254 dpi): a 30 mm marker is 300 px, crisp on any printer, and an
#: A2 page stays a manageable 4200 x 5940 image.
MAT_PX_PER_MM = 10
PRINT_MARGIN_MM = 6.0  # most printers cannot print closer to the edge
LEGEND_MM = 22.0
LABEL_MM = 7.0


@dataclass(frozen=True)
class MatLayout:
    """Where the mat sits on the page: the page size and the A1 corner, in page mm (y down)."""

    paper: str
    page_mm: tuple[float, float]
    a1_mm: tuple[float, float]

    def to_page_mm(self, x: float, y: float) -> tuple[float, float]:
        """Mat mm (origin A1, y up) -> page mm (origin top-left, y down)."""
        return self.a1_mm[0] + x, self.a1_mm[1] - y


def _extent_mm(spec: MatSpec) -> tuple[float, float, float, float]:
    """min_x, min_y, max_x, max_y over everything printed, in mat mm."""
    corners = [point for quad in spec.marker_corners_mm().values() for point in quad]
    xs = [float(p[0]) for p in corners] + [0.0, spec.area_mm[0]]
    ys = [float(p[1]) for p in corners] + [0.0, spec.area_mm[1]]
    return min(xs), min(ys), max(xs), max(ys)


def mat_layout(spec: MatSpec, paper: str = "A3") -> MatLayout:
    """Centre the mat on portrait ``paper``; InputError naming the size if it does not fit."""
    key = paper.upper()
    if key not in PAPER_MM:
        raise InputError(f"--paper: unknown paper {paper!r} (choose from {', '.join(PAPER_MM)})")
    page_w, page_h = PAPER_MM[key]
    min_x, min_y, max_x, max_y = _extent_mm(spec)
    need_w = max_x - min_x + 2 * PRINT_MARGIN_MM
    need_h = max_y - min_y + 2 * PRINT_MARGIN_MM + LEGEND_MM
    if need_w > page_w or need_h > page_h:
        raise InputError(
            f"--paper: a mat for {spec.tile_mm:g} mm tiles needs {need_w:.0f} x {need_h:.0f} mm, "
            f"larger than {key} ({page_w:g} x {page_h:g} mm); choose a larger --paper"
        )
    left = (page_w - (max_x - min_x)) / 2 - min_x
    top_of_drawing = (page_h - LEGEND_MM - (max_y - min_y)) / 2
    a1_y = top_of_drawing + max_y
    return MatLayout(paper=key, page_mm=(page_w, page_h), a1_mm=(left, a1_y))


def render_mat(spec: MatSpec, *, paper: str = "A3", px_per_mm: int = MAT_PX_PER_MM) -> Image.Image:
    """The printable mat as a greyscale PIL image at ``px_per_mm``."""
    import cv2
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    from boardcam.vision.models import TILES_TALL, TILES_WIDE

    layout = mat_layout(spec, paper)
    page_w, page_h = layout.page_mm

    def px(x_mm: float, y_mm: float) -> tuple[int, int]:
        page_x, page_y = layout.to_page_mm(x_mm, y_mm)
        return mm_to_px(page_x, px_per_mm), mm_to_px(page_y, px_per_mm)

    page = np.full((mm_to_px(page_h, px_per_mm), mm_to_px(page_w, px_per_mm)), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, spec.dictionary))
    side = mm_to_px(spec.marker_mm, px_per_mm)
    for marker_id, quad in spec.marker_corners_mm().items():
        # quad[0] is the marker's top-left as printed (row 10 at the top).
        left, top = px(float(quad[0][0]), float(quad[0][1]))
        page[top : top + side, left : left + side] = cv2.aruco.generateImageMarker(
            dictionary, int(marker_id), side, borderBits=1
        )

    image = Image.fromarray(page, mode="L")
    draw = ImageDraw.Draw(image)
    # Pure black, thin: the PDF page is stored losslessly as black and white,
    # where grey would vanish; 0.25 mm lines guide hands without competing
    # with the tile edges.
    ink = 0
    line = max(1, round(0.25 * px_per_mm))
    step = spec.tile_mm + spec.gap_mm
    for column in range(TILES_WIDE):
        for row in range(TILES_TALL):
            x0 = column * step
            y0 = row * step
            a = px(x0, y0 + spec.tile_mm)
            b = px(x0 + spec.tile_mm, y0)
            draw.rectangle((a[0], a[1], b[0], b[1]), outline=ink, width=line)
    font = ImageFont.load_default(size=max(8, int(3.5 * px_per_mm)))
    small = ImageFont.load_default(size=max(8, int(3.0 * px_per_mm)))
    lot_mm = spec.tile_mm / 2
    for index, letter in enumerate("ABCDEFGH"):
        x = (index // 2) * step + (index % 2) * lot_mm + lot_mm / 2
        draw.text(px(x, -LABEL_MM / 2), letter, fill=ink, font=font, anchor="mm")
    for index in range(10):
        y = (index // 2) * step + (index % 2) * lot_mm + lot_mm / 2
        draw.text(px(-LABEL_MM / 2, y), str(index + 1), fill=ink, font=font, anchor="mm")

    _, min_y, _, _ = _extent_mm(spec)
    text_x = mm_to_px(PRINT_MARGIN_MM + 4, px_per_mm)
    text_y = px(0, min_y)[1] + mm_to_px(4, px_per_mm)
    area_w, area_h = spec.area_mm
    draw.text(
        (text_x, text_y),
        f"boardcam mat: {TILES_WIDE} x {TILES_TALL} tiles of {spec.tile_mm:g} mm, gap {spec.gap_mm:g} mm "
        f"(area {area_w:g} x {area_h:g} mm); markers {spec.dictionary} ids "
        f"{', '.join(str(i) for i in spec.marker_ids)}, {spec.marker_mm:g} mm, {spec.margin_mm:g} mm outside the corners",
        fill=0,
        font=small,
    )
    text_y += mm_to_px(5, px_per_mm)
    draw_print_check(
        draw, (text_x, text_y), "Print at 100 % (no 'fit to page'), row 10 at the top. The bar must measure 100 mm.",
        small, px_per_mm, bar_mm=1.5,
    )
    image.info["dpi"] = (px_per_mm * 25.4, px_per_mm * 25.4)
    return image


def write_mat(
    path: str | Path,
    spec: MatSpec | None = None,
    *,
    paper: str = "A3",
    px_per_mm: int = MAT_PX_PER_MM,
) -> Path:
    """Render the mat and write it to ``path`` (.pdf or .png) at its physical size."""
    from boardcam.vision.mat import MatSpec

    written: Path = write_sheet(path, lambda: render_mat(spec or MatSpec(), paper=paper, px_per_mm=px_per_mm),
                                px_per_mm)
    return written
