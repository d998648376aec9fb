"""The app's TOML configuration: shipped defaults, one user file, strict checks.

The defaults live in ``default-config.toml`` beside this module so the file a
user copies and the values the code uses can never drift apart (a test checks
that every key there is understood here).  A user file only overrides keys;
an unknown key or a bad value is an :class:`InputError` naming
``section.key`` — a typo must never silently fall back to a default while the
players wonder why the buzzer stays quiet.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

DEFAULT_CONFIG_PATH = Path(__file__).with_name("default-config.toml")
SERVICE_CONFIG_PATH = Path("/etc/boardcam/config.toml")

Pin = int | str | None

DISPLAY_KINDS = ("none", "ssd1306", "st7789", "terminal")
RULE_SETS = ("rulebook", "abstract-play")
LOG_LEVELS = ("debug", "info", "warning", "error")


# ---------------------------------------------------------------- validators
# Each returns the converted value or raises ValueError with the reason; the
# caller prefixes ``section.key`` so every message names its field.

Validator = Callable[[Any], Any]


def _integer(low: int | None = None, high: int | None = None) -> Validator:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {value!r}")
        if low is not None and value < low:
            raise ValueError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"must be at most {high}, got {value}")
        return value

    return check


def _number(low: float, high: float) -> Validator:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return float(value)

    return check


def _choice(choices: tuple[str, ...]) -> Validator:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return check


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _pin(value: Any) -> Pin:
    """A GPIO number, a gpiozero pin name, or ``false`` for a part not fitted."""
    if value is False:
        return None
    if isinstance(value, bool):
        raise ValueError("write a GPIO number, a pin name or false")
    if isinstance(value, int):
        if not 0 <= value <= 53:
            raise ValueError(f"GPIO number must be 0..53, got {value}")
        return value
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"expected a GPIO number, a pin name or false, got {value!r}")


def _rgb(value: Any) -> tuple[Pin, Pin, Pin] | None:
    if value is False:
        return None
    if not isinstance(value, list) or len(value) != 3:
        raise ValueError("expected [red, green, blue] pins or false")
    pins = tuple(_pin(pin) for pin in value)
    if None in pins:
        raise ValueError("all three RGB pins are needed")
    return pins  # type: ignore[return-value]


# ---------------------------------------------------------------- sections
# One table: each key is declared once, with its type, its default (the same
# as default-config.toml's, which a test checks) and the check a user's value
# must pass.  The parser below reads the checks from the fields' metadata.


def setting(default: Any, check: Validator) -> Any:
    """A config key's default and its check (kept in the dataclass field's metadata)."""
    return field(default=default, metadata={"check": check})


@dataclass(frozen=True)
class SourceConfig:
    spec: str = setting("auto", _text)
    width: int = setting(1640, _integer(64, 8192))
    height: int = setting(1232, _integer(64, 8192))
    fps: int = setting(30, _integer(1, 240))
    lores_width: int = setting(160, _integer(32, 640))


@dataclass(frozen=True)
class PinsConfig:
    green: Pin = setting(17, _pin)
    amber: Pin = setting(27, _pin)
    red: Pin = setting(22, _pin)
    rgb: tuple[Pin, Pin, Pin] | None = setting(None, _rgb)
    buzzer: Pin = setting(None, _pin)
    button_score: Pin = setting(5, _pin)
    button_new: Pin = setting(6, _pin)
    hold_time: float = setting(1.5, _number(0.2, 10.0))


@dataclass(frozen=True)
class DisplayConfig:
    kind: str = setting("terminal", _choice(DISPLAY_KINDS))
    i2c_port: int = setting(1, _integer(0, 31))
    i2c_address: int = setting(0x3C, _integer(0x03, 0x77))
    spi_port: int = setting(0, _integer(0, 6))
    spi_device: int = setting(0, _integer(0, 3))
    spi_speed_hz: int = setting(40_000_000, _integer(100_000, 125_000_000))
    gpio_dc: int = setting(24, _integer(0, 53))
    gpio_reset: int = setting(25, _integer(0, 53))
    gpio_backlight: int = setting(18, _integer(0, 53))
    rotate: int = setting(0, _integer(0, 3))


@dataclass(frozen=True)
class GameConfig:
    rules: str = setting("rulebook", _choice(RULE_SETS))


@dataclass(frozen=True)
class MotionConfig:
    pixel_threshold: int = setting(20, _integer(1, 255))
    motion_fraction: float = setting(0.002, _number(0.0, 1.0))
    still_frames: int = setting(5, _integer(1, 300))
    change_pixels: int = setting(4, _integer(1, 1_000_000))
    min_confidence: float = setting(0.75, _number(0.0, 1.0))
    max_looks: int = setting(4, _integer(0, 50))
    confirm_reads: int = setting(2, _integer(1, 20))


@dataclass(frozen=True)
class LoggingConfig:
    level: str = setting("info", _choice(LOG_LEVELS))
    game_dir: str = setting("", _text)


@dataclass(frozen=True)
class Config:
    source: SourceConfig = SourceConfig()
    pins: PinsConfig = PinsConfig()
    display: DisplayConfig = DisplayConfig()
    game: GameConfig = GameConfig()
    motion: MotionConfig = MotionConfig()
    logging: LoggingConfig = LoggingConfig()
    path: str = ""  # the user file that was read, "" for defaults only


def _schema() -> dict[str, tuple[type, dict[str, Validator]]]:
    """section -> (its dataclass, key -> check), read from the fields above."""
    schema: dict[str, tuple[type, dict[str, Validator]]] = {}
    for section in fields(Config):
        defaults: Any = section.default
        if section.name != "path":
            schema[section.name] = (type(defaults), {key.name: key.metadata["check"] for key in fields(defaults)})
    return schema


SCHEMA = _schema()


def running_as_service() -> bool:
    """systemd sets these for a unit with ConfigurationDirectory=/StateDirectory=."""
    return bool(os.environ.get("CONFIGURATION_DIRECTORY") or os.environ.get("STATE_DIRECTORY"))


def user_config_path() -> Path:
    """Where the config is looked for when no file is named on the command line.

    ``$BOARDCAM_CONFIG`` wins; the service reads /etc/boardcam (or the
    directory systemd hands it); anyone else their XDG config directory.
    """
    explicit = os.environ.get("BOARDCAM_CONFIG")
    if explicit:
        return Path(explicit)
    if running_as_service():
        directory = os.environ.get("CONFIGURATION_DIRECTORY", "").split(":")[0]
        return Path(directory) / "config.toml" if directory else SERVICE_CONFIG_PATH
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "boardcam" / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: not valid TOML: {error}") from None


def parse_config(document: Mapping[str, Any], origin: str = "config") -> Config:
    """Check a parsed TOML document against the schema and merge it over the defaults."""
    defaults = _read_toml(DEFAULT_CONFIG_PATH)
    sections: dict[str, Any] = {}
    for name in document:
        if name not in SCHEMA:
            raise InputError(f"{origin}: unknown section [{name}] (known: {', '.join(SCHEMA)})")
        if not isinstance(document[name], Mapping):
            raise InputError(f"{origin}: {name} must be a [section]")
    for name, (section_type, validators) in SCHEMA.items():
        merged = dict(defaults.get(name, {}))
        given = document.get(name, {})
        for key in given:
            if key not in validators:
                raise InputError(
                    f"{origin}: unknown key {name}.{key} (known: {', '.join(validators)})"
                )
        merged.update(given)
        values: dict[str, Any] = {}
        for key, validate in validators.items():
            if key not in merged:
                continue
            try:
                values[key] = validate(merged[key])
            except ValueError as error:
                raise InputError(f"{origin}: {name}.{key}: {error}") from None
        sections[name] = section_type(**values)
    is_file = origin not in ("config", "defaults")
    return Config(**sections, path=origin if is_file else "")


def load_config(path: str | Path | None = None) -> Config:
    """The configuration the app should use.

    An explicitly named file must exist; the implicit one (see
    :func:`user_config_path`) may be absent, which simply means defaults.
    """
    if path is not None:
        chosen = Path(path)
        if not chosen.is_file():
            raise InputError(f"config file not found: {chosen}")
    else:
        chosen = user_config_path()
        if not chosen.is_file():
            return parse_config({}, origin="defaults")
    return parse_config(_read_toml(chosen), origin=str(chosen))
