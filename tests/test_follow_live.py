"""Twenty phones follow the lecturer on a real server (two uvicorn workers sharing the cache folder), and on two
servers that share only Redis: every slide change reaches all of them, each on the slide the presenter chose."""

from __future__ import annotations

import asyncio
import os
from contextlib import ExitStack

from tests.load.follow_load import run_followers
from tools.localserver import free_port, local_server

FOLLOWERS = 20
CHANGES = 5


def _serve(stack: ExitStack, env: dict[str, str], workers: int) -> str:
    port = free_port()
    args = ["-m", "app", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    return stack.enter_context(local_server(args, port, env=env))


def _env(cache: str, redis_url: str = "") -> dict[str, str]:
    return {
        **os.environ,
        "RESNORM_CACHE_DIR": cache,
        "RESNORM_WARM": "0",
        "RESNORM_COMPUTE_PROCESSES": "0",
        "RESNORM_REDIS_URL": redis_url,
    }


def test_twenty_followers_on_two_workers_see_every_change(tmp_path):
    with ExitStack() as stack:
        base = _serve(stack, _env(str(tmp_path)), workers=2)
        result = asyncio.run(run_followers([base], FOLLOWERS, CHANGES))
    assert result.slides_right and len(result.latencies_s) == CHANGES


def test_followers_on_another_server_hear_through_redis(tmp_path, redis_url):
    with ExitStack() as stack:
        first = _serve(stack, _env(str(tmp_path / "a"), redis_url), workers=1)
        second = _serve(stack, _env(str(tmp_path / "b"), redis_url), workers=1)
        result = asyncio.run(run_followers([first, second], FOLLOWERS, CHANGES))
    assert result.slides_right and len(result.latencies_s) == CHANGES
