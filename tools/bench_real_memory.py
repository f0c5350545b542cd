"""`python -m tools.bench_real_memory [--checkout DIR] [--workers 2]`: the memory a server spends on the pretrained
models, measured on its whole process tree (Linux /proc).

Starts `python -m app` of the checkout with N workers and an empty cache, sends both packaged models rounds of
different sentences, each from a fresh connection (so every worker gets some), then prints each process of the tree (depth, RSS, PSS, private memory) and the totals. Development only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

from tools.localserver import free_port, local_server

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("minilm", "smollm2")


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def tree(root: int, depth: int = 0) -> list[tuple[int, int]]:
    """(pid, depth) of root and every descendant."""
    rows = [(root, depth)]
    for child in children(root):
        rows += tree(child, depth + 1)
    return rows


def memory_mb(pid: int) -> dict[str, float]:
    """Rss, Pss and private (clean + dirty) memory of one process, in MB."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return {}
    fields = {line.split(":")[0]: float(line.split()[1]) / 1024 for line in text.splitlines() if line.endswith("kB")}
    private = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return {"rss": round(fields.get("Rss", 0), 1), "pss": round(fields.get("Pss", 0), 1), "private": round(private, 1)}


async def drive(base: str, rounds: int) -> int:
    """Send each model `rounds` x 4 different sentences, each from a fresh connection (so every worker gets some)."""
    import httpx

    answered = 0
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as client:
        for round_ in range(rounds):
            texts = [(m, f"Round {round_}, sentence {i}: residual streams grow.") for m in MODELS for i in range(4)]
            answered += sum(await asyncio.gather(*(_trace(client, m, text) for m, text in texts)))
    return answered


async def _trace(client, model: str, text: str) -> int:
    """One trace, sent again after a busy answer's Retry-After (a cold load takes a while)."""
    for _ in range(20):
        response = await client.post(
            "/api/real_trace", json={"model": model, "text": text}, headers={"Connection": "close"}
        )
        if response.status_code != 503 or "Retry-After" not in response.headers:
            response.raise_for_status()
            return 1
        await asyncio.sleep(float(response.headers["Retry-After"]))
    raise RuntimeError(f"{model}: still busy after 20 tries")


def measure(checkout: Path, workers: int, rounds: int) -> dict[str, object]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "RESNORM_WARM": "0",
        "RESNORM_CACHE_DIR": tempfile.mkdtemp(prefix="bench-real-memory-"),
    }
    args = ["-m", "app", "--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    with local_server(args, port, env=env, cwd=str(checkout), timeout_s=180) as base:
        root = _listener(port)
        answered = asyncio.run(drive(base, rounds))
        rows = [{"pid": pid, "depth": depth, **memory_mb(pid)} for pid, depth in tree(root)]
    total = {key: round(sum(float(r.get(key, 0)) for r in rows), 1) for key in ("rss", "pss", "private")}
    holding = [r for r in rows if float(r.get("private", 0)) > 400]  # a process holding SmolLM2 (513 MB)
    return {
        "traces": answered,
        "processes": rows,
        "total_mb": total,
        "holding_models": len(holding),
        "holding_models_private_mb": round(sum(float(r["private"]) for r in holding), 1),
    }


def _listener(port: int) -> int:
    """The pid of the process listening on 127.0.0.1:port (the server's master process)."""
    import subprocess

    out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True).stdout
    return min(int(part.split("=")[1].split(",")[0]) for part in out.split("pid")[1:] if "=" in part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6, help="rounds of 8 sentences")
    args = parser.parse_args()
    print(json.dumps(measure(args.checkout.resolve(), args.workers, args.rounds), indent=1))


if __name__ == "__main__":
    main()
