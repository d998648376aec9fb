"""Camera intrinsics from views of the printed ChArUco target.

``cv2.aruco.CharucoDetector`` finds the markers and interpolates the
chessboard corners in each view; ``cv2.calibrateCamera`` fits the camera
matrix and distortion to all views at once.  What matters to players is
that a bad calibration is never saved: a handful of views all in the
middle of the frame fit the centre beautifully and bend the edges wrong,
which then misplaces every lot near the edge of the board.  So
:func:`calibrate_views` refuses, with the reason and what to do, when there
are too few views, too few corners per view, too little of the frame
covered, or the reprojection error is too high.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from boardcam.calibration.target import DEFAULT_TARGET, TargetSpec
from boardcam.engine.errors import InputError

__all__ = [
    "CharucoView",
    "CalibrationLimits",
    "CameraCalibration",
    "CalibrationRefused",
    "make_detector",
    "detect_view",
    "frame_coverage",
    "calibrate_views",
    "calibrate_images",
    "load_image_dir",
    "IMAGE_SUFFIXES",
]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


class CalibrationRefused(InputError):
    """The views cannot give a trustworthy calibration; nothing was saved.

    ``reason`` is one of ``too_few_views``, ``too_few_corners``,
    ``poor_coverage``, ``error_too_high`` (machine-readable for the display
    and ``--json``); the message says what to do about it.
    """

    def __init__(self, reason: str, message: str, **figures: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.figures = figures


@dataclass(frozen=True)
class CalibrationLimits:
    """When to refuse.  Defaults suit a Pi camera and the A4 default target.

    ``min_corners`` is per view: fewer corners than that and the view's pose
    is too weakly constrained to help (it is skipped).  ``min_coverage`` is
    the share of the frame covered by the union of the views' corner hulls;
    distortion is only measurable where the target has been.
    """

    min_views: int = 6
    min_corners: int = 8
    min_coverage: float = 0.35
    max_rms_px: float = 1.0


@dataclass(frozen=True)
class CharucoView:
    """ChArUco corners found in one image: (N, 1, 2) float32 pixels and (N, 1) ids."""

    corners: np.ndarray
    ids: np.ndarray
    image_size: tuple[int, int]
    name: str = ""

    @property
    def count(self) -> int:
        return int(len(self.ids))


@dataclass(frozen=True)
class CameraCalibration:
    """The fitted camera, with how good it is and how it was obtained."""

    camera_matrix: list[list[float]]
    dist_coeffs: list[float]
    image_size: tuple[int, int]
    rms_px: float
    views_used: int
    views_total: int
    coverage: float
    per_view_rms_px: tuple[float, ...] = field(default=())

    @property
    def focal_px(self) -> tuple[float, float]:
        return self.camera_matrix[0][0], self.camera_matrix[1][1]

    def intrinsics_json(self) -> dict[str, Any]:
        """vision's ``CameraIntrinsics`` JSON plus quality figures (stored in the calibration)."""
        return {
            "camera_matrix": self.camera_matrix,
            "dist_coeffs": self.dist_coeffs,
            "image_size": list(self.image_size),
            "rms_px": self.rms_px,
            "views_used": self.views_used,
            "coverage": self.coverage,
        }

    def to_json(self) -> dict[str, Any]:
        """The ``boardcam calibrate camera --json`` document."""
        return {
            "rms_px": round(self.rms_px, 4),
            "camera_matrix": [[round(v, 4) for v in row] for row in self.camera_matrix],
            "dist_coeffs": [round(v, 6) for v in self.dist_coeffs],
            "image_size": list(self.image_size),
            "views_used": self.views_used,
            "views_total": self.views_total,
            "coverage": round(self.coverage, 3),
        }


def make_detector(spec: TargetSpec = DEFAULT_TARGET) -> cv2.aruco.CharucoDetector:
    """A ChArUco detector with sub-pixel marker refinement."""
    detector_params = cv2.aruco.DetectorParameters()
    detector_params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    charuco_params = cv2.aruco.CharucoParameters()
    charuco_params.tryRefineMarkers = True
    return cv2.aruco.CharucoDetector(spec.board(), charuco_params, detector_params)


def _to_gray(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    raise InputError(f"image: unsupported shape {image.shape}")


def detect_view(
    image: np.ndarray,
    spec: TargetSpec = DEFAULT_TARGET,
    *,
    detector: cv2.aruco.CharucoDetector | None = None,
    name: str = "",
) -> CharucoView | None:
    """The target's corners in one image, or None when it is not seen at all."""
    gray = _to_gray(image)
    detector = detector or make_detector(spec)
    corners, ids, _marker_corners, _marker_ids = detector.detectBoard(gray)
    if ids is None or corners is None or len(ids) == 0:
        return None
    height, width = gray.shape[:2]
    return CharucoView(
        corners=np.asarray(corners, np.float32).reshape(-1, 1, 2),
        ids=np.asarray(ids, np.int32).reshape(-1, 1),
        image_size=(width, height),
        name=name,
    )


def frame_coverage(views: Iterable[CharucoView], image_size: tuple[int, int]) -> float:
    """Share of the frame inside at least one view's corner hull, in [0, 1].

    Rasterised at 1/8 resolution: precise enough to judge "did the target
    visit the corners of the frame", cheap for dozens of views.
    """
    width, height = image_size
    scale = 8.0
    mask = np.zeros((max(1, math.ceil(height / scale)), max(1, math.ceil(width / scale))), np.uint8)
    for view in views:
        if view.count < 3:
            continue
        hull = cv2.convexHull((view.corners.reshape(-1, 2) / scale).astype(np.float32))
        cv2.fillConvexPoly(mask, np.round(hull).astype(np.int32), 1)
    return float(mask.mean())


def _object_points(spec: TargetSpec, view: CharucoView) -> np.ndarray:
    corners3d = np.asarray(spec.board().getChessboardCorners(), np.float32)
    return np.asarray(corners3d[view.ids.reshape(-1)].reshape(-1, 1, 3), np.float32)


def _calibrate_once(
    views: Sequence[CharucoView],
    spec: TargetSpec,
    image_size: tuple[int, int],
    flags: int,
) -> tuple[float, np.ndarray, np.ndarray, list[float]]:
    object_points = [_object_points(spec, view) for view in views]
    image_points = [view.corners for view in views]
    width, height = image_size
    guess = np.array([[width, 0, width / 2], [0, width, height / 2], [0, 0, 1]], np.float64)
    criteria = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9)
    rms, matrix, dist, rvecs, tvecs = cv2.calibrateCamera(
        object_points, image_points, image_size, guess, None, flags=flags, criteria=criteria
    )
    per_view: list[float] = []
    for obj, img, rvec, tvec in zip(object_points, image_points, rvecs, tvecs):
        projected, _ = cv2.projectPoints(obj, rvec, tvec, matrix, dist)
        errors = np.linalg.norm(projected.reshape(-1, 2) - img.reshape(-1, 2), axis=1)
        per_view.append(float(np.sqrt(np.mean(errors**2))))
    return float(rms), matrix, dist, per_view


