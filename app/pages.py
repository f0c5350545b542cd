"""HTML routes (filled in by the pages work)."""
from fastapi import APIRouter

router = APIRouter()
