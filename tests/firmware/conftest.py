"""The game the referee tests judge, played once per module."""

import pytest

from helpers import played_game, positions_of


@pytest.fixture(scope="module")
def game():
    return played_game(11)


@pytest.fixture(scope="module")
def boards(game):
    return positions_of(game)
