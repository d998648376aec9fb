"""Writing scenes to disk: the image and its truth JSON side by side."""

from __future__ import annotations

import json
from pathlib import Path

import cv2

from .render import Scene


def write_scene(scene: Scene, out_dir: str | Path, stem: str, *, image_format: str = "png",
                jpeg_quality: int = 92) -> Path:
    """Write `stem.png|jpg` and `stem.json` into out_dir; returns the image path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if image_format not in ("png", "jpg"):
        raise ValueError(f"image_format: {image_format!r} is not 'png' or 'jpg'")
    image_path = out / f"{stem}.{image_format}"
    params = [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality] if image_format == "jpg" else []
    if not cv2.imwrite(str(image_path), scene.image, params):
        raise OSError(f"cannot write {image_path}")
    truth = dict(scene.truth)
    truth["image"] = image_path.name
    (out / f"{stem}.json").write_text(json.dumps(truth, indent=1) + "\n")
    return image_path
