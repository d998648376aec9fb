"""Read each tile: its guild colour and which of its four lots carries the icon.

Tile art differs between editions (a guild-coloured face, or a neutral face
with a coloured border and icon, gradients, badges...).  What every edition
shares, and what this module relies on:

* the guild colour is the dominant *saturated hue* of the tile's print, and a
  black tile is the one without such a hue that is also dark *compared with
  the other tiles* (relative measures survive any lamp and exposure);
* colour names start from hue angles, then are refined with prototypes
  learned from this very frame (the mean colour of the tiles confidently
  named so far), the way a person re-judges "is that dark blue or black?"
  after seeing the whole board, and the count settles the rest: a set has
  five tiles of each guild;
* an edition may print the guild only in the icon, on a neutral card: then
  the free icon lot's most colourful pixels name the tile;
* the icon lot is the odd one out of its tile: the lot whose empty look
  departs most from the tile's other lots.  Only lots without pieces are
  candidates, and the choice is made consistent across the tiles of a guild
  (their icons are the same print, turned any way), so a dome that happens to
  stand out on one tile does not win.  Nothing assumes which way the icon is
  drawn: comparisons use rotation-invariant ring profiles.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.fft
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from boardcam.vision.colour import guild_hue_weights, magnitude
from boardcam.vision.models import LOTS_TALL, LOTS_WIDE, TILES_TALL, TILES_WIDE

COLUMNS = "ABCDEFGH"
GUILDS = ("red", "blue", "green", "black")
#: np.rot90 turns that bring a lot into canonical orientation, by its place in the tile
ROTATION_OF_QUADRANT = {(0, 1): 0, (1, 1): 1, (1, 0): 2, (0, 0): 3}  # (dx, dy) within tile -> k


def lot_name(col: int, row: int) -> str:
    return f"{COLUMNS[col]}{row + 1}"


def lot_id(col: int, row: int) -> int:
    return row * LOTS_WIDE + col


def tile_key(tile_col: int, tile_row: int) -> str:
    """Tiles are named by their lower-left lot: A1, C1, ..., G9."""
    return lot_name(2 * tile_col, 2 * tile_row)


TILE_KEYS: tuple[str, ...] = tuple(tile_key(c, r) for r in range(TILES_TALL) for c in range(TILES_WIDE))


def tile_lots(tile_col: int, tile_row: int) -> list[int]:
    """Lot ids of a tile: lower-left, lower-right, upper-left, upper-right."""
    c, r = 2 * tile_col, 2 * tile_row
    return [lot_id(c, r), lot_id(c + 1, r), lot_id(c, r + 1), lot_id(c + 1, r + 1)]


#: (20, 4) lot ids of every tile, tiles in TILE_KEYS order
TILE_LOT_IDS = np.array([tile_lots(i % TILES_WIDE, i // TILES_WIDE) for i in range(len(TILE_KEYS))])
#: tile index (into TILE_KEYS) of every lot id
TILE_OF_LOT = np.empty(LOTS_TALL * LOTS_WIDE, dtype=np.int64)
TILE_OF_LOT[TILE_LOT_IDS.ravel()] = np.repeat(np.arange(len(TILE_KEYS)), 4)


@dataclass(frozen=True)
class TileReading:
    colour: str
    icon_lot: int  # lot id 0..79
    colour_confidence: float
    icon_confidence: float
    #: the tile's lots from likeliest icon to least, as the search ranked them (empty: not ranked), so that
    #: the rules can move a hidden icon to the next likeliest lot they allow
    icon_order: tuple[int, ...] = ()
    #: the probability of each guild (GUILDS order) from the tile's look (empty: not known), so that the
    #: rules can move a tile whose pieces it cannot hold to the likeliest guild that can
    colour_probs: tuple[float, ...] = ()

    @property
    def confidence(self) -> float:
        return min(self.colour_confidence, self.icon_confidence)

    @property
    def colour_order(self) -> tuple[str, ...]:
        """The guilds from likeliest to least by ``colour_probs`` (empty: not known)."""
        return tuple(g for _, g in sorted(zip(self.colour_probs, GUILDS), key=lambda pg: -pg[0])) \
            if self.colour_probs else ()


def lot_grid(board: np.ndarray, lot_px: int) -> np.ndarray:
    """The board image cut into lots: (80, s, s, C) indexed by lot id, as seen (not turned)."""
    s = lot_px
    grid = board[: LOTS_TALL * s, : LOTS_WIDE * s].reshape(LOTS_TALL, s, LOTS_WIDE, s, -1).transpose(0, 2, 1, 3, 4)
    return np.ascontiguousarray(grid[::-1]).reshape(LOTS_TALL * LOTS_WIDE, s, s, -1)


def _quadrant_groups() -> dict[int, np.ndarray]:
    groups: dict[int, list[int]] = {}
    for row in range(LOTS_TALL):
        for col in range(LOTS_WIDE):
            groups.setdefault(ROTATION_OF_QUADRANT[(col % 2, row % 2)], []).append(lot_id(col, row))
    return {k: np.array(v) for k, v in groups.items()}


QUADRANT_GROUPS = _quadrant_groups()


def canonical(lots: np.ndarray, inverse: bool = False) -> np.ndarray:
    """Turn every lot so its tile's centre is at the lower-right corner (or back).

    The four lots of a tile carry the same print up to this turn (border on
    two sides, streets on the other two), so canonical lots of one guild can
    be compared and averaged pixel by pixel.  One gather of every pixel does
    it, twice as fast as turning each quadrant's lots in turn.
    """
    n, s = lots.shape[:2]
    return np.take(lots.reshape(n * s * s, -1), _canonical_order(n, s, inverse), axis=0).reshape(lots.shape)


@lru_cache(maxsize=8)
def _canonical_order(n: int, size: int, inverse: bool) -> np.ndarray:
    """Where each pixel of the turned lots comes from, as a flat index into the (n, size, size) lots."""
    where = np.arange(n * size * size).reshape(n, size, size)
    out = np.empty_like(where)
    for k, ids in QUADRANT_GROUPS.items():
        out[ids] = np.rot90(where[ids], -k if inverse else k, axes=(1, 2))
    return out.ravel()


def quarter_turns(patches: np.ndarray) -> np.ndarray:
    """Every square patch (n, s, s, C) at each of its four np.rot90 turns: (n, 4, s, s, C)."""
    n, s = patches.shape[:2]
    return np.take(patches.reshape(n, s * s, -1), _turn_order(s), axis=1).reshape(n, 4, *patches.shape[1:])


@lru_cache(maxsize=8)
def _turn_order(size: int) -> np.ndarray:
    """(4 * size * size,): the flat pixel index each pixel of the four np.rot90 turns comes from."""
    where = np.arange(size * size).reshape(size, size)
    return np.concatenate([np.rot90(where, k).ravel() for k in range(4)])


def lot_patches(lab: np.ndarray, tile_px: int) -> np.ndarray:
    """All 80 lot patches in canonical orientation: array (80, s, s, 3) indexed by lot id."""
    return canonical(lot_grid(lab, tile_px // 2))


@lru_cache(maxsize=8)
def centre_offsets(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pixel of a (size, size) lot: x and y from the lot's centre in pixels (y down), and the
    distance from the centre in half-lots (1 on the inscribed circle).  Read-only: the arrays are shared."""
    yy, xx = np.mgrid[0:size, 0:size]
    rx, ry = xx + 0.5 - size / 2, yy + 0.5 - size / 2
    r = np.hypot(rx, ry) / (size / 2)
    for a in (rx, ry, r):
        a.flags.writeable = False
    return rx, ry, r


