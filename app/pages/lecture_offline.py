"""/lecture.html: the whole deck as one self-contained HTML file that presents offline from a USB stick.

The page is the same template as /lecture, with its stylesheet, Plotly.js (once), the deck's ES modules (bundled by
app/experiments/lecture/export.py into one classic script) and every slide's view (figure, caption, verdict, built
by app/figures/slides.py on the recorded answers: app/services/deck.py) inlined.
Opened from file:// it makes no network request.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..assets import PLOTLY_JS
from ..experiments.lecture import DECK
from ..experiments.lecture.export import STYLESHEET, bundle, script_safe
from ..i18n import client_table, t
from ..services.compute import ComputePool
from ..services.deck import Progress, bake
from . import registry
from .registry import templates


def recorded_deck() -> list[dict[str, Any]]:
    """The deck as the file tells it: a slide's offline_text (its charts were recorded, not computed now) is its text,
    so no copy of the live wording travels in the file."""
    return [{**s, "text": s["offline_text"]} if s.get("offline_text") else s for s in DECK]


def page_data(lang: str, origin: str, baked: dict[str, Any], pages: dict[str, str] | None = None) -> dict[str, Any]:
    """The deck's page data; `pages` (a static site's files by page path) points its links at the site's pages."""
    return {
        "page": "lecture",
        "lang": lang,
        "embed": None,
        "model_controls": False,
        "schema": None,
        "presets": None,
        "strings": client_table(lang),
        "extra": {
            "deck": recorded_deck(),
            "origin": origin,
            "baked": baked,
            "links": bool(pages) or reachable(origin),
            "pages": pages,
        },
        "nav": {},
    }


LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", ""}


def reachable(origin: str) -> bool:
    """Whether the exporting server can be reached from another machine: a loopback address (a lecturer's laptop) is
    not, so the file names the server it needs instead of linking to 127.0.0.1."""
    return (urlsplit(origin).hostname or "") not in LOOPBACK


async def offline_html(
    pool: ComputePool, lang: str, origin: str, progress: Progress | None = None, pages: dict[str, str] | None = None
) -> str:
    """The file; `progress` is told of each slide view as it is computed (resnorm-explorer lecture prints it);
    `pages`: a static site's page files by path, which the slides' explorer links then open."""
    lecture = registry.get_registry().pages["lecture"]  # collecting the registry also sets the words t reads
    inline = {
        "css": STYLESHEET.read_text(encoding="utf-8"),
        "js": script_safe(bundle()),
        "plotly": script_safe(PLOTLY_JS.read_text(encoding="utf-8")),
    }
    context = {
        "page": lecture,
        "lang": lang,
        "html_lang": "zh-CN" if lang == "zh" else "en",
        "t": t,
        "offline": True,
        "inline": inline,
        "data": page_data(lang, origin, await bake(pool, lang, progress), pages),
    }
    return templates.env.get_template("lecture.html").render(**context)
