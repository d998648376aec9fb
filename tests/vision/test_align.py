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
    empty, played = scene({}, hand=None), scene(PIECES, hand=None)
    truth, position = _truth(played)
    reference = empty_board_reference(empty.image, _truth(empty)[0], tiles=position["tiles"])
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
