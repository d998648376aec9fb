"""The calibration file: one versioned JSON document, written atomically.

A referee that crashes at start because its calibration file was half
written during a power cut is worse than one that runs uncalibrated.  So:

* writes go to a temporary file in the same directory, are fsynced, then
  renamed over the old file (a reader sees the old or the new, never half);
  the previous file is kept as ``calibration.json.bak``;
* reads never raise for a missing, corrupt, older or newer file: they return
  ``None`` with a one-line message saying what is wrong and what to run.

The parts that belong to the vision package (intrinsics, board pose,
learned appearance, mat spec) are kept as their JSON form here and turned
into vision objects on demand, so a file stays loadable while the vision
package evolves.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boardcam.calibration.settings import CameraSettings
from boardcam.calibration.target import TargetSpec
from boardcam.engine.errors import FormatError

__all__ = [
    "CALIBRATION_VERSION",
    "CALIBRATION_FILENAME",
    "Calibration",
    "state_dir",
    "calibration_path",
    "load_calibration",
    "load_calibration_with_message",
    "save_calibration",
    "atomic_write_text",
    "atomic_write_bytes",
    "REFERENCE_SHIFT_LOTS",
    "reference_problem",
    "pack_reference",
    "unpack_reference",
]

log = logging.getLogger(__name__)

#: Bump when the document changes incompatibly; older files are then refused
#: (with a message to recalibrate) rather than misread.
CALIBRATION_VERSION = 1
CALIBRATION_FILENAME = "calibration.json"
ROW1_SIDES = ("bottom", "top", "left", "right")
#: How far (in lots, half a tile) any corner of the array may be from where it
#: was when the empty-board reference was taken before the reference is set
#: aside.  The reference is stored per lot in the board's own top-down view, so
#: a bump of a few millimetres (which the drift check reports and the reader
#: re-finds) leaves it valid; more than this means the board or the camera was
#: moved on purpose and the picture of the empty board belongs to another setup.
REFERENCE_SHIFT_LOTS = 0.5
CORNERS = ("A1", "H1", "H10", "A10")


def state_dir() -> Path:
    """Where boardcam keeps its state (calibration, game logs).

    ``$BOARDCAM_STATE_DIR`` wins (tests, unusual installs); under systemd with
    ``StateDirectory=boardcam`` the service gets ``$STATE_DIRECTORY``
    (/var/lib/boardcam); otherwise the XDG state directory.  Nothing is
    created here: writers create the directory when they first write.
    """
    explicit = os.environ.get("BOARDCAM_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    systemd = os.environ.get("STATE_DIRECTORY")
    if systemd:
        # systemd passes a colon-separated list when several are configured.
        return Path(systemd.split(":")[0])
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "boardcam"


def calibration_path() -> Path:
    return state_dir() / CALIBRATION_FILENAME


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; some filesystems refuse, which is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _backup_path(path: Path) -> Path:
    return path.with_name(path.name + ".bak")


def atomic_write_bytes(path: str | Path, data: bytes, *, keep_backup: bool = False) -> Path:
    """Replace ``path`` with ``data`` so readers never see a partial file.

    With ``keep_backup`` the current file (if any) is first hard-linked (or
    copied) to ``<name>.bak``; the live file exists at every moment.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if keep_backup and path.exists():
            _keep_previous(path)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(directory)
    return path


