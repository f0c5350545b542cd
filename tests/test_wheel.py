"""The user's path: build the sdist and the wheel, install the wheel into a fresh virtualenv, start
`resnorm-explorer` from an unrelated folder, and load every page, embed, script and a trace from it.

The fresh venv already "has" a torch, as a user's environment does: torch, fastapi and the rest come from this
test's own environment through a .pth file placed after the venv's site-packages. pip then installs the wheel with
its dependencies resolved but no index (`--no-index`): every requirement must be met by what is there, so nothing
is downloaded, the check takes seconds, and the user's torch is seen to stay as it was. The package can only come
from the wheel: it runs in a temporary folder far from this checkout, one holding its own `app/` package, as a
notebook started inside a FastAPI project would.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tools.localserver import free_port, local_server

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"
EXE = ".exe" if os.name == "nt" else ""
ASSET_IN_HTML = re.compile(r'(?:src|href)="(/(?:static|vendor)/[^"?#]+)')
ASSET_IN_JS = re.compile(r'(?:from|import)\s*\(?\s*[\'"](\.{1,2}/[^\'"]+)[\'"]|[\'"](/static/[^\'"?#]+)[\'"]')


def run(args: list, **kwargs) -> str:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=180, **kwargs)
    assert result.returncode == 0, f"{args[:4]} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result.stdout


def outside_env() -> dict[str, str]:
    """This environment without anything that could point Python at the checkout or set the server up."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("RESNORM_") and k not in ("PYTHONPATH", "PYTHONHOME")
    }
    return {
        **env,
        "RESNORM_TORCH_THREADS": "1",
        "RESNORM_COMPUTE_SLOTS": "1",
        "RESNORM_WARM": "0",
        "RESNORM_CACHE_DIR": os.path.join(tempfile.gettempdir(), "resnorm-explorer-test-cache"),
    }


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """`python -m build`: the sdist first, then the wheel built from that sdist (so the sdist is complete too)."""
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT])
    return out


TORCH_OF = "import torch; print(torch.__version__, torch.__file__)"


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    """A venv that has a torch (this environment's), then the wheel installed into it by pip with its dependencies."""
    home = tmp_path_factory.mktemp("venv") / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", home])
    python = home / BIN / f"python{EXE}"
    site_packages = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    shared = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site_packages / "zz_shared_dependencies.pth").write_text("\n".join(shared) + "\n")
    (home / "torch-before.txt").write_text(run([python, "-c", TORCH_OF]))
    wheel = next(dist.glob("*.whl"))
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index", wheel])
    (home / "installed.txt").write_text("\n".join(sorted(p.name for p in site_packages.iterdir())))
    return home


