"""Scoring clauses with hand-built positions (tile colours do not matter to scoring)."""

from boardcam.engine.aliencity import ABSTRACT_PLAY, RULEBOOK, parse_lot, score, structure_distances

from .boards import position, uniform

BOARD = uniform("K")


def distance(pos, a, b):
    return structure_distances(pos, parse_lot(a)).get(parse_lot(b))


def test_structures_facing_one_street_lot_are_one_apart():
    pos = position(BOARD, "B2=red-tower D2=blue-tower")
    assert distance(pos, "B2", "D2") == 1


def test_neighbouring_structures_meet_only_through_streets():
    pos = position(BOARD, "B2=red-tower C2=blue-tower")
    assert distance(pos, "B2", "C2") == 2  # B3 then C3 (or B1 then C1)


def test_distance_follows_the_streets_around_walls():
    # a wall on row 3 from A to G: from A2 to A4 the street goes round through H3
    wall = " ".join(f"{c}3=black-dome" for c in "ABCDEFG")
    pos = position(BOARD, f"A2=red-tower A4=red-tower {wall}")
    # A2 -> B2..H2 is 7 lots, H3 and H4, then G4..B4 is 6 lots, A4 faces B4: 7 + 2 + 6 = 15
    assert distance(pos, "A2", "A4") == 15


def test_capped_tower_customers_times_competition():
    pos = position(BOARD, "C3=red-tower/white C5=blue-dome E3=green-dome A3=red-dome G3=red-tower C8=black-dome")
    result = score(pos).to_json()
    (tower,) = result["white"]["towers"]
    assert tower["customer_lots"] == ["E3", "C5"]  # red dome A3 is the same guild; C8 is too far
    assert tower["customers"] == 2
    assert tower["competitor_lots"] == ["G3"]
    assert tower["competition"] == 5  # D3, D2|D4, E2|E4, F2|F4, then F3 faces G3
    assert tower["points"] == 10
    assert result["white"]["total"] == 10
    assert result["black"]["total"] == 0
    assert result["winner"] == "white"


def test_black_domes_and_other_towers_are_customers():
    pos = position(BOARD, "C3=blue-tower/black C5=black-dome E3=red-tower A3=blue-tower")
    tower = next(t for t in score(pos).to_json()["black"]["towers"] if t["lot"] == "C3")
    assert tower["customer_lots"] == ["E3", "C5"]
    assert tower["competition"] == 1


def test_no_competitor_scores_zero():
    pos = position(BOARD, "C3=green-tower/black C5=blue-dome E3=red-dome")
    (tower,) = score(pos).to_json()["black"]["towers"]
    assert tower["customers"] == 2 and tower["competition"] == 0 and tower["points"] == 0


def test_customer_reach_is_two_street_lots():
    pos = position(BOARD, "C3=red-tower/white C6=blue-dome")  # C4, C5 then C6: 2
    assert score(pos).to_json()["white"]["towers"][0]["customers"] == 1
    pos = position(BOARD, "C3=red-tower/white C7=blue-dome")  # 3 away
    assert score(pos).to_json()["white"]["towers"][0]["customers"] == 0


def test_green_bonus_pays_owners_of_nearest_red_and_blue():
    pos = position(BOARD, "E5=green-tower E7=red-tower/black H5=blue-tower/white")
    result = score(pos).to_json()
    assert result["black"]["bonuses"] == [{"green": "E5", "tower": "E7", "color": "red", "distance": 1, "points": 8}]
    assert result["white"]["bonuses"] == [{"green": "E5", "tower": "H5", "color": "blue", "distance": 2, "points": 6}]


def test_no_bonus_for_unclaimed_nearest_or_far_towers_or_claimed_green():
    unclaimed_nearest = position(BOARD, "E5=green-tower E7=red-tower A5=red-tower/black")
    assert score(unclaimed_nearest).to_json()["black"]["bonuses"] == []
    far = position(BOARD, "A1=green-tower F1=red-tower/black")  # B1 C1 D1 E1: 4 -> 2 points; G1 -> none
    assert score(far).to_json()["black"]["bonuses"][0]["points"] == 2
    too_far = position(BOARD, "A1=green-tower G1=red-tower/black")
    assert score(too_far).to_json()["black"]["bonuses"] == []
    claimed_green = position(BOARD, "E5=green-tower/white E7=red-tower/black")
    assert score(claimed_green).to_json()["black"]["bonuses"] == []


def test_tied_nearest_towers_pay_only_a_player_owning_all_of_them():
    both_black = position(BOARD, "E5=green-tower E7=red-tower/black C5=red-tower/black")
    (bonus,) = score(both_black, RULEBOOK).to_json()["black"]["bonuses"]
    assert bonus["points"] == 8 and bonus["tied_with"] == ["E7"]
    assert score(both_black, ABSTRACT_PLAY).to_json()["black"]["bonuses"] == []
    split = position(BOARD, "E5=green-tower E7=red-tower/black C5=red-tower/white")
    assert score(split).to_json()["black"]["bonuses"] == score(split).to_json()["white"]["bonuses"] == []
    one_unowned = position(BOARD, "E5=green-tower E7=red-tower/black C5=red-tower")
    assert score(one_unowned).to_json()["black"]["bonuses"] == []


def test_void_caps_do_not_score():
    pos = position(BOARD, "C3=red-tower/white C5=blue-dome G3=red-tower")  # 1 customer x 3 (D3 E3 F3)
    assert score(pos).total("white") == 3
    assert score(pos, void_caps=[parse_lot("C3")]).total("white") == 0


def test_cut_off_tower_scores_nothing_but_does_not_crash():
    pos = position(BOARD, "A1=red-tower/white A2=blue-dome B1=blue-dome C5=red-tower")
    (tower,) = score(pos).to_json()["white"]["towers"]
    assert tower["customers"] == 0 and tower["competition"] == 0


def test_text_table_names_the_winner():
    pos = position(BOARD, "C3=red-tower/white C5=blue-dome G3=red-tower")
    text = score(pos).to_text()
    assert "White: 3 points" in text and "White wins." in text
