from types import SimpleNamespace

import numpy as np
import pytest

import boardcam.calibration.drift as drift
import boardcam.vision
import boardcam.vision.align
from boardcam.engine.aliencity import Position
from boardcam.firmware.runner import VisionReader
from boardcam.vision import BoardNotFoundError

from helpers import played_game, positions_of

COVERED = 1  # pixel value the fake vision treats as "a hand over the board edge"


class FakePose:
    CORNERS = {"A1": [0, 0], "H1": [9, 0], "H10": [9, 9], "A10": [0, 9]}

    def __init__(self, name, corners=None):
        self.name = name
        self.corners = corners or self.CORNERS

    def to_json(self):
        return {"corners_px": self.corners}

    def ordered(self):
        return [tuple(self.corners[k]) for k in ("A1", "H1", "H10", "A10")]


@pytest.fixture
def fake_vision(monkeypatch):
    """read_board, the empty-board reference and the drift check replaced by recorders."""
    calls = {"reads": [], "references": 0, "drift": "steady"}
    boards = {"empty": positions_of(played_game(2))[0], "played": positions_of(played_game(2))[3]}
    calls["board"] = "played"
    calls["boards"] = boards

    def read_board(image, *, pose=None, reference=None, previous=None, views=None, **parts):
        calls["reads"].append({"pose": pose, "reference": reference, "previous": previous, "views": views})
        if pose is None and image[0, 0, 0] == COVERED:
            raise BoardNotFoundError("no tile array found")
        board = calls["boards"][calls["board"]]
        sure = calls.get("piece_confidence", 0.97)
        return SimpleNamespace(position=Position.from_json(board), position_dict=board,
                               lot_confidence={lot: sure for lot in board["structures"]} | {"A1": 0.9},
                               tile_confidence={"A1": calls.get("tile_confidence", 0.95)},
                               occluded=calls.get("occluded", False),
                               occluded_lots=calls.get("occluded_lots", ()),
                               runners_up=calls.get("runners_up", {}),
                               lot_lab=calls.get("lot_lab"),
                               pose=pose or calls.get("found") or FakePose("found"))

    def empty_board_reference(image, pose, **kwargs):
        calls["references"] += 1
        calls["reference_tiles"] = kwargs.get("tiles")
        calls["reference_image"] = image
        return "reference"

    def align_to_reference(image, pose, reference, intrinsics=None, structures=None, halves_agree=False):
        if halves_agree:  # following a small knock
            calls.setdefault("knock_checks", []).append(pose)
            return calls.get("knocked") or pose
        calls.setdefault("aligned", []).append(pose)
        return calls.get("registered") or FakePose("aligned", pose.to_json()["corners_px"])

    def check_drift(reference, image):
        return SimpleNamespace(moved=calls["drift"] == "moved", status=calls["drift"], tolerance_px=2.0,
                               agreed_shift=lambda: calls.get("outline_shift"))

    monkeypatch.setattr(boardcam.vision, "read_board", read_board)
    monkeypatch.setattr(boardcam.vision, "empty_board_reference", empty_board_reference)

    monkeypatch.setattr(boardcam.vision.align, "align_to_reference", align_to_reference)
    monkeypatch.setattr(drift, "drift_reference", lambda image, corners, intrinsics=None: "drift reference")
    monkeypatch.setattr(drift, "check_drift", check_drift)
    return calls


IMAGE = np.zeros((10, 10, 3), np.uint8)


def test_searched_once_then_read_at_the_pose_with_the_previous_reading(fake_vision):
    reader = VisionReader(None)
    observation = reader(IMAGE)
    assert observation.lot_confidence["A1"] == 0.9
    first = fake_vision["reads"][0]
    assert first["pose"] is None  # the first frame searches
    reader(IMAGE)  # looking again at a still board: no search, the last reading passed on
    second = fake_vision["reads"][1]
    assert second["pose"].name == "found" and second["previous"] is not None
    reader.board_moved()  # a hand passed, the drift check says the board stayed: still no search
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"] is not None


def test_a_bump_makes_it_search_again_without_the_stale_reading(fake_vision):
    reader = VisionReader(None)
    reader(IMAGE)
    fake_vision["drift"] = "moved"
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"] is None  # never read a knocked board through a stale pose
    fake_vision["drift"] = "steady"
    reader(IMAGE)
    assert fake_vision["reads"][-1]["previous"] is not None


