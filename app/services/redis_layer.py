"""The Redis layer of the result cache: shared by several servers, never a reason for a request to fail.

Timeouts are short and a failure marks Redis down for a few seconds, so an unreachable Redis costs one
connection attempt per back-off period, not one per request; the local cache keeps serving meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, cast
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 0.3
IO_TIMEOUT_S = 1.0
BACKOFF_S = 5.0
ENTRY_TTL_S = 7 * 24 * 3600  # a stale code version's entries leave by themselves; Redis' maxmemory bounds the rest


def redacted(url: str) -> str:
    """The URL without a password, for health answers and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class RedisLayer:
    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=IO_TIMEOUT_S, retry_on_timeout=False
        )
        self.down_until = 0.0
        self.last_error = ""
        self.failures = 0
        self._lock = threading.Lock()

    def _available(self) -> bool:
        return time.monotonic() >= self.down_until

    def _failed(self, exc: Exception) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.down_until = time.monotonic() + BACKOFF_S
        logger.warning(
            "redis at %s unreachable, using the local cache for %.0f s: %s",
            redacted(self.url),
            BACKOFF_S,
            self.last_error,
        )

    def _succeeded(self) -> None:
        self.down_until, self.last_error = 0.0, ""

    def get(self, key: str) -> bytes | None:
        if not self._available():
            return None
        try:
            value = self.client.get(key)
        except Exception as exc:  # ConnectionError, TimeoutError, a server that is not Redis...
            self._failed(exc)
            return None
        self._succeeded()
        return cast("bytes | None", value)  # the client is made without decode_responses: bytes, never str

    def set(self, key: str, data: bytes) -> None:
        if not self._available():
            return
        try:
            self.client.set(key, data, ex=ENTRY_TTL_S)
        except Exception as exc:
            self._failed(exc)
            return
        self._succeeded()

    def exists(self, key: str) -> bool:
        if not self._available():
            return False
        try:
            found = bool(self.client.exists(key))
        except Exception as exc:
            self._failed(exc)
            return False
        self._succeeded()
        return found

    def add(self, key: str, data: bytes, expire_s: float) -> bool:
        """Store only if absent (SET NX): True if this call stored it, or if Redis cannot say (then nobody agrees)."""
        if not self._available():
            return True
        try:
            stored = self.client.set(key, data, nx=True, ex=max(1, int(expire_s)))
        except Exception as exc:
            self._failed(exc)
            return True
        self._succeeded()
        return bool(stored)

    def delete(self, key: str) -> None:
        if self._available():
            try:
                self.client.delete(key)
            except Exception as exc:
                self._failed(exc)

    def status(self) -> dict[str, Any]:
        """Pings now (bounded by the timeouts), so /api/health says at once when Redis comes back or goes away."""
        started = time.perf_counter()
        try:
            self.client.ping()
            self._succeeded()
            up = True
        except Exception as exc:
            self._failed(exc)
            up = False
        return {
            "url": redacted(self.url),
            "up": up,
            "error": self.last_error or None,
            "failures": self.failures,
            "ping_ms": round((time.perf_counter() - started) * 1000, 2),
        }
