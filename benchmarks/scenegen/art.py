"""Printed tile faces of several editions, and table tops, as top-down textures.

Why several editions: the vision code must find colour and icon lot from what
every Alien City set shares (a guild colour, four lots, one icon lot), not from
one particular drawing.  Textures are drawn in sRGB (like print) and turned into
linear light for the renderer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .geometry import parse_lot

# sRGB BGR colours of the printed guilds (per edition they are jittered a little)
GUILD_BGR = {
    "red": (45, 45, 195),
    "blue": (175, 95, 35),
    "green": (70, 150, 55),
    "black": (42, 40, 40),
}

_LINEAR_LUT = (np.where(np.arange(256) / 255.0 <= 0.04045, np.arange(256) / 255.0 / 12.92,
                        ((np.arange(256) / 255.0 + 0.055) / 1.055) ** 2.4)).astype(np.float32)


def to_linear(image_u8: np.ndarray) -> np.ndarray:
    """sRGB uint8 image -> linear float32 (a table look-up, so cheap)."""
    return np.asarray(_LINEAR_LUT[image_u8])


def guild_palette(rng: np.random.Generator, jitter: float) -> dict[str, np.ndarray]:
    """Per-scene printed colours: the same guild hue, a slightly different ink."""
    palette: dict[str, np.ndarray] = {}
    for name, bgr in GUILD_BGR.items():
        base = np.asarray(bgr, dtype=np.float64)
        scale = 1.0 + jitter * rng.uniform(-0.25, 0.25)
        shift = jitter * rng.uniform(-18, 18, 3)
        palette[name] = np.clip(base * scale + shift, 10, 245)
    return palette


def _mix(a: np.ndarray, b: tuple[float, float, float] | np.ndarray, t: float) -> tuple[float, float, float]:
    out = (1 - t) * np.asarray(a, dtype=np.float64) + t * np.asarray(b, dtype=np.float64)
    return (float(out[0]), float(out[1]), float(out[2]))


_WHITE = (238.0, 240.0, 242.0)
_SHIFT = 4
_ONE = 1 << _SHIFT


def _icon_polygons(kind: str, centre: tuple[float, float], radius: float, angle: float) -> list[np.ndarray]:
    """Icon outline(s) in texture pixels (x right, y down), rotated by angle."""
    if kind == "bolt":
        pts = [(-0.15, -1.0), (0.55, -1.0), (0.12, -0.2), (0.6, -0.2), (-0.35, 1.0), (-0.08, 0.12), (-0.55, 0.12)]
    elif kind == "star":
        pts = []
        for k in range(10):
            r = 1.0 if k % 2 == 0 else 0.42
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((r * math.cos(a), r * math.sin(a)))
    elif kind == "pyramid":
        pts = [(-0.95, 0.75), (0.95, 0.75), (0.0, -0.95)]
    elif kind == "square":
        pts = [(-0.75, -0.75), (0.75, -0.75), (0.75, 0.75), (-0.75, 0.75)]
    elif kind == "cross":
        a, b = 0.3, 0.95
        pts = [(-a, -b), (a, -b), (a, -a), (b, -a), (b, a), (a, a), (a, b), (-a, b), (-a, a), (-b, a), (-b, -a), (-a, -a)]
    elif kind == "hexagon":
        pts = [(math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)) for k in range(6)]
    elif kind == "moon":
        outer = [(math.cos(t), math.sin(t)) for t in np.linspace(0.5, 2 * math.pi - 0.5, 14)]
        inner = [(0.45 + 0.7 * math.cos(t), 0.7 * math.sin(t)) for t in np.linspace(2 * math.pi - 0.9, 0.9, 10)]
        pts = outer + inner
    else:  # ring is drawn as a circle, handled by caller
        pts = []
    c, s = math.cos(angle), math.sin(angle)
    poly = np.array([(centre[0] + radius * (x * c - y * s), centre[1] + radius * (x * s + y * c)) for x, y in pts])
    return [np.round(poly * _ONE).astype(np.int32)] if len(pts) else []


ICON_OF = {"red": "bolt", "blue": "ring", "green": "star", "black": "pyramid"}


def _draw_icon(img: np.ndarray, kind: str, centre: tuple[float, float], radius: float, angle: float,
               fill: tuple[float, float, float], outline: tuple[float, float, float] | None) -> None:
    width = max(1, int(round(radius * 0.12)))
    if kind == "disc":
        c = (int(round(centre[0] * _ONE)), int(round(centre[1] * _ONE)))
        cv2.circle(img, c, int(round(radius * 0.8 * _ONE)), fill, -1, cv2.LINE_AA, _SHIFT)
        if outline is not None:
            cv2.circle(img, c, int(round(radius * 0.8 * _ONE)), outline, width, cv2.LINE_AA, _SHIFT)
        return
    if kind == "ring":
        c = (int(round(centre[0] * _ONE)), int(round(centre[1] * _ONE)))
        ring_width = max(2, int(round(radius * 0.32)))
        if outline is not None:
            cv2.circle(img, c, int(round(radius * 0.8 * _ONE)), outline, ring_width + 2 * width, cv2.LINE_AA, _SHIFT)
        cv2.circle(img, c, int(round(radius * 0.8 * _ONE)), fill, ring_width, cv2.LINE_AA, _SHIFT)
        return
    polys = _icon_polygons(kind, centre, radius, angle)
    cv2.fillPoly(img, polys, fill, cv2.LINE_AA, _SHIFT)
    if outline is not None:
        cv2.polylines(img, polys, True, outline, width, cv2.LINE_AA, _SHIFT)
    if kind == "pyramid":  # a pyramid's front edge, as printed
        apex = polys[0][2]
        foot = ((polys[0][0] + polys[0][1]) // 2 + (polys[0][1] - polys[0][0]) // 6)
        line = outline if outline is not None else _mix(np.asarray(fill), (0, 0, 0), 0.5)
        cv2.line(img, tuple(int(v) for v in apex), tuple(int(v) for v in foot), line, width, cv2.LINE_AA, _SHIFT)


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Low-frequency noise in [-1, 1]: random cells, bicubic upsampling."""
    small = rng.uniform(-1, 1, (max(2, cells), max(2, cells))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


@dataclass(frozen=True)
class RandomStyle:
    """One made-up edition: how every tile of a scene is printed (drawn once per scene).

    Why: the network and the tile reader must learn what all editions share
    (a guild colour that dominates the face or the icon, four lots, one icon
    lot, dark black tiles), not the four drawings above; a fresh drawing per
    scene keeps them from memorising any.
    """

    face: str  # "ink" (guild colour), "neutral" (light card, guild in border and icon), "dark" (dark card)
    face_tint: float  # how far an "ink" face is lightened
    neutral_bgr: tuple[float, float, float]
    streets: str  # "none", "dark", "light"
    street_width: float  # share of the tile
    border: str  # "none", "ink", "dark", "light"
    border_width: float
    blocks: int  # printed city blocks per lot (decoration on every lot, not only the icon lot)
    block_contrast: float
    icon_shapes: tuple[str, str, str, str]  # red, blue, green, black
    icon_fill: str  # "ink", "light", "dark"
    icon_outline: bool
    badge: bool
    icon_scale: float
    icon_offset: float  # share of the lot the icon sits away from the lot centre
    mottle: float


ICON_SHAPES = ("bolt", "star", "pyramid", "ring", "disc", "square", "cross", "hexagon", "moon")


def style_of(seed: int) -> RandomStyle:
    rng = np.random.default_rng([seed, 404])
    shapes = list(ICON_SHAPES)
    rng.shuffle(shapes)
    grey = float(rng.uniform(170, 235))
    return RandomStyle(
        face=("ink", "neutral", "dark")[int(rng.choice(3, p=[0.5, 0.35, 0.15]))],
        face_tint=float(rng.uniform(0.0, 0.45)),
        neutral_bgr=(grey + float(rng.uniform(-15, 5)), grey + float(rng.uniform(-8, 8)), grey + float(rng.uniform(-5, 15))),
        streets=("none", "dark", "light")[int(rng.integers(3))],
        street_width=float(rng.uniform(0.01, 0.06)),
        border=("none", "ink", "dark", "light")[int(rng.integers(4))],
        border_width=float(rng.uniform(0.02, 0.09)),
        blocks=int(rng.integers(0, 5)),
        block_contrast=float(rng.uniform(0.05, 0.3)),
        icon_shapes=(shapes[0], shapes[1], shapes[2], shapes[3]),
        icon_fill=("ink", "light", "dark")[int(rng.integers(3))],
        icon_outline=bool(rng.random() < 0.5),
        badge=bool(rng.random() < 0.3),
        icon_scale=float(rng.uniform(0.6, 1.25)),
        icon_offset=float(rng.uniform(0.0, 0.18)),
        mottle=float(rng.uniform(0.0, 0.12)),
    )


def tile_texture(edition: str, color: str, icon_lot: str, tile_key: str, n: int, palette: dict[str, np.ndarray],
                 rng: np.random.Generator, style: RandomStyle | None = None) -> np.ndarray:
    """Top-down sRGB uint8 texture (n x n, row 0 = the tile's far edge, i.e. larger y).

    The icon sits in the quadrant of icon_lot; the drawing is turned by a random
    quarter turn (tiles are laid in any orientation).  Edition "R" prints in
    ``style`` (one per scene: :func:`style_of`).
    """
    ink = palette[color]
    dark = color == "black"
    icol, irow = parse_lot(icon_lot)
    kcol, krow = parse_lot(tile_key)
    qx, qy = icol - kcol, irow - krow  # 0/1 each; qy=1 is the upper (far) half
    half = n / 2
    icon_centre = ((qx + 0.5) * half - 0.5, (1 - qy + 0.5) * half - 0.5)
    angle = rng.integers(4) * math.pi / 2 + rng.normal(0, 0.03)
    radius = half * rng.uniform(0.30, 0.36)
    kind = ICON_OF[color] if edition != "R" else color
    img = np.empty((n, n, 3), np.uint8)
    line_w = max(1, int(round(n * 0.022)))
    mid = int(round(half * _ONE - 0.5 * _ONE))

    if edition == "A":  # guild-coloured face, darker streets, light icon
        face = _mix(ink, (255, 255, 255), 0.15) if not dark else (48, 46, 46)
        img[:] = np.asarray(face, dtype=np.uint8)
        grid = _mix(np.asarray(face), (0, 0, 0), 0.45) if not dark else (22, 22, 22)
        cv2.line(img, (mid, 0), (mid, n * _ONE), grid, line_w, cv2.LINE_AA, _SHIFT)
        cv2.line(img, (0, mid), (n * _ONE, mid), grid, line_w, cv2.LINE_AA, _SHIFT)
        cv2.rectangle(img, (0, 0), (n - 1, n - 1), grid, max(1, line_w // 2))
        fill = _mix(ink, _WHITE, 0.6) if not dark else (150, 150, 150)
        _draw_icon(img, kind, icon_centre, radius, angle, fill, _mix(np.asarray(face), (0, 0, 0), 0.6))
    elif edition == "B":  # neutral face, guild-coloured border, guild-coloured icon
        face = (60.0, 58.0, 58.0) if dark else (205.0 + rng.uniform(-12, 12), 215.0 + rng.uniform(-12, 12),
                                                222.0 + rng.uniform(-12, 12))
        img[:] = np.asarray(face, dtype=np.uint8)
        grid = (150, 150, 150) if not dark else (95, 95, 95)
        cv2.line(img, (mid, 0), (mid, n * _ONE), grid, max(1, line_w // 2), cv2.LINE_AA, _SHIFT)
        cv2.line(img, (0, mid), (n * _ONE, mid), grid, max(1, line_w // 2), cv2.LINE_AA, _SHIFT)
        band = max(2, int(round(n * 0.06)))
        border = tuple(float(v) for v in ink) if not dark else (22, 22, 22)
        cv2.rectangle(img, (band // 2, band // 2), (n - 1 - band // 2, n - 1 - band // 2), border, band)
        fill = _mix(ink, ink, 0.0) if not dark else (170.0, 170.0, 170.0)
        _draw_icon(img, kind, icon_centre, radius, angle, fill, None)
    elif edition == "C":  # printed look: gradient, mottling, badge behind the icon
        base = np.asarray(ink if not dark else (46, 44, 44), dtype=np.float32)
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n
        g_angle = rng.uniform(0, 2 * math.pi)
        grad = (xx - 0.5) * math.cos(g_angle) + (yy - 0.5) * math.sin(g_angle)
        mottle = _smooth_noise(rng, (n, n), 6) * 0.10 + _smooth_noise(rng, (n, n), 24) * 0.05
        shade = 1.0 + 0.25 * grad + mottle
        face_f = base[None, None, :] * shade[..., None] + rng.normal(0, 4.0, (n, n, 1)).astype(np.float32)
        img[:] = np.clip(face_f, 0, 255).astype(np.uint8)
        street = _mix(base, _WHITE, 0.35) if not dark else (85, 85, 85)
        cv2.line(img, (mid, 0), (mid, n * _ONE), street, max(1, line_w // 2), cv2.LINE_AA, _SHIFT)
        cv2.line(img, (0, mid), (n * _ONE, mid), street, max(1, line_w // 2), cv2.LINE_AA, _SHIFT)
        badge = _mix(base, _WHITE, 0.72) if not dark else (120, 118, 118)
        c = (int(round(icon_centre[0] * _ONE)), int(round(icon_centre[1] * _ONE)))
        cv2.circle(img, c, int(round(radius * 1.25 * _ONE)), badge, -1, cv2.LINE_AA, _SHIFT)
        fill = _mix(base, base, 0.0) if not dark else (25.0, 25.0, 25.0)
        _draw_icon(img, kind, icon_centre, radius * 0.95, angle, fill, None)
    elif edition == "R":
        _random_edition_texture(img, style or style_of(0), ink, dark, kind, icon_centre, radius, angle,
                                line_w, mid, n, rng)
    else:  # "D": pastel face, no streets printed, big outlined icon
        face = _mix(ink, _WHITE, 0.4) if not dark else (58, 56, 56)
        img[:] = np.asarray(face, dtype=np.uint8)
        cv2.rectangle(img, (0, 0), (n - 1, n - 1), _mix(np.asarray(face), (0, 0, 0), 0.5), max(1, line_w // 2))
        fill = _mix(ink, ink, 0.0) if not dark else (175.0, 175.0, 175.0)
        outline = _mix(ink, (0, 0, 0), 0.55) if not dark else (15, 15, 15)
        _draw_icon(img, kind, icon_centre, radius * 1.15, angle, fill, outline)
    return img


def _random_edition_texture(img: np.ndarray, style: RandomStyle, ink: np.ndarray, dark: bool, colour_kind: str,
                            icon_centre: tuple[float, float], radius: float, angle: float, line_w: int, mid: int,
                            n: int, rng: np.random.Generator) -> None:
    """Print one tile of a made-up edition into img (in place)."""
    dark_card = (float(rng.uniform(35, 55)),) * 3
    if dark:  # black tiles are dark in every edition
        face = dark_card if style.face != "neutral" else _mix(np.asarray(style.neutral_bgr), (0, 0, 0), 0.75)
    elif style.face == "ink":
        face = _mix(ink, _WHITE, style.face_tint)
    elif style.face == "neutral":
        face = style.neutral_bgr
    else:
        face = _mix(ink, (0, 0, 0), 0.55)
    base = np.asarray(face, dtype=np.float32)
    if style.mottle > 0:
        shade = 1.0 + style.mottle * _smooth_noise(rng, (n, n), 8)
        img[:] = np.clip(base[None, None, :] * shade[..., None], 0, 255).astype(np.uint8)
    else:
        img[:] = base.astype(np.uint8)
    lot = n / 2
    for qx in range(2):  # city blocks: the same kind of print on every lot
        for qy in range(2):
            for _ in range(style.blocks):
                w, h = rng.uniform(0.12, 0.3, 2) * lot
                x, y = qx * lot + rng.uniform(0.1 * lot, 0.9 * lot - w), qy * lot + rng.uniform(0.1 * lot, 0.9 * lot - h)
                tone = _mix(base, (0, 0, 0) if rng.random() < 0.5 else _WHITE, style.block_contrast)
                cv2.rectangle(img, (int(x), int(y)), (int(x + w), int(y + h)), tone, -1)
    width = max(1, int(round(n * style.street_width)))
    if style.streets != "none":
        street = _mix(base, (0, 0, 0) if style.streets == "dark" else _WHITE, 0.45)
        cv2.line(img, (mid, 0), (mid, n * _ONE), street, width, cv2.LINE_AA, _SHIFT)
        cv2.line(img, (0, mid), (n * _ONE, mid), street, width, cv2.LINE_AA, _SHIFT)
    if style.border != "none":
        band = max(1, int(round(n * style.border_width)))
        colour = {"ink": tuple(float(v) for v in ink) if not dark else (20.0, 20.0, 20.0),
                  "dark": _mix(base, (0, 0, 0), 0.6), "light": _mix(base, _WHITE, 0.6)}[style.border]
        cv2.rectangle(img, (band // 2, band // 2), (n - 1 - band // 2, n - 1 - band // 2), colour, band)
    shift = rng.normal(0, style.icon_offset * lot, 2)
    centre = (icon_centre[0] + float(shift[0]), icon_centre[1] + float(shift[1]))
    r = radius * style.icon_scale
    if style.badge:
        badge = _mix(base, _WHITE, 0.7) if not dark else (120.0, 118.0, 118.0)
        c = (int(round(centre[0] * _ONE)), int(round(centre[1] * _ONE)))
        cv2.circle(img, c, int(round(r * 1.25 * _ONE)), badge, -1, cv2.LINE_AA, _SHIFT)
    if dark:
        fill = (float(rng.uniform(140, 200)),) * 3 if style.icon_fill != "ink" or style.face == "neutral" \
            else (15.0, 15.0, 15.0)
    elif style.face == "ink" and style.icon_fill == "ink":
        fill = _mix(ink, _WHITE, 0.65)  # an ink icon on an ink face would vanish
    elif style.face == "dark" and style.icon_fill == "dark":
        fill = _mix(ink, _WHITE, 0.5)  # so would a dark icon on a dark face: no edition prints an icon unseen
    else:
        fill = {"ink": tuple(float(v) for v in ink), "light": _mix(ink, _WHITE, 0.7),
                "dark": _mix(ink, (0, 0, 0), 0.6)}[style.icon_fill]
    outline = _mix(np.asarray(fill), (0, 0, 0), 0.6) if style.icon_outline else None
    _draw_icon(img, style.icon_shapes[("red", "blue", "green", "black").index(colour_kind)], centre, r, angle, fill, outline)


def table_texture(kind: str, bgr: tuple[int, int, int], shape: tuple[int, int], px_per_mm: float,
                  rng: np.random.Generator) -> np.ndarray:
    """Top-down sRGB uint8 table surface: wood grain, cloth weave, plain paint, a checked cloth
    (``check``: ``bgr`` stripes crossing on white) or a busy print (``print``: scattered shapes of
    several inks on ``bgr``, like a patterned cloth or a newspaper)."""
    h, w = shape
    base = np.asarray(bgr, dtype=np.float32)
    if kind == "check":
        return _checked_cloth(base, shape, px_per_mm, rng)
    if kind == "print":
        return _busy_print(base, shape, px_per_mm, rng)
    if kind == "wood":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        angle = rng.uniform(0, math.pi)
        u = (xx * math.cos(angle) + yy * math.sin(angle)) / px_per_mm
        v = (-xx * math.sin(angle) + yy * math.cos(angle)) / px_per_mm
        warp = _smooth_noise(rng, shape, 8) * 25.0
        period = rng.uniform(6, 14)
        # grain finer than ~4 texels would alias into moire: fade it out as a camera would blur it
        visible = float(np.clip((period * px_per_mm - 3.0) / 3.0, 0.0, 1.0))
        grain = visible * np.sin((v + warp) * 2 * math.pi / period)
        streak = _smooth_noise(rng, shape, 40) * 0.5
        planks = np.floor(v / rng.uniform(90, 160))
        plank_tone = (np.sin(planks * 12.9898) * 43758.5453) % 1.0
        shade = 1.0 + 0.035 * grain + 0.06 * streak + 0.12 * (plank_tone - 0.5) + 0.02 * np.sin(u * 0.05)
        out = base[None, None, :] * shade[..., None]
    elif kind == "cloth":
        fine = np.asarray(cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8))
        shade = 1.0 + 0.10 * fine + 0.05 * _smooth_noise(rng, shape, 10)
        out = base[None, None, :] * shade[..., None]
    else:
        shade = 1.0 + 0.04 * _smooth_noise(rng, shape, 5)
        out = base[None, None, :] * shade[..., None]
    return np.asarray(np.clip(out, 0, 255).astype(np.uint8))


def _checked_cloth(ink: np.ndarray, shape: tuple[int, int], px_per_mm: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Gingham: bands of ink half a period wide cross both ways on a white ground, full ink where
    they cross, half where one band runs; the weave's grain over it."""
    h, w = shape
    period = rng.uniform(8, 30) * px_per_mm
    angle = rng.uniform(0, math.pi / 2)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    u = xx * math.cos(angle) + yy * math.sin(angle)
    v = -xx * math.sin(angle) + yy * math.cos(angle)
    bands = ((u / period) % 1.0 < 0.5).astype(np.float32) + ((v / period) % 1.0 < 0.5).astype(np.float32)
    ground = np.asarray(rng.uniform(215, 245, 3), np.float32)
    out = ground + (ink - ground) * (bands[..., None] / 2.0)
    weave = np.asarray(cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8))
    return np.asarray(np.clip(out * (1.0 + 0.06 * weave)[..., None], 0, 255).astype(np.uint8))


def _busy_print(ground: np.ndarray, shape: tuple[int, int], px_per_mm: float,
                rng: np.random.Generator) -> np.ndarray:
    """Shapes of three to five inks, 5 to 60 mm across, strewn over the ground to cover about half of it."""
    h, w = shape
    out = np.empty((h, w, 3), np.uint8)
    out[:] = np.clip(ground, 0, 255).astype(np.uint8)
    inks = [tuple(int(c) for c in rng.integers(0, 256, 3)) for _ in range(int(rng.integers(3, 6)))]
    mean_area = math.pi * (16.25 * px_per_mm) ** 2
    for _ in range(int(0.7 * h * w / mean_area)):  # overlapping, they leave exp(-0.7) of the ground bare
        centre = (int(rng.integers(w)), int(rng.integers(h)))
        axes = (max(1, int(rng.uniform(2.5, 30) * px_per_mm)), max(1, int(rng.uniform(2.5, 30) * px_per_mm)))
        cv2.ellipse(out, centre, axes, float(rng.uniform(0, 180)), 0, 360, inks[int(rng.integers(len(inks)))], -1)
    return out


def tile_edge_bgr(edition: str, color: str, palette: dict[str, np.ndarray]) -> tuple[int, int, int]:
    """Colour of the cut edge of the tile board (card core or plastic)."""
    if edition in ("B", "D"):
        return (170, 178, 185)
    ink = palette[color]
    out = np.clip(ink * 0.7, 0, 255)
    return (int(out[0]), int(out[1]), int(out[2]))