def test_a_refound_board_keeps_the_games_corner_names(fake_vision):
    reader = VisionReader(None)
    reader(IMAGE)
    fake_vision["drift"] = "moved"
    fake_vision["found"] = FakePose("turned", {"A1": [9, 9], "H1": [0, 9], "H10": [0, 0], "A10": [9, 0]})
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-2]["pose"] is None  # searched, found with row 1 on the other side...
    again = fake_vision["reads"][-1]["pose"].to_json()["corners_px"]  # ...and read again named as before
    assert {k: [round(v) for v in p] for k, p in again.items()} == FakePose.CORNERS


def test_a_failed_search_falls_back_to_the_last_pose(fake_vision):
    reader = VisionReader(None)
    reader(IMAGE)
    fake_vision["drift"] = "moved"
    reader.board_moved()
    reader(np.full((10, 10, 3), COVERED, np.uint8))
    assert fake_vision["reads"][-2]["pose"] is None and fake_vision["reads"][-1]["pose"].name == "found"
    with pytest.raises(BoardNotFoundError):
        VisionReader(None)(np.full((10, 10, 3), COVERED, np.uint8))  # no pose to fall back on


def test_a_frame_that_shows_a_change_is_read_again_in_two_views(fake_vision):
    reader = VisionReader(None)
    reader(IMAGE)  # the search
    reader(IMAGE)  # the same board at the pose: one view
    assert fake_vision["reads"][-1]["views"] is None
    fake_vision["board"] = "empty"  # the structures differ from the last reading's
    reader(IMAGE)
    assert [r["views"] for r in fake_vision["reads"][-2:]] == [None, 2]
    fake_vision["board"] = "played"
    fake_vision["occluded"] = True  # a change under a hand is not worth the second look
    reader(IMAGE)
    assert fake_vision["reads"][-1]["views"] is None


def test_a_cover_that_stays_put_while_the_board_moves_is_no_hand(fake_vision):
    """Lots read as covered that stay so while a hand came and went are print the vision takes for
    skin: they stay unread, and the rest of the board is judged.  A cover that moves is a hand."""
    reader = VisionReader(None)
    reader(IMAGE)
    fake_vision["occluded"] = True
    fake_vision["occluded_lots"] = ("A9", "A10")
    assert reader(IMAGE).occluded  # first seen: a hand, as far as anyone can tell
    assert reader(IMAGE).occluded  # looked at again with nothing moving: the same
    reader.board_moved()
    fake_vision["occluded_lots"] = ("A9", "A10", "B9")  # its rim lots come and go
    assert not reader(IMAGE).occluded
    reader.board_moved()
    fake_vision["occluded_lots"] = ("E5", "F5")  # somewhere else: a hand
    assert reader(IMAGE).occluded
    reader.board_moved()
    fake_vision["occluded"] = False
    reader(IMAGE)
    fake_vision["occluded"] = True  # clear in between: starts over
    assert reader(IMAGE).occluded
    # a hand-sized cover photographed twice as it moves overlaps itself, and is still a hand
    fake_vision["occluded_lots"] = ("E4", "F4", "E5", "F5", "E6")
    reader(IMAGE)
    reader.board_moved()
    fake_vision["occluded_lots"] = ("F4", "G4", "F5", "G5", "F6")
    assert reader(IMAGE).occluded


def _lots_looking(grey: float = 50.0, changed: tuple[str, ...] = ()) -> np.ndarray:
    """Every lot's look, as a reading's lot_lab: a plain grey, and ``changed`` lots a strong red."""
    from boardcam.engine.aliencity import parse_lot

    look = np.zeros((80, 8, 8, 3), np.float32)
    look[..., 0] = grey
    for name in changed:
        look[parse_lot(name)] = (50.0, 60.0, 40.0)
    return look


HAND_SIZED = ("E4", "F4", "G4", "E5", "F5", "G5", "E6", "F6")


def _covered_reader(fake_vision, lots):
    """A reader that has read a clear board, then one with ``lots`` read as covered (all lots plain)."""
    reader = VisionReader(None)
    reader(IMAGE)
    fake_vision["occluded"] = True
    fake_vision["occluded_lots"] = lots
    fake_vision["lot_lab"] = _lots_looking()
    assert reader(IMAGE).occluded
    return reader


def test_a_hand_sized_cover_whose_picture_stays_the_same_while_the_board_moves_is_no_hand(fake_vision):
    """After a lamp change the board network can see a hand over half the board on every still
    frame; its picture does not change while moves are played elsewhere, as a hand's would."""
    reader = _covered_reader(fake_vision, HAND_SIZED)
    reader.board_moved()
    fake_vision["lot_lab"] = _lots_looking(changed=("A1",))  # a move elsewhere, the cover as it was
    assert not reader(IMAGE).occluded


