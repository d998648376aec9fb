"""Tests of the 3D scene generator (benchmarks/scenegen): geometry truth, looks, determinism, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import scenegen
from scenegen import (HARD_CASES, Hand, Light, Mat, SceneParams, game_positions, hard_case_scene, random_scene,
                      render_scene, scene_series)
from scenegen.__main__ import main as cli_main
from scenegen.geometry import ALL_LOTS, TILE_KEYS, lot_name, parse_lot
from scenegen.positions import engine_available

SCENES_DIR = Path(__file__).resolve().parents[1] / "data" / "scenes"
GUILDS = ("red", "blue", "green", "black")


def _position(structures: dict[str, dict[str, object]] | None = None) -> dict[str, object]:
    tiles = {}
    for i, key in enumerate(TILE_KEYS):
        col, row = parse_lot(key)
        tiles[key] = {"color": GUILDS[i % 4], "icon": lot_name(col + 1, row + 1)}
    return {"game": "alien-city", "tiles": tiles, "structures": structures or {}}


def _clean(**changes: object) -> SceneParams:
    """Neutral light, no sensor effects: colours in the frame are the pieces' own."""
    base = SceneParams(size=(640, 480), lights=(Light((0.0, 0.0, 900.0), 5500.0, 0.8, 30.0),), ambient=0.35,
                       ambient_kelvin=5500.0, awb=1.0, noise=0.0, shot_noise=0.0, blur_sigma=0.0, vignette=0.0,
                       k1=0.0, camera_height_mm=600.0, tile_mm=55.0)
    return base.replace(**changes)


def _median_bgr(image: np.ndarray, xy: list[float], half: int = 2) -> np.ndarray:
    x, y = int(round(xy[0])), int(round(xy[1]))
    patch = image[y - half:y + half + 1, x - half:x + half + 1].reshape(-1, 3)
    return np.asarray(np.median(patch, axis=0))


def test_same_seed_gives_the_same_frame_and_other_seeds_do_not() -> None:
    a = random_scene(5, size=(320, 240))
    b = random_scene(5, size=(320, 240))
    c = random_scene(6, size=(320, 240))
    assert np.array_equal(a.image, b.image)
    assert a.truth == b.truth
    assert not np.array_equal(a.image, c.image)
    assert a.image.dtype == np.uint8 and a.image.shape == (240, 320, 3)


@pytest.mark.parametrize("seed", range(4))
def test_random_scenes_keep_the_board_in_frame_at_the_promised_size(seed: int) -> None:
    scene = random_scene(seed, size=(480, 360))
    truth = scene.truth
    corners = np.array([truth["corners_px"][k] for k in ("A1", "H1", "H10", "A10")])
    assert np.all(corners > 0) and np.all(corners[:, 0] < 480) and np.all(corners[:, 1] < 360)
    assert 0.35 <= truth["board_width_fraction"] <= 0.80
    assert set(truth["lot_centers_px"]) == set(ALL_LOTS)
    assert set(truth["tile_centers_px"]) == set(TILE_KEYS)
    assert np.array(truth["camera"]["camera_matrix"]).shape == (3, 3)
    assert truth["camera"]["image_size"] == [480, 360]
    scenegen.parse_position(truth["position"])  # a valid position
    assert json.loads(json.dumps(truth)) == truth  # JSON-ready
    # A1's row-1 edge lies lower in the image than the A10 corner's row-10 edge? not always (any rotation);
    # but the corners must go round the board without crossing: a convex quadrilateral
    assert cv2.isContourConvex(corners.astype(np.float32).reshape(-1, 1, 2))


def test_random_scene_draws_a_ply_of_an_engine_game() -> None:
    if not engine_available():
        pytest.skip("engine random_positions not importable")
    from boardcam.engine.aliencity import random_positions

    counts = set()
    for seed in range(6):
        scene = random_scene(seed, size=(160, 120))
        rng = np.random.default_rng([seed, 1])
        game = random_positions(int(rng.integers(2 ** 31)))
        assert scene.truth["position"] in game
        counts.add(len(scene.truth["position"]["structures"]))
    assert len(counts) > 2  # early, mid and late boards appear


