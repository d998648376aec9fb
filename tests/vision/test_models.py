import pytest

from boardcam.engine.errors import FormatError
from boardcam.vision.models import Appearance, BoardPose, CameraIntrinsics, ColourStats

K = [[1000.0, 0.0, 820.0], [0.0, 1000.0, 616.0], [0.0, 0.0, 1.0]]


def test_intrinsics_round_trip_and_scaling():
    intr = CameraIntrinsics.from_json({"camera_matrix": K, "dist_coeffs": [-0.02, 0, 0, 0, 0], "image_size": [1640, 1232]})
    assert CameraIntrinsics.from_json(intr.to_json()) == intr
    half = intr.scaled_to((820, 616))
    assert half.camera_matrix[0][0] == pytest.approx(500.0)
    assert half.camera_matrix[1][2] == pytest.approx(308.0)


def test_intrinsics_accepts_opencv_nested_coefficients():
    intr = CameraIntrinsics.from_json({"camera_matrix": K, "dist_coeffs": [[-0.1, 0.01, 0, 0, 0]], "image_size": [10, 10]})
    assert intr.dist_coeffs[0] == -0.1


@pytest.mark.parametrize(
    "data, field",
    [
        ({"camera_matrix": [[1, 0], [0, 1]], "dist_coeffs": [0] * 5, "image_size": [1, 1]}, "camera_matrix"),
        ({"camera_matrix": K, "dist_coeffs": [0] * 3, "image_size": [1, 1]}, "dist_coeffs"),
        ({"camera_matrix": K, "dist_coeffs": [0] * 5, "image_size": [0, 1]}, "image_size"),
        ({"camera_matrix": K, "dist_coeffs": [0] * 5}, "image_size"),
    ],
)
def test_intrinsics_errors_name_the_field(data, field):
    with pytest.raises(FormatError, match=field):
        CameraIntrinsics.from_json(data)


def test_pose_round_trip_and_missing_corner():
    pose = BoardPose.from_points([(1, 2), (3, 4), (5, 6), (7, 8)])
    assert BoardPose.from_json(pose.to_json()).ordered() == pose.ordered()
    with pytest.raises(FormatError, match="H10"):
        BoardPose.from_json({"corners_px": {"A1": [0, 0], "H1": [1, 0], "A10": [0, 1]}})
    with pytest.raises(FormatError, match="A1"):
        BoardPose.from_json({"corners_px": {"A1": [0, "x"], "H1": [1, 0], "H10": [1, 1], "A10": [0, 1]}})


def test_appearance_round_trip_and_bounds():
    stats = ColourStats((50.0, 40.0, 30.0), ((4.0, 0, 0), (0, 4.0, 0), (0, 0, 4.0)), 10)
    app = Appearance(tile_mm=60.0, colours={"structure:red": stats}, white_balance=(1.1, 1.0, 0.9))
    again = Appearance.from_json(app.to_json())
    assert again.tile_mm == 60.0 and again.colours["structure:red"] == stats and again.white_balance == (1.1, 1.0, 0.9)
    with pytest.raises(FormatError, match="tile_mm"):
        Appearance.from_json({"tile_mm": 5})
    with pytest.raises(FormatError, match="white_balance"):
        Appearance.from_json({"white_balance": [1, 2]})


def test_appearance_says_what_the_towers_are_made_of_and_older_files_mean_opaque():
    assert Appearance.from_json({}).towers == "opaque"  # a calibration written before the setting
    clear = Appearance(towers="clear")
    assert Appearance.from_json(clear.to_json()).towers == "clear"
    with pytest.raises(FormatError, match="appearance.towers: 'glass' is not one of opaque, clear"):
        Appearance.from_json({"towers": "glass"})