def test_a_hand_sized_cover_whose_picture_changes_stays_a_hand(fake_vision):
    reader = _covered_reader(fake_vision, HAND_SIZED)
    reader.board_moved()
    fake_vision["lot_lab"] = _lots_looking(changed=("F5",))  # the hand shifted over one of its lots
    assert reader(IMAGE).occluded
    reader.board_moved()
    fake_vision["lot_lab"] = None  # a reading with no looks to compare: a hand, as before
    assert reader(IMAGE).occluded


LAMP_SIZED = tuple(f"{col}{row}" for col in "ABCDEF" for row in range(3, 8))  # 30 lots


def test_a_move_under_a_large_still_cover_leaves_it_print(fake_vision):
    """After a lamp change the network saw a hand over 30-odd lots for twenty plies (made-up-art game
    2303), and moves went on under it.  A move changes a lot or two of the patch: it stays print, and
    the board is judged.  Most of the patch changing is a hand."""
    reader = _covered_reader(fake_vision, LAMP_SIZED)
    reader.board_moved()
    fake_vision["lot_lab"] = _lots_looking(changed=("C5", "C6"))  # a tower on C5 and its shadow
    assert not reader(IMAGE).occluded
    reader.board_moved()
    fake_vision["lot_lab"] = _lots_looking(changed=LAMP_SIZED[:12])  # a hand came and shifted over it
    assert reader(IMAGE).occluded


def _shifted(pose, dx):
    return FakePose("knocked", {k: [x + dx, y] for k, (x, y) in pose.to_json()["corners_px"].items()})


def test_a_knock_the_drift_check_cannot_vouch_for_moves_the_pose(fake_vision):
    """When the drift check cannot tell (a board filling the frame leaves it few anchors), the
    board is registered on the reference after motion; a shift of a few pixels is a knock: the
    frame is read where the board now lies, from scratch.  A steady check is trusted."""
    reader = VisionReader(None)
    fake_vision["board"] = "empty"
    reader(IMAGE)  # the search, and the empty board kept as the reference
    reader(IMAGE)
    pose = fake_vision["reads"][-1]["pose"]
    fake_vision["board"] = "played"
    fake_vision["knocked"] = _shifted(pose, 3.0)
    reader.board_moved()
    reader(IMAGE)  # the drift check says steady: no registration
    assert "knock_checks" not in fake_vision and fake_vision["reads"][-1]["pose"] is pose
    fake_vision["drift"] = "unsure"
    fake_vision["knocked"] = _shifted(pose, 0.8)  # registration noise, not a knock
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"] is pose
    fake_vision["knocked"] = _shifted(pose, 3.0)
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"].name == "knocked"
    assert fake_vision["reads"][-1]["previous"] is None  # every lot is sampled elsewhere now
    checks = len(fake_vision["knock_checks"])
    reader(IMAGE)  # nothing moved since: no registration, the new pose kept
    assert len(fake_vision["knock_checks"]) == checks
    assert fake_vision["reads"][-1]["pose"].name == "knocked"


def test_a_knock_the_halves_cannot_confirm_is_followed_when_the_outline_moved_alike(fake_vision):
    """A late board's crowded half cannot be registered on its own; the drift check's anchors on the
    table (too few to decide alone) are then the second opinion on the whole board's registration."""
    reader = VisionReader(None)
    fake_vision["board"] = "empty"
    reader(IMAGE)
    reader(IMAGE)
    pose = fake_vision["reads"][-1]["pose"]
    fake_vision["board"] = "played"
    fake_vision["drift"] = "unsure"
    fake_vision["registered"] = _shifted(pose, 3.0)  # the halves do not agree ("knocked" unset)...
    fake_vision["outline_shift"] = (-3.0, 0.0)  # ...and the outline moved the other way: no knock taken
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"] is pose
    fake_vision["outline_shift"] = (2.5, 0.4)  # the outline moved as the registration says
    reader.board_moved()
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"].name == "knocked"
    assert fake_vision["reads"][-1]["previous"] is None


def test_no_knock_is_looked_for_under_a_hand(fake_vision):
    reader = VisionReader(None)
    fake_vision["board"] = "empty"
    reader(IMAGE)
    reader(IMAGE)
    fake_vision["occluded"] = True
    fake_vision["drift"] = "unsure"
    fake_vision["knocked"] = _shifted(fake_vision["reads"][-1]["pose"], 3.0)
    reader.board_moved()
    reader(IMAGE)
    assert "knock_checks" not in fake_vision


