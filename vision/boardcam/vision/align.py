"""Register a board pose on the empty-board reference.

Why: the app compares every lot with how it looked empty at setup.  After a
bump of the camera the board is searched again, and the grid a search finds
sits up to a pixel or so of the warped view off where the setup frame put
it; against the reference every printed edge then shows as a departure, and
fine art (thin icons, printed blocks) reads as pieces.  The reference itself
is the best template of this board there is, so the new pose is moved until
the warped frame lies on it: OpenCV's ECC registration finds how far the
board is shifted (the grid's many straight edges make it sharp to a tenth
of a pixel), on the lots where no piece stands or leans, and the corners
move by that shift.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from boardcam.engine.aliencity import parse_lot
from boardcam.vision.colour import board_gains, to_lab
from boardcam.vision.geometry import BOARD_CORNERS_TILES, board_to_image, build_warp
from boardcam.vision.models import LOTS_TALL, LOTS_WIDE, TILES_TALL, BoardPose, CameraIntrinsics, EmptyBoardReference

ALIGN_TILE_PX = 32  # the reading's resolution: a pixel here is a thirty-second of a tile
#: below this correlation between the frame and the reference the registration is not trusted
MIN_CORRELATION = 0.5
ECC_STOP = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5)
#: below this share of the board free of pieces there is too little print left to register on
MIN_FREE_SHARE = 0.2
#: a correction larger than this (tiles) is not a registration error but a wrong grid: the pose is kept
MAX_SHIFT_TILES = 0.25
#: the two halves of the board must agree on a knock's shift within this (pixels at ALIGN_TILE_PX)
HALVES_AGREE_PX = 1.0


def align_to_reference(
    image_bgr: np.ndarray,
    pose: BoardPose,
    reference: EmptyBoardReference,
    intrinsics: CameraIntrinsics | None = None,
    structures: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    halves_agree: bool = False,
) -> BoardPose:
    """``pose`` moved so the frame's warped board lies on ``reference``; ``pose`` itself when that cannot be told.

    ``structures`` (lot name -> structure, as read at ``pose``): the lots the
    registration must not look at.  A late game's towers lean over their
    neighbours and would pull the map toward themselves; a tower's lot and
    the lots around it, and a dome's lot, are left out.

    The correction is one shift: it is what a re-found grid is mostly off
    by, and ECC finds it reliably with pieces about.  Fitting an affine map
    (ECC directly, or through the shifts of the board's quarters) let the
    pieces pull the corners pixels off on mid-game boards.

    ``halves_agree``: believe the shift only when the near and the far half
    of the board, each registered on its own, agree on it (within
    HALVES_AGREE_PX) -- for a pose that was not searched again, to follow a
    small knock.  Why: on a still board a registration can lock a few pixels
    off, pulled by a late game's pieces and their shadows or by a lamp that
    changed since the reference, and a knock may turn the camera as well;
    a shift moves the whole board alike, such a pull or a turn does not.
    """
    template = _lightness(reference.lots_at(ALIGN_TILE_PX // 2))
    mask = _empty_lots_mask(structures or {})
    seen = _seen_lightness(image_bgr, pose, reference, intrinsics)
    shift = _shift(template, seen, mask)
    if shift is None or (halves_agree and not _halves_agree(template, seen, mask, shift)):
        return pose
    move = np.array([shift[0] / ALIGN_TILE_PX, -shift[1] / ALIGN_TILE_PX])  # board tile units, y up
    if np.abs(move).max() > MAX_SHIFT_TILES:  # not a registration error but a wrong grid
        return pose
    return _corrected(pose, np.column_stack([np.eye(2), move]))


def _halves_agree(template: np.ndarray, seen: np.ndarray, mask: np.ndarray, whole: tuple[float, float]) -> bool:
    """Whether the near and the far half of the board, registered apart, each find ``whole``'s shift."""
    middle = mask.shape[0] // 2
    for half in (np.s_[:middle], np.s_[middle:]):
        part = np.zeros_like(mask)
        part[half] = mask[half]
        shift = _shift(template, seen, part, share_of=mask.size // 2)
        if shift is None or max(abs(shift[0] - whole[0]), abs(shift[1] - whole[1])) > HALVES_AGREE_PX:
            return False
    return True


def _empty_lots_mask(structures: Mapping[str, Mapping[str, Any]]) -> np.ndarray:
    """uint8 mask of the warped board (row 10 up): 255 where no piece stands or leans."""
    free = np.ones((LOTS_TALL, LOTS_WIDE), bool)  # [row from the bottom, column]
    for name, structure in structures.items():
        row, col = divmod(parse_lot(name), LOTS_WIDE)
        if structure.get("kind") == "tower":
            free[max(row - 1, 0) : row + 2, max(col - 1, 0) : col + 2] = False
        else:
            free[row, col] = False
    lot = ALIGN_TILE_PX // 2
    return np.kron(free[::-1], np.ones((lot, lot), np.uint8)).astype(np.uint8) * 255


def _lightness(lots: np.ndarray) -> np.ndarray:
    from boardcam.vision.lot_net import board_image

    return np.ascontiguousarray(board_image(np.asarray(lots, np.float32))[..., 0])


def _seen_lightness(image_bgr: np.ndarray, pose: BoardPose, reference: EmptyBoardReference,
                    intrinsics: CameraIntrinsics | None) -> np.ndarray:
    """The frame's board warped at ALIGN_TILE_PX, balanced as the reference was: its lightness."""
    h, w = image_bgr.shape[:2]
    warped = build_warp(pose, (w, h), ALIGN_TILE_PX, intrinsics, 0).warp(image_bgr)
    gains = np.array(reference.white_balance) if reference.white_balance is not None else board_gains(warped)
    return np.ascontiguousarray(to_lab(warped, gains)[..., 0])


def _shift(template: np.ndarray, seen: np.ndarray, mask: np.ndarray,
           share_of: int | None = None) -> tuple[float, float] | None:
    """Where ``template``'s print lies in ``seen`` (pixels), or None when too little of it is free
    (of ``share_of`` pixels: the whole mask by default) or it does not lock."""
    if cv2.countNonZero(mask) < MIN_FREE_SHARE * (share_of or mask.size):
        return None
    try:
        correlation, warp = cv2.findTransformECC(template, seen, np.eye(2, 3, dtype=np.float32),
                                                 cv2.MOTION_TRANSLATION, ECC_STOP, mask, 3)
    except cv2.error:  # no convergence: nothing here to lock on to
        return None
    if correlation < MIN_CORRELATION:
        return None
    return float(warp[0, 2]), float(warp[1, 2])


def _corrected(pose: BoardPose, affine: np.ndarray) -> BoardPose:
    """The pose whose board point b is the old pose's point affine(b): where the reference's print now is."""
    homography = board_to_image(pose)
    moved = BOARD_CORNERS_TILES.astype(np.float64) @ affine[:, :2].T + affine[:, 2]
    image = cv2.perspectiveTransform(moved.reshape(-1, 1, 2), homography).reshape(-1, 2)
    return BoardPose.from_points(image)
