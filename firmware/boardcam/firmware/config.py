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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardcam.engine.errors import InputError

DEFAULT_CONFIG_PATH = Path(__file__).with_name("default-config.toml")
SERVICE_CONFIG_PATH = Path("/etc/boardcam/config.toml")

Pin = int | str | None

DISPLAY_KINDS = ("none", "ssd1306", "st7789", "terminal")
RULE_SETS = ("rulebook", "abstract-play")
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class SourceConfig:
    spec: str = "auto"
    width: int = 1640
    height: int = 1232
    fps: int = 30
    lores_width: int = 160


@dataclass(frozen=True)
class PinsConfig:
    green: Pin = 17
    amber: Pin = 27
    red: Pin = 22
    rgb: tuple[Pin, Pin, Pin] | None = None
    buzzer: Pin = None
    button_score: Pin = 5
    button_new: Pin = 6
    hold_time: float = 1.5


@dataclass(frozen=True)
class DisplayConfig:
    kind: str = "terminal"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    spi_port: int = 0
    spi_device: int = 0
    spi_speed_hz: int = 40_000_000
    gpio_dc: int = 24
    gpio_reset: int = 25
    gpio_backlight: int = 18
    rotate: int = 0


@dataclass(frozen=True)
class GameConfig:
    rules: str = "rulebook"


@dataclass(frozen=True)
class MotionConfig:
    pixel_threshold: int = 20
    motion_fraction: float = 0.002
    still_frames: int = 5
    min_confidence: float = 0.75
    max_looks: int = 4


@dataclass(frozen=True)
class LoggingConfig:
    level: str = "info"
    game_dir: str = ""


@dataclass(frozen=True)
class Config:
    source: SourceConfig = SourceConfig()
    pins: PinsConfig = PinsConfig()
    display: DisplayConfig = DisplayConfig()
    game: GameConfig = GameConfig()
    motion: MotionConfig = MotionConfig()
    logging: LoggingConfig = LoggingConfig()
    path: str = ""  # the user file that was read, "" for defaults only


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


SCHEMA: dict[str, tuple[type, dict[str, Validator]]] = {
    "source": (
        SourceConfig,
        {
            "spec": _text,
            "width": _integer(64, 8192),
            "height": _integer(64, 8192),
            "fps": _integer(1, 240),
            "lores_width": _integer(32, 640),
        },
    ),
    "pins": (
        PinsConfig,
        {
            "green": _pin,
            "amber": _pin,
            "red": _pin,
            "rgb": _rgb,
            "buzzer": _pin,
            "button_score": _pin,
            "button_new": _pin,
            "hold_time": _number(0.2, 10.0),
        },
    ),
    "display": (
        DisplayConfig,
        {
            "kind": _choice(DISPLAY_KINDS),
            "i2c_port": _integer(0, 31),
            "i2c_address": _integer(0x03, 0x77),
            "spi_port": _integer(0, 6),
            "spi_device": _integer(0, 3),
            "spi_speed_hz": _integer(100_000, 125_000_000),
            "gpio_dc": _integer(0, 53),
            "gpio_reset": _integer(0, 53),
            "gpio_backlight": _integer(0, 53),
            "rotate": _integer(0, 3),
        },
    ),
    "game": (GameConfig, {"rules": _choice(RULE_SETS)}),
    "motion": (
        MotionConfig,
        {
            "pixel_threshold": _integer(1, 255),
            "motion_fraction": _number(0.0, 1.0),
            "still_frames": _integer(1, 300),
            "min_confidence": _number(0.0, 1.0),
            "max_looks": _integer(0, 50),
        },
    ),
    "logging": (
        LoggingConfig,
        {"level": _choice(LOG_LEVELS), "game_dir": _text},
    ),
}


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
