"""A request whose client leaves before its answer: the work it waits for is cancelled, so a sentence queued for the
models process is dropped instead of traced for nobody."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextlib import suppress
from typing import TypeVar

from fastapi import Request

from ..jsonsafe import StrictJSONResponse

T = TypeVar("T")
CLIENT_LEFT = 499  # nginx's "client closed request": logged, never read


async def unless_client_leaves(request: Request, work: Awaitable[T]) -> T | None:
    """The result of `work`, or None if the client disconnected first (`work` is then cancelled)."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # this request itself is cancelled (the server stops)
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if task in done:
        return task.result()
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task
    return None


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone: once the body is read, the server's next message is the disconnect (the
    test client sends it only after the answer)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def client_left() -> StrictJSONResponse:
    return StrictJSONResponse({"error": "the client left before the answer", "status": CLIENT_LEFT}, CLIENT_LEFT)
