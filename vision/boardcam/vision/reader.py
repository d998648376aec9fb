"""The orchestrator: one frame in, one :class:`Reading` out.

Stages (each its own module, each a pure function of its inputs):

1. pose — given (fast path: no search), from the marker mat, or markerless;
2. warp — one remap with precomputed maps (lens distortion folded in) to a
   small top-down image of the array, 16 px per lot, plus a lot of table;
3. colour — white balance (calibration's gains, else shades-of-grey on the
   board, whose five tiles per guild average out to grey), then Lab;
4. tiles — guild colour per tile; a first look at which lots hold pieces;
   the icon lot per tile among the free lots;
5. lots — every lot against its empty look (the reference when present,
   else this frame's own guild templates): empty / dome / tower, colours,
   cap, or covered by a hand.  The board network (``lot_net``) reads all 80
   lots at once, so a neighbour's leaning tower or shadow is seen for what
   it is; without its weights the per-lot feature classifiers (``lots``) do;
6. occlusion — a hand or arm over the board (the occlusion stage, joined
   with the lots the network sees covered).

All per-lot work is vectorised over the 80 lots; every stage's time is
reported so a slow Pi shows where the time goes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from boardcam.engine.aliencity import (
    LOT_NAMES,
    TILE_OF,
    Position,
    Tile,
    colour_impossibilities,
    parse_lot,
    possible_icon_lots,
)
from boardcam.vision import by_the_rules, lot_net
from boardcam.vision import lots as lots_stage
from boardcam.vision.colour import board_gains, gains_matching, to_lab
from boardcam.vision.errors import BoardNotFoundError
from boardcam.vision.find_board import find_board, is_square_array, locate_near, orient, search_image
from boardcam.vision.geometry import build_warp, camera_matrix_for
from boardcam.vision.lots import LotReading
from boardcam.vision.mat import MatSpec, detect_markers, missing_marker_centres, pose_from_markers
from boardcam.vision.models import (
    LOTS_TALL,
    LOTS_WIDE,
    TILES_WIDE,
    Appearance,
    BoardPose,
    CameraIntrinsics,
    EmptyBoardReference,
    largest_corner_move,
)
from boardcam.vision.occlusion import (
    SURROUNDINGS_SHARE,
    Occlusion,
    Surroundings,
    find_occlusion,
    surroundings,
    surroundings_changed,
)
from boardcam.vision.tiles import (
    AGREEMENT_CHECKED_PIECES,
    DISAGREEING_ICON_CAP,
    GUILDS,
    TILE_KEYS,
    TILE_LOT_IDS,
    TILE_OF_LOT,
    ColourVotes,
    IconChoice,
    TileReading,
    canonical,
    colour_votes,
    colours_from_probabilities,
    grouped_probabilities,
    icon_kinship,
    icon_print_agreement,
    is_setup_board,
    icons_in_print,
    lot_grid,
    read_icon_lots,
    read_tile_colours,
    tile_colour_probabilities,
    tile_reading,
)

LOT_PX = 16  # warped resolution per lot: ample for 18–25 mm pieces, small enough to be quick
TILE_PX = 2 * LOT_PX
MARGIN_PX = LOT_PX  # one lot of table around the array, for arms crossing the edge


@dataclass(frozen=True)
class Reading:
    """What one frame shows: the position, how sure each part is, and where the board is."""

    position_dict: dict[str, Any]
    lot_confidence: dict[str, float]
    tile_confidence: dict[str, float]
    pose: BoardPose
    occluded: bool
    occluded_lots: tuple[str, ...]
    timing_ms: dict[str, float]
    lots: dict[int, LotReading] = field(repr=False, default_factory=dict)
    tiles: dict[str, TileReading] = field(repr=False, default_factory=dict)
    # the warped Lab each lot's answer was decided on (80, LOT_PX, LOT_PX, 3): what ``previous`` compares with
    lot_lab: np.ndarray | None = field(repr=False, default=None, compare=False)
    # per lot read less surely than SURE in this frame, or departed and read empty: the next likeliest
    # answer (see RunnerUp)
    runners_up: dict[str, RunnerUp] = field(repr=False, default_factory=dict, compare=False)
    # the lots whose look changed since ``previous`` was read, each with how far past the bar for a change
    # (vision.lots.departures): what a faint piece leaves when the network calls it "empty"
    departed: dict[str, float] = field(repr=False, default_factory=dict, compare=False)
    # the picture around the board (occlusion.surroundings): what the next reading compares with
    around: Surroundings | None = field(repr=False, default=None, compare=False)
    # whether something came or went in the picture around the board since ``previous`` was read (a
    # hand beside the board, whose shade may be all that changed a lot's look)
    moved_beside: bool = False

    @property
    def corners_px(self) -> dict[str, list[float]]:
        return self.pose.to_json()["corners_px"]  # type: ignore[no-any-return]

    @property
    def position(self) -> Any:
        """The engine's Position."""
        return Position.from_json(self.position_dict)

    def position_json(self) -> dict[str, Any]:
        return self.position_dict

    def to_json(self) -> dict[str, Any]:
        out = dict(self.position_dict)
        out["confidence"] = {"lots": dict(self.lot_confidence), "tiles": dict(self.tile_confidence)}
        out["board"] = {"corners_px": self.corners_px}
        out["occluded"] = self.occluded
        out["occluded_lots"] = list(self.occluded_lots)
        out["timing_ms"] = {k: round(v, 2) for k, v in self.timing_ms.items()}
        return out


@dataclass(frozen=True)
class RunnerUp:
    """A lot's next likeliest answer, for a lot read unsurely.

    Why a reader of games wants it: a clear tower of its tile's own colour
    can read "empty, 0.64" with "red tower, 0.36" behind it.  Alone that is
    no answer, but a referee who knows that something was just built, and
    nowhere else, can take it.  ``share`` is its part of everything but the
    chosen answer: near 1 when the doubt is only *whether* a piece is there,
    not which.  ``empty`` is how probable the network finds the lot empty:
    a tower read "red, black cap, 0.44" with "red tower, 0.28" behind it is
    still surely *some* tower when "empty" is 0.05, which the answer and
    runner-up alone do not say.
    """

    structure: dict[str, str] | None  # as in the position JSON (None: an empty lot)
    probability: float
    share: float
    empty: float | None = None


MAT_AGREEMENT_LOTS = 1.5  # a guessed mat layout can place the far corners about this far off


def grid_near(image_bgr: np.ndarray, corners: np.ndarray, intrinsics: CameraIntrinsics | None) -> np.ndarray:
    """The tile grid's own corners when the markerless finder agrees with ``corners``, else ``corners``.

    The mat's markers say where the printed area is; the tiles lie in it by
    hand, and an uncalibrated mat's layout is a guess, so the grid found
    near there is the better pose.  Its corners keep ``corners``' names.
    When the search outlines something else (tiles the mat's own colour
    leave the mat as the only outline), the grid is refined from the
    markers' guess instead.
    """
    corners = np.asarray(corners, np.float64)
    lot = np.linalg.norm(corners[1] - corners[0]) / 8
    searches: tuple[Callable[[], BoardPose], ...] = (lambda: find_board(image_bgr, intrinsics),
                                                     lambda: locate_near(image_bgr, corners, intrinsics).pose)
    for search in searches:
        try:
            grid = np.array(search().ordered(), np.float64)
        except BoardNotFoundError:
            continue
        named = min((np.roll(grid, -k, axis=0) for k in range(4)),
                    key=lambda g: float(np.linalg.norm(g - corners, axis=1).sum()))
        if np.linalg.norm(named - corners, axis=1).max() <= MAT_AGREEMENT_LOTS * lot:
            return named
    return corners


#: half the side of the full-resolution window a missing marker is looked for in, in found markers' sides
MAT_LOOK_AGAIN_REACH = 4.0


