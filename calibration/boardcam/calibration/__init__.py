"""boardcam calibration: from "camera on a stand" to "it reads my board" in a few minutes.

One module per step, each usable on its own and from ``boardcam calibrate …``:

* :mod:`~boardcam.calibration.target`   printable ChArUco target (``calibrate target``)
* :mod:`~boardcam.calibration.camera`   intrinsics from target views, with refusals (``calibrate camera``)
* :mod:`~boardcam.calibration.mat`      printable marker mat from vision's MatSpec (``calibrate mat``)
* :mod:`~boardcam.calibration.board`    pose, row-1 side, layout and tile colours (``calibrate board``)
* :mod:`~boardcam.calibration.pieces`   the teach step: piece colours under this light (``calibrate pieces``)
* :mod:`~boardcam.calibration.settings` fixed exposure, gain, white balance, focus (``calibrate settings``)
* :mod:`~boardcam.calibration.drift`    has the board been bumped since its pose was fixed?
* :mod:`~boardcam.calibration.store`    the one versioned calibration file, written atomically

Nothing here touches a camera at import; OpenCV-heavy modules are imported
by the commands that need them.
"""
