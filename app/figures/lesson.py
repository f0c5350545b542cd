"""The lesson charts' words (app/experiments/lessons/text.py, read directly: a notebook needs no page imported first)
and their numbers: as many digits as the lesson's steps show, or the lesson's word for an overflow."""

from __future__ import annotations

from ..experiments.lessons.text import lesson_strings
from .style import Json, layout
from .words import precise as _precise
from .words import say


def text(key: str, lang: str, **values: object) -> str:
    """A lesson's string, or a shared one (app/i18n.py), with {placeholders} filled."""
    return say(lesson_strings(), key, lang, **values)


def precise(value: float | None, lang: str, digits: int = 6) -> str:
    return _precise(value, lang, digits, text("lesson.overflow", lang))


def blank(theme: str, lang: str, title: str, x: str, y: str, ylog: bool = False, **x_words: object) -> Json:
    """An empty figure in the theme, its title and axis titles the lesson's strings (keys), x's filled with x_words."""
    return {"data": [], "layout": layout(theme, text(title, lang), text(x, lang, **x_words), text(y, lang), ylog=ylog)}