def _keep_previous(path: Path) -> None:
    backup = _backup_path(path)
    fd, staging_name = tempfile.mkstemp(prefix=f".{backup.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    staging = Path(staging_name)
    try:
        staging.unlink()
        try:
            os.link(path, staging)
        except OSError:  # filesystem without hard links: copy instead
            staging.write_bytes(path.read_bytes())
        os.replace(staging, backup)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def atomic_write_text(
    path: str | Path, text: str, *, keep_backup: bool = False, encoding: str = "utf-8"
) -> Path:
    """Text version of :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode(encoding), keep_backup=keep_backup)


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _optional_object(data: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise FormatError(f"calibration: {name} must be an object, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class Calibration:
    """Everything calibration learned about this camera, table and set.

    Each part is optional: a table can have a board pose without a camera
    calibration (the markerless reader copes with mild distortion) and
    vice versa.  ``intrinsics`` holds vision's ``CameraIntrinsics`` JSON plus
    the quality figures (``rms_px``, ``views_used``, ``coverage``);
    ``board`` holds ``{"corners_px": {...}, "row1": "bottom", "image_size": [w, h]}``;
    ``appearance`` is vision's ``Appearance`` JSON; ``mat`` vision's ``MatSpec`` JSON.
    """

    created: str = field(default_factory=_now_iso)
    camera_settings: CameraSettings = field(default_factory=CameraSettings)
    target: TargetSpec | None = None
    intrinsics: dict[str, Any] | None = None
    board: dict[str, Any] | None = None
    appearance: dict[str, Any] | None = None
    mat: dict[str, Any] | None = None
    version: int = CALIBRATION_VERSION

    __hash__ = None  # type: ignore[assignment]  # holds dicts: not hashable

    def updated(self, **changes: Any) -> Calibration:
        """A copy with some parts replaced and a fresh ``created`` stamp."""
        return replace(self, created=_now_iso(), **changes)

    @property
    def towers(self) -> str:
        """What the set's towers are made of, as ``boardcam calibrate towers`` stored it (vision's
        ``Appearance.towers``): "opaque" unless the players said "clear"."""
        return str((self.appearance or {}).get("towers", "opaque"))

    # The typed views below import vision lazily so loading a file never
    # depends on the vision package being importable.
    def camera_intrinsics(self) -> Any:
        """vision's ``CameraIntrinsics`` or None."""
        if self.intrinsics is None:
            return None
        from boardcam.vision.models import CameraIntrinsics

        return CameraIntrinsics.from_json(
            {k: self.intrinsics[k] for k in ("camera_matrix", "dist_coeffs", "image_size")}
        )

    def board_pose(self) -> Any:
        """vision's ``BoardPose`` or None."""
        if self.board is None:
            return None
        from boardcam.vision.models import BoardPose

        return BoardPose.from_json({"corners_px": self.board["corners_px"]})

    def learned_appearance(
        self, pose: Any = None, image_size: tuple[int, int] | None = None, *, with_reference: bool = True
    ) -> Any:
        """vision's ``Appearance`` or None, its empty-board reference only where it still fits.

        The reference is a picture of the empty array taken at one pose; it is
        kept only when ``pose`` (vision's ``BoardPose`` or its JSON; default:
        the stored board pose) is where it was taken (:func:`reference_problem`).
        Otherwise vision reads without it (estimating per frame) rather than
        comparing every lot with a board that is no longer there.
        """
        if self.appearance is None:
            return None
        from boardcam.vision.models import Appearance

        document = self.appearance
        if document.get("reference") is not None:
            problem = self.reference_problem(pose, image_size) if with_reference else "not wanted"
            if problem is not None:
                if with_reference:
                    log.info("empty-board reference set aside: %s", problem)
                document = {**document, "reference": None}
        return Appearance.from_json(document)

    def reference_problem(self, pose: Any = None, image_size: tuple[int, int] | None = None) -> str | None:
        """Why the stored empty-board reference must not be used at ``pose``, or None if it may.

        ``pose`` None means the stored board pose (at the stored image size).
        """
        reference = (self.appearance or {}).get("reference")
        if reference is None:
            return "no empty-board reference stored"
        if pose is None:
            if self.board is None:
                return "no board pose stored to compare with"
            pose = self.board
            if image_size is None and self.board.get("image_size"):
                image_size = (int(self.board["image_size"][0]), int(self.board["image_size"][1]))
        return reference_problem(reference, pose, image_size)

    def without_stale_reference(self) -> Calibration:
        """This calibration without an empty-board reference that no longer fits its board pose.

        Applied at load, so a reader that takes the appearance as it is
        stored never gets a picture of another setup.  The file is not changed.
        """
        if (self.appearance or {}).get("reference") is None:
            return self
        problem = self.reference_problem()
        if problem is None:
            return self
        log.warning("calibration: empty-board reference not used (%s); run `boardcam calibrate board`", problem)
        return replace(self, appearance={**(self.appearance or {}), "reference": None})

    def mat_spec(self) -> Any:
        """vision's ``MatSpec`` or None."""
        if self.mat is None:
            return None
        from boardcam.vision.mat import MatSpec

        return MatSpec.from_json(self.mat)

    def check_parts(self) -> None:
        """Build every vision object once, so a bad part fails at load, not mid-game."""
        self.camera_intrinsics()
        self.board_pose()
        if self.appearance is not None:  # all of it, the reference too, wherever it was taken
            from boardcam.vision.models import Appearance

            Appearance.from_json(self.appearance)
        self.mat_spec()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "boardcam-calibration",
            "version": self.version,
            "created": self.created,
            "camera_settings": self.camera_settings.to_json(),
            "target": self.target.to_json() if self.target is not None else None,
            "intrinsics": self.intrinsics,
            "board": self.board,
            "appearance": _appearance_for_file(self.appearance),
            "mat": self.mat,
        }

    @classmethod
    def from_json(cls, data: Any) -> Calibration:
        """Parse a document of the current version; FormatError names what is wrong."""
        if not isinstance(data, Mapping):
            raise FormatError(f"calibration must be a JSON object, got {type(data).__name__}")
        if data.get("format") != "boardcam-calibration":
            raise FormatError("calibration: not a boardcam calibration (field 'format')")
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise FormatError(f"calibration: version must be an integer, got {version!r}")
        if version != CALIBRATION_VERSION:
            raise FormatError(
                f"calibration: version {version} is not the supported version {CALIBRATION_VERSION}"
            )
        created = data.get("created")
        if not isinstance(created, str):
            raise FormatError("calibration: created must be a timestamp string")
        target = data.get("target")
        intrinsics = _optional_object(data, "intrinsics")
        if intrinsics is not None:
            _check_intrinsics(intrinsics)
        board = _optional_object(data, "board")
        if board is not None:
            _check_board(board)
        return cls(
            created=created,
            camera_settings=CameraSettings.from_json(data.get("camera_settings") or {}),
            target=TargetSpec.from_json(target) if target is not None else None,
            intrinsics=intrinsics,
            board=board,
            appearance=_appearance_from_file(_optional_object(data, "appearance")),
            mat=_optional_object(data, "mat"),
            version=version,
        )


