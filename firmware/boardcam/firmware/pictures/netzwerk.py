"""A top-down picture of a Netzwerk board or position (Pillow).

Hexagons in their field colour (cities black with their value, deserts
grey and hatched), resource stones as small discs of the field's colour,
connectors as thick lines from centre to centre in the player's colour (each
player's line offset sideways so that doubled slots show both), miners as
rings in the player's colour.  Used by ``boardcam show --game netzwerk``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from PIL import Image, ImageDraw, ImageFont

from boardcam.engine.netzwerk import RESOURCE_COLORS, Layout, Position

FIELD_FILL: Mapping[str, tuple[int, int, int]] = {
    "yellow": (240, 215, 70),
    "orange": (240, 150, 50),
    "red": (210, 60, 50),
    "green": (80, 165, 80),
    "blue": (70, 120, 210),
    "city": (30, 30, 32),
    "desert": (175, 175, 170),
}
STONE_FILL: Mapping[str, tuple[int, int, int]] = {
    "yellow": (255, 240, 120),
    "orange": (255, 185, 100),
    "red": (250, 110, 100),
    "green": (140, 220, 140),
    "blue": (140, 180, 255),
}
#: Player colours by name when the name is a colour; otherwise by seat.
NAMED_PLAYER_FILL: Mapping[str, tuple[int, int, int]] = {
    "white": (250, 250, 250), "black": (10, 10, 10), "purple": (150, 60, 190), "pink": (240, 120, 190),
    "cyan": (40, 210, 220), "brown": (130, 80, 40), "grey": (120, 120, 120), "gray": (120, 120, 120),
    "magenta": (220, 40, 200),
}
SEAT_FILL: tuple[tuple[int, int, int], ...] = ((250, 250, 250), (150, 60, 190), (40, 210, 220), (130, 80, 40))
BACKGROUND = (245, 243, 235)
EDGE = (60, 60, 60)
SQRT3 = math.sqrt(3.0)


def player_fill(position: Position, player: int) -> tuple[int, int, int]:
    name = position.players[player]
    return NAMED_PLAYER_FILL.get(name, SEAT_FILL[player % len(SEAT_FILL)])


def draw_board(layout: Layout, position: Position | None = None, width: int = 640) -> Image.Image:
    """Draw ``layout`` and, when given, the state of ``position`` on it."""
    xs = [SQRT3 * (f.q + f.r / 2) for f in layout.fields]
    ys = [1.5 * f.r for f in layout.fields]
    span_x = max(xs) - min(xs) + SQRT3
    span_y = max(ys) - min(ys) + 2.0
    margin = max(16, width // 24)
    radius = (width - 2 * margin) / span_x
    height = int(round(span_y * radius + 2 * margin))
    x0 = margin + (SQRT3 / 2 - min(xs)) * radius
    y0 = margin + (1.0 - min(ys)) * radius
    centres = [(x0 + x * radius, y0 + y * radius) for x, y in zip(xs, ys)]
    image = Image.new("RGB", (width, max(height, 2 * margin + 1)), BACKGROUND)
    draw = ImageDraw.Draw(image)
    value_font = _font(max(10, int(radius * 0.45)))
    small_font = _font(max(8, int(radius * 0.22)))

    for fid, field in enumerate(layout.fields):
        cx, cy = centres[fid]
        kind = field.color if field.color is not None else field.kind
        corners = _hexagon(cx, cy, radius)
        draw.polygon(corners, fill=FIELD_FILL[kind], outline=_mix(FIELD_FILL[kind], EDGE, 0.5))
        if field.is_desert:
            for k in (-1, 0, 1):
                off = k * radius * 0.3
                draw.line((cx - radius * 0.3 + off, cy + radius * 0.3, cx + radius * 0.3 + off, cy - radius * 0.3),
                          fill=(150, 150, 145), width=max(1, int(radius / 20)))
        draw.text((cx, cy + radius * 0.62), field.key,
                  fill=(230, 230, 230) if field.is_city else (40, 40, 40), font=small_font, anchor="mm")
    for piece in layout.pieces:
        _outline_piece(draw, layout, piece, centres, radius)

    if position is None:
        _city_values(draw, layout, centres, radius, value_font)
        return image

    players = len(position.players)
    line_width = max(3, int(radius * 0.12))
    for p in range(players):
        shift = (p - (players - 1) / 2) * line_width * 1.1
        fill = player_fill(position, p)
        for e in sorted(position.connectors[p]):
            a, b = layout.edge_ends[e]
            (ax, ay), (bx, by) = centres[a], centres[b]
            length = math.hypot(bx - ax, by - ay) or 1.0
            nx, ny = -(by - ay) / length * shift, (bx - ax) / length * shift
            draw.line((ax + nx, ay + ny, bx + nx, by + ny), fill=(20, 20, 20), width=line_width + 2)
            draw.line((ax + nx, ay + ny, bx + nx, by + ny), fill=fill, width=line_width)

    _city_values(draw, layout, centres, radius, value_font)
    stone_r = radius * 0.13
    for fid, count in enumerate(position.stones):
        color = layout.fields[fid].color
        if not count or color is None:
            continue
        cx, cy = centres[fid]
        for k in range(count):
            sx = cx + (k - (count - 1) / 2) * stone_r * 2.4
            sy = cy - radius * 0.42
            draw.ellipse((sx - stone_r, sy - stone_r, sx + stone_r, sy + stone_r),
                         fill=STONE_FILL[color], outline=(20, 20, 20))

    miner_r = radius * 0.3
    for p, at in enumerate(position.miners):
        if at is None:
            continue
        cx, cy = centres[at]
        my = cy + radius * 0.08
        draw.ellipse((cx - miner_r, my - miner_r, cx + miner_r, my + miner_r),
                     fill=player_fill(position, p), outline=(20, 20, 20), width=max(2, int(radius / 15)))
        draw.text((cx, my), position.players[p][:1].upper(), fill=(20, 20, 20)
                  if sum(player_fill(position, p)) > 380 else (240, 240, 240), font=small_font, anchor="mm")

    _legend(draw, position, margin, small_font)
    return image


def _legend(draw: ImageDraw.ImageDraw, position: Position, margin: int,
            font: ImageFont.ImageFont | ImageFont.FreeTypeFont) -> None:
    """One line along the top: each player's colour, name, resources in hand, and whose turn it is."""
    x = float(margin)
    y = margin / 2
    swatch = max(6, margin // 3)
    for p, name in enumerate(position.players):
        draw.rectangle((x, y - swatch / 2, x + swatch, y + swatch / 2), fill=player_fill(position, p),
                       outline=(20, 20, 20))
        held = " ".join(f"{count}{color[0]}" for color, count in zip(RESOURCE_COLORS, position.resources[p]) if count)
        turn = "*" if p == position.turn and not position.is_over() else ""
        text = f"{turn}{name} {held}".rstrip()
        draw.text((x + swatch + 4, y), text, fill=EDGE, font=font, anchor="lm")
        x += swatch + 14 + draw.textlength(text, font=font)
    if position.is_over():
        draw.text((x, y), "game over", fill=(180, 30, 30), font=font, anchor="lm")


def _city_values(draw: ImageDraw.ImageDraw, layout: Layout, centres: list[tuple[float, float]], radius: float,
                 font: ImageFont.ImageFont | ImageFont.FreeTypeFont) -> None:
    """Each city's value on a black disc above the centre, drawn over the connectors so it stays readable."""
    for fid, field in enumerate(layout.fields):
        if not field.is_city:
            continue
        cx, cy = centres[fid]
        r = radius * 0.36
        vy = cy - radius * 0.38
        draw.ellipse((cx - r, vy - r, cx + r, vy + r), fill=FIELD_FILL["city"], outline=(200, 200, 200))
        draw.text((cx, vy), str(field.value), fill=(250, 250, 250), font=font, anchor="mm")


def draw_position(position: Position, width: int = 640) -> Image.Image:
    return draw_board(position.layout, position, width)


def _hexagon(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    """Pointy-top hexagon corners (the board module's geometry)."""
    return [(cx + r * math.cos(math.radians(60 * k - 30)), cy + r * math.sin(math.radians(60 * k - 30)))
            for k in range(6)]


def _outline_piece(draw: ImageDraw.ImageDraw, layout: Layout, piece: tuple[int, ...],
                   centres: list[tuple[float, float]], radius: float) -> None:
    """Thick lines on the hexagon sides that border another piece or nothing, so pieces stand out."""
    inside = set(piece)
    for fid in piece:
        cx, cy = centres[fid]
        corners = _hexagon(cx, cy, radius)
        for direction in range(6):
            other = layout.neighbours[fid][direction]
            if other in inside:
                continue
            # axial direction d points at angle -60°·d; that side lies between corners -d and 1 - d (mod 6)
            a = corners[(-direction) % 6]
            b = corners[(1 - direction) % 6]
            draw.line((a, b), fill=(15, 15, 15), width=max(3, int(radius / 7)))


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return (int(a[0] * (1 - t) + b[0] * t), int(a[1] * (1 - t) + b[1] * t), int(a[2] * (1 - t) + b[2] * t))


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()
