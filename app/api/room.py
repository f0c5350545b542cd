"""Show the room: GET /api/room (the addresses a phone in the room can open), GET /api/qr (a QR code as SVG) and
/api/follow (phones that follow the lecturer's slides; app/services/follow.py carries the changes).

A page opened as http://localhost:8000 cannot know which address a student's phone should use: the server
tells it. Listening on all interfaces (--host 0.0.0.0 or ::), it lists this machine's LAN addresses; bound to
loopback only, phones cannot reach it at all and the page says so; RESNORM_PUBLIC_URL (Docker, a reverse
proxy, a tunnel) overrides both. The QR code is drawn here by segno, so no page ever calls an outside service.
"""

from __future__ import annotations

import io
import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlsplit

import segno
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import Busy, FieldError
from ..experiments.lecture import deck_payload
from ..jsonsafe import StrictJSONResponse
from ..services.follow import Session, UnknownRoom, WrongKey, event_stream, get_hub, valid_room
from ..settings import get_settings
from .body import json_body
from .responses import (
    BODY_ERRORS,
    BUSY,
    FORBIDDEN,
    NOT_FOUND,
    QUERY_ERRORS,
    FollowOpened,
    FollowState,
    RoomAnswer,
    json_route,
)

router = APIRouter(tags=["room"])

MAX_URL_CHARS = 2000  # a QR code (version 40, error level M) holds 2331 bytes; long before that it is unreadable
MAX_ADDRESSES = 4
ALL_INTERFACES = ("0.0.0.0", "::", "")
# Private destinations for the UDP "connect" below: connecting a datagram socket only asks the routing table
# which local address would be used; no packet is sent. One per private range (RFC 1918) and one ULA (RFC 4193).
ROUTE_PROBES = (
    (socket.AF_INET, "10.255.255.254"),
    (socket.AF_INET, "192.168.255.254"),
    (socket.AF_INET, "172.31.255.254"),
    (socket.AF_INET6, "fd00::1"),
)


def _usable(address: str) -> bool:
    """An address another device could reach: not loopback, link-local, unspecified or multicast."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def _routed_addresses() -> list[str]:
    """The local address the routing table would use towards each private range (no traffic is sent)."""
    found = []
    for family, probe in ROUTE_PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                found.append(sock.getsockname()[0])
        except OSError:  # no route, or the family is not available on this machine
            continue
    return found


def _hostname_addresses() -> list[str]:
    """The addresses this machine's own name resolves to (hosts file, mDNS or the local resolver)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]  # an IPv4 or IPv6 socket address starts with its host


def lan_addresses() -> list[str]:
    """This machine's reachable addresses, IPv4 first, most likely (the routed one) first, without duplicates."""
    candidates = [a for a in dict.fromkeys(_routed_addresses() + _hostname_addresses()) if _usable(a)]
    candidates.sort(key=lambda a: ":" in a)  # stable: IPv4 before IPv6, routed before resolved
    return candidates[:MAX_ADDRESSES]


def _origin(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}"


def is_loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@router.get("/api/room", **json_route(RoomAnswer))
def room(request: Request) -> StrictJSONResponse:
    """Where phones in the room should go: {"urls", "public_url", "listening_on_all_interfaces", ...}."""
    settings = get_settings()
    server = request.scope.get("server") or (settings.host, settings.port)
    port = int(
        server[1] or settings.port
    )  # the port this connection reached: right even when started by uvicorn directly
    all_interfaces = settings.host in ALL_INTERFACES
    loopback_only = is_loopback_host(settings.host)
    if settings.public_url:
        urls = [settings.public_url]
    elif all_interfaces:
        urls = [_origin(a, port) for a in lan_addresses()]
    elif loopback_only:
        urls = []
    else:  # bound to one address of its own: that is the one phones use
        urls = [_origin(settings.host, port)]
    return StrictJSONResponse(
        {
            "urls": urls,
            "public_url": settings.public_url,
            "listening_on_all_interfaces": all_interfaces,
            "loopback_only": loopback_only and not settings.public_url,
            "in_container": Path("/.dockerenv").exists(),
        }
    )


def _checked_url(url: str | None) -> str:
    allowed = f"an http:// or https:// address of at most {MAX_URL_CHARS} characters"
    if url is None or not url.strip():
        raise FieldError("url", "required", allowed)
    if len(url) > MAX_URL_CHARS:
        raise FieldError("url", f"too long ({len(url)} characters)", allowed)
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise FieldError("url", "contains spaces or control characters", allowed)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise FieldError("url", f"not an http(s) address: {url[:80]!r}", allowed)
    return url