@pytest.fixture(scope="module")
def installed_server(venv, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    port = free_port()
    with local_server(
        ["--port", str(port), "--log-level", "warning"],
        port,
        env=outside_env(),
        cwd=str(elsewhere),
        program=str(venv / BIN / f"resnorm-explorer{EXE}"),
        timeout_s=90,
    ) as base:
        yield base


def get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.headers["content-type"], response.read()


def test_wheel_and_sdist_carry_the_pages_and_the_command(dist):
    wheel = zipfile.ZipFile(next(dist.glob("*.whl")))
    names = set(wheel.namelist())
    for folder in ("templates", "static"):
        expected = {f"resnorm_explorer/{folder}/{name}" for name in files_under(ROOT / folder)}
        assert expected and expected <= names, sorted(expected - names)
    assert {f"resnorm_explorer/{p.relative_to(ROOT / 'app').as_posix()}" for p in (ROOT / "app").rglob("*.py")} <= names
    assert "resnorm_explorer/py.typed" in names  # PEP 561: type checkers read the Python API's types
    top_level = {n.split("/")[0] for n in names}
    assert top_level == {"resnorm_explorer", "resnorm_explorer-0.1.0.dist-info"}, top_level  # nothing named app
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "resnorm-explorer = resnorm_explorer.cli:command" in wheel.read(entry_points).decode()
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    torch_requirement = next(line for line in metadata.splitlines() if line.startswith("Requires-Dist: torch"))
    assert torch_requirement == "Requires-Dist: torch<3,>=2.6"  # a range: 2.13.0 (CI's) and 2.15.0 both satisfy it
    with tarfile.open(next(dist.glob("*.tar.gz"))) as sdist:
        top_level = {"/".join(n.split("/")[1:]) for n in sdist.getnames()}
    assert {f"templates/{n}" for n in files_under(ROOT / "templates")} <= top_level
    assert {f"static/{n}" for n in files_under(ROOT / "static")} <= top_level


def test_installing_keeps_the_users_torch_and_adds_nothing_named_app(venv):
    installed = (venv / "installed.txt").read_text().split()
    assert [n for n in installed if n != "zz_shared_dependencies.pth"] == [
        "resnorm_explorer",
        "resnorm_explorer-0.1.0.dist-info",
    ]
    assert run([venv / BIN / f"python{EXE}", "-c", TORCH_OF]) == (venv / "torch-before.txt").read_text()


@pytest.fixture
def project_with_its_own_app(tmp_path) -> Path:
    """A folder like a FastAPI project's, with its own `app` package, where a notebook is started."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("WHOSE = 'the project next to the notebook'\n")
    return tmp_path


def test_the_package_imports_under_its_own_name_beside_another_app(venv, project_with_its_own_app):
    out = run(
        [
            venv / BIN / f"python{EXE}",
            "-c",
            "import sys, resnorm_explorer, resnorm_explorer.paths as p, app; "
            "print('torch' in sys.modules); print(app.WHOSE); print(resnorm_explorer.__file__); "
            "print(p.asset_dir('templates')); print(p.asset_dir('static'))",
        ],
        cwd=project_with_its_own_app,
        env=outside_env(),
    )
    torch_loaded, whose, *paths = out.strip().split("\n")
    assert torch_loaded == "False" and whose == "the project next to the notebook"
    for line in paths:
        assert Path(line).resolve().is_relative_to(venv.resolve()), out
    for program in ([venv / BIN / f"resnorm-explorer{EXE}"], [venv / BIN / f"python{EXE}", "-m", "resnorm_explorer"]):
        help_text = run([*program, "--help"], cwd=project_with_its_own_app, env=outside_env())
        assert help_text.startswith("usage: ") and "RESNORM_PUBLIC_URL" in help_text


def test_the_installed_command_prints_post_api_traces_numbers(venv, project_with_its_own_app, client):
    out = run(
        [venv / BIN / f"resnorm-explorer{EXE}", "trace", "--depth", "6", "--norm-position", "post", "--json"],
        cwd=project_with_its_own_app,
        env=outside_env(),
    )
    printed = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    reference = client.post("/api/trace", json={"depth": 6, "norm_position": "post"}).json()
    assert printed["layers"] == reference["layers"] and printed["loss"] == reference["loss"]


def page_urls() -> list[str]:
    from app.pages import charts, pages

    return [p.path for p in pages().values()] + ["/?lang=zh"] + [f"/embed/{chart}" for chart in charts()]


def assets_of(path: str, text: str) -> set[str]:
    """Every /static or /vendor file this HTML or JS file loads, as an absolute URL path."""
    if not path.endswith(".js"):
        return set(ASSET_IN_HTML.findall(text))
    return {
        absolute or posixpath.normpath(posixpath.join(posixpath.dirname(path), relative))
        for relative, absolute in ASSET_IN_JS.findall(text)
    }


def test_every_page_embed_and_script_is_served_from_the_wheel(installed_server):
    to_fetch, fetched = set(), {}
    for path in page_urls():
        status, content_type, body = get(installed_server + path)
        assert status == 200 and content_type.startswith("text/html"), path
        to_fetch |= assets_of(path, body.decode())
    while to_fetch:  # follow the ES module imports: the whole graph must be in the wheel
        path = to_fetch.pop()
        status, _, body = get(installed_server + path)
        assert status == 200, path
        fetched[path] = body
        if path.endswith(".js") and path.startswith("/static/"):
            to_fetch |= assets_of(path, body.decode()) - fetched.keys()
    plotly = [p for p in fetched if re.fullmatch(r"/vendor/plotly-[\w.-]+\.min\.js", p)]
    assert len(plotly) == 1 and len(fetched[plotly[0]]) > 1_000_000
    # Pages link versioned URLs (/static/v/<digest of static/>/...): the same files, cached for a year.
    statics = {re.sub(r"^/static/v/[0-9a-f]+/", "/static/", p): p for p in fetched if p.startswith("/static/")}
    assert {"/static/js/charts.js", "/static/js/state.js", "/static/css/app.css"} <= statics.keys()
    for path, url in statics.items():  # the wheel serves the very files of this checkout
        assert fetched[url] == (ROOT / path.lstrip("/")).read_bytes(), path


def test_the_installed_server_computes_the_same_trace_as_the_checkout(installed_server, client):
    query = "/api/trace?depth=6&norm_position=post"
    status, content_type, body = get(installed_server + query)
    installed = json.loads(body, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    reference = client.get(query).json()
    assert status == 200 and content_type.startswith("application/json")
    assert len(installed["layers"]) == 6 and math.isfinite(installed["loss"])
    assert installed["loss"] == pytest.approx(reference["loss"], rel=1e-6)
    for ours, theirs in zip(installed["layers"], reference["layers"], strict=True):
        assert ours["grad_norm"] == pytest.approx(theirs["grad_norm"], rel=1e-5)


def test_an_editable_install_imports_the_checkout_as_resnorm_explorer(tmp_path, project_with_its_own_app):
    """`pip install -e .` (what make does): hatch_build.py adds a finder, so `import resnorm_explorer` loads this
    checkout's app/ under the project's name, and functions pickled for compute processes carry that name."""
    build = "import sys, hatchling.build as backend; print(backend.build_editable(sys.argv[1]))"
    wheel = zipfile.ZipFile(tmp_path / run([sys.executable, "-c", build, tmp_path], cwd=ROOT).strip())
    names = set(wheel.namelist())
    assert {"_resnorm_explorer_alias.pth", "_resnorm_explorer_alias.py"} <= names
    assert not any(n.startswith("resnorm_explorer/") for n in names)  # templates/ and static/ stay in the checkout
    assert wheel.read("_resnorm_explorer_alias.pth").decode() == "import _resnorm_explorer_alias\n"
    unpacked = tmp_path / "site"
    wheel.extractall(unpacked)
    out = run(
        [
            sys.executable,
            "-c",
            "import sys, site, pickle; site.addsitedir(sys.argv[1]); import resnorm_explorer, app; "
            "from resnorm_explorer.experiments.trace import run_trace; "
            "print(resnorm_explorer.__file__); print(app.WHOSE); print(pickle.dumps(run_trace).decode('latin-1'))",
            unpacked,
        ],
        cwd=project_with_its_own_app,
        env=outside_env(),
    )
    where, whose, pickled = out.split("\n", 2)
    assert Path(where) == ROOT / "app" / "__init__.py" and whose == "the project next to the notebook"
    assert "resnorm_explorer.experiments.trace" in pickled and "app.experiments" not in pickled
