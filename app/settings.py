"""Server settings from environment variables (RESNORM_*), read once per process.

`python -m app` writes its command-line options into the same variables before uvicorn starts, so every
worker process reads one consistent set. Defaults suit a laptop; the Docker image sets host 0.0.0.0 and
workers 0 (one per core).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "zh")
MAX_AUTO_WORKERS = 8  # each worker holds its own torch (~300 MB) and cache: more rarely helps a room


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
    max_body_bytes: int = 262144    # larger request bodies get 413 (4096 long decimals fit)
    default_lang: str = "en"        # en | zh: used when the browser sends no preference
    # --- scale (issue 12): cache, Redis, warm-up, compute processes. Moves into the pydantic-settings class. ---
    cache_dir: str = ""             # "" = the user's cache folder (see default_cache_dir)
    cache_size_mb: int = 512        # disk cache bound; least recently stored entries leave first
    redis_url: str = ""             # redis://host:port/db shared by several servers; "" = none
    warm: bool = True               # compute every page's default view in the background at start
    compute_processes: bool = True  # model runs in child processes (one per compute slot), not threads
    # --- end of the scale block ---

    def __post_init__(self) -> None:
        problems = [f"{env_name(name)}: {why}" for name, why in _problems(self)]
        if problems:
            raise ValueError("; ".join(problems))

    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir.strip() else default_cache_dir()

    def cores_per_worker(self) -> int:
        return max(1, _cpu_count() // max(1, self.workers))

    def threads_per_run(self) -> int:
        if self.torch_threads > 0:
            return self.torch_threads
        return max(1, _cpu_count() // max(1, self.workers * self.compute_slots))


HELP = {
    "host": "address to bind (0.0.0.0 inside Docker; 127.0.0.1 keeps the server private to this machine)",
    "port": "TCP port",
    "workers": "uvicorn worker processes (0 = one per core, at most 8)",
    "torch_threads": "torch threads per model run (0 = cores / (workers x compute slots), at least 1)",
    "compute_slots": "model runs at once in each worker",
    "queue_timeout_s": "seconds a request waits for a compute slot before 503 + Retry-After",
    "cache_size": "traces cached per worker",
    "max_train_runs": "training streams at once per worker; more get 429",
    "max_body_bytes": "largest accepted request body in bytes; larger ones get 413",
    "default_lang": "page language when the browser states none (en or zh)",
    "cache_dir": "folder of the disk cache shared by the workers (default: the user's cache folder)",
    "cache_size_mb": "largest size of the disk cache in MB",
    "redis_url": "redis://host:port/db: a cache shared by several servers (default: none)",
    "warm": "compute every page's default view in the background at start (0 = off)",
    "compute_processes": "run models in child processes, one per compute slot (0 = in threads)",
}

_MINIMUM = {"port": 1, "workers": 0, "torch_threads": 0, "compute_slots": 1, "queue_timeout_s": 0.0,
            "cache_size": 0, "max_train_runs": 1, "max_body_bytes": 1024, "cache_size_mb": 1}


def _problems(s: Settings) -> list[tuple[str, str]]:
    out = [(name, f"must be >= {low}, got {getattr(s, name)}")
           for name, low in _MINIMUM.items() if getattr(s, name) < low]
    if s.port > 65535:
        out.append(("port", f"must be <= 65535, got {s.port}"))
    if s.default_lang not in LANGUAGES:
        out.append(("default_lang", f"must be one of {', '.join(LANGUAGES)}, got {s.default_lang!r}"))
    return out


def env_name(field: str) -> str:
    return "RESNORM_" + field.upper()


def auto_workers() -> int:
    return max(1, min(_cpu_count(), MAX_AUTO_WORKERS))


def default_cache_dir(environ: dict[str, str] | os._Environ = os.environ, platform: str = sys.platform) -> Path:
    """The user's cache folder by each platform's convention, with a folder of our own inside."""
    if platform.startswith("win"):
        base = environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "resnorm-explorer" / "Cache"
    if platform == "darwin":
        return Path.home() / "Library" / "Caches" / "resnorm-explorer"
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "resnorm-explorer"


def parse_value(field: str, raw: str) -> object:
    """One setting from text (an env var or a CLI option); ValueError names the variable."""
    default = Settings.__dataclass_fields__[field].default
    if isinstance(default, bool):
        return _parse_bool(field, raw)
    try:
        return type(default)(raw.strip())
    except ValueError:
        raise ValueError(f"{env_name(field)}: expected {type(default).__name__}, got {raw!r}") from None


def _parse_bool(field: str, raw: str) -> bool:
    text = raw.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{env_name(field)}: expected 1/0, true/false, yes/no or on/off, got {raw!r}")


def settings_from_env(environ: dict[str, str] | os._Environ = os.environ) -> Settings:
    values = {f.name: parse_value(f.name, environ[env_name(f.name)])
              for f in fields(Settings) if environ.get(env_name(f.name), "").strip()}
    settings = Settings(**values)
    if settings.workers == 0:
        settings = replace(settings, workers=auto_workers())
    return settings


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return settings_from_env()
