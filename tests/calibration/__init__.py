"""Tests of boardcam.calibration and `boardcam calibrate`."""
