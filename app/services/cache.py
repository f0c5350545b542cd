"""One result cache per deployment: memory, then a disk cache shared by every worker, then (optionally) Redis.

- memory: a small LRU of this process, so a room's repeated request costs no I/O at all;
- disk: `diskcache` (SQLite + files) in RESNORM_CACHE_DIR, size-bounded, shared by the worker processes of one
  server and surviving restarts;
- Redis (RESNORM_REDIS_URL): shared by several servers; when it is unreachable the others still serve.

Entries are JSON (never pickle: a poisoned Redis must not run code here), zlib-compressed, behind a format tag
and a SHA-256 digest: an entry that does not verify is deleted and recomputed, never served. Keys carry a
digest of the app's source and torch's version, so results of other code are never served either.
Every method is blocking (SQLite, sockets): call them from worker threads, never on the event loop.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import uuid
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson

from ..jsonsafe import all_finite, dumps
from .redis_layer import RedisLayer

logger = logging.getLogger(__name__)

FORMAT = b"RN1"
DIGEST_BYTES = 32
APP_DIR = Path(__file__).resolve().parent.parent


def code_version() -> str:
    """A digest of every Python source file of the app and torch's version: results depend on both."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for path in sorted(APP_DIR.rglob("*.py")):
        digest.update(path.relative_to(APP_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def encode(value: Any) -> bytes:
    """Tag + SHA-256 of the compressed JSON + the compressed JSON. orjson when every float is finite (a depth-96
    trace in 0.1 ms against 1.7 ms, the GIL held all along); else the tokens NaN and Infinity: a cached value keeps
    them, and is nulled and flagged when served."""
    packed = zlib.compress(dumps(value, allow_nan=not all_finite(value)), 1)
    return FORMAT + hashlib.sha256(packed).digest() + packed


def decode(data: bytes) -> Any:
    """The value, or ValueError when the bytes are not an intact entry of this format."""
    if not isinstance(data, bytes) or not data.startswith(FORMAT):
        raise ValueError("not a cache entry of this format")
    digest, packed = data[len(FORMAT) : len(FORMAT) + DIGEST_BYTES], data[len(FORMAT) + DIGEST_BYTES :]
    if hashlib.sha256(packed).digest() != digest:
        raise ValueError("cache entry failed its checksum")
    text = zlib.decompress(packed)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # the tokens NaN or Infinity: the standard library reads them
        return json.loads(text)


class MemoryLayer:
    """This process's LRU of decoded values."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class DiskLayer:
    """diskcache in `directory`, shared by processes; any failure is a miss (logged), never an exception."""

    def __init__(self, directory: Path | None, size_limit_bytes: int) -> None:
        self.directory, self.error = directory, ""
        self._cache = None
        if directory is None:
            return
        try:
            import diskcache

            # A short SQLite timeout: a busy cache is a miss, not a request stuck behind another process.
            self._cache = diskcache.Cache(str(directory), size_limit=size_limit_bytes, timeout=2)
        except Exception as exc:  # unreadable folder, a broken database file: serve without the disk layer
            self.error = f"{type(exc).__name__}: {exc}"
            logger.warning("disk cache at %s unusable, running without it: %s", directory, self.error)

    @property
    def ok(self) -> bool:
        return self._cache is not None

    def get(self, key: str) -> bytes | None:
        if self._cache is None:
            return None
        try:
            return self._cache.get(key)
        except Exception as exc:
            logger.warning("disk cache read failed: %s: %s", type(exc).__name__, exc)
            return None

    def set(self, key: str, data: bytes) -> None:
        if self._cache is not None:
            try:
                self._cache.set(key, data)
            except Exception as exc:
                logger.warning("disk cache write failed: %s: %s", type(exc).__name__, exc)

    def delete(self, key: str) -> None:
        if self._cache is not None:
            try:
                self._cache.delete(key)
            except Exception as exc:
                logger.warning("disk cache delete failed: %s: %s", type(exc).__name__, exc)

    def contains(self, key: str) -> bool:
        try:
            return self._cache is not None and key in self._cache
        except Exception:
            return False

    def add(self, key: str, value: bytes, expire_s: float) -> bool:
        """Store only if absent, atomically across processes (SQLite transaction); True if this call stored it."""
        if self._cache is None:
            return True
        try:
            return bool(self._cache.add(key, value, expire=expire_s))
        except Exception:
            return True  # no shared disk: nobody else to agree with

    def volume(self) -> int:
        try:
            return int(self._cache.volume()) if self._cache is not None else 0
        except Exception:
            return 0


class ResultCache:
    """get(key) -> (value, "memory" | "disk" | "redis") or None; set(key, value) writes every layer."""

    def __init__(
        self,
        directory: Path | None,
        size_limit_bytes: int,
        memory_items: int = 256,
        redis_url: str = "",
        namespace: str | None = None,
    ) -> None:
        self.namespace = namespace if namespace is not None else code_version()
        self.memory = MemoryLayer(memory_items)
        self.disk = DiskLayer(directory, size_limit_bytes)
        self.redis = RedisLayer(redis_url) if redis_url else None
        self._holder = f"{os.getpid()}:{uuid.uuid4().hex}".encode()  # who computes, in computing markers
        self.counts = {"memory": 0, "disk": 0, "redis": 0, "miss": 0, "corrupt": 0, "stored": 0}
        self._lock = threading.Lock()

    def stored_key(self, key: str) -> str:
        return f"resnorm:{self.namespace}:{hashlib.sha256(key.encode()).hexdigest()}"

    def from_memory(self, key: str) -> Any | None:
        """This process's copy only: no I/O, safe on the event loop."""
        value = self.memory.get(key)
        if value is not None:
            self._count(value, "memory")
        return value

    def get(self, key: str) -> tuple[Any, str] | None:
        value = self.from_memory(key)
        if value is not None:
            return value, "memory"
        stored = self.stored_key(key)
        for name, layer in (("disk", self.disk), ("redis", self.redis)):
            value = self._read(layer, stored) if layer is not None else None
            if value is not None:
                self.memory.set(key, value)
                if name == "redis":
                    self.disk.set(stored, encode(value))  # the next worker of this server reads it from disk
                return self._count(value, name)
        self._count(None, "miss")
        return None

    def _read(self, layer: DiskLayer | RedisLayer, stored: str) -> Any | None:
        data = layer.get(stored)
        if data is None:
            return None
        try:
            return decode(data)
        except Exception as exc:  # corrupt or foreign bytes: drop them, so the value is recomputed
            logger.warning("dropping an unreadable cache entry (%s)", exc)
            self._count(None, "corrupt")
            layer.delete(stored)
            return None

    def contains(self, key: str) -> bool:
        """In any layer (no decoding, not counted as a hit or a miss)."""
        stored = self.stored_key(key)
        return (
            self.memory.get(key) is not None
            or self.disk.contains(stored)
            or (self.redis is not None and self.redis.exists(stored))
        )

    def claim(self, key: str, seconds: float) -> bool:
        """True for the one worker process of the deployment that should compute `key` now (the warm-up's claims):
        atomic on this server's disk, and in Redis across servers."""
        claim = "claim:" + self.stored_key(key)
        if not self.disk.add(claim, b"1", seconds):
            return False
        return self.redis is None or self.redis.add(claim, b"1", seconds)

    def claim_computation(self, key: str, seconds: float) -> bool:
        """True if this process may compute `key` now; False while another worker process of this server computes
        it (a marker naming its process, added atomically to the shared disk). A holder that died or whose
        marker expired no longer counts. Without a disk cache every process computes for itself."""
        marker = self._computing(key)
        if self.disk.add(marker, self._holder, seconds):
            return True
        if self.computing_elsewhere(key):
            return False
        self.disk.delete(marker)  # a dead holder's marker
        return self.disk.add(marker, self._holder, seconds)

    def computing_elsewhere(self, key: str) -> bool:
        """Another live holder (a worker process of this server) has `key`'s computing marker."""
        holder = self.disk.get(self._computing(key))
        return holder is not None and holder != self._holder and _alive(holder)

    def release_computation(self, key: str) -> None:
        if self.disk.get(self._computing(key)) == self._holder:
            self.disk.delete(self._computing(key))

    def _computing(self, key: str) -> str:
        return "computing:" + self.stored_key(key)

    def set(self, key: str, value: Any) -> None:
        self.memory.set(key, value)
        try:
            data = encode(value)
        except (TypeError, ValueError) as exc:  # not JSON: kept in memory only
            logger.warning("result not cacheable on disk: %s", exc)
            return
        stored = self.stored_key(key)
        self.disk.set(stored, data)
        if self.redis is not None:
            self.redis.set(stored, data)
        self._count(None, "stored")

    def _count(self, value: Any, outcome: str) -> tuple[Any, str] | None:
        with self._lock:
            self.counts[outcome] += 1
        return (value, outcome) if value is not None else None

    def stats(self) -> dict[str, Any]:
        return {
            "hits": {k: self.counts[k] for k in ("memory", "disk", "redis")},
            "misses": self.counts["miss"],
            "corrupt_dropped": self.counts["corrupt"],
            "stored": self.counts["stored"],
            "memory_items": len(self.memory),
            "disk": {"ok": self.disk.ok, "bytes": self.disk.volume(), "error": self.disk.error or None},
        }

    def redis_status(self) -> dict[str, Any] | None:
        return self.redis.status() if self.redis is not None else None


def _alive(holder: bytes) -> bool:
    """Whether the process named in a computing marker (a worker of this server, same machine) still runs."""
    try:
        os.kill(int(holder.split(b":")[0]), 0)
    except ValueError:
        return False  # not a process id: a damaged marker
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True
