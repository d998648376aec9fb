import numpy as np

from bench_vision import _normal_structure, truth_in_reader_convention
from boardcam.vision import BoardPose, empty_board_reference, read_board
from boardcam.vision.align import align_to_reference

from .conftest import scene

PIECES = {"B2": {"kind": "tower", "color": "red"}, "E5": {"kind": "dome", "color": "blue"},
          "G9": {"kind": "tower", "color": "green", "cap": "white"}, "C7": {"kind": "dome", "color": "black"}}


def _truth(sc):
    corners, position = truth_in_reader_convention(sc.truth)
    return BoardPose({k: tuple(v) for k, v in corners.items()}), position


def _off_by(pose: BoardPose, pose_b: BoardPose) -> float:
    return max(float(np.hypot(*np.subtract(pose.corners_px[k], pose_b.corners_px[k]))) for k in pose.corners_px)


def _nudged(pose: BoardPose) -> BoardPose:
    """The pose a search after a bump finds: a pixel or two off, each corner a little differently."""
    shift = {"A1": (1.8, -1.2), "H1": (2.1, -1.0), "H10": (1.9, -1.5), "A10": (1.6, -1.1)}
    return BoardPose({k: (x + shift[k][0], y + shift[k][1]) for k, (x, y) in pose.corners_px.items()})


def test_a_pose_off_by_pixels_is_registered_on_the_empty_board_reference():
    played, truth, position, reference = _setup()
    nudged = _nudged(truth)
    aligned = align_to_reference(played.image, nudged, reference, structures=position["structures"])
    assert _off_by(nudged, truth) > 2.0
    assert _off_by(aligned, truth) < 0.6  # the pieces placed since do not pull it off
    read = read_board(played.image, pose=aligned, reference=reference).position_dict["structures"]
    assert {lot: _normal_structure(s) for lot, s in read.items()} == {
        lot: _normal_structure(s) for lot, s in position["structures"].items()}


def test_a_frame_that_is_not_the_board_leaves_the_pose_as_it_was():
    empty = scene({}, hand=None)
    truth, position = _truth(empty)
    reference = empty_board_reference(empty.image, truth, tiles=position["tiles"])
    noise = np.random.default_rng(0).integers(0, 255, empty.image.shape, dtype=np.uint8)
    assert align_to_reference(noise, truth, reference) is truth


def _moved_frame(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, turn_deg: float = 0.0) -> np.ndarray:
    """The same frame after a knock of the camera: shifted by (dx, dy) pixels, turned about its centre."""
    import cv2

    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), turn_deg, 1.0)
    m[:, 2] += (dx, dy)
    return cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _setup(pieces=PIECES):
    empty, played = scene({}, hand=None), scene(pieces, hand=None)
    truth, position = _truth(played)
    reference = empty_board_reference(empty.image, _truth(empty)[0], tiles=position["tiles"])
    return played, truth, position, reference


def test_a_small_knock_is_found_where_both_halves_of_the_board_agree():
    played, truth, position, reference = _setup()
    knocked = _moved_frame(played.image, dx=3.0, dy=-2.0)
    found = align_to_reference(knocked, truth, reference, structures=position["structures"], halves_agree=True)
    moved = BoardPose({k: (x + 3.0, y - 2.0) for k, (x, y) in truth.corners_px.items()})
    assert _off_by(found, moved) < 0.6


def test_a_still_board_keeps_its_pose():
    played, truth, position, reference = _setup()
    found = align_to_reference(played.image, truth, reference, structures=position["structures"], halves_agree=True)
    assert found is truth or _off_by(found, truth) < 0.5


def test_a_turn_no_shift_describes_is_left_to_the_search():
    """Each half of a turned board is shifted its own way: a shift for the whole would be wrong."""
    played, truth, position, reference = _setup()
    turned = _moved_frame(played.image, turn_deg=3.0)
    whole = align_to_reference(turned, truth, reference, structures=position["structures"])
    assert _off_by(whole, truth) > 2.0  # one shift for the whole board: corners moved the wrong way
    assert align_to_reference(turned, truth, reference, structures=position["structures"], halves_agree=True) is truth
