"""Roads: splitting a player's connectors into roads, clauses (a)–(d), the per-turn limit, costs.

A player's connectors are split into roads at cities: two connectors belong
to the same road when they meet at a field that is not a city.  That is what
clauses (b) and (d) together say — a road leaves a city by at most one of its
connectors, and two roads of a player may touch only in cities — so the split
is unique and every question about roads is a question about these parts.

A part is a valid road when it is a tree whose leaves are exactly its cities,
each city appearing once, with at least 2 cities: a loop or a dead end would
contain connectors whose removal leaves a road connecting the same cities
(clause c), a repeated city means the road leaves it twice (clause b).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from boardcam.engine.netzwerk.board import RESOURCE_COLORS, Layout
from boardcam.engine.netzwerk.position import Position
from boardcam.engine.netzwerk.rules import (
    CHAIN,
    COST,
    DESERT,
    ROAD_A,
    ROAD_B,
    ROAD_C,
    ROAD_D,
    SUPPLY,
    TURN_LIMIT,
    TWO_PLAYER,
    Ruleset,
    Violation,
)

#: "more connectors there do not raise the price further"
DOUBLED_COST = 2
_COLOR_COUNT = len(RESOURCE_COLORS)
_ALL_SUBSETS: tuple[int, ...] = tuple(range(1, 1 << _COLOR_COUNT))


@dataclass(frozen=True)
class RoadPart:
    """One road (or what should be one): its connector slots, cities and broken clauses as (rule, message)."""

    edges: frozenset[int]
    cities: tuple[int, ...]
    problems: tuple[tuple[str, str], ...]

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def points(self) -> int:
        """n × (n − 1) for n connected cities; nothing for something that is not a road."""
        n = len(self.cities)
        return n * (n - 1) if self.valid else 0


def connected_groups(
    layout: Layout, edges: Iterable[int], split_at: Sequence[bool] | None = None
) -> list[list[int]]:
    """Connectors in groups that touch at a field, except fields flagged in ``split_at``.

    Roads end at cities (``split_at=layout.is_city``); a chain built in one
    turn is connected through anything (``None``).  Groups come in the order
    of their smallest slot, each in the order a depth-first walk from that
    slot meets its connectors.
    """
    edge_list = sorted(set(edges))
    at_field: dict[int, list[int]] = {}
    for e in edge_list:
        for f in layout.edge_ends[e]:
            if split_at is None or not split_at[f]:
                at_field.setdefault(f, []).append(e)
    seen: set[int] = set()
    groups: list[list[int]] = []
    for start in edge_list:
        if start in seen:
            continue
        seen.add(start)
        group = [start]
        stack = [start]
        while stack:
            e = stack.pop()
            for f in layout.edge_ends[e]:
                for other in at_field.get(f, ()):
                    if other not in seen:
                        seen.add(other)
                        group.append(other)
                        stack.append(other)
        groups.append(group)
    return groups


def road_parts(layout: Layout, edges: Iterable[int]) -> list[RoadPart]:
    """Split one player's connectors into roads at cities and judge each part (ordered by smallest slot)."""
    return [judge_part(layout, group) for group in connected_groups(layout, edges, layout.is_city)]


def judge_part(layout: Layout, group: Sequence[int]) -> RoadPart:
    fields = layout.fields
    is_city = layout.is_city
    degree: dict[int, int] = {}
    city_ends: list[int] = []
    for e in group:
        for f in layout.edge_ends[e]:
            if is_city[f]:
                city_ends.append(f)
            else:
                degree[f] = degree.get(f, 0) + 1
    deserts = sorted(f for f in degree if fields[f].is_desert)
    cities = tuple(sorted(set(city_ends)))
    problems: list[tuple[str, str]] = []
    if deserts:
        problems.append((DESERT, f"a connector lies on the desert {layout.key(deserts[0])}"))
    if len(cities) < 2:
        problems.append((ROAD_A, f"connects {len(cities)} {'city' if len(cities) == 1 else 'cities'}; "
                                 "a road connects at least 2"))
    repeated = sorted({c for c in city_ends if city_ends.count(c) > 1})
    if repeated:
        problems.append((ROAD_B, f"leaves city {layout.key(repeated[0])} by more than one connector"))
    if len(cities) >= 2:
        nodes = len(degree) + len(city_ends)
        if len(group) >= nodes:
            problems.append((ROAD_C, "contains a loop: a connector could be removed and the road "
                                     "would still connect the same cities"))
        dead = sorted(f for f, d in degree.items() if d == 1)
        if dead:
            problems.append((ROAD_C, f"has a dead end at {layout.key(dead[0])}: those connectors could be "
                                     "removed and the road would still connect the same cities"))
    return RoadPart(frozenset(group), cities, tuple(problems))


