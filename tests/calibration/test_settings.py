"""CameraSettings: JSON round trip, validation, Picamera2 controls, freezing from metadata."""

from __future__ import annotations

import json

import pytest

from boardcam.calibration.settings import CameraSettings, settings_from_metadata
from boardcam.engine.errors import FormatError


def test_default_settings_are_automatic_and_add_no_controls() -> None:
    settings = CameraSettings()
    assert settings.is_automatic
    assert settings.picamera2_controls() == {}


def test_json_round_trip_survives_a_real_json_encoding() -> None:
    settings = CameraSettings(exposure_us=12000, analogue_gain=2.5, colour_gains=(1.9, 1.4), lens_position=2.25)
    again = CameraSettings.from_json(json.loads(json.dumps(settings.to_json())))
    assert again == settings
    assert not again.is_automatic


def test_controls_pin_exposure_white_balance_and_focus() -> None:
    controls = CameraSettings(
        exposure_us=8000, analogue_gain=1.5, colour_gains=(2.0, 1.6), lens_position=3.0
    ).picamera2_controls()
    assert controls == {
        "AeEnable": False,
        "ExposureTime": 8000,
        "AnalogueGain": 1.5,
        "AwbEnable": False,
        "ColourGains": (2.0, 1.6),
        "AfMode": 0,
        "LensPosition": 3.0,
    }


def test_only_fixed_fields_become_controls() -> None:
    controls = CameraSettings(colour_gains=(2.0, 1.6)).picamera2_controls()
    assert controls == {"AwbEnable": False, "ColourGains": (2.0, 1.6)}


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"exposure_us": -5}, "exposure_us"),
        ({"exposure_us": 10.5}, "exposure_us"),
        ({"analogue_gain": "high"}, "analogue_gain"),
        ({"colour_gains": [1.0]}, "colour_gains"),
        ({"colour_gains": [1.0, 0.0]}, "colour_gains"),
        ({"lens_position": -1.0}, "lens_position"),
        ({"shutter": 5}, "shutter"),
    ],
)
def test_bad_values_are_named(document: dict, field: str) -> None:
    with pytest.raises(FormatError, match=field):
        CameraSettings.from_json(document)


def test_freezing_takes_the_median_of_several_metadata_samples() -> None:
    samples = [
        {"ExposureTime": 10000, "AnalogueGain": 2.0, "ColourGains": (1.8, 1.5), "LensPosition": 2.0},
        {"ExposureTime": 10400, "AnalogueGain": 2.1, "ColourGains": (1.9, 1.4), "LensPosition": 2.1},
        {"ExposureTime": 30000, "AnalogueGain": 8.0, "ColourGains": (3.0, 3.0), "LensPosition": 9.0},
    ]
    settings = settings_from_metadata(samples)
    assert settings == CameraSettings(
        exposure_us=10400, analogue_gain=2.1, colour_gains=(1.9, 1.5), lens_position=2.1
    )


def test_freezing_a_camera_without_autofocus_leaves_focus_alone() -> None:
    settings = settings_from_metadata({"ExposureTime": 9000, "AnalogueGain": 1.0, "ColourGains": [2.1, 1.7]})
    assert settings.lens_position is None
    assert "LensPosition" not in settings.picamera2_controls()
    assert settings.exposure_us == 9000


def test_freezing_needs_at_least_one_sample() -> None:
    with pytest.raises(FormatError):
        settings_from_metadata([])
