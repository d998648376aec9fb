"""Roads: clauses (a)–(d), the per-turn limit and its variants, costs, the 2-player limits, deserts, supply."""

from __future__ import annotations

import pytest

from boardcam.engine.netzwerk import RULEBOOK, Ruleset, check_build, road_parts
from boardcam.engine.netzwerk.roads import affordable, find_payment

from .boards import edges, position, rules_of

RICH = {"yellow": 6, "orange": 2, "red": 6, "green": 6, "blue": 4}  # every stone of GRID
C1_C3 = ("0,0/0,1", "0,1/0,2")                      # city 1 - blue - city 3
C1_C4 = ("0,0/1,0", "1,0/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2")


def rich(players=None, **state):
    state.setdefault("resources", {"white": RICH})
    return position(players, **state)


# --- what a road is -----------------------------------------------------------


def test_a_road_between_two_cities_through_a_landscape_field_is_legal():
    pos = rich()
    check = check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK)
    assert check.legal, check.violations
    assert check.cost == 2 and check.payment == (0, 0, 0, 0, 2)


def test_clause_a_a_road_must_connect_two_cities():
    pos = rich()
    check = check_build(pos, 0, edges(pos, "0,0/0,1"), RULEBOOK)
    assert rules_of(check.violations) == ["road-a"]
    loose = check_build(pos, 0, edges(pos, "1,0/1,1"), RULEBOOK)
    assert rules_of(loose.violations) == ["road-a"]


def test_clause_b_a_road_leaves_a_city_by_one_connector_only():
    pos = rich()
    # C1-(0,1)-C3 plus a second way out of C1 that rejoins at (0,1): the road leaves C1 twice.
    check = check_build(pos, 0, edges(pos, *C1_C3, "0,0/1,0", "1,0/0,1"), RULEBOOK)
    assert rules_of(check.violations) == ["road-b"]


def test_clause_b_passing_through_a_city_makes_two_roads_not_one():
    pos = rich()
    # C1 -(0,1)- C3 -(1,1)-(2,1)-(2,2)- C4 passes through the city C3: two roads meeting there.
    through = edges(pos, *C1_C3, "0,2/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2")
    parts = road_parts(pos.layout, through)
    assert sorted(len(p.cities) for p in parts) == [2, 2] and all(p.valid for p in parts)
    assert rules_of(check_build(pos, 0, through, RULEBOOK).violations) == ["turn-limit"]
    assert check_build(pos, 0, through, Ruleset(turn_limit=False)).legal


def test_clause_c_no_loop():
    pos = rich()
    loop = edges(pos, "0,0/1,0", "1,0/1,1", "1,1/0,1", "0,1/1,0", "0,1/0,2")
    check = check_build(pos, 0, loop, RULEBOOK)
    assert rules_of(check.violations) == ["road-c"]
    assert "loop" in check.violations[0].message


def test_clause_c_no_dead_end():
    pos = rich()
    check = check_build(pos, 0, edges(pos, *C1_C3, "0,1/1,1"), RULEBOOK)
    assert rules_of(check.violations) == ["road-c"]
    assert "dead end at 1,1" in check.violations[0].message


