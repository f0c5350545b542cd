"""Follow the lecturer: the slide a deck shows, pushed to every phone that follows it (docs/lecture.md).

A lecturer's deck opens a follow session: a public room id (the follow link carries it) and a presenter key that
only that screen holds (the server keeps its SHA-256). Each slide change is one small record {slide, seq} stored
for the room and announced to every worker of every server: through Redis pub/sub when RESNORM_REDIS_URL is set
(containers or machines behind one nginx), otherwise through a file per room in the cache folder, which the
workers of one server share, polled every POLL_S. Each worker runs one listener and wakes its own followers, so
200 phones cost 200 idle connections and one poll, not 200 polls.

A change costs each follower one write: its event is encoded once for all of them (`slide_event`), and a waiting
follower holds a timer, not a task. The shared folder is read and written off the event loop (a loaded disk can take
tens of milliseconds for a rename), and a poll reads a room's file only when it was replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

POLL_S = 0.05  # the shared-folder channel: a change reaches another worker within this (plus one file read)
SESSION_TTL_S = 24 * 3600  # a session nobody drove for a day is forgotten
ROOM_CHARS = 8  # secrets.token_urlsafe(6): 48 random bits, short enough to read out
KEY_BYTES = 16  # 128 random bits: never guessed, never in a link
REDIS_CHANNEL = "resnorm:follow"
REDIS_RETRY_S = 1.0


class UnknownRoom(Exception):
    """No follow session has this id (never opened, or forgotten after SESSION_TTL_S)."""


class WrongKey(Exception):
    """The presenter key does not match the session's."""


@dataclass(frozen=True)
class Session:
    room: str
    key_sha256: str
    slide: int
    seq: int  # grows with every change: followers and listeners keep only the newest

    def public(self) -> dict[str, Any]:
        return {"room": self.room, "slide": self.slide, "seq": self.seq}


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def valid_room(room: str) -> bool:
    return len(room) == ROOM_CHARS and all(c.isalnum() or c in "-_" for c in room)


class Store(Protocol):
    async def read(self, room: str) -> Session | None: ...
    async def write(self, session: Session) -> Session: ...
    def listen(self, hub: FollowHub) -> AsyncIterator[Session]: ...


class FolderStore:
    """One JSON file per room in a folder every worker of this server sees; written whole (os.replace)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, room: str) -> Path:
        return self.folder / f"{room}.json"

    async def read(self, room: str) -> Session | None:
        return await asyncio.to_thread(self._read, room)

    def _read(self, room: str) -> Session | None:
        try:
            path = self._path(room)
            if time.time() - path.stat().st_mtime > SESSION_TTL_S:
                return None
            return Session(**json.loads(path.read_text("utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    async def write(self, session: Session) -> Session:
        return await asyncio.to_thread(self._write, session)

    def _write(self, session: Session) -> Session:
        # one clock on one machine: later changes get larger numbers without a lock between workers (microseconds,
        # so the number stays exact in a JavaScript double)
        stored = replace(session, seq=max(session.seq + 1, time.time_ns() // 1000))
        self.folder.mkdir(parents=True, exist_ok=True)
        if session.seq == 0:
            self._forget_old()
        part = self.folder / f".{session.room}.{os.getpid()}.{secrets.token_hex(4)}"
        part.write_text(json.dumps(asdict(stored)), "utf-8")
        os.replace(part, self._path(session.room))
        return stored

    def _forget_old(self) -> None:
        for path in self.folder.glob("*.json"):
            with contextlib.suppress(OSError):
                if time.time() - path.stat().st_mtime > SESSION_TTL_S:
                    path.unlink()

    async def listen(self, hub: FollowHub) -> AsyncIterator[Session]:
        seen: dict[str, tuple[int, ...]] = {}  # room -> (inode, size, mtime) of the file last read
        while True:
            await asyncio.sleep(POLL_S)
            for found in await asyncio.to_thread(self._changed, hub.rooms(), seen):
                yield found

    def _changed(self, rooms: list[str], seen: dict[str, tuple[int, ...]]) -> list[Session]:
        """The sessions of `rooms` whose file changed since the last poll (a stat each; a read only then). Every write
        is a new file (os.replace), and the file it replaces lives until then, so a new inode is never the one last
        read: two changes within one tick of the file system's clock are told apart."""
        changed = []
        for room in rooms:
            try:
                stat = self._path(room).stat()
            except OSError:
                continue
            if seen.get(room) != (stat.st_ino, stat.st_size, stat.st_mtime_ns):
                seen[room] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
                if (found := self._read(room)) is not None:
                    changed.append(found)
        return changed