def test_a_pose_found_under_a_hand_is_not_kept(fake_vision):
    reader = VisionReader(None)
    fake_vision["occluded"] = True
    fake_vision["found"] = FakePose("under a hand")
    reader(IMAGE)
    fake_vision["occluded"] = False
    fake_vision["found"] = FakePose("clear")
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"] is None  # searched again once the hand was gone
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"].name == "clear"


def test_the_first_confident_empty_board_becomes_the_reference(fake_vision):
    reader = VisionReader(None)
    reader(IMAGE)  # a played board: no reference from it
    assert fake_vision["references"] == 0
    fake_vision["board"] = "empty"
    reader(IMAGE)
    assert fake_vision["references"] == 1
    reader(IMAGE)
    assert fake_vision["reads"][-1]["reference"] == "reference"
    reader(IMAGE)
    assert fake_vision["references"] == 1  # kept, not retaken on every empty board


def test_an_empty_board_with_unsure_phantom_pieces_still_becomes_the_reference(fake_vision):
    """Unfamiliar tile art can read as unsure pieces; only a sure piece means the board is played."""
    reader = VisionReader(None)
    fake_vision["piece_confidence"] = 0.93
    reader(IMAGE)
    assert fake_vision["references"] == 0
    fake_vision["piece_confidence"] = 0.6  # the same board read unsurely: prints, not pieces
    reader(IMAGE)
    assert fake_vision["references"] == 1


def test_a_print_taken_for_a_piece_is_read_again_as_empty_board_tiles(fake_vision):
    """A ring icon read as an unsure dome hides its tile's icon from the search, which then reads
    that tile unsurely: the reference reads the tiles itself, as an empty board's, and this
    frame (which a still board never shows again) is read again against it."""
    reader = VisionReader(None)
    fake_vision["piece_confidence"] = 0.6
    fake_vision["tile_confidence"] = 0.33
    reader(IMAGE)
    assert fake_vision["references"] == 1 and fake_vision["reference_tiles"] is None
    assert fake_vision["reads"][-1]["reference"] == "reference" and len(fake_vision["reads"]) == 2
    reader(IMAGE)
    assert fake_vision["reads"][-1]["previous"] is not None  # the re-read is the reading carried on


def test_an_empty_board_with_doubted_tiles_becomes_the_reference_when_unsure_pieces_show(fake_vision):
    """Tiles read too unsurely keep an empty board from being the reference; when a later board
    shows unsure pieces, that empty board, not the board with the pieces, becomes the reference,
    and the frame is read again against it."""
    reader = VisionReader(None)
    fake_vision["board"], fake_vision["tile_confidence"] = "empty", 0.3
    empty_image = np.full((10, 10, 3), 7, np.uint8)
    reader(empty_image)
    assert fake_vision["references"] == 0
    fake_vision["board"], fake_vision["piece_confidence"] = "played", 0.6
    reader(IMAGE)
    assert fake_vision["references"] == 1 and fake_vision["reference_image"] is empty_image
    assert fake_vision["reads"][-1]["reference"] == "reference"


def _reference_after_two_doubted_boards(fake_vision, second_board):
    """The empty board, then ``second_board``, both with a tile read too unsurely, then unsure pieces:
    the two images and the one the reference was taken from."""
    reader = VisionReader(None)
    fake_vision["board"], fake_vision["tile_confidence"] = "empty", 0.3
    first, second = np.full((10, 10, 3), 7, np.uint8), np.full((10, 10, 3), 8, np.uint8)
    reader(first)
    fake_vision["board"] = second_board
    reader(second)
    fake_vision["board"], fake_vision["piece_confidence"] = "played", 0.6
    reader(IMAGE)
    assert fake_vision["references"] == 1
    return first, second, fake_vision["reference_image"]


def test_of_two_doubted_empty_boards_of_one_array_the_first_becomes_the_reference(fake_vision):
    """The second may already hold the first piece, read so faintly that the board looked empty."""
    first, _, taken = _reference_after_two_doubted_boards(fake_vision, "empty")
    assert taken is first


def test_a_doubted_empty_board_of_another_array_replaces_the_one_remembered(fake_vision):
    """Tiles laid since (another colour on some tile): the newer board is the array as it is now."""
    empty = fake_vision["boards"]["empty"]
    key = next(iter(empty["tiles"]))
    colour = next(c for c in ("red", "blue", "green", "black") if c != empty["tiles"][key]["color"])
    fake_vision["boards"]["relaid"] = dict(empty, tiles={**empty["tiles"], key: {**empty["tiles"][key], "color": colour}})
    _, second, taken = _reference_after_two_doubted_boards(fake_vision, "relaid")
    assert taken is second


