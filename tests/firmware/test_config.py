import tomllib
from pathlib import Path

import pytest

from boardcam.engine.errors import InputError
from boardcam.firmware.config import (
    DEFAULT_CONFIG_PATH,
    SCHEMA,
    Config,
    load_config,
    parse_config,
    user_config_path,
)


def test_shipped_defaults_match_the_code_and_cover_every_key():
    document = tomllib.loads(DEFAULT_CONFIG_PATH.read_text())
    assert set(document) == set(SCHEMA)
    for name, (_, validators) in SCHEMA.items():
        assert set(document[name]) == set(validators), name
    assert parse_config(document) == Config()


def test_a_user_file_overrides_only_its_keys(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[display]\nkind = "ssd1306"\n[pins]\nbuzzer = 12\nrgb = [2, 3, 4]\n')
    config = load_config(path)
    assert config.display.kind == "ssd1306"
    assert config.display.i2c_address == 0x3C
    assert config.pins.buzzer == 12 and config.pins.rgb == (2, 3, 4)
    assert config.pins.button_new == 6
    assert config.path == str(path)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[display]\nkind = "oled"\n', "display.kind"),
        ("[pins]\nbuzer = 12\n", "pins.buzer"),
        ("[motion]\nstill_frames = 0\n", "motion.still_frames"),
        ("[motion]\nmin_confidence = 1.5\n", "motion.min_confidence"),
        ("[pins]\ngreen = true\n", "pins.green"),
        ("[pins]\nrgb = [1, 2]\n", "pins.rgb"),
        ('[game]\nrules = "house"\n', "game.rules"),
        ("[camera]\nfps = 30\n", "[camera]"),
        ('[source]\nfps = "fast"\n', "source.fps"),
    ],
)
def test_bad_keys_and_values_are_named_in_one_line(tmp_path, text, named):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_config(path)
    message = str(caught.value)
    assert named in message and str(path) in message and "\n" not in message


def test_broken_toml_and_missing_named_file_are_input_errors(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[display\nkind=1")
    with pytest.raises(InputError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(InputError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_where_the_config_is_looked_for(monkeypatch, tmp_path):
    for name in ("BOARDCAM_CONFIG", "CONFIGURATION_DIRECTORY", "STATE_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_config_path() == tmp_path / "xdg" / "boardcam" / "config.toml"
    assert load_config() == Config()  # no file: the defaults
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/boardcam")
    assert user_config_path() == Path("/etc/boardcam/config.toml")
    monkeypatch.setenv("CONFIGURATION_DIRECTORY", "/etc/boardcam")
    assert user_config_path() == Path("/etc/boardcam/config.toml")
    own = tmp_path / "mine.toml"
    own.write_text("[game]\nrules = \"abstract-play\"\n")
    monkeypatch.setenv("BOARDCAM_CONFIG", str(own))
    assert load_config().game.rules == "abstract-play"
