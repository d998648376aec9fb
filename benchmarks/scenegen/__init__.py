"""3D scene generator for boardcam vision tests and benchmarks (not part of the runtime package).

    from scenegen import random_scene, render_scene, SceneParams
    scene = random_scene(7)                 # random legal-game position, random camera/lights
    scene.image                             # BGR uint8, 1640x1232 by default
    scene.truth["position"], scene.truth["corners_px"], scene.truth["lot_centers_px"], ...
"""

from .params import CLEAR_TOWERS, Hand, Light, Mat, SceneParams
from .positions import game_positions, parse_position
from .render import Scene, render_scene
from .files import write_scene
from .hard_cases import HARD_CASES, hard_case_empty_board, hard_case_scene
from .sampling import random_scene, sample_params
from .series import scene_series

__all__ = [
    "CLEAR_TOWERS",
    "HARD_CASES",
    "Hand",
    "Light",
    "Mat",
    "Scene",
    "SceneParams",
    "game_positions",
    "hard_case_empty_board",
    "hard_case_scene",
    "parse_position",
    "random_scene",
    "render_scene",
    "sample_params",
    "scene_series",
    "write_scene",
]
