"""The lecture deck as data: the lesson on residual connections and normalization, one idea per slide.

Each slide has a title, one to three sentences, speaker notes (English and Chinese), a chart request (the API
calls it needs, `sources`, and how to draw them, `kind`) and a claim: named values read from those answers and
checks on them. A slide names another by id, {slide:post-vs-pre}, never by number: build_deck writes the number
in, so inserting a slide (or leaving out the real models' slides) cannot leave a note pointing at the wrong one. The browser fills the caption with the values it measured; tests/test_lecture.py runs every
slide's sources through the real API and asserts every check, so the deck cannot say what the models do not show.

reference        the deck's one reference model (96 blocks, tanh, Xavier, seed 0) and its requests
slides_gradient  the gradient's trip down 96 blocks and the shortcut
slides_reference the slides on the reference model: live chain product, norm alone, snowball, its increments
slides_walls     what the snowballing stream runs into: drift, 16-bit overflow, softmax saturation
slides_norm      normalization: LayerNorm by hand, Post-LN vs Pre-LN (drawn by diagram.py, then measured), RMSNorm
slides_geometry  LayerNorm as geometry: the plane ⊥ (1, 1, 1) and the circle of radius √3, for typed numbers too
slides_paths     the unrolled stack: 2^L paths, and which lengths carry the gradient (Veit et al. 2016)
slides_training  learning rate × warm-up for Post-LN and Pre-LN, recorded (tools/lr_warmup_grid.py)
slides_speed     RMSNorm's speed, measured on the machine that shows it
slides_real      real pretrained models: the pinning, the snowball, the first-token sink (where installed)
slides_overview  title, alternatives (read from the registries), summary
slides_limits    the summaries of placement and warm-up, and of the two walls
slides_references the papers the slides name, in full (papers.py), over as many slides as they need
"""

from __future__ import annotations

import re
from typing import Any

from . import (
    slides_geometry,
    slides_gradient,
    slides_norm,
    slides_paths,
    slides_real,
    slides_speed,
    slides_training,
    slides_walls,
)
from .agenda import agenda_of, agenda_slide, ordered
from .describe import settings_text
from .papers import cited_by
from .slides_limits import limits_slide, walls_slide
from .slides_overview import alternatives_slide, summary_slide, title_slide
from .slides_references import reference_slides
from .terms import mark_terms


def build_deck() -> list[dict[str, Any]]:
    """The slides in the teaching order of agenda.SECTIONS, numbered, with the agenda filled in from the numbers."""
    made = [
        *slides_gradient.SLIDES,
        *slides_walls.SLIDES,
        *slides_norm.SLIDES,
        *slides_geometry.SLIDES,
        *slides_paths.SLIDES,
        *slides_speed.SLIDES,
        *slides_real.SLIDES,
        *slides_training.SLIDES,
    ]
    made.append(alternatives_slide())
    ids = [s["id"] for s in made]
    if len(set(ids)) != len(ids):
        raise ValueError(f"slide ids must be unique: {ids}")
    content = {s["id"]: s for s in made}
    content["summary"] = summary_slide(list(content.values()))
    content["summary-limits"] = limits_slide(list(content.values()))
    content["summary-walls"] = walls_slide(list(content.values()))
    for s in content.values():
        s["cites"] = cited_by(s)  # the footer's source line
    frame = {"title": title_slide(0), "agenda": agenda_slide(list(content))}
    references = {s["id"]: s for s in reference_slides(ordered({**content, **frame}))}  # the papers in deck order
    deck = ordered({**content, **frame, **references})
    place = {s["id"]: i for i, s in enumerate(deck)}

    def rebuilt(slide_id: str, new: dict[str, Any]) -> None:  # built again now that the order is known
        old = deck[place[slide_id]]
        deck[place[slide_id]] = {**new, "section": old["section"], "optional": old["optional"]}

    rebuilt("title", title_slide(len(deck)))
    for s in deck:
        charts = [s["chart"], *(o["chart"] for o in s.get("try_it", {}).get("options", []))]
        for c in charts:
            if c:
                c["settings"] = c.get("settings") or settings_text(c)
    numbers = {s["id"]: i for i, s in enumerate(deck, start=1)}
    deck[place["agenda"]]["agenda"] = agenda_of(deck)
    mark_terms(deck)
    return [number_slides(s, numbers) for s in deck]


SLIDE_REFERENCE = re.compile(r"\{slide:([\w-]+)\}")


def number_slides(value: Any, numbers: dict[str, int]) -> Any:
    """Every {slide:id} in a slide's strings (text, notes, claim, aside ...) replaced by that slide's number."""
    if isinstance(value, str):

        def number(match: re.Match[str]) -> str:
            if match[1] not in numbers:
                raise ValueError(f"{match[0]} names no slide of the deck")
            return str(numbers[match[1]])

        return SLIDE_REFERENCE.sub(number, value)
    if isinstance(value, dict):
        return {key: number_slides(item, numbers) for key, item in value.items()}
    if isinstance(value, list):
        return [number_slides(item, numbers) for item in value]
    return value


DECK: list[dict[str, Any]] = build_deck()


SLIDES = {slide["id"]: slide for slide in DECK}
# Slides whose "try it" control also takes typed numbers (try_it's `vector`): the option those numbers make.
TYPED_OPTIONS = {"layernorm-geometry": slides_geometry.typed_option}


def shown(slide_id: str, option: str | None = None) -> dict[str, Any]:
    """Slide `slide_id` as shown with "try it" option `option` (its chart and claim in place of the slide's own; the
    default option, or None, is the slide itself). KeyError names what is allowed."""
    if slide_id not in SLIDES:
        raise KeyError(f"slide: one of {', '.join(SLIDES)}")
    slide = SLIDES[slide_id]
    options = {o["key"]: o for o in slide.get("try_it", {}).get("options", [])}
    if option is None or option == slide.get("try_it", {}).get("default"):
        return slide
    if option not in options and slide_id in TYPED_OPTIONS:
        typed = TYPED_OPTIONS[slide_id](option)  # KeyError: the numbers it takes
        return {**slide, "chart": typed["chart"], "claim": typed["claim"]}
    if option not in options:
        allowed = ", ".join(options) if options else "none (this slide has no try-it control)"
        raise KeyError(f"option: one of {allowed}")
    return {**slide, "chart": options[option]["chart"], "claim": options[option]["claim"]}


def chart_key(slide: dict[str, Any]) -> str:
    """The slide's chart as an /embed/ name."""
    return f"lecture-{slide['id']}"


def deck_payload() -> dict[str, Any]:
    """GET /api/lecture: every slide in both languages."""
    return {"slides": DECK}
