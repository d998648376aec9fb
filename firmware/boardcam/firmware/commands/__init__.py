"""Subcommand groups of the ``boardcam`` CLI, one module each."""

#: vision.models.TOWER_LOOKS, named here so that building the parser does not import the vision (tested equal)
TOWER_LOOKS = ("opaque", "clear")