def test_empty_board_reference_round_trip_and_errors():
    import numpy as np

    from boardcam.vision.models import EmptyBoardReference

    tiles = {f"{c}{r}": {"color": "red", "icon": f"{c}{r}"} for r in (1, 3, 5, 7, 9) for c in "ACEG"}
    lab = np.random.default_rng(0).normal(50, 10, (80, 2, 2, 3)).round(1)
    ref = EmptyBoardReference(2, lab, tiles)
    packed = ref.to_json()
    assert isinstance(packed["lab"], str)  # base64, not 61 440 JSON numbers at full resolution
    again = EmptyBoardReference.from_json(packed)
    assert np.abs(again.lab[..., 0] - ref.lab[..., 0]).max() <= 0.25  # L kept to half a unit
    assert np.abs(again.lab[..., 1:] - ref.lab[..., 1:]).max() <= 0.5 and again.tiles == tiles
    listed = EmptyBoardReference.from_json(dict(packed, lab=ref.lab.reshape(80, -1).tolist()))  # plain lists still load
    assert np.allclose(listed.lab, ref.lab)
    assert again.lots_at(6).shape == (80, 6, 6, 3)
    assert again.tile_readings()["C3"].icon_lot == 18
    app = Appearance.from_json(Appearance(reference=ref).to_json())
    assert app.reference is not None and np.allclose(app.reference.lab, again.lab)
    assert Appearance.from_json({"tile_mm": 60}).reference is None
    with pytest.raises(FormatError, match="reference.lab"):
        EmptyBoardReference.from_json({"lot_px": 2, "lab": [[1.0] * 5] * 80, "tiles": tiles})
    with pytest.raises(FormatError, match="reference.lab"):
        EmptyBoardReference.from_json({"lot_px": 2, "lab": "not base64!", "tiles": tiles})
    with pytest.raises(FormatError, match="reference.lab"):
        EmptyBoardReference.from_json({"lot_px": 2, "lab": "AAAA", "tiles": tiles})  # too few bytes
    with pytest.raises(FormatError, match="reference.tiles.A1.color"):
        EmptyBoardReference.from_json(dict(ref.to_json(), tiles=dict(tiles, A1={"color": "pink", "icon": "A1"})))


def test_a_tile_read_unsurely_at_setup_stays_unsure_with_its_icon_ranking():
    """The referee asks for an unsure tile to be checked and lets play settle its icon: both need the
    setup's confidence, icon ranking and guild probabilities on every later reading, and in a stored reference."""
    import numpy as np

    from boardcam.vision.models import EmptyBoardReference

    tiles = {f"{c}{r}": {"color": "red", "icon": f"{c}{r}"} for r in (1, 3, 5, 7, 9) for c in "ACEG"}
    tiles["C3"] = {"color": "red", "icon": "D3", "confidence": 0.6, "icon_order": ["D3", "C4", "C3", "D4"],
                   "colour_probs": [0.6, 0.05, 0.3, 0.05]}
    ref = EmptyBoardReference.from_json(EmptyBoardReference(2, np.zeros((80, 2, 2, 3)), tiles).to_json())
    read = ref.tile_readings()
    assert read["C3"].confidence == 0.6 and read["C3"].icon_order == (19, 26, 18, 27)
    assert read["C3"].colour_order == ("red", "green", "blue", "black")  # (a tie keeps the guilds' order)
    assert read["A1"].confidence == 1.0 and read["A1"].icon_order == () and read["A1"].colour_order == ()
    for bad, field in (({"confidence": 1.5}, "confidence"), ({"icon_order": ["C3", "Z9"]}, "icon_order"),
                       ({"icon_order": "C3"}, "icon_order"), ({"colour_probs": [0.5, 0.5]}, "colour_probs"),
                       ({"colour_probs": [0.5, 0.5, 2, 0]}, "colour_probs")):
        with pytest.raises(FormatError, match=f"reference.tiles.C3.{field}"):
            EmptyBoardReference.from_json(dict(ref.to_json(), tiles=dict(tiles, C3={**tiles["C3"], **bad})))


def test_a_references_print_lots_are_kept_in_its_json():
    """The lots a vouched-clear board showed print on stay print in a stored reference; a list that
    names no lots is a clear error."""
    import numpy as np

    from boardcam.vision.models import EmptyBoardReference

    tiles = {f"{c}{r}": {"color": "red", "icon": f"{c}{r}"} for r in (1, 3, 5, 7, 9) for c in "ACEG"}
    ref = EmptyBoardReference(2, np.zeros((80, 2, 2, 3)), tiles, print_lots=frozenset({23, 36}))
    assert ref.to_json()["print_lots"] == ["H3", "E5"]
    assert EmptyBoardReference.from_json(ref.to_json()).print_lots == {23, 36}
    assert EmptyBoardReference.from_json({k: v for k, v in ref.to_json().items() if k != "print_lots"}).print_lots == set()
    for bad in ("H3", ["H3", "Z9"]):
        with pytest.raises(FormatError, match="reference.print_lots"):
            EmptyBoardReference.from_json(dict(ref.to_json(), print_lots=bad))
