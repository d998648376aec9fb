"""python -m scenegen OUT_DIR --count N --seed S [--size WxH] [--jpg] [--series] [--table KIND [--table-bgr B,G,R]] [--edition E]

Writes rendered frames with their truth JSON beside each image.
"""

from __future__ import annotations

import argparse
import sys
import time

from .files import write_scene
from .params import EDITIONS, TABLES
from .positions import ENGINE_NEEDED, engine_available, game_positions
from .sampling import random_scene
from .series import scene_series


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size: {text!r} is not WIDTHxHEIGHT, e.g. 1640x1232") from None
    if w < 64 or h < 48:
        raise argparse.ArgumentTypeError(f"size: {text!r} is too small")
    return w, h


def _bgr(text: str) -> tuple[int, int, int]:
    try:
        b, g, r = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"table colour: {text!r} is not B,G,R, e.g. 40,40,170") from None
    if not all(0 <= v <= 255 for v in (b, g, r)):
        raise argparse.ArgumentTypeError(f"table colour: {text!r} has a value outside 0-255")
    return b, g, r


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scenegen", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory for the images and their .json truth")
    parser.add_argument("--count", type=int, default=10, help="number of frames (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="first seed; frame i uses seed+i (default 0)")
    parser.add_argument("--size", type=_size, default=(1640, 1232), help="WIDTHxHEIGHT (default 1640x1232)")
    parser.add_argument("--jpg", action="store_true", help="write JPEG instead of PNG")
    parser.add_argument("--series", action="store_true",
                        help="frames of one game being played (same camera, hands between moves)")
    parser.add_argument("--table", choices=TABLES,
                        help="every frame on this table (default: drawn per scene; random scenes never draw "
                             "the patterned check and print)")
    parser.add_argument("--table-bgr", type=_bgr, help="the table's colour, B,G,R (the ink of a check)")
    parser.add_argument("--edition", choices=EDITIONS,
                        help="every frame's tiles printed in this edition (R: art made up per table; default: "
                             "drawn per scene)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.count < 1:
        print("scenegen: error: --count must be at least 1", file=sys.stderr)
        return 2
    if args.series and not engine_available():
        print(f"scenegen: error: --series {ENGINE_NEEDED}", file=sys.stderr)
        return 2
    fmt = "jpg" if args.jpg else "png"
    overrides = {key: value for key, value in (("table", args.table), ("table_bgr", args.table_bgr),
                                               ("edition", args.edition)) if value is not None}
    start = time.perf_counter()
    try:
        if args.series:
            frames = scene_series(args.seed, game_positions(args.seed), frames_per_position=1, size=args.size,
                                  **overrides)
            for i, scene in zip(range(args.count), frames):
                write_scene(scene, args.out_dir, f"series_{args.seed:05d}_{i:04d}", image_format=fmt)
        else:
            for i in range(args.count):
                seed = args.seed + i
                write_scene(random_scene(seed, size=args.size, **overrides), args.out_dir, f"scene_{seed:05d}",
                            image_format=fmt)
    except OSError as err:
        print(f"scenegen: error: {err}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    print(f"wrote {args.count} frame(s) to {args.out_dir} in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
