"""End to end on generated games: scenegen pictures → motion → reader → referee → log.

The pictures are rendered by the scene generator (hands before every move,
new lamps, a bumped camera); the reader is the scenes' ground truth here, so
these tests pin the loop's behaviour, and ``test_vision_end_to_end`` runs a
short stretch through the real vision.
"""

from pathlib import Path

import pytest

from boardcam.engine.aliencity import Position
from boardcam.firmware.config import Config
from boardcam.firmware.display import NullDisplay
from boardcam.firmware.gamelog import replay_log
from boardcam.firmware.lights import Light, NoLights
from boardcam.firmware.referee import Observation, Phase
from boardcam.firmware.runner import create_loop
from boardcam.firmware.sources.replay import GeneratedGame, ReplaySource, generated_game_images

from helpers import apply, game_after, illegal_build, played_game, positions_of

pytest.importorskip("scenegen")

SIZE = (400, 300)  # small pictures: the loop does not care, rendering is faster


def film(positions, seed=3, **options):
    current = {}
    game = GeneratedGame(tuple(positions), seed=seed, size=SIZE, hold_frames=8, **options)
    source = ReplaySource(generated_game_images(game), fps=30,
                          on_item=lambda i, scene: current.__setitem__("truth", scene.truth))

    def reader(image):
        truth = current["truth"]
        return Observation(Position.from_json(truth["position"]), {},
                           occluded=bool(truth["occluded"]))

    return source, reader


def referee_run(positions, tmp_path, **options):
    source, reader = film(positions, **options)
    lights = NoLights()
    shown = []
    lights.show = shown.append
    loop = create_loop(Config(), source=source, reader=reader, lights=lights,
                       display=NullDisplay(), log_dir=tmp_path)
    loop.run()
    return loop, shown


def test_a_generated_game_end_with_hands_light_change_and_bump(tmp_path):
    game = played_game(21)
    boards = positions_of(game)[-8:]  # the end of a game, from a mid-game board
    source, reader = film(boards, light_change_at=(5,), bump_at=(9,))

    loop = create_loop(Config(), source=source, reader=reader, lights=NoLights(),
                       display=NullDisplay(), log_dir=tmp_path)
    loop.referee.resume(game_after(game, game.ply - 7))
    loop.run()
    assert loop.referee.phase is Phase.OVER
    assert loop.referee.game.moves == game.moves
    assert loop.referee.game.score().to_json() == game.score().to_json()


def test_an_illegal_move_in_a_generated_game_is_caught_and_cleared(tmp_path):
    game = played_game(22)
    boards = positions_of(game)[:5]
    bad = apply(boards[3], illegal_build(game_after(game, 3)))
    loop, shown = referee_run(boards[:4] + [bad] + boards[4:5], tmp_path)
    assert Light.RED in shown and shown[-1] is Light.GREEN
    assert loop.referee.game.ply == 4
    result = replay_log(next(Path(tmp_path).iterdir()))
    assert result["illegal_verdicts"] == 1 and all(m["legal"] for m in result["moves"])


def test_a_cap_on_the_last_turn_is_refused_until_taken_off(tmp_path):
    from boardcam.engine.aliencity import Move

    game = played_game(1)  # its last mover still holds a cap
    boards = positions_of(game)
    last = game.moves[-1]
    before = game_after(game, game.ply - 1)
    tower = next(lot for lot, s in before.position.structures.items()
                 if s.kind == "tower" and s.cap is None)
    capped = apply(boards[-2], Move(last.player, last.lot, last.piece, tower))
    source, reader = film([boards[-3], boards[-2], capped, boards[-1]])
    lights = NoLights()
    shown = []
    lights.show = shown.append
    loop = create_loop(Config(), source=source, reader=reader, lights=lights,
                       display=NullDisplay(), log_dir=tmp_path)
    loop.referee.resume(game_after(game, game.ply - 2))
    loop.run()
    assert Light.RED in shown
    assert loop.referee.phase is Phase.OVER
    assert loop.referee.game.score().to_json() == game.score().to_json()
    verdicts = [e.outputs.screen for e in loop.stats.events if e.outputs.light is Light.RED]
    assert verdicts and verdicts[0].rule == 6