def test_explicit_position_is_rendered_and_reported_unchanged() -> None:
    position = _position({
        "C3": {"kind": "tower", "color": "red"},
        "F6": {"kind": "tower", "color": "blue", "cap": "white"},
        "B8": {"kind": "tower", "color": "green", "cap": "black"},
        "E3": {"kind": "dome", "color": "black"},
        "C8": {"kind": "dome", "color": "blue"},
    })
    scene = render_scene(position, _clean(edition="B", dome_look="coin"), seed=1)
    assert scene.truth["position"] == position
    lots = scene.truth["lot_centers_px"]
    b, g, r = _median_bgr(scene.image, lots["C3"])
    assert r > g + 60 and r > b + 60  # red tower seen from above
    cap = _median_bgr(scene.image, lots["F6"])
    assert cap.min() > 100 and cap.max() - cap.min() < 30  # white cap on the apex, lit from above
    assert _median_bgr(scene.image, lots["B8"]).max() < 80  # black cap
    assert _median_bgr(scene.image, lots["E3"]).max() < 90  # black coin dome
    b, g, r = _median_bgr(scene.image, lots["C8"])
    assert b > r + 40  # blue dome
    # an empty lot of edition B is a light, neutral face
    assert _median_bgr(scene.image, lots["A2"]).min() > 120


@pytest.mark.parametrize("edition", ["A", "C", "D"])
def test_tile_faces_of_coloured_editions_show_their_guild(edition: str) -> None:
    scene = render_scene(_position(), _clean(edition=edition), seed=2)
    lots = scene.truth["lot_centers_px"]
    position = scene.truth["position"]
    for key in ("A1", "C1", "E1", "G1"):  # red, blue, green, black tiles
        color = position["tiles"][key]["color"]
        b, g, r = _median_bgr(scene.image, lots[key])  # the non-icon lower-left lot
        if color == "red":
            assert r > b + 40 and r > g + 40
        elif color == "blue":
            assert b > r + 30
        elif color == "green":
            assert g > r + 30 and g > b + 10
        else:
            assert max(b, g, r) < 110


def test_made_up_edition_draws_one_style_per_scene_and_another_per_table() -> None:
    from scenegen.art import style_of

    assert style_of(3) == style_of(3)
    styles = {style_of(seed) for seed in range(12)}
    assert len(styles) == 12
    assert {s.face for s in styles} >= {"ink", "neutral"}  # the guild in the face, or in the icon only
    one = render_scene(_position(), _clean(edition="R", layout_seed=5), seed=2)
    again = render_scene(_position(), _clean(edition="R", layout_seed=5), seed=2)
    other = render_scene(_position(), _clean(edition="R", layout_seed=6), seed=2)
    assert np.array_equal(one.image, again.image)
    assert np.abs(one.image.astype(int) - other.image.astype(int)).mean() > 3.0


@pytest.mark.parametrize("layout_seed", range(6))
def test_made_up_edition_shows_the_guild_on_its_icon_lot_and_black_tiles_dark(layout_seed: int) -> None:
    """Whatever the style, the icon lot of a red tile is red somewhere, and a black tile is dark."""
    scene = render_scene(_position(), _clean(edition="R", layout_seed=layout_seed), seed=2)
    lots = scene.truth["lot_centers_px"]
    position = scene.truth["position"]
    for key in ("A1", "G1"):  # a red tile and a black one (see _position)
        icon = position["tiles"][key]["icon"]
        x, y = (int(round(v)) for v in lots[icon])
        patch = scene.image[y - 8:y + 9, x - 8:x + 9].reshape(-1, 3).astype(int)
        if position["tiles"][key]["color"] == "red":
            redness = patch[:, 2] - patch[:, :2].max(1)
            assert redness.max() > 25
        else:  # a plain lot of the black tile
            plain = next(lot for lot in ("G1", "H1", "G2", "H2") if lot != icon)
            assert _median_bgr(scene.image, lots[plain], half=4).max() < 110


