"""How a static site's baked answers are laid out in files, so a page loads only what it shows: its first view's
answers and those several views share in data/<page>.js (loaded with the page's scripts), each other view's own
answers in data/<page>/<n>.js, loaded by static/js/staticsite.js the first time one of its requests is looked up.
/gradients' presets at depth 96 (each with a heatmap of 96 depths) no longer ride along on every visit.

A page finds the file of a request by its key's hash, listed in the page's manifest: FNV-1a (Fowler, Noll and Vo),
32 bits, over the key's UTF-16 code units, as static/js/viewkeys.js `keyHash` computes it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .static_views import View

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193


def key_hash(key: str) -> str:
    """8 hex digits: FNV-1a over the UTF-16 code units of `key` (JavaScript's string units)."""
    value = FNV_OFFSET
    data = key.encode("utf-16-le")
    for low, high in zip(data[::2], data[1::2], strict=True):
        value = ((value ^ (low | high << 8)) * FNV_PRIME) & 0xFFFFFFFF
    return f"{value:08x}"


@dataclass
class PageData:
    """A page's answers by file: `first` for data/<page>.js, `views` for each other view's own file (file name ->
    answers) and `index` (key hash -> position of its file in `views`)."""

    first: dict[str, Any]
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    index: dict[str, int] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        """What the page's script needs to find a view's file (pageData.static.split)."""
        return {"files": list(self.views), "index": self.index}


def split(page: str, views: list[View], answers: dict[str, Any]) -> PageData:
    """The first view's answers and every answer two views ask for in one file; each other view's own answers in
    data/<page>/<n>.js (n: the view's place in the manifest). Two keys of view files with one hash stop the build."""
    keys_of = [list(dict.fromkeys(call.key for call in view.calls)) for view in views]
    uses = Counter(key for keys in keys_of for key in keys)
    first = {key: answers[key] for keys in keys_of for key in keys if keys is keys_of[0] or uses[key] > 1}
    data = PageData(first)
    for number, keys in enumerate(keys_of[1:], start=1):
        own = {key: answers[key] for key in keys if key not in first}
        if not own:
            continue
        for key in own:
            if (digest := key_hash(key)) in data.index:
                raise ValueError(f"two baked requests of {page} share the hash {digest}: {key[:120]}")
            data.index[digest] = len(data.views)
        data.views[f"data/{page}/{number}.js"] = own
    return data
