"""Show the room: GET /api/room (the addresses a phone in the room can open) and GET /api/qr (a QR code as SVG).

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
from fastapi.responses import Response

from ..errors import FieldError
from ..settings import get_settings

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


@router.get("/api/room")
def room(request: Request) -> dict:
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
    return {
        "urls": urls,
        "public_url": settings.public_url,
        "listening_on_all_interfaces": all_interfaces,
        "loopback_only": loopback_only and not settings.public_url,
        "in_container": Path("/.dockerenv").exists(),
    }


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


@router.get("/api/qr", response_class=Response, responses={200: {"content": {"image/svg+xml": {}}}})
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
