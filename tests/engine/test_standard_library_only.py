"""The engine must run anywhere Python does: it imports nothing outside the standard library."""

import ast
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine" / "boardcam" / "engine"


def imported_top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_engine_imports_only_the_standard_library_and_itself():
    files = sorted(ENGINE.rglob("*.py"))
    assert files
    for path in files:
        for name in imported_top_level_names(path):
            assert name in sys.stdlib_module_names or name == "boardcam", f"{path.name} imports {name}"


def test_engine_modules_import_only_the_engine_within_boardcam():
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("boardcam."):
                assert node.module.startswith("boardcam.engine"), f"{path.name} imports {node.module}"
