"""Reconsider the least sure lots of a reading that no legal game can have left on the board.

Why: one frame has no history, but the rules still say what a board can
look like (``engine.aliencity.impossibilities``: no more pieces than the
game has, one street network that every structure faces, a dome on another
guild's tile only once its own had no room, a coloured tile's first two
structures its own colour, an icon lot built last).  A phantom
tower on a street usually splits the network or walls a neighbour in; a
missed coin next to a built icon lot leaves a lot that rule 5 says should
have been built first.  When the network's likeliest answer breaks such a
rule, the cheapest change of unsure lots near the breach that mends it is
taken instead: the board as a whole is then the likeliest one the rules
allow.

Only unsure lots move (below the bar the reader passes: the network
probability from which it reports an answer as sure), so a piece the
camera sees clearly stays what it is even on a board the players got
wrong.  The app, which judges moves against the setup reference and its
history, does not use this: there an illegal board is what it must report.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from boardcam.engine.aliencity import (
    NEIGHBOURS,
    Impossibility,
    Position,
    Structure,
    Tile,
    impossibilities,
    parse_lot,
)
from boardcam.vision import lot_net
from boardcam.vision.tiles import TileReading

#: a lot whose likeliest answer is less probable than this may be changed (unless the caller says otherwise)
UNSURE = 0.9
#: answers less probable than this are not tried
ALTERNATIVE_FLOOR = 0.02
#: a rule-5 breach is mended only on a tile whose icon lot was read at least this surely
ICON_SURE = 0.9
#: at most this many single changes are tried in pairs (the cheapest)
PAIRED = 8
#: at most this many lots are changed one after another when no pair mends the board
MOST_CHANGED = 4
#: ...each step trying the cheapest this many changes (each try is a whole-board rules check)
STEP_OPTIONS = 12


def mend(joint: np.ndarray, tiles: dict[str, TileReading], unsure: float = UNSURE) -> dict[int, int]:
    """Lots to change (lot -> class index in ``lot_net.CLASSES``) so that the reading breaks no rule.

    Empty when the likeliest reading breaks none, or when no change of
    unsure lots near the breaches mends it (one or two lots, cheapest
    first, then up to MOST_CHANGED step by step): a misread tile, or a board
    the players really got wrong.  ``unsure``: the network probability
    below which a lot may change (the reader passes the one below which
    it reports an answer as unsure).
    """
    tile_map = engine_tiles(tiles)
    unsure_icons = {reading.icon_lot for reading in tiles.values() if reading.icon_confidence < ICON_SURE}
    choice = joint.argmax(axis=1)
    found = _breaches(_position(choice, tile_map), unsure_icons)
    if not found:
        return {}
    options = sorted(_alternatives(joint, choice, _near(found), unsure))
    after_one: dict[tuple[int, int], list[Impossibility]] = {}
    for _cost, lot, cls in options:
        after_one[lot, cls] = _left_after(choice, tile_map, unsure_icons, {lot: cls})
        if not after_one[lot, cls]:
            return {lot: cls}
    pairs = [(a[0] + b[0], {a[1]: a[2], b[1]: b[2]})
             for a, b in itertools.combinations(options[:PAIRED], 2) if a[1] != b[1]]
    for _cost, change in sorted(pairs, key=lambda pair: pair[0]):
        if not _left_after(choice, tile_map, unsure_icons, change):
            return change
    return _mended_step_by_step(joint, choice, tile_map, unsure_icons, found, unsure, after_one)


def _mended_step_by_step(joint: np.ndarray, choice: np.ndarray, tiles: dict[int, Tile], unsure_icons: set[int],
                         found: list[Impossibility], unsure: float,
                         after_one: dict[tuple[int, int], list[Impossibility]]) -> dict[int, int]:
    """Up to MOST_CHANGED changes, each the one that leaves the fewest breaches (the cheapest of equals).

    Why: three misreads of one board (in a generated scene, two phantom
    towers in shadows and a dome read as a tower, which made a sixth blue
    and a sixth red tower and walled a street in) need more than two
    changes, and triples of every unsure lot near the breaches are too many
    to try.  Each step must leave less broken than before (fewer breaches,
    or as many concerning fewer lots), and only a board that ends with
    nothing broken is taken.  ``after_one``: what each single change left
    broken, as :func:`mend` has just checked; the first step takes it from
    there instead of checking the rules again.
    """
    change: dict[int, int] = {}
    current = choice.copy()
    for _ in range(MOST_CHANGED):
        best: tuple[tuple[int, int, float], int, int, list[Impossibility]] | None = None
        options = sorted(_alternatives(joint, choice, _near(found) - set(change), unsure))[:STEP_OPTIONS]
        for cost, lot, cls in options:
            if not change and (lot, cls) in after_one:
                left = after_one[lot, cls]
            else:
                current[lot] = cls
                left = _breaches(_position(current, tiles), unsure_icons)
                current[lot] = choice[lot]
            key = (*_extent(left), cost)
            if best is None or key < best[0]:
                best = (key, lot, cls, left)
        if best is None or best[0][:2] >= _extent(found):
            return {}
        _key, lot, cls, found = best
        change[lot] = current[lot] = cls
        if not found:
            return change
    return {}


def _extent(found: list[Impossibility]) -> tuple[int, int]:
    """How much is broken: the breaches, then the lots they concern (an eighth red tower is worse than a sixth)."""
    return len(found), sum(len(breach.lots) for breach in found)


def _near(found: list[Impossibility]) -> set[int]:
    """The lots the breaches concern and their neighbours.

    A dome on another guild's tile (rule 2) concerns the lots of its own
    colour left open too: a coin missed on one of them, however far off,
    mends the board as well as the dome read otherwise does, and a piece
    beside one can close its street.
    """
    near = {lot for breach in found for lot in (*breach.lots, *breach.open_lots)}
    return near | {nb for lot in near for nb in NEIGHBOURS[lot]}


def engine_tiles(tiles: dict[str, TileReading]) -> dict[int, Tile]:
    """The tiles read, as the engine's tile map (tile key -> Tile)."""
    return {parse_lot(key): Tile(reading.colour, reading.icon_lot) for key, reading in tiles.items()}


