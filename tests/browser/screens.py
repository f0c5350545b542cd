"""Screen sizes and the list of every page: shared by the phone, accessibility and explorer browser tests."""

from __future__ import annotations

from typing import Any

# Screen sizes every page is checked at: a projector or laptop, a phone (iPhone 12-15 class), a tablet (iPad portrait).
DEVICES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 720}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    "tablet": {"viewport": {"width": 768, "height": 1024}, "is_mobile": True, "has_touch": True},
}
# Keep sweeps short (depths 1..12) so every page loads in seconds.
QUICK_QUERY = {"gradients": "sweep_to=12", "grad-heatmap": "sweep_to=12"}


def every_page() -> list[tuple[str, tuple[str, ...]]]:
    """(path, charts) of every registered page and every /embed/ chart, from the page registry itself."""
    from app.pages import charts, pages

    def quick(path: str, key: str) -> str:
        return f"{path}?{QUICK_QUERY[key]}" if key in QUICK_QUERY else path

    every = [(quick(page.path, page.key), page.charts) for page in pages().values()]
    embeds = [(quick(f"/embed/{chart}", chart), (chart,)) for chart in charts()]
    return every + embeds


def with_lang(path: str, lang: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={lang}"


def page_screens(
    devices: tuple[str, ...], langs: tuple[str, ...] = ("en", "zh"), crossed: tuple[str, ...] | None = None
) -> list[Any]:
    """(path, charts, lang, device) cases: every page in every language on every device; every /embed/ chart once,
    the (language, device) pairs taken in turn. The embeds share one template and differ only in their chart, so
    each chart is checked once and every pair still meets a quarter of them (all pairs for all of them cost ~8 min
    of a CI run). With `crossed` (paths that keep every pair), the other pages get two pairs, each language on one
    device (English on the first, Chinese on the second): a check whose findings do not depend on the language
    (axe's rules) then still meets both languages and both devices on every page."""
    import pytest

    pairs = [(lang, device) for device in devices for lang in langs]
    cases: list[Any] = []
    embeds = 0
    for path, charts in every_page():
        if path.startswith("/embed/"):
            chosen = [pairs[embeds % len(pairs)]]
            embeds += 1
        elif crossed is not None and path.split("?")[0] not in crossed:
            chosen = list(zip(langs, devices, strict=True))
        else:
            chosen = pairs
        cases += [pytest.param(path, charts, lang, device, id=f"{path}-{lang}-{device}") for lang, device in chosen]
    return cases
