import json

import cv2
import numpy as np

from boardcam.firmware.cli import main


def test_read_prints_position_and_writes_overlay(make_scene, tmp_path, capsys):
    sc = make_scene({"C3": {"kind": "tower", "color": "red", "cap": "white"}}, edition="D", table="plain")
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), sc.image)
    overlay = tmp_path / "overlay.png"
    assert main(["read", str(frame), "--overlay", str(overlay)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["game"] == "alien-city" and "confidence" in doc and "timing_ms" in doc
    drawn = cv2.imread(str(overlay))
    assert drawn.shape == sc.image.shape and not np.array_equal(drawn, sc.image)


def test_read_errors_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["read", str(tmp_path / "missing.png")]) == 2
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a picture")
    assert main(["read", str(junk)]) == 2
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), (90, 140, 170), np.uint8))
    assert main(["read", str(blank)]) == 2
    bad_cal = tmp_path / "cal.json"
    bad_cal.write_text("{ not json")
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), np.full((480, 640, 3), (90, 140, 170), np.uint8))
    assert main(["read", str(frame), "--calibration", str(bad_cal)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("boardcam: error:") for line in err)
    assert "cal.json" in err[3]


def test_a_greyscale_picture_is_refused_in_one_line(make_scene, tmp_path, capsys):
    """Guilds and pieces are told apart by colour: a monochrome camera's frame is bad input, not a board."""
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.cvtColor(make_scene({}, edition="D", table="plain").image, cv2.COLOR_BGR2GRAY))
    assert main(["read", str(grey)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"boardcam: error: image: {str(grey)!r} is a greyscale picture; boardcam needs colour"]


def test_read_against_an_empty_frame(make_scene, tmp_path, capsys):
    pieces = {"C3": {"kind": "tower", "color": "red", "cap": "white"}, "F8": {"kind": "dome", "color": "blue"},
              "B2": {"kind": "tower", "color": "green"}, "E5": {"kind": "dome", "color": "black"}}
    empty = make_scene({}, edition="D", table="plain", hand=None)
    full = make_scene(pieces, edition="D", table="plain", hand=None)
    cv2.imwrite(str(tmp_path / "empty.png"), empty.image)
    # the camera nudged a few pixels between the two frames: the empty frame's pose is registered on this one
    cv2.imwrite(str(tmp_path / "full.png"), np.roll(full.image, (4, -5), axis=(0, 1)))
    assert main(["read", str(tmp_path / "full.png"), "--empty", str(tmp_path / "empty.png")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["tiles"]) == 20 and len(doc["confidence"]["lots"]) == 80
    assert {lot: (s["kind"], s["color"], s.get("cap")) for lot, s in doc["structures"].items()} == {
        lot: (s["kind"], s["color"], s.get("cap")) for lot, s in pieces.items()}
    cv2.imwrite(str(tmp_path / "small.png"), cv2.resize(empty.image, (320, 240)))
    assert main(["read", str(tmp_path / "full.png"), "--empty", str(tmp_path / "small.png")]) == 2
    assert capsys.readouterr().err.startswith("boardcam: error: --empty")


def test_read_warns_about_a_board_no_legal_game_leaves(make_scene, tmp_path, capsys):
    walled = {lot: {"kind": "tower", "color": "red"} for lot in ("A1", "B1", "A2")}  # A1 faces no street
    frame = tmp_path / "walled.png"
    cv2.imwrite(str(frame), make_scene(walled, edition="D", table="plain").image)
    assert main(["read", str(frame)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["structures"].keys() >= {"A1", "B1", "A2"}
    assert "boardcam: warning: no legal game leaves this board: the structure on A1 faces no street" in captured.err
    legal = tmp_path / "legal.png"
    cv2.imwrite(str(legal), make_scene({"B1": {"kind": "dome", "color": "red"}}, edition="D", table="plain").image)
    assert main(["read", str(legal)]) == 0
    assert "no legal game" not in capsys.readouterr().err


def test_read_is_told_the_towers_over_the_calibration(make_scene, tmp_path, capsys, monkeypatch):
    from boardcam.vision import reader

    sc = make_scene({"C3": {"kind": "tower", "color": "red", "cap": None}}, edition="D", table="plain")
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), sc.image)
    told = []
    real = reader.analyse
    monkeypatch.setattr(reader, "analyse", lambda *a, **kw: told.append(a[2]) or real(*a, **kw))
    assert main(["read", str(frame), "--towers", "clear"]) == 0
    assert json.loads(capsys.readouterr().out)["game"] == "alien-city"
    assert told and all(appearance.towers == "clear" for appearance in told)
