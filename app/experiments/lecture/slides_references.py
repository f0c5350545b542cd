"""The references: every paper the slides name, in full, in the order the deck first names them, over as many slides
as 24 px text needs (each slide's footer names its own papers)."""

from __future__ import annotations

import math
from typing import Any

from .build import claim, const, slide
from .papers import PAPERS

# What a references slide holds at 24 px on the 1280x720 stage: two columns of 15 lines, a line about 40 characters.
LINES_PER_SLIDE = 30
CHARS_PER_LINE = 40
MAX_PAGES = 4  # ids the agenda places: references, references-2, ... references-4


def page_id(page: int) -> str:
    return "references" if page == 1 else f"references-{page}"


def cited_in_order(slides: list[dict[str, Any]]) -> list[str]:
    return [key for key in dict.fromkeys(k for s in slides for k in s.get("cites", [])) if key in PAPERS]


def pages_of(cited: list[str]) -> list[list[str]]:
    """The papers split into slides by the lines their citations take (each at least one slide)."""
    pages: list[list[str]] = [[]]
    used = 0
    for key in cited:
        lines = math.ceil(len(PAPERS[key]) / CHARS_PER_LINE)
        if pages[-1] and used + lines > LINES_PER_SLIDE:
            pages.append([])
            used = 0
        pages[-1].append(key)
        used += lines
    if len(pages) > MAX_PAGES:
        raise ValueError(f"{len(cited)} papers need {len(pages)} reference slides; agenda.SECTIONS places {MAX_PAGES}")
    return pages


def reference_slides(slides: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The references slides of a deck whose content slides (with their `cites`) are `slides`, in deck order."""
    cited = cited_in_order(slides)
    pages = pages_of(cited)
    made = []
    first = 1
    for number, keys in enumerate(pages, start=1):
        more = len(pages) > 1
        made.append(
            slide(
                page_id(number),
                (
                    f"References ({number} of {len(pages)})" if more else "References",
                    f"参考文献（{number}/{len(pages)}）" if more else "参考文献",
                ),
                (
                    "The papers the slides lean on; each slide's footer names its own.",
                    "各页所依据的论文；每一页的页脚列出它自己引用的论文。",
                ),
                (
                    "Everything else on the slides was measured on this server. Where a number comes from a paper and "
                    "not from a measurement here (×1.045 per block in GPT-2 XL), the notes say so.",
                    "各页上的其他内容都是在本服务器上测得的。凡是来自论文而不是本地测量的数字（GPT-2 XL 中每块约乘以 "
                    "1.045），备注中都会注明。",
                ),
                None,
                claim(
                    ("Papers {first|0}–{last|0} of {count|0}.", "第 {first|0}–{last|0} 篇，共 {count|0} 篇论文。"),
                    {"first": const(first), "last": const(first + len(keys) - 1), "count": const(len(cited))},
                    [],  # a list, not a measurement
                ),
                references=[PAPERS[key] for key in keys],
                reference_start=first,
                cites=[],
            )
        )
        first += len(keys)
    return made
