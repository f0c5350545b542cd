"""Security headers on every response, framing only under /embed/, 413 for large bodies, streaming intact."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.security import SecurityMiddleware, security_headers
from app.settings import get_settings


def _csp(response) -> dict[str, str]:
    """'a b; c d' -> {'a': 'b', 'c': 'd'}."""
    parts = [p.strip().split(" ", 1) for p in response.headers["content-security-policy"].split(";") if p.strip()]
    return {p[0]: p[1] if len(p) > 1 else "" for p in parts}


@pytest.mark.parametrize("path", ["/api/health", "/api/schema", "/no-such-page", "/static/no-such-file.js"])
def test_every_response_carries_the_headers(client, path):
    response = client.get(path)
    csp = _csp(response)
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'"  # modules from /static only: no inline script, no eval
    assert csp["connect-src"] == "'self'"
    assert csp["img-src"] == "'self' data: blob:"
    assert csp["frame-ancestors"] == "'none'"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_policy_names_no_other_origin(client):
    policy = client.get("/api/health").headers["content-security-policy"]
    assert "http" not in policy and "unsafe-eval" not in policy
    for directive, sources in _csp(client.get("/api/health")).items():
        if directive != "style-src":
            assert "unsafe-inline" not in sources, directive


@pytest.mark.parametrize("path", ["/embed/trace", "/embed/anything?depth=48"])
def test_embed_pages_may_be_framed_by_any_site(client, path):
    response = client.get(path)
    assert "frame-ancestors" not in _csp(response)  # not even "*", which refuses file:// slides
    assert "x-frame-options" not in response.headers
    assert _csp(response)["script-src"] == "'self'"  # still only this origin's scripts


def test_embedding_is_by_prefix_not_by_substring():
    assert dict(security_headers("/api/embed/x"))[b"x-frame-options"] == b"DENY"
    assert b"x-frame-options" not in dict(security_headers("/embed/x"))


def test_a_route_cannot_weaken_the_policy():
    async def app(scope, receive, send):
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-security-policy", b"default-src *"), (b"x-frame-options", b"ALLOWALL")],
            }
        )
        await send({"type": "http.response.body", "body": b"ok"})

    messages = _call(SecurityMiddleware(app, max_body_bytes=1024), "/page", [b""])
    headers = messages[0]["headers"]
    assert [v for k, v in headers if k == b"x-frame-options"] == [b"DENY"]
    assert next(v for k, v in headers if k == b"content-security-policy").startswith(b"default-src 'self'")


def test_body_over_the_limit_gets_413_naming_the_limit(client):
    limit = get_settings().max_body_bytes
    response = client.post(
        "/api/trace", content=b"{" + b" " * limit + b"}", headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    body = response.json()
    assert body["limit_bytes"] == limit and str(limit) in body["error"]
    assert body["errors"][0]["field"] == "body"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_chunked_body_without_length_is_cut_at_the_limit(client):
    limit = get_settings().max_body_bytes

    def chunks():
        for _ in range(limit // 1000 + 2):
            yield b" " * 1000

    response = client.post("/api/trace", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["limit_bytes"] == limit


def test_body_under_the_limit_is_served(client):
    response = client.post("/api/trace", json={"depth": 2})
    assert response.status_code == 200
    assert len(response.json()["layers"]) == 2


def test_streamed_responses_pass_through_chunk_by_chunk():
    """The middleware must not buffer: each chunk reaches the server before the app makes the next."""
    events: list[str] = []

    async def app(scope, receive, send):
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/x-ndjson")]}
        )
        for i in range(3):
            events.append(f"made {i}")
            await send({"type": "http.response.body", "body": b"line\n", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    messages = _call(SecurityMiddleware(app, max_body_bytes=1024), "/api/sweep", [b"{}"], events)
    assert events == ["made 0", "sent", "made 1", "sent", "made 2", "sent", "sent"]
    assert sum(1 for m in messages if m["type"] == "http.response.body") == 4
    assert (b"x-content-type-options", b"nosniff") in messages[0]["headers"]


def test_oversized_stream_is_refused_even_if_the_app_swallows_the_error():
    async def app(scope, receive, send):
        try:
            while (await receive()).get("more_body"):
                pass
        except Exception:  # a careless app answers 400 itself: the client must still see the 413
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"bad"})

    messages = _call(SecurityMiddleware(app, max_body_bytes=1024), "/api/trace", [b"x" * 600] * 3)
    assert messages[0]["status"] == 413
    assert b"1024" in messages[1]["body"]
    assert len(messages) == 2


def _call(middleware, path, body_chunks, events=None):
    sent: list[dict] = []
    pending = list(body_chunks)

    async def receive():
        chunk = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message):
        if events is not None and message["type"] == "http.response.body":
            events.append("sent")
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": []}
    # a thread of its own: Playwright's sync API (tests/browser) may leave a loop running in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, middleware(scope, receive, send)).result()
    return sent


@pytest.mark.parametrize(
    "path",
    [
        "/static/..%2f..%2fpyproject.toml",
        "/static/%2e%2e%2fapp%2fsettings.py",
        "/embed/..%2f..%2fetc%2fpasswd",
        "/vendor/..%2f..%2fpyproject.toml",
    ],
)
def test_no_route_serves_a_file_the_client_names(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "[project]" not in response.text and "RESNORM_" not in response.text and "root:" not in response.text


# ---- CORS for a static copy of the site built with `site --server URL` -------------------------------------------

SITE_ORIGIN = "https://course.example.edu"


@pytest.fixture
def cors_client(monkeypatch):
    """The app built with RESNORM_CORS_ORIGINS listing one origin (settings are read when the app is assembled)."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    monkeypatch.setenv("RESNORM_CORS_ORIGINS", f"{SITE_ORIGIN}/, http://192.168.1.20:8080")
    monkeypatch.setenv("RESNORM_WARM", "0")
    get_settings.cache_clear()
    try:
        app = create_app()
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    with TestClient(app) as test_client:
        yield test_client


