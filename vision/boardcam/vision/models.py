"""Value types that calibration produces and vision consumes.

All are frozen dataclasses with ``to_json``/``from_json`` so that the
calibration file can store them and the app can pass them between frames.
``from_json`` raises :class:`FormatError` naming the bad field, because these
documents come from files a user may have edited.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from boardcam.engine.aliencity import LOT_NAMES, parse_lot
from boardcam.engine.errors import FormatError

#: Outer corners of the tile array, in the order the warp uses them.
CORNER_NAMES: tuple[str, str, str, str] = ("A1", "H1", "H10", "A10")

#: Tile array size in tiles: 4 columns of tiles (lots A–H), 5 rows (lots 1–10).
TILES_WIDE = 4
TILES_TALL = 5
LOTS_WIDE = 2 * TILES_WIDE
LOTS_TALL = 2 * TILES_TALL

#: What a set's towers can be made of (``Appearance.towers``): opaque or milky plastic, or clear.
TOWER_LOOKS = ("opaque", "clear")


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FormatError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


def _triple(values: Sequence[Any], name: str) -> tuple[float, float, float]:
    """Three finite numbers (the caller has checked there are three), each named ``name[i]`` in errors."""
    first, second, third = (_number(v, f"{name}[{i}]") for i, v in enumerate(values))
    return first, second, third


def _point(value: Any, name: str) -> tuple[float, float]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise FormatError(f"{name}: expected [x, y], got {value!r}")
    return (_number(value[0], f"{name}[0]"), _number(value[1], f"{name}[1]"))


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FormatError(f"{name}: expected an object, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole camera matrix and OpenCV distortion coefficients at one image size."""

    camera_matrix: tuple[tuple[float, float, float], ...]
    dist_coeffs: tuple[float, ...]
    image_size: tuple[int, int]  # (width, height)

    def __post_init__(self) -> None:
        if len(self.camera_matrix) != 3 or any(len(row) != 3 for row in self.camera_matrix):
            raise FormatError("camera_matrix: expected 3x3")
        if len(self.dist_coeffs) not in (4, 5, 8, 12, 14):
            raise FormatError(f"dist_coeffs: expected 4, 5, 8, 12 or 14 numbers, got {len(self.dist_coeffs)}")
        if self.image_size[0] <= 0 or self.image_size[1] <= 0:
            raise FormatError(f"image_size: expected positive [w, h], got {list(self.image_size)}")

    def to_json(self) -> dict[str, Any]:
        return {
            "camera_matrix": [list(row) for row in self.camera_matrix],
            "dist_coeffs": list(self.dist_coeffs),
            "image_size": list(self.image_size),
        }

    @classmethod
    def from_json(cls, data: Any) -> CameraIntrinsics:
        data = _mapping(data, "intrinsics")
        for key in ("camera_matrix", "dist_coeffs", "image_size"):
            if key not in data:
                raise FormatError(f"intrinsics.{key}: missing")
        rows = data["camera_matrix"]
        if not isinstance(rows, Sequence) or len(rows) != 3:
            raise FormatError("camera_matrix: expected 3x3")
        matrix = []
        for i, row in enumerate(rows):
            if not isinstance(row, Sequence) or len(row) != 3:
                raise FormatError("camera_matrix: expected 3x3")
            matrix.append(_triple(row, f"camera_matrix[{i}]"))
        coeffs = data["dist_coeffs"]
        if isinstance(coeffs, Sequence) and coeffs and not isinstance(coeffs[0], (int, float)):
            coeffs = [v for row in coeffs for v in row]  # OpenCV's 1xN nested list
        if not isinstance(coeffs, Sequence):
            raise FormatError("dist_coeffs: expected a list of numbers")
        dist = tuple(_number(v, f"dist_coeffs[{i}]") for i, v in enumerate(coeffs))
        size = data["image_size"]
        if not isinstance(size, Sequence) or len(size) != 2 or not all(isinstance(v, int) for v in size):
            raise FormatError(f"image_size: expected [w, h] integers, got {size!r}")
        return cls(tuple(matrix), dist, (int(size[0]), int(size[1])))

    def scaled_to(self, image_size: tuple[int, int]) -> CameraIntrinsics:
        """The same lens at another output resolution of the same sensor mode.

        Pi cameras bin and scale the full sensor, so a calibration taken at one
        size applies to another by scaling the focal lengths and centre.
        """
        if tuple(image_size) == tuple(self.image_size):
            return self
        sx = image_size[0] / self.image_size[0]
        sy = image_size[1] / self.image_size[1]
        (fx, s, cx), (_, fy, cy), last = self.camera_matrix
        matrix = ((fx * sx, s * sx, cx * sx), (0.0, fy * sy, cy * sy), tuple(last))
        return CameraIntrinsics(matrix, self.dist_coeffs, (int(image_size[0]), int(image_size[1])))  # type: ignore[arg-type]


