"""Every knob of a rendered scene, as frozen dataclasses that round-trip through JSON.

Why one flat parameter record: a benchmark failure must be reproducible from the
truth file alone, so everything the renderer looks at (except the noise seed and
the position) lives here and is written beside each image.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PRINTED_EDITIONS = ("A", "B", "C", "D")  # the four drawings a random scene picks from
EDITIONS = PRINTED_EDITIONS + ("R",)  # R: a made-up drawing per scene (training on tile art no one has printed)
TOWER_LOOKS = ("opaque", "translucent")
#: the SceneParams fields of a set whose every tower is clear coloured plastic (the benches' --clear-towers)
CLEAR_TOWERS = (("tower_look", "translucent"), ("tower_glass", 1.0))
DOME_LOOKS = ("bead", "coin")
TABLES = ("wood", "cloth", "plain", "check", "print")  # random scenes draw the first three


@dataclass(frozen=True)
class Light:
    """A lamp: a point (or disc, via radius) light above the table.

    position_mm is relative to the board centre on the table plane (z up).
    radius_mm sets shadow softness and the size of glare spots.
    """

    position_mm: tuple[float, float, float] = (150.0, -250.0, 900.0)
    kelvin: float = 5000.0
    intensity: float = 0.8
    radius_mm: float = 30.0

    def to_json(self) -> dict[str, Any]:
        return {
            "position_mm": list(self.position_mm),
            "kelvin": self.kelvin,
            "intensity": self.intensity,
            "radius_mm": self.radius_mm,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Light":
        x, y, z = data["position_mm"]
        return cls((float(x), float(y), float(z)), float(data["kelvin"]),
                   float(data["intensity"]), float(data["radius_mm"]))


@dataclass(frozen=True)
class Hand:
    """A hand reaching over the board from outside the picture.

    target_mm: palm centre (board-centred table coordinates); angle_deg: the
    direction (from the palm) in which the arm leaves towards the player.
    """

    target_mm: tuple[float, float] = (0.0, 0.0)
    angle_deg: float = 270.0
    height_mm: float = 110.0
    arm_width_mm: float = 75.0
    skin_bgr: tuple[int, int, int] = (140, 170, 215)
    sleeve_bgr: tuple[int, int, int] | None = None
    finger_curl: float = 0.3

    def to_json(self) -> dict[str, Any]:
        return {
            "target_mm": list(self.target_mm),
            "angle_deg": self.angle_deg,
            "height_mm": self.height_mm,
            "arm_width_mm": self.arm_width_mm,
            "skin_bgr": list(self.skin_bgr),
            "sleeve_bgr": None if self.sleeve_bgr is None else list(self.sleeve_bgr),
            "finger_curl": self.finger_curl,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Hand":
        sleeve = data.get("sleeve_bgr")
        return cls(
            target_mm=(float(data["target_mm"][0]), float(data["target_mm"][1])),
            angle_deg=float(data["angle_deg"]),
            height_mm=float(data["height_mm"]),
            arm_width_mm=float(data["arm_width_mm"]),
            skin_bgr=_bgr(data["skin_bgr"]),
            sleeve_bgr=None if sleeve is None else _bgr(sleeve),
            finger_curl=float(data.get("finger_curl", 0.3)),
        )


@dataclass(frozen=True)
class Mat:
    """The optional printed marker mat under the tiles (see boardcam.vision.mat.MatSpec).

    Its tile area is 4 x 5 tiles of the scene's tile_mm with tile_gap_mm between
    them; ArUco marker i sits diagonally outside corner A1, H1, H10, A10 (i = 0..3),
    margin_mm from it.  paper_mm: white paper beyond the markers.
    """

    marker_mm: float = 30.0
    margin_mm: float = 8.0
    marker_ids: tuple[int, int, int, int] = (0, 1, 2, 3)
    dictionary: str = "DICT_4X4_50"
    paper_mm: float = 10.0
    paper_bgr: tuple[int, int, int] = (232, 236, 238)

    def to_json(self) -> dict[str, Any]:
        return {"marker_mm": self.marker_mm, "margin_mm": self.margin_mm, "marker_ids": list(self.marker_ids),
                "dictionary": self.dictionary, "paper_mm": self.paper_mm, "paper_bgr": list(self.paper_bgr)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Mat":
        ids = tuple(int(v) for v in data.get("marker_ids", (0, 1, 2, 3)))
        if len(ids) != 4:
            raise ValueError("mat.marker_ids: expected 4 ids")
        return cls(float(data.get("marker_mm", 30.0)), float(data.get("margin_mm", 8.0)),
                   (ids[0], ids[1], ids[2], ids[3]), str(data.get("dictionary", "DICT_4X4_50")),
                   float(data.get("paper_mm", 10.0)), _bgr(data.get("paper_bgr", (232, 236, 238))))


def _bgr(values: Any) -> tuple[int, int, int]:
    b, g, r = values
    return (int(b), int(g), int(r))


@dataclass(frozen=True)
class SceneParams:
    """All geometry, material, light, camera and sensor settings of one frame.

    Defaults give a plain, well lit, top-down scene (useful in tests); the
    randomised ranges live in :func:`scenegen.sampling.sample_params`.
    """

    size: tuple[int, int] = (1640, 1232)
    # tiles
    tile_mm: float = 60.0
    tile_gap_mm: float = 1.0
    tile_thickness_mm: float = 2.5
    tile_shift_mm: float = 1.0
    tile_twist_deg: float = 1.0
    edition: str = "A"
    palette_jitter: float = 0.0
    tile_gloss: float = 0.08
    layout_seed: int = 0
    table: str = "wood"
    table_bgr: tuple[int, int, int] = (70, 105, 145)
    # camera
    fov_deg: float = 64.0
    camera_height_mm: float = 560.0
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    yaw_deg: float = 0.0
    target_offset_mm: tuple[float, float] = (0.0, 0.0)
    k1: float = -0.02
    k2: float = 0.0
    # light
    lights: tuple[Light, ...] = (Light(),)
    ambient: float = 0.35
    ambient_kelvin: float = 5500.0
    window_deg: float = 30.0
    awb: float = 0.7
    exposure: float = 1.0
    vignette: float = 0.15
    # pieces
    tower_look: str = "opaque"
    dome_look: str = "bead"
    dome_mm: float = 20.0
    piece_jitter_mm: float = 1.2
    pips: bool = False  # moulded dots on each pyramid face (Looney pyramids have them, other sets not)
    piece_reflections: float = 0.0  # 1: glossy pieces mirror the board around them as plastic does (Fresnel)
    tower_clarity: float = 0.22  # share of what lies behind a translucent tower that shows through it
    tower_glass: float = 0.0  # 1: translucent towers are clear coloured plastic (light through them, not a lit colour)
    coin_rim: float = 1.0  # how far a coin's rounded rim turns from the light: 1 the ray caster's dark ring, lower fainter
    coin_gloss: float = 0.0  # 0: a coin's top as matt as the ray caster drew it; 1: it mirrors the lamps broadly
    # sensor
    noise: float = 0.006
    shot_noise: float = 0.012
    blur_sigma: float = 0.6
    jpeg_quality: int | None = None
    hand: Hand | None = None
    # table extras
    mat: Mat | None = None
    spare_pieces: int = 0

    def __post_init__(self) -> None:
        if self.edition not in EDITIONS:
            raise ValueError(f"edition: {self.edition!r} is not one of {EDITIONS}")
        if self.tower_look not in TOWER_LOOKS:
            raise ValueError(f"tower_look: {self.tower_look!r} is not one of {TOWER_LOOKS}")
        if self.dome_look not in DOME_LOOKS:
            raise ValueError(f"dome_look: {self.dome_look!r} is not one of {DOME_LOOKS}")
        if self.table not in TABLES:
            raise ValueError(f"table: {self.table!r} is not one of {TABLES}")
        width, height = self.size
        if width < 64 or height < 48:
            raise ValueError(f"size: {self.size!r} is too small")

    def replace(self, **changes: Any) -> "SceneParams":
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "lights":
                out[f.name] = [light.to_json() for light in value]
            elif f.name in ("hand", "mat"):
                out[f.name] = None if value is None else value.to_json()
            elif isinstance(value, tuple):
                out[f.name] = list(value)
            else:
                out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SceneParams":
        """Inverse of to_json; unknown keys are an error so typos are caught."""
        names = {f.name: f for f in dataclasses.fields(cls)}
        unknown = set(data) - set(names)
        if unknown:
            raise ValueError(f"params: unknown field(s) {sorted(unknown)}")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key == "lights":
                kwargs[key] = tuple(Light.from_json(v) for v in value)
            elif key == "hand":
                kwargs[key] = None if value is None else Hand.from_json(value)
            elif key == "mat":
                kwargs[key] = None if value is None else Mat.from_json(value)
            elif key in ("size",):
                kwargs[key] = (int(value[0]), int(value[1]))
            elif key == "table_bgr":
                kwargs[key] = _bgr(value)
            elif key == "target_offset_mm":
                kwargs[key] = (float(value[0]), float(value[1]))
            else:
                kwargs[key] = value
        return cls(**kwargs)
