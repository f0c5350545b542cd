"""Security headers and request-size limits (filled in by the workshop work)."""
from fastapi import FastAPI


def install(app: FastAPI) -> None:
    return None
