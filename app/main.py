"""create_app(): mounts static files, installs error handlers and security, includes the routers."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager, suppress

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.staticfiles import StaticFiles

from .api import budget, figures, health, lecture, lessons, real_trace, responses, room, schema, sweep, trace, train
from .errors import install_error_handlers
from .paths import asset_dir
from .settings import get_settings


def configure_torch() -> None:
    """Fix torch's thread counts once per worker process, before any request runs a model."""
    import torch

    torch.set_num_threads(get_settings().threads_per_run())
    with suppress(RuntimeError):  # only possible before torch's pools start
        torch.set_num_interop_threads(1)  # requests are our parallelism


@asynccontextmanager
async def lifespan(app: FastAPI):
    from .experiments.train import warm_up_in_background
    from .pages import warm_computations
    from .services.compute import get_pool
    from .services.real_client import close_models
    from .services.warmup import warm_in_background

    configure_torch()
    settings, pool = get_settings(), get_pool()
    if pool.processes is not None:
        pool.processes.start()  # children import torch while the server already answers
    warm_up_in_background()  # the first optimizer's imports, paid at start-up, not by the first training run
    warming = (
        asyncio.create_task(warm_in_background(pool, warm_computations(), settings.compute_processes))
        if settings.warm
        else None
    )
    yield
    if warming is not None:
        warming.cancel()
    await pool.flush()  # results computed last are still written to disk and Redis
    if pool.processes is not None:
        pool.processes.shutdown()
    close_models()  # the models process, if this worker started it


def create_app() -> FastAPI:
    from . import assets, pages, security
    from .pages.routes import page_router

    # No /docs or /redoc: their pages load scripts from a CDN (offline, and refused by our CSP); /openapi.json stays.
    app = FastAPI(
        title="ResNorm Explorer",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Per-layer activation and gradient traces of real PyTorch models: "
        "residual connections and normalization made visible.",
    )
    install_error_handlers(app)
    # Text answers gzipped at level 4: a depth-96 trace (102 kB of JSON) becomes 31.7 kB in 1.4 ms, against 30.7 kB
    # in 2.8 ms at level 6 and 34.9 kB in 0.7 ms at level 1 (static files are compressed once, at level 9, in
    # app/assets.py). NDJSON streams are flushed line by line. Security is added last, so it is outermost and sees
    # every answer.
    app.add_middleware(GZipMiddleware, minimum_size=500, compresslevel=4)
    security.install(app)
    app.include_router(assets.router)  # before the plain /static mount, which would answer /static/v/... itself
    app.mount("/static", StaticFiles(directory=asset_dir("static")), name="static")
    for module in (health, schema, budget, trace, figures, sweep, lessons, train, lecture, room, real_trace):
        app.include_router(module.router)
    app.include_router(pages.get_registry().router)  # /embed/{chart} and the pages' words, collected here
    app.include_router(page_router())  # every page of the registry, with the answers handed over
    responses.document(app)  # /openapi.json: the answer models routes name by reference
    return app


app = create_app()
