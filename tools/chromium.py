"""Debian's headless Chromium, as every browser check here starts it (tests/browser, the load test's first visit,
the lecture benchmark): where it is, and the flags that keep it off this machine's closed network."""

from __future__ import annotations

import os
import shutil

CHROMIUM = os.environ.get("RESNORM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps opening connections the machine refuses (../NOTES.md).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