class RedisStore:
    """Sessions as Redis keys with a TTL; each change published on one channel that every worker listens to."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.client = aioredis.Redis.from_url(url, socket_connect_timeout=1.0)

    @staticmethod
    def _key(room: str) -> str:
        return f"{REDIS_CHANNEL}:{room}"

    async def read(self, room: str) -> Session | None:
        data = await self.client.get(self._key(room))
        return Session(**json.loads(data)) if data else None

    async def write(self, session: Session) -> Session:
        seq = int(await self.client.incr(self._key(session.room) + ":seq"))  # atomic across servers
        stored = replace(session, seq=seq)
        data = json.dumps(asdict(stored))
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.set(self._key(session.room), data, ex=SESSION_TTL_S)
            pipe.expire(self._key(session.room) + ":seq", SESSION_TTL_S)
            pipe.publish(REDIS_CHANNEL, data)
            await pipe.execute()
        return stored

    async def listen(self, hub: FollowHub) -> AsyncIterator[Session]:
        while True:  # a Redis restart: subscribe again, then catch up with what changed meanwhile
            try:
                async with self.client.pubsub() as pubsub:
                    await pubsub.subscribe(REDIS_CHANNEL)
                    for room in hub.rooms():
                        if (found := await self.read(room)) is not None:
                            yield found
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            yield Session(**json.loads(message["data"]))
            except Exception as exc:  # redis' ConnectionError and TimeoutError, a malformed message
                logger.warning("follow channel: redis listener failed (%s); retrying", exc)
            await asyncio.sleep(REDIS_RETRY_S)


class Follower:
    """One open event stream: the newest session it has not sent yet, and an event to wake it."""

    def __init__(self, session: Session) -> None:
        self.latest = session
        self.sent = -1
        self.changed = asyncio.Event()
        self.changed.set()  # the current slide is sent first, also after a reconnect

    def offer(self, session: Session) -> None:
        if session.seq > self.latest.seq:
            self.latest = session
            self.changed.set()

    async def next(self, timeout_s: float) -> Session | None:
        """The newest unsent session, or None after timeout_s (time for a heartbeat). The wait is a timer that sets
        the same event, not a task per wait (asyncio.wait_for's): a change wakes 200 of these at once."""
        if not self.changed.is_set():
            heartbeat = asyncio.get_running_loop().call_later(timeout_s, self.changed.set)
            try:
                await self.changed.wait()
            finally:
                heartbeat.cancel()
        self.changed.clear()
        if self.latest.seq == self.sent:
            return None
        self.sent = self.latest.seq
        return self.latest


class FollowHub:
    """This worker's followers by room, fed by one listener on the store (started with the first follower)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.followers: dict[str, set[Follower]] = {}
        self._listener: asyncio.Task | None = None

    def rooms(self) -> list[str]:
        return list(self.followers)

    def count(self) -> int:
        return sum(len(group) for group in self.followers.values())

    async def open(self, slide: int) -> tuple[Session, str]:
        """A new session on `slide`, and its presenter key (returned once, stored only as a digest)."""
        key = secrets.token_urlsafe(KEY_BYTES)
        while True:
            room = secrets.token_urlsafe(6)
            if valid_room(room) and await self.store.read(room) is None:
                break
        return await self.store.write(Session(room, key_digest(key), slide, 0)), key

    async def current(self, room: str) -> Session:
        session = await self.store.read(room)
        if session is None:
            raise UnknownRoom(room)
        return session

    async def move(self, room: str, key: str, slide: int) -> Session:
        """The presenter's change: checked against the key, stored, announced to every worker."""
        session = await self.current(room)
        if not hmac.compare_digest(session.key_sha256, key_digest(key)):
            raise WrongKey(room)
        stored = await self.store.write(replace(session, slide=slide))
        self.deliver(stored)  # this worker's followers at once; the others through the store
        return stored

    def deliver(self, session: Session) -> None:
        for follower in self.followers.get(session.room, ()):
            follower.offer(session)

    @contextlib.asynccontextmanager
    async def follow(self, room: str) -> AsyncIterator[Follower]:
        follower = Follower(await self.current(room))
        self.followers.setdefault(room, set()).add(follower)
        self._ensure_listener()
        try:
            yield follower
        finally:
            group = self.followers.get(room, set())
            group.discard(follower)
            if not group:
                self.followers.pop(room, None)

    def _ensure_listener(self) -> None:
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        async for session in self.store.listen(self):
            self.deliver(session)


def sse(event: str, data: dict[str, Any], event_id: int | None = None) -> bytes:
    """One server-sent event (HTML Living Standard, "Server-sent events": field lines, then a blank line)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


@functools.lru_cache(maxsize=64)
def slide_event(session: Session) -> bytes:
    """A change as its event, encoded once for every follower of the room (a Session is frozen, so hashable)."""
    return sse("slide", session.public(), session.seq)


async def event_stream(hub: FollowHub, room: str, heartbeat_s: float, retry_ms: int) -> AsyncIterator[bytes]:
    """The follower's stream: a reconnection delay, the current slide, then every change and a heartbeat."""
    async with hub.follow(room) as follower:
        yield f"retry: {retry_ms}\n\n".encode()
        while True:
            session = await follower.next(heartbeat_s)
            yield sse("ping", {"t": round(time.time(), 3)}) if session is None else slide_event(session)


_HUBS: dict[asyncio.AbstractEventLoop, FollowHub] = {}


def make_store(redis_url: str, cache_dir: Path) -> Store:
    return RedisStore(redis_url) if redis_url else FolderStore(cache_dir / "follow")


def get_hub() -> FollowHub:
    """This worker's hub (one per event loop: a server has one, tests may start several)."""
    from ..settings import get_settings

    loop = asyncio.get_running_loop()
    if loop not in _HUBS:
        settings = get_settings()
        _HUBS[loop] = FollowHub(make_store(settings.redis_url, settings.resolved_cache_dir()))
    return _HUBS[loop]