def mat_markers(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None,
                spec: MatSpec) -> tuple[dict[int, np.ndarray], float]:
    """The mat's markers in the (downscaled) search image, and its scale.

    Why a second look at full resolution: under a tilted camera the far
    markers shrink below what the detector finds in the search image, and
    with only two or three markers the tile area is placed by a similarity
    or an affine map, which puts the far corners lots off (at a 25° tilt,
    up to 2.7 lots: too far for the grid search near them to be trusted,
    so the guess itself was read).  Only windows around where the missing
    markers should be are searched, again while that finds one (each found
    places the rest better), and only on a frame where two markers were
    found, so a frame without a mat costs nothing more.
    """
    small, scale = search_image(image_bgr, intrinsics)
    found = detect_markers(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), spec)
    while scale < 1.0:  # each marker found again places the ones still missing better
        again = _markers_looked_for_again(image_bgr, intrinsics, spec, found, scale)
        if not again:
            break
        found = {**found, **again}
    return found, scale


def _markers_looked_for_again(image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None, spec: MatSpec,
                              found: dict[int, np.ndarray], scale: float) -> dict[int, np.ndarray]:
    """Markers missing from ``found``, found in full-resolution windows, in search-image pixels."""
    expected = missing_marker_centres(found, spec)
    if not expected:
        return {}
    side = float(np.mean([np.linalg.norm(np.diff(q, axis=0, append=q[:1]), axis=1).mean() for q in found.values()]))
    reach = max(16, round(MAT_LOOK_AGAIN_REACH * side / scale))
    h, w = image_bgr.shape[:2]
    # the search image is undistorted, the frame is not: what takes a window's marker into the search image
    lens = None if intrinsics is None else (camera_matrix_for((w, h), intrinsics), np.array(intrinsics.dist_coeffs))
    again: dict[int, np.ndarray] = {}
    for marker_id, centre in expected.items():
        x, y = (np.asarray(centre) + 0.5) / scale - 0.5  # distortion ignored: the window is wide
        x0, y0 = max(0, round(x) - reach), max(0, round(y) - reach)
        x1, y1 = min(w, round(x) + reach), min(h, round(y) + reach)
        if x1 - x0 < 16 or y1 - y0 < 16:
            continue
        window = cv2.cvtColor(np.ascontiguousarray(image_bgr[y0:y1, x0:x1]), cv2.COLOR_BGR2GRAY)
        quad = detect_markers(window, spec).get(marker_id)
        if quad is None:
            continue
        quad = quad + np.array([x0, y0], np.float64)
        if lens is not None:
            k, dist = lens
            quad = cv2.undistortPoints(quad.reshape(-1, 1, 2), k, dist, P=k).reshape(-1, 2)
        again[marker_id] = (quad + 0.5) * scale - 0.5
    return again


def locate_board(
    image_bgr: np.ndarray, intrinsics: CameraIntrinsics | None, mat: MatSpec | None
) -> tuple[BoardPose, str]:
    """Pose from the marker mat when its markers are seen, else markerless.

    Either way A1 is named by the reader's convention (the end of the row-1
    edge, which is the lower short edge in the image): the mat gives exact
    corners, not the names.  Calibration keeps the mat's own naming if the
    players want it, and the app keeps whichever naming its game started with.
    """
    spec = mat or MatSpec()
    found, scale = mat_markers(image_bgr, intrinsics, spec)
    pose = pose_from_markers(found, spec, layout_known=mat is not None)
    if pose is None:
        return find_board(image_bgr, intrinsics), "markerless"
    pts = orient((np.array(pose.ordered()) + 0.5) / scale - 0.5, TILES_WIDE)
    if mat is None:  # a mat of unknown tile size: where its grid really is
        pts = grid_near(image_bgr, pts, intrinsics)
    return BoardPose.from_points(pts), "mat"


def _load_models() -> tuple[dict[str, Any] | None, ...]:
    """The fitted classifiers and confidence maps; ``None`` where not fitted (physical heuristics then)."""
    try:
        from boardcam.vision import lot_model
    except ImportError:
        return (None,) * 7
    return (lot_model.FIRST_LOOK, lot_model.FINAL, getattr(lot_model, "CONFIDENCE_MAP", None),
            getattr(lot_model, "FINAL_WITH_REFERENCE", None), getattr(lot_model, "CONFIDENCE_MAP_WITH_REFERENCE", None),
            getattr(lot_model, "CAPS", None), getattr(lot_model, "TOWER_COLOURS", None))


(FIRST_LOOK_MODEL, FINAL_MODEL, CONFIDENCE_MAP, REFERENCE_MODEL, REFERENCE_CONFIDENCE_MAP, CAP_MODEL,
 TOWER_COLOUR_MODEL) = _load_models()
#: the board network for a set whose towers are opaque or milky, the default (see net_for)
BOARD_NET = lot_net.board_net()
BOARD_NET_CONFIDENCE_MAP = BOARD_NET.confidence_map if BOARD_NET is not None else None


def net_for(appearance: Appearance | None) -> lot_net.BoardNet | None:
    """The board network fitted for this table's towers (``Appearance.towers``; opaque when not known)."""
    return lot_net.board_net(appearance.towers) if appearance is not None else BOARD_NET


def sure_from_raw(net: lot_net.BoardNet | None) -> float:
    """The network probability from which ``net``'s answers are reported as sure (SURE and up)."""
    return float(((net.confidence_map if net is not None else None) or {}).get("sure_from", by_the_rules.UNSURE))


def calibrated(raw: np.ndarray, confidence_map: dict[str, Any] | None = CONFIDENCE_MAP) -> np.ndarray:
    """Every lot's raw confidence mapped to its held-out accuracy (see train_lot_model)."""
    raw = np.asarray(raw, np.float64)
    if confidence_map is None:
        return raw
    sure = float(confidence_map.get("sure_from", 2.0))
    # from ``sure`` up, held-out answers were right at least 99.95 % of the time
    held_out = np.minimum(np.interp(raw, confidence_map["x"], confidence_map["y"]), 0.899)
    return np.where(raw >= sure, 0.9 + 0.1 * (raw - sure) / max(1.0 - sure, 1e-9), held_out)  # type: ignore[no-any-return]


def _kind_probs(features: np.ndarray, model: dict[str, Any] | None) -> np.ndarray:
    if model is None:
        return lots_stage.heuristic_probabilities(features)
    return lots_stage.kind_probabilities(features, model)


@dataclass(frozen=True)
class LotAnalysis:
    """Intermediate per-lot arrays, exposed for the model-fitting script and tests."""

    features: np.ndarray  # (80, F) final features
    first_features: np.ndarray  # (80 k, F) features of the k first looks, before the icons were known
    kind_probs: np.ndarray  # (80, 3)
    colour_probs: np.ndarray  # (80, 4) red, blue, green, black if a dome stands there
    tower_colour_probs: np.ndarray  # (80, 4) the same if a tower does (black impossible)
    cap_probs: np.ndarray  # (80, 3)
    difference: np.ndarray  # (80, s, s) ΔE against the empty look
    cap_features: np.ndarray  # (80, C) the apex ray's look, for the cap classifier
    tower_colour_features: np.ndarray  # (80, T) for the tower-colour classifier
    seen: np.ndarray  # (80, s, s, 3) the lots' Lab as seen
    expected: np.ndarray  # (80, s, s, 3) each lot's empty look, as seen (reference or templates)
    structure_probs: np.ndarray | None = None  # (80, len(lot_net.CLASSES)) when the board network read the lots
    covered_probs: np.ndarray | None = None  # (80,) the network's belief that a hand covers the lot
    net_views: lot_net.Views | None = None  # the network's views of the board these came from
    net: lot_net.BoardNet | None = None  # the network that read them