@dataclass(frozen=True)
class BuildCheck:
    """The verdict on a proposed set of connectors for one turn.

    ``cost`` is the number of resources (1 per connector, 2 on a slot that
    already holds someone's connector); ``payment`` per colour when it can be
    paid (the player's choice if given and valid, else one found here).
    """

    edges: tuple[int, ...]
    cost: int
    payment: tuple[int, ...] | None
    violations: tuple[Violation, ...]

    @property
    def legal(self) -> bool:
        return not self.violations

    def to_json(self, layout: Layout) -> dict[str, object]:
        return {
            "connectors": [layout.edge_to_json(e) for e in self.edges],
            "legal": self.legal,
            "cost": self.cost,
            "pay": None if self.payment is None else payment_to_json(self.payment),
            "violations": [v.to_json() for v in self.violations],
        }


def payment_to_json(payment: Sequence[int]) -> dict[str, int]:
    return {c: payment[i] for i, c in enumerate(RESOURCE_COLORS) if payment[i]}


def connector_demand(position: Position, player: int, edge: int) -> tuple[int, int]:
    """(colour mask, amount) one new connector on ``edge`` costs ``player``.

    The mask holds the resource colours of the fields it lies on (a city has
    none, so a connector between two cities has mask 0 and cannot be paid);
    the amount is 2 when another connector already lies there.
    """
    layout = position.layout
    mask = 0
    for f in layout.edge_ends[edge]:
        color = layout.color_of[f]
        if color >= 0:
            mask |= 1 << color
    doubled = any(edge in own for p, own in enumerate(position.connectors) if p != player)
    return mask, DOUBLED_COST if doubled else 1


def affordable(demands: Sequence[tuple[int, int]], supply: Sequence[int]) -> bool:
    """Whether the demands can be paid from ``supply`` (Hall's condition over the 31 colour sets)."""
    for subset in _ALL_SUBSETS:
        need = sum(amount for mask, amount in demands if mask and mask & ~subset == 0)
        if need and need > sum(supply[i] for i in range(_COLOR_COUNT) if subset >> i & 1):
            return False
    return True


def find_payment(demands: Sequence[tuple[int, int]], supply: Sequence[int]) -> tuple[int, ...] | None:
    """One way to pay (per colour), preferring the colours the player holds most of; None if impossible.

    Each connector has at most two colours, so paying greedily one resource at
    a time and checking that the rest stays payable never paints itself into a corner.
    """
    if any(mask == 0 for mask, _ in demands) or not affordable(demands, supply):
        return None
    left = list(supply)
    paid = [0] * _COLOR_COUNT
    remaining = [[mask, amount] for mask, amount in demands]
    for item in remaining:
        while item[1] > 0:
            choices = sorted((i for i in range(_COLOR_COUNT) if item[0] >> i & 1 and left[i] > 0),
                             key=lambda i: (-left[i], i))
            for i in choices:
                left[i] -= 1
                item[1] -= 1
                if affordable([(m, a) for m, a in remaining if a], left):
                    paid[i] += 1
                    break
                left[i] += 1
                item[1] += 1
            else:  # pragma: no cover - affordable() promised a way
                return None
    return tuple(paid)


def _payment_fits(demands: Sequence[tuple[int, int]], payment: Sequence[int]) -> bool:
    return sum(payment) == sum(a for _, a in demands) and affordable(demands, payment)


def check_build(
    position: Position,
    player: int,
    edges: Sequence[int],
    rules: Ruleset,
    pay: Sequence[int] | None = None,
) -> BuildCheck:
    """Judge ``player`` placing connectors on ``edges`` this turn (after the miner phase)."""
    layout = position.layout
    new = tuple(dict.fromkeys(edges))
    if not new:
        return BuildCheck((), 0, (0,) * _COLOR_COUNT, ())
    violations: list[Violation] = []
    own = position.connectors[player]
    demands: list[tuple[int, int]] = []
    two_players = len(position.players) == 2
    for e in new:
        names = layout.edge_keys(e)
        a, b = (layout.fields[f] for f in layout.edge_ends[e])
        mask, amount = connector_demand(position, player, e)
        demands.append((mask, amount))
        if a.is_desert or b.is_desert:
            where = a.key if a.is_desert else b.key
            violations.append(Violation(DESERT, f"{where} is a desert: no connector may lie on it", connector=names))
            continue
        if e in own:
            violations.append(Violation(ROAD_C, "already holds this player's connector: a second one "
                                                "would be superfluous", connector=names))
        elif two_players and amount > 1:
            violations.append(Violation(TWO_PLAYER, "already holds a connector: with 2 players no second "
                                                    "connector may be built there", connector=names))
        if a.is_city and b.is_city:
            violations.append(Violation(COST, "joins two cities: a connector is paid with a resource of a "
                                              "field it lies on and cities have no resource colour",
                                        connector=names))
    if len(new) > position.connectors_left(player):
        violations.append(Violation(SUPPLY, f"{len(new)} connectors but only "
                                            f"{position.connectors_left(player)} left"))
    violations.extend(_road_violations(position, player, new, rules))
    cost = sum(amount for _, amount in demands)
    payable = [d for d in demands if d[0]]
    supply = position.resources[player]
    payment: tuple[int, ...] | None
    if pay is not None:
        payment = tuple(pay)
        over = [f"{payment[i]} {c} (has {supply[i]})" for i, c in enumerate(RESOURCE_COLORS)
                if payment[i] > supply[i]]
        if over:
            violations.append(Violation(COST, f"pays {over[0]}"))
            payment = None
        elif not _payment_fits(payable, payment):
            violations.append(Violation(COST, f"the payment {_describe(payment)} does not match the cost "
                                              f"{cost} in the colours of the fields the connectors lie on"))
            payment = None
    else:
        payment = find_payment(payable, supply) if len(payable) == len(demands) else None
        if payment is None and len(payable) == len(demands):
            violations.append(Violation(COST, f"costs {cost} resources of the fields' colours; the player "
                                              f"has {_describe(supply)}"))
    return BuildCheck(new, cost, payment, tuple(violations))