def test_clause_c_no_second_own_connector_on_a_slot():
    pos = rich(connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    check = check_build(pos, 0, edges(pos, "0,0/0,1"), RULEBOOK)
    assert rules_of(check.violations) == ["road-c"]


def test_clause_d_a_new_road_may_touch_an_own_road_only_in_cities():
    # Old road C1-(1,0)-(1,1)-C3; the new road C2-(4,0)-(3,0)-(2,0)-(1,1)-(0,1)-C1 is a road on
    # its own but crosses the old one at the landscape field (1,1).
    pos = rich(connectors={"white": [["0,0", "1,0"], ["1,0", "1,1"], ["1,1", "0,2"]]})
    new = edges(pos, "5,0/4,0", "4,0/3,0", "3,0/2,0", "2,0/1,1", "1,1/0,1", "0,1/0,0")
    check = check_build(pos, 0, new, RULEBOOK)
    assert rules_of(check.violations) == ["road-d"]
    assert check.violations[0].field == "1,1"
    alone = position(resources={"white": RICH})
    assert check_build(alone, 0, new, RULEBOOK).legal


def test_clause_c_a_bypass_around_an_own_road_makes_a_loop():
    pos = rich(connectors={"white": [["0,0", "1,0"], ["1,0", "1,1"], ["1,1", "0,2"]]})
    check = check_build(pos, 0, edges(pos, "1,0/2,0", "2,0/1,1"), RULEBOOK)
    assert rules_of(check.violations) == ["road-c"]


def test_touching_an_own_road_in_a_city_is_fine():
    pos = rich(connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    check = check_build(pos, 0, edges(pos, "0,2/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2"), RULEBOOK)
    assert check.legal, check.violations


def test_meeting_an_own_road_at_a_landscape_field_extends_it():
    pos = rich(connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    branch = edges(pos, "0,1/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2")
    check = check_build(pos, 0, branch, RULEBOOK)
    assert check.legal, check.violations
    after = road_parts(pos.layout, pos.connectors[0] | set(branch))
    assert len(after) == 1 and len(after[0].cities) == 3 and after[0].points == 6


def test_a_tree_with_every_city_a_leaf_is_one_road():
    pos = rich()
    tree = edges(pos, "0,2/1,1", "1,1/1,0", "1,0/0,0", "1,1/2,1", "2,1/2,2", "2,2/3,2")
    parts = road_parts(pos.layout, tree)
    assert len(parts) == 1 and parts[0].valid and len(parts[0].cities) == 3


# --- one turn's building ------------------------------------------------------


R1 = [["0,0", "0,1"], ["0,1", "0,2"]]                                   # C1 - C3
R2 = [["5,0", "4,0"], ["4,0", "3,1"], ["3,1", "3,2"]]                   # C2 - C4
R3 = [["1,3", "2,3"], ["2,3", "3,3"], ["3,3", "4,3"], ["4,3", "5,3"]]   # C6 - C7


def test_join_two_roads_in_one_turn():
    pos = rich(connectors={"white": R1 + R2})
    check = check_build(pos, 0, edges(pos, "0,1/1,1", "1,1/2,1", "2,1/3,1"), RULEBOOK)
    assert check.legal, check.violations
    joined = road_parts(pos.layout, pos.connectors[0] | set(check.edges))
    assert [len(p.cities) for p in joined] == [4] and joined[0].points == 12


def test_two_separate_roads_in_one_turn_break_the_turn_limit_only():
    pos = rich()
    both = edges(pos, *C1_C3, "5,0/5,1", "5,1/4,2", "4,2/3,2")
    assert rules_of(check_build(pos, 0, both, RULEBOOK).violations) == ["turn-limit"]
    assert check_build(pos, 0, both, Ruleset(turn_limit=False)).legal


def test_joining_three_roads_breaks_the_turn_limit():
    pos = rich(connectors={"white": R1 + R2 + R3})
    join = edges(pos, "0,1/1,1", "1,1/2,1", "2,1/3,1", "2,1/2,2", "2,2/2,3")
    check = check_build(pos, 0, join, RULEBOOK)
    assert rules_of(check.violations) == ["turn-limit"]
    assert "joins 3 roads" in check.violations[0].message
    assert check_build(pos, 0, join, Ruleset(turn_limit=False)).legal


def test_chain_rule_accepts_one_chain_between_city_and_own_road():
    pos = rich(connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    rules = Ruleset(chain_rule=True)
    chain = edges(pos, "0,1/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2")
    assert check_build(pos, 0, chain, rules).legal


def test_chain_rule_refuses_two_branches_in_one_turn():
    pos = rich(connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    # From the road at (0,1): one branch to C4 and one to C2 — legal as one extension in the
    # rulebook, but a chain with 3 ends.
    build = edges(pos, "0,1/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2", "2,1/3,0", "3,0/4,0", "4,0/5,0")
    assert check_build(pos, 0, build, RULEBOOK).legal
    assert rules_of(check_build(pos, 0, build, Ruleset(chain_rule=True)).violations) == ["chain"]


def test_chain_rule_refuses_a_chain_through_an_own_road():
    pos = rich(connectors={"white": [["0,0", "1,0"], ["1,0", "1,1"], ["1,1", "0,2"]]})
    # C1-(0,1)-(1,1) then on to C4: passes through (1,1) on the old road.
    build = edges(pos, "0,1/1,1", "1,1/2,1", "2,1/2,2", "2,2/3,2")
    found = check_build(pos, 0, build, Ruleset(chain_rule=True)).violations
    assert "chain" in rules_of(found)


# --- costs --------------------------------------------------------------------


def test_cost_is_paid_in_the_colour_of_a_field_the_connector_lies_on():
    pos = position(resources={"white": {"blue": 1}})
    check = check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK)
    assert rules_of(check.violations) == ["cost"] and check.cost == 2
    pos = position(resources={"white": {"red": 5}})
    assert rules_of(check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK).violations) == ["cost"]


def test_between_two_landscape_colours_either_colour_pays():
    # C1-(1,0)y-(1,1)r-C3: (1,0)-(1,1) may be paid yellow or red; C1-(1,0) only yellow; (1,1)-C3 only red.
    build = ("0,0/1,0", "1,0/1,1", "1,1/0,2")
    for have, ok in (({"yellow": 2, "red": 1}, True), ({"yellow": 1, "red": 2}, True),
                     ({"yellow": 1, "red": 1, "blue": 3}, False), ({"yellow": 3}, False)):
        pos = position(resources={"white": have})
        check = check_build(pos, 0, edges(pos, *build), RULEBOOK)
        assert check.legal is ok, (have, check.violations)


def test_a_connector_between_two_cities_can_never_be_paid():
    pos = rich()
    check = check_build(pos, 0, edges(pos, "5,0/4,1"), RULEBOOK)
    assert rules_of(check.violations) == ["cost"]
    assert "cities have no resource colour" in check.violations[0].message


def test_city_to_landscape_connector_costs_one_of_the_landscape_colour():
    pos = position(resources={"white": {"blue": 2}})
    check = check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK)
    assert check.legal and check.payment == (0, 0, 0, 0, 2)


def test_a_second_connector_on_a_slot_costs_two_with_three_players():
    players = ["white", "purple", "cyan"]
    pos = position(players, resources={"purple": {"blue": 3}},
                   connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    check = check_build(pos, 1, edges(pos, *C1_C3), RULEBOOK)
    assert check.cost == 4 and rules_of(check.violations) == ["cost"]
    pos = position(players, resources={"purple": {"blue": 4}},
                   connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]],
                               "cyan": [["0,0", "0,1"], ["0,1", "0,2"]]})
    check = check_build(pos, 1, edges(pos, *C1_C3), RULEBOOK)
    assert check.legal and check.cost == 4, "more connectors there do not raise the price further"


