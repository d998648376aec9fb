"""Subcommand groups of the ``boardcam`` CLI, one module each."""
