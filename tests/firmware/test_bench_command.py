"""`boardcam bench`: the harness table, its --count/--seed mapping, and the calibration benches run small."""

from __future__ import annotations

import inspect
import json

import pytest

from boardcam.engine.errors import InputError
from boardcam.firmware.cli import main
from boardcam.firmware.commands.bench import HARNESSES, harness_options, load_harness


def test_calibration_and_board_benches_are_registered() -> None:
    assert {"camera", "drift", "board", "teach"} <= set(HARNESSES)
    assert load_harness("camera").__name__ == "bench_camera"
    assert load_harness("drift").__name__ == "bench_drift"
    assert load_harness("board").__name__ == "bench_find_board"


@pytest.mark.parametrize("what", sorted(HARNESSES))
def test_every_harness_takes_the_options_the_table_promises(what: str) -> None:
    parameters = inspect.signature(load_harness(what)).parameters
    for name in (HARNESSES[what].count, HARNESSES[what].seed):
        if name is not None:
            assert name in parameters, f"{what}: {name}"


def test_count_and_seed_become_each_harness_own_names() -> None:
    assert harness_options("camera", 2, 5) == {"seeds": 2, "seed": 5}
    assert harness_options("drift", 3, None) == {"tables": 3}
    assert harness_options("teach", 2, None) == {"tables": 2}
    assert harness_options("board", 4, 1) == {"count": 4, "seed": 1}
    assert harness_options("engine", None, None) == {}
    with pytest.raises(InputError, match="--seed"):
        harness_options("teach", None, 3)
    with pytest.raises(InputError, match="--count"):
        harness_options("engine", 10, None)
    with pytest.raises(InputError, match="at least 1"):
        harness_options("drift", 0, None)


@pytest.mark.parametrize("option, good, bad, elsewhere, error", [
    ("--edition", "R", "Z", "engine", "--edition is an option of bench vision, vision-game, hard-cases, app and board only"),
    ("--towers", "clear", "glass", "board", "--towers is an option of bench vision, vision-game and app only"),
])
def test_a_choice_is_refused_by_the_benches_without_it_and_outside_its_choices(
        capsys: pytest.CaptureFixture[str], option: str, good: str, bad: str, elsewhere: str, error: str) -> None:
    assert main(["bench", elsewhere, option, good]) == 2
    assert error in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse names the choices
        main(["bench", "vision", option, bad])
    assert refused.value.code == 2


def test_clear_towers_is_an_option_of_the_vision_and_app_benches_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "board", "--clear-towers"]) == 2
    assert "--clear-towers is an option of bench vision, vision-game and app only" in capsys.readouterr().err


@pytest.mark.parametrize("argv, error", [
    (["bench", "app", "--exposure", "0.5"], "--exposure is an option of bench vision only"),
    (["bench", "vision", "--exposure", "0"], "--exposure must be above 0 and at most 4, got 0.0"),
    (["bench", "vision", "--exposure", "9"], "--exposure must be above 0 and at most 4, got 9.0"),
])
def test_exposure_is_a_positive_scale_for_the_vision_bench_only(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                                 error: str) -> None:
    assert main(argv) == 2
    assert error in capsys.readouterr().err


def _bench_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["bench", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_camera_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    figures = _bench_json(capsys, "camera", "--count", "1")
    assert figures["runs"] == 1
    assert figures["focal_rel_error_max"] < 0.01 and figures["rms_px_max"] < 0.5


def test_drift_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    figures = _bench_json(capsys, "drift", "--count", "1", "--seed", "2")
    assert figures["tables"] == 1
    assert 0.0 <= figures["bumps_seen"] <= 1.0 and figures["ms_median"] > 0


def test_board_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    figures = _bench_json(capsys, "board", "--count", "1", "--seed", "3")
    assert figures["scenes"] == 1
    assert figures["ms"]["median"] > 0


def test_board_bench_reads_empty_made_up_boards(capsys: pytest.CaptureFixture[str]) -> None:
    figures = _bench_json(capsys, "board", "--count", "1", "--seed", "7002", "--edition", "R", "--empty")
    assert figures["frames_without_hand"] == 1 and figures["hand_frames"] == 0
    assert figures["found_rate"] == figures["placed_rate"] == 1.0  # pale cards on the rim, found


def test_empty_is_an_option_of_the_board_and_vision_benches_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "app", "--empty"]) == 2
    assert "--empty is an option of bench board and vision only" in capsys.readouterr().err


def test_a_bad_option_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "teach", "--seed", "1"]) == 2
    assert "not an option" in capsys.readouterr().err


def test_reader_is_an_option_of_the_app_bench_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "drift", "--reader", "truth"]) == 2
    assert "--reader" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["photos", "photo-game"])
def test_dir_goes_with_the_photo_benches_only(what: str, capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert main(["bench", what]) == 2
    assert f"bench {what} needs --dir FOLDER" in capsys.readouterr().err
    assert main(["bench", "engine", "--dir", str(tmp_path)]) == 2
    assert "--dir is an option of bench photos and photo-game only" in capsys.readouterr().err
    assert main(["bench", what, "--dir", str(tmp_path)]) == 2  # an empty folder
    assert f"bench {what}: no image" in capsys.readouterr().err
