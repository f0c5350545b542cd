"""Static files under versioned URLs: cached by browsers for a year, gzipped once per process.

A page links `/static/v/<version>/js/pages/home.js`, where <version> is a digest of every file under static/:
any edit gives every file a new URL, so `Cache-Control: immutable` is safe, and the ES modules' relative imports
(`../page.js`) stay inside the same version. A URL with another version (a page rendered before a restart with
new files) is still answered, from today's files, but not cached.

Plotly.js is static/vendor/plotly.min.js, a partial bundle with only the trace types the pages draw (see the README
beside it), versioned by its release and a digest of the file: thirty students on one Wi-Fi fetch it once each, as
0.4 MB of gzip (the full 4.8 MB bundle of the Python `plotly` package was 1.5 MB), and a browser parses it in a
quarter of the time.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
import threading
from pathlib import Path

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from .paths import asset_dir

STATIC = asset_dir("static").resolve()
PLOTLY_JS = STATIC / "vendor" / "plotly.min.js"
# The bundle's first lines, written by tools/plotly_bundle/build.mjs: "plotly.js v4.1.1 (...; traces: bar, scatter)"
PLOTLY_HEADER = re.compile(r"plotly\.js v(?P<release>[\w.-]+) \([^)]*traces: (?P<traces>[\w, ]+)\)")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

router = APIRouter(include_in_schema=False)


def tree_version(folder: Path = STATIC) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


VERSION = tree_version()


def static_url(path: str) -> str:
    """The versioned URL of a file under static/, e.g. static_url('css/app.css'). Used by the templates."""
    return f"/static/v/{VERSION}/{path.lstrip('/')}"


def _plotly_bundle() -> tuple[str, tuple[str, ...]]:
    """(version for the URL, trace types it registers), from the vendored bundle's header and a digest of its bytes:
    rebuilding it with another trace list changes its URL even when the plotly.js release stays the same."""
    data = PLOTLY_JS.read_bytes()
    header = PLOTLY_HEADER.search(data[:400].decode("utf-8", "replace"))
    if header is None:
        raise RuntimeError(f"{PLOTLY_JS} lacks the header tools/plotly_bundle/build.mjs writes; rebuild it")
    digest = hashlib.sha256(data).hexdigest()[:8]
    return f"{header['release']}-{digest}", tuple(t.strip() for t in header["traces"].split(","))


PLOTLY_VERSION, PLOTLY_TRACES = _plotly_bundle()


def plotly_url() -> str:
    return f"/vendor/plotly-{PLOTLY_VERSION}.min.js"


class _Gzipped:
    """Each file's gzip bytes, made once (level 9: paid once per process, saved on every student's download)."""

    def __init__(self) -> None:
        self._bytes: dict[Path, bytes] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> bytes:
        with self._lock:
            if path not in self._bytes:
                self._bytes[path] = gzip.compress(path.read_bytes(), compresslevel=9, mtime=0)
            return self._bytes[path]


GZIPPED = _Gzipped()


async def _serve(request: Request, path: Path, current: bool) -> Response:
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if media_type == "application/javascript":
        media_type = "text/javascript"
    headers = {"Cache-Control": IMMUTABLE if current else REVALIDATE, "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        body = await anyio.to_thread.run_sync(GZIPPED.get, path)
        headers["Content-Encoding"] = "gzip"
    else:
        body = await anyio.to_thread.run_sync(path.read_bytes)
    return Response(body, media_type=media_type, headers=headers)


@router.get("/static/v/{version}/{name:path}")
async def versioned_static(request: Request, version: str, name: str) -> Response:
    path = (STATIC / name).resolve()
    if not path.is_relative_to(STATIC) or not path.is_file():
        raise HTTPException(status_code=404, detail=f"no static file {name!r}")
    return await _serve(request, path, current=version == VERSION)


@router.get("/vendor/plotly-{version}.min.js")
async def versioned_plotly(request: Request, version: str) -> Response:
    """The vendored Plotly.js partial bundle, served by this server: no CDN, works offline."""
    return await _serve(request, PLOTLY_JS, current=version == PLOTLY_VERSION)


@router.get("/vendor/plotly.min.js")
async def plotly_unversioned(request: Request) -> Response:
    """The same bundle under a fixed address, for scripts written before versioned URLs; revalidated on every use."""
    return await _serve(request, PLOTLY_JS, current=False)