def ring_index(size: int, rings: int) -> np.ndarray:
    """Ring number of each pixel of a lot (rings over the inscribed circle; -1 outside)."""
    r = centre_offsets(size)[2]
    out = np.minimum((r * rings).astype(int), rings - 1)
    out[r >= 1.0] = -1
    return out


def radial_profiles(patches: np.ndarray, rings: int = 5) -> np.ndarray:
    """Mean Lab and lightness spread in concentric rings about each lot's centre: (n, rings, 4).

    Rotation-invariant, so the icon printed at any turn matches the other
    tiles' icons; the spread keeps an outline apart from a flat disc.
    """
    n, s = patches.shape[:2]
    weights = _ring_means(s, rings)  # (s*s, rings)
    flat = patches.reshape(n, s * s, -1).astype(np.float32, copy=False)
    means = np.matmul(flat.transpose(0, 2, 1), weights)  # (n, 3, rings)
    out = np.empty((n, rings, 4), dtype=np.float32)
    out[..., :3] = means.transpose(0, 2, 1)
    variance = flat[..., 0] ** 2 @ weights - means[:, 0] ** 2
    out[..., 3] = np.sqrt(np.clip(variance, 0.0, None))
    return out


@lru_cache(maxsize=8)
def _ring_means(size: int, rings: int) -> np.ndarray:
    """(size*size, rings): flattened lots times this are their mean in each ring (ring_index's rings)."""
    index = ring_index(size, rings)
    return mean_weights([index == ring for ring in range(rings)])


def mean_weights(masks: list[np.ndarray]) -> np.ndarray:
    """(pixels, len(masks)): flattened lots times this are their mean over each mask.

    One matrix product replaces a masked copy of every lot per mask.
    """
    weights = np.stack([mask.ravel() for mask in masks], axis=1).astype(np.float32)
    return weights / weights.sum(0, keepdims=True)


def profile_distances(a: np.ndarray, b: np.ndarray, clip: float = 40.0) -> np.ndarray:
    """Pairwise mean clipped distance between ring profiles: (len(a), len(b))."""
    d = np.linalg.norm(a[:, None] - b[None], axis=-1)
    return np.minimum(d, clip).mean(axis=-1)


# ----------------------------------------------------------------------------- colour


@dataclass(frozen=True)
class ColourVotes:
    """Every lot's colour evidence, computed once per frame (the tiles may be named twice).

    Pixels are taken every other one: plenty for a vote.
    """

    vote_weight: np.ndarray  # (80, n) each pixel's chroma beyond the grey of print and noise
    guild_weight: np.ndarray  # (3, 80, n) how near each pixel's hue is to red, blue, green
    votes: np.ndarray  # (80, 3) the lot's mean vote for each guild hue
    light: np.ndarray  # (80,) the lot's median lightness
    mean: np.ndarray  # (80, 3) the lot's mean Lab
    pixels: np.ndarray  # (80, n, 3) the pixels voting
    print_look: np.ndarray  # (20, 3) each tile's mean Lab over its two calmest lots (see _print_looks)


