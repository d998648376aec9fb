"""Pictures of positions (Pillow), for `boardcam show`, the display and the README."""