@dataclass(frozen=True)
class BoardPose:
    """Where the tile array lies in a frame: its four outer corners in pixels.

    Coordinates are in the undistorted image when intrinsics are used.  A1 is
    the corner whose row-1 edge is lower in the image unless calibration chose
    otherwise; the order A1 → H1 → H10 → A10 runs around the array.
    """

    corners_px: Mapping[str, tuple[float, float]]

    def __post_init__(self) -> None:
        missing = [name for name in CORNER_NAMES if name not in self.corners_px]
        if missing:
            raise FormatError(f"corners_px.{missing[0]}: missing")

    def ordered(self) -> list[tuple[float, float]]:
        """Corners as a list in A1, H1, H10, A10 order."""
        return [tuple(self.corners_px[name]) for name in CORNER_NAMES]  # type: ignore[misc]

    def to_json(self) -> dict[str, Any]:
        return {"corners_px": {name: [round(float(x), 2), round(float(y), 2)] for name, (x, y) in zip(CORNER_NAMES, self.ordered())}}

    @classmethod
    def from_json(cls, data: Any) -> BoardPose:
        data = _mapping(data, "pose")
        corners = _mapping(data.get("corners_px"), "corners_px")
        parsed = {}
        for name in CORNER_NAMES:
            if name not in corners:
                raise FormatError(f"corners_px.{name}: missing")
            parsed[name] = _point(corners[name], f"corners_px.{name}")
        return cls(parsed)

    @classmethod
    def from_points(cls, points: Sequence[Sequence[float]] | Any) -> BoardPose:
        """Build from four points in A1, H1, H10, A10 order."""
        return cls({name: (float(p[0]), float(p[1])) for name, p in zip(CORNER_NAMES, points)})


def largest_corner_move(pose: BoardPose, other: BoardPose) -> float:
    """How far, in pixels along either axis, the corners of two poses lie apart at most."""
    return max(abs(a - b) for p, q in zip(pose.ordered(), other.ordered()) for a, b in zip(p, q))


@dataclass(frozen=True)
class ColourStats:
    """Mean and covariance of one class of pixels in white-balanced Lab (OpenCV 8-bit scale)."""

    mean: tuple[float, float, float]
    covariance: tuple[tuple[float, float, float], ...]
    count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"mean": list(self.mean), "covariance": [list(r) for r in self.covariance], "count": self.count}

    @classmethod
    def from_json(cls, data: Any, name: str = "colour") -> ColourStats:
        data = _mapping(data, name)
        mean = data.get("mean")
        cov = data.get("covariance")
        if not isinstance(mean, Sequence) or len(mean) != 3:
            raise FormatError(f"{name}.mean: expected 3 numbers")
        if not isinstance(cov, Sequence) or len(cov) != 3 or any(not isinstance(r, Sequence) or len(r) != 3 for r in cov):
            raise FormatError(f"{name}.covariance: expected 3x3")
        return cls(
            _triple(mean, f"{name}.mean"),
            tuple(_triple(r, f"{name}.covariance") for r in cov),
            int(data.get("count", 0)),
        )