@router.get(
    "/api/qr",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {"schema": {"type": "string"}}}}, **QUERY_ERRORS},
)
def qr_code(url: str | None = None) -> Response:
    """The QR code of `url` as SVG (error correction M or better, 4-module quiet zone, black on white)."""
    text = _checked_url(url)
    try:
        code = segno.make_qr(text, error="m")
    except segno.DataOverflowError:
        raise FieldError("url", "too long for a QR code", f"at most {MAX_URL_CHARS} characters") from None
    buffer = io.BytesIO()
    # omitsize: only a viewBox (one unit per module), so the page scales it to the screen without blurring.
    code.save(buffer, kind="svg", scale=1, border=4, omitsize=True, xmldecl=False, dark="#000", light="#fff")
    return Response(
        buffer.getvalue(),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=3600", "X-QR-Modules": str(code.symbol_size(border=0)[0])},
    )


# Follow the lecturer ------------------------------------------------------------------------------------------------
HEARTBEAT_S = 15.0  # well inside every proxy's idle timeout (nginx: 60 s by default, 300 s in deploy/nginx.conf)
RETRY_MS = 1000  # EventSource waits this long before it reconnects by itself
FOLLOWERS_PER_WORKER = 2000  # open streams; more get 503 + Retry-After (a room of 200 uses a tenth)


class FollowOpen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slide: int = Field(0, ge=0, description="the slide the deck shows now (0-based)")


class FollowMove(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(..., min_length=1, max_length=100, description="the presenter key POST /api/follow returned")
    slide: int = Field(..., ge=0, description="the slide the deck shows now (0-based)")


def _checked_slide(slide: int) -> int:
    total = len(deck_payload()["slides"])
    if not 0 <= slide < total:
        raise FieldError("slide", f"no slide {slide}", f"0 to {total - 1}")
    return slide


def _checked_room(room: str) -> str:
    if not valid_room(room):
        raise FieldError("room", f"not a follow session id: {room[:40]!r}", "8 letters, digits, - or _")
    return room


def _unknown(room: str) -> FieldError:
    return FieldError("room", f"no follow session {room!r} (never opened, or older than a day)", "an open one", 404)


async def _session(room: str) -> Session:
    try:
        return await get_hub().current(_checked_room(room))
    except UnknownRoom:
        raise _unknown(room) from None


@router.post("/api/follow", **json_route(FollowOpened, BODY_ERRORS, body=FollowOpen, status=201))
async def follow_open(request: Request) -> StrictJSONResponse:
    """A follow session for the deck on this screen: {"room", "key", "slide", "seq"}. The key drives it and is shown
    only to the screen that asked; the follow link carries the room alone."""
    body = await json_body(request, FollowOpen)  # the strict reading every JSON endpoint shares (app/api/body.py)
    session, key = await get_hub().open(_checked_slide(body.slide))
    return StrictJSONResponse({**session.public(), "key": key}, status_code=201)


@router.put("/api/follow/{room}", **json_route(FollowState, BODY_ERRORS, FORBIDDEN, NOT_FOUND, body=FollowMove))
async def follow_move(room: str, request: Request) -> StrictJSONResponse:
    """The presenter moved to `slide`: every follower's phone moves too."""
    body = await json_body(request, FollowMove)
    try:
        session = await get_hub().move(_checked_room(room), body.key, _checked_slide(body.slide))
    except UnknownRoom:
        raise _unknown(room) from None
    except WrongKey:
        raise FieldError(
            "key", "not this session's presenter key", "the key shown on the lecturer's screen", 403
        ) from None
    return StrictJSONResponse(session.public())


@router.get("/api/follow/{room}", **json_route(FollowState, QUERY_ERRORS, NOT_FOUND))
async def follow_state(room: str) -> StrictJSONResponse:
    """The slide the lecturer shows now: {"room", "slide", "seq"}."""
    return StrictJSONResponse((await _session(room)).public())


@router.get(
    "/api/follow/{room}/events", response_class=StreamingResponse, responses={**QUERY_ERRORS, **NOT_FOUND, **BUSY}
)
async def follow_events(room: str) -> StreamingResponse:
    """Server-sent events: `slide` ({"room", "slide", "seq"}) now and at every change, `ping` every HEARTBEAT_S."""
    await _session(room)
    hub = get_hub()
    if hub.count() >= FOLLOWERS_PER_WORKER:
        raise Busy(retry_after=5, message="too many followers on this server")
    return StreamingResponse(
        event_stream(hub, room, HEARTBEAT_S, RETRY_MS),
        media_type="text/event-stream",
        # never stored, never transformed; nginx passes each event on at once (X-Accel-Buffering), and the gzip
        # middleware leaves text/event-stream alone
        headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"},
    )
