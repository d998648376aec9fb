import time

import pytest
from gpiozero.pins.mock import MockFactory

from boardcam.firmware.config import PinsConfig
from boardcam.firmware.lights import Beep, ButtonEvent, Light, Lights, NoLights, open_lights


@pytest.fixture
def factory():
    factory = MockFactory()
    yield factory
    factory.reset()


def _wait_for(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def test_exactly_one_led_is_lit(factory):
    lights = Lights(PinsConfig(green=17, amber=27, red=22), pin_factory=factory)
    for light, lit in ((Light.RED, 22), (Light.AMBER, 27), (Light.GREEN, 17)):
        lights.show(light)
        assert [factory.pin(p).state for p in (17, 27, 22)] == [p == lit for p in (17, 27, 22)]
    lights.show(Light.OFF)
    assert not any(factory.pin(p).state for p in (17, 27, 22))
    lights.close()


def test_rgb_led_mixes_amber_from_red_and_green(factory):
    lights = Lights(PinsConfig(rgb=(2, 3, 4)), pin_factory=factory)
    lights.show(Light.AMBER)
    assert [factory.pin(p).state for p in (2, 3, 4)] == [True, True, False]
    lights.show(Light.GREEN)
    assert [factory.pin(p).state for p in (2, 3, 4)] == [False, True, False]
    lights.close()


def test_buttons_short_and_long_presses(factory):
    lights = Lights(PinsConfig(button_score=5, button_new=6, hold_time=0.2), pin_factory=factory)
    score, new = factory.pin(5), factory.pin(6)
    score.drive_low()
    score.drive_high()
    assert _wait_for(lambda: not lights.events.empty())
    assert lights.poll() == [ButtonEvent.SCORE]
    new.drive_low()
    new.drive_high()
    assert _wait_for(lambda: not lights.events.empty())
    assert lights.poll() == [ButtonEvent.NEW]
    new.drive_low()
    assert _wait_for(lambda: not lights.events.empty())  # the hold fires while still pressed
    new.drive_high()
    time.sleep(0.05)
    assert lights.poll() == [ButtonEvent.ACCEPT]  # and the release is not also a short press
    lights.close()


def test_warning_beeps_three_times(factory):
    lights = Lights(PinsConfig(buzzer=12), pin_factory=factory)
    lights.beep(Beep.WARNING)
    buzzer = factory.pin(12)
    assert _wait_for(lambda: sum(s.state for s in buzzer.states) >= 3)
    assert _wait_for(lambda: not buzzer.state)
    lights.close()


def test_missing_gpio_falls_back_to_no_lights(factory):
    taken = Lights(PinsConfig(), pin_factory=factory)  # the same pins cannot be had twice
    fallback = open_lights(PinsConfig(), pin_factory=factory)
    assert isinstance(fallback, NoLights)
    fallback.show(Light.RED)
    assert fallback.state is Light.RED and fallback.poll() == []
    taken.close()


def test_console_lights_print_changes_and_beeps():
    from rich.console import Console

    from boardcam.firmware.lights import ConsoleLights

    console = Console(record=True, color_system=None, width=40)
    lights = ConsoleLights(console)
    for light in (Light.GREEN, Light.GREEN, Light.RED):
        lights.show(light)
    lights.beep(Beep.WARNING)
    text = console.export_text()
    assert text.count("light green") == 1 and "light red" in text and "beep beep beep" in text
