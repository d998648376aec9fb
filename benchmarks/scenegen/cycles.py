"""The same scenes through Blender's Cycles path tracer: a second, independent renderer.

    python -m scenegen.cycles OUT_DIR --count N --seed S [--samples 48] [--edition R] [--size WxH]
    python -m scenegen.cycles OUT_DIR --game G --plies N --seed S ...   # one photo per move of a game
    python -m scenegen.cycles OUT_DIR --empty-twins --count N --seed S ...  # each table loaded and empty

Why: the reader is fitted and tuned on scenes of this package's own ray
caster, whose plastic, gloss, shadows and light are simple formulas.  A
path tracer gets what that renderer leaves out: light through a translucent
pyramid (refraction, coloured shadows), glossy reflections of the room and
of the neighbouring pieces, soft indirect light, rounded edges.  Reading
its frames measures how far the reader carries to pictures it was not
fitted on, the nearest this project gets to photos without a camera.

Each seed draws the same position, camera, lamps, tile art and piece
placement as ``random_scene(seed)`` (without the hand and the mat, which
only that renderer draws); lens distortion, vignetting, blur, sensor noise
and JPEG are the same development step.  The truth JSON is the same format,
so ``boardcam bench photos --dir OUT_DIR`` reads and scores the folder.
With ``--game`` the folder is one game photographed after every move (the
engine's random game G, up to ply N, under seed S's camera, lamps and art),
which ``boardcam bench photo-game --dir OUT_DIR`` referees like a recording.

Needs the ``bpy`` package (Blender as a Python module, Python 3.11 only; a
large download, so kept out of the project's dependencies):
``pip install bpy==4.2.0`` in a separate virtual environment.  ``--game``
also needs the engine importable there (``PYTHONPATH=../engine``): without
it the positions would be ``scenegen.positions``' stand-in, whose moves
break the rules, so it refuses.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np

from . import art
from .__main__ import _size
from .files import write_scene
from .geometry import TILE_KEYS, Camera, Layout, kelvin_to_linear_bgr, make_camera, make_layout
from .params import SceneParams
from .positions import ENGINE_NEEDED, TileArt, engine_available, parse_position
from .render import (
    Scene,
    _camera_gain,
    _develop,
    _Dome,
    _lamps,
    _pieces,
    _Pyramid,
    _spares,
    _truth,
    canvas_for,
    table_art,
)
from .hard_cases import EMPTY_BOARD_NOISE_SEED
from .sampling import made_up_art, random_inputs

MM = 0.001  # Blender works in metres
TILE_TEXTURE_PX = 1024  # per tile side: finer than any frame samples it
PIECE_BEVEL_MM = 0.6  # moulded plastic has rounded edges, which catch the light
TOWER_GLASS_IOR = 1.49  # acrylic
WALL_MM = 1.5  # Looney pyramids are hollow shells, open at the base (they nest and stack)


def scene_inputs(seed: int, size: tuple[int, int], overrides: dict[str, Any],
                 position: dict[str, Any] | None = None) -> tuple[dict[str, Any], SceneParams]:
    """The position and parameters random_scene(seed) draws, less what only that renderer draws.

    With ``position`` given, that position under the parameters
    random_scene(seed, position=position) draws: a fixed table for a series.
    """
    position, params = random_inputs(seed, size, position, overrides)
    return position, params.replace(hand=None, mat=None)


# ----------------------------------------------------------------------------- Blender scene


def _rgb(linear_bgr: np.ndarray) -> tuple[float, float, float, float]:
    b, g, r = (float(v) for v in linear_bgr)
    return (r, g, b, 1.0)


def _material(bpy: Any, name: str, colour: np.ndarray, roughness: float, *, glass: bool = False,
              coat: float = 0.0, image: Path | None = None) -> Any:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    bsdf = nodes["Principled BSDF"]
    # tinted acrylic: each wall passes its own hue (Principled tints light crossing a surface), and light
    # through a tower crosses two walls, four surfaces
    bsdf.inputs["Base Color"].default_value = _rgb(np.sqrt(colour) if glass else colour)
    bsdf.inputs["Roughness"].default_value = roughness
    if glass:
        bsdf.inputs["Transmission Weight"].default_value = 1.0
        bsdf.inputs["IOR"].default_value = TOWER_GLASS_IOR
    if coat:
        bsdf.inputs["Coat Weight"].default_value = coat
    if image is not None:
        texture = nodes.new("ShaderNodeTexImage")
        texture.image = bpy.data.images.load(str(image))
        texture.interpolation = "Cubic"
        mat.node_tree.links.new(texture.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def _mesh(bpy: Any, name: str, verts: np.ndarray, faces: list[tuple[int, ...]], materials: list[Any],
          face_materials: list[int] | None = None, smooth: bool = False) -> Any:
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(float(c) * MM for c in v) for v in verts], [], faces)
    for mat in materials:
        mesh.materials.append(mat)
    if face_materials is not None:
        for polygon, index in zip(mesh.polygons, face_materials):
            polygon.material_index = index
    if smooth:
        for polygon in mesh.polygons:
            polygon.use_smooth = True
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _bevel(obj: Any, width_mm: float) -> None:
    modifier = obj.modifiers.new("bevel", "BEVEL")
    modifier.width = width_mm * MM
    modifier.segments = 3
    modifier.limit_method = "ANGLE"


def _table(bpy: Any, params: SceneParams, camera: Camera, canvas: Any, art_rng: np.random.Generator,
           folder: Path) -> None:
    texture, tex_to_plane = table_art(params, camera, canvas, art_rng)
    path = folder / "table.png"
    cv2.imwrite(str(path), texture)
    h, w = texture.shape[:2]
    corners_px = np.array([[-0.5, h - 0.5, 1], [w - 0.5, h - 0.5, 1], [w - 0.5, -0.5, 1], [-0.5, -0.5, 1]])
    corners_mm = (tex_to_plane @ corners_px.T).T[:, :2]
    roughness = {"wood": 0.55, "cloth": 0.95, "plain": 0.7, "check": 0.95, "print": 0.8}[params.table]
    mat = _material(bpy, "table", np.zeros(3), roughness, image=path)
    obj = _mesh(bpy, "table", np.column_stack([corners_mm, np.zeros(4)]), [(0, 1, 2, 3)], [mat])
    _uv(obj, [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)])


def _uv(obj: Any, per_vertex: list[tuple[float, float]]) -> None:
    layer = obj.data.uv_layers.new()
    for loop in obj.data.loops:
        if loop.vertex_index < len(per_vertex):
            layer.data[loop.index].uv = per_vertex[loop.vertex_index]


def _tiles(bpy: Any, tiles: dict[str, TileArt], params: SceneParams, layout: Layout, art_rng: np.random.Generator,
           folder: Path) -> None:
    """Each tile a card box: its print on top (texture), the cut card on the sides."""
    palette = art.guild_palette(art_rng, params.palette_jitter)
    style = art.style_of(params.layout_seed) if params.edition == "R" else None
    roughness = float(np.clip(0.75 - 2.2 * params.tile_gloss, 0.2, 0.8))
    for key in TILE_KEYS:
        tile = tiles[key]
        texture = art.tile_texture(params.edition, tile.color, tile.icon_lot, key, TILE_TEXTURE_PX, palette,
                                   art_rng, style)
        path = folder / f"tile_{key}.png"
        cv2.imwrite(str(path), texture)
        edge = art.to_linear(np.array([[art.tile_edge_bgr(params.edition, tile.color, palette)]], np.uint8))[0, 0]
        top = _material(bpy, f"print_{key}", np.zeros(3), roughness, image=path)
        side = _material(bpy, f"edge_{key}", edge, 0.8)
        corners = layout.tiles[key].corners()  # lower-left, lower-right, upper-right, upper-left
        verts = np.vstack([np.column_stack([corners, np.zeros(4)]),
                           np.column_stack([corners, np.full(4, layout.thickness)])])
        faces = [(4, 5, 6, 7), (3, 2, 1, 0), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
        obj = _mesh(bpy, f"tile_{key}", verts, faces, [top, side], [0, 1, 1, 1, 1, 1])
        _uv(obj, [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] * 2)


def _pyramid(bpy: Any, name: str, shape: _Pyramid) -> None:
    mat = shape.material
    glass = mat.translucent
    material = _material(bpy, name, mat.albedo, 0.08 if glass else 0.3, glass=glass, coat=0.0 if glass else 0.3)
    verts = np.vstack([shape.base, shape.apex[None, :]])
    faces = [(0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)]
    obj = _mesh(bpy, name, verts, faces, [material])
    _bevel(obj, PIECE_BEVEL_MM)
    shell = obj.modifiers.new("shell", "SOLIDIFY")
    shell.thickness = WALL_MM * MM
    shell.offset = -1.0  # inwards: the outside stays where the truth says


def _dome(bpy: Any, name: str, shape: _Dome, segments: int = 48, rings: int = 16) -> None:
    """A glass half bead (a hemisphere), or a coin (a short cylinder with a rounded rim)."""
    bead = shape.height == 0
    material = _material(bpy, name, shape.material.albedo, 0.06 if bead else 0.4, coat=0.8 if bead else 0.1)
    a = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    if bead:
        levels = [(shape.radius * math.cos(t), shape.radius * math.sin(t))
                  for t in np.linspace(0, math.pi / 2, rings, endpoint=False)]
    else:
        levels = [(shape.radius, 0.0), (shape.radius, shape.height)]
    verts = [np.column_stack([shape.centre[0] + r * np.cos(a), shape.centre[1] + r * np.sin(a),
                              np.full(segments, shape.centre[2] + z)]) for r, z in levels]
    top = shape.height if not bead else shape.radius
    points = np.vstack([*verts, shape.centre[None, :] + [0, 0, top], shape.centre[None, :]])
    apex, bottom = len(points) - 2, len(points) - 1
    faces: list[tuple[int, ...]] = []
    for ring in range(len(levels) - 1):
        for k in range(segments):
            i, j = ring * segments + k, ring * segments + (k + 1) % segments
            faces.append((i, j, j + segments, i + segments))
    last = (len(levels) - 1) * segments
    faces += [(last + k, last + (k + 1) % segments, apex) for k in range(segments)]
    faces += [((k + 1) % segments, k, bottom) for k in range(segments)]
    obj = _mesh(bpy, name, points, faces, [material], smooth=bead)
    if not bead:
        _bevel(obj, 0.8)


def _lights(bpy: Any, params: SceneParams) -> None:
    """Lamps as sphere lights, room light as a uniform sky, scaled as the scene generator scales them.

    A lamp's intensity is its irradiance at the board centre straight below;
    a point light of power P gives P / (4 pi d^2) there, and a uniform sky of
    radiance L gives pi L on the table.
    """
    for k, light in enumerate(params.lights):
        data = bpy.data.lights.new(f"lamp{k}", "POINT")
        x, y, z = light.position_mm
        distance2 = (x * x + y * y + (z - params.tile_thickness_mm) ** 2) * MM * MM
        data.energy = 4 * math.pi * light.intensity * distance2
        data.shadow_soft_size = light.radius_mm * MM
        data.color = _rgb(kelvin_to_linear_bgr(light.kelvin))[:3]
        obj = bpy.data.objects.new(f"lamp{k}", data)
        obj.location = (x * MM, y * MM, z * MM)
        bpy.context.scene.collection.objects.link(obj)
    world = bpy.data.worlds.new("room")
    world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    sky = params.ambient * kelvin_to_linear_bgr(params.ambient_kelvin) / math.pi
    background.inputs["Color"].default_value = _rgb(sky)
    bpy.context.scene.world = world


def _camera(bpy: Any, camera: Camera, canvas: Any) -> None:
    """A pinhole with the canvas's focal length and principal point (Blender's lens shift)."""
    width, height = canvas.size
    fx, cx, cy = canvas.matrix[0, 0], canvas.matrix[0, 2], canvas.matrix[1, 2]
    data = bpy.data.cameras.new("camera")
    data.sensor_fit = "HORIZONTAL"
    data.sensor_width = 36.0
    data.lens = fx * 36.0 / width
    longer = max(width, height)
    data.shift_x = ((width - 1) / 2 - cx) / longer
    data.shift_y = (cy - (height - 1) / 2) / longer
    data.clip_start, data.clip_end = 0.01, 20.0
    obj = bpy.data.objects.new("camera", data)
    right, down, forward = camera.rotation
    rotation = np.column_stack([right, -down, -forward])  # Blender's camera looks down its -z, up is +y
    world = np.eye(4)
    world[:3, :3] = rotation
    world[:3, 3] = camera.centre * MM
    from mathutils import Matrix  # bpy's own maths module

    obj.matrix_world = Matrix(world.tolist())
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.scene.camera = obj


def _setup(bpy: Any, canvas: Any, samples: int) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = True
    scene.cycles.max_bounces = 12
    scene.cycles.transmission_bounces = 12
    scene.cycles.glossy_bounces = 4
    scene.cycles.diffuse_bounces = 3
    scene.cycles.caustics_reflective = False
    scene.cycles.blur_glossy = 0.5
    scene.render.resolution_x, scene.render.resolution_y = canvas.size
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.view_settings.view_transform = "Standard"


def _linear_render(bpy: Any, path: Path) -> np.ndarray:
    """The rendered linear RGBA file as linear BGR float32, top row first."""
    image = bpy.data.images.load(str(path))
    width, height = image.size
    pixels = np.empty(width * height * 4, np.float32)
    image.pixels.foreach_get(pixels)
    rgba = pixels.reshape(height, width, 4)[::-1]
    return np.ascontiguousarray(rgba[..., 2::-1])


def render_cycles(seed: int, size: tuple[int, int] = (1640, 1232), samples: int = 48,
                  overrides: dict[str, Any] | None = None, position: dict[str, Any] | None = None) -> Scene:
    """Render seed's scene (or ``position`` on seed's table) with Cycles and develop it as the camera would."""
    position, params = scene_inputs(seed, size, dict(overrides or {}), position)
    return render_table(position, params, seed, samples)


def render_empty_twin(seed: int, size: tuple[int, int] = (1640, 1232), samples: int = 48,
                      overrides: dict[str, Any] | None = None) -> tuple[Scene, Scene]:
    """Seed's scene and the same table with no pieces (other sensor noise): a frame with its setup reference."""
    position, params = scene_inputs(seed, size, dict(overrides or {}))
    empty = render_table(dict(position, structures={}), params, seed, samples, seed + EMPTY_BOARD_NOISE_SEED)
    return render_table(position, params, seed, samples), empty


