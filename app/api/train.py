"""Placeholder router: filled in by its own issue."""
from fastapi import APIRouter

router = APIRouter()
