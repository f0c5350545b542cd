"""Follow the lecturer: a session's key drives it and nothing else does, every follower hears each change once and
in order, through the shared folder (workers of one server) and through Redis (several servers); the API names the
field at fault."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
from fastapi.testclient import TestClient

from app.experiments.lecture import deck_payload
from app.main import create_app
from app.services import follow
from app.services.follow import FolderStore, FollowHub, RedisStore, UnknownRoom, WrongKey, key_digest

SLIDES = len(deck_payload()["slides"])


@pytest.fixture(params=["folder", "redis"])
def make_store(request, tmp_path):
    """A store factory: each call a new client of the same channel (as each worker process has its own)."""
    if request.param == "folder":
        return lambda: FolderStore(tmp_path / "follow")
    url = request.getfixturevalue("redis_url")
    return lambda: RedisStore(url)


def test_the_key_drives_and_a_wrong_one_does_not(make_store):
    async def scenario():
        hub = FollowHub(make_store())
        session, key = await hub.open(3)
        assert session.slide == 3 and session.key_sha256 == key_digest(key) and key not in json.dumps(session.public())
        moved = await hub.move(session.room, key, 5)
        with pytest.raises(WrongKey):
            await hub.move(session.room, key + "x", 9)
        with pytest.raises(UnknownRoom):
            await hub.current("ABCDEFGH")
        return session, moved, await hub.current(session.room)

    session, moved, now = asyncio.run(scenario())
    assert moved.seq > session.seq and now.slide == 5 and now.seq == moved.seq


def test_a_follower_on_another_hub_hears_every_change_in_order(make_store, monkeypatch):
    """Two hubs on one channel stand for two workers: the presenter's hub stores, the follower's listener hears."""
    monkeypatch.setattr(follow, "POLL_S", 0.02)

    async def scenario():
        presenter, other = FollowHub(make_store()), FollowHub(make_store())
        session, key = await presenter.open(0)
        heard = []
        async with other.follow(session.room) as follower:
            first = await follower.next(1.0)  # the current slide first
            assert first is not None
            heard.append(first.slide)
            for slide in (1, 2, 3):
                await presenter.move(session.room, key, slide)
                while (got := await follower.next(2.0)) is not None and got.slide != slide:
                    heard.append(got.slide)  # an intermediate one may be skipped only if a newer one arrived
                assert got is not None, f"slide {slide} never arrived"
                heard.append(got.slide)
            silence = await follower.next(0.2)  # nothing new: a heartbeat's turn
        if other._listener:
            other._listener.cancel()
        return heard, silence

    heard, silence = asyncio.run(scenario())
    assert heard == [0, 1, 2, 3] and silence is None


def test_a_poll_reads_a_room_only_when_its_file_was_replaced(tmp_path):
    """Two changes of the same length within one tick of the file system's clock are both heard (a new file each),
    and a poll with nothing new reads nothing."""
    store = FolderStore(tmp_path / "follow")
    seen: dict = {}
    first = store._write(follow.Session("ABCDEFGH", "k", 1, 0))
    assert [s.slide for s in store._changed(["ABCDEFGH", "NOSUCHRM"], seen)] == [1]
    assert store._changed(["ABCDEFGH"], seen) == []
    second = store._write(follow.Session("ABCDEFGH", "k", 2, first.seq))
    assert [(s.slide, s.seq) for s in store._changed(["ABCDEFGH"], seen)] == [(2, second.seq)]
    third = store._write(follow.Session("ABCDEFGH", "k", 3, second.seq))  # same size, most likely the same tick
    assert [(s.slide, s.seq) for s in store._changed(["ABCDEFGH"], seen)] == [(3, third.seq)]


def test_a_change_is_encoded_once_for_every_follower():
    session = follow.Session("ABCDEFGH", "k", 4, 17)
    event = follow.slide_event(session)
    assert event is follow.slide_event(follow.Session("ABCDEFGH", "k", 4, 17))
    assert event == b'id: 17\nevent: slide\ndata: {"room":"ABCDEFGH","slide":4,"seq":17}\n\n'


def test_the_shared_folder_reaches_another_process(tmp_path):
    """A follower in a second Python process (as a second uvicorn worker) sees the change written by this one."""
    child = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from app.services.follow import FolderStore, FollowHub
        async def main():
            hub = FollowHub(FolderStore(Path({str(tmp_path)!r})))
            async with hub.follow(sys.argv[1]) as follower:
                print((await follower.next(5)).slide, flush=True)
                print((await follower.next(10)).slide, flush=True)
        asyncio.run(main())
        """
    )

    async def open_session():
        return await FollowHub(FolderStore(tmp_path)).open(2)

    session, key = asyncio.run(open_session())
    process = subprocess.Popen([sys.executable, "-c", child, session.room], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "2"
        asyncio.run(FollowHub(FolderStore(tmp_path)).move(session.room, key, 7))
        assert process.stdout.readline().strip() == "7"
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("RESNORM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RESNORM_WARM", "0")
    from app.settings import get_settings

    get_settings.cache_clear()
    follow._HUBS.clear()
    with TestClient(create_app()) as test_client:
        yield test_client
    get_settings.cache_clear()
    follow._HUBS.clear()


def _field(response) -> str:
    return response.json()["errors"][0]["field"]


def test_the_api_opens_moves_and_answers_the_slide(client):
    opened = client.post("/api/follow", json={"slide": 1})
    assert opened.status_code == 201
    room, key = opened.json()["room"], opened.json()["key"]
    moved = client.put(f"/api/follow/{room}", json={"key": key, "slide": SLIDES - 1})
    assert moved.status_code == 200 and moved.json()["slide"] == SLIDES - 1 and "key" not in moved.json()
    state = client.get(f"/api/follow/{room}").json()
    assert state == {"room": room, "slide": SLIDES - 1, "seq": moved.json()["seq"]}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "field"),
    [
        ("put", "/api/follow/{room}", {"key": "not-the-key", "slide": 1}, 403, "key"),
        ("put", "/api/follow/{room}", {"key": "{key}", "slide": SLIDES}, 422, "slide"),
        ("put", "/api/follow/{room}", {"key": "{key}", "slide": -1}, 422, "slide"),
        ("post", "/api/follow", {"slide": SLIDES + 5}, 422, "slide"),
        ("get", "/api/follow/ZZZZZZZZ", None, 404, "room"),
        ("get", "/api/follow/ZZZZZZZZ/events", None, 404, "room"),
        ("get", "/api/follow/bad.id", None, 422, "room"),
        ("put", "/api/follow/ZZZZZZZZ", {"key": "k", "slide": 0}, 404, "room"),
    ],
)
def test_bad_requests_name_the_field(client, method, path, body, status, field):
    opened = client.post("/api/follow", json={}).json()
    url = path.format(room=opened["room"])
    if body is not None:
        body = {k: (v.format(key=opened["key"]) if isinstance(v, str) else v) for k, v in body.items()}
    response = client.request(method.upper(), url, json=body)
    assert response.status_code == status and _field(response) == field
    assert client.get(f"/api/follow/{opened['room']}").json()["slide"] == 0  # nothing moved


def test_the_event_stream_is_unbuffered_and_starts_with_the_slide(tmp_path):
    """Read from a real server: the headers nginx and caches obey, the retry delay, then the current slide."""
    import httpx

    from tools.localserver import free_port, local_server, uvicorn_args

    port = free_port()
    env = {**os.environ, "RESNORM_CACHE_DIR": str(tmp_path), "RESNORM_WARM": "0", "RESNORM_COMPUTE_PROCESSES": "0"}
    with local_server(uvicorn_args(port), port, env=env) as base:
        opened = httpx.post(f"{base}/api/follow", json={"slide": 4}).json()
        with httpx.stream("GET", f"{base}/api/follow/{opened['room']}/events", timeout=10) as response:
            lines = []
            for line in response.iter_lines():
                lines.append(line)
                if line.startswith("data: "):
                    break
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no" and "no-cache" in response.headers["cache-control"]
    assert "content-encoding" not in response.headers
    assert lines[0] == "retry: 1000" and "event: slide" in lines
    assert json.loads(lines[-1][6:]) == {"room": opened["room"], "slide": 4, "seq": opened["seq"]}
