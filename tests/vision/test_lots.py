import cv2
import numpy as np

from boardcam.vision import lots

from boardcam.vision.lots import (
    expected_from_frame,
    lot_features,
    FEATURE_NAMES,
    lot_ray_lengths,
    relight,
    relight_shaded,
    rule_colour_probabilities,
)
from boardcam.vision.tiles import GUILDS, TILE_LOT_IDS, TILE_OF_LOT


def name_of(lab) -> str:
    return GUILDS[int(rule_colour_probabilities(np.array([lab], float), 5.0, 95.0)[0].argmax())]


def test_structure_colours_by_hue_and_relative_darkness():
    assert name_of((45, 60, 45)) == "red"
    assert name_of((55, -50, 40)) == "green"
    assert name_of((35, 15, -55)) == "blue"
    assert name_of((9, 1, -2)) == "black"
    # a dark blue is still blue, not black
    assert name_of((28, 12, -40)) == "blue"


def _board_with(shape: str, lot: int, s: int = 24) -> np.ndarray:
    changed = np.zeros((80, s, s), np.uint8)
    yy, xx = np.mgrid[0:s, 0:s]
    if shape == "disc":
        changed[lot] = np.hypot(xx + 0.5 - s / 2, yy + 0.5 - s / 2) < 0.4 * s
    else:  # a square turned by 30°, as a tower base may be
        u = (xx + 0.5 - s / 2) * np.cos(0.5) + (yy + 0.5 - s / 2) * np.sin(0.5)
        v = -(xx + 0.5 - s / 2) * np.sin(0.5) + (yy + 0.5 - s / 2) * np.cos(0.5)
        changed[lot] = (np.abs(u) < 0.4 * s) & (np.abs(v) < 0.4 * s)
    return changed


def test_gradients_are_np_gradient_along_rows_and_columns():
    images = np.random.default_rng(4).random((6, 16, 16)).astype(np.float32)
    rows, cols = lots._gradients(images)
    expected_rows, expected_cols = np.gradient(images, axis=(1, 2))
    assert np.array_equal(rows, expected_rows) and np.array_equal(cols, expected_cols)


def test_rays_tell_a_round_dome_from_a_square_base():
    disc, theta = lot_ray_lengths(_board_with("disc", 27))
    square, _ = lot_ray_lengths(_board_with("square", 27))
    four = lambda rays: np.abs((rays * np.exp(4j * theta)).sum()) / rays.sum()
    assert disc[27].std() < 0.05 and four(disc[27]) < 0.1
    assert four(square[27]) > 4 * four(disc[27]) and square[27].std() > 2 * disc[27].std()
    assert np.all(disc[[26, 28, 19, 35]] == 0)  # nothing reaches the neighbours


