"""A clear top-down picture of an Alien City position (Pillow).

Used by ``boardcam show``, the colour display's mini map and the README.
Tiles are drawn in their guild colour with the icon lot marked by the
guild's symbol; towers as pyramids seen from above, caps as the small
pyramid on top, domes as discs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from PIL import Image, ImageDraw, ImageFont

from boardcam.engine.aliencity import LOT_NAMES, TILE_LOTS, Position
from boardcam.engine.aliencity.board import COLUMNS, HEIGHT, WIDTH

TILE_FILL = {"red": (226, 150, 140), "blue": (140, 170, 225), "green": (150, 205, 150), "black": (95, 95, 100)}
PIECE_FILL = {"red": (200, 30, 30), "blue": (30, 70, 200), "green": (20, 150, 50), "black": (20, 20, 20)}
CAP_FILL = {"white": (250, 250, 250), "black": (15, 15, 15)}
ICON_FILL = {"red": (170, 20, 20), "blue": (20, 50, 170), "green": (10, 110, 30), "black": (20, 20, 20)}
BACKGROUND = (245, 243, 235)
GRID = (60, 60, 60)


def draw_position(
    position: Position,
    width: int = 640,
    marked: Mapping[int, tuple[int, int, int]] | None = None,
    labels: bool = True,
) -> Image.Image:
    """Draw the board; ``marked`` rings lots (e.g. the offending lot in red)."""
    margin = max(12, width // 20) if labels else 2
    lot = (width - 2 * margin) / WIDTH
    height = int(round(lot * HEIGHT + 2 * margin))
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = _font(max(9, int(lot * 0.28)))

    def box(index: int) -> tuple[float, float, float, float]:
        col, row = index % WIDTH, index // WIDTH
        x0 = margin + col * lot
        y0 = margin + (HEIGHT - 1 - row) * lot
        return x0, y0, x0 + lot, y0 + lot

    for key, tile in position.tiles.items():
        lots = TILE_LOTS[key]
        x0, _, _, y1 = box(lots[0])
        _, y0, x1, _ = box(lots[3])
        draw.rectangle((x0, y0, x1, y1), fill=TILE_FILL[tile.color], outline=GRID, width=max(2, int(lot / 16)))
        for inner in lots:
            draw.rectangle(box(inner), outline=_mix(TILE_FILL[tile.color], GRID, 0.35), width=1)
        _draw_icon(draw, box(tile.icon), tile.color)

    for index, structure in position.structures.items():
        x0, y0, x1, y1 = box(index)
        inset = lot * 0.14
        fill = PIECE_FILL[structure.color]
        outline = (235, 235, 235) if structure.color == "black" else (25, 25, 25)
        if structure.kind == "dome":
            draw.ellipse((x0 + inset, y0 + inset, x1 - inset, y1 - inset), fill=fill, outline=outline, width=2)
            glint = lot * 0.16
            draw.ellipse((x0 + lot * 0.3, y0 + lot * 0.28, x0 + lot * 0.3 + glint, y0 + lot * 0.28 + glint),
                         fill=_mix(fill, (255, 255, 255), 0.45))
        else:
            _draw_tower(draw, (x0 + inset, y0 + inset, x1 - inset, y1 - inset), fill, outline)
            if structure.cap:
                cap_inset = lot * 0.33
                _draw_tower(draw, (x0 + cap_inset, y0 + cap_inset, x1 - cap_inset, y1 - cap_inset),
                            CAP_FILL[structure.cap], (128, 128, 128))

    for index, color in (marked or {}).items():
        x0, y0, x1, y1 = box(index)
        draw.rectangle((x0 + 1, y0 + 1, x1 - 1, y1 - 1), outline=color, width=max(3, int(lot / 10)))

    if labels:
        for col in range(WIDTH):
            x = margin + (col + 0.5) * lot
            for y in (margin / 2, height - margin / 2):
                draw.text((x, y), COLUMNS[col], fill=GRID, font=font, anchor="mm")
        for row in range(HEIGHT):
            y = margin + (HEIGHT - 1 - row + 0.5) * lot
            for x in (margin / 2, width - margin / 2):
                draw.text((x, y), str(row + 1), fill=GRID, font=font, anchor="mm")
    return image


def _draw_tower(draw: ImageDraw.ImageDraw, rect: tuple[float, float, float, float],
                fill: tuple[int, int, int], outline: tuple[int, int, int]) -> None:
    """A square pyramid from above: four triangular faces, lit from the upper left."""
    x0, y0, x1, y1 = rect
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    shades = (1.25, 1.0, 0.7, 0.9)
    for i, shade in enumerate(shades):
        face = [corners[i], corners[(i + 1) % 4], (cx, cy)]
        draw.polygon(face, fill=tuple(min(255, int(c * shade + (25 if shade > 1 else 0))) for c in fill))
    draw.polygon(corners, outline=outline)


def _draw_icon(draw: ImageDraw.ImageDraw, rect: tuple[float, float, float, float], color: str) -> None:
    x0, y0, x1, y1 = rect
    size = x1 - x0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    r = size * 0.3
    ink = ICON_FILL[color] if color != "black" else (25, 25, 25)
    if color == "red":  # lightning bolt
        pts = [(cx + 0.2 * r, cy - r), (cx - 0.45 * r, cy + 0.1 * r), (cx, cy + 0.1 * r),
               (cx - 0.2 * r, cy + r), (cx + 0.45 * r, cy - 0.1 * r), (cx, cy - 0.1 * r)]
        draw.polygon(pts, fill=ink)
    elif color == "blue":  # ring
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=ink, width=max(2, int(r / 3)))
    elif color == "green":  # star
        pts = []
        for i in range(10):
            radius = r if i % 2 == 0 else r * 0.45
            angle = -math.pi / 2 + i * math.pi / 5
            pts.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
        draw.polygon(pts, fill=ink)
    else:  # pyramid
        draw.polygon([(cx, cy - r), (cx + r, cy + 0.8 * r), (cx - r, cy + 0.8 * r)],
                     fill=(40, 40, 40), outline=(200, 200, 200))


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return (int(a[0] * (1 - t) + b[0] * t), int(a[1] * (1 - t) + b[1] * t), int(a[2] * (1 - t) + b[2] * t))


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


__all__ = ["draw_position", "LOT_NAMES"]
