"""The README's picture is made here: /compare's chart (24 blocks, slide theme) in a 1280x720 frame, as on a slide.

The test writes artifacts/screenshots/readme-compare.jpg; docs/img/compare.jpg is a copy of it committed small
(refresh it by copying after `make test-browser` when the page changes).
"""

from __future__ import annotations

import struct

from tests.browser.conftest import ROOT, SCREENSHOTS

COMMITTED = ROOT / "docs" / "img" / "compare.jpg"


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's start-of-frame marker."""
    i = 2
    while i < len(data):
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    raise AssertionError("no JPEG frame header")


def test_readme_picture_is_the_compare_page_on_a_slide(watch):
    watch.page.set_viewport_size({"width": 1280, "height": 720})
    watch.open("/embed/compare?depth=24&theme=slide&lang=en", ("compare",))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = watch.page.screenshot(path=str(SCREENSHOTS / "readme-compare.jpg"), type="jpeg", quality=70)
    assert jpeg_size(shot) == (1280, 720)
    committed = COMMITTED.read_bytes()
    assert jpeg_size(committed) == (1280, 720) and len(committed) < 200_000
