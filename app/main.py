"""create_app(): mounts static files, installs error handlers and security, includes the routers."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api import health, lessons, schema, sweep, trace, train
from app.errors import install_error_handlers

ROOT = Path(__file__).resolve().parent.parent


def create_app() -> FastAPI:
    from app import pages, security

    app = FastAPI(title="ResNorm Explorer", version="0.1.0",
                  description="Per-layer activation and gradient traces of real PyTorch models: residual connections and normalization made visible.")
    install_error_handlers(app)
    security.install(app)
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    for module in (health, schema, trace, sweep, lessons, train, pages):
        app.include_router(module.router)
    return app


app = create_app()