def test_corners_truth_matches_the_distorted_image() -> None:
    """Just inside each outer corner is tile, just outside is table, even with strong distortion."""
    params = _clean(size=(960, 720), k1=-0.05, tilt_deg=12.0, tilt_azimuth_deg=200.0, yaw_deg=33.0,
                    target_offset_mm=(40.0, -30.0), camera_height_mm=480.0, table="plain",
                    table_bgr=(235, 235, 235), edition="A")
    scene = render_scene(_position(), params, seed=3)
    corners = {k: np.array(v) for k, v in scene.truth["corners_px"].items()}
    centre = np.mean(list(corners.values()), axis=0)
    for name, corner in corners.items():
        direction = (centre - corner) / np.linalg.norm(centre - corner)
        inside = _median_bgr(scene.image, list(corner + 7 * direction), half=1)
        outside = _median_bgr(scene.image, list(corner - 5 * direction), half=1)
        assert np.abs(inside - outside).max() > 60, name
        assert outside.min() > 150, name  # the light table


def test_tall_pyramids_lean_outward_and_truth_camera_projects_them() -> None:
    """The apex of a tower on a corner lot is drawn where the truth camera projects it."""
    position = _position({"A1": {"kind": "tower", "color": "red"}, "H10": {"kind": "tower", "color": "green"}})
    params = _clean(size=(800, 600), camera_height_mm=420.0, k1=-0.04, piece_jitter_mm=0.0, tile_mm=70.0)
    scene = render_scene(position, params, seed=4)
    cam = scene.truth["camera"]
    matrix = np.array(cam["camera_matrix"])
    dist = np.array(cam["dist_coeffs"])
    rotation = np.array(cam["rotation"])
    translation = np.array(cam["translation_mm"])
    rvec, _ = cv2.Rodrigues(rotation)
    for lot, colour_index in (("A1", 2), ("H10", 1)):
        base = scene.truth["lot_centers_px"][lot]
        # recover the lot centre in 3D from the truth pixel: intersect its ray with the tile top plane
        und = cv2.undistortPoints(np.array([[base]], dtype=np.float64), matrix, dist).reshape(2)
        ray = rotation.T @ np.array([und[0], und[1], 1.0])
        centre = -rotation.T @ translation
        t = params.tile_thickness_mm
        point = centre + ray * (t - centre[2]) / ray[2]
        high = point + np.array([0.0, 0.0, 30.0])
        uv, _ = cv2.projectPoints(high.reshape(1, 1, 3), rvec, translation, matrix, dist)
        uv = uv.reshape(2)
        lean = np.linalg.norm(uv - np.array(base))
        assert lean > 4  # perspective: the upper part is drawn away from the base
        pixel = _median_bgr(scene.image, list(uv), half=1)
        assert pixel[colour_index] > max(np.delete(pixel, colour_index)) + 25, lot


def test_hand_sets_occlusion_truth_and_covers_the_lots_it_names() -> None:
    hand = Hand(target_mm=(0.0, 0.0), angle_deg=250.0, height_mm=90.0, skin_bgr=(140, 170, 215))
    with_hand = render_scene(_position(), _clean(hand=hand), seed=5)
    without = render_scene(_position(), _clean(), seed=5)
    assert with_hand.truth["occluded"] is True
    occluded = with_hand.truth["occluded_lots"]
    assert {"D5", "E5", "D6", "E6"} & set(occluded)
    assert without.truth["occluded"] is False and without.truth["occluded_lots"] == []
    changed = [lot for lot in occluded
               if np.abs(_median_bgr(with_hand.image, with_hand.truth["lot_centers_px"][lot])
                         - _median_bgr(without.image, without.truth["lot_centers_px"][lot])).max() > 30]
    assert len(changed) >= len(occluded) // 2
    far = [lot for lot in ALL_LOTS if lot not in occluded]
    assert far, "the hand should not cover the whole board"