def analyse(
    lab_all: np.ndarray,
    geometry: Any,
    appearance: Appearance | None,
    reference: EmptyBoardReference | None,
    timing: dict[str, float],
    models: tuple[dict[str, Any] | None, dict[str, Any] | None] | None = None,
    second: dict[str, dict[str, Any] | None] | None = None,
    views: int = 1,
) -> tuple[dict[str, TileReading], LotAnalysis]:
    """Tiles and lots from the warped Lab image (margin included).

    ``models`` (first look, final) and ``second`` (the "caps" and
    "tower_colours" classifiers) default to the fitted ones; the fitting script
    passes its own, or none, to get the features they are fitted on.
    ``views``: how many mirrored views of the board the network reads (see
    lot_net.read_views).
    """
    with_reference = reference is not None
    if models is not None:
        first_model, final_model = models
    else:  # reading against the setup reference has its own fitted model (other feature statistics)
        first_model = FIRST_LOOK_MODEL
        final_model = REFERENCE_MODEL if with_reference and REFERENCE_MODEL is not None else FINAL_MODEL
    if second is None:
        second = {"caps": CAP_MODEL, "tower_colours": TOWER_COLOUR_MODEL}
    net = net_for(appearance)
    use_net = models is None and net is not None
    t0 = time.perf_counter()
    lab = geometry.board_view(lab_all)
    seen = lot_grid(lab, LOT_PX)
    canon = canonical(seen)
    tile_mm = appearance.tile_mm if appearance is not None and appearance.tile_mm != 51.0 else lots_stage.DEFAULT_TILE_MM
    lean = lots_stage.TOWER_HEIGHT_MM / tile_mm
    centre = geometry.camera_centre
    if reference is not None:
        expected_seen = lots_stage.relight(reference.lots_at(LOT_PX), seen)
        tiles = reference.tile_readings()
        first = np.zeros((80, 0)) if use_net else lots_stage.lot_features(seen, expected_seen, centre, lean)
        t1 = time.perf_counter()
        timing["tiles"] = (t1 - t0) * 1000
    else:
        look = _first_look(lab, seen, canon, centre, lean, first_model)
        first = look.features
        tiles, expected_seen = _tiles_from_frame(lab, seen, canon, look.piece, look.icon_like, look.votes)
        t1 = time.perf_counter()
        timing["tiles"] = (t1 - t0) * 1000
    if use_net:
        assert net is not None
        if with_reference:
            analysis = _analyse_with_net(net, lab_all, geometry, seen, expected_seen, first, True, appearance, lab,
                                         views, SECOND_VIEW_BELOW, REFERENCE_MOST_VIEWS)
        else:
            # the empty looks may be read again (below): the extra views wait until they are kept
            analysis = _analyse_with_net(net, lab_all, geometry, seen, expected_seen, first, False, appearance, lab,
                                         views)
            second_look = _second_look(look, 1.0 - analysis.kind_probs[:, 0], tiles)
            if second_look is not None:
                # the first look took a print for a piece (tile art it has not
                # seen): the icons and the empty looks are read again with the
                # network's pieces, and the lots against those
                tiles, expected_seen = _tiles_from_frame(lab, seen, canon, *second_look, look.votes)
                analysis = _analyse_with_net(net, lab_all, geometry, seen, expected_seen, first, False, appearance,
                                             lab, views, SECOND_VIEW_BELOW)
            elif analysis.net_views is not None and analysis.net_views.unsure(SECOND_VIEW_BELOW):
                analysis = _with_net_output(net, analysis.net_views.with_views(views, SECOND_VIEW_BELOW), seen,
                                            expected_seen, first, appearance, lab)
        timing["lots"] = (time.perf_counter() - t1) * 1000
        return tiles, analysis
    features = lots_stage.lot_features(seen, expected_seen, centre, lean)
    kind = _kind_probs(features, final_model)
    light_ref = _light_range(lab)
    colour_probs, tower_colour_probs, body, tower_body = lots_stage.piece_colour_scores(
        seen, expected_seen, light_ref, appearance)
    cap_feats = lots_stage.cap_features(lab, geometry, tower_body, light_ref)
    if (cap_model := second.get("caps")) is not None:
        cap = lots_stage.kind_probabilities(cap_feats, cap_model)
    else:
        cap = lots_stage.cap_probabilities(lab, geometry, tile_mm, body, light_ref)
    colour_feats = lots_stage.tower_colour_features(cap_feats, tower_colour_probs, tower_body, body)
    if (tower_colour_model := second.get("tower_colours")) is not None:
        tower_colour_probs = np.column_stack([lots_stage.kind_probabilities(colour_feats, tower_colour_model),
                                              np.zeros(80)])
    diff = lots_stage.difference(seen, expected_seen)
    timing["lots"] = (time.perf_counter() - t1) * 1000
    return tiles, LotAnalysis(features, first, kind, colour_probs, tower_colour_probs, cap, diff, cap_feats,
                              colour_feats, seen, expected_seen)


#: mirrored views the network reads when the board was searched: a third fewer wrong lots for 2–3 ms
#: more, which a one-off reading can spare and the known-pose path (every still frame) cannot
SEARCHED_VIEWS = 2
#: ...and the views read are joined by the other mirrors, one at a time up to four, while some lot's likeliest
#: answer is less probable than this: on 172 generated boards a quarter of the frames read a second view,
#: fixing as many wrong lots as two views on every frame, and a few a third and fourth (docs/vision.md).
#: A searched board goes on past its two views too: two and no more left 671 lots wrong on 422 path-traced
#: frames read from scratch, and 601 with the others read while unsure
SECOND_VIEW_BELOW = 0.8
#: ...but a frame read against the setup reference (every still frame of a game) stops at two: read up to
#: four, the app's eight made-up-art sets went from 1 682 to 1 658 of 1 799 moves and from 39 to 48 false
#: warnings (one set gained 8 moves, two lost 8 and 25), so the third and fourth views serve one-off readings
REFERENCE_MOST_VIEWS = 2

#: how much more a piece the first look must see than the network before the tiles are read again
SECOND_LOOK_GAP = 0.5
#: a tile colour read with less confidence than this is read again when one of its lots was wrongly taken for a piece
SECOND_LOOK_COLOUR_DOUBT = 0.9


@dataclass(frozen=True)
class FirstLook:
    """Every lot before the icons are known: features, piece and icon probabilities, the frame's colour votes."""

    features: np.ndarray
    piece: np.ndarray
    icon_like: np.ndarray | None
    votes: ColourVotes


def _first_look(lab: np.ndarray, seen: np.ndarray, canon: np.ndarray, centre: Any, lean: float,
                first_model: dict[str, Any] | None) -> FirstLook:
    """Each lot compared with its guild's plain print (the median of the guild's canonical lots),
    the guild from the hue rules alone."""
    votes = colour_votes(lab, TILE_PX)
    colours = read_tile_colours(lab, TILE_PX, votes=votes)
    lot_guild = _guild_of_lots(colours)
    plain = lots_stage.plain_templates(canon, lot_guild)
    first = lots_stage.lot_features(seen, lots_stage.relight(canonical(plain[lot_guild], inverse=True), seen), centre, lean)
    if first_model is None:
        return FirstLook(first, 1.0 - lots_stage.heuristic_probabilities(first)[:, 0], None, votes)
    look = lots_stage.kind_probabilities(first, first_model)  # classes: plain, icon, dome, tower
    return FirstLook(first, look[:, 2] + look[:, 3], look[:, 1], votes)


def _guild_of_lots(colours: dict[str, tuple[str, float]]) -> np.ndarray:
    """Guild index of every lot from the tile colours alone (before the icons are read)."""
    return lots_stage.guild_index({k: TileReading(c, 0, conf, 0.0) for k, (c, conf) in colours.items()})


def _second_look(look: FirstLook, net_piece: np.ndarray,
                 tiles: dict[str, TileReading]) -> tuple[np.ndarray, np.ndarray] | None:
    """Pieces and icon probabilities to read the tiles again with, or None when the network agrees.

    A lot the first look took for a piece and the network calls empty is a
    print, most likely an icon: its piece probability goes to the icon.  The
    tiles are read again only if that could change them: if such a lot now
    looks more like an icon than its tile's chosen icon lot did, or if its
    tile's colour was in doubt (on a plain card the icon may be the only
    colour a tile shows, and a lot taken for a piece has no say in it).

    The other way round: a chosen icon lot the first look saw free and the
    network sees built on (a capped tower on a dark card can look like a
    print at 16 pixels a lot) hides its icon, so the icon was chosen as if
    in view, and as surely, where it can only be inferred.  The tiles are
    read again with the network's pieces, as hidden icons are read.  Only
    on a board with pieces about: on the setup board (at most
    AGREEMENT_CHECKED_PIECES pieces) such a piece is more often the network
    taking an unfamiliar icon print for a dome, and there the first look's
    reading of the prints is the one kept (made-up-art empty boards, seeds
    31000-31119: one board's icon and lot read wrong when it was asked).
    Read again for that alone, the prints the network calls empty keep the
    first look's icon probabilities: their own rule did not ask for them,
    and given to the icon search they made a tile's only free lot, plain,
    its icon at 0.995 (fresh scene 12071).
    """
    if look.icon_like is None:
        return None
    print_not_piece = np.clip(look.piece - net_piece, 0.0, None)
    doubted = np.flatnonzero(print_not_piece > SECOND_LOOK_GAP)
    icon_lots = np.array([tile.icon_lot for tile in tiles.values()], np.int64)
    icon_built_on = not is_setup_board(net_piece) and \
        bool((net_piece[icon_lots] - look.piece[icon_lots] > SECOND_LOOK_GAP).any())
    icon_like = look.icon_like + print_not_piece
    tile = {lot: tiles[TILE_KEYS[TILE_OF_LOT[lot]]] for lot in doubted}
    icon_may_move = any(tile[lot].icon_lot != lot and icon_like[lot] > look.icon_like[tile[lot].icon_lot]
                        for lot in doubted)
    colour_in_doubt = any(tile[lot].colour_confidence < SECOND_LOOK_COLOUR_DOUBT for lot in doubted)
    if icon_may_move or colour_in_doubt:
        return net_piece, icon_like
    if icon_built_on:  # the prints the network calls empty were not asked about: their icon looks stay the first's
        return net_piece, look.icon_like
    return None


