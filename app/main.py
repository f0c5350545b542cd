"""create_app(): mounts static files, installs error handlers and security, includes the routers."""
from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api import health, lecture, lessons, room, schema, sweep, trace, train
from app.errors import install_error_handlers
from app.paths import asset_dir


def configure_torch() -> None:
    """Fix torch's thread counts once per worker process, before any request runs a model."""
    import torch

    from app.settings import get_settings

    torch.set_num_threads(get_settings().threads_per_run())
    try:
        torch.set_num_interop_threads(1)  # requests are our parallelism; only possible before torch's pools start
    except RuntimeError:
        pass


@asynccontextmanager
async def lifespan(app: FastAPI):
    from app.experiments.train import warm_up_in_background

    configure_torch()
    warm_up_in_background()  # the first optimizer's imports, paid at start-up, not by the first training run
    yield


def create_app() -> FastAPI:
    from app import pages, security

    # No /docs or /redoc: their pages load scripts from a CDN (offline, and refused by our CSP); /openapi.json stays.
    app = FastAPI(title="ResNorm Explorer", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Per-layer activation and gradient traces of real PyTorch models: "
                              "residual connections and normalization made visible.")
    install_error_handlers(app)
    security.install(app)
    app.mount("/static", StaticFiles(directory=asset_dir("static")), name="static")
    for module in (health, schema, trace, sweep, lessons, train, lecture, room, pages):
        app.include_router(module.router)
    return app


app = create_app()
