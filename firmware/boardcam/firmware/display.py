"""Drawing a :class:`Screen` on the small displays and in the terminal.

Two luma layouts, because the two panels want different things: the 128×64
monochrome SSD1306 has room for six lines of a 6-pixel bitmap font, so it
says only the essentials and pages through the final breakdown; the 240×240
ST7789 has colour, so it adds a mini map of the board with the offending lot
framed.  Rendering is a pure function from Screen to a Pillow image (so the
README pictures and the golden tests come from the same code); a display
object only pushes images to a device and survives the device vanishing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from PIL import Image, ImageDraw, ImageFont

from .config import DisplayConfig
from .screens import BoardSketch, Screen, ScreenKind, TowerLine

log = logging.getLogger(__name__)

MONO_SIZE = (128, 64)
COLOUR_SIZE = (240, 240)
COLUMNS = "ABCDEFGH"

PIECE_RGB = {
    "red": (225, 45, 45),
    "blue": (50, 110, 240),
    "green": (40, 185, 70),
    "black": (25, 25, 25),
}
TILE_RGB = {
    "red": (110, 45, 45),
    "blue": (40, 60, 115),
    "green": (40, 95, 50),
    "black": (70, 70, 70),
}
HEADER_RGB = {
    ScreenKind.SETUP: (70, 80, 100),
    ScreenKind.CONFIRM: (70, 80, 100),
    ScreenKind.TURN: (30, 140, 60),
    ScreenKind.LOOKING: (215, 140, 0),
    ScreenKind.VERDICT: (200, 30, 30),
    ScreenKind.FINAL: (60, 70, 160),
    ScreenKind.MESSAGE: (90, 90, 90),
}
MARK_RGB = (255, 230, 0)


@lru_cache(maxsize=None)
def _bitmap_font() -> ImageFont.ImageFont:
    """Pillow's built-in 6×11 bitmap font: crisp on a 1-bit panel, identical everywhere."""
    return ImageFont.load_default_imagefont()


@lru_cache(maxsize=None)
def _font(size: int) -> Any:
    """Pillow's bundled scalable font (no system fonts: renders the same on every machine)."""
    return ImageFont.load_default(size=size)