def _tiles_from_frame(lab: np.ndarray, seen: np.ndarray, canon: np.ndarray, piece: np.ndarray,
                      icon_like: np.ndarray | None, votes: ColourVotes) -> tuple[dict[str, TileReading], np.ndarray]:
    """Tiles and every lot's empty look, read from the frame itself given where the pieces are."""
    # with the pieces known, the free icon lots can name the guild of a tile
    # printed in colour only there
    probs = tile_colour_probabilities(lab, TILE_PX, 1.0 - piece, votes)
    colours = colours_from_probabilities(probs)
    icons = read_icon_lots(canon, {k: c for k, (c, _) in colours.items()}, piece, icon_like)
    probs, colours, icons = _colours_from_kin(lab, canon, piece, icon_like, votes, probs, colours, icons)
    setup_board = is_setup_board(piece)
    if setup_board:
        probs, colours, icons = _colours_from_icon_groups(canon, piece, icon_like, probs, colours, icons)
    lot_guild = _guild_of_lots(colours)
    # A late game puts a dome of the tile's own colour on most lots, so the
    # guild median can itself look like a dome: the final templates leave
    # out the lots with pieces.
    plain = lots_stage.plain_templates(canon, lot_guild, piece)
    tiles = {key: tile_reading(colours[key], icons[key], probs[t]) for t, key in enumerate(TILE_KEYS)}
    icon_lots = np.array([icons[k][0] for k in TILE_KEYS])
    expected = canonical(lots_stage.expected_from_frame(canon, lot_guild, icon_lots, piece, plain), inverse=True)
    # the light as a plane across each tile where the print is in view; with pieces about, their shadows
    # and glare tilt the plane (docs/vision.md, "Tiles lit unevenly")
    relit = lots_stage.relight_shaded(expected, seen, piece) if setup_board else lots_stage.relight(expected, seen)
    return tiles, relit


#: a board with a tile colour less sure than this asks the tiles printed with the same icon (tiles.icon_kinship)
KIN_WANTED = 0.9
#: an icon found with less confidence than this does not speak for its tile's kin
KIN_ICON_TRUSTED = 0.5