def render_table(position: dict[str, Any], params: SceneParams, seed: int, samples: int,
                 noise_seed: int | None = None) -> Scene:
    """``position`` on the table ``params`` describe, through Cycles and the camera's development
    (sensor noise drawn from ``noise_seed``, by default ``seed``)."""
    import bpy  # Blender as a module: only this renderer needs it

    layout = make_layout(params)
    camera = make_camera(params)
    canvas = canvas_for(camera)
    art_rng = np.random.default_rng([params.layout_seed, 202])  # the draws of render_scene, in its order
    tiles, structures = parse_position(position)
    with tempfile.TemporaryDirectory(prefix="boardcam-cycles-") as tmp:
        folder = Path(tmp)
        _setup(bpy, canvas, samples)
        _table(bpy, params, camera, canvas, art_rng, folder)
        _tiles(bpy, tiles, params, layout, art_rng, folder)
        groups = [*_pieces(structures, layout, params).values(), *_spares(params, layout)]
        for g, group in enumerate(groups):
            for s, shape in enumerate(group):
                if isinstance(shape, _Pyramid):
                    _pyramid(bpy, f"piece{g}_{s}", shape)
                else:
                    _dome(bpy, f"piece{g}_{s}", shape)
        _lights(bpy, params)
        _camera(bpy, camera, canvas)
        out = folder / "render.exr"
        bpy.context.scene.render.filepath = str(out)
        bpy.ops.render.render(write_still=True)
        linear = _linear_render(bpy, out)
    # the path tracer's radiance is albedo x irradiance / pi; the scene generator's shading leaves out the pi
    lamps = _lamps(params)
    gain = _camera_gain(params, lamps) * np.float32(math.pi)
    image = _develop(SimpleNamespace(image=linear * gain), camera, canvas, params, lamps,
                     seed if noise_seed is None else noise_seed)
    truth = _truth(position, params, seed, camera, layout, [])
    truth["renderer"] = "cycles"
    return Scene(image, truth)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenegen.cycles", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder for the images and their .json truth")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="first seed; frame i uses seed+i")
    parser.add_argument("--size", type=_size, default=(1640, 1232), help="WIDTHxHEIGHT (default 1640x1232)")
    parser.add_argument("--samples", type=int, default=48, help="path-tracing samples per pixel (default 48)")
    parser.add_argument("--edition", choices=("A", "B", "C", "D", "R"), default=None,
                        help="every scene in this tile art (R: made-up art per scene)")
    parser.add_argument("--game", type=int, default=None, metavar="G",
                        help="photograph the engine's random game G after every move instead (seed S's table)")
    parser.add_argument("--plies", type=int, default=None, metavar="N", help="with --game: up to ply N (default all)")
    parser.add_argument("--empty-twins", action="store_true",
                        help="each seed's table also with no pieces (<name>_empty beside <name>_full): frames with "
                             "their setup reference, as benchmarks/train_lot_net.py prepare-pairs reads them")
    parser.add_argument("--resume", action="store_true",
                        help="with --game: keep the plies already in OUT_DIR (image and truth), render the rest")
    args = parser.parse_args(argv)
    if args.plies is not None and (args.game is None or args.plies < 0):
        print("scenegen.cycles: error: --plies needs --game and a ply count of 0 or more", file=sys.stderr)
        return 2
    if args.empty_twins and args.game is not None:
        print("scenegen.cycles: error: --empty-twins renders --count seeds, not a --game", file=sys.stderr)
        return 2
    if args.resume and args.game is None:
        print("scenegen.cycles: error: --resume needs --game", file=sys.stderr)
        return 2
    if args.game is not None and not engine_available():
        print(f"scenegen.cycles: error: --game {ENGINE_NEEDED} to referee", file=sys.stderr)
        return 2
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("scenegen.cycles: error: needs the bpy package (pip install bpy==4.2.0, Python 3.11)",
              file=sys.stderr)
        return 2
    if args.game is not None:
        return _render_game(args)
    if args.empty_twins:
        return _render_twins(args)
    for seed in range(args.seed, args.seed + args.count):
        start = time.perf_counter()
        scene = render_cycles(seed, args.size, args.samples, _look(args.edition, seed))
        write_scene(scene, args.out_dir, f"cycles_{seed:05d}")
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return 0


