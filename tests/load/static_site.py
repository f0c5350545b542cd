"""`make loadtest SITE=1`: a room of students reading the static site (`resnorm-explorer site`) served by nginx.

Builds a reduced site (`--depths 12`, English; or takes a built one with --site DIR), serves it with the system's
nginx on a free 127.0.0.1 port (a child process with a configuration of its own in a temporary folder, stopped at
the end), then N simulated students (httpx, asyncio) for a fixed time: each opens a page of the site with every
script, stylesheet and data file it links (Plotly.js on a student's first page only: a browser keeps it), pauses,
and opens another. Prints p50/p95/max by kind and the errors; exit 1 on any answer other than 200 or on a p95 of
all requests above --p95-limit-ms (default 50).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.localserver import free_port, wait_for_port

from .loadtest import percentile

LINKED = re.compile(r'(?:src|href)="([^"#?:]+\.(?:js|css))"')  # relative links to the site's own files
NGINX_CONF = """\
daemon off;
worker_processes {workers};
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; text/css css; text/javascript js; application/json json; text/plain txt;
             image/svg+xml svg; image/png png; }}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    gzip_static on;
    gzip on;
    gzip_comp_level 5;
    gzip_min_length 500;
    gzip_types text/css text/javascript application/json;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    open_file_cache max=1000 inactive=60s;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
    }}
}}
"""


def site_pages(root: Path) -> dict[str, list[str]]:
    """Every HTML page at the top of the site (the decks left out: one offline file each, several MB) and the
    site's own files it links, as URL paths."""
    pages = {}
    for html in sorted(root.glob("*.html")):
        if html.name.startswith("lecture"):
            continue
        links = dict.fromkeys(LINKED.findall(html.read_text(encoding="utf-8")))
        pages["/" + html.name] = ["/" + link.lstrip("./") for link in links if (root / link).is_file()]
    if not pages:
        raise SystemExit(f"no pages in {root}: build it with `resnorm-explorer site -o {root}`")
    return pages


def kind_of(path: str) -> str:
    if path.endswith(".html"):
        return "page"
    if "plotly" in path:
        return "plotly"
    return "data" if path.startswith("/data/") else "asset"


