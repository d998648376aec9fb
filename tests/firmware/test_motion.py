import numpy as np

from boardcam.firmware.motion import MIN_THRESHOLD, MotionDetector


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


def _settled(detector, level=60, shape=LORES, rng=None, count=6):
    for _ in range(count):
        frame = np.full(shape, level, dtype=np.int16)
        if rng is not None:
            frame = frame + rng.normal(0, 0.6, shape)
        detector.update(np.clip(frame, 0, 255).astype(np.uint8))


def test_a_dark_hand_over_a_dark_board_is_motion_though_no_pixel_changes_by_20_levels():
    # made-up-art game 2002: a dark hand over black tiles and a brown cloth changed 29 of
    # 19 200 pixels by more than 20 grey levels, and 451 by more than 10
    rng = np.random.default_rng(2)
    detector = MotionDetector(still_frames=2)
    _settled(detector, rng=rng)
    hand = np.full(LORES, 60, dtype=np.uint8)
    hand[90:120, 60:100] = 72  # 12 levels darker skin on dark print: 1 200 pixels
    assert detector.update(hand).moving


def test_a_black_coin_on_a_black_tile_shows_as_changed_since_the_last_read():
    detector = MotionDetector(still_frames=2)
    _settled(detector)
    detector.note_read()
    coin = np.full(LORES, 60, dtype=np.uint8)
    coin[50:53, 70:73] = 48  # nine pixels, 12 levels darker
    states = [detector.update(coin) for _ in range(4)]
    assert not any(s.moving for s in states)
    assert states[-1].changed_since_read


def test_the_whole_frame_brightening_at_once_is_not_motion():
    # a lamp switched up, or the camera's exposure stepping: nothing moved on the board
    detector = MotionDetector(still_frames=2)
    _settled(detector, level=100)
    detector.note_read()
    states = [detector.update(np.full(LORES, 130, dtype=np.uint8)) for _ in range(3)]
    assert not any(s.moving for s in states)
    assert not any(s.changed_since_read for s in states)


def test_a_noisy_camera_raises_the_threshold_and_a_clear_hand_still_counts():
    rng = np.random.default_rng(3)
    detector = MotionDetector(still_frames=2)
    states = []
    for _ in range(8):  # about 3 levels of noise in the small frame: 8 levels would be moving on noise alone
        states.append(detector.update(np.clip(100 + rng.normal(0, 3, LORES), 0, 255).astype(np.uint8)))
    assert states[-1].settled and detector.threshold > 15
    hand = np.clip(100 + rng.normal(0, 3, LORES), 0, 255).astype(np.uint8)
    hand[20:80, 20:100] = 160
    assert detector.update(hand).moving


def test_a_hand_over_part_of_the_picture_does_not_raise_the_threshold():
    detector = MotionDetector(still_frames=2)
    _settled(detector)
    for shift in range(6):  # a hand sweeping over a third of the picture for six frames
        hand = np.full(LORES, 60, dtype=np.uint8)
        hand[:, shift * 5 : shift * 5 + 55] = 75
        assert detector.update(hand).moving
    assert detector.threshold == MIN_THRESHOLD


def test_an_arm_over_most_of_the_picture_leaves_the_threshold_low_soon_after():
    detector = MotionDetector(still_frames=2)
    _settled(detector)
    for shift in range(4):  # an arm over four fifths of the picture, moving
        arm = np.full(LORES, 60, dtype=np.uint8)
        arm[:, shift * 4 : shift * 4 + 128] = 160 + shift * 10
        detector.update(arm)
    quiet = np.full(LORES, 60, dtype=np.uint8)
    for _ in range(12):
        detector.update(quiet)
    assert detector.threshold == MIN_THRESHOLD