def test_a_surely_played_board_after_doubted_tiles_takes_no_reference(fake_vision):
    reader = VisionReader(None)
    fake_vision["board"], fake_vision["tile_confidence"] = "empty", 0.3
    reader(IMAGE)
    fake_vision["board"], fake_vision["piece_confidence"] = "played", 0.97
    reader(IMAGE)
    assert fake_vision["references"] == 0


def test_a_board_the_players_say_is_clear_becomes_the_reference_whatever_it_shows(fake_vision):
    """Print read surely as pieces keeps a board from ever reading empty; the players' word (the
    score button at setup) makes the board last read the reference, its tiles read there."""
    reader = VisionReader(None)
    reader.take_as_clear()  # nothing read yet: nothing to take
    assert fake_vision["references"] == 0
    reader(IMAGE)
    assert fake_vision["references"] == 0  # sure "pieces": not taken by itself
    reader.take_as_clear()
    assert fake_vision["references"] == 1 and fake_vision["reference_tiles"] is None
    reader(IMAGE)
    assert fake_vision["reads"][-1]["reference"] == "reference" and fake_vision["reads"][-1]["previous"] is None


def test_an_unsure_tile_on_a_board_without_pieces_is_no_reference(fake_vision):
    reader = VisionReader(None)
    fake_vision["board"] = "empty"
    fake_vision["tile_confidence"] = 0.33
    reader(IMAGE)
    assert fake_vision["references"] == 0
    fake_vision["tile_confidence"] = 0.95
    reader(IMAGE)
    assert fake_vision["references"] == 1 and fake_vision["reference_tiles"] is not None  # the reading's tiles
    assert len(fake_vision["reads"]) == 2  # nothing to read again


def test_an_empty_board_whose_print_the_network_takes_for_a_piece_is_the_reference_despite_an_unsure_tile(
        fake_vision):
    """Made-up-art game 125 (dark ring icons, icons near the lot edges): the setup board read no
    pieces, its ring icon found in print though the network saw a blue dome there at 0.97, and one
    icon read at 0.37.  Without a reference every later frame read the rings as domes (10 of 38
    moves followed); against the setup board they are its print (38 of 38).  A piece runner-up
    below PRINT_TAKEN_FOR_PIECE is the everyday doubt of a clean board and changes nothing."""
    dome = {"kind": "dome", "color": "blue"}
    fake_vision["board"], fake_vision["tile_confidence"] = "empty", 0.37
    fake_vision["runners_up"] = {"C10": SimpleNamespace(structure=dome, probability=0.3, share=0.3),
                                 "D4": SimpleNamespace(structure=None, probability=0.9, share=0.9)}
    reader = VisionReader(None)
    reader(IMAGE)
    assert fake_vision["references"] == 0
    fake_vision["runners_up"]["C10"] = SimpleNamespace(structure=dome, probability=0.97, share=0.97)
    fake_vision["occluded_lots"] = ("C10",)  # under a hand: no say
    reader(IMAGE)
    assert fake_vision["references"] == 0
    fake_vision["occluded_lots"] = ()
    reads = len(fake_vision["reads"])
    reader(IMAGE)
    assert fake_vision["references"] == 1 and fake_vision["reference_tiles"] is not None  # the reading's tiles
    assert len(fake_vision["reads"]) == reads + 2 and fake_vision["reads"][-1]["reference"] == "reference"


def test_a_board_found_again_after_a_bump_is_registered_on_the_reference(fake_vision):
    """A re-found grid sits a pixel off the setup frame's; against the reference every edge would be a piece."""
    reader = VisionReader(None)
    fake_vision["board"] = "empty"
    reader(IMAGE)  # the first search: there is no reference to register on yet
    assert "aligned" not in fake_vision and fake_vision["references"] == 1
    fake_vision["board"] = "played"
    fake_vision["drift"] = "moved"
    reader.board_moved()
    reader(IMAGE)
    searched, again = fake_vision["reads"][-2:]
    assert searched["pose"] is None and fake_vision["aligned"] == [fake_vision["aligned"][0]]
    assert again["pose"].name == "aligned" and again["reference"] == "reference"
    fake_vision["drift"] = "steady"
    reader(IMAGE)
    assert fake_vision["reads"][-1]["pose"].name == "aligned"  # and kept for the frames after
