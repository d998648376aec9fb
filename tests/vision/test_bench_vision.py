"""The vision benchmark's bookkeeping (tiny runs: the real figures come from `boardcam bench vision`)."""

import math

import pytest

from bench_vision import _Tally, bench_vision, truth_as_named, truth_in_reader_convention


def test_truth_turned_to_the_readers_convention():
    truth = {
        "corners_px": {"A1": [10, 10], "H1": [90, 10], "H10": [90, 110], "A10": [10, 110]},  # row 1 at the top
        "position": {"tiles": {"A1": {"color": "red", "icon": "B2"}}, "structures": {"A1": {"kind": "dome", "color": "red"}}},
    }
    corners, position = truth_in_reader_convention(truth)
    assert corners["A1"] == [90, 110]
    assert position["tiles"] == {"G9": {"color": "red", "icon": "G9"}}
    assert position["structures"] == {"H10": {"kind": "dome", "color": "red"}}


@pytest.mark.parametrize("lift, either", [(1.0, True), (-1.0, True), (20.0, False)])
def test_a_board_square_to_the_frame_may_be_named_from_either_end(lift, either):
    # rows 1 and 10 run up the frame (x = 800 and x = 100); row 1's mean height is `lift` px lower
    truth = {
        "corners_px": {"A1": [800, 620 + lift], "H1": [800, 60 + lift], "H10": [100, 60], "A10": [100, 620]},
        "position": {"tiles": {"A1": {"color": "red", "icon": "B2"}}, "structures": {"A1": {"kind": "dome", "color": "red"}}},
    }
    as_truth = truth_in_reader_convention(truth)
    other_end = {"A1": [100, 60], "H1": [100, 620], "H10": [800, 620], "A10": [800, 60]}  # lot about 70 px
    corners, position = truth_as_named(*as_truth, other_end)
    if either:  # within a quarter lot of level: the reader's choice of end stands
        assert corners["A1"] == [100, 60] and position["tiles"] == {"G9": {"color": "red", "icon": "G9"}}
    else:  # clearly lower: the convention decides, whatever the reader said
        assert (corners, position) == as_truth
    assert truth_as_named(*as_truth, as_truth[0]) == as_truth
    assert truth_as_named(*as_truth, None) == as_truth


def test_tally_counts_confident_mistakes_and_missing_boards():
    class FakeReading:
        occluded = False
        position_dict = {"tiles": {"A1": {"color": "red", "icon": "A1"}}, "structures": {"B1": {"kind": "dome", "color": "red"}}}
        lot_confidence = {"B1": 0.95}

    tally = _Tally()
    truth = {"tiles": {"A1": {"color": "red", "icon": "A1"}}, "structures": {}}
    tally.add(FakeReading(), truth, occluded=False)
    tally.add(None, truth, occluded=False)
    tally.add(None, truth, occluded=True)
    figures = tally.figures()
    assert figures["lot_accuracy"] == pytest.approx(79 / 160)
    assert figures["confident_wrong"] == pytest.approx(1 / 160)
    assert figures["board_not_found"] == 1 and figures["occluded_frames"] == 1 and figures["occluded_flagged"] == 0
    assert figures["clean_flagged_occluded"] == 0.0
    FakeReading.occluded = True  # a clean frame flagged: counted against the frames that were read
    tally.add(FakeReading(), truth, occluded=False)
    assert tally.figures()["clean_flagged_occluded"] == pytest.approx(1 / 2)


def test_icons_under_a_piece_are_counted_apart():
    class FakeReading:
        occluded = False
        position_dict = {"tiles": {"A1": {"color": "red", "icon": "A2"}, "C1": {"color": "blue", "icon": "C1"}},
                         "structures": {"B1": {"kind": "dome", "color": "red"}}}
        lot_confidence = {"B1": 0.95}

    truth = {"tiles": {"A1": {"color": "red", "icon": "B1"}, "C1": {"color": "blue", "icon": "C1"}},
             "structures": {"B1": {"kind": "dome", "color": "red"}}}  # A1's icon is under the dome
    tally = _Tally()
    tally.add(FakeReading(), truth, occluded=False)
    figures = tally.figures()
    assert figures["tile_icon_accuracy"] == pytest.approx(1 / 20)  # per board of 20 tiles
    assert figures["tile_icon_in_view_accuracy"] == 1.0
    assert figures["board_exact"] == 0.0 and figures["board_exact_icons_in_view"] == 1.0
    FakeReading.position_dict["tiles"]["A1"]["color"] = "blue"  # a hidden icon's tile still has its colour in view
    tally.add(FakeReading(), truth, occluded=False)
    assert tally.figures()["board_exact_icons_in_view"] == pytest.approx(1 / 2)


