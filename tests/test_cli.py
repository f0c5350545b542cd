"""`python -m app` / `resnorm-explorer`: options override RESNORM_* variables, --help documents every variable
and its bounds from the settings model, safe defaults, one clear line for bad input."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from app import __main__ as cli
from app.settings import Settings, _cpu_count, auto_workers, env_name, get_settings, load_settings
from tools.localserver import free_port, local_server

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_env():
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith("RESNORM_"):
            del os.environ[name]
    yield
    os.environ.clear()
    os.environ.update(saved)
    get_settings.cache_clear()


def test_help_documents_every_variable():
    result = subprocess.run([sys.executable, "-m", "app", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())  # argparse wraps lines
    for name, info in Settings.model_fields.items():
        assert env_name(name) in text
        assert "--" + name.replace("_", "-") in text
        assert info.description, name  # every setting explains itself in --help
        assert " ".join(info.description.split()) in text
    assert "RESNORM_PORT, default 8000; [1, 65535]" in text  # bounds come from the model's constraints
    assert "RESNORM_MAX_BODY_BYTES, default 262144; [1024, inf]" in text


def test_default_run_is_private_to_this_machine():
    settings, _ = cli.resolve([])
    assert settings.host == "127.0.0.1"
    assert settings.workers == 1


def test_option_overrides_variable_and_reaches_every_worker():
    os.environ["RESNORM_PORT"] = "9000"
    os.environ["RESNORM_CACHE_SIZE"] = "7"
    settings, _ = cli.resolve(["--port", "9100", "--default-lang", "zh"])
    assert (settings.port, settings.cache_size, settings.default_lang) == (9100, 7, "zh")
    # uvicorn's worker processes read the environment: it must now say what the command line said
    assert os.environ["RESNORM_PORT"] == "9100"
    assert get_settings() == settings


def test_zero_workers_means_one_per_core_resolved_once():
    settings, _ = cli.resolve(["--workers", "0"])
    assert settings.workers == auto_workers() >= 1
    assert os.environ["RESNORM_WORKERS"] == str(settings.workers)


def test_threads_do_not_oversubscribe_the_cores():
    assert Settings(workers=4, compute_slots=2).threads_per_run() == max(1, _cpu_count() // 8)
    assert Settings(torch_threads=3).threads_per_run() == 3
    assert Settings(workers=1, compute_slots=1).threads_per_run() == _cpu_count()
    assert Settings(workers=2, compute_slots=1, torch_threads=0).threads_per_run() == max(1, _cpu_count() // 2)


@pytest.mark.parametrize(
    "argv, named",
    [
        (["--port", "http"], "RESNORM_PORT"),
        (["--default-lang", "fr"], "RESNORM_DEFAULT_LANG"),
        (["--compute-slots", "0"], "RESNORM_COMPUTE_SLOTS"),
        (["--max-body-bytes", "10"], "RESNORM_MAX_BODY_BYTES"),
        (["--port", "70000"], "RESNORM_PORT"),
        (["--public-url", "192.168.1.20:8000"], "RESNORM_PUBLIC_URL"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_setting(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.resolve(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1, err
    assert named not in os.environ  # a refused option never reaches the workers


@pytest.mark.parametrize(
    "variable, value, says",
    [
        ("RESNORM_QUEUE_TIMEOUT_S", "soon", "expected float, got 'soon'"),
        ("RESNORM_PORT", "0", "must be >= 1, got 0"),
        ("RESNORM_DEFAULT_LANG", "fr", "must be one of en, zh, got 'fr'"),
    ],
)
def test_bad_variable_is_named_with_what_it_allows(variable, value, says, monkeypatch):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"^{variable}: {says}$"):
        load_settings()


def test_blank_variable_means_the_default(monkeypatch):
    monkeypatch.setenv("RESNORM_PORT", "")
    monkeypatch.setenv("RESNORM_PUBLIC_URL", "")
    settings = load_settings()
    assert (settings.port, settings.public_url) == (8000, None)


def test_public_url_is_a_setting_for_docker(monkeypatch):
    assert load_settings().public_url is None  # outside Docker the server finds its own address
    monkeypatch.setenv("RESNORM_PUBLIC_URL", "http://192.168.1.20:8000/")
    assert load_settings().public_url == "http://192.168.1.20:8000"  # one form, so links join without "//"
    settings, _ = cli.resolve(["--public-url", "https://lecture.example.edu"])
    assert get_settings().public_url == settings.public_url == "https://lecture.example.edu"


def test_main_serves_the_app_with_the_asked_workers(monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: calls.append((target, kw)))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    port = free_port()
    cli.main(["--workers", "3", "--port", str(port)])
    target, options = calls[0]
    assert target == "app.main:app"
    assert (options["workers"], options["port"], options["host"]) == (3, port, "127.0.0.1")
    assert options["timeout_keep_alive"] > 10  # longer than a 503's Retry-After: no race with a retry


def child_env() -> dict[str, str]:
    """This checkout's app for a child process, whatever folder it starts in (RESNORM_* already cleared)."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RESNORM_TORCH_THREADS": "1",
        "RESNORM_COMPUTE_SLOTS": "1",
        "RESNORM_WARM": "0",  # and not the user's own cache folder:
        "RESNORM_CACHE_DIR": os.path.join(tempfile.gettempdir(), "resnorm-explorer-test-cache"),
    }


