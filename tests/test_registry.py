"""The page registry is collected by one function (app/pages/registry.py `collect`), never filled by importing a
module: importing a pages module changes no table, collecting twice gives equal tables and routes, and a page, chart
or word owned twice, or a page default the request model refuses, is refused at collection."""

from __future__ import annotations

import importlib
from dataclasses import replace

import pytest

from app import i18n
from app.pages import Page, collect, get_registry, registry
from tests.test_layers import GRAPH

OWNERS = ("explorer", "lecture", "lessons", "models", "train")


def routes(router) -> list[tuple[str, str]]:
    return [(route.path, route.name) for route in router.routes]


def test_importing_a_pages_module_registers_nothing():
    collected = get_registry()
    words, pages, table = dict(i18n.table()), dict(collected.pages), i18n.table()
    for owner in OWNERS:
        importlib.reload(importlib.import_module(f"app.pages.{owner}"))
    assert i18n.table() is table and dict(i18n.table()) == words
    assert get_registry() is collected and collected.pages == pages


def test_collecting_twice_gives_the_same_tables_and_one_route_each():
    first, second = collect(), collect()
    assert first.pages == second.pages and first.charts == second.charts and first.strings == second.strings
    assert routes(first.router) == routes(second.router)
    from app.pages.routes import page_router

    paths = [path for path, _ in routes(first.router) + routes(page_router())]
    assert len(paths) == len(set(paths)) == len(first.pages) + 2  # every page, /embed/{chart} and the strings file
    assert sorted(path for path, _ in routes(page_router())) == sorted(page.path for page in first.pages.values())
    assert {page.key for page in first.pages.values()} >= {"home", "norms", "train", "lecture", "chain", "models"}
    assert all(first.charts[chart] == key for key, page in first.pages.items() for chart in page.charts)


def test_the_pages_table_holds_every_owners_words_in_both_languages():
    table = collect().strings
    for owner in OWNERS:
        assert set(importlib.import_module(f"app.pages.{owner}").strings()) <= set(table), owner
    assert all(english and chinese for english, chinese in table.values())
    assert get_registry().t("nav.train", "zh") == "训练" and get_registry().t("nav.train") == "Training"


def test_a_word_owned_twice_or_without_chinese_is_refused():
    with pytest.raises(ValueError, match=r"owned twice: nav\.norms"):
        i18n.merge({"nav.norms": ("Norms", "范数")})
    with pytest.raises(ValueError, match="needs a non-empty"):
        i18n.merge({"page.new": ("New", "")})


@pytest.mark.parametrize(
    "bad, message",
    [
        (Page("norms", "/other", "norms.title"), "page collected twice: norms"),
        (Page("other", "/other", "norms.title", charts=("norms",)), "chart key norms already belongs to page norms"),
        (Page("other", "/other", "norms.title", defaults={"depth": 0}), "greater than or equal"),
        (Page("other", "/other", "norms.title", defaults={"colour": "red"}), "keys it does not have"),
    ],
)
def test_a_page_key_chart_or_default_that_does_not_fit_is_refused(monkeypatch, bad, message):
    class Owner:
        @staticmethod
        def pages() -> list[Page]:
            return [bad]

        @staticmethod
        def strings() -> dict[str, tuple[str, str]]:
            return {}

    monkeypatch.setattr(registry, "OWNERS", (*registry.OWNERS, Owner))
    with pytest.raises(ValueError, match=message):
        collect()
    ok = replace(bad, key="fine", path="/fine", charts=(), defaults={})
    monkeypatch.setattr(registry, "OWNERS", (*registry.OWNERS[:-1], type("Fine", (Owner,), {"pages": lambda: [ok]})))
    assert collect().pages["fine"] == ok


def test_the_notebook_never_imports_a_page_and_speaks_both_languages():
    from app.notebook.strings import t

    reached, todo = set(), [m for m in GRAPH if m.startswith("app.notebook")]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(GRAPH[module])
    assert not [m for m in reached if m.startswith("app.pages")]
    assert t("nb.loss", "zh") == "损失" and t("axis.layer", "zh") == "层 l（0 = 嵌入层）"
