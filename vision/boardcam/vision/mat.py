"""The optional printed mat: four ArUco markers just outside the tile area.

Markers make board finding trivial and orientation unambiguous (marker 0 is
always beside A1), so :func:`boardcam.vision.read_board` uses them whenever
they are visible and falls back to markerless finding otherwise.

Mat coordinates are millimetres with the origin at the A1 outer corner of the
tile area, x towards H1 and y towards A10 (the mat printed with row 10 at the
top).  The calibration package renders the printable mat from :class:`MatSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from boardcam.engine.errors import FormatError
from boardcam.vision.models import CORNER_NAMES, TILES_TALL, TILES_WIDE, BoardPose

DICTIONARY_NAME = "DICT_4X4_50"


@dataclass(frozen=True)
class MatSpec:
    """Physical layout of the marker mat.

    ``gap_mm`` is the allowance between tiles laid by hand, so the printed tile
    area is a little larger than 4×5 bare tiles.  Marker ``i`` sits diagonally
    outside corner ``CORNER_NAMES[i]`` (A1, H1, H10, A10), ``margin_mm`` from it.
    """

    tile_mm: float = 51.0
    gap_mm: float = 1.0
    marker_mm: float = 30.0
    margin_mm: float = 8.0
    dictionary: str = DICTIONARY_NAME
    marker_ids: tuple[int, int, int, int] = (0, 1, 2, 3)

    @property
    def area_mm(self) -> tuple[float, float]:
        """Width (A→H) and height (1→10) of the tile area in millimetres."""
        return (
            TILES_WIDE * self.tile_mm + (TILES_WIDE - 1) * self.gap_mm,
            TILES_TALL * self.tile_mm + (TILES_TALL - 1) * self.gap_mm,
        )

    def tile_area_corners_mm(self) -> np.ndarray:
        """A1, H1, H10, A10 corners of the tile area, mat millimetres."""
        w, h = self.area_mm
        return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])

    def marker_corners_mm(self) -> dict[int, np.ndarray]:
        """Each marker's corners in ArUco order (top-left, top-right, bottom-right,
        bottom-left as printed with row 10 at the top), mat millimetres (y up)."""
        w, h = self.area_mm
        m, s = self.margin_mm, self.marker_mm
        # lower-left corner of each marker square
        origins = [(-m - s, -m - s), (w + m, -m - s), (w + m, h + m), (-m - s, h + m)]
        out = {}
        for marker_id, (x0, y0) in zip(self.marker_ids, origins):
            out[marker_id] = np.array([[x0, y0 + s], [x0 + s, y0 + s], [x0 + s, y0], [x0, y0]], dtype=np.float64)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "tile_mm": self.tile_mm,
            "gap_mm": self.gap_mm,
            "marker_mm": self.marker_mm,
            "margin_mm": self.margin_mm,
            "dictionary": self.dictionary,
            "marker_ids": list(self.marker_ids),
        }

    @classmethod
    def from_json(cls, data: Any) -> MatSpec:
        if not isinstance(data, dict):
            raise FormatError("mat: expected an object")
        try:
            spec = cls(
                tile_mm=float(data.get("tile_mm", 51.0)),
                gap_mm=float(data.get("gap_mm", 1.0)),
                marker_mm=float(data.get("marker_mm", 30.0)),
                margin_mm=float(data.get("margin_mm", 8.0)),
                dictionary=str(data.get("dictionary", DICTIONARY_NAME)),
                marker_ids=tuple(int(v) for v in data.get("marker_ids", (0, 1, 2, 3))),  # type: ignore[arg-type]
            )
        except (TypeError, ValueError) as error:
            raise FormatError(f"mat: {error}") from None
        if len(spec.marker_ids) != 4:
            raise FormatError("mat.marker_ids: expected 4 ids")
        if not hasattr(cv2.aruco, spec.dictionary):
            raise FormatError(f"mat.dictionary: unknown ArUco dictionary {spec.dictionary!r}")
        return spec


def _detector(dictionary: str) -> cv2.aruco.ArucoDetector:
    aruco_dict = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(aruco_dict, params)


def detect_markers(gray: np.ndarray, spec: MatSpec) -> dict[int, np.ndarray]:
    """Marker id -> its 4 corners in image pixels, for the mat's ids only."""
    corners, ids, _ = _detector(spec.dictionary).detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for quad, marker_id in zip(corners, ids.ravel()):
        if int(marker_id) in spec.marker_ids and int(marker_id) not in found:
            found[int(marker_id)] = quad.reshape(4, 2).astype(np.float64)
    return found