def _number_list(value: Any, length: int | None, what: str) -> list[float]:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise FormatError(f"calibration: {what} must be a list of {length or 'some'} numbers")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise FormatError(f"calibration: {what} must hold numbers, got {item!r}")
    return [float(item) for item in value]


def _check_intrinsics(intrinsics: Mapping[str, Any]) -> None:
    matrix = intrinsics.get("camera_matrix")
    if not isinstance(matrix, list) or len(matrix) != 3:
        raise FormatError("calibration: intrinsics.camera_matrix must be 3x3")
    for row in matrix:
        _number_list(row, 3, "intrinsics.camera_matrix")
    _number_list(intrinsics.get("dist_coeffs"), None, "intrinsics.dist_coeffs")
    size = _number_list(intrinsics.get("image_size"), 2, "intrinsics.image_size")
    if min(size) <= 0:
        raise FormatError("calibration: intrinsics.image_size must be positive")


def _check_board(board: Mapping[str, Any]) -> None:
    corners = board.get("corners_px")
    if not isinstance(corners, Mapping) or set(corners) != {"A1", "H1", "H10", "A10"}:
        raise FormatError("calibration: board.corners_px must name A1, H1, H10 and A10")
    for name, point in corners.items():
        _number_list(point, 2, f"board.corners_px.{name}")
    row1 = board.get("row1", "bottom")
    if row1 not in ROW1_SIDES:
        raise FormatError(f"calibration: board.row1 must be one of {ROW1_SIDES}, got {row1!r}")


def _corner_array(pose: Any) -> list[tuple[float, float]]:
    """Corners A1, H1, H10, A10 of a BoardPose, its JSON or a name -> (x, y) mapping."""
    corners = getattr(pose, "corners_px", None)
    if corners is None and isinstance(pose, Mapping):
        corners = pose.get("corners_px", pose)
    if not isinstance(corners, Mapping) or any(name not in corners for name in CORNERS):
        raise FormatError("pose: expected corners_px naming A1, H1, H10 and A10")
    return [(float(corners[name][0]), float(corners[name][1])) for name in CORNERS]


def reference_problem(
    reference: Mapping[str, Any], pose: Any, image_size: tuple[int, int] | None = None
) -> str | None:
    """Why an empty-board reference (JSON) must not be used at ``pose``, or None if it may.

    A reference records the pose and image size it was taken at
    (``taken_at``); one without that record is of unknown origin and is not
    used.  At another image size of the same camera the recorded corners are
    scaled first (the Pi scales the whole sensor).  It fits while every corner
    is within :data:`REFERENCE_SHIFT_LOTS` lots of where it was.
    """
    taken_at = reference.get("taken_at")
    if not isinstance(taken_at, Mapping):
        return "the reference does not say at which board pose it was taken"
    try:
        then = _corner_array(taken_at)
        now = _corner_array(pose)
    except (FormatError, TypeError, ValueError, IndexError):
        return "the reference's or the board's pose is unreadable"
    taken_size = taken_at.get("image_size")
    if image_size is not None and isinstance(taken_size, list) and len(taken_size) == 2 and min(taken_size) > 0:
        sx, sy = image_size[0] / float(taken_size[0]), image_size[1] / float(taken_size[1])
        then = [(x * sx, y * sy) for x, y in then]
    across = (math.dist(then[0], then[1]) + math.dist(then[3], then[2])) / 2 / 8
    up = (math.dist(then[0], then[3]) + math.dist(then[1], then[2])) / 2 / 10
    lot_px = max((across + up) / 2, 1.0)
    shift = max(math.dist(a, b) for a, b in zip(then, now)) / lot_px
    if shift > REFERENCE_SHIFT_LOTS:
        return f"the board is {shift:.1f} lots from where the reference was taken"
    return None


