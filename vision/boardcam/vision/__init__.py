"""boardcam vision."""