def test_series_keeps_camera_and_shows_hands_between_moves() -> None:
    positions = game_positions(1)[:3]
    frames = list(scene_series(1, positions, 1, hands=True, light_change_at=[5], bump_at=[6], size=(240, 180)))
    assert len(frames) == 3 + 2 * 2
    assert [f.truth["frame_index"] for f in frames] == list(range(7))
    assert [f.truth["position_index"] for f in frames] == [0, 0, 1, 1, 1, 2, 2]
    assert [f.truth["hand"] for f in frames] == [False, True, True, False, True, True, False]
    for f in frames:
        assert f.truth["position"] == positions[f.truth["position_index"]]
        if not f.truth["hand"]:
            assert f.truth["occluded"] is False
    cameras = [json.dumps(f.truth["camera"]) for f in frames]
    assert len(set(cameras[:6])) == 1 and cameras[6] != cameras[5]  # bumped at frame 6
    lights = [json.dumps(f.truth["params"]["lights"]) for f in frames]
    assert len(set(lights[:5])) == 1 and lights[5] != lights[4]
    assert frames[0].truth["params"]["layout_seed"] == frames[-1].truth["params"]["layout_seed"]


def _board_top_down(scene) -> np.ndarray:
    """The tile array of a frame warped square-on by its truth corners, 64 px a tile."""
    corners = scene.truth["corners_px"]
    src = np.float32([corners[k] for k in ("A1", "H1", "H10", "A10")])
    dst = np.float32([[0, 320], [256, 320], [256, 0], [0, 0]])
    return cv2.warpPerspective(scene.image, cv2.getPerspectiveTransform(src, dst), (256, 320)).astype(np.float32)


@pytest.mark.parametrize("edition", ["B", "R"])
def test_a_knocked_camera_sees_the_same_prints(edition: str) -> None:
    """A camera knocked mid-game frames more or less of the table; the cloth's texture is drawn for
    the view and its random draws come before the tiles' prints, so each tile once came out printed
    anew (another icon turn, other made-up art) and the app's empty-board reference no longer
    matched.  With the first view's table (``table_view``, as scene_series passes) every tile looks
    as it did, up to shading and resampling."""
    params = _clean(size=(960, 720), edition=edition, table="cloth")
    knocked = params.replace(target_offset_mm=(25.0, -15.0), yaw_deg=params.yaw_deg + 1.5)
    before = _board_top_down(render_scene(_position(), params, 1))
    after = _board_top_down(render_scene(_position(), knocked, 2, table_view=params))
    per_tile = np.abs(after - before).mean(axis=2).reshape(5, 64, 4, 64).mean(axis=(1, 3))
    assert per_tile.max() < 3.5


def test_mat_markers_are_drawn_where_the_truth_says() -> None:
    params = _clean(size=(960, 720), mat=Mat(marker_mm=28.0, margin_mm=6.0), k1=-0.04, yaw_deg=21.0, tilt_deg=9.0,
                    camera_height_mm=560.0, tile_mm=52.0, spare_pieces=6)
    scene = render_scene(_position({"D4": {"kind": "dome", "color": "red"}}), params, seed=6)
    truth = scene.truth["mat"]
    assert truth["marker_mm"] == 28.0 and truth["tile_mm"] == 52.0
    detector_params = cv2.aruco.DetectorParameters()
    detector_params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), detector_params)
    corners, ids, _ = detector.detectMarkers(cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY))
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    for quad, marker_id in zip(corners, ids.ravel()):
        expected = np.array(truth["markers_px"][str(marker_id)])
        assert np.abs(quad.reshape(4, 2) - expected).max() < 1.5
    # marker 0 is beside A1, marker 2 beside H10
    a1 = np.array(scene.truth["corners_px"]["A1"])
    h10 = np.array(scene.truth["corners_px"]["H10"])
    m0 = np.array(truth["markers_px"]["0"]).mean(axis=0)
    assert np.linalg.norm(m0 - a1) < np.linalg.norm(m0 - h10)
    # spare pieces stand on the table, not on the board: the position is unchanged
    assert scene.truth["position"]["structures"] == {"D4": {"kind": "dome", "color": "red"}}


