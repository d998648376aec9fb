"""boardcam vision: one overhead frame -> the Alien City position, with confidences.

``read_board`` is the entry point; each stage lives in its own module
(find_board, mat, tiles, lots, occlusion) as pure functions.
"""

from boardcam.vision.errors import BoardNotFoundError
from boardcam.vision.models import Appearance, BoardPose, CameraIntrinsics, ColourStats, EmptyBoardReference
from boardcam.vision.reader import Reading, empty_board_reference, read_board

__all__ = [
    "Appearance",
    "BoardNotFoundError",
    "BoardPose",
    "CameraIntrinsics",
    "ColourStats",
    "EmptyBoardReference",
    "Reading",
    "empty_board_reference",
    "read_board",
]
