"""/lecture.html: the whole deck as one self-contained HTML file that presents offline from a USB stick.

The page is the same template as /lecture, with its stylesheet, Plotly.js (once), the deck's ES modules (bundled
below into one classic script) and every slide's answers inlined. Opened from file:// it makes no network request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...jsonsafe import to_strict
from ...paths import asset_dir
from . import DECK, chart_key
from .demos import run_source

SCRIPTS = asset_dir("static") / "js"
ENTRY = "pages/lecture.js"
STYLESHEET = asset_dir("static") / "css" / "lecture.css"

IMPORT = re.compile(
    r"^import\s+(?:\*\s+as\s+(?P<star>\w+)|\{(?P<names>[^}]*)\})\s+from\s+'(?P<path>[^']+)';[ \t]*$", re.M
)
EXPORTED = re.compile(r"^export\s+((?:async\s+)?function\*?\s+(\w+)|(?:const|let|class)\s+(\w+))", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{(?P<names>[^}]*)\};?[ \t]*$", re.M)


async def bake() -> dict[str, Any]:
    """Every slide's answers, each distinct request once: {"answers": [...], "slides": {id: [index, ...]}}."""
    answers: list[Any] = []
    index: dict[str, int] = {}
    slides: dict[str, list[int]] = {}
    for slide in DECK:
        if not slide["chart"]:
            continue
        slides[slide["id"]] = []
        for source in slide["chart"]["sources"]:
            key = json.dumps(source, sort_keys=True)
            if key not in index:  # one request after the other: an export must not flood the compute pool
                index[key] = len(answers)
                answers.append(await run_source(source))
            slides[slide["id"]].append(index[key])
    return to_strict({"answers": answers, "slides": slides})[0]


def bundle(entry: str = ENTRY) -> str:
    """The entry module and everything it imports as one classic script: each module becomes a function whose
    return value is its exports, called in dependency order. Enough for this repo's modules (named imports,
    `import * as`, exported declarations and `export { ... }` lists), not a general bundler."""
    order: list[str] = []
    _visit(entry, order, set())
    parts = ["'use strict';", "const modules = {};"]
    parts += [_wrap(path) for path in order]
    return "(() => {\n" + "\n".join(parts) + "\n})();\n"


def _resolve(importer: str, spec: str) -> str:
    return str((Path(importer).parent / spec).as_posix()).replace("\\", "/") if spec.startswith(".") else spec


def _normalise(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _visit(path: str, order: list[str], seen: set[str]) -> None:
    if path in seen:
        return
    seen.add(path)
    for match in IMPORT.finditer((SCRIPTS / path).read_text(encoding="utf-8")):
        _visit(_normalise(_resolve(path, match["path"])), order, seen)
    order.append(path)


def _wrap(path: str) -> str:
    code = (SCRIPTS / path).read_text(encoding="utf-8")

    def imported(match: re.Match) -> str:
        source = f"modules[{json.dumps(_normalise(_resolve(path, match['path'])))}]"
        if match["star"]:
            return f"const {match['star']} = {source};"
        names = [n.strip().replace(" as ", ": ") for n in match["names"].split(",") if n.strip()]
        return f"const {{ {', '.join(names)} }} = {source};"

    exports = [m[2] or m[3] for m in EXPORTED.finditer(code)]
    for listed in EXPORT_LIST.finditer(code):
        exports += [_export_pair(n) for n in listed["names"].split(",") if n.strip()]
    code = IMPORT.sub(imported, code)
    code = EXPORT_LIST.sub("", code)
    code = EXPORTED.sub(lambda m: m[1], code)
    body = f"{code}\nreturn {{ {', '.join(exports)} }};"
    return f"modules[{json.dumps(path)}] = (() => {{\n{body}\n}})();"


def _export_pair(name: str) -> str:
    local, _, public = (part.strip() for part in name.partition(" as "))
    return f"{public}: {local}" if public else local


def script_safe(text: str) -> str:
    """Inline script text must not close its own <script> element."""
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.I)


def page_data(lang: str, origin: str, baked: dict[str, Any]) -> dict[str, Any]:
    from ...i18n import client_table

    return {
        "page": "lecture",
        "lang": lang,
        "embed": None,
        "charts": [chart_key(s) for s in DECK if s["chart"]],
        "model_controls": False,
        "schema": None,
        "presets": None,
        "strings": client_table(lang),
        "extra": {"deck": DECK, "origin": origin, "baked": baked},
        "nav": {},
    }


async def offline_html(lang: str, origin: str) -> str:
    from ...assets import PLOTLY_JS
    from ...i18n import t
    from ...pages import PAGES, templates

    inline = {
        "css": STYLESHEET.read_text(encoding="utf-8"),
        "js": script_safe(bundle()),
        "plotly": script_safe(PLOTLY_JS.read_text(encoding="utf-8")),
    }
    context = {
        "page": PAGES["lecture"],
        "lang": lang,
        "html_lang": "zh-CN" if lang == "zh" else "en",
        "t": t,
        "offline": True,
        "inline": inline,
        "data": page_data(lang, origin, await bake()),
    }
    return templates.env.get_template("lecture.html").render(**context)