def _icons_in_view(icons: dict[str, IconChoice], piece: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every tile's icon lot, and whether it is free and found surely enough to speak for its tile."""
    icon_lots = np.array([icons[k][0] for k in TILE_KEYS])
    return icon_lots, (piece[icon_lots] < 0.5) & (np.array([icons[k][1] for k in TILE_KEYS]) >= KIN_ICON_TRUSTED)


def _colours_from_kin(
    lab: np.ndarray, canon: np.ndarray, piece: np.ndarray, icon_like: np.ndarray | None, votes: ColourVotes,
    probs: np.ndarray, colours: dict[str, tuple[str, float]], icons: dict[str, IconChoice],
) -> tuple[np.ndarray, dict[str, tuple[str, float]], dict[str, IconChoice]]:
    """The tile colours (probabilities and choice) read again knowing the icons (their ink, and each unsure
    tile's icon kin), and the icons again if a colour moved; as they are when no tile unsure of its colour
    has its icon in view."""
    icon_lots, trusted = _icons_in_view(icons, piece)
    unsure = np.array([colours[k][1] < KIN_WANTED for k in TILE_KEYS])
    if not (unsure & trusted).any():
        return probs, colours, icons
    kin = icon_kinship(canon, icon_lots, trusted)
    probs = tile_colour_probabilities(lab, TILE_PX, 1.0 - piece, votes, kin, icon_lots)
    again = colours_from_probabilities(probs)
    if all(again[k][0] == colours[k][0] for k in TILE_KEYS):
        return probs, again, icons
    return probs, again, read_icon_lots(canon, {k: c for k, (c, _) in again.items()}, piece, icon_like)


def _colours_from_icon_groups(
    canon: np.ndarray, piece: np.ndarray, icon_like: np.ndarray | None, probs: np.ndarray,
    colours: dict[str, tuple[str, float]], icons: dict[str, IconChoice],
) -> tuple[np.ndarray, dict[str, tuple[str, float]], dict[str, IconChoice]]:
    """The tile colours named again as five-tile guilds that each carry one icon print
    (tiles.grouped_probabilities), and the icons again if a colour moved.

    Only on a board with next to no pieces: that is the setup board the app
    keeps its tiles from, and there every icon is in view.  With pieces
    about, shadows and leaning tops disturb the prints: on 100 game scenes
    in made-up art it read as many tile colours wrong and made 11 more of
    them sure (docs/vision.md, "One print per guild").  Only the tiles the
    layout moves take its probabilities; the others keep their own, and
    their confidence.  The app waits for a setup board read with every tile
    at 0.5 or more before it keeps its empty-board reference, and when the
    layout's confidences stood in for all, made-up-art game 1902 read a
    tile's icon lower on the setup frames, took its reference only after
    the first dome was down, and never saw that dome (7 of 38 moves
    followed, against 38).
    """
    icon_lots, trusted = _icons_in_view(icons, piece)
    if trusted.sum() < 2:
        return probs, colours, icons
    agreement = icon_print_agreement(canon, icon_lots) * np.outer(trusted, trusted)
    grouped = grouped_probabilities(probs, agreement)
    again = colours_from_probabilities(grouped)
    moved = np.array([again[k][0] != colours[k][0] for k in TILE_KEYS])
    if not moved.any():
        return probs, colours, icons
    probs = np.where(moved[:, None], grouped, probs)
    colours = {k: again[k] if moved[t] else colours[k] for t, k in enumerate(TILE_KEYS)}
    return probs, colours, read_icon_lots(canon, {k: c for k, (c, _) in colours.items()}, piece, icon_like)


def _analyse_with_net(
    net: lot_net.BoardNet,
    lab_all: np.ndarray,
    geometry: Any,
    seen: np.ndarray,
    expected: np.ndarray,
    first: np.ndarray,
    with_reference: bool,
    appearance: Appearance | None,
    lab_board: np.ndarray,
    views: int = 1,
    unsure_below: float = 0.0,
    most_views: int = len(lot_net.MIRRORS),
) -> LotAnalysis:
    """Every lot's structure from the board network (see lot_net.read_views), as a LotAnalysis."""
    read = lot_net.read_views(lab_all, geometry, expected, with_reference, net.model, views, unsure_below,
                              most_views)
    return _with_net_output(net, read, seen, expected, first, appearance, lab_board)


def _with_net_output(net: lot_net.BoardNet, read: lot_net.Views, seen: np.ndarray, expected: np.ndarray,
                     first: np.ndarray, appearance: Appearance | None, lab_board: np.ndarray) -> LotAnalysis:
    """The LotAnalysis of the network's views.

    The kind, colour and cap probabilities are the network's joint answer
    summed out, so whatever reads them sees one consistent story.  When
    calibration taught this set's colours, the colour of a piece comes from
    them instead (the network knows only the colours it was fitted on),
    except a clear tower's, which its own network reads.
    """
    output = read.mean
    joint = lot_net.structures(output)
    if appearance is not None and any(k.startswith("structure:") for k in appearance.colours):
        dome_taught, tower_taught, _, _ = lots_stage.piece_colour_scores(seen, expected, _light_range(lab_board),
                                                                        appearance)
        if net.towers == "clear":  # a clear tower's look is mostly its card's: its own network knows it best
            tower_taught = lot_net.marginals(joint)[2]
        joint = lot_net.with_colours(joint, dome_taught, tower_taught)
    kind, dome, tower, cap = lot_net.marginals(joint)
    empty = np.zeros((80, 0), np.float32)
    return LotAnalysis(empty, first, kind, dome, tower, cap, lots_stage.difference(seen, expected), empty, empty,
                       seen, expected, joint, output[:, lot_net.COVERED], read, net)


def _light_range(lab_board: np.ndarray) -> tuple[float, float]:
    """The board's darkest and lightest lightness (2nd and 98th percentiles), for naming dark and light."""
    light = lab_board[::2, ::2, 0]
    return float(np.percentile(light, 2)), float(np.percentile(light, 98))


def decide_lots(analysis: LotAnalysis) -> dict[int, LotReading]:
    """Most probable structure per lot, with the probability of that whole answer as confidence."""
    out: dict[int, LotReading] = {}
    if analysis.structure_probs is not None:
        probs = analysis.structure_probs
        chosen = probs.argmax(axis=1)
        confidence = probs[np.arange(len(probs)), chosen].tolist()
        for lot, (cls, conf) in enumerate(zip(chosen.tolist(), confidence)):
            out[lot] = _class_reading(cls, conf)
        return out
    kinds, colours, caps = analysis.kind_probs, analysis.colour_probs, analysis.cap_probs
    for lot in range(80):
        k = int(kinds[lot].argmax())
        if k == 0:
            out[lot] = LotReading(None, None, None, float(kinds[lot, 0]), {})
            continue
        colour_p = analysis.tower_colour_probs[lot] if k == 2 else colours[lot]
        c = int(colour_p.argmax())
        conf = float(kinds[lot, k] * colour_p[c])
        cap = None
        if k == 2:
            j = int(caps[lot].argmax())
            cap = (None, "white", "black")[j]
            conf *= float(caps[lot, j])
        out[lot] = LotReading(lots_stage.KINDS[k], GUILDS[c], cap, conf, {})
    return out


def read_board(
    image_bgr: np.ndarray,
    *,
    intrinsics: CameraIntrinsics | None = None,
    pose: BoardPose | None = None,
    appearance: Appearance | None = None,
    mat: MatSpec | None = None,
    reference: EmptyBoardReference | None = None,
    previous: Reading | None = None,
    views: int | None = None,
) -> Reading:
    """Read the Alien City position in one BGR frame.

    With ``pose`` (from calibration or the previous frame) nothing is searched:
    the frame is warped with cached maps and read.  ``reference`` (or
    ``appearance.reference``) is the empty board seen at setup; with it the
    tiles come from setup and occupancy is a difference test.  ``previous``
    (the last reading of the same still camera, at the same pose) lets every
    lot that looks as it did keep its earlier answer and confidence, and the
    tiles keep theirs: between two moves only the lots a hand touched are
    decided again, so one borderline lot cannot flicker between answers.
    ``views`` is how many mirrored views of the board the network reads
    and averages at least: by default SEARCHED_VIEWS when the board is
    searched (a one-off reading, with time to spare) and one at a known
    pose (every still frame of a game).  While some lot stays unsure
    (SECOND_VIEW_BELOW) the other mirrors are read too, up to all four, or
    up to REFERENCE_MOST_VIEWS against a reference.
    Raises :class:`BoardNotFoundError` when no board can be found.
    """
    if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise BoardNotFoundError("image: expected a BGR colour frame")
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    h, w = image_bgr.shape[:2]
    if intrinsics is not None:
        intrinsics = intrinsics.scaled_to((w, h))
    searched = pose is None
    misshapen = False
    if pose is None:
        pose, _how = locate_board(image_bgr, intrinsics, mat)
        # a grid that is no 4×5 array of square tiles is the array partly hidden or misplaced: not read as clear
        misshapen = not is_square_array(pose, (w, h), intrinsics)
        t1 = time.perf_counter()
        timing["find"] = (t1 - t0) * 1000
        t0 = t1
    if reference is None and appearance is not None:
        reference = appearance.reference
    geometry = build_warp(pose, (w, h), TILE_PX, intrinsics, MARGIN_PX)
    warped = geometry.warp(image_bgr)
    t1 = time.perf_counter()
    timing["warp"] = (t1 - t0) * 1000
    t0 = t1
    if reference is not None:  # balanced to look like the empty board did, whatever the lamp does since
        board_lots = lot_grid(geometry.board_view(warped), LOT_PX)
        gains = gains_matching(board_lots, reference.bgr_means_at(LOT_PX), _believed_empty(previous))
    elif appearance is not None and appearance.white_balance is not None:
        gains = np.array(appearance.white_balance)
    else:
        gains = board_gains(geometry.board_view(warped))
    lab_all = to_lab(warped, gains)
    t1 = time.perf_counter()
    timing["colour"] = (t1 - t0) * 1000
    if views is None:
        views = SEARCHED_VIEWS if searched else 1
    tiles, analysis = analyse(lab_all, geometry, appearance, reference, timing, views=views)
    t0 = time.perf_counter()
    lots = decide_lots(analysis)
    if appearance is not None and appearance.towers == "clear":
        lots = _black_caps_seen_at_the_apex(lots, image_bgr, geometry, intrinsics)
    if reference is None:
        tiles = _tile_colours_by_the_rules(tiles, lots)
        tiles, lots = _icons_seen_in_print(tiles, lots, analysis)
        tiles = _hidden_icons_by_the_rules(tiles, lots)
        lots = _mended_by_the_rules(lots, analysis, tiles)
    departure = _departures_since(previous, pose, analysis.seen)
    print_as_vouched = _print_as_vouched(reference, analysis, previous, departure)
    for lot in print_as_vouched:
        lots[lot] = LotReading(None, None, None, 1.0, {})
    t1 = time.perf_counter()
    timing["rules"] = (t1 - t0) * 1000
    t0 = t1
    occlusion = with_covered_lots(find_occlusion(lab_all, geometry.margin_px, LOT_PX, analysis.difference),
                                  analysis.covered_probs)
    around = surroundings(image_bgr, np.array(pose.ordered(), np.float32))
    moved_beside = departure is not None and previous is not None and previous.around is not None \
        and surroundings_changed(previous.around, around) >= SURROUNDINGS_SHARE
    timing["occlusion"] = (time.perf_counter() - t0) * 1000
    if analysis.structure_probs is not None and analysis.net is not None:
        confidence_map = analysis.net.confidence_map
    elif reference is not None and REFERENCE_MODEL is not None:
        confidence_map = REFERENCE_CONFIDENCE_MAP
    else:
        confidence_map = CONFIDENCE_MAP
    raw = calibrated(np.array([lots[lot].confidence for lot in range(80)]), confidence_map).tolist()
    lot_conf = {LOT_NAMES[lot]: round(raw[lot], 4) for lot in range(80)}
    for lot in print_as_vouched:
        lot_conf[LOT_NAMES[lot]] = SURE
    tile_conf = {key: round(float(tiles[key].confidence), 4) for key in TILE_KEYS}
    lot_lab = analysis.seen.copy()
    departed = {} if departure is None else \
        {LOT_NAMES[int(lot)]: round(float(departure[lot]), 2) for lot in np.flatnonzero(departure > 1.0)}
    runners_up = _runners_up(analysis.structure_probs, lots, lot_conf,
                             also={lot for lot in map(parse_lot, departed) if lots[lot].kind is None})
    for lot in print_as_vouched:
        runners_up.pop(LOT_NAMES[lot], None)  # the piece the print looks like is no answer there
    kept = None if previous is None or departure is None else _unchanged(previous, departure)
    if previous is not None and kept is not None:
        tiles, tile_conf = dict(previous.tiles), dict(previous.tile_confidence)
        for index in np.flatnonzero(kept):
            lot = int(index)
            if previous.lot_confidence[LOT_NAMES[lot]] < SURE:
                continue  # an unsure answer is no answer to keep: each new frame may read it better
            if _doubts_kept_answer(lots[lot], lot_conf[LOT_NAMES[lot]], previous.lots[lot]):
                continue  # a faint piece (a coin on its own colour) may change a lot less than the bar
            lots[lot] = previous.lots[lot]
            lot_conf[LOT_NAMES[lot]] = previous.lot_confidence[LOT_NAMES[lot]]
            runners_up.pop(LOT_NAMES[lot], None)
            lot_lab[lot] = previous.lot_lab[lot]  # type: ignore[index]
    timing["total"] = sum(timing.values())

    position = {
        "game": "alien-city",
        "tiles": {key: {"color": tiles[key].colour, "icon": LOT_NAMES[tiles[key].icon_lot]} for key in TILE_KEYS},
        "structures": {
            LOT_NAMES[lot]: structure
            for lot, reading in sorted(lots.items())
            if (structure := reading.to_structure_json()) is not None
        },
    }
    occluded_names = tuple(LOT_NAMES[lot] for lot in occlusion.lots)
    for name in occluded_names:
        lot_conf[name] = 0.0
        runners_up.pop(name, None)
        departed.pop(name, None)
    occluded = occlusion.occluded or misshapen
    if searched and occluded:
        lot_conf, tile_conf = _placed_in_doubt(lot_conf), _placed_in_doubt(tile_conf)
    return Reading(
        position_dict=position,
        lot_confidence=lot_conf,
        tile_confidence=tile_conf,
        pose=pose,
        occluded=occluded,
        occluded_lots=occluded_names,
        timing_ms=timing,
        lots=lots,
        tiles=tiles,
        lot_lab=lot_lab,
        runners_up=runners_up,
        departed=departed,
        around=around,
        moved_beside=moved_beside,
    )


#: the most a lot or tile is trusted in a frame whose board was searched for with something over it
PLACED_IN_DOUBT = 0.5


def _placed_in_doubt(confidence: dict[str, float]) -> dict[str, float]:
    """Confidences no higher than PLACED_IN_DOUBT.

    Why: an arm over the board hides part of its outline, and the search
    may then fit the 4 × 5 array a tile off, onto the table beside the
    visible tiles (1 of 20 generated hand frames, read from scratch: 25
    lots named wrong at 0.9 or more).  Every answer is then only as good
    as a placement that cannot be checked; at a known pose it can be.
    """
    return {name: min(value, PLACED_IN_DOUBT) for name, value in confidence.items()}


def _mended_by_the_rules(lots: dict[int, LotReading], analysis: LotAnalysis,
                         tiles: dict[str, TileReading]) -> dict[int, LotReading]:
    """The lots with the network's cheapest change of unsure lots that the rules allow (see by_the_rules).

    The changed lots keep the probability the network gave their new
    answer as confidence: the rules chose it, the frame did not show it surely.
    A lot may change when its answer is one the reading reports as unsure
    (calibrated below SURE): a network probability of 0.9 to 0.99 is
    reported at 0.899, and such a lot is no more certain to the rules than
    to the players.
    """
    if analysis.structure_probs is None:
        return lots
    change = by_the_rules.mend(analysis.structure_probs, tiles, unsure=sure_from_raw(analysis.net))
    if not change:
        return lots
    out = dict(lots)
    for lot, cls in change.items():
        out[lot] = _network_answer(analysis.structure_probs[lot], cls)
    return out


#: a black cap is taken away where the frame's apex is lighter than this (Lab L, 0-255) ...
CAP_APEX_LIGHTER = 36.0
#: ... and not this much darker than the tower's walls around it
CAP_APEX_BELOW_WALLS = 12.0


def _black_caps_seen_at_the_apex(lots: dict[int, LotReading], image_bgr: np.ndarray, geometry: Any,
                                 intrinsics: CameraIntrinsics | None) -> dict[int, LotReading]:
    """The lots, with a black cap the apex does not show taken off its tower (a set of clear towers only).

    Why: a clear tower on a dark card is dark at its top too, and the board
    network, at 16 pixels a lot, reads it capped black, often surely.  At
    the frame's own resolution a black cap is the darkest thing at the apex
    and well below the walls around it (on the generator's 60 clear-tower
    and 80 usual scenes, apex L 19-35 and 18 to 68 below the walls for
    every real black cap read so); such a clear top is lighter and level
    with its walls (lots.apex_lightness).  The tower and its colour stay
    the network's, and so does the confidence: the doubt was the cap's.
    Only for a table told its towers are clear: on opaque ones the network
    reads no such caps, and in made-up-art app game 1102 a real black cap,
    lighter in that art, was taken off in some frames and warned about
    as removed.
    """
    capped = [lot for lot, reading in lots.items() if reading.kind == "tower" and reading.cap == "black"]
    if not capped:
        return lots
    out = dict(lots)
    for lot, (apex, walls) in lots_stage.apex_lightness(image_bgr, geometry, capped, intrinsics).items():
        if apex > CAP_APEX_LIGHTER and apex - walls > -CAP_APEX_BELOW_WALLS:
            out[lot] = replace(lots[lot], cap=None)
    return out


def _network_answer(probs: np.ndarray, cls: int) -> LotReading:
    """The lot read as the network's class ``cls``, with the probability the network gave it as confidence."""
    return _class_reading(cls, float(probs[cls]))


def _class_reading(cls: int, confidence: float) -> LotReading:
    kind, colour, cap = lot_net.CLASSES[cls]
    return LotReading(kind, colour, cap, confidence, {})


def _runners_up(structure_probs: np.ndarray | None, lots: dict[int, LotReading],
                confidence: dict[str, float], also: Collection[int] = ()) -> dict[str, RunnerUp]:
    """The next likeliest answer of every lot whose answer is less sure than SURE, and of the lots
    ``also`` names however sure (the network's only)."""
    if structure_probs is None:
        return {}
    out: dict[str, RunnerUp] = {}
    for lot, reading in lots.items():
        name = LOT_NAMES[lot]
        if confidence[name] >= SURE and lot not in also:
            continue
        probs = structure_probs[lot]
        chosen = lot_net.CLASSES.index((reading.kind, reading.colour, reading.cap))
        other = max((c for c in range(len(probs)) if c != chosen), key=lambda c: float(probs[c]))
        rest = max(1.0 - float(probs[chosen]), 1e-9)
        out[name] = RunnerUp(_network_answer(probs, other).to_structure_json(), round(float(probs[other]), 4),
                             round(min(float(probs[other]) / rest, 1.0), 4), round(float(probs[0]), 4))
    return out


def _engine_position(tiles: dict[str, TileReading], lots: dict[int, LotReading]) -> Position:
    return Position(by_the_rules.engine_tiles(tiles),
                    {lot: built for lot, reading in lots.items() if (built := reading.to_structure()) is not None})


#: a tile colour read less surely than this gives way to the pieces on the tile (see _tile_colours_by_the_rules)
COLOUR_UNSURE = 0.99
#: how much less likely a guild becomes when no legal game puts the tile's pieces on a tile of it
RULED_OUT = 1e-4


def _tile_colours_by_the_rules(tiles: dict[str, TileReading], lots: dict[int, LotReading]) -> dict[str, TileReading]:
    """The tile colours again, when the pieces on an unsurely read tile say no legal game put them there.

    Why: on a neutral card whose only colour is a faint icon, the pieces
    speak louder than the print.  Rule 3 makes a coloured tile's first two
    structures its own colour and rule 2 keeps a dome on its own guild's
    tiles while they have room (``engine.aliencity.colour_impossibilities``), so a
    "red" tile holding two blue domes is a misread blue one.  The guilds
    that breach those rules on such a tile become all but impossible, and
    the tiles are named again from their probabilities, five of each, so the
    tile it swapped with moves back too.  A sure colour stays: there a
    misread piece is the likelier story, which the rules mend of the lots
    takes up.
    """
    if any(not tile.colour_probs for tile in tiles.values()):
        return tiles
    position = _engine_position(tiles, lots)
    unsure = [t for t, key in enumerate(TILE_KEYS) if tiles[key].colour_confidence < COLOUR_UNSURE
              and any(lot in position.structures for lot in TILE_LOT_IDS[t])]
    breaching = _tiles_breaking_rules_2_3(position) if unsure else set()
    doubted = [t for t in unsure if parse_lot(TILE_KEYS[t]) in breaching]
    if not doubted:
        return tiles
    probs = np.array([tiles[key].colour_probs for key in TILE_KEYS])
    for t in doubted:
        key = parse_lot(TILE_KEYS[t])
        icon = position.tiles[key].icon
        fits = np.array([key not in _tiles_breaking_rules_2_3(Position({**position.tiles, key: Tile(guild, icon)},
                                                                       position.structures)) for guild in GUILDS])
        if fits.any():
            probs[t] = np.where(fits, probs[t], RULED_OUT * probs[t])
            probs[t] /= probs[t].sum()
    colours = colours_from_probabilities(probs)
    return {key: replace(tiles[key], colour=colours[key][0], colour_confidence=colours[key][1],
                         colour_probs=tuple(float(p) for p in probs[t]))
            if colours[key][0] != tiles[key].colour else tiles[key] for t, key in enumerate(TILE_KEYS)}


def _tiles_breaking_rules_2_3(position: Position) -> set[int]:
    """The tiles (engine keys) whose pieces break rule 2 or rule 3 for their colour."""
    return {TILE_OF[lot] for found in colour_impossibilities(position) for lot in found.lots}


def _icons_seen_in_print(tiles: dict[str, TileReading], lots: dict[int, LotReading],
                         analysis: LotAnalysis) -> tuple[dict[str, TileReading], dict[int, LotReading]]:
    """The tiles and lots with each unsure piece on a lot whose print the tile's guild clearly agrees is
    its icon (tiles.icons_in_print) read empty, and the icon put there.

    Why: on tile art the network has not seen, an icon can look like a
    piece (a red disc like a red dome), and a piece on an icon lot beside
    free lots breaks rule 5, so the rules then move the icon to a free lot
    (_hidden_icons_by_the_rules) and both answers are wrong.  A piece hides
    the print under it, so a lot showing the very print the guild's other
    tiles show elsewhere holds none.  Only unsure pieces on a tile with a
    free lot are suspects, and only on a board with at most
    AGREEMENT_CHECKED_PIECES other pieces (the setup board, where the other
    tiles' icons are in view).  The suspects themselves are not counted: an
    art whose icon the network takes for a piece shows it on four or five
    tiles of its guild (a dark ring as a black dome, made-up-art board
    31071), and counted, they kept the setup board from the check.  The lot
    keeps the network's probability of "empty" as confidence, and the tile's icon is
    reported at DISAGREEING_ICON_CAP (the app asks about the tile): the
    print decided, not the network.
    """
    built = [lot for lot, reading in lots.items() if reading.kind is not None]
    if analysis.structure_probs is None:
        return tiles, lots
    sure = sure_from_raw(analysis.net)
    suspects = {lot for lot in built if lots[lot].confidence < sure
                and any(lots[int(other)].kind is None for other in TILE_LOT_IDS[TILE_OF_LOT[lot]])}
    if not suspects or len(built) - len(suspects) > AGREEMENT_CHECKED_PIECES:
        return tiles, lots
    guilds = {tiles[TILE_KEYS[TILE_OF_LOT[lot]]].colour for lot in suspects}
    in_print = icons_in_print(canonical(analysis.seen), {key: tile.colour for key, tile in tiles.items()}, guilds)
    tiles, lots = dict(tiles), dict(lots)
    for key, lot in in_print.items():
        if lot in suspects:
            lots[lot] = _network_answer(analysis.structure_probs[lot], 0)
            order = (lot, *(other for other in tiles[key].icon_order if other != lot))
            tiles[key] = replace(tiles[key], icon_lot=lot, icon_confidence=DISAGREEING_ICON_CAP, icon_order=order)
    return tiles, lots


#: confidence of a hidden icon the rules put under the one lot that can have been its tile's last build
ICON_BY_THE_RULES = 0.8


def _hidden_icons_by_the_rules(tiles: dict[str, TileReading], lots: dict[int, LotReading]) -> dict[str, TileReading]:
    """Each tile whose icon lot was read as built, with the icon moved to a lot that can hold it.

    One frame cannot see an icon under a tower, but the rules narrow down
    where it is (``engine.aliencity.possible_icon_lots``: a built icon lot
    was its tile's last build).  When the search under the pieces chose a
    lot the rules rule out, the icon goes to the search's next likeliest
    built lot they allow (or, with none, its likeliest free one); when
    exactly one lot is left, the answer is as sure as the board is legal.
    """
    position = _engine_position(tiles, lots)
    out = dict(tiles)
    for key, tile in tiles.items():
        if tile.icon_lot not in position.structures:
            continue  # the icon is in view
        possible = possible_icon_lots(position, parse_lot(key))
        if not possible:
            continue  # no legal order: an illegal board, or a misread piece; leave the search's answer
        candidates = [lot for lot in possible if lot in position.structures] or possible  # hidden, else in view
        ranked = [lot for lot in tile.icon_order if lot in candidates] or candidates
        if len(candidates) == 1:
            confidence = ICON_BY_THE_RULES if ranked[0] != tile.icon_lot else max(tile.icon_confidence, ICON_BY_THE_RULES)
        elif ranked[0] != tile.icon_lot:
            confidence = min(tile.icon_confidence, 1.0 / len(ranked))
        else:
            continue
        out[key] = replace(tile, icon_lot=ranked[0], icon_confidence=confidence)
    return out


COVERED_BAR = 0.5  # the board network's belief in a hand over a lot above which the lot is not read
#: with no arm found entering, a patch of covered lots is a hand only if it touches the array's rim or
#: spans this many lots, and the network is this sure of at least one of them
HAND_LOTS = 4
HAND_SURE = 0.9


def with_covered_lots(occlusion: Occlusion, covered: np.ndarray | None) -> Occlusion:
    """The occlusion stage's finding joined with the lots the board network sees covered.

    A hand comes from outside the picture, so its arm crosses the array's
    rim, and a hand alone spans a dozen lots; the network is sure of a real
    hand (every hand of the benchmarks' scenes has a lot at 1.00).  Lots it
    sees covered in a small patch off the rim, or only doubtfully, with no
    arm found entering, are print or shade it has not seen before, not a
    hand: in made-up art two plain lots of an empty board kept the app from
    ever seeing the board empty, and a shaded corner tile after a lamp
    change (covered at 0.55) hid seven moves from it.
    """
    if covered is None:
        return occlusion
    hand = covered >= COVERED_BAR
    if not hand.any():
        return occlusion
    if not occlusion.occluded:
        hand = _reaching_in(covered)
        if not hand.any():
            return occlusion
    extra = {int(lot) for lot in np.flatnonzero(hand)}
    return Occlusion(True, tuple(sorted(set(occlusion.lots) | extra)), occlusion.score)


def _reaching_in(covered: np.ndarray) -> np.ndarray:
    """(80,) bool by lot id: the lots covered at COVERED_BAR or more in a patch (8-connected) that
    touches the array's rim or has at least HAND_LOTS lots, and holds a lot covered at HAND_SURE or more."""
    lots = covered >= COVERED_BAR
    grid = lots.reshape(LOTS_TALL, LOTS_WIDE).astype(np.uint8)
    count, labels = cv2.connectedComponents(grid, connectivity=8)
    keep = np.zeros_like(lots)
    for label in range(1, count):
        patch = labels == label
        on_rim = patch[0].any() or patch[-1].any() or patch[:, 0].any() or patch[:, -1].any()
        sure = float(covered[patch.reshape(-1)].max()) >= HAND_SURE
        if sure and (on_rim or int(patch.sum()) >= HAND_LOTS):
            keep |= patch.reshape(-1)
    return keep


def _empty_board_tiles(lab_all: np.ndarray, geometry: Any) -> dict[str, TileReading]:
    """The tiles of a board taken as empty, every lot a candidate for its tile's icon.

    Why: the icon search passes over the lots it believes hold pieces, and
    on tile art the vision has never seen the print it takes for a piece is
    most often the icon itself (made-up-art game 3704: four black tiles'
    icons read as black domes, each tile then given another lot as its
    icon, the first builds next to them warned as illegal).  On a board
    taken as empty what looked like a piece is print, and counts as
    looking like an icon (as in _second_look, with no piece left).
    """
    lab = geometry.board_view(lab_all)
    seen = lot_grid(lab, LOT_PX)
    canon = canonical(seen)
    look = _first_look(lab, seen, canon, geometry.camera_centre, lots_stage.TOWER_HEIGHT_MM / lots_stage.DEFAULT_TILE_MM,
                       FIRST_LOOK_MODEL)
    icon_like = None if look.icon_like is None else look.icon_like + look.piece
    tiles, _ = _tiles_from_frame(lab, seen, canon, np.zeros(80), icon_like, look.votes)
    return tiles


def _print_as_vouched(reference: EmptyBoardReference | None, analysis: LotAnalysis, previous: Reading | None,
                      since_previous: np.ndarray | None) -> list[int]:
    """The reference's print lots that look as they did when the board was taken as clear, or as
    they did in the previous reading that found them so: empty.

    Why: a print the network takes for a piece on a board it has never
    seen (made-up-art game 3704: five icons read as black domes at 0.8 to
    1.0) may go on reading so against the reference taken of that very
    board (two of them at 0.6 and 0.9 on the unchanged frame), so the
    setup never read the board clear that the players had vouched for.
    The look, not the network, is the check there: a piece put on such a
    lot departs from it as any piece does (lots.departures, whose floor
    is below the faintest piece), and is then read as usual.  Why also
    unchanged since the previous reading: the towers built around such a
    lot shade it and lean over it, and with a lamp change its look drifts
    from the reference's by about the bar (game 3704's H3 between three
    towers: 0.2 to 1.1 bars) while no piece arrived.
    """
    if reference is None or not reference.print_lots:
        return []
    from_reference = lots_stage.departures(analysis.seen, analysis.expected)
    kept = _unchanged(previous, since_previous) if previous is not None and since_previous is not None else None

    def still_print(lot: int) -> bool:
        if from_reference[lot] <= 1.0:
            return True
        if kept is None or not kept[lot] or previous is None:
            return False
        return previous.lots[lot].kind is None and previous.lot_confidence[LOT_NAMES[lot]] >= SURE

    return [lot for lot in sorted(reference.print_lots) if still_print(lot)]


def _believed_empty(previous: Reading | None) -> np.ndarray | None:
    """Lots the previous reading saw empty and uncovered (None: no previous reading to go by)."""
    if previous is None or not previous.lots:
        return None
    empty = np.array([previous.lots[lot].kind is None for lot in range(80)])
    for name in previous.occluded_lots:
        empty[parse_lot(name)] = False
    return empty


SURE = 0.9  # calibrated confidence of an answer worth keeping
LEANS = 0.5  # calibrated confidence from which a fresh answer that differs overrides a kept one
#: calibrated confidence below which a fresh reading of the very answer kept doubts it: reported, not kept
#: (the app's default bar for asking about a lot; a network probability of 0.9 to 0.99, reported at 0.899,
#: is the everyday noise of an unchanged lot and keeps its answer)
DOUBTS = 0.75


def _doubts_kept_answer(fresh: LotReading, confidence: float, kept: LotReading) -> bool:
    """Whether this frame doubts the answer the lot would keep: it reads something else, more
    likely than not, or the same answer with real doubt (below DOUBTS).

    Why not only when it reads otherwise surely: a black dome on a dark
    tile changes the look less than the bar, and a reading that leans to
    "dome" is then worth an unsure answer (the app looks again) rather than
    the old sure "empty".  Why the same answer unsurely: the network may
    see such a dome only as doubt ("empty" 0.64, "black dome" 0.36 in
    made-up-art game 2002), and the app takes a faint build from that doubt
    and its runner-up, which the old sure "empty" hid: the move went
    unseen and every later move went to the other player.
    """
    same = (fresh.kind, fresh.colour, fresh.cap) == (kept.kind, kept.colour, kept.cap)
    return confidence < DOUBTS if same else confidence >= LEANS


SAME_POSE_PX = 1.0  # corners further apart than this: the lots are sampled elsewhere, compare nothing


def _departures_since(previous: Reading | None, pose: BoardPose, seen: np.ndarray) -> np.ndarray | None:
    """Each lot's departure from its look in ``previous`` (lots.departures), or None when ``previous``
    cannot be compared: none, read elsewhere, or with no answers."""
    if previous is None or previous.lot_lab is None or previous.lot_lab.shape != seen.shape or not previous.lots:
        return None
    if largest_corner_move(previous.pose, pose) > SAME_POSE_PX:
        return None
    return lots_stage.departures(seen, previous.lot_lab)  # type: ignore[no-any-return]


def _unchanged(previous: Reading, departure: np.ndarray) -> np.ndarray:
    """Lots that may keep ``previous``'s answer (bool per lot).

    A lot keeps its answer only when its look has not changed and nothing
    covered it in the previous reading (an occluded lot's answer is not one).
    """
    kept = departure <= 1.0
    for name in previous.occluded_lots:
        kept[parse_lot(name)] = False
    return kept  # type: ignore[no-any-return]


def layout_read(tiles: dict[str, TileReading]) -> dict[str, dict[str, Any]]:
    """A reading's tiles as an EmptyBoardReference keeps them: colour, icon, confidence, icon ranking,
    and the guild probabilities (for the referee to mend a tile it read unsurely)."""
    return {key: {"color": tile.colour, "icon": LOT_NAMES[tile.icon_lot], "confidence": round(float(tile.confidence), 4),
                  "icon_order": [LOT_NAMES[lot] for lot in tile.icon_order],
                  **({"colour_probs": [round(float(p), 4) for p in tile.colour_probs]} if tile.colour_probs else {})}
            for key, tile in tiles.items()}


def empty_board_reference(
    image_bgr: np.ndarray,
    pose: BoardPose,
    *,
    intrinsics: CameraIntrinsics | None = None,
    white_balance: tuple[float, float, float] | None = None,
    tiles: dict[str, dict[str, str]] | None = None,
    lot_px: int = LOT_PX,
    vouched: bool = False,
) -> EmptyBoardReference:
    """What the empty array looks like, for later frames' difference test.

    Taken at setup (``boardcam calibrate board``) from a frame with no pieces:
    per-lot Lab at ``lot_px`` per lot (full reading resolution by default: a
    coarser reference blurs the printed icons, whose edges then look like
    pieces), plus the tile layout (read here unless
    given: with no pieces the icon is simply the odd lot of each tile).
    A board read here (no ``tiles``) is taken as empty whatever it shows:
    every lot may hold its tile's icon.  ``vouched``: the players said it
    is clear, and the lots read as pieces on it are its print lots
    (EmptyBoardReference.print_lots).  Not so for a board the app took
    itself because the pieces on it were all unsure: against the
    reference those read as they are (a faint piece there is a real one
    more often than not: made-up-art game 1903 missed a red dome on a lot
    read at 0.6 on its setup board, and lost 25 of its 37 moves).
    """
    h, w = image_bgr.shape[:2]
    geometry = build_warp(pose, (w, h), TILE_PX, intrinsics, MARGIN_PX)
    warped = geometry.warp(image_bgr)
    gains = np.array(white_balance) if white_balance is not None else board_gains(geometry.board_view(warped))
    lab_all = to_lab(warped, gains)
    print_lots: frozenset[int] = frozenset()
    if vouched:
        _, analysis = analyse(lab_all, geometry, None, None, {})
        print_lots = frozenset(lot for lot, read in decide_lots(analysis).items() if read.kind is not None)
    if tiles is None:
        tiles = layout_read(_empty_board_tiles(lab_all, geometry))
    seen = lot_grid(geometry.board_view(lab_all), LOT_PX)
    small = seen.reshape(80, lot_px, LOT_PX // lot_px, lot_px, LOT_PX // lot_px, 3).mean(axis=(2, 4))
    return EmptyBoardReference(lot_px=lot_px, lab=np.round(small, 1), tiles=tiles,
                               white_balance=tuple(float(g) for g in gains),  # type: ignore[arg-type]
                               print_lots=print_lots)