def _alternatives(joint: np.ndarray, choice: np.ndarray, near: set[int], unsure: float) -> list[tuple[float, int, int]]:
    """(cost in log-probability, lot, class) of every other answer worth trying on the unsure lots near a breach."""
    out = []
    for lot in sorted(near):
        top = float(joint[lot, choice[lot]])
        if top >= unsure:
            continue
        for cls in np.flatnonzero(joint[lot] >= ALTERNATIVE_FLOOR):
            if cls != choice[lot]:
                out.append((math.log(top) - math.log(float(joint[lot, cls])), lot, int(cls)))
    return out


def _left_after(choice: np.ndarray, tiles: dict[int, Tile], unsure_icons: set[int],
                change: dict[int, int]) -> list[Impossibility]:
    """What the reading still breaks with ``change`` made (nothing: mended)."""
    changed = choice.copy()
    for lot, cls in change.items():
        changed[lot] = cls
    return _breaches(_position(changed, tiles), unsure_icons)


def _breaches(position: Position, unsure_icons: set[int]) -> list[Impossibility]:
    """The position's impossibilities, but for rule 5 on a tile whose icon lot was read unsurely.

    A built icon lot next to a buildable one is then more likely a misread
    icon (one in view taken for plain print, or a hidden one guessed) than a
    misread piece.
    """
    return [found for found in impossibilities(position)
            if not (found.rule == "rule 5" and found.lots[0] in unsure_icons)]


def _position(classes: np.ndarray, tiles: dict[int, Tile]) -> Position:
    structures = {}
    for lot, cls in enumerate(classes):
        kind, colour, cap = lot_net.CLASSES[int(cls)]
        if kind is not None:
            structures[lot] = Structure(kind, colour or "red", cap)
    return Position(tiles, structures)
