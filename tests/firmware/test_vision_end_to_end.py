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


def test_a_game_starts_when_an_icon_print_reads_as_an_unsure_dome(tmp_path):
    """Made-up art (bench app game 401): a black tile's light ring icon reads as a black dome at
    0.83 on the empty board, and its tile's icon is then looked for elsewhere.  The setup takes
    the print for print, reads the tiles as an empty board's, and the game starts."""
    import random

    from bench_app import game_with_a_mistake

    game, boards, _ = game_with_a_mistake(401)
    film = GeneratedGame(tuple(boards[:3]), seed=401, size=(820, 616), hold_frames=8,
                         scene=(("yaw_deg", random.Random(401).uniform(-20.0, 20.0)), ("edition", "R")))
    loop = create_loop(Config(), source=ReplaySource(generated_game_images(film), fps=30),
                       reader=VisionReader(None), lights=NoLights(), display=NullDisplay(), log_dir=tmp_path)
    loop.run()
    assert loop.referee.game is not None
    assert loop.referee.game.moves == game.moves[:2]
    assert loop.referee.layout is not None and loop.referee.layout.to_json()["tiles"]["G9"]["icon"] == "H9"
