"""A slow, literal reading of the placement rules: re-flood the streets for every question.

Independent of boardcam.engine.aliencity.rules so the property tests can
compare the fast analysis with the rulebook's words.
"""

from __future__ import annotations

from boardcam.engine.aliencity.rules import FULL_SET as FULL_SET_FOR_TESTS
from boardcam.engine.aliencity import NEIGHBOURS, TILE_LOTS, TILE_OF, Piece, Position


def streets_ok_after(position: Position, lot: int) -> bool:
    occupied = set(position.structures) | {lot}
    streets = [x for x in range(80) if x not in occupied]
    if streets:
        seen = {streets[0]}
        todo = [streets[0]]
        while todo:
            for nb in NEIGHBOURS[todo.pop()]:
                if nb not in occupied and nb not in seen:
                    seen.add(nb)
                    todo.append(nb)
        if len(seen) != len(streets):
            return False
    return all(any(nb not in occupied for nb in NEIGHBOURS[s]) for s in occupied)


class Reference:
    def __init__(self, position: Position, fallback_bound_by_rule3: bool = True):
        self.position = position
        self.bound = fallback_bound_by_rule3
        self.remaining = FULL_SET_FOR_TESTS.copy()
        for s in position.structures.values():
            self.remaining[s.piece] -= 1
        self._street = {}
        self._busy: set = set()

    def street(self, lot: int) -> bool:
        if lot not in self._street:
            self._street[lot] = lot not in self.position.structures and streets_ok_after(self.position, lot)
        return self._street[lot]

    def count(self, lot: int) -> int:
        return sum(1 for x in TILE_LOTS[TILE_OF[lot]] if x in self.position.structures)

    def legal(self, lot: int, piece: Piece) -> bool:
        key = (lot, piece)
        if key in self._busy:  # a question that depends on itself: not established
            return False
        self._busy.add(key)
        try:
            return self._legal(lot, piece)
        finally:
            self._busy.discard(key)

    def _legal(self, lot: int, piece: Piece) -> bool:
        if not self.street(lot):
            return False
        tile = self.position.tiles[TILE_OF[lot]]
        fallback = False
        if piece.kind == "dome" and piece.color != tile.color:
            own = [x for x in range(80) if self.position.tiles[TILE_OF[x]].color == piece.color]
            if any(self.legal(x, piece) for x in own):
                return False  # rule 2
            fallback = True
        if self.count(lot) < 2 and piece.color != tile.color:  # rule 3
            if piece.kind == "tower" and tile.color != "black":
                return False
            if piece.kind == "dome" and (self.bound or not fallback):
                return False
        if tile.icon == lot:  # rule 5
            for other in TILE_LOTS[TILE_OF[lot]]:
                if other != lot and any(
                    n > 0 and self.legal(other, p) for p, n in self.remaining.items()
                ):
                    return False
        return True
