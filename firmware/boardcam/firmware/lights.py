"""Lights, buzzer and the two buttons, through gpiozero.

Everything is built through an explicit pin factory (gpiozero's own
``Device.pin_factory`` when none is given), so tests pass a ``MockFactory``
and nothing touches a GPIO at import.  Button presses become
:class:`ButtonEvent` values in a thread-safe queue: gpiozero calls back from
its own thread, and the referee core must only ever see plain events.

Buttons:
* score-or-confirm — short press: confirm the layout during setup, show the
  score otherwise;
* new-game-or-accept — short press: new game; long press (``hold_time``):
  accept the move on display as the players' house ruling.
"""

from __future__ import annotations

import enum
import logging
import queue
from typing import Any

from .config import PinsConfig

log = logging.getLogger(__name__)


class Light(enum.Enum):
    OFF = "off"
    GREEN = "green"  # all fine, play on
    AMBER = "amber"  # looking again / needs attention, never a rule warning
    RED = "red"  # a move breaks a rule (or the board changed in a way that is no move)


class Beep(enum.Enum):
    WARNING = "warning"  # an illegal move: three short beeps
    ATTENTION = "attention"  # one short beep (game over, layout read)


class ButtonEvent(enum.Enum):
    SCORE = "score"  # short press of score-or-confirm (confirms in setup)
    NEW = "new"  # short press of new-game-or-accept
    ACCEPT = "accept"  # long press of new-game-or-accept


# On/off colours of a common-cathode RGB LED; amber is red and green together.
RGB_ON = {
    Light.OFF: (0, 0, 0),
    Light.GREEN: (0, 1, 0),
    Light.AMBER: (1, 1, 0),
    Light.RED: (1, 0, 0),
}

BEEP_PATTERN = {  # (on seconds, off seconds, count)
    Beep.WARNING: (0.12, 0.08, 3),
    Beep.ATTENTION: (0.08, 0.0, 1),
}


class Lights:
    """The LEDs, the optional buzzer and the buttons of one boardcam box."""

    def __init__(self, pins: PinsConfig, pin_factory: Any = None) -> None:
        from gpiozero import LED, RGBLED, Button, Buzzer

        self.events: queue.SimpleQueue[ButtonEvent] = queue.SimpleQueue()
        self.state = Light.OFF
        made: list[Any] = []
        try:
            factory = {"pin_factory": pin_factory} if pin_factory is not None else {}
            self._rgb = None
            self._leds: dict[Light, Any] = {}
            if pins.rgb is not None:
                # pwm=False: on/off colours need no PWM, and plain pins work everywhere
                self._rgb = RGBLED(*pins.rgb, pwm=False, **factory)
                made.append(self._rgb)
            else:
                for light, pin in ((Light.GREEN, pins.green), (Light.AMBER, pins.amber),
                                   (Light.RED, pins.red)):
                    if pin is not None:
                        self._leds[light] = LED(pin, **factory)
                        made.append(self._leds[light])
            self._buzzer = Buzzer(pins.buzzer, **factory) if pins.buzzer is not None else None
            if self._buzzer is not None:
                made.append(self._buzzer)
            self._score = self._new = None
            if pins.button_score is not None:
                self._score = Button(pins.button_score, **factory)
                made.append(self._score)
                self._score.when_released = lambda: self.events.put(ButtonEvent.SCORE)
            if pins.button_new is not None:
                self._new = Button(pins.button_new, hold_time=pins.hold_time, **factory)
                made.append(self._new)
                self._new_was_held = False
                self._new.when_pressed = self._new_pressed
                self._new.when_held = self._new_held
                self._new.when_released = self._new_released
        except Exception:
            for device in made:
                device.close()
            raise
        self._devices = made

    # A long press must not also count as a short one: remember the hold and
    # decide on release.
    def _new_pressed(self) -> None:
        self._new_was_held = False

    def _new_held(self) -> None:
        self._new_was_held = True
        self.events.put(ButtonEvent.ACCEPT)

    def _new_released(self) -> None:
        if not self._new_was_held:
            self.events.put(ButtonEvent.NEW)
        self._new_was_held = False

    def show(self, light: Light) -> None:
        """Light exactly one colour (or none)."""
        if self._rgb is not None:
            self._rgb.value = RGB_ON[light]
        else:
            for colour, led in self._leds.items():
                led.value = colour is light
        self.state = light

    def beep(self, beep: Beep) -> None:
        """Sound a pattern in the background (gpiozero's blink thread)."""
        if self._buzzer is None:
            return
        on, off, count = BEEP_PATTERN[beep]
        self._buzzer.beep(on_time=on, off_time=max(off, 0.01), n=count, background=True)

    def poll(self) -> list[ButtonEvent]:
        """Button events since the last poll, oldest first."""
        events = []
        while True:
            try:
                events.append(self.events.get_nowait())
            except queue.Empty:
                return events

    def close(self) -> None:
        for device in self._devices:
            try:
                device.close()
            except Exception as error:  # closing must never take the app down
                log.debug("closing %s: %s", device, error)
        self._devices = []


class NoLights:
    """Stands in when GPIO is unavailable (a laptop, a missing group): nothing lights."""

    def __init__(self) -> None:
        self.state = Light.OFF
        self.events: queue.SimpleQueue[ButtonEvent] = queue.SimpleQueue()

    def show(self, light: Light) -> None:
        self.state = light

    def beep(self, beep: Beep) -> None:
        pass

    def poll(self) -> list[ButtonEvent]:
        events = []
        while not self.events.empty():
            events.append(self.events.get_nowait())
        return events

    def close(self) -> None:
        pass


def open_lights(pins: PinsConfig, pin_factory: Any = None) -> Lights | NoLights:
    """Real lights when the pins can be had, otherwise :class:`NoLights` and a log line."""
    import warnings

    try:
        with warnings.catch_warnings():
            # gpiozero warns once per pin library it cannot load; one log line says it better
            warnings.filterwarnings("ignore", message="Falling back")
            return Lights(pins, pin_factory=pin_factory)
    except Exception as error:  # gpiozero raises BadPinFactory, GPIOPinInUse, OSError...
        log.warning("lights and buttons unavailable (%s); going on without them", error)
        return NoLights()


class ConsoleLights:
    """The lights and the buzzer emulated in the terminal (``boardcam demo``, laptops)."""

    STYLE = {Light.OFF: "dim", Light.GREEN: "bold green", Light.AMBER: "bold yellow",
             Light.RED: "bold red"}

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console

        self.console = console or Console()
        self.state = Light.OFF
        self.events: queue.SimpleQueue[ButtonEvent] = queue.SimpleQueue()
        self.beeps = 0

    def show(self, light: Light) -> None:
        if light is not self.state:
            self.state = light
            self.console.print(f"[{self.STYLE[light]}]● light {light.value}[/]")

    def beep(self, beep: Beep) -> None:
        self.beeps += 1
        self.console.print("[bold red]♪ beep beep beep[/]" if beep is Beep.WARNING else "[cyan]♪ beep[/]")

    def poll(self) -> list[ButtonEvent]:
        events = []
        while not self.events.empty():
            events.append(self.events.get_nowait())
        return events

    def close(self) -> None:
        pass