def calibrate_views(
    views: Sequence[CharucoView],
    spec: TargetSpec = DEFAULT_TARGET,
    *,
    limits: CalibrationLimits = CalibrationLimits(),
    views_total: int | None = None,
    fix_k3: bool = True,
) -> CameraCalibration:
    """Fit the camera to the views or raise :class:`CalibrationRefused`.

    ``views_total`` is how many images were offered (including ones where the
    target was not found), for the report.  ``k3`` is held at zero by
    default: the Pi cameras' mild barrel distortion is fully described by
    k1, k2 and the tangential terms, and a free k3 over-fits the corners of
    the frame that few views reach.  One pass drops views whose error is far
    above the others' (a blurred or mis-detected frame) and refits.
    """
    offered = views_total if views_total is not None else len(views)
    if not views:
        raise CalibrationRefused(
            "too_few_views",
            f"target not found in any of {offered} view(s); need at least {limits.min_views} "
            "(is the whole sheet in focus, flat and well lit?)",
            views_found=0,
        )
    sizes = {view.image_size for view in views}
    if len(sizes) > 1:
        raise InputError(f"calibration views have different sizes: {sorted(sizes)}")
    image_size = views[0].image_size
    if len(views) < limits.min_views:
        raise CalibrationRefused(
            "too_few_views",
            f"target found in only {len(views)} of {offered} view(s); need at least "
            f"{limits.min_views}: show it from more positions and angles",
            views_found=len(views),
        )
    good = [view for view in views if view.count >= limits.min_corners]
    if len(good) < limits.min_views:
        raise CalibrationRefused(
            "too_few_corners",
            f"only {len(good)} view(s) show at least {limits.min_corners} target corners "
            f"(need {limits.min_views}); hold the target closer or keep more of it in the frame",
            views_with_enough_corners=len(good),
        )
    coverage = frame_coverage(good, image_size)
    if coverage < limits.min_coverage:
        raise CalibrationRefused(
            "poor_coverage",
            f"the views cover only {coverage:.0%} of the frame (need {limits.min_coverage:.0%}); "
            "move the target to the corners and edges of the picture too",
            coverage=coverage,
        )
    flags = cv2.CALIB_FIX_K3 if fix_k3 else 0
    rms, matrix, dist, per_view = _calibrate_once(good, spec, image_size, flags)
    median = float(np.median(per_view))
    kept = [view for view, err in zip(good, per_view) if err <= max(3.0 * median, 0.5)]
    if len(good) > len(kept) >= limits.min_views:
        rms, matrix, dist, per_view = _calibrate_once(kept, spec, image_size, flags)
        good = kept
    if not math.isfinite(rms) or rms > limits.max_rms_px:
        raise CalibrationRefused(
            "error_too_high",
            f"reprojection error {rms:.2f} px is above {limits.max_rms_px:.2f} px; "
            "check the printed square size, keep the target flat and avoid motion blur",
            rms_px=rms,
        )
    return CameraCalibration(
        camera_matrix=[[float(v) for v in row] for row in matrix],
        dist_coeffs=[float(v) for v in np.asarray(dist).reshape(-1)],
        image_size=image_size,
        rms_px=rms,
        views_used=len(good),
        views_total=offered,
        coverage=frame_coverage(good, image_size),
        per_view_rms_px=tuple(per_view),
    )


def calibrate_images(
    images: Iterable[tuple[str, np.ndarray]],
    spec: TargetSpec = DEFAULT_TARGET,
    *,
    limits: CalibrationLimits = CalibrationLimits(),
) -> CameraCalibration:
    """Detect the target in each (name, image) and calibrate from the views found."""
    detector = make_detector(spec)
    views: list[CharucoView] = []
    offered = 0
    for name, image in images:
        offered += 1
        view = detect_view(image, spec, detector=detector, name=name)
        if view is not None:
            views.append(view)
    return calibrate_views(views, spec, limits=limits, views_total=offered)


def load_image_dir(directory: str | Path) -> list[tuple[str, np.ndarray]]:
    """All readable images in a folder, sorted by name; InputError if none."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"--images: {directory} is not a folder")
    images: list[tuple[str, np.ndarray]] = []
    for path in sorted(directory.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise InputError(f"--images: cannot read image {path}")
        images.append((path.name, image))
    if not images:
        raise InputError(f"--images: no images ({', '.join(IMAGE_SUFFIXES)}) in {directory}")
    return images