@pytest.mark.parametrize("name", HARD_CASES)
def test_hard_cases_show_what_they_name(name: str) -> None:
    scene = hard_case_scene(name, seed=2, size=(240, 180))
    truth = scene.truth
    structures = truth["position"]["structures"]
    tiles = truth["position"]["tiles"]
    assert truth["hard_case"] == name
    if name == "black_dome_on_black_tile":
        assert any(v["kind"] == "dome" and v["color"] == "black"
                   and tiles[lot_name(parse_lot(lot)[0] // 2 * 2, parse_lot(lot)[1] // 2 * 2)]["color"] == "black"
                   for lot, v in structures.items())
    elif name == "black_cap_on_blue_tower":
        assert any(v.get("cap") == "black" and v["color"] == "blue" for v in structures.values())
    elif name == "white_cap_warm_light":
        assert all(light["kelvin"] <= 3000 for light in truth["params"]["lights"])
        assert any(v.get("cap") == "white" for v in structures.values())
    elif name == "patterned_table":
        assert truth["params"]["table"] in ("check", "print")
    elif name == "hand":
        assert truth["occluded"] is True
    if name != "hand":
        assert truth["occluded"] is False


def test_params_round_trip_through_json() -> None:
    params = SceneParams(lights=(Light((1.0, 2.0, 800.0), 3000.0, 0.5, 100.0), Light()),
                         hand=Hand(sleeve_bgr=(1, 2, 3)), jpeg_quality=80, edition="C", mat=Mat(marker_ids=(4, 5, 6, 7)),
                         spare_pieces=3)
    assert SceneParams.from_json(json.loads(json.dumps(params.to_json()))) == params
    with pytest.raises(ValueError, match="edition"):
        SceneParams(edition="Z")
    with pytest.raises(ValueError, match="unknown"):
        SceneParams.from_json({"tile_size": 3})


def test_overrides_are_applied_and_unknown_ones_refused() -> None:
    scene = random_scene(9, size=(320, 240), edition="D", tower_look="translucent", jpeg_quality=85)
    assert scene.truth["params"]["edition"] == "D"
    assert scene.truth["params"]["tower_look"] == "translucent"
    assert scene.truth["params"]["jpeg_quality"] == 85
    with pytest.raises(ValueError, match="no_such_knob"):
        random_scene(9, size=(320, 240), no_such_knob=1)


def test_bad_positions_are_refused_naming_the_field() -> None:
    position = _position()
    del position["tiles"]["C5"]
    with pytest.raises(ValueError, match="C5"):
        render_scene(position, _clean(), 0)
    position = _position({"D4": {"kind": "tower", "color": "black"}})
    with pytest.raises(ValueError, match="D4"):
        render_scene(position, _clean(), 0)


def test_cli_writes_images_with_truth_beside_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main([str(tmp_path), "--count", "2", "--seed", "3", "--size", "160x120", "--jpg"]) == 0
    images = sorted(tmp_path.glob("*.jpg"))
    assert [p.name for p in images] == ["scene_00003.jpg", "scene_00004.jpg"]
    truth = json.loads((tmp_path / "scene_00003.json").read_text())
    assert truth["image"] == "scene_00003.jpg" and truth["seed"] == 3
    written = cv2.imread(str(images[0]))
    assert written is not None and written.shape == (120, 160, 3)
    with pytest.raises(SystemExit) as exit_info:
        cli_main([str(tmp_path), "--size", "big"])
    assert exit_info.value.code == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err


def test_cli_puts_every_frame_on_the_table_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main([str(tmp_path), "--count", "2", "--size", "160x120", "--table", "check",
                     "--table-bgr", "40,40,170"]) == 0
    for path in sorted(tmp_path.glob("*.json")):
        params = json.loads(path.read_text())["params"]
        assert params["table"] == "check" and list(params["table_bgr"]) == [40, 40, 170]
    with pytest.raises(SystemExit) as exit_info:
        cli_main([str(tmp_path), "--table-bgr", "40,40"])
    assert exit_info.value.code == 2
    assert "B,G,R" in capsys.readouterr().err


def test_cli_prints_every_frame_in_the_edition_asked_for(tmp_path: Path) -> None:
    assert cli_main([str(tmp_path), "--count", "2", "--seed", "5", "--size", "160x120", "--edition", "R"]) == 0
    editions = {json.loads(path.read_text())["params"]["edition"] for path in tmp_path.glob("*.json")}
    assert editions == {"R"}


def _golden_files() -> list[Path]:
    return sorted(SCENES_DIR.glob("*.json"))


@pytest.mark.parametrize("truth_path", _golden_files(), ids=lambda p: p.stem)
def test_golden_scenes_render_as_stored(truth_path: Path) -> None:
    """The stored example frames still come out of the renderer (catches accidental changes)."""
    truth = json.loads(truth_path.read_text())
    params = SceneParams.from_json(truth["params"])
    scene = render_scene(truth["position"], params, truth["seed"])
    for key in ("corners_px", "lot_centers_px"):
        assert scene.truth[key].keys() == truth[key].keys()
        for name, point in truth[key].items():
            assert scene.truth[key][name] == pytest.approx(point, abs=0.01), (key, name)
    assert scene.truth["occluded"] == truth["occluded"]
    assert scene.truth["occluded_lots"] == truth["occluded_lots"]
    stored = cv2.imread(str(truth_path.with_name(truth["image"])))
    assert stored is not None and stored.shape == scene.image.shape
    # compare at quarter size: JPEG storage and sensor noise average out, drawing changes do not
    small_stored = cv2.resize(stored, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA).astype(np.int16)
    small_now = cv2.resize(scene.image, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA).astype(np.int16)
    assert float(np.mean(np.abs(small_stored - small_now))) < 2.0


def test_a_tower_shades_its_neighbour_from_a_low_lamp() -> None:
    """Shadows fall on pieces too, not only on the tiles (a hard case for colour reading)."""
    low_lamp = (Light((-900.0, 0.0, 420.0), 5000.0, 0.9, 5.0),)
    dome = {"E5": {"kind": "dome", "color": "green"}}
    params = _clean(lights=low_lamp, ambient=0.2, piece_jitter_mm=0.0)
    lit = render_scene(_position(dome), params, seed=7)
    shaded = render_scene(_position({**dome, "D5": {"kind": "tower", "color": "red"}}), params, seed=7)
    where = lit.truth["lot_centers_px"]["E5"]
    assert _median_bgr(shaded.image, where, half=3).sum() < 0.75 * _median_bgr(lit.image, where, half=3).sum()


def test_glossy_pieces_mirror_the_board_around_them_when_asked() -> None:
    """piece_reflections: a red tower's steep faces on a light card take on the card's paleness (Fresnel)."""
    tower = _position({"C5": {"kind": "tower", "color": "red"}})
    params = _clean(edition="B", piece_jitter_mm=0.0, size=(800, 600), camera_height_mm=450.0)
    plain = render_scene(tower, params, seed=2)
    glossy = render_scene(tower, params.replace(piece_reflections=1.0), seed=2)
    assert plain.truth == {**glossy.truth, "params": plain.truth["params"]}
    x, y = (int(round(v)) for v in plain.truth["lot_centers_px"]["C5"])
    before = plain.image[y - 6:y + 7, x - 6:x + 7].reshape(-1, 3).astype(float)
    after = glossy.image[y - 6:y + 7, x - 6:x + 7].reshape(-1, 3).astype(float)
    redness = lambda bgr: float(np.mean(bgr[:, 2] - bgr[:, :2].mean(axis=1)))  # noqa: E731
    assert redness(after) < redness(before) - 8
    assert redness(after) > 20  # still a red tower
    assert np.array_equal(plain.image[:40, :40], glossy.image[:40, :40])  # the table is not a piece


def test_a_clear_plastic_tower_shows_the_tile_under_it() -> None:
    """tower_glass: a clear green tower is dark on black tiles and bright on red ones, as path-traced and real
    ones are; the lit translucent look (glass 0) is about as bright on both."""
    tower = {"C5": {"kind": "tower", "color": "green"}}
    params = _clean(edition="B", piece_jitter_mm=0.0, size=(800, 600), camera_height_mm=450.0,
                    tower_look="translucent")

    def tower_green(colour: str, glass: float) -> float:
        position = _position(tower)
        position["tiles"] = {key: {**tile, "color": colour} for key, tile in position["tiles"].items()}
        scene = render_scene(position, params.replace(tower_glass=glass), seed=2)
        return float(_median_bgr(scene.image, scene.truth["lot_centers_px"]["C5"], half=4)[1])

    assert tower_green("black", 0.0) > 0.8 * tower_green("red", 0.0)
    assert tower_green("black", 1.0) < 0.6 * tower_green("red", 1.0)
    assert tower_green("black", 1.0) < 0.6 * tower_green("black", 0.0)


def _red_coin_on_red_tiles() -> tuple[dict[str, object], SceneParams]:
    """A red coin on C5 with every tile red: the coin shows only by its rim and top, as own-colour coins do."""
    position = _position({"C5": {"kind": "dome", "color": "red"}})
    position["tiles"] = {key: {**tile, "color": "red"} for key, tile in position["tiles"].items()}
    return position, _clean(edition="B", piece_jitter_mm=0.0, size=(800, 600), camera_height_mm=450.0,
                            dome_look="coin")


def test_a_soft_coin_rim_is_a_fainter_ring_than_the_ray_casters() -> None:
    """coin_rim: a coin of its tile's own colour shows only as a ring; below 1 the ring is fainter, as a
    path tracer shows it (the table's bounced light fills the rim that local shading leaves dark)."""
    position, params = _red_coin_on_red_tiles()

    def ring_over_top(rim: float) -> float:
        scene = render_scene(position, params.replace(coin_rim=rim), seed=2)
        lightness = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY).astype(np.float32)
        lots = scene.truth["lot_centers_px"]
        x, y = lots["C5"]
        radius = params.dome_mm / 2 * abs(lots["D5"][0] - x) / ((params.tile_mm + params.tile_gap_mm) / 2)
        ys, xs = np.mgrid[0:lightness.shape[0], 0:lightness.shape[1]]
        distance = np.hypot(xs - x, ys - y) / radius
        top = float(np.median(lightness[distance < 0.5]))
        ring = min(float(lightness[(distance >= q) & (distance < q + 0.1)].mean()) for q in np.arange(0.7, 1.1, 0.05))
        return ring / top

    dark, faint = ring_over_top(1.0), ring_over_top(0.3)
    assert dark < 0.9
    assert faint > dark + 0.05
    assert faint < 1.0  # still a ring


def test_a_glossy_coin_top_is_lighter_and_paler_than_a_matt_one() -> None:
    """coin_gloss: a glossy coin mirrors the lamps over its whole flat top, so a red coin on a red tile
    shows a top as light as the tile and paler, as path-traced ones do, where the matt one is darker;
    the tile around it stays as it was."""
    position, params = _red_coin_on_red_tiles()

    def top_and_tile(gloss: float) -> tuple[np.ndarray, np.ndarray]:
        scene = render_scene(position, params.replace(coin_gloss=gloss), seed=2)
        lab = cv2.cvtColor(scene.image, cv2.COLOR_BGR2Lab).astype(np.float32)
        lots = scene.truth["lot_centers_px"]

        def patch(lot: str) -> np.ndarray:
            x, y = (int(round(v)) for v in lots[lot])
            return lab[y - 3:y + 4, x - 3:x + 4].reshape(-1, 3).mean(0)

        return patch("C5"), patch("C6")

    matt_top, matt_tile = top_and_tile(0.0)
    glossy_top, glossy_tile = top_and_tile(1.0)
    assert np.allclose(matt_tile, glossy_tile)
    assert glossy_top[0] > matt_top[0] + 5  # lighter
    chroma = lambda lab: float(np.hypot(lab[1] - 128, lab[2] - 128))  # noqa: E731
    assert chroma(glossy_top) < chroma(matt_top) - 5  # paler


@pytest.mark.parametrize("name", HARD_CASES)
def test_hard_lots_hold_the_pieces_that_make_the_case(name: str) -> None:
    truth = hard_case_scene(name, seed=4, size=(240, 180)).truth
    structures, hard = truth["position"]["structures"], truth["hard_lots"]
    if name in ("long_shadows", "many_lamps", "hand"):
        assert hard == []
        return
    assert hard and all(lot in structures for lot in hard)
    wanted = {"black_dome_on_black_tile": lambda s: s["kind"] == "dome" and s["color"] == "black",
              "black_cap_on_blue_tower": lambda s: s.get("cap") == "black" and s["color"] == "blue",
              "white_cap_warm_light": lambda s: s.get("cap") == "white",
              "edge_lean": lambda s: s["kind"] == "tower",
              "glare": lambda s: s["kind"] == "dome",
              "patterned_table": lambda s: True}[name]
    assert all(wanted(structures[lot]) for lot in hard)
    if name == "patterned_table":  # the pieces on edge lots, beside the cloth
        assert all(lot[0] in "AH" or lot[1:] in ("1", "10") for lot in hard)


def test_a_hard_case_has_an_empty_twin_under_the_same_camera_and_lamps() -> None:
    from scenegen import hard_case_empty_board

    scene = hard_case_scene("hand", seed=4, size=(240, 180), edition="R")
    empty = hard_case_empty_board("hand", seed=4, size=(240, 180), edition="R")
    assert scene.truth["occluded"] and not empty.truth["occluded"]
    assert empty.truth["position"]["structures"] == {}
    assert empty.truth["position"]["tiles"] == scene.truth["position"]["tiles"]
    assert empty.truth["corners_px"] == scene.truth["corners_px"]
    assert empty.truth["params"]["lights"] == scene.truth["params"]["lights"]
    assert empty.truth["params"]["edition"] == "R"


@pytest.mark.parametrize("size", [(1640, 1232), (820, 616)])
def test_the_edge_case_keeps_the_whole_array_in_frame(size: tuple[int, int]) -> None:
    """A low camera over large tiles, as the issue allows, but never a board cut by the frame's edge."""
    from scenegen.hard_cases import hard_case_inputs
    from scenegen.sampling import board_fit, random_inputs

    for seed in range(6):
        position, scene_seed, overrides, _ = hard_case_inputs("edge_lean", seed, size)
        params = random_inputs(scene_seed, size, position, overrides)[1]
        inside, width_share = board_fit(params)
        assert inside and width_share <= 0.80 and params.camera_height_mm == 400.0


def test_a_low_lamp_lights_the_table_from_below_the_generators_own_lamps() -> None:
    import math

    from scenegen.sampling import LOW_LAMP_ELEVATION_DEG, low_lamp, random_inputs, sample_lights

    _, params = random_inputs(11, (240, 180))
    for seed in range(12):
        lit = low_lamp(params, np.random.default_rng(seed))
        x, y, z = lit.lights[0].position_mm
        elevation = math.degrees(math.atan2(z, math.hypot(x, y)))
        assert LOW_LAMP_ELEVATION_DEG[0] <= elevation <= LOW_LAMP_ELEVATION_DEG[1]
        assert len(lit.lights) in (1, 2) and lit.ambient <= 0.3
        assert (lit.tile_mm, lit.camera_height_mm, lit.edition) == (params.tile_mm, params.camera_height_mm, params.edition)
    lowest = min(math.degrees(math.atan2(light.position_mm[2], math.hypot(*light.position_mm[:2])))
                 for seed in range(200) for light in sample_lights(np.random.default_rng(seed))[0])
    assert lowest > LOW_LAMP_ELEVATION_DEG[1] - 2  # the benchmarks' lamps stand higher


def test_cli_series_needs_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the engine a series would show a stand-in game whose moves break the rules."""
    import scenegen.__main__

    monkeypatch.setattr(scenegen.__main__, "engine_available", lambda: False)
    assert cli_main([str(tmp_path), "--series", "--count", "1"]) == 2
    assert "engine" in capsys.readouterr().err and not list(tmp_path.iterdir())
