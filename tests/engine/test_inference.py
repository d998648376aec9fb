"""Move inference from two observed positions."""

from boardcam.engine.aliencity import Game, Move, Piece, infer_move, parse_lot

from .boards import position, uniform

TILES = uniform("K")


def game_after(*moves):
    game = Game(TILES)
    for move in moves:
        game.push(move)
    return game


def test_nothing_changed():
    assert infer_move(position(TILES), position(TILES), Game(TILES)).kind == "unchanged"


def test_one_structure_added_is_a_move_for_whoever_is_to_play():
    result = infer_move(position(TILES), position(TILES, "A1=blue-tower"), Game(TILES))
    assert result.kind == "move"
    assert result.move == Move("black", parse_lot("A1"), Piece("tower", "blue"))


def test_a_build_with_the_movers_cap():
    result = infer_move(position(TILES), position(TILES, "A1=blue-tower/black"), Game(TILES))
    assert result.move == Move("black", parse_lot("A1"), Piece("tower", "blue"), parse_lot("A1"))
    game = game_after(Move("black", parse_lot("A1"), Piece("tower", "blue")))
    result = infer_move(position(TILES, "A1=blue-tower"), position(TILES, "A1=blue-tower/white C1=black-dome"), game)
    assert result.move == Move("white", parse_lot("C1"), Piece("dome", "black"), parse_lot("A1"))


def problems(before, after, game=None):
    result = infer_move(position(TILES, before), position(TILES, after), game or Game(TILES))
    assert result.kind == "problem" and result.move is None
    return " | ".join(result.problems)


def test_everything_else_is_reported_plainly():
    assert "2 structures appeared at once" in problems("", "A1=black-dome C1=black-dome")
    assert "on A1 was removed" in problems("A1=black-dome", "")
    assert "moved from A1 to C1" in problems("A1=black-dome", "C1=black-dome")
    assert "became a red dome" in problems("A1=black-dome", "A1=red-dome")
    assert "without a build" in problems("A1=blue-tower", "A1=blue-tower/black")
    assert "cap on A1 was removed" in problems("A1=blue-tower/black", "A1=blue-tower")
    assert "it is black's turn" in problems("", "A1=blue-tower/white")


def test_a_piece_the_mover_no_longer_has_names_the_player():
    game = Game(TILES)
    spec = []
    for lot_b, lot_w in (("A1", "A3"), ("C1", "C3"), ("E1", "E3")):
        game.push(Move("black", parse_lot(lot_b), Piece("dome", "red")))
        game.push(Move("white", parse_lot(lot_w), Piece("dome", "blue")))
        spec += [f"{lot_b}=red-dome", f"{lot_w}=blue-dome"]
    before = " ".join(spec)
    text = problems(before, before + " G1=red-dome", game)
    assert "black has no red dome left" in text and "white still has one" in text
