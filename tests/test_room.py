"""Show the room: GET /api/qr draws the QR code of exactly the address it was given, GET /api/room names the
addresses phones can open (or says none can), and bad input is a 4xx naming `url`."""

from __future__ import annotations

import re
import socket

import pytest
import segno
from fastapi.testclient import TestClient

from app.api import room
from app.main import app
from app.settings import Settings

client = TestClient(app)
ROOM_URL = "http://192.168.1.23:8000/norms?depth=24&norm_position=post&lang=zh"


def svg_modules(svg: str) -> tuple[int, set[tuple[int, int]]]:
    """The side (in modules, quiet zone included) and the dark modules of segno's SVG: one path of horizontal
    strokes, 'M x y.5' then relative 'h length' and 'm dx dy' steps, one module per unit."""
    view_box, strokes = re.search(r'viewBox="0 0 (\d+) \1"', svg), re.search(r'stroke="#000" d="([^"]+)"', svg)
    assert view_box and strokes, "not segno's square one-path SVG"
    side, path = int(view_box.group(1)), strokes.group(1)
    x = y = 0.0
    dark: set[tuple[int, int]] = set()
    for command, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?: (-?[\d.]+))?", path):
        if command == "M":
            x, y = float(a), float(b)
        elif command == "m":
            x, y = x + float(a), y + float(b)
        else:
            dark.update((round(x) + i, int(y)) for i in range(round(float(a))))
            x += float(a)
    return side, dark


def matrix_modules(code: segno.QRCode, border: int = 4) -> set[tuple[int, int]]:
    return {(col + border, row + border) for row, line in enumerate(code.matrix) for col, bit in enumerate(line) if bit}


def test_qr_svg_holds_the_qr_code_of_exactly_that_url():
    response = client.get("/api/qr", params={"url": ROOM_URL})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    svg = response.text
    assert svg.startswith("<svg") and "<script" not in svg
    reference = segno.make_qr(ROOM_URL, error="m")
    modules = reference.symbol_size(border=0)[0]
    assert isinstance(reference.version, int)  # a full QR code (a Micro QR's version is a string such as "M2")
    assert modules == 17 + 4 * reference.version  # ISO/IEC 18004: a version-v symbol has 17 + 4v modules
    side, dark = svg_modules(svg)
    assert side == modules + 2 * 4  # the 4-module quiet zone the standard asks for
    assert int(response.headers["x-qr-modules"]) == modules
    assert dark == matrix_modules(reference)  # module for module the code of ROOM_URL
    other = segno.make_qr(ROOM_URL.replace("post", "pre"), error="m")
    assert dark != matrix_modules(other)  # and not of a neighbouring URL


def test_longer_urls_need_larger_codes():
    sides = [
        svg_modules(client.get("/api/qr", params={"url": "http://10.0.0.2:8000/?" + "a=1&" * n}).text)[0]
        for n in (1, 20, 80)
    ]
    assert sides == sorted(sides) and sides[0] < sides[-1]


@pytest.mark.parametrize(
    "params,why",
    [
        ({}, "required"),
        ({"url": ""}, "required"),
        ({"url": "ftp://10.0.0.2/file"}, "not an http(s) address"),
        ({"url": "javascript:alert(1)"}, "not an http(s) address"),
        ({"url": "http://"}, "not an http(s) address"),
        ({"url": "http://10.0.0.2:8000/ x"}, "spaces"),
        ({"url": "http://10.0.0.2/" + "a" * room.MAX_URL_CHARS}, "too long"),
    ],
)
def test_bad_urls_are_a_422_naming_the_field(params, why):
    response = client.get("/api/qr", params=params)
    assert response.status_code == 422
    body = response.json()
    assert body["errors"][0]["field"] == "url" and why in body["error"]
    assert "http" in body["errors"][0]["allowed"]


def _serve(monkeypatch, host="127.0.0.1", public_url=None, lan=("192.168.1.23", "10.0.0.7")):
    settings = Settings(host=host, public_url=public_url)
    monkeypatch.setattr(room, "get_settings", lambda: settings)
    monkeypatch.setattr(room, "lan_addresses", lambda: list(lan))
    answer = client.get("/api/room")
    assert answer.status_code == 200
    return answer.json()


def test_loopback_only_server_offers_no_address_and_says_so(monkeypatch):
    body = _serve(monkeypatch, host="127.0.0.1")
    assert body["urls"] == [] and body["loopback_only"] is True and body["listening_on_all_interfaces"] is False


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_all_interfaces_lists_lan_addresses_on_the_port_this_request_reached(monkeypatch, host):
    body = _serve(monkeypatch, host=host)
    port = client.base_url.port or 80  # TestClient's connection: the port comes from the request, not the settings
    assert body["urls"] == [f"http://192.168.1.23:{port}", f"http://10.0.0.7:{port}"]
    assert body["listening_on_all_interfaces"] is True and body["loopback_only"] is False


def test_public_url_overrides_everything(monkeypatch):
    for host in ("127.0.0.1", "0.0.0.0"):
        body = _serve(monkeypatch, host=host, public_url="https://resnorm.example.org")
        assert body["urls"] == ["https://resnorm.example.org"] and body["loopback_only"] is False
        assert body["public_url"] == "https://resnorm.example.org"


def test_a_server_bound_to_one_address_offers_that_address(monkeypatch):
    body = _serve(monkeypatch, host="192.168.1.5")
    assert body["urls"][0].startswith("http://192.168.1.5:") and not body["listening_on_all_interfaces"]


def test_lan_addresses_keep_only_reachable_ones_ipv4_first(monkeypatch):
    monkeypatch.setattr(room, "_routed_addresses", lambda: ["192.168.1.23", "fd00::5"])
    monkeypatch.setattr(
        room,
        "_hostname_addresses",
        lambda: ["127.0.1.1", "::1", "fe80::1%eth0", "169.254.3.4", "192.168.1.23", "10.0.0.7", "0.0.0.0"],
    )
    assert room.lan_addresses() == ["192.168.1.23", "10.0.0.7", "fd00::5"]


def test_this_machines_lan_addresses_are_never_loopback():
    for address in room.lan_addresses():  # whatever this machine has; possibly none
        assert room._usable(address) and not address.startswith("127.")
    assert len(room.lan_addresses()) <= room.MAX_ADDRESSES


def test_finding_addresses_sends_nothing(monkeypatch):
    """The UDP connect only asks the routing table: no send, sendto or sendall on any socket."""
    sent = []

    class Watched(socket.socket):  # room.socket.socket until the monkeypatch below
        def send(self, *args, **kwargs):
            sent.append(args)
            return super().send(*args, **kwargs)

        sendto = sendall = send

    monkeypatch.setattr(room.socket, "socket", Watched)
    room.lan_addresses()
    assert sent == []
