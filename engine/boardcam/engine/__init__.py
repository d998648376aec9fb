"""boardcam engine."""