def test_two_players_may_not_double_a_slot():
    pos = position(resources={"purple": {"blue": 4}}, connectors={"white": [["0,0", "0,1"], ["0,1", "0,2"]]})
    found = rules_of(check_build(pos, 1, edges(pos, *C1_C3), RULEBOOK).violations)
    assert found.count("two-player") == 2


def test_the_players_payment_must_match_the_colours():
    pos = position(resources={"white": {"blue": 2, "red": 2}})
    assert check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK, pay=(0, 0, 0, 0, 2)).legal
    wrong = check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK, pay=(0, 0, 2, 0, 0))
    assert rules_of(wrong.violations) == ["cost"]
    too_much = check_build(pos, 0, edges(pos, *C1_C3), RULEBOOK, pay=(0, 0, 0, 0, 3))
    assert rules_of(too_much.violations) == ["cost"]


def test_no_connector_onto_a_desert():
    pos = rich()
    check = check_build(pos, 0, edges(pos, "1,1/1,2"), RULEBOOK)
    assert "desert" in rules_of(check.violations)


def test_twenty_connectors_per_player():
    slots = [["0,0", "1,0"], ["1,0", "2,0"], ["2,0", "3,0"], ["3,0", "4,0"], ["4,0", "5,0"],
             ["0,1", "1,1"], ["1,1", "2,1"], ["2,1", "3,1"], ["3,1", "4,1"], ["4,1", "5,1"],
             ["2,2", "3,2"], ["3,2", "4,2"], ["4,2", "5,2"], ["0,0", "0,1"], ["1,0", "1,1"],
             ["2,0", "2,1"], ["3,0", "3,1"], ["4,0", "4,1"], ["5,0", "5,1"], ["2,1", "2,2"]]
    pos = rich(connectors={"white": slots})
    assert pos.connectors_left(0) == 0
    assert "supply" in rules_of(check_build(pos, 0, edges(pos, "0,1/0,2"), RULEBOOK).violations)


def test_an_empty_build_is_always_legal():
    assert check_build(position(), 0, (), RULEBOOK).legal


# --- paying -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("demands", "supply", "ok"),
    [
        ([(0b00001, 1), (0b00011, 1)], (1, 1, 0, 0, 0), True),
        ([(0b00001, 1), (0b00011, 1)], (2, 0, 0, 0, 0), True),
        ([(0b00001, 1), (0b00001, 1)], (1, 1, 0, 0, 0), False),
        ([(0b00011, 2), (0b00110, 2)], (1, 2, 1, 0, 0), True),
        ([(0b00011, 2), (0b00110, 2), (0b00010, 1)], (1, 2, 1, 0, 0), False),
    ],
)
def test_payment_search_agrees_with_halls_condition(demands, supply, ok):
    assert affordable(demands, supply) is ok
    payment = find_payment(demands, supply)
    assert (payment is not None) is ok
    if payment is not None:
        assert sum(payment) == sum(a for _, a in demands)
        assert all(p <= s for p, s in zip(payment, supply))
        assert affordable(demands, payment)


def test_a_mistake_already_on_the_table_is_not_blamed_on_the_next_build():
    # white left a lone connector C1-(1,0) (not a road); finishing it into C1-(1,0)-(1,1)-C3 is legal,
    # and a build that leaves it unfinished is not blamed for clause (a) it already broke.
    pos = rich(connectors={"white": [["0,0", "1,0"]]})
    assert check_build(pos, 0, edges(pos, "1,0/1,1", "1,1/0,2"), RULEBOOK).legal
    assert check_build(pos, 0, edges(pos, "1,0/2,0"), RULEBOOK).legal
    looped = check_build(pos, 0, edges(pos, "1,0/1,1", "1,1/0,1", "0,1/1,0", "0,1/0,2"), RULEBOOK)
    assert rules_of(looped.violations) == ["road-c"], "a loop is new, so it is reported"
