"""/lecture.html's script: the deck's ES modules bundled into one classic script, so the offline file (rendered by
app/pages/lecture_offline.py with every slide's answers from app/services/deck.py) makes no network request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...paths import asset_dir

SCRIPTS = asset_dir("static") / "js"
ENTRY = "pages/lecture.js"
STYLESHEET = asset_dir("static") / "css" / "lecture.css"

IMPORT = re.compile(
    r"^import\s+(?:\*\s+as\s+(?P<star>\w+)|\{(?P<names>[^}]*)\})\s+from\s+'(?P<path>[^']+)';[ \t]*$", re.M
)
EXPORTED = re.compile(r"^export\s+((?:async\s+)?function\*?\s+(\w+)|(?:const|let|class)\s+(\w+))", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{(?P<names>[^}]*)\};?[ \t]*$", re.M)


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