def test_tiles_read_wrong_are_counted_by_how_surely_they_were_read():
    class FakeReading:
        occluded = False
        position_dict = {"tiles": {"A1": {"color": "black", "icon": "B1"}, "C1": {"color": "red", "icon": "C1"},
                                   "E1": {"color": "blue", "icon": "E1"}}, "structures": {}}
        lot_confidence: dict[str, float] = {}
        tile_confidence = {"A1": 0.995, "C1": 0.5, "E1": 0.999}

    truth = {"tiles": {"A1": {"color": "black", "icon": "A1"}, "C1": {"color": "green", "icon": "C1"},
                       "E1": {"color": "blue", "icon": "E1"}}, "structures": {}}
    tally = _Tally()
    tally.add(FakeReading(), truth, occluded=False, scene=42)
    FakeReading.tile_confidence = {"A1": 0.93, "C1": 0.5, "E1": 0.999}
    tally.add(FakeReading(), truth, occluded=False, scene="photo.jpg")
    figures = tally.figures()
    # A1's icon read wrong, at 0.995 then 0.93; C1's colour read wrong unsurely (the setup asks); E1 right
    assert figures["tile_confident_wrong"] == pytest.approx(2 / 40)
    assert figures["tile_sure_wrong"] == pytest.approx(1 / 40)
    assert [(w["scene"], w["tile"], w["confidence"]) for w in figures["confidently_wrong_tiles"]] == [
        (42, "A1", 0.995), ("photo.jpg", "A1", 0.93)]
    assert figures["confidently_wrong_tiles"][0]["read"] == {"color": "black", "icon": "B1"}


def test_bench_reads_the_empty_boards_when_asked(monkeypatch: pytest.MonkeyPatch):
    import scenegen.sampling

    drawn = []
    real = scenegen.sampling.empty_board_scene
    monkeypatch.setattr(scenegen.sampling, "empty_board_scene", lambda *a, **kw: drawn.append(real(*a, **kw)) or drawn[-1])
    out = bench_vision(count=1, seed=5, size=(640, 480), edition="R", empty=True)
    assert out["boards"].startswith("empty") and len(drawn) == 1
    assert drawn[0].truth["position"]["structures"] == {} and not drawn[0].truth.get("occluded")
    assert out["tile_icon_in_view_accuracy"] == out["tile_icon_accuracy"]  # every icon is in view
    assert 0.0 <= out["tile_sure_wrong"] <= out["tile_confident_wrong"] <= 1.0


def test_bench_reads_one_edition_when_asked():
    out = bench_vision(count=1, seed=5, size=(640, 480), edition="R")
    assert out["edition"] == "R" and 0.0 <= out["tile_accuracy"] <= 1.0


def test_bench_shows_clear_towers_when_asked(monkeypatch: pytest.MonkeyPatch):
    import scenegen

    drawn = []
    real = scenegen.random_scene
    monkeypatch.setattr(scenegen, "random_scene", lambda *a, **kw: drawn.append(kw) or real(*a, **kw))
    out = bench_vision(count=1, seed=5, size=(640, 480), clear_towers=True)
    assert out["towers"] == "clear plastic"
    assert drawn[0]["tower_look"] == "translucent" and drawn[0]["tower_glass"] == 1.0


def test_bench_tells_the_reader_the_towers_when_asked(monkeypatch: pytest.MonkeyPatch):
    import bench_vision as module

    from boardcam.vision import reader

    told = []
    real = reader.analyse
    monkeypatch.setattr(reader, "analyse", lambda *a, **kw: told.append(a[2]) or real(*a, **kw))
    out = bench_vision(count=1, seed=5, size=(640, 480), clear_towers=True, towers="clear")
    assert out["towers_told"] == "clear" and told and all(a.towers == "clear" for a in told)
    assert module.told_appearance("opaque") is None  # told nothing: read as every table without a calibration