class Browser:
    """One student's keep-alive HTTP/1.1 connection, as small as a client can be: nginx answers in well under a
    millisecond, so a heavier client (httpx: ~2 ms of this process's CPU a request) measured itself instead."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        """GET path (gzip accepted, as a browser does); the status. The body is read whole and dropped."""
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        status = int(head.split(" ", 2)[1])
        if "transfer-encoding: chunked" in head:
            while size := int((await self.reader.readline()).split(b";")[0], 16):
                await self.reader.readexactly(size + 2)
            await self.reader.readline()
        else:
            length = re.search(r"content-length: *(\d+)", head)
            await self.reader.readexactly(int(length.group(1)) if length else 0)
        if "connection: close" in head:
            await self.close()
        return status

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


class Readers:
    def __init__(self, port: int, pages: dict[str, list[str]], args: argparse.Namespace) -> None:
        self.port, self.pages, self.args = port, pages, args
        self.deadline = time.monotonic() + args.duration
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []

    async def get(self, browser: Browser, path: str) -> None:
        started = time.perf_counter()
        try:
            status = await asyncio.wait_for(browser.get(path), self.args.timeout)
            ok = status == 200
            problem = "" if ok else f"GET {path} -> {status}"
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
            await browser.close()
            ok, problem = False, f"GET {path}: {type(exc).__name__}: {exc}"
        self.latencies[kind_of(path)].append((time.perf_counter() - started) * 1000)
        if not ok:
            self.errors.append(problem)

    async def student(self, seed: int) -> None:
        rng = random.Random(seed)
        await asyncio.sleep(rng.uniform(0, 3))
        seen: set[str] = set()  # what this student's browser has cached
        browser = Browser(self.port)
        try:
            while time.monotonic() < self.deadline:
                page = rng.choice(list(self.pages))
                await self.get(browser, page)
                for link in self.pages[page]:
                    if "plotly" not in link or link not in seen:
                        await self.get(browser, link)
                    seen.add(link)
                await asyncio.sleep(rng.uniform(*self.args.think))
        finally:
            await browser.close()

    async def run(self, students: range) -> None:
        await asyncio.gather(*(self.student(self.args.seed * 1000 + i) for i in students))


def one_share(port: int, pages: dict[str, list[str]], args: argparse.Namespace, share: int) -> tuple[dict, list, float]:
    """Every --processes-th student, in a process of its own (the generator's CPU spread over the cores):
    (latencies by kind, errors, CPU seconds)."""
    import uvloop

    if args.nice:
        os.nice(args.nice)
    readers = Readers(port, pages, args)
    uvloop.run(readers.run(range(share, args.students, args.processes)))
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    return dict(readers.latencies), readers.errors, cpu.ru_utime + cpu.ru_stime


@contextmanager
def built_site(args: argparse.Namespace) -> Iterator[Path]:
    """The site given by --site, or a reduced one built now into a temporary folder."""
    if args.site:
        yield Path(args.site).resolve()
        return
    with tempfile.TemporaryDirectory(prefix="resnorm-site-") as folder:
        started = time.monotonic()
        command = [sys.executable, "-m", "app", "site", "-o", folder, "--depths", "12", "--lang", "en"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        print(f"built a reduced site (--depths 12 --lang en) in {time.monotonic() - started:.0f} s", file=sys.stderr)
        yield Path(folder)


def nginx_binary() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if found is None:
        raise SystemExit("nginx is not installed (Debian/Ubuntu: apt-get install -y nginx)")
    return found


def precompressed_copy(root: Path, into: Path) -> Path:
    """A copy of the site with a .gz beside every text file, which nginx's gzip_static sends as it is: as a static
    host does (GitHub Pages and CDNs compress once). Compressing Plotly.js (1.2 MB) for every student took nginx
    ~40 ms a time, and the pages asked meanwhile waited for it."""
    import gzip

    copy = into / "site"
    shutil.copytree(root, copy)
    for path in copy.rglob("*"):
        if path.suffix in {".html", ".js", ".css", ".json"} and path.stat().st_size >= 500:
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes(), 9, mtime=0))
    return copy


@contextmanager
def nginx(root: Path, workers: int) -> Iterator[int]:
    """nginx in the foreground as our child, on a free loopback port, its files in a temporary folder."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="resnorm-nginx-") as tmp:
        os.chmod(tmp, 0o755)  # nginx started as root reads the site as "nobody"
        root = precompressed_copy(root, Path(tmp))
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(workers=workers, tmp=tmp, port=port, root=root))
        process = subprocess.Popen([nginx_binary(), "-c", str(conf), "-p", tmp, "-e", f"{tmp}/error.log"])
        try:
            if not wait_for_port(process, port, 10):
                log = Path(tmp, "error.log")
                raise SystemExit(f"nginx did not start: {log.read_text() if log.exists() else ''}")
            yield port
        finally:
            process.send_signal(signal.SIGQUIT)  # graceful stop of the master and its workers
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def report(readers: Readers, cpu_s: float, wall_s: float, args: argparse.Namespace) -> tuple[str, bool]:
    lines = [
        f"{args.students} students, {args.duration:.0f} s, the static site under nginx ({args.nginx_workers} "
        f"worker(s)) on 127.0.0.1; wall {wall_s:.1f} s",
        f"{'kind':<8}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}",
    ]
    every: list[float] = []
    for kind in sorted(readers.latencies):
        lat = readers.latencies[kind]
        every += lat
        lines.append(f"{kind:<8}{len(lat):>7}{percentile(lat, 50):>9.1f}{percentile(lat, 95):>9.1f}{max(lat):>9.1f}")
    p95 = percentile(every, 95)
    lines.append(
        f"{'all':<8}{len(every):>7}{percentile(every, 50):>9.1f}{p95:>9.1f}{max(every, default=0):>9.1f}"
        f"   ({len(every) / wall_s:.0f}/s), errors: {len(readers.errors)}"
    )
    lines.append(
        f"load generator: {cpu_s:.1f} s of CPU ({100 * cpu_s / wall_s:.0f}% of one core) in {args.processes} "
        f"process(es), nice {os.nice(0) + args.nice}"
    )
    failed = bool(readers.errors) or not every or p95 > args.p95_limit_ms
    if every and p95 > args.p95_limit_ms:
        lines.append(f"  problem: p95 of all requests {p95:.1f} ms > {args.p95_limit_ms:.0f} ms")
    lines += [f"  problem: {p}" for p in readers.errors[:20]]
    return "\n".join(lines), failed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.load.static_site", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", metavar="DIR", help="a site built by `resnorm-explorer site` (default: build one)")
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 4.0), metavar=("MIN", "MAX"))
    parser.add_argument("--p95-limit-ms", type=float, default=50.0, help="largest p95 of all requests (default 50)")
    parser.add_argument("--nginx-workers", type=int, default=1, help="nginx worker processes (default 1)")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request timeout; a timeout is an error")
    parser.add_argument("--nice", type=int, default=0, help="run this load generator this much nicer than nginx")
    parser.add_argument("--processes", type=int, default=2, help="load generator processes (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from concurrent.futures import ProcessPoolExecutor

    with built_site(args) as root, nginx(root, args.nginx_workers) as port:
        pages = site_pages(root)
        readers = Readers(port, pages, args)
        started = time.monotonic()
        with ProcessPoolExecutor(args.processes) as pool:
            shares = list(
                pool.map(one_share, *zip(*[(port, pages, args, i) for i in range(args.processes)], strict=True))
            )
        wall = time.monotonic() - started
    for latencies, errors, _ in shares:
        for kind, values in latencies.items():
            readers.latencies[kind] += values
        readers.errors += errors
    text, failed = report(readers, sum(cpu for _, _, cpu in shares), wall, args)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