def colour_votes(lab: np.ndarray, tile_px: int) -> ColourVotes:
    lots = lot_grid(lab, tile_px // 2)[:, ::2, ::2].reshape(80, -1, 3)
    a, b = lots[..., 1], lots[..., 2]
    chroma = magnitude(a, b)
    hue = np.degrees(np.arctan2(b, a)) % 360.0
    vote_weight = np.clip(chroma - 8.0, 0.0, 40.0)
    guild_weight = guild_hue_weights(hue)
    votes = (vote_weight[None] * guild_weight).mean(axis=2).T
    mean = np.full(lots.shape[1], 1.0 / lots.shape[1], np.float32) @ lots  # (80, 3); .mean(1) is slow on a trailing axis of 3
    return ColourVotes(vote_weight, guild_weight, votes, median_along(lots[..., 0], 1), mean, lots,
                       _print_looks(vote_weight, mean))


def _print_looks(vote_weight: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per tile: mean Lab of its two calmest lots (fewest saturated pixels), (20, 3).

    The calm lots are the ones least likely to hold a piece, so this is the
    tile's own print, the thing the colour prototypes compare.
    """
    colourful = vote_weight.mean(1)
    order = np.argsort(colourful[TILE_LOT_IDS], axis=1)[:, :2]
    calm = np.take_along_axis(TILE_LOT_IDS, order, axis=1)
    return mean[calm].mean(1)  # type: ignore[no-any-return]


def tile_colour_scores(lab: np.ndarray, tile_px: int, piece_free: np.ndarray | None = None,
                       votes: ColourVotes | None = None, icon_lots: np.ndarray | None = None) -> np.ndarray:
    """Log-scores (20, 4) for red, blue, green, black of every tile.

    Each saturated pixel votes for the guild hue nearest to it, weighted by
    its chroma; darkness (the tile's typical lightness against the brightest
    tiles') and lack of such votes make black.  ``piece_free`` (80 weights)
    lets lots with pieces count less, and lets a free icon lot name the guild
    of a tile whose print has no colour but its icon.
    """
    seen = colour_votes(lab, tile_px) if votes is None else votes
    weights = np.ones(80, np.float32) if piece_free is None else np.clip(piece_free, 0.05, 1.0).astype(np.float32)
    # per tile, trust the lots that look least like a piece: the two with the
    # fewest colour votes (pieces add colour to a black tile, never remove the
    # print's colour from a coloured one), weighted by how free they seem
    lot_total = seen.votes.sum(1) / weights
    order = np.argsort(lot_total[TILE_LOT_IDS], axis=1)[:, :2]
    calm = np.take_along_axis(TILE_LOT_IDS, order, axis=1)  # (20, 2) lot ids
    tile_votes = seen.votes[calm].mean(1)
    tile_light = seen.light[calm].mean(1)
    bright = small_percentile(tile_light, 80)
    dark_share = np.clip(1.0 - tile_light / max(bright, 1e-3), 0.0, 1.0)  # 0 for the bright tiles
    # an edition that prints its guilds on the card itself: there a tile whose
    # print shows no colour is black, whatever its icon, and however dark the
    # other cards are (some editions print dark red, blue and green cards)
    printed_in_colour = int((tile_votes.sum(1) >= COLOURED_PRINT).sum()) >= COLOURED_CARDS
    # how much darker the board's darkest quarter (five tiles of twenty are black) is than its light tiles
    black_stands_out = small_percentile(dark_share, 90)
    if piece_free is not None and not printed_in_colour and black_stands_out >= ICON_CARDS_ABOVE:
        # light cards with no colour but their icons' (an edition of dark cards
        # whose colour is too dim to count is not one: its black tiles' light
        # icons would take a lamp's tint for a guild)
        light_card = dark_share < 0.25
        icon = _icon_votes(seen.pixels, weights, tile_votes.sum(1), icon_lots)
        tile_votes = tile_votes + icon * light_card[:, None]
    total_votes = tile_votes.sum(1)
    colourful = np.clip(total_votes / max(small_percentile(total_votes, 75), 1e-3), 0, 1)
    share = tile_votes / np.maximum(total_votes[:, None], 1e-6)
    scores = np.zeros((20, 4))
    scores[:, :3] = 6.0 * share * colourful[:, None]
    scores[:, 3] = 8.0 * (dark_share - 0.35) + _plain_weight(printed_in_colour, black_stands_out) * (0.5 - colourful)
    return scores


#: calm lots' mean colour vote above which a tile's print itself shows its guild (every edition seen had >= 3.6)
COLOURED_PRINT = 6.0
#: tiles whose print shows their guild, of the fifteen coloured ones, that make an edition "printed in colour"
COLOURED_CARDS = 8
#: weight of "no colour in the print" for black (darkness' weight is 8), and the most it gets when darkness cannot tell
PLAIN_IS_BLACK, PLAIN_IS_BLACK_DARK_CARDS = 3.0, 9.0
#: how much darker than the light tiles the board's darkest quarter is: at most this, darkness cannot tell
#: black (dark cards); at least this, it can (the colourless weight stays PLAIN_IS_BLACK)
DARK_CARDS_BELOW, LIGHT_CARDS_ABOVE = 0.2, 0.45
#: ...and at least this, a board whose cards show no colour has light cards, whose icons name their guilds.
#: On 240 made-up-art tables the neutral cards' black tiles stood out by 0.36 or more, and the dark cards'
#: by as little as 0.08: below 0.27 their light icons' lamp tint misnamed black tiles (docs/vision.md)
ICON_CARDS_ABOVE = 0.32


def _plain_weight(printed_in_colour: bool, black_stands_out: float) -> float:
    """How much a colourless print says black: more on a board whose black tiles are no darker than the rest.

    Darkness names black tiles where the other cards are light.  An edition
    of dark red, blue and green cards leaves only the lack of colour, so
    there it must weigh more; a board whose colour is only in the icons
    (a neutral card) cannot use it at all.
    """
    if not printed_in_colour:
        return PLAIN_IS_BLACK
    dark_cards = np.clip((LIGHT_CARDS_ABOVE - black_stands_out) / (LIGHT_CARDS_ABOVE - DARK_CARDS_BELOW), 0.0, 1.0)
    return float(PLAIN_IS_BLACK + (PLAIN_IS_BLACK_DARK_CARDS - PLAIN_IS_BLACK) * dark_cards)


#: share of a lot's pixels, those departing most from its card, that are taken for a printed icon's ink
ICON_SHARE = 0.15
#: votes per unit of an icon ink's chroma (the per-pixel votes count chroma beyond 8 on every pixel)
ICON_CHROMA_VOTE = 1.0


def _icon_votes(pixels: np.ndarray, free: np.ndarray, calm_total: np.ndarray,
                icon_lots: np.ndarray | None = None) -> np.ndarray:
    """Colour votes (20, 3) of each tile's icon lot (when known and free, else its most colourful free lot),
    for tiles whose print is not coloured.

    Some editions print the guild only in the icon, on a neutral card: the
    calm lots then carry no colour, and the icon has to name the guild.  Its
    ink is the share of the lot's pixels whose colour departs most from the
    card's (the lot's median), and its colour is their mean departure: a
    pale or dark ink shows only a few units of chroma, too little for the
    per-pixel votes, but its hue is still the guild's.  (Departing in
    lightness would take a dark outline, which has no colour, for the ink.)
    Only lots believed free of pieces speak, and only as far as the calm
    lots leave the tile uncoloured, so a coloured print is never outvoted.
    """
    side = int(round(np.sqrt(pixels.shape[1])))
    inner = (ring_index(side, 1) == 0).ravel()  # the lot's inscribed disc: the gaps between tiles show the table
    disc = pixels[:, inner].astype(np.float32)
    departure = disc[..., 1:] - np.median(disc[..., 1:], axis=1)[:, None, :]  # a, b from the card's
    count = max(1, int(round(ICON_SHARE * disc.shape[1])))
    top = np.argpartition(magnitude(departure[..., 0], departure[..., 1]), -count, axis=1)[:, -count:]
    ink = np.take_along_axis(departure, top[..., None], axis=1).mean(1)  # (80, 2)
    chroma = np.hypot(ink[:, 0], ink[:, 1])
    hue = np.degrees(np.arctan2(ink[:, 1], ink[:, 0])) % 360.0
    lot_votes = ICON_CHROMA_VOTE * chroma[:, None] * guild_hue_weights(hue).T * (free[:, None] > 0.5)  # (80, 3)
    per_tile = lot_votes[TILE_LOT_IDS]  # (20, 4, 3)
    speaking = np.take_along_axis(per_tile, per_tile.sum(2).argmax(1)[:, None, None], axis=1)[:, 0]
    if icon_lots is not None:  # a neighbour's piece leaning in can be louder than the icon
        icon_free = free[icon_lots] > 0.5
        speaking[icon_free] = lot_votes[icon_lots[icon_free]]
    need = np.clip(1.0 - calm_total / COLOURED_PRINT, 0.0, 1.0)
    return speaking * need[:, None]


def refine_with_prototypes(features: np.ndarray, scores: np.ndarray, rounds: int = 2) -> np.ndarray:
    """Re-score tiles by distance to per-guild prototypes taken from this frame.

    Hue rules name most tiles right under any lamp; the prototypes (mean
    feature of each guild's confidently named tiles) then settle the few
    borderline ones relative to how this board really looks.
    """
    for _ in range(rounds):
        probs = _softmax(scores)
        members = (probs.argmax(1)[:, None] == np.arange(4)) & (probs.max(1) > 0.6)[:, None]  # (20, 4)
        counts = members.sum(0)
        if np.any(counts < 2):
            return scores
        protos = (members.T @ features) / counts[:, None]
        dist = np.sqrt(((features[:, None] - protos[None]) ** 2).sum(-1))  # (20, 4)
        spread = np.sort((dist * members).sum(0) / counts)
        scale = max(0.5 * float(spread[1] + spread[2]), 3.0)  # the median guild's spread
        scores = 0.7 * scores - 0.3 * np.minimum(dist / scale, 4.0) ** 2
    return scores


def small_percentile(values: np.ndarray, q: float) -> float:
    """np.percentile's linear interpolation for a short 1-D array, without its generic machinery (40 µs a call)."""
    ordered = np.sort(values, axis=None)
    at = q / 100.0 * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (at - low))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def read_tile_colours(
    lab: np.ndarray, tile_px: int, piece_free: np.ndarray | None = None, votes: ColourVotes | None = None,
    kin: np.ndarray | None = None, icon_lots: np.ndarray | None = None,
) -> dict[str, tuple[str, float]]:
    """Guild colour and confidence of every tile (``votes``: this frame's, when already computed).

    ``kin`` (20, 20, see :func:`icon_kinship`): tiles whose icons are the same
    print; a tile unsure of its colour takes its kin's evidence as its own.
    ``icon_lots`` (20 lot ids), once known: where a neutral card's colour is.
    """
    return colours_from_probabilities(tile_colour_probabilities(lab, tile_px, piece_free, votes, kin, icon_lots))


def tile_colour_probabilities(
    lab: np.ndarray, tile_px: int, piece_free: np.ndarray | None = None, votes: ColourVotes | None = None,
    kin: np.ndarray | None = None, icon_lots: np.ndarray | None = None,
) -> np.ndarray:
    """Every tile's probability of each guild (20, 4) from its own look (see :func:`read_tile_colours`)."""
    votes = colour_votes(lab, tile_px) if votes is None else votes
    scores = tile_colour_scores(lab, tile_px, piece_free, votes, icon_lots)
    scores = refine_with_prototypes(votes.print_look, scores)
    if kin is not None:
        scores = _with_kin(scores, kin)
    return _softmax(scores)


def colours_from_probabilities(probs: np.ndarray) -> dict[str, tuple[str, float]]:
    """Guild colour and confidence of every tile from their probabilities, five of each when plausible."""
    guilds, moved_confidence = five_of_each(probs)
    out = {}
    for t, key in enumerate(TILE_KEYS):
        g = int(guilds[t])
        out[key] = (GUILDS[g], moved_confidence.get(t, float(probs[t, g])))
    return out


#: a tile named with at least this probability from its own print keeps its colour whatever its kin say
KIN_UNNEEDED = 0.9


def _with_kin(scores: np.ndarray, kin: np.ndarray) -> np.ndarray:
    """Each unsure tile's colour scores averaged with those of the tiles printed with the same icon."""
    unsure = (_softmax(scores).max(1) < KIN_UNNEEDED) & kin.any(1)
    out = scores.copy()
    out[unsure] = (scores[unsure] + kin[unsure].astype(np.float64) @ scores) / (1.0 + kin[unsure].sum(1))[:, None]
    return out


#: an icon is kin of another when each is among the other's this many most alike (a guild's other four)...
ICON_KIN = 4
#: ...and their prints differ by less than this share of the median difference between icons on the board
ICON_KIN_NEARER = 0.6


def icon_kinship(patches: np.ndarray, icon_lots: np.ndarray, trusted: np.ndarray) -> np.ndarray:
    """(20, 20) bool: which tiles' icons are the same print, at any quarter turn and offset in the lot.

    Why: a guild prints one icon on all its tiles, so tiles whose icons
    match are one guild, whatever their colour looks like under this lamp.
    On a neutral card a pale or dark icon is all the colour a tile shows,
    and one such icon alone is easily misnamed; five of them together are
    not.  Only ``trusted`` tiles (icon in view, found with some confidence)
    take part; prints are compared by :func:`print_descriptors`.
    """
    n = len(icon_lots)
    described = print_descriptors(patches[icon_lots])
    distance = cdist(described, described, "cityblock")  # L1: a few strong ridges do not dominate
    np.fill_diagonal(distance, np.inf)
    distance[~trusted] = np.inf
    distance[:, ~trusted] = np.inf
    finite = distance[np.isfinite(distance)]
    if len(finite) == 0:
        return np.zeros((n, n), bool)
    rank = distance.argsort(1).argsort(1)
    return (rank < ICON_KIN) & (rank.T < ICON_KIN) & (distance < ICON_KIN_NEARER * float(np.median(finite)))


def print_descriptors(patches: np.ndarray) -> np.ndarray:
    """(n, D) per canonical lot: what its print looks like wherever in the lot it sits, at any quarter turn.

    The amplitude spectrum of the lot's departure from its card (its median)
    ignores where the print sits; summed with its quarter turn it ignores the
    turn too.  The mean departure is kept beside it, signed, so one shape in
    two colours stays two prints.
    """
    prints = patches.astype(np.float32)
    n, s = prints.shape[:2]
    prints -= np.median(prints[:, ::2, ::2].reshape(n, -1, 3), axis=1)[:, None, None, :]  # the card
    amplitude = np.abs(scipy.fft.fft2(prints, axes=(1, 2)))
    turn_rows, turn_cols = _quarter_turn_of_frequencies(s)
    amplitude = amplitude + amplitude[:, turn_rows, turn_cols]
    amplitude[:, 0, 0] = 0.0  # the mean goes in signed, below
    colour = prints.reshape(n, -1, 3).mean(1) * (2.0 * s)
    return np.concatenate([np.sqrt(amplitude.reshape(n, -1)), colour], axis=1)


@lru_cache(maxsize=4)
def _quarter_turn_of_frequencies(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays taking a (size, size) spectrum to the spectrum of the image turned a quarter."""
    rows, cols = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    return (-cols) % size, rows


def icon_print_agreement(patches: np.ndarray, icon_lots: np.ndarray) -> np.ndarray:
    """(20, 20) how alike the tiles' icon prints are (print_agreement, made symmetric; 0 on the diagonal)."""
    prints = print_departures(patches, TILE_LOT_IDS)
    column = (TILE_LOT_IDS == np.asarray(icon_lots)[:, None]).argmax(axis=1)
    icons = prints[np.arange(len(TILE_LOT_IDS)), column]
    agreement = print_agreement(icons, icons)
    agreement = 0.5 * (agreement + agreement.T)
    np.fill_diagonal(agreement, 0.0)
    return agreement  # type: ignore[no-any-return]


#: how many nats a tile's colour gains for each unit of print agreement with the icons of a guild's other tiles
ICON_GROUP_WEIGHT = 3.0


def grouped_probabilities(probs: np.ndarray, agreement: np.ndarray, weight: float = ICON_GROUP_WEIGHT) -> np.ndarray:
    """(20, 4) each tile's guild probabilities in the likeliest five-of-each layout whose guilds each
    carry one icon print.

    Why: a guild prints one icon on all its tiles.  On a neutral card with a
    dark icon, or under a lamp that pulls two inks together, a tile's own
    colour is a weak vote, but five tiles whose icons are the same print
    are one guild, and their votes together name it.  The layout maximises
    the tiles' log-probabilities plus ``weight`` times the agreement of
    every pair put in one guild (``agreement``: zero for icons not to be
    trusted), by swapping pairs of tiles from the five-of-each reading while
    that gains.  Each tile's probability of a guild then comes from the
    best layout with it in that guild one swap away, so a tile its print
    ties to its guild is sure, and one the layout barely placed is not.
    """
    log_p = np.log(np.clip(probs, 1e-9, 1.0))
    guilds = five_of_each(probs)[0].copy()
    n = len(guilds)
    gain = _swap_gains(log_p, agreement, weight, guilds)
    for _ in range(n * n):
        t, u = np.unravel_index(int(np.argmax(gain)), gain.shape)
        if gain[t, u] <= 1e-9:
            break
        guilds[t], guilds[u] = guilds[u], guilds[t]
        gain = _swap_gains(log_p, agreement, weight, guilds)
    best = np.full(probs.shape, -np.inf)
    for g in range(probs.shape[1]):
        members = guilds == g
        if members.any():
            best[:, g] = np.where(members[None, :], gain, -np.inf).max(axis=1)
    best[np.arange(n), guilds] = 0.0
    return _softmax(best)


def _swap_gains(log_p: np.ndarray, agreement: np.ndarray, weight: float, guilds: np.ndarray) -> np.ndarray:
    """(n, n) what swapping the guilds of tiles t and u adds to the layout's score (-inf within a guild)."""
    n = len(guilds)
    with_guild = agreement @ np.eye(log_p.shape[1])[guilds]  # (n, guilds): each tile's agreement with each guild
    own_p, own_a = log_p[np.arange(n), guilds], with_guild[np.arange(n), guilds]
    moved_p, moved_a = log_p[:, guilds], with_guild[:, guilds]  # [t, u]: tile t in u's guild
    gain = (moved_p + moved_p.T - own_p[:, None] - own_p[None, :]
            + weight * (moved_a + moved_a.T - own_a[:, None] - own_a[None, :] - 2.0 * agreement))
    gain[guilds[:, None] == guilds[None, :]] = -np.inf
    return gain  # type: ignore[no-any-return]


#: a tile is moved to another guild to make the count five of each only if that guild is this likely for it
COUNT_MOVE_FLOOR = 0.01


def five_of_each(probs: np.ndarray) -> tuple[np.ndarray, dict[int, float]]:
    """Guild index per tile (20,): the most likely layout with five tiles of each guild, if it is plausible.

    Alien City is played with five tiles of each guild (docs/rules.md), so
    when the hue rules call ten tiles red under a warm lamp, the five least
    red of them belong to the guild left short.  The count is a strong
    hint, not a law: a layout that needs a tile moved to a guild it is
    almost surely not (probability below COUNT_MOVE_FLOOR) is read tile by
    tile as seen, and the app warns about the mix.  Also returns the
    confidence of each moved tile: how much likelier the best five-of-each
    layout is than the best one that leaves this tile as seen.
    """
    seen = probs.argmax(1)
    per_guild = len(probs) // probs.shape[1]
    if len(probs) % probs.shape[1] or np.all(np.bincount(seen, minlength=probs.shape[1]) == per_guild):
        return seen, {}
    cost = -np.log(np.clip(np.repeat(probs, per_guild, axis=1), 1e-12, 1.0))  # tile x slot (five per guild)
    balanced = assignment(cost) // per_guild
    moved = np.flatnonzero(balanced != seen)
    if np.any(probs[moved, balanced[moved]] < COUNT_MOVE_FLOOR):
        return seen, {}
    total = cost[np.arange(len(cost)), _slots(balanced, per_guild)].sum()
    confidence = {}
    for t in moved:
        kept = cost.copy()
        kept[t] = 1e6  # tile t may only take a slot of the guild it was seen as
        kept[t, seen[t] * per_guild : (seen[t] + 1) * per_guild] = cost[t, seen[t] * per_guild]
        other = assignment(kept) // per_guild
        gap = cost[np.arange(len(cost)), _slots(other, per_guild)].sum() - total
        confidence[int(t)] = float(1.0 / (1.0 + np.exp(-gap)))
    return balanced, confidence


def _slots(guilds: np.ndarray, per_guild: int) -> np.ndarray:
    """Any one-to-one slot per tile for a layout with per_guild tiles of each guild (costs are equal within a guild)."""
    slots = np.empty(len(guilds), np.int64)
    for g in range(int(guilds.max()) + 1):
        members = np.flatnonzero(guilds == g)
        slots[members] = g * per_guild + np.arange(len(members))
    return slots


def assignment(cost: np.ndarray) -> np.ndarray:
    """Column of each row in the cheapest one-to-one assignment of a square cost matrix (SciPy's Hungarian solver)."""
    rows, cols = linear_sum_assignment(cost)
    out = np.empty(len(cost), np.int64)
    out[rows] = cols
    return out


# ----------------------------------------------------------------------------- icons


_OTHERS = np.array([[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]])


#: a tile's icon as the search reads it: the lot, a confidence, and the tile's lots from likeliest icon to least
IconChoice = tuple[int, float, tuple[int, ...]]


def read_icon_lots(
    patches: np.ndarray,
    colours: dict[str, str],
    occupied: np.ndarray | None = None,
    icon_like: np.ndarray | None = None,
) -> dict[str, IconChoice]:
    """Icon lot per tile, a confidence in [0, 1], and the tile's lots from likeliest icon to least.

    ``patches`` are canonical lots (80, s, s, 3); ``occupied`` (80 probabilities
    of a piece) keeps pieces from being taken for icons.  Per guild, each
    tile's choice minimises (distance to the other tiles' icons) minus (how
    odd the lot is within its own tile), found by a few rounds of coordinate
    descent from the oddest free lot of each tile.

    With the first look's ``icon_like``, a tile whose free lots all look plain
    (see :func:`_hidden_icons`) has its icon under one of its pieces, and the
    piece that looks most like an icon is taken: a dome leaves the icon's rim
    in sight.  A tower hides it whole, so between towers (or a tower and a
    dome) it is a guess, and the confidence says so.
    """
    occupied = np.zeros(80) if occupied is None else np.asarray(occupied, np.float64)
    setup_board = is_setup_board(occupied)
    profiles = radial_profiles(patches)
    result: dict[str, IconChoice] = {}
    by_colour: dict[str, list[int]] = {}
    for t, key in enumerate(TILE_KEYS):
        by_colour.setdefault(colours[key], []).append(t)
    for tiles in by_colour.values():
        ids = TILE_LOT_IDS[tiles]  # (n, 4)
        prof = profiles[ids.ravel()].reshape(len(tiles), 4, *profiles.shape[1:])
        # oddness: distance of a lot to the median of its tile's other three
        trio = prof[:, _OTHERS]  # (n, 4, 3, rings, 4)
        others = trio.sum(2) - trio.max(2) - trio.min(2)  # their median
        odd = np.minimum(np.linalg.norm(prof - others, axis=-1), 40.0).mean(-1)
        piece = occupied[ids]
        if icon_like is not None:
            base = 4.0 * np.log(np.clip(np.asarray(icon_like)[ids], 1e-4, 1.0)) + 0.2 * odd
        else:
            base = odd * (1.0 - piece) - 30.0 * piece  # a piece can hide the icon, never be it
        choice = base.argmax(1)
        n = len(tiles)
        flat = prof.reshape(n * 4, *prof.shape[2:])
        pair = profile_distances(flat, flat).reshape(n, 4, n, 4)
        score = base.copy()
        for _ in range(2 if n >= 2 else 0):
            # each tile's candidates against the other tiles' current icons (all tiles at once)
            against = pair[:, :, np.arange(n), choice]  # (n, 4, n)
            self_term = against[np.arange(n), :, np.arange(n)]  # (n, 4)
            consistency = (against.sum(2) - self_term) / (n - 1)
            score = base - 0.5 * consistency
            choice = score.argmax(1)
        hidden = _hidden_icons(piece, icon_like, ids, pair, choice)
        seen_score = score  # the ranking's tie-break: the free lots' scores before the hidden mask
        if hidden.any():
            score = score.copy()
            score[hidden] = np.where(piece[hidden] > 0.5, score[hidden], -np.inf)
            choice = score.argmax(1)
        chosen, conf = ids[np.arange(len(tiles)), choice], _icon_confidence(score, piece, choice)
        if icon_like is not None:  # chosen for matching the guild more than for looking like an icon
            chosen_like = np.asarray(icon_like)[chosen]
            conf = np.minimum(conf, ICON_LOOK_FLOOR + ICON_LOOK_WEIGHT * chosen_like)
            if setup_board:
                conf = _doubt_disagreeing_icons(patches, ids, choice, piece, chosen_like, conf)
        rankings = np.take_along_axis(ids, np.lexsort((-seen_score, -score), axis=-1), axis=1).tolist()
        if setup_board:
            chosen, rankings = _icons_the_guild_agrees_on(patches, ids, piece, chosen, conf, rankings)
            conf = _doubt_a_doubted_guild(occupied[chosen], conf)
        for t, lot, sure, ranking in zip(tiles, chosen.tolist(), conf.tolist(), rankings):
            result[TILE_KEYS[t]] = (lot, sure, tuple(ranking))
    return result


def _icon_confidence(score: np.ndarray, piece: np.ndarray, choice: np.ndarray) -> np.ndarray:
    """Each tile's (row's) icon confidence from the margin between its two best scores, lower when a
    piece is chosen or a piece on the tile makes the margin small."""
    ordered = np.sort(score, axis=1)[:, ::-1]
    with np.errstate(invalid="ignore"):
        margin = np.where(np.isfinite(ordered[:, 1]), ordered[:, 0] - ordered[:, 1], 10.0)
    conf = 1.0 / (1.0 + np.exp(-(margin - 2.0) / 1.5))
    doubted = (piece[np.arange(len(choice)), choice] > 0.5) | ((piece.max(axis=1) > 0.5) & (margin < 4.0))
    return np.where(doubted, conf * 0.7, conf)  # type: ignore[no-any-return]


#: an icon lot the first look doubts is never sure: its confidence is at most FLOOR + WEIGHT x its icon probability.
#: On made-up art every icon read wrong with confidence 0.9 or more had an icon probability below 0.5, and
#: on the four editions only about one icon in a hundred does (see docs/vision.md)
ICON_LOOK_FLOOR, ICON_LOOK_WEIGHT = 0.6, 0.6


#: a chosen icon the first look rates below this is checked against the guild's other icons in view,
#: on a board read as holding at most AGREEMENT_CHECKED_PIECES pieces (the setup board the app keeps;
#: print the first look takes for a piece included)...
AGREEMENT_CHECKED_BELOW = 0.95
AGREEMENT_CHECKED_PIECES = 3


def is_setup_board(piece: np.ndarray) -> bool:
    """Whether a board with these piece probabilities (80) holds at most AGREEMENT_CHECKED_PIECES pieces:
    the setup board the app keeps its tiles from, or one a first piece or two have just joined."""
    return int((np.asarray(piece) > 0.5).sum()) <= AGREEMENT_CHECKED_PIECES
#: ...and when another free lot of its tile matches them better, it is reported at most this sure
#: (below the app's min_confidence: the setup asks about the tile, and play settles it)
DISAGREEING_ICON_CAP = 0.7


def _doubt_disagreeing_icons(patches: np.ndarray, ids: np.ndarray, choice: np.ndarray, piece: np.ndarray,
                             chosen_icon_like: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """The icon confidences of one guild's tiles (rows of ``ids``), capped where the choice disagrees with
    the guild.

    Why: the first look learned what icons usually look like, and on art
    where they look otherwise it can be sure of the wrong lot.  A black
    pyramid printed in black on a dark card loses to a lighter city block:
    on 120 empty made-up-art boards, 46 of 95 such icons were read wrong,
    15 of them at 0.9 or more, and the app trusts a sure setup tile for the
    whole game.  The guild's five tiles carry one print, so an icon that
    another lot of its own tile matches better than itself, measured against
    the icons chosen on the other tiles, is doubtful whatever the first look
    says.  Only choices the first look doubts a little are checked, and only
    on a board with next to no pieces: that is the board the app keeps its
    tiles from.  With pieces about, their shadows and leaning tops disturb
    the prints: on game scenes of the four editions the check ran on 2.6
    tiles a frame, capped right ones and cost 5 ms a reading.
    """
    rows = np.arange(len(ids))
    in_view = piece[rows, choice] < 0.5
    checked = in_view & (conf > DISAGREEING_ICON_CAP) & (chosen_icon_like < AGREEMENT_CHECKED_BELOW)
    if not checked.any() or in_view.sum() < 3:
        return conf
    prints = print_departures(patches, ids)
    tiles, icons = np.flatnonzero(checked), np.flatnonzero(in_view)
    s = prints.shape[2]
    # every lot of the checked tiles against every icon in view at once; a tile is not its own reference
    agreement = print_agreement(prints[tiles].reshape(-1, s, s, 3), prints[icons, choice[icons]])
    agreement = agreement.reshape(len(tiles), 4, len(icons))
    own = (icons[None, :] == tiles[:, None])[:, None, :]
    agreement = np.where(own, 0.0, agreement).sum(2) / (len(icons) - own.sum(2))
    free = (piece[tiles] < 0.5) & (np.arange(4)[None] != choice[tiles][:, None])
    rival = np.where(free, agreement, -np.inf).max(1)
    disagrees = rival > agreement[np.arange(len(tiles)), choice[tiles]]
    out = conf.copy()
    out[tiles[disagrees]] = np.minimum(out[tiles[disagrees]], DISAGREEING_ICON_CAP)
    return out


#: on a setup board, a guild with at least this many icons in view read below GUILD_AGREEMENT_OVERRIDES_BELOW
#: has its other icons reported at most DISAGREEING_ICON_CAP
GUILD_DOUBTED_ICONS = 2


def _doubt_a_doubted_guild(piece_on_icon: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """One guild's icon confidences, each capped at DISAGREEING_ICON_CAP when GUILD_DOUBTED_ICONS of
    its icons in view (no piece on the chosen lot) are read unsurely; the choices stay.

    Why: a guild's five tiles carry one icon print, so a reader that cannot
    find it on two of them has not learned this art's print, and its sure
    answers on the other three are luck more than sight.  On the first
    frames of the 134 app-bench games (docs/vision.md), 12 tiles were read
    wrong at the app's bar (0.75) or more, 11 of them black tiles of
    made-up art, whose dark icon on a dark card loses to lighter city
    blocks.  The app keeps its setup tiles for the whole game, so legal
    builds on such a tile were warned about (game 3705: four warnings).
    The cap takes 9 of the 12 below the bar, and 19 of the 2 452 tiles
    read right.  Capped, the setup asks the players to check the guild's
    tiles, and play settles the icons (``Referee._reseat_icon``).
    """
    in_view = piece_on_icon < 0.5
    if int((in_view & (conf < GUILD_AGREEMENT_OVERRIDES_BELOW)).sum()) < GUILD_DOUBTED_ICONS:
        return conf
    return np.minimum(conf, DISAGREEING_ICON_CAP)  # type: ignore[no-any-return]


#: a tile read less surely than this (the app's ``min_confidence``: the setup asks about it) takes the icon
#: lot its guild's prints agree on...
GUILD_AGREEMENT_OVERRIDES_BELOW = 0.75
#: ...when no other lot of the tile makes the guild agree within this much per other tile (print_agreement
#: units, summed over the pairs the tile is in)
GUILD_AGREEMENT_MARGIN = 0.25
#: the guild's free tiles are searched together only when there are this few (4 ** n choices)
GUILD_AGREEMENT_MOST_TILES = 7


def _icons_the_guild_agrees_on(patches: np.ndarray, ids: np.ndarray, piece: np.ndarray, chosen: np.ndarray,
                               conf: np.ndarray, rankings: list[list[int]]) -> tuple[np.ndarray, list[list[int]]]:
    """One guild's icon lots and rankings (rows of ``ids``), an unsure free tile's taken from the lot its
    guild's prints clearly agree on (guild_print_choice).

    Why: the first look learned what icons usually look like; on art where
    they look otherwise (a dark print on a dark card beside a lighter
    decoration) it chooses lots that do not match each other, and says it
    is unsure.  The confidence stays as it was: the app still asks about
    the tile, and play still settles it.
    """
    free = np.flatnonzero(~(piece > 0.5).any(1))
    if not (conf[free] < GUILD_AGREEMENT_OVERRIDES_BELOW).any():
        return chosen, rankings
    agreed = guild_print_choice(patches, ids[free])
    if agreed is None:
        return chosen, rankings
    order, clear = agreed
    chosen, rankings = chosen.copy(), list(rankings)
    for t, row in enumerate(free):
        lot = int(ids[row, order[t, 0]])
        if clear[t] and lot != chosen[row] and conf[row] < GUILD_AGREEMENT_OVERRIDES_BELOW:
            chosen[row] = lot
            rankings[row] = [int(ids[row, k]) for k in order[t]]
    return chosen, rankings


def guild_print_choice(patches: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For each tile (a row of ``ids``, one guild's tiles) its four columns from likeliest icon to least, by
    how well their print agrees with the other tiles' best lots, and whether the likeliest is clear; None
    for too few or too many tiles.

    Why: a guild's tiles all carry one icon print, whatever the art, and
    the rest of a card (streets, and whatever decoration an edition adds)
    differs from lot to lot or is the same on all four.  Every combination
    of one lot per tile is scored by the summed print_agreement of its
    pairs; a tile's margin is how much the best combination beats the best
    one with another lot for it, and it is clear at GUILD_AGREEMENT_MARGIN
    per other tile.  On 240 empty made-up-art boards (docs/vision.md, "The
    print the guild agrees on") the lots clear by that margin were the
    icon on 4 267 of 4 273 tiles.
    """
    n = len(ids)
    if n < 3 or n > GUILD_AGREEMENT_MOST_TILES:
        return None
    prints = print_departures(patches, ids).reshape(n * 4, *patches.shape[1:])
    agreement = print_agreement(prints, prints)
    agreement = 0.5 * (agreement + agreement.T)
    combos = np.array(np.meshgrid(*[np.arange(4)] * n, indexing="ij")).reshape(n, -1).T  # (4 ** n, n)
    lots = combos + 4 * np.arange(n)
    total = sum(agreement[lots[:, i], lots[:, j]] for i in range(n) for j in range(i + 1, n))
    best_with = np.array([[total[combos[:, t] == k].max() for k in range(4)] for t in range(n)])  # (n, 4)
    order = np.argsort(-best_with, axis=1, kind="stable")
    rows = np.arange(n)
    margin = best_with[rows, order[:, 0]] - best_with[rows, order[:, 1]]
    return order, margin >= GUILD_AGREEMENT_MARGIN * (n - 1)


def icons_in_print(patches: np.ndarray, colours: dict[str, str], guilds: Collection[str] = GUILDS) -> dict[str, int]:
    """The tiles of ``guilds`` whose icon lot their guild's prints clearly agree on (guild_print_choice,
    every lot a candidate), and that lot."""
    out: dict[str, int] = {}
    for guild in guilds:
        tiles = [t for t, key in enumerate(TILE_KEYS) if colours[key] == guild]
        agreed = guild_print_choice(patches, TILE_LOT_IDS[tiles])
        if agreed is None:
            continue
        order, clear = agreed
        for t, tile in enumerate(tiles):
            if clear[t]:
                out[TILE_KEYS[tile]] = int(TILE_LOT_IDS[tile, order[t, 0]])
    return out


def pixel_median(stack: np.ndarray) -> np.ndarray:
    """Per-pixel median over the first axis of a stack of images (np.median's, about 1.4 times as fast).

    Why: the templates take a median over 10 to 20 lots per guild twice a
    frame; one sort of every pixel's few values along the first axis beats
    np.median's per-pixel partitions (50 against 69 µs for 15 lots of 16×16).
    """
    return median_along(stack.reshape(len(stack), -1), 0).reshape(stack.shape[1:])


def median_along(values: np.ndarray, axis: int) -> np.ndarray:
    """np.median(values, axis) to the bit, by one sort along that axis.

    Why: np.median partitions each row on its own; for the reader's many
    short rows (20 tiles of a few hundred pixels each, a few thousand
    table pixels by channel) one sort is three to eight times faster.
    """
    ordered = np.sort(values, axis=axis)
    n = ordered.shape[axis]
    low = np.take(ordered, (n - 1) // 2, axis=axis)
    high = np.take(ordered, n // 2, axis=axis)
    return (0.5 * (low + high)).astype(values.dtype)  # type: ignore[no-any-return]


def print_departures(patches: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """(len(ids), 4, s, s, 3): each canonical lot of the tiles ``ids`` (rows of four lot ids) less its
    tile's plain print, the lot's rim left out.

    The plain print is the per-pixel median of the tile's four canonical
    lots (streets, border and card are the same on all four; the icon is on
    one).  Each pixel is compared with the nearest value of that median
    within a pixel, since hand-laid tiles put a street line a pixel apart
    in each lot; the rim shows the gaps between tiles and the neighbours.
    """
    lots = patches[ids].astype(np.float32)  # (n, 4, s, s, 3)
    s = lots.shape[2]
    plain = np.pad(pixel_median(np.moveaxis(lots, 1, 0)), ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
    best = lots - plain[:, None, 1 : s + 1, 1 : s + 1]
    best_norm = (best**2).sum(-1, keepdims=True)
    for dy, dx in ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)):
        departure = lots - plain[:, None, dy : dy + s, dx : dx + s]
        norm = (departure**2).sum(-1, keepdims=True)
        best = np.where(norm < best_norm, departure, best)
        best_norm = np.minimum(norm, best_norm)
    rim = max(1, s // 8)
    best[:, :, :rim] = 0.0
    best[:, :, s - rim :] = 0.0
    best[:, :, :, :rim] = 0.0
    best[:, :, :, s - rim :] = 0.0
    return best


def print_agreement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)): how alike two prints (departures from print_departures) are, in [-1, 1].

    The best cosine over b's quarter turns and shifts of up to a third of a
    lot, since a guild's icon is printed at any turn and a little off the
    lot's centre on each tile.  Plain lots hold only noise, which matches
    nothing, so five plain lots do not look like five icons.
    """
    s = a.shape[1]
    reach = max(1, round(s / 3))
    size = scipy.fft.next_fast_len(s + reach, real=True)
    spectrum_a = scipy.fft.rfft2(np.moveaxis(a, -1, 0), s=(size, size), axes=(2, 3))  # (3, n, size, size/2+1)
    turned = np.stack([np.rot90(b, k, axes=(1, 2)) for k in range(4)], axis=1)  # (m, 4, s, s, 3)
    spectrum_b = np.conj(scipy.fft.rfft2(np.moveaxis(turned, -1, 0), s=(size, size), axes=(3, 4)))
    product = sum(spectrum_a[c][:, None, None] * spectrum_b[c][None] for c in range(len(spectrum_a)))
    correlation = scipy.fft.irfft2(product, s=(size, size), axes=(3, 4))
    shifts = np.r_[0 : reach + 1, size - reach : size]
    best = correlation[..., shifts, :][..., shifts].reshape(len(a), len(b), -1).max(-1)
    norms = np.sqrt((a**2).sum(axis=(1, 2, 3)))[:, None] * np.sqrt((b**2).sum(axis=(1, 2, 3)))[None]
    return best / np.maximum(norms, 1e-6)  # type: ignore[no-any-return]


#: a free lot less likely an icon than this to the first look may be plain print...
HIDDEN_ICON_BELOW = 0.1
#: ...if it is also this many times farther from the guild's icons than those icons are from each other
HIDDEN_ICON_FARTHER = 1.5


def _hidden_icons(piece: np.ndarray, icon_like: np.ndarray | None, ids: np.ndarray, pair: np.ndarray,
                  choice: np.ndarray) -> np.ndarray:
    """Which tiles (rows of ``ids``) have pieces and no free lot that could be their icon.

    Two tests must agree that a free lot is plain.  The first look's icon
    probability is fitted on known art and runs low on art it has not seen;
    the distance to the icons chosen in view on the other tiles of the guild
    is measured on this board's own print.  The first alone took visible
    icons of made-up art for hidden ones.  The icons measured against are the
    chosen free lots the first look vouches for, or failing those every
    chosen free lot.
    """
    if icon_like is None:
        return np.zeros(len(ids), bool)
    built = piece > 0.5
    looks = np.where(built, 0.0, np.asarray(icon_like)[ids])
    icon_looking = looks.max(1) >= HIDDEN_ICON_BELOW
    if not (built.any(1) & ~icon_looking).any():
        return np.zeros(len(ids), bool)
    rows = np.arange(len(ids))
    in_view = ~built[rows, choice]
    vouched = in_view & (looks[rows, choice] >= HIDDEN_ICON_BELOW)
    refs = np.flatnonzero(vouched if vouched.sum() >= 2 else in_view)
    if len(refs) < 2:
        return np.zeros(len(ids), bool)
    to_refs = pair[:, :, refs, choice[refs]]  # (n, 4, refs): every lot against each reference icon
    own = refs[None, None, :] == rows[:, None, None]  # a tile is not its own reference
    distance = np.where(own, 0.0, to_refs).sum(2) / np.maximum((~own).sum(2), 1)
    apart = small_percentile(distance[refs, choice[refs]], 50.0)
    near_icons = np.where(built, np.inf, distance).min(1) <= HIDDEN_ICON_FARTHER * apart
    return built.any(1) & ~icon_looking & ~near_icons


def read_tiles(
    lab: np.ndarray,
    tile_px: int,
    occupied: np.ndarray | None = None,
    patches: np.ndarray | None = None,
) -> dict[str, TileReading]:
    """Every tile's colour and icon lot from the white-balanced top-down Lab board."""
    patches = lot_patches(lab, tile_px) if patches is None else patches
    free = None if occupied is None else 1.0 - np.asarray(occupied)
    colours = read_tile_colours(lab, tile_px, free)
    icons = read_icon_lots(patches, {k: c for k, (c, _) in colours.items()}, occupied)
    return {key: tile_reading(colours[key], icons[key]) for key in TILE_KEYS}


def tile_reading(colour: tuple[str, float], icon: IconChoice, colour_probs: np.ndarray | None = None) -> TileReading:
    """A tile from its colour (and confidence) and its icon (lot, confidence, ranking) as the stages give them."""
    probs = () if colour_probs is None else tuple(float(p) for p in colour_probs)
    return TileReading(colour[0], icon[0], colour[1], icon[1], icon[2], probs)