def _render_twins(args: argparse.Namespace) -> int:
    """Each seed's scene and its empty twin; a pair already written is kept."""
    out = Path(args.out_dir)
    for seed in range(args.seed, args.seed + args.count):
        if _written(out, f"cycles_{seed:05d}_empty", "png"):
            continue
        start = time.perf_counter()
        full, empty = render_empty_twin(seed, args.size, args.samples, _look(args.edition, seed))
        write_scene(full, out, f"cycles_{seed:05d}_full")
        write_scene(empty, out, f"cycles_{seed:05d}_empty")
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return 0


def _look(edition: str | None, seed: int) -> dict[str, Any]:
    return {} if edition is None else made_up_art(seed) if edition == "R" else {"edition": edition}


def _render_game(args: argparse.Namespace) -> int:
    """One photo of the empty board and one after every move, the camera, lamps and art of ``--seed``."""
    from .positions import game_positions

    positions = game_positions(args.game)
    plies = len(positions) - 1 if args.plies is None else min(args.plies, len(positions) - 1)
    for ply, position in enumerate(positions[: plies + 1]):
        name = f"game{args.game}_ply{ply:03d}"
        if args.resume and _written(Path(args.out_dir), name):
            continue
        start = time.perf_counter()
        scene = render_cycles(args.seed, args.size, args.samples, _look(args.edition, args.seed), position)
        write_scene(scene, args.out_dir, name, image_format="jpg")
        print(f"ply {ply}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return 0


def _written(folder: Path, name: str, image_format: str = "jpg") -> bool:
    """A ply counts as rendered once its whole truth is there: write_scene writes the image first."""
    try:
        truth = json.loads((folder / f"{name}.json").read_text())
    except (OSError, ValueError):
        return False
    image = f"{name}.{image_format}"
    return isinstance(truth, dict) and truth.get("image") == image and (folder / image).is_file()


if __name__ == "__main__":
    sys.exit(main())
