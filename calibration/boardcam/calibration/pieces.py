"""The teach step: how this set's pieces look under this light.

Default colour rules know that "red" plastic has a red hue, but a 2700 K
lamp shining through a translucent blue pyramid makes it a murky grey-violet
that no fixed rule expects.  So the players put one piece of each kind and
colour on named lots (the display lists them), and we measure each piece's
colour in white-balanced Lab, exactly as vision sees it, and store mean and
covariance per class in the calibration's ``Appearance``:

``tower:<colour>``, ``dome:<colour>``, ``structure:<colour>`` (towers and
domes pooled) and ``cap:<colour>``.

Where to measure comes from geometry, not from segmentation: the pose gives
the lot, the camera's position above the board (from the pose's homography)
tells where a point at a given height above that lot appears, so the tower
sample sits on the pyramid's body and the cap sample on the cap even where
pieces lean outward near the edge of the picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from boardcam.calibration.board import (
    _stats,
    balanced_lab,
    locate_board,
    merge_colours,
    orient_corners,
    white_balance_gains,
)
from boardcam.calibration.drift import corner_points
from boardcam.calibration.store import Calibration
from boardcam.engine.errors import InputError

__all__ = [
    "TEACH_LAYOUT",
    "TeachResult",
    "describe_layout",
    "teach_structures",
    "sample_regions",
    "learn_piece_colours",
    "teach_pieces",
    "with_towers",
]

#: One piece of each kind and colour, one lot apart (no shadows or leaning
#: pyramids over a neighbour), near the middle of the board where the camera
#: looks most nearly straight down.  A black cap on a blue tower and a white
#: cap on a green one are the pairs that warm light confuses most.
TEACH_LAYOUT: dict[str, dict[str, Any]] = {
    "B3": {"kind": "dome", "color": "red"},
    "D3": {"kind": "tower", "color": "green", "cap": None},
    "F3": {"kind": "dome", "color": "blue"},
    "B5": {"kind": "tower", "color": "red", "cap": None},
    "D5": {"kind": "dome", "color": "black"},
    "F5": {"kind": "tower", "color": "blue", "cap": None},
    "B7": {"kind": "dome", "color": "green"},
    "D7": {"kind": "tower", "color": "blue", "cap": "black"},
    "F7": {"kind": "tower", "color": "green", "cap": "white"},
}

TEACH_TILE_PX = 96  # a lot is 48 px: a cap sample still has ~100 pixels
TEACH_MARGIN_PX = TEACH_TILE_PX // 2  # half a tile of table around the array

# Physical sample points (mm above the table) and radii (share of a lot).
# A tower is sampled on a ring around its middle, not at the middle: seen
# from above the middle of a pyramid is its apex, which is the cap when it
# has one.  The ring (0.2-0.42 of a lot around the point 6 mm up) stays on
# the pyramid's faces, capped or not.
TOWER_SAMPLE_MM, TOWER_RING = 6.0, (0.2, 0.42)
CAP_SAMPLE_MM, CAP_RADIUS = 32.0, 0.13
DOME_SAMPLE_MM, DOME_RADIUS = 4.0, 0.22
MIN_PIECE_DELTA_E = 10.0  # a sample this close to its tile's colour: no piece there


def teach_structures(layout: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The structures of a teach layout: a Position JSON or just its ``structures``."""
    structures = layout.get("structures", layout) if isinstance(layout, Mapping) else None
    if not isinstance(structures, Mapping) or not structures:
        raise InputError("--layout: expected a position with structures to teach")
    out: dict[str, dict[str, Any]] = {}
    for lot, entry in structures.items():
        if not isinstance(entry, Mapping) or entry.get("kind") not in ("tower", "dome"):
            raise InputError(f"--layout: structures.{lot}.kind must be 'tower' or 'dome'")
        if not isinstance(entry.get("color"), str):
            raise InputError(f"--layout: structures.{lot}.color is missing")
        _lot_index(str(lot))
        out[str(lot).upper()] = dict(entry)
    by_tile: dict[tuple[int, int], str] = {}
    for lot in sorted(out):
        column, row = _lot_index(lot)
        other = by_tile.setdefault((column // 2, row // 2), lot)
        if other != lot:
            raise InputError(f"--layout: {other} and {lot} share a tile; teach one piece per tile")
    return out


def describe_layout(layout: Mapping[str, Any]) -> list[str]:
    """One display line per piece: ``D7: blue tower with a black cap``."""
    lines = []
    for lot, entry in sorted(teach_structures(layout).items(), key=lambda kv: _lot_index(kv[0])[::-1]):
        text = f"{lot}: {entry['color']} {entry['kind']}"
        if entry.get("cap"):
            text += f" with a {entry['cap']} cap"
        lines.append(text)
    return lines


def _lot_index(name: str) -> tuple[int, int]:
    name = name.strip().upper()
    if len(name) < 2 or not ("A" <= name[0] <= "H") or not name[1:].isdigit() or not 1 <= int(name[1:]) <= 10:
        raise InputError(f"--layout: {name!r} is not a lot (A1..H10)")
    return ord(name[0]) - ord("A"), int(name[1:]) - 1


def _disc(shape: tuple[int, int], centre: np.ndarray, radius: float) -> np.ndarray:
    ys, xs = np.ogrid[: shape[0], : shape[1]]
    return np.asarray((xs - centre[0]) ** 2 + (ys - centre[1]) ** 2 <= radius**2)


def sample_regions(
    geometry: Any, lot: str, entry: Mapping[str, Any], tile_mm: float, *, tower_body: bool = True
) -> dict[str, np.ndarray]:
    """Boolean masks over the warped image: class name -> where to measure it.

    The warp should keep a margin of table around the array: a piece on an
    edge lot leans its top out over the edge, where its cap is then seen.
    Not ``tower_body``: a tower's cap only (clear plastic has no colour of
    its own to measure: the card shows through it).
    """
    from boardcam.vision.geometry import project_height

    column, row = _lot_index(lot)
    base = np.array([(column + 0.5) / 2, (row + 0.5) / 2])  # tile units
    height, width = geometry.size[1], geometry.size[0]  # the whole warped image, margin included
    margin = float(getattr(geometry, "margin_px", 0))
    lot_px = geometry.tile_px / 2

    def mask_at(mm: float, radius: float, inner: float = 0.0) -> np.ndarray:
        point = project_height(base[None, :], mm / tile_mm, geometry.camera_centre)[0]
        centre = geometry.board_to_warp(point) + margin
        disc = _disc((height, width), centre, radius * lot_px)
        return disc & ~_disc((height, width), centre, inner * lot_px) if inner > 0 else disc

    colour = str(entry["color"])
    if entry["kind"] == "dome":
        return {f"dome:{colour}": mask_at(DOME_SAMPLE_MM, DOME_RADIUS)}
    regions: dict[str, np.ndarray] = {}
    if tower_body:
        regions[f"tower:{colour}"] = mask_at(TOWER_SAMPLE_MM, TOWER_RING[1], TOWER_RING[0])
    cap = entry.get("cap")
    if cap:
        regions[f"cap:{cap}"] = mask_at(CAP_SAMPLE_MM, CAP_RADIUS)
    # A bare tower's tip is not learned: translucent plastic shows the tile
    # beneath it there, so it has no colour of its own.
    return regions


def learn_piece_colours(
    warped_lab: np.ndarray,
    geometry: Any,
    structures: Mapping[str, Mapping[str, Any]],
    tile_mm: float = 51.0,
    *,
    tower_body: bool = True,
) -> dict[str, dict[str, Any]]:
    """ColourStats JSON per class from the pieces of a known layout.

    Highlights (L > 97) are left out: glare on a glossy dome is the lamp's
    colour, not the plastic's.  ``structure:<colour>`` pools towers and domes.
    ``tower_body``: as in :func:`sample_regions`.
    """
    samples: dict[str, list[np.ndarray]] = {}
    for lot, entry in structures.items():
        for name, mask in sample_regions(geometry, lot, entry, tile_mm, tower_body=tower_body).items():
            pixels = warped_lab[mask]
            pixels = pixels[pixels[:, 0] <= 97.0]
            if len(pixels):
                samples.setdefault(name, []).append(pixels)
                kind, colour = name.split(":")
                if kind in ("tower", "dome"):
                    samples.setdefault(f"structure:{colour}", []).append(pixels)
    return {name: _stats(np.concatenate(parts)) for name, parts in sorted(samples.items())}


def bare_tile_lab(warped_lab: np.ndarray, lot: str, tile_px: int) -> np.ndarray:
    """Median Lab of the centres of the other three lots of ``lot``'s tile.

    The teach layout puts at most one piece on a tile, so these lots are
    bare: they show what "no piece here" looks like on this very tile,
    without trusting the tile reader's colour name.
    """
    column, row = _lot_index(lot)
    lot_px = tile_px // 2
    rows_total = warped_lab.shape[0] // lot_px
    samples = []
    for other_col in (column // 2 * 2, column // 2 * 2 + 1):
        for other_row in (row // 2 * 2, row // 2 * 2 + 1):
            if (other_col, other_row) == (column, row):
                continue
            y0 = (rows_total - 1 - other_row) * lot_px + lot_px // 4
            x0 = other_col * lot_px + lot_px // 4
            samples.append(warped_lab[y0 : y0 + lot_px // 2, x0 : x0 + lot_px // 2].reshape(-1, 3))
    return np.asarray(np.median(np.concatenate(samples), axis=0), np.float64)


def missing_pieces(
    warped_lab: np.ndarray,
    sample_medians: Mapping[str, np.ndarray],
    structures: Mapping[str, Mapping[str, Any]],
    tile_px: int,
    empty_lots: Mapping[str, Sequence[float]] | None = None,
) -> list[str]:
    """Lots whose sample looks just like the bare board there: no piece.

    "Bare" is the lot itself as the board step saw it empty (``empty_lots``,
    which covers icon lots) and the rest of its tile in this frame.  A dark
    piece on a dark tile is legitimately close to it (a black dome on a
    black tile), so that pair is not judged.
    """
    missing = []
    for lot, median in sample_medians.items():
        bare_rest = bare_tile_lab(warped_lab, lot, tile_px)
        references = [bare_rest]
        if empty_lots and lot in empty_lots:
            references.append(np.asarray(empty_lots[lot], np.float64))
        if any(looks_like(reference, str(structures[lot]["color"])) for reference in references):
            continue  # a piece on a tile of its own colour: absence cannot be told apart
        closest = min(float(np.linalg.norm(median - reference)) for reference in references)
        if closest < MIN_PIECE_DELTA_E:
            missing.append(lot)
    return missing


def looks_like(lab: np.ndarray, colour: str) -> bool:
    """Whether a Lab colour could be ``colour`` by vision's hue rules (generously)."""
    from boardcam.vision.colour import HUE_DEG, NEUTRAL_CHROMA, hue_distance

    lightness, a, b = (float(v) for v in lab)
    chroma = float(np.hypot(a, b))
    if colour == "black":
        return lightness < 40.0 and chroma < 2 * NEUTRAL_CHROMA
    if colour == "white":  # a cap
        return lightness > 75.0 and chroma < 2 * NEUTRAL_CHROMA
    if colour not in HUE_DEG or chroma < 0.7 * NEUTRAL_CHROMA:
        return False
    hue = float(np.degrees(np.arctan2(b, a)) % 360.0)
    return float(hue_distance(hue, HUE_DEG[colour])) < 50.0


@dataclass(frozen=True)
class TeachResult:
    learned: Mapping[str, Mapping[str, Any]]  # class -> ColourStats JSON
    calibration: Calibration
    read_back: Mapping[str, bool]  # teach lot -> vision reads it right with what was learned

    def summary(self) -> str:
        text = f"learned {len(self.learned)} piece colours: {', '.join(self.learned)}"
        if self.read_back:
            wrong = sorted(lot for lot, right in self.read_back.items() if not right)
            text += f"; read back {len(self.read_back) - len(wrong)}/{len(self.read_back)} pieces right"
            if wrong:
                text += f" (not {', '.join(wrong)})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "learned": {name: {"mean": stats["mean"], "count": stats["count"]} for name, stats in self.learned.items()},
            "read_back": dict(self.read_back),
        }


def read_back(image: np.ndarray, calibration: Calibration, structures: Mapping[str, Mapping[str, Any]]) -> dict[str, bool]:
    """Read the teach frame with the new appearance: which teach pieces vision now gets right."""
    from boardcam.vision import read_board

    reading = read_board(
        image,
        intrinsics=calibration.camera_intrinsics(),
        pose=calibration.board_pose(),
        appearance=calibration.learned_appearance(),
    )
    seen = {k.upper(): v for k, v in (reading.position_json().get("structures") or {}).items()}

    def key(entry: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
        if not entry:
            return None
        cap = entry.get("cap") if entry.get("kind") == "tower" else None
        return (entry.get("kind"), entry.get("color"), cap)

    return {lot: key(seen.get(lot)) == key(entry) for lot, entry in structures.items()}


def teach_pieces(
    image: np.ndarray,
    calibration: Calibration | None = None,
    layout: Mapping[str, Any] = TEACH_LAYOUT,
) -> TeachResult:
    """Learn the pieces' colours from a frame showing ``layout``; InputError names a missing piece."""
    from boardcam.vision.geometry import build_warp
    from boardcam.vision.models import BoardPose

    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise InputError("image: expected a colour (BGR) frame")
    calibration = calibration or Calibration()
    structures = teach_structures(layout)
    intrinsics = calibration.camera_intrinsics()
    if calibration.board is not None:
        size = calibration.board.get("image_size")
        if size is not None and tuple(size) != (image.shape[1], image.shape[0]):
            raise InputError(
                f"pieces: the board was calibrated on {size[0]}x{size[1]} frames, this one is "
                f"{image.shape[1]}x{image.shape[0]}; run `boardcam calibrate board` at this size"
            )
        points = corner_points(calibration.board["corners_px"])
    else:  # no board step yet: find it now, row 1 at the bottom
        found, _ = locate_board(image, intrinsics=intrinsics, mat=calibration.mat_spec())
        points = orient_corners(found.corners_px, "bottom")
    pose = BoardPose.from_points(points)
    appearance = dict(calibration.appearance or {})
    tile_mm = float(appearance.get("tile_mm", 51.0))
    geometry = build_warp(pose, (image.shape[1], image.shape[0]), TEACH_TILE_PX, intrinsics, TEACH_MARGIN_PX)
    warped = geometry.warp(image)
    # The board step's fixed gains when there are some: the learned colours
    # must be measured exactly as vision will measure the game's frames.
    gains = appearance.get("white_balance")
    if gains is None:
        gains = white_balance_gains(geometry.board_view(warped))
    warped_lab = balanced_lab(warped, gains)
    board_lab = geometry.board_view(warped_lab)
    clear = calibration.towers == "clear"
    sampled = _measurable(structures, clear)
    sample_medians = {}
    for lot, entry in sampled.items():
        masks = sample_regions(geometry, lot, entry, tile_mm, tower_body=not clear)
        pixels = np.concatenate([warped_lab[m] for m in masks.values()])
        sample_medians[lot] = np.median(pixels, axis=0) if len(pixels) else np.zeros(3)
    empty_lots = (calibration.board or {}).get("empty_lots_lab")
    missing = missing_pieces(board_lab, sample_medians, sampled, TEACH_TILE_PX, empty_lots)
    if missing:
        wanted = "; ".join(line for line in describe_layout({"structures": structures}) if line.split(":")[0] in missing)
        hint = "" if clear or any(structures[lot]["kind"] != "tower" for lot in missing) else \
            "; if the pyramids are clear plastic, run `boardcam calibrate towers clear` first"
        raise InputError(f"pieces: nothing seen on {', '.join(missing)} ({wanted}); place them and try again{hint}")
    learned = learn_piece_colours(warped_lab, geometry, sampled, tile_mm, tower_body=not clear)
    updated = calibration.updated(appearance=merge_colours(calibration.appearance, learned))
    if calibration.board is None:
        updated = updated.updated(board={
            "corners_px": {name: [round(float(x), 2), round(float(y), 2)] for name, (x, y) in zip(("A1", "H1", "H10", "A10"), points)},
            "row1": "bottom",
            "found_by": "teach",
            "image_size": [int(image.shape[1]), int(image.shape[0])],
        })
    try:
        checked = read_back(image, updated, structures)
    except InputError:  # the check is a courtesy; what was learned stands
        checked = {}
    return TeachResult(learned=learned, calibration=updated, read_back=checked)


def _measurable(structures: Mapping[str, Mapping[str, Any]], clear: bool) -> dict[str, Mapping[str, Any]]:
    """The teach pieces whose colour can be measured: all of them, or with clear towers the domes
    and the caps alone, a capped tower taking its cap's colour (so a white cap on a pale card, like a
    piece on its own colour, is not judged missing).

    Why: a clear tower shows the card under it, so its "colour" is the
    card's, and on a card of its own colour or a black one it looks like
    no piece at all (on generated clear-tower tables the teach step found
    "nothing" on a tower in 12 of 16).  The clear network reads their
    colour itself (vision's reader keeps it over taught colours).
    """
    if not clear:
        return dict(structures)
    return {lot: {**entry, "color": entry["cap"]} if entry["kind"] == "tower" else entry
            for lot, entry in structures.items() if entry["kind"] != "tower" or entry.get("cap")}


def with_towers(calibration: Calibration, towers: str) -> Calibration:
    """``calibration`` told what the set's towers are made of (vision's ``Appearance.towers``).

    Why a setting and not a measurement: a clear tower standing on a card
    of its own colour, or on a black one, shows the card through it, and no
    lot-sized view tells it from the bare card, so each look has its own
    fitted network.  The players know whether their pyramids are see-through;
    the frame alone, one lot at a time, does not.  Everything else the
    appearance holds is kept.
    """
    from boardcam.vision.models import TOWER_LOOKS

    if towers not in TOWER_LOOKS:
        raise InputError(f"towers: {towers!r} is not one of {', '.join(TOWER_LOOKS)}")
    return calibration.updated(appearance={**merge_colours(calibration.appearance, {}), "towers": towers})
