import numpy as np

from boardcam.firmware.motion import MotionDetector


def frames(level, count, shape=(30, 40)):
    return [np.full(shape, level, dtype=np.uint8) for _ in range(count)]


def test_still_after_n_quiet_frames_and_moving_on_a_hand():
    detector = MotionDetector(still_frames=3)
    states = [detector.update(f) for f in frames(100, 5)]
    assert [s.settled for s in states] == [False, False, False, True, True]
    hand = np.full((30, 40), 100, dtype=np.uint8)
    hand[5:20, 10:25] = 200
    state = detector.update(hand)
    assert state.moving and not state.settled and state.changed_fraction > 0.1


def test_sensor_noise_is_not_motion():
    rng = np.random.default_rng(0)
    detector = MotionDetector(still_frames=2)
    for _ in range(6):
        noisy = np.clip(100 + rng.normal(0, 3, (30, 40)), 0, 255).astype(np.uint8)
        state = detector.update(noisy)
    assert state.settled


def test_a_hand_held_still_differs_from_the_settled_background():
    detector = MotionDetector(still_frames=2)
    for f in frames(100, 4):
        detector.update(f)
    covered = np.full((30, 40), 100, dtype=np.uint8)
    covered[:, :20] = 30
    for _ in range(3):
        state = detector.update(covered)
    assert state.settled and state.background_fraction > 0.4


def test_a_new_frame_size_starts_over():
    detector = MotionDetector(still_frames=1)
    detector.update(frames(50, 1)[0])
    assert detector.update(frames(50, 1)[0]).settled
    assert not detector.update(frames(50, 1, shape=(20, 20))[0]).settled


LORES = (120, 160)  # the app's small frame


def _with_piece(level=100):
    frame = np.full(LORES, level, dtype=np.uint8)
    frame[10:13, 10:13] = level + 40  # nine pixels of 19 200: a piece, well under the motion fraction
    return frame


def test_a_change_too_small_for_motion_shows_as_changed_since_the_last_read_once_quiet():
    detector = MotionDetector(still_frames=2)
    for f in frames(100, 3, shape=LORES):
        detector.update(f)
    detector.note_read()
    states = [detector.update(_with_piece()) for _ in range(4)]
    assert not any(s.moving for s in states)
    # the frame of the change itself is not quiet yet; two quiet frames later it counts
    assert [s.changed_since_read for s in states] == [False, False, True, True]
    detector.note_read()
    assert not detector.update(_with_piece()).changed_since_read


def test_nothing_changed_since_the_read_or_no_read_yet_is_no_change():
    detector = MotionDetector(still_frames=1)
    states = [detector.update(f) for f in frames(100, 3)]
    assert not any(s.changed_since_read for s in states)  # never read: the loop reads anyway
    detector.note_read()
    rng = np.random.default_rng(1)
    for _ in range(4):
        noisy = np.clip(100 + rng.normal(0, 3, (30, 40)), 0, 255).astype(np.uint8)
        assert not detector.update(noisy).changed_since_read
