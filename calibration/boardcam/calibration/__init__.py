"""boardcam calibration."""