def find_mat(gray: np.ndarray, spec: MatSpec | None = None, layout_known: bool = True) -> BoardPose | None:
    """The tile area's pose from the mat's markers, or ``None`` if fewer than two are seen.

    Two markers already give eight point pairs, enough for a homography; the
    corners of the tile area then follow from the mat's geometry, and A1 is
    whichever corner marker 0 marks, however the board is turned.

    ``layout_known`` False: ``spec`` is only a guess (a mat nobody
    calibrated), so the markers' own size and margin may be other than
    assumed.  Fitting all their corners would then trade the markers' size
    against their spacing and skew the area; their centres alone, which
    move with the tile area whatever the markers' size, place it (within a
    fraction of a lot, for the grid to refine).
    """
    spec = spec or MatSpec()
    if gray.ndim == 3:
        gray = cv2.cvtColor(gray, cv2.COLOR_BGR2GRAY)
    return pose_from_markers(detect_markers(gray, spec), spec, layout_known)


def pose_from_markers(found: dict[int, np.ndarray], spec: MatSpec, layout_known: bool = True) -> BoardPose | None:
    """The tile area's pose from markers already found (``detect_markers``), as :func:`find_mat` places it."""
    if len(found) < 2:
        return None
    layout = spec.marker_corners_mm()
    ids = sorted(found)
    if layout_known:  # every marker corner
        src, dst = np.concatenate([layout[i] for i in ids]), np.concatenate([found[i] for i in ids])
    else:  # the markers' centres only
        src, dst = _centre_pairs(found, layout)
    corners = _mapped(src, dst, spec.tile_area_corners_mm())
    if corners is None:
        return None
    return BoardPose({name: (float(x), float(y)) for name, (x, y) in zip(CORNER_NAMES, corners)})


def missing_marker_centres(found: dict[int, np.ndarray], spec: MatSpec) -> dict[int, np.ndarray]:
    """Where the markers not found should be, from two or more found (their centres), in the same pixels.

    The map is the one :func:`find_mat` places the tile area with from
    centres alone, so under a tilted camera it is only near: good for
    knowing where to look again, not for the pose.
    """
    missing = [i for i in spec.marker_ids if i not in found]
    if len(found) < 2 or not missing:
        return {}
    layout = spec.marker_corners_mm()
    centres = _mapped(*_centre_pairs(found, layout), np.array([layout[i].mean(axis=0) for i in missing]))
    return {} if centres is None else dict(zip(missing, centres))


def _centre_pairs(found: dict[int, np.ndarray], layout: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The found markers' centres on the mat (millimetres) and in the image, in the same order."""
    ids = sorted(found)
    return np.array([layout[i].mean(axis=0) for i in ids]), np.array([found[i].mean(axis=0) for i in ids])


def _mapped(src: np.ndarray, dst: np.ndarray, points: np.ndarray) -> np.ndarray | None:
    """``points`` through the map that takes ``src`` to ``dst``: projective from four or more pairs,
    affine from three, a similarity from two (a small marker can be missed in the search image)."""
    if len(src) >= 4:
        h, _ = cv2.findHomography(src, dst, 0)
        return None if h is None else cv2.perspectiveTransform(points.reshape(-1, 1, 2), h).reshape(-1, 2)
    if len(src) == 3:
        m = cv2.getAffineTransform(src.astype(np.float32), dst.astype(np.float32))
    else:  # mat y runs up, image y down: flip it first, as a similarity cannot mirror
        flip = np.array([1.0, -1.0])
        src, points = src * flip, points * flip
        m, _ = cv2.estimateAffinePartial2D(src, dst)
    return None if m is None else points @ np.asarray(m)[:, :2].T + np.asarray(m)[:, 2]
