import cv2
import numpy as np
import pytest

from boardcam.firmware.sources import SourceError, SourceStalledError, open_source
from boardcam.firmware.sources.base import Frame, FrameSource
from boardcam.firmware.sources.opencv import OpenCVSource
from boardcam.firmware.sources.replay import ReplaySource


def _images(count):
    return [np.full((40, 60, 3), 10 * i, dtype=np.uint8) for i in range(count)]


def test_replay_of_a_folder_gives_frames_in_name_order_then_stops(tmp_path):
    for i, image in enumerate(_images(3)):
        cv2.imwrite(str(tmp_path / f"frame-{i:02d}.png"), image)
    source = open_source(f"replay:{tmp_path}", fps=10, lores_width=30)
    assert isinstance(source, FrameSource)
    with source:
        frames = [source.read(), source.read(), source.read()]
        with pytest.raises(StopIteration):
            source.read()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 10, 20]
    assert [f.timestamp for f in frames] == pytest.approx([0.0, 0.1, 0.2])
    assert frames[1].lores is None  # the loop downsizes replayed frames itself


def test_a_replay_can_make_the_small_frame_too():
    source = ReplaySource(lambda: iter(_images(1)), lores_width=30, make_lores=True)
    source.open()
    lores = source.read().lores
    assert lores.shape == (20, 30) and lores.dtype == np.uint8


def test_replay_of_a_video_file(tmp_path):
    path = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (64, 48))
    for image in _images(5):
        writer.write(cv2.resize(image, (64, 48)))
    writer.release()
    with open_source(f"replay:{path}") as source:
        count = 0
        while True:
            try:
                frame = source.read()
            except StopIteration:
                break
            assert frame.image.shape == (48, 64, 3)
            count += 1
    assert count == 5


def test_a_replay_can_be_reopened_from_the_start():
    source = ReplaySource(lambda: iter(_images(2)), fps=30)
    source.open()
    assert source.read().index == 0 and source.read().index == 1
    source.close()
    source.open()
    assert int(source.read().image[0, 0, 0]) == 0


@pytest.mark.parametrize("spec", ["replay:/no/such/place", "webcam", "opencv:x", "replay:"])
def test_bad_source_specs_are_named(spec):
    with pytest.raises(SourceError) as caught:
        open_source(spec)
    assert "\n" not in str(caught.value)


def test_auto_without_any_camera_says_so(monkeypatch):
    import boardcam.firmware.sources as sources
    import boardcam.firmware.sources.opencv as opencv

    monkeypatch.setattr(sources, "picamera_available", lambda: False)
    monkeypatch.setattr(opencv, "webcam_available", lambda index=0: False)
    with pytest.raises(SourceError, match="no camera found.*boardcam demo"):
        open_source("auto")


class FakeCapture:
    def __init__(self, index, frames, opened=True):
        self.frames = list(frames)
        self.opened = opened
        self.released = False

    def isOpened(self):
        return self.opened

    def set(self, *args):
        return True

    def read(self):
        if self.frames:
            return True, self.frames.pop(0)
        return False, None

    def release(self):
        self.released = True


def test_opencv_source_reads_frames_and_reports_a_stall():
    capture = FakeCapture(0, _images(1))
    source = OpenCVSource(0, capture_factory=lambda index: capture)
    with source:
        frame = source.read()
        assert isinstance(frame, Frame) and frame.lores is not None
        with pytest.raises(SourceStalledError, match="opencv:0"):
            source.read(timeout=0.05)
    assert capture.released


def test_opencv_source_that_cannot_open_names_the_device():
    source = OpenCVSource(3, capture_factory=lambda index: FakeCapture(index, [], opened=False))
    with pytest.raises(SourceError, match="/dev/video3"):
        source.open()


def test_replay_of_a_generated_game_and_of_a_game_record(tmp_path):
    pytest.importorskip("scenegen")
    import json

    from boardcam.engine.aliencity import GameRecord, random_game
    import random

    source = open_source("replay:game:3", size=(200, 150), hold_frames=2)
    with source:
        frames = [source.read() for _ in range(3)]
    assert frames[0].image.shape == (150, 200, 3)
    assert np.array_equal(frames[0].image, frames[1].image)  # a still picture is held
    game = random_game(random.Random(3))
    path = tmp_path / "game.json"
    path.write_text(json.dumps(GameRecord(dict(game.position.tiles), game.moves[:2]).to_json()))
    seen = []
    with open_source(f"replay:{path}", size=(200, 150), hold_frames=1, hands=False) as source:
        while True:
            try:
                seen.append(source.read())
            except StopIteration:
                break
    assert len(seen) == 3  # the empty board and two moves, one picture each
    with pytest.raises(SourceError, match="game:SEED"):
        open_source("replay:game:x")


def test_a_held_replay_shows_each_picture_that_long_and_marks_the_change(tmp_path):
    for i, image in enumerate(_images(2)):
        cv2.imwrite(str(tmp_path / f"photo-{i}.png"), image)
    with open_source(f"replay:{tmp_path}", hold_frames=3) as source:
        frames = [source.read() for _ in range(6)]
        with pytest.raises(StopIteration):
            source.read()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 0, 0, 10, 10, 10]
    assert [f.cut for f in frames] == [True, False, False, True, False, False]
    assert [f.index for f in frames] == list(range(6))


def test_an_unheld_replay_marks_no_change():
    source = ReplaySource(lambda: iter(_images(2)))
    source.open()
    assert not source.read().cut and not source.read().cut


def test_a_picture_cannot_be_held_for_no_frames():
    with pytest.raises(SourceError, match="at least one frame"):
        ReplaySource(lambda: iter(_images(1)), hold_frames=0)
