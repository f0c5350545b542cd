"""Server settings from environment variables (RESNORM_*), read once per process."""
from __future__ import annotations

import os
from dataclasses import dataclass, fields
from functools import lru_cache


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    torch_threads: int = 0          # 0: cores / (workers * compute_slots), at least 1
    compute_slots: int = 2          # model runs at once per worker process
    queue_timeout_s: float = 10.0   # how long a request waits for a free slot before 503
    cache_size: int = 256           # traces kept per worker (LRU)
    max_train_runs: int = 1         # training streams at once per worker
    max_body_bytes: int = 65536     # larger request bodies get 413
    default_lang: str = "en"        # en | zh: used when the browser sends no preference

    def threads_per_run(self) -> int:
        if self.torch_threads > 0:
            return self.torch_threads
        return max(1, _cpu_count() // max(1, self.workers * self.compute_slots))


HELP = {
    "host": "address to bind (0.0.0.0 inside Docker)",
    "port": "TCP port",
    "workers": "uvicorn worker processes",
    "torch_threads": "torch threads per model run (0 = cores / (workers x compute slots))",
    "compute_slots": "model runs at once in each worker",
    "queue_timeout_s": "seconds a request waits for a compute slot before 503 + Retry-After",
    "cache_size": "traces cached per worker",
    "max_train_runs": "training streams at once per worker; more get 429",
    "max_body_bytes": "largest accepted request body",
    "default_lang": "page language when the browser states none (en or zh)",
}


def env_name(field: str) -> str:
    return "RESNORM_" + field.upper()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    values = {}
    for f in fields(Settings):
        raw = os.environ.get(env_name(f.name))
        if raw is not None and raw != "":
            values[f.name] = type(f.default)(raw)
    return Settings(**values)