@dataclass(frozen=True, eq=False)
class EmptyBoardReference:
    """The empty tile array as the camera saw it at setup, for a difference test.

    Later frames are white balanced with the same gains (``white_balance``)
    unless calibration fixed others, so a piece, not a new balance, is what
    differs.  ``lab`` holds white-balanced Lab (vision's scale: L 0..100) of every lot,
    ``lot_px`` × ``lot_px`` per lot, indexed by lot id (A1 = 0 … H10 = 79),
    each lot as seen in the top-down view (row 10 up).  ``tiles`` is the
    layout read from that frame: ``{"A1": {"color": "red", "icon": "B2"}, …}``,
    with how surely each tile was read (``"confidence"``, 1.0 when not given)
    and its lots from likeliest icon to least (``"icon_order"``) and the
    probability of each guild, red, blue, green, black (``"colour_probs"``)
    where known: a tile read unsurely at setup stays unsure for the whole
    game, so that the referee can ask for it to be checked and let play
    settle its icon and its guild.
    Pieces then show as departures from this, whatever the tile art.
    ``print_lots`` are the lots whose empty look the reader took for a
    piece when the reference was taken (print the players vouched for by
    saying the board was clear): a piece is read there only once the look
    departs from this one (see reader.read_board).
    """

    lot_px: int
    lab: Any  # numpy array (80, lot_px, lot_px, 3)
    tiles: Mapping[str, Mapping[str, Any]]
    white_balance: tuple[float, float, float] | None = None  # the BGR gains the Lab was measured with
    print_lots: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        import numpy as np

        lab = np.asarray(self.lab, dtype=np.float32)
        if lab.shape != (80, self.lot_px, self.lot_px, 3):
            raise FormatError(f"reference.lab: expected 80 x {self.lot_px} x {self.lot_px} x 3 values, got {lab.shape}")
        object.__setattr__(self, "lab", lab)
        if len(self.tiles) != 20:
            raise FormatError(f"reference.tiles: expected 20 tiles, got {len(self.tiles)}")

    def lots_at(self, lot_px: int) -> Any:
        """Lots resampled to ``lot_px`` per lot (an integer multiple: plain repetition)."""
        import numpy as np

        if lot_px % self.lot_px:
            raise ValueError(f"lot_px {lot_px} is not a multiple of the reference's {self.lot_px}")
        k = lot_px // self.lot_px
        return np.repeat(np.repeat(self.lab, k, axis=1), k, axis=2)

    def bgr_means_at(self, lot_px: int) -> Any:
        """Each lot's mean balanced BGR (80, 3), worked out once: every frame's gains are matched to it
        (vision.colour.gains_matching), and the conversion from Lab took a millisecond or two a frame."""
        cache = self.__dict__.setdefault("_bgr_means", {})
        if lot_px not in cache:
            from boardcam.vision.colour import lab_lots_to_bgr, lot_means

            cache[lot_px] = lot_means(lab_lots_to_bgr(self.lots_at(lot_px)))
        return cache[lot_px]

    def tile_readings(self) -> dict[str, Any]:
        """The setup layout as the tile stage's readings, as surely as setup read them."""
        from boardcam.vision.tiles import TileReading

        out = {}
        for key, tile in self.tiles.items():
            sure = float(tile.get("confidence", 1.0))
            order = tuple(parse_lot(name) for name in tile.get("icon_order", ()))
            probs = tuple(float(p) for p in tile.get("colour_probs", ()))
            out[key] = TileReading(str(tile["color"]), parse_lot(str(tile["icon"])), sure, sure, order, probs)
        return out

    def to_json(self) -> dict[str, Any]:
        """Lab packed as base64 bytes (L in 0.5 steps, a and b in whole units, well under sensor noise).

        A full-resolution reference is 61 440 numbers: as a JSON list it would
        make the calibration file ten times larger than everything else in it.
        """
        return {
            "lot_px": self.lot_px,
            "lab": _pack_lab(self.lab),
            "tiles": {k: dict(v) for k, v in self.tiles.items()},
            "white_balance": [round(float(g), 5) for g in self.white_balance] if self.white_balance else None,
            "print_lots": [LOT_NAMES[lot] for lot in sorted(self.print_lots)],
        }

    @classmethod
    def from_json(cls, data: Any) -> EmptyBoardReference:
        import numpy as np

        data = _mapping(data, "reference")
        lot_px = data.get("lot_px")
        if not isinstance(lot_px, int) or not 1 <= lot_px <= 64:
            raise FormatError(f"reference.lot_px: expected a small positive integer, got {lot_px!r}")
        try:
            raw = data.get("lab")
            packed = _unpack_lab(raw) if isinstance(raw, str) else np.asarray(raw, dtype=np.float32)
            lab = packed.reshape(80, lot_px, lot_px, 3)
        except (TypeError, ValueError):
            raise FormatError(f"reference.lab: expected 80 lists of {lot_px * lot_px * 3} numbers (or their packed base64)") from None
        if not np.all(np.isfinite(lab)):
            raise FormatError("reference.lab: expected finite numbers")
        tiles = _mapping(data.get("tiles"), "reference.tiles")
        for key, tile in tiles.items():
            tile = _mapping(tile, f"reference.tiles.{key}")
            if tile.get("color") not in ("red", "blue", "green", "black"):
                raise FormatError(f"reference.tiles.{key}.color: {tile.get('color')!r} is not a guild colour")
            if tile.get("icon") not in LOT_NAMES:
                raise FormatError(f"reference.tiles.{key}.icon: {tile.get('icon')!r} is not a lot")
            sure = tile.get("confidence", 1.0)
            if isinstance(sure, bool) or not isinstance(sure, (int, float)) or not 0.0 <= sure <= 1.0:
                raise FormatError(f"reference.tiles.{key}.confidence: expected a number in [0, 1], got {sure!r}")
            _lot_names(tile.get("icon_order", []), f"reference.tiles.{key}.icon_order")
            probs = tile.get("colour_probs", [])
            if not isinstance(probs, Sequence) or isinstance(probs, str) or len(probs) not in (0, 4) \
                    or any(isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0 for p in probs):
                raise FormatError(f"reference.tiles.{key}.colour_probs: expected 4 probabilities (red, blue, green, black)")
        wb = data.get("white_balance")
        gains = None
        if wb is not None:
            if not isinstance(wb, Sequence) or len(wb) != 3:
                raise FormatError("reference.white_balance: expected 3 gains (B, G, R) or null")
            gains = tuple(_number(v, "reference.white_balance") for v in wb)
        prints = _lot_names(data.get("print_lots", []), "reference.print_lots")
        return cls(lot_px, lab, {str(k): dict(v) for k, v in tiles.items()}, gains,  # type: ignore[arg-type]
                   frozenset(parse_lot(name) for name in prints))


