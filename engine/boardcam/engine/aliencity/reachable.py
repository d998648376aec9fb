"""What no legal game can leave on the board: checks on a whole position, not on a move.

Why: a camera that reads one frame has no history to judge moves by, but
the rules still say what a board can look like after any legal game.  A
reading that breaks one of these is wrong somewhere (or the players broke a
rule earlier), and the vision uses that to reconsider its least sure lots.

Each check holds for every position of every legal game (the property
tests play thousands).  Rule 2's fallback lets a dome onto another guild's
tile, but only once no lot of its own colour could take it, and that
cannot change back: so such a dome is judged on the board without it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable
from dataclasses import dataclass

from boardcam.engine.aliencity.board import LOT_COUNT, LOT_NAMES, NEIGHBOURS, TILE_LOTS
from boardcam.engine.aliencity.game import CAPS_PER_PLAYER
from boardcam.engine.aliencity.pieces import PLAYERS, Tile
from boardcam.engine.aliencity.position import Position
from boardcam.engine.aliencity.rules import FULL_SET, RULEBOOK, Analysis, Ruleset


@dataclass(frozen=True)
class Impossibility:
    """One thing about a position that no legal game leads to, and the lots it concerns."""

    rule: str  # "supply", "rule 2", "rule 3", "rule 4" or "rule 5"
    lots: tuple[int, ...]
    reason: str
    # rule 2: the empty lots of the dome's own colour that could still take it.  Not among ``lots``
    # (nothing on them breaks a rule), but a structure missed there, or one beside it that closes its
    # street, is what would make the dome's fallback legal: where a reader looks for its misread.
    open_lots: tuple[int, ...] = ()

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"rule": self.rule, "lots": [LOT_NAMES[lot] for lot in self.lots],
                                  "reason": self.reason}
        if self.open_lots:
            out["open_lots"] = [LOT_NAMES[lot] for lot in self.open_lots]
        return out


def impossibilities(position: Position, rules: Ruleset = RULEBOOK) -> list[Impossibility]:
    """Everything about ``position`` that no legal game can leave on the board (empty when it is reachable
    as far as these checks see)."""
    return [
        *_beyond_the_set(position),
        *_street_breaks(position),
        *colour_impossibilities(position, rules),
        *_icon_lots_built_early(position, rules),
    ]


def colour_impossibilities(position: Position, rules: Ruleset = RULEBOOK) -> list[Impossibility]:
    """The impossibilities that a tile's colour decides (rules 2 and 3): what the vision checks a tile's
    colour against, without the costlier checks that do not depend on it."""
    return [*_domes_off_their_colour(position, rules), *_rule3_shortfalls(position, rules)]


def _beyond_the_set(position: Position) -> list[Impossibility]:
    """More of a piece, or of a player's caps, than the game has."""
    found: list[Impossibility] = []
    on_board = Counter(structure.piece for structure in position.structures.values())
    for piece, count in sorted(on_board.items()):
        if count > FULL_SET[piece]:
            lots = tuple(sorted(lot for lot, s in position.structures.items() if s.piece == piece))
            found.append(Impossibility("supply", lots, f"{count} {piece.words}s; the game has {FULL_SET[piece]}"))
    caps = Counter(s.cap for s in position.structures.values() if s.cap is not None)
    for player in PLAYERS:
        if caps[player] > CAPS_PER_PLAYER:
            lots = tuple(sorted(lot for lot, s in position.structures.items() if s.cap == player))
            found.append(Impossibility("supply", lots, f"{caps[player]} {player} caps; a player has {CAPS_PER_PLAYER}"))
    return found


def _street_breaks(position: Position) -> list[Impossibility]:
    """Rule 4 after every build: one street network, and every structure on it."""
    built = position.structures
    found: list[Impossibility] = []
    networks = _street_networks(built)
    if len(networks) > 1:
        largest = max(networks, key=len)
        cut_off = set().union(*(n for n in networks if n is not largest))
        edge = tuple(sorted({nb for lot in cut_off for nb in NEIGHBOURS[lot] if nb in built}))
        found.append(Impossibility("rule 4", edge, f"the streets are split into {len(networks)} networks"))
    for lot in sorted(built):
        if all(nb in built for nb in NEIGHBOURS[lot]):
            found.append(Impossibility("rule 4", (lot,), f"the structure on {LOT_NAMES[lot]} faces no street"))
    return found


def _street_networks(built: Container[int]) -> list[set[int]]:
    """The connected groups of empty lots (orthogonal neighbours)."""
    left = {lot for lot in range(LOT_COUNT) if lot not in built}
    networks: list[set[int]] = []
    while left:
        start = left.pop()
        network, stack = {start}, [start]
        while stack:
            for nb in NEIGHBOURS[stack.pop()]:
                if nb in left:
                    left.discard(nb)
                    network.add(nb)
                    stack.append(nb)
        networks.append(network)
    return networks


