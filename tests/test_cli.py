"""`python -m app`: options override RESNORM_* variables, --help documents every variable, safe defaults."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields

import pytest

from app import __main__ as cli
from app.settings import Settings, auto_workers, env_name, get_settings, settings_from_env


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
    for f in fields(Settings):
        assert env_name(f.name) in result.stdout
        assert "--" + f.name.replace("_", "-") in result.stdout


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
    settings = Settings(workers=4, compute_slots=2)
    assert settings.threads_per_run() >= 1
    assert Settings(torch_threads=3).threads_per_run() == 3
    cores = len(os.sched_getaffinity(0))
    assert Settings(workers=1, compute_slots=1).threads_per_run() == cores


@pytest.mark.parametrize("argv, named", [
    (["--port", "http"], "RESNORM_PORT"),
    (["--default-lang", "fr"], "RESNORM_DEFAULT_LANG"),
    (["--compute-slots", "0"], "RESNORM_COMPUTE_SLOTS"),
    (["--max-body-bytes", "10"], "RESNORM_MAX_BODY_BYTES"),
])
def test_bad_values_are_usage_errors_naming_the_setting(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.resolve(argv)
    assert exit_info.value.code == 2
    assert named in capsys.readouterr().err


def test_bad_variable_is_named():
    with pytest.raises(ValueError, match="RESNORM_QUEUE_TIMEOUT_S"):
        settings_from_env({"RESNORM_QUEUE_TIMEOUT_S": "soon"})


def test_main_serves_the_app_with_the_asked_workers(monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: calls.append((target, kw)))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    cli.main(["--workers", "3", "--port", "8123"])
    target, options = calls[0]
    assert target == "app.main:app"
    assert (options["workers"], options["port"], options["host"]) == (3, 8123, "127.0.0.1")
    assert options["timeout_keep_alive"] > 10  # longer than a 503's Retry-After: no race with a retry