def _describe(counts: Sequence[int]) -> str:
    text = ", ".join(f"{counts[i]} {c}" for i, c in enumerate(RESOURCE_COLORS) if counts[i])
    return text or "nothing"


def _road_violations(position: Position, player: int, new: tuple[int, ...], rules: Ruleset) -> list[Violation]:
    layout = position.layout
    old = position.connectors[player]
    new_set = frozenset(new) - old
    if not new_set:
        return []
    old_parts = road_parts(layout, old)
    part_of_old = {e: i for i, part in enumerate(old_parts) for e in part.edges}
    after = road_parts(layout, old | new_set)
    touched = [part for part in after if part.edges & new_set]
    violations: list[Violation] = []
    for part in touched:
        if part.valid:
            continue
        old_here = part.edges - new_set
        absorbed = [old_parts[i] for i in sorted({part_of_old[e] for e in old_here})]
        # A mistake already on the table is not this turn's fault: report only what the build makes worse.
        inherited = {rule for old_part in absorbed for rule, _ in old_part.problems}
        if (old_here and not inherited
                and all(p.valid for p in road_parts(layout, part.edges & new_set))):
            meet = sorted(_fields(layout, old_here) & _fields(layout, part.edges & new_set))
            meet = [f for f in meet if not layout.fields[f].is_city]
            where = layout.key(meet[0]) if meet else None
            violations.append(Violation(
                ROAD_D, f"the new road touches another of the player's roads at {where}, which is not a city",
                field=where))
            continue
        for rule, message in part.problems:
            if rule == DESERT or rule in inherited:
                continue
            violations.append(Violation(rule, f"the road {_part_name(layout, part)} {message}"))
    if rules.turn_limit:
        if len(touched) > 1:
            violations.append(Violation(TURN_LIMIT, f"builds {len(touched)} separate roads; one turn may build "
                                                    "1 road, extend 1 road or join 2 roads"))
        else:
            merged = {part_of_old[e] for part in touched for e in part.edges if e in part_of_old}
            if len(merged) > 2:
                violations.append(Violation(TURN_LIMIT, f"joins {len(merged)} roads; one turn may join at most 2"))
    if rules.chain_rule:
        violations.extend(_chain_violations(position, player, new_set))
    return violations


def _fields(layout: Layout, edges: Iterable[int]) -> set[int]:
    return {f for e in edges for f in layout.edge_ends[e]}


def _part_name(layout: Layout, part: RoadPart) -> str:
    if part.cities:
        return "from " + ", ".join(layout.key(c) for c in part.cities)
    return "at " + layout.edge_name(min(part.edges))


def _chain_violations(position: Position, player: int, new: frozenset[int]) -> list[Violation]:
    """Translator's note 3: one chain with exactly 2 ends, ends in a city or on an own road, nothing in between."""
    layout = position.layout
    degree: dict[int, int] = {}
    for e in new:
        for f in layout.edge_ends[e]:
            degree[f] = degree.get(f, 0) + 1
    ends = sorted(f for f, d in degree.items() if d == 1)
    branches = sorted(f for f, d in degree.items() if d > 2)
    connected = len(road_parts_plain(layout, new)) == 1
    if not connected or branches or len(ends) != 2:
        return [Violation(CHAIN, "one turn builds a single chain of connectors with exactly 2 ends")]
    on_road = _fields(layout, position.connectors[player])
    found: list[Violation] = []
    for f in ends:
        if not layout.fields[f].is_city and f not in on_road:
            found.append(Violation(CHAIN, f"the chain ends at {layout.key(f)}, neither a city nor the player's road",
                                   field=layout.key(f)))
    for f in sorted(degree):
        if degree[f] == 2 and (layout.fields[f].is_city or f in on_road):
            what = "a city" if layout.fields[f].is_city else "the player's road"
            found.append(Violation(CHAIN, f"the chain passes through {layout.key(f)}, {what}", field=layout.key(f)))
    return found


def road_parts_plain(layout: Layout, edges: Iterable[int]) -> list[frozenset[int]]:
    """Connected groups of connectors, joined at any field (cities included)."""
    return [frozenset(group) for group in connected_groups(layout, edges)]