# The reference is a picture: 80 lots of Lab pixels, in whatever JSON form
# vision gives it (lists of numbers, or its own base64 string).  Indented into
# the file that is 100-250 kB; compressed it is well under half, and
# compressing its exact JSON text makes the round trip exact whatever the form.
_PACKED = "lab_packed"
_PACKING = "zlib-json-base64"


def pack_reference(reference: Mapping[str, Any]) -> dict[str, Any]:
    """The file form of an empty-board reference: ``lab`` compressed into one string."""
    if reference.get("lab") is None:
        return dict(reference)
    text = json.dumps(reference["lab"], separators=(",", ":"))
    packed = base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
    out = {k: v for k, v in reference.items() if k != "lab"}
    out[_PACKED] = {"encoding": _PACKING, "data": packed}
    return out


def unpack_reference(reference: Mapping[str, Any]) -> dict[str, Any]:
    """The in-memory (vision JSON) form of a reference read from the file."""
    packed = reference.get(_PACKED)
    if packed is None:
        return dict(reference)
    if not isinstance(packed, Mapping) or packed.get("encoding") != _PACKING:
        raise FormatError(f"calibration: appearance.reference.{_PACKED} must use encoding {_PACKING!r}")
    try:
        text = zlib.decompress(base64.b64decode(str(packed.get("data", "")), validate=True))
        lab = json.loads(text)
    except (ValueError, zlib.error):  # binascii.Error, JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise FormatError(f"calibration: appearance.reference.{_PACKED} is damaged") from None
    out = {k: v for k, v in reference.items() if k != _PACKED}
    out["lab"] = lab
    return out


def _appearance_for_file(appearance: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if appearance is None or not isinstance(appearance.get("reference"), Mapping):
        return dict(appearance) if appearance is not None else None
    return {**appearance, "reference": pack_reference(appearance["reference"])}


def _appearance_from_file(appearance: dict[str, Any] | None) -> dict[str, Any] | None:
    if appearance is None or not isinstance(appearance.get("reference"), Mapping):
        return appearance
    return {**appearance, "reference": unpack_reference(appearance["reference"])}


_ASK = "run `boardcam calibrate camera` and `boardcam calibrate board`; running uncalibrated meanwhile"


def load_calibration_with_message(
    path: str | Path | None = None,
) -> tuple[Calibration | None, str | None]:
    """Load the calibration: (calibration, None) or (None, why not).

    Never raises for file problems: the caller runs uncalibrated and shows
    the message (display, log).  A damaged file is left alone, not deleted,
    so it can be inspected or replaced by its ``.bak``.
    """
    path = Path(path) if path is not None else calibration_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, f"no calibration at {path}; {_ASK}"
    except (OSError, UnicodeDecodeError) as error:
        return None, f"calibration {path} unreadable ({error}); {_ASK}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return None, _damaged(path, f"not valid JSON at line {error.lineno}")
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version != CALIBRATION_VERSION:
        age = "an older" if version < CALIBRATION_VERSION else "a newer"
        return None, (
            f"calibration {path} was written by {age} boardcam (version {version}, "
            f"this one reads {CALIBRATION_VERSION}); {_ASK}"
        )
    try:
        calibration = Calibration.from_json(data)
        calibration.check_parts()
    except (FormatError, ValueError, TypeError, KeyError, AttributeError) as error:
        return None, _damaged(path, str(error) or type(error).__name__)
    return calibration.without_stale_reference(), None


def _damaged(path: Path, why: str) -> str:
    backup = _backup_path(path)
    hint = f" (the previous one is kept as {backup})" if backup.exists() else ""
    return f"calibration {path} is damaged: {why}{hint}; {_ASK}"


def load_calibration(path: str | Path | None = None) -> Calibration | None:
    """Load the calibration or return None, logging the reason as a warning."""
    calibration, message = load_calibration_with_message(path)
    if message:
        log.warning("%s", message)
    return calibration


def save_calibration(calibration: Calibration, path: str | Path | None = None) -> Path:
    """Write atomically, keeping the previous file as ``.bak``; returns the path."""
    path = Path(path) if path is not None else calibration_path()
    text = json.dumps(calibration.to_json(), indent=2, sort_keys=False) + "\n"
    return atomic_write_text(path, text, keep_backup=True)