def test_bench_renders_every_camera_exposed_as_asked(monkeypatch: pytest.MonkeyPatch):
    import scenegen

    drawn = []
    real = scenegen.random_scene
    monkeypatch.setattr(scenegen, "random_scene", lambda *a, **kw: drawn.append(kw) or real(*a, **kw))
    out = bench_vision(count=1, seed=5, size=(640, 480), exposure=0.3)
    assert out["exposure"] == 0.3 and drawn[0]["exposure"] == 0.3
    assert "exposure" not in bench_vision(count=1, seed=5, size=(640, 480)) and "exposure" not in drawn[-1]


def test_bench_reports_known_pose_and_from_scratch_figures():
    out = bench_vision(count=1, seed=5, size=(640, 480))
    for key in ("lot_accuracy", "tile_accuracy", "board_exact", "confident_wrong", "occluded_flagged",
                "ms_known_pose", "ms_from_scratch", "reference_ms"):
        assert key in out
    assert set(out["from_scratch"]) >= {"lot_accuracy", "tile_accuracy", "board_not_found"}
    assert 0.0 <= out["lot_accuracy"] <= 1.0


def test_in_game_bench_reads_with_the_setup_reference_and_the_previous_reading():
    from bench_vision import bench_vision_in_game

    out = bench_vision_in_game(games=1, seed=3, size=(640, 480), plies=3)
    assert out["games"] == 1 and out["mode"].startswith("known pose")
    for figures in (out, out["single_frame"]):
        assert 0.0 <= figures["lot_accuracy"] <= 1.0 and figures["board_not_found"] == 0
    assert out["ms_median"] > 0


def test_in_game_bench_films_clear_towers_when_asked(monkeypatch: pytest.MonkeyPatch):
    import scenegen

    from bench_vision import bench_vision_in_game

    filmed = []
    real = scenegen.scene_series
    monkeypatch.setattr(scenegen, "scene_series", lambda *a, **kw: filmed.append(kw) or real(*a, **kw))
    out = bench_vision_in_game(games=1, seed=3, size=(640, 480), plies=1, clear_towers=True)
    assert out["towers"] == "clear plastic"
    assert filmed[0]["tower_look"] == "translucent" and filmed[0]["tower_glass"] == 1.0


def _labelled_folder(tmp_path):
    """Two written scenes (one of them turned, so its record names the corners the other way round)."""
    import json

    from scenegen import random_scene, write_scene

    for seed in (103, 112):
        write_scene(random_scene(seed, size=(640, 480)), tmp_path, f"scene_{seed}", image_format="jpg")
    # a record without corners: its position named the reader's way, as a person labelling a photo would
    truth = json.loads((tmp_path / "scene_103.json").read_text())
    _, position = truth_in_reader_convention(truth)
    (tmp_path / "photo.json").write_text(json.dumps({"position": position}))
    (tmp_path / "photo.jpg").write_bytes((tmp_path / "scene_103.jpg").read_bytes())
    (tmp_path / "unlabelled.png").write_bytes(b"")  # no record beside it: left out
    return tmp_path


def test_labelled_photos_are_read_from_scratch_and_at_their_pose(tmp_path):
    from bench_vision import bench_photos

    out = bench_photos(_labelled_folder(tmp_path))
    assert out["images"] == 3
    assert out["known_pose"]["lot_accuracy"] > 0.95  # the two records with corners
    assert out["from_scratch"]["lot_accuracy"] > 0.95 and out["from_scratch"]["board_not_found"] == 0
    for item in out["wrong"]:
        assert item["image"] in {"scene_103.jpg", "scene_112.jpg", "photo.jpg"}
        assert ("lot" in item) != ("tile" in item) and {"truth", "read", "confidence"} <= set(item)


@pytest.mark.parametrize(
    "record, complaint",
    [
        ("{not json", "not a position record"),
        ('{"position": {"tiles": {}}}', "not a position record"),
        ('{"position": POSITION, "corners_px": {"A1": [0, 0]}}', "corners_px must name"),
    ],
)
def test_a_bad_record_is_named(tmp_path, record, complaint):
    import json

    from bench_vision import bench_photos
    from boardcam.engine.errors import InputError

    folder = _labelled_folder(tmp_path)
    position = json.loads((folder / "photo.json").read_text())["position"]
    (folder / "photo.json").write_text(record.replace("POSITION", json.dumps(position)))
    with pytest.raises(InputError, match=complaint) as raised:
        bench_photos(folder)
    assert "photo.json" in str(raised.value)


