"""create_app(): mounts static files, installs error handlers and security, includes the routers."""
from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api import health, lessons, schema, sweep, trace, train
from app.errors import install_error_handlers

ROOT = Path(__file__).resolve().parent.parent


def warm_up() -> None:
    """Import torch and fix its thread counts before the first request needs them (runs in a thread)."""
    import torch

    from app.settings import get_settings

    torch.set_num_threads(get_settings().threads_per_run())
    try:
        torch.set_num_interop_threads(1)  # requests are our parallelism; only possible before torch's pools start
    except RuntimeError:
        pass
    import app.experiments.trace  # noqa: F401  (the model code, ready for the first trace)


@asynccontextmanager
async def lifespan(app: FastAPI):
    threading.Thread(target=warm_up, name="torch-warm-up", daemon=True).start()
    yield


def create_app() -> FastAPI:
    from app import pages, security

    # No /docs or /redoc: their pages load scripts from a CDN (offline, and refused by our CSP); /openapi.json stays.
    app = FastAPI(title="ResNorm Explorer", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Per-layer activation and gradient traces of real PyTorch models: "
                              "residual connections and normalization made visible.")
    install_error_handlers(app)
    security.install(app)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    for module in (health, schema, trace, sweep, lessons, train, pages):
        app.include_router(module.router)
    return app


app = create_app()