def wrap(text: str, font: Any, width: int) -> list[str]:
    """Greedy word wrap by rendered width; over-long words are cut, never overflow."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split():
            candidate = f"{current} {word}".strip()
            if font.getlength(candidate) <= width:
                current = candidate
                continue
            if current:
                lines.append(current)
            while font.getlength(word) > width:
                cut = len(word)
                while cut > 1 and font.getlength(word[:cut]) > width:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            current = word
        lines.append(current)
    return lines


def flow(
    texts: Sequence[str], font: Any, *, top: int, bottom: int, line: int,
    width_at: Any,
) -> list[tuple[int, str]]:
    """Lay paragraphs out line by line where the usable width depends on the height
    (narrow beside the mini map, full width below it); stops at ``bottom``."""
    placed: list[tuple[int, str]] = []
    y = top
    for text in texts:
        words = text.split()
        while words and y + line <= bottom + 1:
            width = width_at(y)
            current = ""
            while words:
                candidate = f"{current} {words[0]}".strip()
                if font.getlength(candidate) > width and current:
                    break
                current = candidate
                words.pop(0)
            placed.append((y, current))
            y += line
    return placed


def _score_words(screen: Screen) -> list[str]:
    return [
        f"{p.player.capitalize():5} {p.score:3}  {p.pieces_left:2}p {p.caps_left}c"
        for p in screen.players
    ]


def _score_sentences(screen: Screen) -> list[str]:
    return [
        f"{p.player.capitalize():5} {p.score:3} points   {p.pieces_left:2} pieces, {p.caps_left} caps left"
        for p in screen.players
    ]


def _tower_sentence(row: TowerLine) -> str:
    if row.customers is None:
        return (f"{row.player}: bonus for the {row.color} tower {row.lot} "
                f"near green {row.bonus_from}: {row.points}")
    customers = f"{row.customers} customer" + ("" if row.customers == 1 else "s")
    return (f"{row.player}: {row.color} tower {row.lot}  {customers} "
            f"x {row.competition} to competition = {row.points}")


def _tower_words(row: TowerLine) -> str:
    if row.customers is None:
        return f"{row.color} {row.lot} bonus {row.bonus_from} +{row.points}"
    return f"{row.color} {row.lot} {row.customers}x{row.competition} = {row.points}"


# ---------------------------------------------------------------- monochrome


def mono_pages(screen: Screen) -> int:
    """How many pages the 128×64 layout needs (only the final breakdown pages)."""
    if screen.kind is not ScreenKind.FINAL:
        return 1
    return 1 + sum(1 for player in ("white", "black") if any(t.player == player for t in screen.towers))


def render_mono(screen: Screen, page: int = 0) -> Image.Image:
    """The SSD1306 layout: an inverted title bar and five lines of detail."""
    font = _bitmap_font()
    image = Image.new("1", MONO_SIZE, 0)
    draw = ImageDraw.Draw(image)
    title = screen.title
    if screen.kind is ScreenKind.VERDICT and screen.rule is not None:
        title = f"{title} rule {screen.rule}"
    draw.rectangle((0, 0, 127, 11), fill=1)
    draw.text((2, 1), title.upper()[:21], font=font, fill=0)
    body: list[str]
    if screen.kind is ScreenKind.TURN:
        body = _score_words(screen) + [line for text in screen.lines for line in wrap(text, font, 124)]
    elif screen.kind is ScreenKind.VERDICT:
        # The rule number is in the title; the fix matters most, so it is never cut.
        message = screen.lines[0].partition(": ")[2] if screen.rule is not None else " ".join(screen.lines)
        fix = wrap("Fix: " + screen.fix, font, 124)[:3] if screen.fix else []
        body = wrap(message or screen.lines[0], font, 124)[: 5 - len(fix)] + fix
    elif screen.kind is ScreenKind.FINAL:
        body = _final_page(screen, page % mono_pages(screen), font)
    else:
        body = [line for text in screen.lines for line in wrap(text, font, 124)]
    if screen.status:
        body = body[:4] + [f"! {screen.status[0]}"]
    for row, text in enumerate(body[:5]):
        draw.text((2, 13 + row * 10), text, font=font, fill=1)
    return image


def _final_page(screen: Screen, page: int, font: Any) -> list[str]:
    if page == 0:
        totals = [f"{p.player.capitalize()} {p.score}" for p in screen.players]
        return ["  ".join(totals), *(line for text in screen.lines for line in wrap(text, font, 124))]
    players = [p for p in ("white", "black") if any(t.player == p for t in screen.towers)]
    player = players[page - 1]
    rows = [_tower_words(t) for t in screen.towers if t.player == player]
    return [f"{player.capitalize()}:", *rows]


# -------------------------------------------------------------------- colour


def render_colour(screen: Screen) -> Image.Image:
    """The ST7789 layout: coloured title bar, text left, mini map right, score below."""
    image = Image.new("RGB", COLOUR_SIZE, (0, 0, 0))
    draw = ImageDraw.Draw(image)
    title_font, text_font, small_font = _font(20), _font(14), _font(13)
    draw.rectangle((0, 0, 239, 31), fill=HEADER_RGB[screen.kind])
    draw.text((6, 5), screen.title, font=title_font, fill=(255, 255, 255))
    if screen.kind is ScreenKind.FINAL:
        _draw_final(draw, screen, text_font, small_font)
    else:
        has_map = screen.board is not None
        # A verdict needs its words more than the score (which is back once the
        # board is put right), so it may use the score rows for text.
        show_players = screen.kind is not ScreenKind.VERDICT and bool(screen.players)
        bottom = 176 if show_players else 220
        texts = [*screen.lines, *(["Fix: " + screen.fix] if screen.fix else [])]
        if screen.kind is ScreenKind.VERDICT and screen.fix and len(texts) > 2:
            texts = [texts[0], texts[-1]]  # the first broken rule and the fix
        for y, text in flow(texts, text_font, top=38, bottom=bottom, line=16,
                            width_at=lambda y: 134 if has_map and y < 152 else 228):
            draw.text((6, y), text, font=text_font, fill=(235, 235, 235))
        if has_map:
            assert screen.board is not None
            draw_board(draw, screen.board, origin=(146, 38), cell=11, mark=screen.lot)
        for row, player in enumerate(screen.players if show_players else ()):
            y = 178 + row * 20
            marker = ">" if screen.turn == player.player else " "
            draw.text((6, y), f"{marker} {player.player.capitalize()}", font=text_font,
                      fill=(255, 255, 255))
            draw.text((82, y), f"{player.score:3} pts  {player.pieces_left:2} left  {player.caps_left} caps",
                      font=small_font, fill=(210, 210, 210))
    if screen.status:
        draw.rectangle((0, 222, 239, 239), fill=(120, 60, 0))
        draw.text((4, 224), screen.status[0][:36], font=small_font, fill=(255, 255, 255))
    return image


def _draw_final(draw: ImageDraw.ImageDraw, screen: Screen, text_font: Any, small_font: Any) -> None:
    totals = "   ".join(f"{p.player.capitalize()} {p.score}" for p in screen.players)
    draw.text((6, 38), totals, font=text_font, fill=(255, 255, 255))
    # the margin, then any note (a cap that does not score), wrapped at the foot; the tower rows give way
    notes = [line for text in screen.lines for line in wrap(text, small_font, 228)][:4]
    foot = 222 - 16 * len(notes)
    y = 60
    for player in ("white", "black"):
        rows = [t for t in screen.towers if t.player == player]
        if not rows or y > foot - 34:  # a heading with no room for a row under it
            continue
        draw.text((6, y), player.capitalize(), font=text_font, fill=(255, 230, 120))
        y += 17
        for row in rows:
            if y > foot - 18:
                break
            draw.rectangle((10, y + 3, 19, y + 12), fill=PIECE_RGB.get(row.color, (128, 128, 128)),
                           outline=(200, 200, 200))
            draw.text((26, y), _tower_words(row), font=small_font, fill=(230, 230, 230))
            y += 16
    for index, text in enumerate(notes):
        draw.text((6, foot + 16 * index), text, font=small_font, fill=(200, 200, 200))


def _lot_xy(lot: str) -> tuple[int, int]:
    """Column 0..7 from the left, row 0..9 from the top of the drawing."""
    return COLUMNS.index(lot[0].upper()), 10 - int(lot[1:])


def draw_board(
    draw: ImageDraw.ImageDraw, board: BoardSketch, origin: tuple[int, int], cell: int,
    mark: str | None = None,
) -> None:
    """The 8×10 lot grid as the players see it (row 1 at the bottom)."""
    x0, y0 = origin
    for key, colour, icon in board.tiles:
        col, row = _lot_xy(key)
        left, top = x0 + col * cell, y0 + (row - 1) * cell
        draw.rectangle((left, top, left + 2 * cell - 1, top + 2 * cell - 1),
                       fill=TILE_RGB.get(colour, (60, 60, 60)), outline=(15, 15, 15))
        icol, irow = _lot_xy(icon)
        cx, cy = x0 + icol * cell + cell // 2, y0 + irow * cell + cell // 2
        draw.point((cx, cy), fill=(200, 200, 200))
    for lot, kind, colour, cap in board.structures:
        col, row = _lot_xy(lot)
        left, top = x0 + col * cell + 1, y0 + row * cell + 1
        right, bottom = left + cell - 3, top + cell - 3
        fill = PIECE_RGB.get(colour, (128, 128, 128))
        if kind == "tower":
            draw.polygon([(left, bottom), (right, bottom), ((left + right) // 2, top)],
                         fill=fill, outline=(230, 230, 230))
            if cap:
                cx = (left + right) // 2
                draw.rectangle((cx - 1, top, cx + 1, top + 2),
                               fill=(255, 255, 255) if cap == "white" else (0, 0, 0),
                               outline=(128, 128, 128))
        else:
            draw.ellipse((left, top, right, bottom), fill=fill, outline=(230, 230, 230))
    if mark:
        col, row = _lot_xy(mark)
        left, top = x0 + col * cell - 1, y0 + row * cell - 1
        draw.rectangle((left, top, left + cell + 1, top + cell + 1), outline=MARK_RGB, width=2)


# ------------------------------------------------------------------ terminal


def render_terminal(screen: Screen) -> Any:
    """A rich panel with the same content, for development and ``boardcam demo``."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    style = {
        ScreenKind.TURN: "green", ScreenKind.LOOKING: "yellow", ScreenKind.VERDICT: "bold red",
        ScreenKind.FINAL: "bold blue",
    }.get(screen.kind, "white")
    body = Table.grid(padding=(0, 1))
    body.add_column()
    for text in screen.lines:
        body.add_row(Text(text))
    if screen.fix:
        body.add_row(Text(f"Fix: {screen.fix}", style="italic"))
    if screen.kind is ScreenKind.FINAL:
        for row in screen.towers:
            body.add_row(Text(_tower_sentence(row)))
    for text in _score_sentences(screen):
        body.add_row(Text(text, style="dim" if screen.kind is not ScreenKind.FINAL else "bold"))
    for text in screen.status:
        body.add_row(Text(f"! {text}", style="yellow"))
    return Panel(body, title=Text(screen.title, style=style), border_style=style, expand=False)