def test_a_folder_without_labelled_images_is_an_error(tmp_path):
    from bench_vision import bench_photos
    from boardcam.engine.errors import InputError

    with pytest.raises(InputError, match="no image"):
        bench_photos(tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        bench_photos(tmp_path / "missing")


def test_hidden_icons_cost_a_fair_guess_among_the_built_lots_the_rules_allow():
    import random

    from bench_vision import hidden_icon_guess

    from boardcam.engine.aliencity import Game, possible_icon_lots, random_game

    game = random_game(random.Random(3))
    assert hidden_icon_guess(Game(game.position.tiles).position.to_json()) == (0.0, 1.0)  # nothing hidden
    for seed in range(40):  # a late board with an icon under a piece and another built lot the rules allow
        board = random_game(random.Random(seed)).position
        choices = [len([lot for lot in possible_icon_lots(board, key) if lot in board.structures])
                   for key, tile in board.tiles.items() if tile.icon in board.structures]
        if any(n >= 2 for n in choices):
            lost, all_right = hidden_icon_guess(board.to_json())
            assert lost == pytest.approx(sum(1.0 - 1.0 / n for n in choices))
            assert all_right == pytest.approx(math.prod(1.0 / n for n in choices)) and all_right <= 0.5
            return
    pytest.fail("no board with an icon between built lots")


def test_scene_lots_are_turned_with_the_board():
    from bench_vision import lots_in_reader_convention

    upside_down = {"corners_px": {"A1": [10, 10], "H1": [90, 10], "H10": [90, 110], "A10": [10, 110]}}
    upright = {"corners_px": {"A1": [10, 110], "H1": [90, 110], "H10": [90, 10], "A10": [10, 10]}}
    assert lots_in_reader_convention(upside_down, ["A1", "C9"]) == ["H10", "F2"]
    assert lots_in_reader_convention(upright, ["A1", "C9"]) == ["A1", "C9"]


def test_case_tally_counts_the_hard_lots_and_leaves_covered_lots_out():
    from bench_vision import _CaseTally

    class FakeReading:
        occluded = True
        occluded_lots = ("D4",)
        position_dict = {"tiles": {}, "structures": {"B1": {"kind": "dome", "color": "black"}}}
        lot_confidence = {"B1": 0.95, "C1": 0.99}

    truth = {"tiles": {}, "structures": {"B1": {"kind": "dome", "color": "black"},
                                         "C1": {"kind": "dome", "color": "black"}}}
    tally = _CaseTally()
    # C1's dome missed at 0.99; D4 wrongly called covered; E5 under the hand (by the truth) left out
    tally.add(FakeReading(), truth, hard=["B1", "C1"], covered=["E5"], scene=7)
    tally.add(None, truth, hard=["B1", "C1"], covered=[], scene=8)
    figures = tally.figures(hand=False)
    assert figures["lot_accuracy"] == pytest.approx(77 / 159)
    assert figures["hard_lot_accuracy"] == pytest.approx(1 / 4) and figures["hard_lots"] == 4
    assert figures["confident_wrong"] == pytest.approx(1 / 159)
    assert figures["clean_flagged_occluded"] == pytest.approx(1 / 2) and figures["board_not_found"] == 1
    assert figures["wrong_hard_lots"] == [{"scene": 7, "lot": "C1", "truth": {"kind": "dome", "color": "black"},
                                           "read": None, "confidence": 0.99}]
    assert "occluded_flagged" in tally.figures(hand=True)
    assert _CaseTally().figures(hand=False)["hard_lot_accuracy"] is None


def test_hard_case_bench_reads_every_case_three_ways():
    from bench_vision import bench_hard_cases

    out = bench_hard_cases(count=1, seed=3, size=(640, 480), edition="R",
                           cases=("black_dome_on_black_tile", "long_shadows", "hand"))
    assert out["edition"] == "R" and list(out["cases"]) == ["black_dome_on_black_tile", "long_shadows", "hand"]
    for case, ways in out["cases"].items():
        assert set(ways) == {"known_pose", "with_reference", "from_scratch"}
        for figures in ways.values():
            assert 0.0 <= figures["lot_accuracy"] <= 1.0
    assert out["cases"]["black_dome_on_black_tile"]["known_pose"]["hard_lots"] == 2
    assert out["cases"]["long_shadows"]["known_pose"]["hard_lot_accuracy"] is None
    assert "occluded_flagged" in out["cases"]["hand"]["with_reference"]
