"""Hatchling build hook: `pip install -e .` makes `import resnorm_explorer` work too, from this checkout's app/.

The wheel renames app/ to resnorm_explorer (pyproject.toml's `sources`), but hatchling's editable install only
puts the checkout on sys.path, which gives `import app` and not the project's name. This hook adds two files to
the editable wheel alone: a .pth line that imports a small finder, and the finder, which answers
`import resnorm_explorer` with this checkout's app/ package loaded under that name (its modules import each other
relatively, so everything below it runs as resnorm_explorer.*, and compute processes unpickle the same names).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

FINDER = '''"""Written by hatch_build.py for an editable install: `import resnorm_explorer` loads {app}."""

import importlib.abc
import importlib.util
import sys

APP = {app!r}


class ResnormExplorerAlias(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "resnorm_explorer":
            return None
        return importlib.util.spec_from_file_location(name, APP + "/__init__.py", submodule_search_locations=[APP])


if not any(isinstance(f, ResnormExplorerAlias) for f in sys.meta_path):
    sys.meta_path.append(ResnormExplorerAlias())
'''


class EditableAlias(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        folder = Path(tempfile.mkdtemp(prefix="resnorm-editable-"))
        app = (Path(self.root) / "app").resolve().as_posix()
        (folder / "_resnorm_explorer_alias.py").write_text(FINDER.format(app=app), encoding="utf-8")
        (folder / "_resnorm_explorer_alias.pth").write_text("import _resnorm_explorer_alias\n", encoding="utf-8")
        # A non-empty map replaces force-include in the editable wheel: templates/ and static/ stay in the checkout.
        build_data["force_include_editable"] = {
            str(folder / name): name for name in ("_resnorm_explorer_alias.py", "_resnorm_explorer_alias.pth")
        }