# ------------------------------------------------------------------ devices


class Display(Protocol):
    def show(self, screen: Screen) -> None: ...

    def close(self) -> None: ...


class NullDisplay:
    """No display configured (or it vanished): the lights and the log still work."""

    def show(self, screen: Screen) -> None:
        pass

    def close(self) -> None:
        pass


class LumaDisplay:
    """Pushes rendered screens to a luma device (real panel or ``luma.core.device.dummy``)."""

    def __init__(self, device: Any, layout: str) -> None:
        if layout not in ("mono", "colour"):
            raise ValueError(f"layout must be mono or colour, not {layout!r}")
        self.device = device
        self.layout = layout
        self.page = 0
        self.last_image: Image.Image | None = None
        self._last: Screen | None = None

    def render(self, screen: Screen) -> Image.Image:
        if self.layout == "mono":
            image = render_mono(screen, self.page)
            return image if self.device.mode == "1" else image.convert(self.device.mode)
        return render_colour(screen).convert(self.device.mode)

    def show(self, screen: Screen) -> None:
        if screen == self._last:
            return
        if self._last is None or screen.kind is not self._last.kind:
            self.page = 0
        self._last = screen
        self.last_image = self.render(screen)
        self.device.display(self.last_image)

    def next_page(self) -> None:
        """Turn the final breakdown's page (the loop calls this every few seconds)."""
        if self._last is not None and self.layout == "mono" and mono_pages(self._last) > 1:
            self.page = (self.page + 1) % mono_pages(self._last)
            self.last_image = self.render(self._last)
            self.device.display(self.last_image)

    def close(self) -> None:
        try:
            self.device.cleanup()
        except Exception as error:
            log.debug("display cleanup: %s", error)


