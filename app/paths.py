"""Where the pages' files live: inside the package when installed from a wheel, at the top of a checkout.

The repo keeps one copy of templates/ and static/ at its top; pyproject.toml maps them into the wheel as
app/templates and app/static. So the installed command finds them next to this file, and a checkout (or
an editable install) finds them one folder up.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def asset_dir(name: str) -> Path:
    """The folder `name` ("templates" or "static"), wherever this copy of the app keeps it."""
    for candidate in (PACKAGE / name, PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise RuntimeError(
        f"ResNorm Explorer's {name}/ folder is missing (looked in {PACKAGE} and {PACKAGE.parent}); "
        f"reinstall the package"
    )