def test_a_busy_port_is_one_line_not_a_traceback():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "app", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env=child_env(),
        )
    assert result.returncode == 1
    assert result.stderr == (
        f"python -m app: error: port {port} on 127.0.0.1 is already in use (is ResNorm Explorer "
        f"already running?); choose another with --port or RESNORM_PORT\n"
    )


@pytest.fixture
def read_only_project(tmp_path):
    """The project's Makefile, pyproject.toml and constraints.txt in a folder nobody may write, root included (as
    in CI): a read-only bind mount for root, mode 555 for anyone else."""
    if os.name == "nt":
        pytest.skip("read-only folders are made with POSIX calls here")
    source = tmp_path / "project"
    source.mkdir()
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, source / name)
    if os.geteuid() != 0:
        source.chmod(0o555)
        yield source
        source.chmod(0o755)
        return
    frozen = tmp_path / "read-only"
    frozen.mkdir()
    for step in (["mount", "--bind", source, frozen], ["mount", "-o", "remount,bind,ro", frozen]):
        if subprocess.run([str(a) for a in step], capture_output=True).returncode != 0:
            subprocess.run(["umount", str(frozen)], capture_output=True)
            pytest.fail(f"could not make a read-only folder with {' '.join(map(str, step))}")
    try:
        yield frozen
    finally:
        subprocess.run(["umount", str(frozen)], check=True)


def test_the_server_writes_nothing_to_the_folder_it_starts_in(read_only_project):
    assert not os.access(read_only_project, os.W_OK)
    port = free_port()
    with (
        local_server(
            ["-m", "app", "--port", str(port), "--log-level", "warning"],
            port,
            env=child_env(),
            cwd=str(read_only_project),
        ) as base,
        urllib.request.urlopen(base + "/api/trace?depth=3", timeout=60) as response,
    ):
        trace = json.loads(response.read())
    assert len(trace["layers"]) == 3 and trace["layers"][0]["grad_norm"] > 0


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this system (see docs/install.md)")
def test_make_in_a_read_only_folder_is_one_line_before_anything_is_made(read_only_project):
    # As a user types it: not inside another make (under `make test`, MAKELEVEL makes make print its directory).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    result = subprocess.run(["make", "run"], cwd=read_only_project, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"cannot create .venv: {read_only_project} is read-only" in result.stderr
    assert not (read_only_project / ".venv").exists()


def test_the_command_and_serves_options_load_no_torch():
    """Serving starts without torch in the web process (compute runs in processes of their own), and the options
    shared with trace and sweep (app/cli/options.py, their machine budget) must not bring it in."""
    code = "import sys, app.cli, app.cli.options, app.cli.serve; print(sorted({'torch', 'app.notebook'} & set(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
