"""A stand-in for the ``picamera2`` module, faithful where boardcam depends on it.

What it reproduces (from picamera2's own array helpers):
* ``RGB888`` arrays hold B, G, R in memory; ``BGR888`` hold R, G, B.
* ``YUV420`` arrays are ``(height * 3 // 2, stride)`` with the Y plane on top
  and padding on the right (filled with a loud value here, so a source that
  forgets to crop it is caught).
* ``capture_arrays(names, wait=False)`` returns a job; ``wait(job, timeout)``
  returns ``(arrays, metadata)`` or raises ``TimeoutError`` when stalled.
* ``set_controls`` rejects controls the camera does not advertise.
* each frame's request metadata can carry what auto exposure, white balance
  and focus chose (``FakeWorld.metadata``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

IMX219_CONTROLS = {
    "AeEnable": (False, True, True),
    "ExposureTime": (75, 11766829, None),
    "AnalogueGain": (1.0, 10.66, None),
    "AwbEnable": (False, True, None),
    "ColourGains": (0.0, 32.0, None),
    "FrameRate": (0.1, 200.0, None),
}
# Camera Module 3 on libcamera >= 0.5: autofocus, and AeEnable replaced by *Mode controls.
IMX708_NEW_LIBCAMERA_CONTROLS = {
    "ExposureTimeMode": (0, 1, 0),
    "AnalogueGainMode": (0, 1, 0),
    "ExposureTime": (26, 220417486, None),
    "AnalogueGain": (1.12, 16.0, None),
    "AwbEnable": (False, True, None),
    "ColourGains": (0.0, 32.0, None),
    "AfMode": (0, 2, 0),
    "LensPosition": (0.0, 15.0, 1.0),
    "FrameRate": (0.1, 200.0, None),
}

LORES_PADDING = 251  # what sits right of the Y plane in the fake's YUV buffer


@dataclass
class CameraPlan:
    """How one opened camera behaves: frames before it stalls (None = never), or fail to open."""

    frames: int | None = None
    fail_open: Exception | None = None
    fail_capture: Exception | None = None  # raised instead of a frame once `frames` are out
    controls: dict[str, Any] = field(default_factory=lambda: dict(IMX219_CONTROLS))


class FakeJob:
    def __init__(self, names: list[str]) -> None:
        self.names = names


class FakeCamera:
    def __init__(self, world: "FakeWorld", camera_num: int, plan: CameraPlan) -> None:
        self.world = world
        self.camera_num = camera_num
        self.plan = plan
        self.camera_controls = plan.controls
        self.camera_config: dict[str, Any] | None = None
        self.applied: dict[str, Any] = {}
        self.started = False
        self.closed = False
        self.delivered = 0

    def create_video_configuration(self, main=None, lores=None, controls=None, **kwargs):
        main = dict(main or {})
        main.setdefault("format", "XBGR8888")
        main.setdefault("size", (1280, 720))
        config = {"use_case": "video", "main": main, "lores": dict(lores) if lores else None,
                  "controls": dict(controls or {})}
        return config

    def configure(self, config: dict[str, Any]) -> None:
        config = {k: (dict(v) if isinstance(v, dict) else v) for k, v in config.items()}
        forced = self.world.force_main_format
        if forced:
            config["main"]["format"] = forced
        for name in ("main", "lores"):
            stream = config.get(name)
            if stream:
                width = stream["size"][0]
                bytes_per_pixel = {"RGB888": 3, "BGR888": 3, "XRGB8888": 4, "XBGR8888": 4}.get(
                    stream["format"], 1)
                stream["stride"] = -(-width * bytes_per_pixel // 64) * 64
        self.camera_config = config

    def start(self) -> None:
        assert self.camera_config is not None, "configure before start"
        self.started = True

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.started = False
        self.closed = True

    def set_controls(self, controls: dict[str, Any]) -> None:
        for name in controls:
            if name not in self.camera_controls:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")
        self.applied.update(controls)

    def capture_arrays(self, names=("main",), wait=None, signal_function=None):
        assert wait is False, "boardcam must capture asynchronously to get a timeout"
        assert self.started, "capture from a camera that is not running"
        return FakeJob(list(names))

    def wait(self, job: FakeJob, timeout: float | None = None):
        assert timeout is not None, "an unbounded wait would hang the referee"
        if self.plan.frames is not None and self.delivered >= self.plan.frames:
            if self.plan.fail_capture is not None:
                raise self.plan.fail_capture
            self.world.timeouts += 1
            raise TimeoutError()
        self.delivered += 1
        assert self.camera_config is not None
        arrays = [self.world.render(self.camera_config[name]) for name in job.names]
        metadata = self.world.metadata(self.delivered) if self.world.metadata else {}
        return arrays, {"SensorTimestamp": self.delivered, **metadata}


class FakeWorld:
    """The scene in front of the camera and the script of what each opened camera does."""

    def __init__(self, plans: list[CameraPlan] | None = None, cameras: int = 1,
                 rgb: tuple[int, int, int] = (200, 40, 10), luma: int = 90) -> None:
        self.plans = list(plans or [])
        self.cameras = cameras
        self.rgb = rgb
        self.luma = luma
        self.opened: list[FakeCamera] = []
        self.timeouts = 0
        self.force_main_format: str | None = None
        self.scene: np.ndarray | None = None  # HxWx3 true R, G, B; None = flat self.rgb
        # frame number (1, 2, ...) -> what libcamera reports with that frame
        # (ExposureTime, AnalogueGain, ColourGains, LensPosition); None = timestamps only.
        self.metadata: Any = None

    def render(self, stream: dict[str, Any]) -> np.ndarray:
        if self.scene is not None:
            return self._render_scene(stream)
        width, height = stream["size"]
        fmt = stream["format"]
        r, g, b = self.rgb
        memory_order = {"RGB888": (b, g, r), "BGR888": (r, g, b),
                        "XRGB8888": (b, g, r, 255), "XBGR8888": (r, g, b, 255)}
        if fmt in memory_order:
            pixel = memory_order[fmt]
            return np.tile(np.array(pixel, dtype=np.uint8), (height, width, 1))
        if fmt in ("YUV420", "YVU420"):
            array = np.full((height * 3 // 2, stream["stride"]), LORES_PADDING, dtype=np.uint8)
            array[:height, :width] = self.luma
            array[height:, : width // 2] = 128
            return array
        raise AssertionError(f"fake cannot render {fmt}")

    def _render_scene(self, stream: dict[str, Any]) -> np.ndarray:
        """A textured scene: main in the format's byte order, lores as limited-range BT.709 Y."""
        import cv2

        width, height = stream["size"]
        rgb = cv2.resize(self.scene, (width, height), interpolation=cv2.INTER_AREA)
        fmt = stream["format"]
        if fmt == "RGB888":
            return np.ascontiguousarray(rgb[..., ::-1])
        if fmt == "BGR888":
            return rgb
        if fmt in ("YUV420", "YVU420"):
            r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
            y = 16 + 219 / 255 * (0.2126 * r + 0.7152 * g + 0.0722 * b)
            array = np.full((height * 3 // 2, stream["stride"]), LORES_PADDING, dtype=np.uint8)
            array[:height, :width] = np.clip(np.round(y), 0, 255).astype(np.uint8)
            array[height:, : width // 2] = 128
            return array
        raise AssertionError(f"fake scene cannot render {fmt}")

    def make_camera(self, camera_num: int = 0) -> FakeCamera:
        plan = self.plans.pop(0) if self.plans else CameraPlan()
        if plan.fail_open is not None:
            raise plan.fail_open
        camera = FakeCamera(self, camera_num, plan)
        self.opened.append(camera)
        return camera

    def camera_info(self) -> list[dict[str, Any]]:
        return [{"Model": "imx219", "Location": 2, "Rotation": 0, "Id": f"/base/imx219@{i}",
                 "Num": i} for i in range(self.cameras)]

    def module(self) -> types.ModuleType:
        """A module object to put in ``sys.modules['picamera2']``."""
        world = self

        class Picamera2:
            def __new__(cls, camera_num: int = 0, tuning=None):  # noqa: D102
                return world.make_camera(camera_num)

            @staticmethod
            def global_camera_info() -> list[dict[str, Any]]:
                return world.camera_info()

        module = types.ModuleType("picamera2")
        module.Picamera2 = Picamera2  # type: ignore[attr-defined]
        return module