class TerminalDisplay:
    """Prints each new screen as a rich panel (only when it changes)."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console

        self.console = console or Console()
        self._last: Screen | None = None

    def show(self, screen: Screen) -> None:
        if screen != self._last:
            self._last = screen
            self.console.print(render_terminal(screen))

    def close(self) -> None:
        pass


class PngRecorder:
    """Wraps a display and also writes every new screen as numbered PNGs (the demo's output)."""

    def __init__(self, inner: Display, out_dir: Path, layouts: Sequence[str] = ("mono", "colour")) -> None:
        self.inner = inner
        self.out_dir = out_dir
        self.layouts = tuple(layouts)
        self.count = 0
        self._last: Screen | None = None
        out_dir.mkdir(parents=True, exist_ok=True)

    def show(self, screen: Screen) -> None:
        self.inner.show(screen)
        if screen == self._last:
            return
        self._last = screen
        self.count += 1
        for layout in self.layouts:
            image = render_mono(screen) if layout == "mono" else render_colour(screen)
            if layout == "mono":
                image = image.resize((256, 128), Image.Resampling.NEAREST)
            image.save(self.out_dir / f"{self.count:04d}-{screen.kind.value}-{layout}.png")

    def close(self) -> None:
        self.inner.close()


def open_display(config: DisplayConfig, console: Any = None) -> Display:
    """The configured display, or :class:`NullDisplay` (and a log line) when it cannot be opened."""
    try:
        if config.kind == "none":
            return NullDisplay()
        if config.kind == "terminal":
            return TerminalDisplay(console)
        if config.kind == "ssd1306":
            from luma.core.interface.serial import i2c
            from luma.oled.device import ssd1306

            serial = i2c(port=config.i2c_port, address=config.i2c_address)
            return LumaDisplay(ssd1306(serial, rotate=config.rotate), "mono")
        if config.kind == "st7789":
            from luma.core.interface.serial import spi
            from luma.lcd.device import st7789

            serial = spi(port=config.spi_port, device=config.spi_device,
                         bus_speed_hz=config.spi_speed_hz, gpio_DC=config.gpio_dc,
                         gpio_RST=config.gpio_reset)
            return LumaDisplay(st7789(serial, rotate=config.rotate,
                                      gpio_LIGHT=config.gpio_backlight), "colour")
    except Exception as error:  # luma raises DeviceNotFoundError, DevicePermissionError, OSError...
        log.warning("display %s unavailable (%s); going on without it", config.kind, error)
        return NullDisplay()
    raise ValueError(f"unknown display kind {config.kind!r}")