def _walked_rays(changed: np.ndarray) -> np.ndarray:
    """Each ray walked one sample at a time on the board picture, stopping at the first miss or the array's edge."""
    s = changed.shape[1]
    board = changed.reshape(lots.LOTS_TALL, lots.LOTS_WIDE, s, s)[::-1].transpose(0, 2, 1, 3).reshape(
        lots.LOTS_TALL * s, lots.LOTS_WIDE * s)
    rays = np.zeros((80, lots.RAY_ANGLES))
    for lot in range(80):
        cx, cy = (lot % lots.LOTS_WIDE + 0.5) * s, (lots.LOTS_TALL - 1 - lot // lots.LOTS_WIDE + 0.5) * s
        for a in range(lots.RAY_ANGLES):
            theta = a * 2 * np.pi / lots.RAY_ANGLES
            for step in lots.RAY_STEPS:
                x, y = int(np.rint(cx + np.cos(theta) * step * s)), int(np.rint(cy - np.sin(theta) * step * s))
                if not (0 <= x < board.shape[1] and 0 <= y < board.shape[0]) or not board[y, x]:
                    break
                rays[lot, a] += 1 / 16
    return rays


def test_rays_stop_at_the_first_miss_and_at_the_array_edge():
    rng = np.random.default_rng(9)
    changed = rng.random((80, 16, 16)) < 0.85  # long runs with gaps, lots at the edge changed to their rim
    changed[[0, 7, 72, 79, 35]] = True
    rays, _ = lot_ray_lengths(changed)
    assert np.array_equal(rays, _walked_rays(changed))
    assert rays[0].max() == 0.75 and rays[0].min() < 0.75  # a corner lot's rays leave the array
    assert np.array_equal(lot_ray_lengths(changed.reshape(80, -1))[0], rays)


def test_icon_template_follows_the_icon_whatever_its_turn():
    rng = np.random.default_rng(2)
    canon = 50 + rng.normal(0, 1, (80, 24, 24, 3)).astype(np.float32)
    icon = np.zeros((24, 24, 3), np.float32)
    icon[4:10, 4:20, 0] = 30.0  # an L-shaped mark: its turn matters
    icon[4:20, 4:10, 0] = 30.0
    icons = TILE_LOT_IDS[:, 0]
    for k, lot in enumerate(icons):
        canon[lot] += np.rot90(icon, k % 4)
    guild = np.zeros(80, int)
    expected = expected_from_frame(canon, guild, icons)
    err_icon = np.abs(expected[icons] - canon[icons]).mean()
    err_plain = np.abs(expected[TILE_LOT_IDS[:, 1]] - canon[TILE_LOT_IDS[:, 1]]).mean()
    assert err_icon < 2.0 and err_plain < 2.0


def test_relight_follows_a_lamp_falling_off_across_the_board():
    rng = np.random.default_rng(3)
    flat = 40 + rng.normal(0, 1, (80, 24, 24, 3)).astype(np.float32)
    flat[..., 1:] = 0.0
    light = np.linspace(0.7, 1.3, 20)[TILE_OF_LOT]
    seen = flat * light[:, None, None, None]
    fixed = relight(flat, seen)
    assert np.abs(fixed - seen).mean() < 0.1 * np.abs(flat - seen).mean()


def _flat_board(seed: int, s: int = 16) -> np.ndarray:
    rng = np.random.default_rng(seed)
    flat = 50 + rng.normal(0, 1, (80, s, s, 3)).astype(np.float32)
    flat[..., 1:] = 10.0
    return flat


def _shading(seed: int, s: int = 16, most: float = 0.08) -> np.ndarray:
    """Each tile lit (or printed) lighter toward one edge: a ratio that is a plane across the tile, (80, s, s)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:s, 0:s]
    angle = rng.uniform(0, 2 * np.pi, 20)[TILE_OF_LOT]
    lots_ = np.arange(80)
    x = (lots_ % 8 % 2 - 0.5)[:, None, None] + ((xx + 0.5) / s - 0.5)[None]
    y = (lots_ // 8 % 2 - 0.5)[:, None, None] - ((yy + 0.5) / s - 0.5)[None]
    return np.exp(most * (np.cos(angle)[:, None, None] * x + np.sin(angle)[:, None, None] * y)).astype(np.float32)


def test_relight_shaded_follows_light_falling_across_each_tile():
    flat = _flat_board(6)
    seen = flat * _shading(7)[..., None]
    per_tile = np.abs(relight(flat, seen) - seen)[..., 0].mean()
    shaded = np.abs(relight_shaded(flat, seen) - seen)[..., 0].mean()
    assert shaded < 0.7 * per_tile  # the slopes are shrunk toward none: a flat tile must stay flat


def test_relight_shaded_does_not_shade_a_piece_away():
    flat = _flat_board(8)
    bare = flat * _shading(9)[..., None]
    seen = bare.copy()
    seen[41, 2:14, 2:14, 0] *= 0.75  # a tower darker than the print, on lot B6
    piece = np.zeros(80)
    piece[41] = 0.9
    relit = relight_shaded(flat, seen, piece)
    tile = TILE_LOT_IDS[TILE_OF_LOT[41]]
    others = [lot for lot in tile if lot != 41]
    # the tile's other lots are relit as if the tower were not there...
    assert np.abs(relit[others] - relight_shaded(flat, bare)[others])[..., 0].mean() < 0.01 * flat[..., 0].mean()
    # ...and the tower departs from its relit lot as much as from the plain print
    departure = np.abs(relit[41, 2:14, 2:14] - seen[41, 2:14, 2:14])[..., 0].mean()
    assert departure > 0.8 * np.abs(flat[41, 2:14, 2:14] - seen[41, 2:14, 2:14])[..., 0].mean()
    # a piece the first look missed may tilt its tile only so far: most of its departure stays
    unseen = relight_shaded(flat, seen)
    kept = np.abs(unseen[41, 2:14, 2:14] - seen[41, 2:14, 2:14])[..., 0].mean()
    assert kept > 0.6 * np.abs(relight(flat, seen)[41, 2:14, 2:14] - seen[41, 2:14, 2:14])[..., 0].mean()


def test_features_see_a_piece_and_not_an_empty_lot():
    rng = np.random.default_rng(5)
    expected = 50 + rng.normal(0, 1, (80, 24, 24, 3)).astype(np.float32)
    seen = expected + rng.normal(0, 1, expected.shape).astype(np.float32)
    seen[40, 6:18, 6:18] = (20.0, 40.0, 30.0)  # a red dome
    feats = lot_features(seen, expected, np.array([2.0, 2.5, 8.0]), 0.7)
    assert feats.shape == (80, len(FEATURE_NAMES))
    centre = FEATURE_NAMES.index("f_centre")
    assert feats[40, centre] > 0.5 and np.delete(feats[:, centre], 40).max() < 0.1


def test_changed_lots_sees_a_piece_not_noise_or_a_dimmer_lamp():
    rng = np.random.default_rng(4)
    base = np.zeros((80, 16, 16, 3), np.float32)
    base[..., 0] = rng.uniform(30, 70, (80, 1, 1))
    base[..., 1:] = rng.uniform(-30, 30, (80, 1, 1, 2))
    noisy = base + rng.normal(0, 1.5, base.shape).astype(np.float32)
    assert not lots.changed_lots(noisy, base).any()
    dimmer = noisy.copy()
    dimmer[..., 0] *= 0.85
    dimmer[..., 1:] *= 0.85
    assert not lots.changed_lots(dimmer, base).any()
    with_piece = noisy.copy()
    yy, xx = np.mgrid[0:16, 0:16]
    disc = np.hypot(xx - 7.5, yy - 7.5) < 5.5
    with_piece[17][disc] = with_piece[17][disc] + np.array([-6.0, 2.0, -2.0], np.float32)  # a faint dark dome
    assert np.flatnonzero(lots.changed_lots(with_piece, base)).tolist() == [17]


def test_departures_say_how_far_past_the_bar_each_lot_changed():
    rng = np.random.default_rng(5)
    base = np.zeros((80, 16, 16, 3), np.float32)
    base[..., 0] = rng.uniform(30, 70, (80, 1, 1))
    noisy = base + rng.normal(0, 1.5, base.shape).astype(np.float32)
    yy, xx = np.mgrid[0:16, 0:16]
    disc = np.hypot(xx - 7.5, yy - 7.5) < 5.5
    faint, plain = noisy.copy(), noisy.copy()
    faint[9][disc] += np.array([-4.0, 0.0, 0.0], np.float32)
    plain[9][disc] += np.array([-20.0, 0.0, 0.0], np.float32)
    faint_far, plain_far = lots.departures(faint, base), lots.departures(plain, base)
    assert plain_far[9] > faint_far[9] > 1.0  # both a change, the plain piece further past the bar
    assert np.delete(faint_far, 9).max() < 1.0
    assert (lots.changed_lots(faint, base) == (faint_far > 1.0)).all()


def _grey_frame_and_geometry():
    """A plain grey frame of a board seen from a camera off to one side, and its warp geometry."""
    from boardcam.vision.geometry import build_warp, default_camera_matrix
    from boardcam.vision.models import BoardPose

    k = default_camera_matrix((1640, 1232))
    centre = np.array([1.0, 1.5, 8.0])  # tile units: over the lower left, so far lots lean
    rotation = np.diag([1.0, -1.0, -1.0])
    corners = np.array([[0, 0, 0], [4, 0, 0], [4, 5, 0], [0, 5, 0]], float)
    px = (k @ (rotation @ (corners - centre).T)).T
    pose = BoardPose.from_points(px[:, :2] / px[:, 2:3])
    return np.full((1232, 1640, 3), 110, np.uint8), build_warp(pose, (1640, 1232), 32)


def _apex_px(geometry, lot: int, height: float):
    """Where a point ``height`` tile units above the lot's centre appears in the frame."""
    from boardcam.vision.geometry import project_height, through_homography

    apex = project_height(lots.lot_centres()[[lot]], height, geometry.camera_centre)
    x, y = through_homography(geometry.board_h, apex[:, 0], apex[:, 1])
    return int(round(x[0])), int(round(y[0]))


def test_the_apex_is_dark_and_below_its_walls_only_where_a_black_cap_sits():
    frame, geometry = _grey_frame_and_geometry()
    far = 79  # H10, two tiles and more from the camera's foot: its apex leans out by half a lot
    plain = lots.apex_lightness(frame, geometry, [far])[far]
    assert abs(plain[0] - plain[1]) < 1.0  # a clear top as dark as its walls: level
    lot_px = float(np.hypot(*np.subtract(_apex_px(geometry, far, 0.0), _apex_px(geometry, far - 1, 0.0))))
    cv2.circle(frame, _apex_px(geometry, far, 0.6), int(0.2 * lot_px), (20, 20, 20), -1)
    apex, walls = lots.apex_lightness(frame, geometry, [far])[far]
    assert apex < 36 and apex - walls < -40
    # the cap is found where it appears, not at the base: the base alone shows nothing
    base_only, geometry_base = _grey_frame_and_geometry()
    cv2.circle(base_only, _apex_px(geometry_base, far, 0.0), int(0.2 * lot_px), (20, 20, 20), -1)
    apex, walls = lots.apex_lightness(base_only, geometry_base, [far])[far]
    assert apex > 36
