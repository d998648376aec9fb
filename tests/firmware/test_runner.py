from types import SimpleNamespace

import numpy as np
import pytest

import boardcam.vision
from boardcam.engine.aliencity import Position
from boardcam.firmware.runner import VisionReader
from boardcam.vision import BoardNotFoundError

from helpers import played_game, positions_of


@pytest.fixture
def fake_vision(monkeypatch):
    calls = []
    board = positions_of(played_game(2))[3]

    def read_board(image, *, pose=None, **parts):
        calls.append(pose)
        if pose is None and image[0, 0, 0] == 1:  # a hand over the board edge: no search result
            raise BoardNotFoundError("no tile array found")
        return SimpleNamespace(position=Position.from_json(board), lot_confidence={"A1": 0.9},
                               tile_confidence={}, occluded=False, pose=pose or "found")

    monkeypatch.setattr(boardcam.vision, "read_board", read_board)
    return calls


def test_the_board_is_searched_after_motion_and_the_pose_reused_for_looks(fake_vision):
    reader = VisionReader(None)
    image = np.zeros((10, 10, 3), np.uint8)
    observation = reader(image)
    assert observation.lot_confidence == {"A1": 0.9} and fake_vision == [None]
    reader(image)  # looking again at a still board: no search
    assert fake_vision == [None, "found"]
    reader.board_moved()
    reader(image)
    assert fake_vision[-1] is None  # a bump must not be read through a stale pose


def test_a_failed_search_falls_back_to_the_last_pose(fake_vision):
    reader = VisionReader(None)
    reader(np.zeros((10, 10, 3), np.uint8))
    reader.board_moved()
    covered = np.ones((10, 10, 3), np.uint8)
    reader(covered)
    assert fake_vision[-2:] == [None, "found"]
    with pytest.raises(BoardNotFoundError):
        VisionReader(None)(covered)  # no pose to fall back on

