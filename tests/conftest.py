"""Shared fixtures: one TestClient for the app (no server process needed)."""
from __future__ import annotations

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app) as test_client:
        yield test_client