def _preflight(client, path, origin=SITE_ORIGIN, method="POST"):
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "content-type",
    }
    return client.options(path, headers=headers)


def test_a_listed_origin_gets_the_site_routes_preflight_and_all(cors_client):
    for path in ("/api/trace", "/api/figure/norms", "/api/train/charts", "/api/sweep", "/api/real_tokens"):
        answer = _preflight(cors_client, path)
        assert answer.status_code == 200, path
        assert answer.headers["access-control-allow-origin"] == SITE_ORIGIN
        assert "POST" in answer.headers["access-control-allow-methods"]
        assert "content-type" in answer.headers["access-control-allow-headers"].lower()
    answer = cors_client.get("/api/presets?depth=12", headers={"Origin": "http://192.168.1.20:8080"})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "http://192.168.1.20:8080"
    assert "Retry-After" in answer.headers["access-control-expose-headers"]  # a busy server's answer stays readable
    assert "Origin" in answer.headers["vary"]
    assert _csp(answer)["connect-src"] == "'self'"  # the server's own pages still connect to it alone


def test_other_origins_and_other_routes_get_no_cors(cors_client):
    assert _preflight(cors_client, "/api/trace", origin="https://evil.example").status_code == 400
    answer = cors_client.get("/api/presets?depth=12", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in answer.headers
    for path in ("/api/follow", "/api/health", "/api/qr?url=http://x.y", "/api/room"):  # not the site's routes
        assert "access-control-allow-origin" not in _preflight(cors_client, path, method="GET").headers, path
        assert "access-control-allow-origin" not in cors_client.get(path, headers={"Origin": SITE_ORIGIN}).headers


def test_without_listed_origins_no_route_answers_another_origin(client):
    answer = client.get("/api/presets?depth=12", headers={"Origin": SITE_ORIGIN})
    assert "access-control-allow-origin" not in answer.headers
    assert "access-control-allow-origin" not in _preflight(client, "/api/trace").headers


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("https://me.github.io/course", "no path"),
        ("*", "got '*'"),
        ("me.github.io", "got 'me.github.io'"),
        ("https://a.io, ftp://b.io", "got 'ftp://b.io'"),
    ],
)
def test_a_listed_origin_must_be_an_origin(value, words):
    from app.settings import load_settings

    with pytest.raises(ValueError) as refused:
        load_settings(cors_origins=value)
    assert str(refused.value).startswith("RESNORM_CORS_ORIGINS: ") and words in str(refused.value)


def test_listed_origins_are_written_as_browsers_send_them():
    from app.settings import load_settings

    settings = load_settings(cors_origins="HTTPS://Me.GitHub.io/, http://[::1]:8080,https://me.github.io")
    assert settings.cors_origin_list() == ["https://me.github.io", "http://[::1]:8080"]


def test_every_api_route_a_page_script_calls_answers_the_site():
    """The pages' own requests (static/js: api.js, budget.js, pages/*.js but the live deck's) are the site's routes."""
    import re

    from app.paths import asset_dir
    from app.security import site_api

    scripts = asset_dir("static") / "js"
    files = [scripts / "api.js", scripts / "budget.js", *(scripts / "pages").glob("*.js")]
    called = {
        path
        for file in files
        if file.name != "lecture.js"
        for path in re.findall(r"['`](/api/[a-z_/]+)", file.read_text(encoding="utf-8"))
    }
    assert {"/api/train/charts", "/api/sweep", "/api/figure/", "/api/real_tokens"} <= called
    assert [path for path in sorted(called) if not site_api(path)] == []
    assert not site_api("/api/follow") and not site_api("/api/train/status") and site_api("/api/figure/grad-heatmap")


def test_a_static_copy_connects_to_its_server_alone():
    from app.security import content_security_policy

    policy = dict(
        part.strip().split(" ", 1) for part in content_security_policy("https://x.edu:8443/explorer").split(";")
    )
    assert policy["connect-src"] == "'self' https://x.edu:8443" and policy["script-src"] == "'self'"
    assert "frame-ancestors" not in policy  # a <meta> policy cannot carry it (browsers warn and ignore it)
