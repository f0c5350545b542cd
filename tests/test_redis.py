"""Several servers, one Redis: what one computed, the other answers from the shared cache; without Redis,
requests still work on the local cache and /api/health says Redis is down."""

from __future__ import annotations

import os
import socket
import time
from contextlib import ExitStack

import httpx
import pytest

from tools.localserver import free_port, local_server, uvicorn_args

BODY = {"depth": 6, "seed": 2_024}


def _server_env(tmp_path, name: str, redis_url: str) -> dict[str, str]:
    """Each server its own disk cache (two machines share nothing but Redis); threads keep the test light."""
    return {
        **os.environ,
        "RESNORM_CACHE_DIR": str(tmp_path / name),
        "RESNORM_REDIS_URL": redis_url,
        "RESNORM_COMPUTE_PROCESSES": "0",
    }


def _start(stack: ExitStack, env: dict[str, str]) -> str:
    port = free_port()
    return stack.enter_context(local_server(uvicorn_args(port), port, env=env))


def test_what_one_server_computed_the_other_answers_from_redis(tmp_path, redis_url):
    with ExitStack() as stack:
        first = _start(stack, _server_env(tmp_path, "a", redis_url))
        second = _start(stack, _server_env(tmp_path, "b", redis_url))
        computed = httpx.post(f"{first}/api/trace", json=BODY, timeout=60)
        _wait_until_stored(first)  # Redis is written while the first answer travels
        shared = httpx.post(f"{second}/api/trace", json=BODY, timeout=60)
        again = httpx.post(f"{second}/api/trace", json=BODY, timeout=60)
        health = httpx.get(f"{second}/api/health", timeout=10).json()
    assert computed.headers["x-resnorm-cache"] == "computed"
    assert shared.headers["x-resnorm-cache"] == "redis" and again.headers["x-resnorm-cache"] == "memory"
    assert shared.json()["layers"] == computed.json()["layers"]
    assert health["redis"]["up"] is True and health["compute"]["computed"] == 0
    assert health["compute"]["cache"]["hits"]["redis"] == 1


def _wait_until_stored(base: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while httpx.get(f"{base}/api/health", timeout=10).json()["compute"]["cache"]["stored"] < 1:
        assert time.monotonic() < deadline, "the result never reached the shared cache"
        time.sleep(0.05)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # released at once: nothing listens there


def test_without_redis_requests_work_on_the_local_cache_and_health_says_it_is_down(tmp_path):
    with ExitStack() as stack:
        base = _start(stack, _server_env(tmp_path, "c", f"redis://127.0.0.1:{_closed_port()}/0"))
        first = httpx.post(f"{base}/api/trace", json=BODY, timeout=60)
        second = httpx.post(f"{base}/api/trace", json=BODY, timeout=60)
        health = httpx.get(f"{base}/api/health", timeout=10)
    assert first.status_code == second.status_code == health.status_code == 200
    assert first.headers["x-resnorm-cache"] == "computed" and second.headers["x-resnorm-cache"] == "memory"
    redis = health.json()["redis"]
    assert redis["up"] is False and "Connection" in redis["error"] and "127.0.0.1" in redis["url"]


def test_a_password_never_appears_in_health():
    from app.services.redis_layer import redacted

    assert redacted("redis://user:s3cret@cache.internal:6380/2") == "redis://cache.internal:6380/2"


@pytest.mark.parametrize("value,expected", [("0", False), ("off", False), ("1", True), ("yes", True)])
def test_switches_read_the_usual_spellings_and_redis_is_off_by_default(value, expected, monkeypatch):
    from app.settings import load_settings

    monkeypatch.delenv("RESNORM_REDIS_URL", raising=False)
    monkeypatch.setenv("RESNORM_WARM", value)
    settings = load_settings()
    assert settings.warm is expected and settings.redis_url == ""
    monkeypatch.setenv("RESNORM_WARM", "maybe")
    with pytest.raises(ValueError, match="RESNORM_WARM"):
        load_settings()
    monkeypatch.setenv("RESNORM_WARM", "1")
    monkeypatch.setenv("RESNORM_REDIS_URL", "localhost:6379")
    with pytest.raises(ValueError, match=r"RESNORM_REDIS_URL.*redis://"):
        load_settings()


def test_the_default_cache_folder_follows_each_platform():
    from pathlib import Path

    from app.settings import default_cache_dir

    assert default_cache_dir({"LOCALAPPDATA": "C:/Users/a/AppData/Local"}, "win32") == Path(
        "C:/Users/a/AppData/Local/resnorm-explorer/Cache"
    )
    assert default_cache_dir({"XDG_CACHE_HOME": "/x/cache"}, "linux") == Path("/x/cache/resnorm-explorer")
    assert default_cache_dir({}, "darwin") == Path.home() / "Library" / "Caches" / "resnorm-explorer"
    assert default_cache_dir({}, "linux") == Path.home() / ".cache" / "resnorm-explorer"


def test_two_servers_warm_up_each_default_view_once(tmp_path, redis_url):
    """The warm-up's claims and its 'already cached?' look into Redis too: two servers split the work."""
    from app.services.cache import ResultCache

    first = ResultCache(tmp_path / "a", 2**26, redis_url=redis_url, namespace="claims")
    second = ResultCache(tmp_path / "b", 2**26, redis_url=redis_url, namespace="claims")
    assert first.claim("view", 60) is True and second.claim("view", 60) is False
    assert not second.contains("view")
    first.set("view", {"loss": 1.5})
    assert second.contains("view") and second.get("view") == ({"loss": 1.5}, "redis")
