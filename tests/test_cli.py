"""`python -m app` / `resnorm-explorer`: options override RESNORM_* variables, --help documents every variable
and its bounds from the settings model, safe defaults, one clear line for bad input."""
from __future__ import annotations

import os
import subprocess
import sys
import pytest

from app import __main__ as cli
from app.settings import Settings, _cpu_count, auto_workers, env_name, get_settings, load_settings


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
        assert " ".join(info.description.split()) in text
    assert "RESNORM_PORT, default 8000, 1 to 65535" in text  # bounds come from the model's constraints
    assert "RESNORM_MAX_BODY_BYTES, default 262144, at least 1024" in text


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
    assert Settings(workers=1, compute_slots=1).threads_per_run() == _cpu_count()
    assert Settings(workers=2, compute_slots=1, torch_threads=0).threads_per_run() == max(1, _cpu_count() // 2)


@pytest.mark.parametrize("argv, named", [
    (["--port", "http"], "RESNORM_PORT"),
    (["--default-lang", "fr"], "RESNORM_DEFAULT_LANG"),
    (["--compute-slots", "0"], "RESNORM_COMPUTE_SLOTS"),
    (["--max-body-bytes", "10"], "RESNORM_MAX_BODY_BYTES"),
    (["--port", "70000"], "RESNORM_PORT"),
    (["--public-url", "192.168.1.20:8000"], "RESNORM_PUBLIC_URL"),
])
def test_bad_values_are_one_line_errors_naming_the_setting(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.resolve(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1, err
    assert named not in os.environ  # a refused option never reaches the workers


@pytest.mark.parametrize("variable, value, says", [
    ("RESNORM_QUEUE_TIMEOUT_S", "soon", "expected float, got 'soon'"),
    ("RESNORM_PORT", "0", "must be >= 1, got 0"),
    ("RESNORM_DEFAULT_LANG", "fr", "must be one of en, zh, got 'fr'"),
])
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
    cli.main(["--workers", "3", "--port", "8123"])
    target, options = calls[0]
    assert target == "app.main:app"
    assert (options["workers"], options["port"], options["host"]) == (3, 8123, "127.0.0.1")
    assert options["timeout_keep_alive"] > 10  # longer than a 503's Retry-After: no race with a retry
