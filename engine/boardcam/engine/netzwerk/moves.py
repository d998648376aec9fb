"""The miner: initial placement, steps, jumps over opponents' miners, and collecting stones."""

from __future__ import annotations

from dataclasses import dataclass

from boardcam.engine.netzwerk.board import DIRECTIONS, NO_FIELD
from boardcam.engine.netzwerk.position import Position
from boardcam.engine.netzwerk.rules import DESERT, JUMP, MOVE, PLACEMENT, Violation

#: "when 2 or 3 opponents' miners stand in a line ... the miner may jump over all of them"
MAX_JUMPED = 3


@dataclass(frozen=True)
class MinerMove:
    """Where the miner goes: ``to``, over which miners' fields (``over``, empty for a step), or a placement."""

    to: int
    over: tuple[int, ...] = ()
    place: bool = False

    def to_json(self, position: Position) -> dict[str, object]:
        layout = position.layout
        doc: dict[str, object] = {"to": layout.key(self.to)}
        if self.place:
            doc["place"] = True
        if self.over:
            doc["over"] = [layout.key(f) for f in self.over]
        stones = position.stones[self.to]
        if stones:
            doc["collects"] = layout.fields[self.to].color
        return doc


def miner_moves(position: Position, player: int) -> tuple[MinerMove, ...]:
    """Every legal placement (before the miner is on the board) or move, in field-id order.

    An empty tuple after placement means the miner is blocked: it stays and
    the turn goes on to building (the only case in which it does not move).
    """
    layout = position.layout
    occupied = position.miner_at()
    here = position.miners[player]
    if here is None:
        return tuple(
            MinerMove(f, (), True)
            for f, field in enumerate(layout.fields)
            if not field.is_desert and f not in occupied
        )
    found: list[MinerMove] = []
    for direction in range(len(DIRECTIONS)):
        target = layout.neighbours[here][direction]
        over: list[int] = []
        while target != NO_FIELD and target in occupied and len(over) < MAX_JUMPED:
            over.append(target)
            target = layout.neighbours[target][direction]
        if target == NO_FIELD or target in occupied or layout.fields[target].is_desert:
            continue
        found.append(MinerMove(target, tuple(over)))
    found.sort(key=lambda m: m.to)
    return tuple(found)


def miner_violations(position: Position, player: int, target: int | None) -> list[Violation]:
    """Why sending ``player``'s miner to ``target`` (None: it stays) is not allowed; empty when it is."""
    layout = position.layout
    legal = miner_moves(position, player)
    here = position.miners[player]
    if target is None:
        if not legal:
            return []
        rule = PLACEMENT if here is None else MOVE
        what = "place the miner" if here is None else "move the miner (it is not blocked)"
        return [Violation(rule, f"the player must {what}")]
    name = layout.key(target)
    if any(m.to == target for m in legal):
        return []
    field = layout.fields[target]
    occupied = position.miner_at()
    if here is None:
        if field.is_desert:
            return [Violation(DESERT, f"{name} is a desert: no miner may stand there", name)]
        return [Violation(PLACEMENT, f"{name} already holds a miner: two miners may not start on one field", name)]
    if field.is_desert:
        return [Violation(DESERT, f"{name} is a desert: a miner never moves onto one", name)]
    if target in occupied:
        return [Violation(MOVE, f"{name} holds a miner: a miner never moves onto another miner", name)]
    line = _line_to(position, here, target)
    if line is None:
        return [Violation(MOVE, f"{name} is neither a neighbouring field nor the end of a jump", name)]
    if not line:
        return [Violation(MOVE, f"{name} is a neighbouring field but the move is not allowed", name)]
    gaps = [layout.key(f) for f in line if f not in occupied]
    if gaps:
        return [Violation(JUMP, f"{name}: a jump passes only over miners standing in a line, "
                                f"{gaps[0]} holds none", name)]
    return [Violation(JUMP, f"{name}: a jump passes over at most {MAX_JUMPED} miners", name)]


def _line_to(position: Position, start: int, target: int) -> list[int] | None:
    """The fields strictly between ``start`` and ``target`` on a straight line, or None if not on one."""
    layout = position.layout
    for direction in range(len(DIRECTIONS)):
        between: list[int] = []
        current = layout.neighbours[start][direction]
        while current != NO_FIELD:
            if current == target:
                return between
            between.append(current)
            current = layout.neighbours[current][direction]
    return None


def collected_color(position: Position, field_id: int) -> int | None:
    """The colour index a miner arriving on ``field_id`` collects (1 stone when the field has 1 or 2), else None."""
    if position.stones[field_id] > 0:
        return position.layout.color_of[field_id]
    return None
