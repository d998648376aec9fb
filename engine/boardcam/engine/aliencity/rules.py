"""Placement rules 1–5: one analysis pass per position, then cheap per-lot answers.

Everything a placement depends on except the piece — occupancy (rule 1),
the street network (rule 4) and the icon lot (rule 5) — is computed once per
position by :class:`Analysis`, with one articulation-point pass over the
streets instead of a flood fill per lot.  The piece only enters through
rules 2 and 3, which are table look-ups.  See docs/rules.md for the rulebook
sentence behind every decision here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from boardcam.engine.aliencity.board import (
    LOT_COUNT,
    LOT_NAMES,
    NEIGHBOURS,
    TILE_LOTS,
    TILE_OF,
)
from boardcam.engine.aliencity.pieces import ALL_PIECES, Piece, Violation
from boardcam.engine.aliencity.position import Position
from boardcam.engine.errors import FormatError

#: Every piece of the game, both players' supplies together.
FULL_SET: Counter[Piece] = Counter(
    {
        Piece("tower", "red"): 5,
        Piece("tower", "blue"): 5,
        Piece("tower", "green"): 4,
        **{Piece("dome", color): 6 for color in ("red", "blue", "green", "black")},
    }
)


@dataclass(frozen=True)
class Ruleset:
    """The two ways the game is played.

    ``rulebook``: the printed rules.  ``abstract-play``: as the online
    implementation plays them — a dome placed through rule 2's fallback is
    not bound by rule 3, and a tie for the nearest red or blue tower never
    pays a green bonus.
    """

    name: str
    fallback_dome_bound_by_rule3: bool
    tie_pays_sole_owner: bool

    @staticmethod
    def named(name: str) -> Ruleset:
        try:
            return RULESETS[name]
        except KeyError:
            raise FormatError(
                f"rules: {name!r} is not one of {', '.join(sorted(RULESETS))}"
            ) from None


RULEBOOK = Ruleset("rulebook", fallback_dome_bound_by_rule3=True, tie_pays_sole_owner=True)
ABSTRACT_PLAY = Ruleset("abstract-play", fallback_dome_bound_by_rule3=False, tie_pays_sole_owner=False)
RULESETS = {rules.name: rules for rules in (RULEBOOK, ABSTRACT_PLAY)}


#: how many lots border each lot: a lot's street degree before any building
DEGREE: tuple[int, ...] = tuple(len(neighbours) for neighbours in NEIGHBOURS)


def remaining_pieces(position: Position) -> Counter[Piece]:
    """Pieces not on the board: both supplies together (rule 5 asks about either player's)."""
    built = Counter((structure.kind, structure.color) for structure in position.structures.values())
    # zero and negative counts dropped (a position may hold too many)
    return Counter({piece: left for piece, count in FULL_SET.items()
                    if (left := count - built[(piece.kind, piece.color)]) > 0})


def _street_articulation(is_street: list[bool]) -> list[int]:
    """For every street lot: into how many networks its street network falls
    if that lot is built on (0 or 1 means no split).  One iterative Tarjan pass."""
    disc = [-1] * LOT_COUNT
    low = [0] * LOT_COUNT
    pieces_after = [1] * LOT_COUNT
    clock = 0
    for root in range(LOT_COUNT):
        if not is_street[root] or disc[root] != -1:
            continue
        disc[root] = low[root] = clock
        clock += 1
        root_children = 0
        stack = [(root, -1, iter(NEIGHBOURS[root]))]
        while stack:
            node, parent, neighbours = stack[-1]
            descended = False
            for nb in neighbours:
                if not is_street[nb]:
                    continue
                if disc[nb] == -1:
                    disc[nb] = low[nb] = clock
                    clock += 1
                    stack.append((nb, node, iter(NEIGHBOURS[nb])))
                    descended = True
                    break
                if nb != parent and disc[nb] < low[node]:
                    low[node] = disc[nb]
            if descended:
                continue
            stack.pop()
            if parent == -1:
                continue
            if low[node] < low[parent]:
                low[parent] = low[node]
            if parent == root:
                root_children += 1
            elif low[node] >= disc[parent]:
                pieces_after[parent] += 1
        pieces_after[root] = root_children
    return pieces_after


class Analysis:
    """What a position allows, piece by piece and lot by lot.

    Built once per position; answers ``violations(lot, piece)`` and
    ``legal_lots(piece)`` without touching the street graph again.
    """

    __slots__ = (
        "position", "rules", "occupied", "street_ok", "split_into", "cuts_off",
        "faces_street", "color_open", "remaining", "icon_blockers", "tile_count",
        "candidates", "_legal_cache",
    )

    def __init__(self, position: Position, rules: Ruleset):
        self.position = position
        self.rules = rules
        structures = position.structures
        occupied = [False] * LOT_COUNT
        street_degree = list(DEGREE)
        tile_count = dict.fromkeys(TILE_LOTS, 0)
        for lot in structures:
            occupied[lot] = True
            tile_count[TILE_OF[lot]] += 1
            for nb in NEIGHBOURS[lot]:
                street_degree[nb] -= 1
        is_street = [not o for o in occupied]
        self.occupied = occupied
        self.split_into = _street_articulation(is_street)
        # Rule 4, judged only for what a build makes worse (positions may already be broken).
        self.cuts_off: list[tuple[int, ...]] = [()] * LOT_COUNT
        self.faces_street = [False] * LOT_COUNT
        street_ok = [False] * LOT_COUNT
        for lot in range(LOT_COUNT):
            if occupied[lot]:
                continue
            self.faces_street[lot] = street_degree[lot] > 0
            self.cuts_off[lot] = tuple(
                nb for nb in NEIGHBOURS[lot] if occupied[nb] and street_degree[nb] == 1
            )
            street_ok[lot] = (
                self.split_into[lot] < 2 and self.faces_street[lot] and not self.cuts_off[lot]
            )
        self.street_ok = street_ok
        self.tile_count = tile_count
        # Rule 2's fallback: is there still an open lot of this colour that could take the dome?
        # Rule 5 never decides this (docs/rules.md shows why), so street-legal lots answer it.
        self.color_open: dict[str, list[int]] = {c: [] for c in ("red", "blue", "green", "black")}
        for lot in range(LOT_COUNT):
            if street_ok[lot]:
                self.color_open[position.tile_color(lot)].append(lot)
        self.remaining = remaining_pieces(position)
        # whether a lot takes some piece depends on its tile's colour and count only: asked once per kind of tile
        takes: dict[tuple[str, bool], bool] = {}
        self.icon_blockers: dict[int, tuple[int, ...]] = {}
        for key, tile in position.tiles.items():
            icon = tile.icon
            if occupied[icon]:
                continue
            tile_state = (tile.color, self.tile_count[key] >= 2)
            if tile_state not in takes:
                takes[tile_state] = self._takes_some_piece(icon)  # any lot of the tile would answer alike
            self.icon_blockers[icon] = tuple(
                lot for lot in TILE_LOTS[key] if lot != icon and street_ok[lot]
            ) if takes[tile_state] else ()
        #: Lots that pass every piece-independent rule (1, 4 and 5).
        self.candidates = [lot for lot in range(LOT_COUNT) if street_ok[lot] and not self.icon_blockers.get(lot)]
        self._legal_cache: dict[Piece, list[int]] = {}

    # --- per-rule checks ------------------------------------------------------

    def _rule2_ok(self, piece: Piece, lot: int) -> bool:
        return (
            piece.kind != "dome"
            or piece.color == self.position.tile_color(lot)
            or not self.color_open[piece.color]
        )

    def _rule3_ok(self, piece: Piece, lot: int) -> bool:
        tile_color = self.position.tile_color(lot)
        if piece.color == tile_color or self.tile_count[TILE_OF[lot]] >= 2:
            return True
        if piece.kind == "tower":
            return tile_color == "black"
        # A dome of another colour: only through rule 2's fallback.
        return not self.rules.fallback_dome_bound_by_rule3 and not self.color_open[piece.color]

    def _takes_some_piece(self, lot: int) -> bool:
        return any(
            self._rule2_ok(piece, lot) and self._rule3_ok(piece, lot) for piece in self.remaining
        )

    def _rule5_ok(self, lot: int) -> bool:
        return not self.icon_blockers.get(lot)

    # --- answers ---------------------------------------------------------------

    def is_legal(self, lot: int, piece: Piece) -> bool:
        return (
            self.street_ok[lot]
            and self._rule2_ok(piece, lot)
            and self._rule3_ok(piece, lot)
            and self._rule5_ok(lot)
        )

    def legal_lots(self, piece: Piece) -> list[int]:
        cached = self._legal_cache.get(piece)
        if cached is None:
            cached = [
                lot for lot in self.candidates
                if self._rule2_ok(piece, lot) and self._rule3_ok(piece, lot)
            ]
            self._legal_cache[piece] = cached
        return cached

    def legal_map(self) -> dict[Piece, list[int]]:
        return {piece: self.legal_lots(piece) for piece in ALL_PIECES}

    def any_legal(self, pieces: Counter[Piece]) -> bool:
        return any(self.legal_lots(piece) for piece, count in pieces.items() if count > 0)

    def violations(self, lot: int, piece: Piece) -> list[Violation]:
        """Every placement rule that building ``piece`` on ``lot`` breaks, in words."""
        position = self.position
        name = LOT_NAMES[lot]
        if self.occupied[lot]:
            return [Violation(1, lot, f"{name} already holds a {position.structures[lot].words}")]
        found: list[Violation] = []
        tile_key = TILE_OF[lot]
        tile_color = position.tile_color(lot)
        tile_name = f"the {tile_color} tile {LOT_NAMES[tile_key]}"
        if not self._rule2_ok(piece, lot):
            takers = [x for x in self.color_open[piece.color] if not self.icon_blockers.get(x)]
            open_lots = ", ".join(LOT_NAMES[x] for x in takers[:4])
            found.append(Violation(
                2, lot,
                f"a {piece.color} dome must go on a {piece.color} tile while one can take it "
                f"({open_lots}); {name} is on {tile_name}",
            ))
        if not self._rule3_ok(piece, lot):
            found.append(Violation(
                3, lot,
                f"the first two structures on {tile_name} must be {tile_color} "
                f"(it holds {self.tile_count[tile_key]}); a {piece.words} cannot go on {name} yet",
            ))
        found.extend(self._rule4_violations(lot))
        blockers = self.icon_blockers.get(lot)
        if blockers:
            found.append(Violation(
                5, lot,
                f"{name} shows the icon of {tile_name}; build first on "
                f"{' or '.join(LOT_NAMES[x] for x in blockers)}",
            ))
        return found

    def _rule4_violations(self, lot: int) -> list[Violation]:
        name = LOT_NAMES[lot]
        found = []
        if self.split_into[lot] >= 2:
            found.append(Violation(
                4, lot, f"building on {name} splits the streets into {self.split_into[lot]} networks"
            ))
        for cut in self.cuts_off[lot]:
            found.append(Violation(
                4, lot,
                f"building on {name} cuts the {self.position.structures[cut].words} on "
                f"{LOT_NAMES[cut]} off the streets",
            ))
        if not self.faces_street[lot]:
            found.append(Violation(4, lot, f"a structure on {name} would face no street"))
        return found