def _domes_off_their_colour(position: Position, rules: Ruleset) -> list[Impossibility]:
    """A dome on another guild's tile while a lot of its own colour could still take it (rule 2).

    The fallback opens when no empty lot of the dome's colour passes rule 4,
    and streets only shrink: a lot that passes now passed then.
    """
    found: list[Impossibility] = []
    for lot, structure in sorted(position.structures.items()):
        if structure.kind != "dome" or structure.color == position.tile_color(lot):
            continue
        open_lots = _analysis_without(position, lot, rules).color_open[structure.color]
        if open_lots:
            found.append(Impossibility("rule 2", (lot,),
                                       f"a {structure.color} dome on {LOT_NAMES[lot]} while "
                                       f"{LOT_NAMES[open_lots[0]]} could still take it", tuple(open_lots)))
    return found


def first_builds_fit(tile_colour: str, colours: Iterable[str]) -> bool:
    """Whether a tile can hold structures of these colours after legal builds (rule 3 on the whole tile).

    A red, blue or green tile's first two structures are its own colour, so
    it holds at least min(2, how many) of them whatever came later; a black
    tile takes towers of any colour first.
    """
    held = list(colours)
    if tile_colour == "black":
        return True
    return sum(colour == tile_colour for colour in held) >= min(len(held), 2)


def _rule3_shortfalls(position: Position, rules: Ruleset) -> list[Impossibility]:
    """A coloured tile whose first two structures cannot both have been its own colour (where rule 3
    judges it: see :func:`_bound_by_rule3`)."""
    found: list[Impossibility] = []
    for key, lots in TILE_LOTS.items():
        colour = position.tiles[key].color
        here = [lot for lot in lots if lot in position.structures]
        if colour == "black" or not here or not _bound_by_rule3(position, colour, here, rules):
            continue
        held = [position.structures[lot].color for lot in here]
        if not first_builds_fit(colour, held):
            found.append(Impossibility("rule 3", tuple(here), f"tile {LOT_NAMES[key]} is {colour} but holds "
                                       f"{held.count(colour)} {colour} of {len(here)}"))
    return found


def _bound_by_rule3(position: Position, colour: str, built: Iterable[int], rules: Ruleset) -> bool:
    """Whether rule 3 judges a tile of ``colour`` holding the structures on ``built``.

    Under abstract-play rules a dome placed through rule 2's fallback is not
    bound by rule 3, so a tile holding a dome of another colour is not judged.
    """
    return rules.fallback_dome_bound_by_rule3 or not any(
        position.structures[lot].kind == "dome" and position.structures[lot].color != colour for lot in built)


def _icon_lots_built_early(position: Position, rules: Ruleset) -> list[Impossibility]:
    """A built icon lot whose tile still has a lot that could take a piece.

    Rule 5 let the icon lot be built only when no other lot of the tile
    could be; a lot that could not take a piece then cannot now (streets
    and supplies only shrink).  So with the icon lot's structure taken
    away, no empty lot of its tile may be buildable.
    """
    found: list[Impossibility] = []
    for key, tile in position.tiles.items():
        icon = tile.icon
        if icon not in position.structures:
            continue
        empty = [lot for lot in TILE_LOTS[key] if lot not in position.structures]
        if not empty:
            continue
        blockers = _analysis_without(position, icon, rules).icon_blockers.get(icon, ())
        if blockers:
            names = ", ".join(LOT_NAMES[lot] for lot in blockers)
            found.append(Impossibility("rule 5", (icon, *blockers),
                                       f"the icon lot {LOT_NAMES[icon]} is built while {names} could still be"))
    return found


def possible_icon_lots(position: Position, key: int, rules: Ruleset = RULEBOOK) -> list[int]:
    """The lots of tile ``key`` that can hold its icon, given everything else on the board, in lot order.

    Why: a piece on the icon lot hides the icon from the camera, but the
    rules still narrow down where it is.  An empty lot can always be the
    icon.  A built lot can only if it can have been the tile's last build:
    rule 3 then leaves the tile's other structures holding its colour first
    (the check :func:`first_builds_fit`), and rule 5 leaves no empty lot of
    the tile that could take a piece on the board without it.  The tile's
    own ``icon`` is ignored.
    """
    lots = TILE_LOTS[key]
    colour = position.tiles[key].color
    built = [lot for lot in lots if lot in position.structures]
    has_empty = len(built) < len(lots)
    judged_by_rule3 = _bound_by_rule3(position, colour, built, rules)
    possible = []
    for lot in lots:
        if lot in built:
            others = (position.structures[other].color for other in built if other != lot)
            if judged_by_rule3 and not first_builds_fit(colour, others):
                continue
            if has_empty:
                moved = Position({**position.tiles, key: Tile(colour, lot)}, position.structures)
                if _analysis_without(moved, lot, rules).icon_blockers.get(lot):
                    continue
        possible.append(lot)
    return possible


def _analysis_without(position: Position, lot: int, rules: Ruleset) -> Analysis:
    """The rules' view of the board as it was before ``lot`` was built (everything else as it is now)."""
    before = dict(position.structures)
    del before[lot]
    return Analysis(Position(position.tiles, before), rules)
