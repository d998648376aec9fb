"""Draw what a Reading says over the frame, for people to check it at a glance."""

from __future__ import annotations

import cv2
import numpy as np

from boardcam.vision.geometry import board_points_in_frame, board_to_image
from boardcam.vision.models import LOTS_TALL, LOTS_WIDE, TILES_TALL, TILES_WIDE, CameraIntrinsics
from boardcam.vision.reader import Reading
from boardcam.vision.tiles import lot_name

BGR = {
    "red": (40, 40, 230),
    "blue": (230, 120, 30),
    "green": (40, 200, 40),
    "black": (20, 20, 20),
    "white": (250, 250, 250),
}


def _project(reading: Reading, pts: np.ndarray, intrinsics: CameraIntrinsics | None, size: tuple[int, int]) -> np.ndarray:
    return board_points_in_frame(board_to_image(reading.pose), pts, intrinsics, size)


def draw_overlay(image_bgr: np.ndarray, reading: Reading, intrinsics: CameraIntrinsics | None = None) -> np.ndarray:
    """A copy of the frame with the grid, tile colours, structures and confidences drawn on."""
    out = image_bgr.copy()
    size = (out.shape[1], out.shape[0])
    scale = max(1, round(out.shape[1] / 800))
    for i in range(LOTS_WIDE + 1):
        a, b = _project(reading, np.array([[i / 2, 0.0], [i / 2, TILES_TALL]]), intrinsics, size)
        cv2.line(out, tuple(map(int, a)), tuple(map(int, b)), (255, 255, 255) if i % 2 == 0 else (160, 160, 160), scale)
    for j in range(LOTS_TALL + 1):
        a, b = _project(reading, np.array([[0.0, j / 2], [TILES_WIDE, j / 2]]), intrinsics, size)
        cv2.line(out, tuple(map(int, a)), tuple(map(int, b)), (255, 255, 255) if j % 2 == 0 else (160, 160, 160), scale)
    for key, tile in reading.position_dict["tiles"].items():
        col, row = "ABCDEFGH".index(key[0]), int(key[1:]) - 1
        ic, ir = "ABCDEFGH".index(tile["icon"][0]), int(tile["icon"][1:]) - 1
        centre = _project(reading, np.array([[(ic + 0.5) / 2, (ir + 0.5) / 2]]), intrinsics, size)[0]
        cv2.drawMarker(out, tuple(map(int, centre)), BGR[tile["color"]], cv2.MARKER_STAR, 14 * scale, 2 * scale)
    for row in range(LOTS_TALL):
        for col in range(LOTS_WIDE):
            name = lot_name(col, row)
            centre = _project(reading, np.array([[(col + 0.5) / 2, (row + 0.5) / 2]]), intrinsics, size)[0]
            c = tuple(map(int, centre))
            if name in reading.occluded_lots:
                cv2.drawMarker(out, c, (0, 0, 255), cv2.MARKER_TILTED_CROSS, 18 * scale, 2 * scale)
                continue
            structure = reading.position_dict["structures"].get(name)
            if structure is None:
                continue
            colour = BGR[structure["color"]]
            if structure["kind"] == "tower":
                cv2.drawMarker(out, c, colour, cv2.MARKER_TRIANGLE_UP, 22 * scale, 3 * scale)
                if structure.get("cap"):
                    cv2.circle(out, c, 4 * scale, BGR[structure["cap"]], -1)
            else:
                cv2.circle(out, c, 8 * scale, colour, 3 * scale)
            conf = reading.lot_confidence.get(name, 0.0)
            cv2.putText(out, f"{conf:.2f}", (c[0] + 6 * scale, c[1] + 12 * scale), cv2.FONT_HERSHEY_SIMPLEX, 0.35 * scale, (255, 255, 0), scale)
    for name, (x, y) in reading.corners_px.items():
        cv2.putText(out, name, (int(x), int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 255, 255), 2 * scale)
    if reading.occluded:
        cv2.putText(out, "OCCLUDED", (20, 40 * scale), cv2.FONT_HERSHEY_SIMPLEX, 1.0 * scale, (0, 0, 255), 2 * scale)
    return out
