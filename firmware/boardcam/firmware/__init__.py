"""boardcam firmware."""
