"""Move inference: what happened between the last accepted position and a new one.

The camera sees positions, not moves.  One structure added (with or without a
cap) is a move to judge; anything else is reported plainly so that nothing
is lost: two structures at once, a structure removed, moved or changed, a
cap added without a build or removed, a cap of the wrong player's colour, a
piece the mover no longer has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boardcam.engine.aliencity.board import LOT_NAMES
from boardcam.engine.aliencity.game import Game
from boardcam.engine.aliencity.pieces import Move, Structure, other_player
from boardcam.engine.aliencity.position import Position


@dataclass(frozen=True)
class Inference:
    """``kind``: "unchanged", "move" (``move`` set) or "problem" (``problems`` say what)."""

    kind: str
    move: Move | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        from boardcam.engine.aliencity.game import move_to_json

        return {
            "kind": self.kind,
            "move": None if self.move is None else move_to_json(self.move),
            "problems": list(self.problems),
        }


def infer_move(before: Position, after: Position, game: Game) -> Inference:
    """Explain the change from ``before`` to ``after``; the mover is whoever's turn it is in ``game``."""
    problems: list[str] = []
    if before.tiles != after.tiles:
        changed = sorted(k for k in before.tiles if before.tiles[k] != after.tiles.get(k))
        problems.append(f"the tiles changed ({', '.join(LOT_NAMES[k] for k in changed)})")
    old, new = before.structures, after.structures
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    kept = sorted(set(old) & set(new))
    changed = [lot for lot in kept if (old[lot].kind, old[lot].color) != (new[lot].kind, new[lot].color)]
    cap_changes = [lot for lot in kept if lot not in changed and old[lot].cap != new[lot].cap]
    if not (added or removed or changed or cap_changes or problems):
        return Inference("unchanged")

    removal_problems = _describe_removals(old, new, added, removed)
    problems.extend(removal_problems)
    if len(added) == 1 and removed and not any(" moved from " in p for p in removal_problems):
        problems.append(f"a {new[added[0]].words} appeared on {LOT_NAMES[added[0]]}")
    for lot in changed:
        problems.append(f"the {old[lot].words} on {LOT_NAMES[lot]} became a {new[lot].words}")
    if len(added) > 1:
        problems.append(f"{len(added)} structures appeared at once ({', '.join(LOT_NAMES[x] for x in added)}); "
                        "one per turn")
    mover = game.turn
    caps_added = []
    for lot in cap_changes:
        if old[lot].cap is not None:
            problems.append(f"the {old[lot].cap} cap on {LOT_NAMES[lot]} was "
                            + ("removed" if new[lot].cap is None else f"replaced by a {new[lot].cap} cap"))
        else:
            caps_added.append(lot)
    new_cap = new[added[0]].cap if len(added) == 1 else None
    if new_cap is not None:
        caps_added.append(added[0])
    for lot in caps_added:
        cap = new[lot].cap
        if cap != mover:
            problems.append(f"a {cap} cap appeared on {LOT_NAMES[lot]} but it is {mover}'s turn "
                            f"({mover} caps with {mover})")
    if len(caps_added) > 1:
        problems.append(f"{len(caps_added)} caps appeared at once; one per turn")
    if not added and caps_added:
        problems.append(f"a cap appeared on {LOT_NAMES[caps_added[0]]} without a build; "
                        "a tower is claimed only after building")
    if problems or not added:
        return Inference("problem", problems=tuple(problems))

    lot = added[0]
    piece = new[lot].piece
    if game.supply[mover][piece] <= 0:
        has_other = game.supply[other_player(mover)][piece] > 0
        hint = f" (it is {mover}'s turn; {other_player(mover)} still has one)" if has_other else ""
        return Inference("problem", problems=(f"{mover} has no {piece.words} left{hint}",))
    cap_lot = caps_added[0] if caps_added else None
    return Inference("move", Move(mover, lot, piece, cap_lot))


def _describe_removals(
    old: dict[int, Structure], new: dict[int, Structure], added: list[int], removed: list[int]
) -> list[str]:
    problems = []
    for lot in removed:
        twin = next((a for a in added if (new[a].kind, new[a].color) == (old[lot].kind, old[lot].color)), None)
        if twin is not None and len(removed) == 1 and len(added) == 1:
            problems.append(f"the {old[lot].words} moved from {LOT_NAMES[lot]} to {LOT_NAMES[twin]}")
        else:
            problems.append(f"the {old[lot].words} on {LOT_NAMES[lot]} was removed")
    return problems
