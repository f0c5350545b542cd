"""`make install-check`: what `pip install "resnorm-explorer[models]"` installs on every Python the package supports.

For each Python 3.X of pyproject.toml's requires-python, pip resolves the project with its [models] extra as for a
fresh environment of that Python (`pip install --dry-run --report - --python-version 3.X --only-binary=:all:
--target <empty>`: wheels only, the tags and Requires-Python of 3.X) and nothing is installed. Environment markers
are evaluated by the interpreter that runs pip, so each 3.X is resolved by that Python's own pip when one is on
PATH (python3.X, pyenv's shims included); otherwise by the newest Python here, and the table says so. pip uses its
own configuration (index, constraints), so this needs the package index; it takes minutes, hence not in the suite
(tests/test_install.py checks the logic below on recorded resolutions).

A Python passes when the resolution succeeds, has torch, and has every package of the extra (app/services/
real_models.py's EXTRA_PACKAGES, which /models and POST /api/real_trace ask for) in the versions pyproject.toml
declares: then the one install line the server and docs/install.md give is true on that Python.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as pip carries it
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SHOWN = ("torch", "transformers", "tokenizers", "huggingface-hub", "safetensors", "gguf", "accelerate", "numpy")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def supported_minors(requires_python: str) -> list[int]:
    """3.10..3.14 from '>=3.10,<3.15'."""
    low = re.search(r">=\s*3\.(\d+)", requires_python)
    end = re.search(r"<\s*3\.(\d+)", requires_python)
    if not (low and end):
        raise ValueError(f"requires-python {requires_python!r}: expected >=3.A,<3.B")
    return list(range(int(low.group(1)), int(end.group(1))))


def extra_requirements(project: dict, extra: str = "models") -> list[Requirement]:
    return [Requirement(line) for line in project["project"]["optional-dependencies"][extra]]


def markers_allow(requirement: Requirement, minor: int) -> bool:
    """Whether the requirement applies on Python 3.minor (its environment marker, if any, evaluated there)."""
    if requirement.marker is None:
        return True
    return requirement.marker.evaluate({"python_version": f"3.{minor}", "python_full_version": f"3.{minor}.0"})


@dataclass
class Resolution:
    minor: int
    python: str  # the interpreter that ran pip
    markers_of: str  # the Python its markers were evaluated for ("3.13")
    versions: dict[str, str]  # canonical name -> version ({} when pip failed)
    error: str = ""
    seconds: float = 0.0


def problems(resolution: Resolution, extra: list[Requirement]) -> list[str]:
    """Why the install line would not give a working [models] on this Python (empty: it does)."""
    if resolution.error:
        return [f"pip could not resolve: {resolution.error}"]
    found = resolution.versions
    out = [] if "torch" in found else ["no torch"]
    for requirement in extra:
        name = canonicalize_name(requirement.name)
        if name not in found:
            out.append(f"the [models] extra installs no {name}")
        elif found[name] not in requirement.specifier:
            out.append(f"{name} {found[name]} is outside the declared {requirement.specifier}")
    return out


def pythons(minor: int) -> list[str]:
    """Pythons 3.minor here: on PATH, then pyenv's own (its shims run only the version pyenv has selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    installed = sorted(str(p) for p in pyenv.glob(f"3.{minor}.*/bin/python3.{minor}"))
    found = [shutil.which(f"python3.{minor}") or "", *installed]
    return [python for python in found if python and _version_of(python) == f"3.{minor}"]


def interpreter(minor: int) -> tuple[str, str]:
    """The Python that runs pip for 3.minor, and the version its markers stand for: 3.minor's own, else the newest."""
    for other in [minor, *range(20, 7, -1)]:
        for python in pythons(other)[:1]:
            return python, f"3.{other}"
    return sys.executable, f"3.{sys.version_info.minor}"


def _version_of(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def resolve(minor: int, target: str = ".[models]") -> Resolution:
    python, markers_of = interpreter(minor)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="resnorm-resolve-") as empty:
        command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", "-"]
        command += ["--python-version", f"3.{minor}", "--only-binary=:all:", "--target", empty, target]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip() and "is ignored" not in line]
        return Resolution(minor, python, markers_of, {}, (lines or ["no message"])[-1].strip(), seconds)
    report = json.loads(done.stdout)
    versions = {str(canonicalize_name(i["metadata"]["name"])): str(i["metadata"]["version"]) for i in report["install"]}
    return Resolution(minor, python, markers_of, versions, "", seconds)


def main() -> int:
    project = pyproject()
    minors = supported_minors(project["project"]["requires-python"])
    extra = extra_requirements(project)
    print(f'pip install ".[models]" resolved for Python 3.{minors[0]}-3.{minors[-1]} (dry run, wheels only)')
    with ThreadPoolExecutor(max_workers=3) as pool:
        resolutions = list(pool.map(resolve, minors))
    print(f"{'Python':8} {'markers':8} " + " ".join(f"{name:>15}" for name in SHOWN) + "  seconds  verdict")
    failed = 0
    for res in resolutions:
        found = problems(res, extra)
        failed += bool(found)
        shown = " ".join(f"{res.versions.get(name, '-'):>15}" for name in SHOWN)
        print(f"3.{res.minor:<6} {res.markers_of:8} {shown} {res.seconds:8.0f}  {'; '.join(found) or 'ok'}")
    print(f"{len(minors) - failed} of {len(minors)} Pythons get a working [models] extra from the one install line")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