def _lot_names(value: Any, where: str) -> Sequence[str]:
    """``value`` when it is a list of lot names; a FormatError naming ``where`` otherwise."""
    if not isinstance(value, Sequence) or isinstance(value, str) or any(name not in LOT_NAMES for name in value):
        raise FormatError(f"{where}: expected a list of lots")
    return value


def _pack_lab(lab: Any) -> str:
    import base64

    import numpy as np

    codes = np.empty(lab.shape, np.uint8)
    codes[..., 0] = np.clip(np.rint(lab[..., 0] * 2.0), 0, 255)
    codes[..., 1:] = np.clip(np.rint(lab[..., 1:] + 128.0), 0, 255)
    return base64.b64encode(codes.tobytes()).decode("ascii")


def _unpack_lab(text: str) -> Any:
    import base64
    import binascii

    import numpy as np

    try:
        codes = np.frombuffer(base64.b64decode(text, validate=True), np.uint8).astype(np.float32)
    except (binascii.Error, ValueError):
        raise ValueError("not base64") from None
    lab = codes.reshape(-1, 3)
    return np.concatenate([lab[:, :1] / 2.0, lab[:, 1:] - 128.0], axis=1)


@dataclass(frozen=True)
class Appearance:
    """What this table's set looks like under this light, learned by calibration.

    Everything is optional: vision works from physical priors without it and
    only sharpens its decisions with what is present.

    * ``tile_mm`` – the physical tile edge, which fixes how large a 25 mm tower
      base or a 20 mm dome looks on a lot (piecepack tiles are 51 mm).
    * ``colours`` – Lab statistics per class name, e.g. ``"structure:red"``,
      ``"cap:white"``, ``"tile:black"``, measured after white balance.
    * ``white_balance`` – BGR gains that made the reference neutral; ``None``
      means estimate per frame.
    * ``reference`` – the empty board seen at setup
      (:class:`EmptyBoardReference`); with it reading is a difference test.
    * ``towers`` – one of ``TOWER_LOOKS``: ``"opaque"`` (opaque or milky
      plastic, the default) or ``"clear"`` (clear coloured plastic, through
      which the card below shows).  Each has its own fitted board network:
      no lot-sized view can tell a clear tower on its own colour from the
      bare card, but the whole table's set is one or the other.
    """

    tile_mm: float = 51.0
    colours: Mapping[str, ColourStats] = field(default_factory=dict)
    white_balance: tuple[float, float, float] | None = None
    reference: EmptyBoardReference | None = None
    towers: str = "opaque"

    def to_json(self) -> dict[str, Any]:
        return {
            "tile_mm": self.tile_mm,
            "colours": {name: stats.to_json() for name, stats in sorted(self.colours.items())},
            "white_balance": list(self.white_balance) if self.white_balance else None,
            "reference": self.reference.to_json() if self.reference is not None else None,
            "towers": self.towers,
        }

    @classmethod
    def from_json(cls, data: Any) -> Appearance:
        data = _mapping(data, "appearance")
        tile_mm = _number(data.get("tile_mm", 51.0), "appearance.tile_mm")
        if not 20.0 <= tile_mm <= 200.0:
            raise FormatError(f"appearance.tile_mm: {tile_mm} mm is not a plausible tile size")
        colours = {
            str(name): ColourStats.from_json(value, f"appearance.colours.{name}")
            for name, value in _mapping(data.get("colours", {}), "appearance.colours").items()
        }
        wb = data.get("white_balance")
        gains = None
        if wb is not None:
            if not isinstance(wb, Sequence) or len(wb) != 3:
                raise FormatError("appearance.white_balance: expected 3 gains (B, G, R) or null")
            gains = tuple(_number(v, "appearance.white_balance") for v in wb)
        ref = data.get("reference")
        reference = EmptyBoardReference.from_json(ref) if ref is not None else None
        towers = data.get("towers", "opaque")
        if towers not in TOWER_LOOKS:
            raise FormatError(f"appearance.towers: {towers!r} is not one of {', '.join(TOWER_LOOKS)}")
        return cls(tile_mm, colours, gains, reference, towers)  # type: ignore[arg-type]
