"""/lecture.html's script: the deck's ES modules bundled into one classic script, so the offline file (rendered by
app/pages/lecture_offline.py with every slide's answers from app/services/deck.py) makes no network request.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence

from ...paths import asset_dir

SCRIPTS = asset_dir("static") / "js"
ENTRY = "pages/lecture.js"
STYLESHEET = asset_dir("static") / "css" / "lecture.css"

IMPORT = re.compile(
    r"^import\s+(?:\*\s+as\s+(?P<star>\w+)|\{(?P<names>[^}]*)\})\s+from\s+'(?P<path>[^']+)';[ \t]*$", re.M
)
EXPORTED = re.compile(r"^export\s+((?:async\s+)?function\*?\s+(\w+)|(?:const|let|class)\s+(\w+))", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{(?P<names>[^}]*)\};?[ \t]*$", re.M)


def bundle(entries: Sequence[str] = (ENTRY,), *, from_tag: bool = False) -> str:
    """The modules reachable from `entries` as one classic script: each module a function called the first time
    another needs it, so its imports run first, as ES modules do. Started: the entries themselves, or (`from_tag`,
    the static site's one script for every page) those the script tag's data-entry names, so a page runs only its
    own. Enough for this repo's modules (named imports, `import * as`, exported declarations and `export { ... }`
    lists), not a general bundler."""
    order = module_graph(entries)
    start = (
        "(document.currentScript.dataset.entry || '').split(' ').filter(Boolean)"
        if from_tag
        else json.dumps(list(entries))
    )
    parts = [
        "'use strict';",
        "const defined = {}, modules = {};",
        "const need = (path) => { if (!(path in modules)) modules[path] = defined[path](); return modules[path]; };",
        *(_wrap(path) for path in order),
        f"{start}.forEach(need);",
    ]
    return "(() => {\n" + "\n".join(parts) + "\n})();\n"


def module_graph(entries: Sequence[str]) -> list[str]:
    """Every module reachable from `entries` (paths under static/js), imports before importers, entries included."""
    order: list[str] = []
    for entry in entries:
        _visit(entry, order, set(order))
    return order


def _target(importer: str, spec: str) -> str:
    """The path a module's relative import names, from the scripts folder."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec)) if spec.startswith(".") else spec


def _visit(path: str, order: list[str], seen: set[str]) -> None:
    if path in seen:
        return
    seen.add(path)
    for match in IMPORT.finditer((SCRIPTS / path).read_text(encoding="utf-8")):
        _visit(_target(path, match["path"]), order, seen)
    order.append(path)


def _wrap(path: str) -> str:
    code = (SCRIPTS / path).read_text(encoding="utf-8")

    def imported(match: re.Match[str]) -> str:
        source = f"need({json.dumps(_target(path, match['path']))})"
        if match["star"]:
            return f"const {match['star']} = {source};"
        names = [n.strip().replace(" as ", ": ") for n in match["names"].split(",") if n.strip()]
        return f"const {{ {', '.join(names)} }} = {source};"

    exports = [m[2] or m[3] for m in EXPORTED.finditer(code)]
    for listed in EXPORT_LIST.finditer(code):
        for name in filter(str.strip, listed["names"].split(",")):
            local, _, public = (part.strip() for part in name.partition(" as "))
            exports.append(f"{public}: {local}" if public else local)
    code = EXPORTED.sub(lambda m: m[1], EXPORT_LIST.sub("", IMPORT.sub(imported, code)))
    return f"defined[{json.dumps(path)}] = () => {{\n{code}\nreturn {{ {', '.join(exports)} }};\n}};"


def script_safe(text: str) -> str:
    """Inline script text must not close its own <script> element."""
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.I)
