"""Security headers on every response and a request-body size limit, as one pure ASGI middleware.

Pure ASGI (not BaseHTTPMiddleware) so streamed answers such as /api/sweep's NDJSON pass through chunk by
chunk: the middleware only edits the response's start message and counts request-body bytes.
Pages under /embed/ may be framed by anything (slides); everything else may not be framed at all. For /embed/
the policy has no frame-ancestors directive at all: `frame-ancestors *` would still refuse slides opened from a
file (file://) or an about:blank frame, since `*` only matches network schemes (CSP Level 3, "Matching Source
Expressions").
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette import types
from starlette.middleware.cors import CORSMiddleware

from .settings import get_settings

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

EMBED_PREFIX = "/embed/"

# The API routes the pages call (static/js: api.js, budget.js, pages/*.js; tests/test_security.py reads them): a
# static copy of the site built with `site --server URL` calls them from its own origin, and only these answer
# the origins listed in RESNORM_CORS_ORIGINS. The deck's follow channel, the QR code and the room are not among them.
SITE_API = (
    "/api/presets",
    "/api/budget",
    "/api/trace",
    "/api/sweep",
    "/api/train/charts",
    "/api/train/budget",
    "/api/real_tokens",
    "/api/real_models",
    "/api/figure/",  # a prefix: every chart's route
)


def site_api(path: str) -> bool:
    return any(path == route or (route.endswith("/") and path.startswith(route)) for route in SITE_API)


def content_security_policy(server: str = "") -> str:
    """Only this origin (and `server`'s, for a static copy that asks one): scripts are files (no inline script, no
    eval). Inline styles are allowed because Plotly writes style attributes into the SVG it draws; styles cannot run
    code. A static copy carries this in a <meta> tag, where frame-ancestors cannot be set."""
    connect = f"'self' {origin_of(server)}" if server else "'self'"
    return (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
        f"font-src 'self'; connect-src {connect}; object-src 'none'; base-uri 'self'; form-action 'self'"
    )


def origin_of(url: str) -> str:
    """scheme://host[:port] of an address (CSP's connect-src and CORS compare origins, not paths)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


_CSP = content_security_policy()


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    """The headers every response to `path` carries."""
    embeddable = path.startswith(EMBED_PREFIX)
    headers = {
        "content-security-policy": _CSP if embeddable else _CSP + "; frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "permissions-policy": "camera=(), microphone=(), geolocation=()",
    }
    if not embeddable:  # for browsers that predate frame-ancestors
        headers["x-frame-options"] = "DENY"
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


class BodyTooLarge(Exception):
    """Raised from receive() once a body grows past the limit; the middleware answers 413 instead."""


class SecurityMiddleware:
    def __init__(self, app: Callable[..., Awaitable[None]], max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = security_headers(scope.get("path", ""))
        if _declared_length(scope) > self.max_body_bytes:  # refuse before reading a byte of the body
            await self._refuse(send, extra)
            return
        state = {"received": 0, "too_large": False, "started": False}

        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > self.max_body_bytes:
                    state["too_large"] = True
                    raise BodyTooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            if state["too_large"]:  # whatever the app made of the exception, the client gets the 413
                if message["type"] == "http.response.start" and not state["started"]:
                    state["started"] = True
                    await self._refuse(send, extra)
                return
            if message["type"] == "http.response.start":
                state["started"] = True
                names = {name for name, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + extra}
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except BodyTooLarge:
            if not state["started"]:
                state["started"] = True
                await self._refuse(send, extra)

    async def _refuse(self, send: Send, extra: list[tuple[bytes, bytes]]) -> None:
        limit = self.max_body_bytes
        body = json.dumps(
            {
                "error": f"body: request body larger than {limit} bytes (allowed: at most {limit} bytes)",
                "status": 413,
                "limit_bytes": limit,
                "errors": [{"field": "body", "message": "request body too large", "allowed": f"at most {limit} bytes"}],
            }
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *extra,
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0  # the server rejects a malformed length itself
    return 0


class SiteCors:
    """CORS (Fetch Standard, "CORS protocol") for the listed origins on the routes a static copy calls, preflight
    included; every other route answers as if CORS did not exist, so no other origin reads anything else."""

    def __init__(self, app: types.ASGIApp, origins: list[str]) -> None:
        self.app = app
        # Retry-After: a busy server's answer says when to retry, and a page on another origin reads only the
        # headers listed here
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Content-Type"],
            expose_headers=["Retry-After", "X-Resnorm-Cache"],
            max_age=600,
        )

    async def __call__(self, scope: types.Scope, receive: types.Receive, send: types.Send) -> None:
        if scope["type"] == "http" and site_api(scope.get("path", "")):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def install(app: FastAPI) -> None:
    settings = get_settings()
    if settings.cors_origins:  # inside the security middleware, which adds its headers to every answer
        app.add_middleware(SiteCors, origins=settings.cors_origin_list())
    app.add_middleware(SecurityMiddleware, max_body_bytes=settings.max_body_bytes)
