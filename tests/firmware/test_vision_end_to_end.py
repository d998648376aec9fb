"""The whole chain on generated pictures: scenegen → motion → the real vision → referee.

A short stretch of a game (so the test stays quick): the empty board, three
moves with hands reaching in before each, and one illegal build put right.
"""

import pytest

from boardcam.firmware.config import Config
from boardcam.firmware.display import NullDisplay
from boardcam.firmware.gamelog import replay_log
from boardcam.firmware.lights import Light, NoLights
from boardcam.firmware.runner import VisionReader, create_loop
from boardcam.firmware.sources.replay import GeneratedGame, ReplaySource, generated_game_images

from helpers import apply, game_after, illegal_build, played_game, positions_of

pytest.importorskip("scenegen")


def test_moves_and_an_illegal_build_through_the_real_vision(tmp_path):
    game = played_game(31)
    boards = positions_of(game)
    bad = apply(boards[2], illegal_build(game_after(game, 2)))
    film = GeneratedGame(tuple(boards[:3] + [bad] + boards[3:4]), seed=31, size=(820, 616), hold_frames=8,
                         scene=(("yaw_deg", 5.0),))
    source = ReplaySource(generated_game_images(film), fps=30)
    lights = NoLights()
    shown = []
    lights.show = shown.append
    loop = create_loop(Config(), source=source, reader=VisionReader(None), lights=lights,
                       display=NullDisplay(), log_dir=tmp_path)
    loop.run()
    assert loop.referee.game is not None
    assert loop.referee.game.moves == game.moves[:3]
    assert Light.RED in shown and shown[-1] is Light.GREEN
    result = replay_log(loop.gamelog.path)
    assert result["illegal_verdicts"] == 1
