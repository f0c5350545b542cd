"""The deck's teaching order (app/experiments/lecture/agenda.py) and its terms (terms.py): no slide uses a term a later
slide teaches, in either language; the agenda slide lists the sections as the deck lays them out, with working jumps,
minutes that add up and a map of models read from the slides' own requests."""

from __future__ import annotations

import re

import pytest

from app.experiments.lecture import DECK
from app.experiments.lecture.agenda import MODELS, SECTIONS, model_of, ordered, slide_model
from app.experiments.lecture.terms import DEFINED_ON, PREVIEW, TERMS, terms_used, used_before_defined
from tests.test_glossary import glossary_rows

SLIDES = {s["id"]: s for s in DECK}
AGENDA = SLIDES["agenda"]["agenda"]


def test_no_slide_uses_a_term_before_the_slide_that_teaches_it():
    assert used_before_defined(DECK) == []


def test_the_check_fails_on_the_old_order():
    """The deck before the reorder used LayerNorm and Pre-LN from its sixth slide and taught them on 13 and 15, and
    ran the two walls after the norm: moving those slides back must fail the check, naming the slide and the term."""
    moved = list(DECK)
    collapse = moved.pop(moved.index(SLIDES["norm-collapse"]))
    moved.insert(moved.index(SLIDES["live-gradient"]) + 1, collapse)
    snowball = moved.pop(moved.index(SLIDES["snowball"]))
    moved.insert(moved.index(SLIDES["norm-collapse"]) + 2, snowball)
    late = used_before_defined(moved)
    assert ("norm-collapse", "en", "LayerNorm (layer normalization)") in late
    assert ("norm-collapse", "zh", "LayerNorm (layer normalization)") in late
    assert ("snowball", "en", "Pre-LN / Post-LN") in late


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_slide_that_defines_a_term_shows_it(lang):
    for slide_id, keys in DEFINED_ON.items():
        if slide_id in SLIDES:
            assert set(keys) <= set(terms_used(SLIDES[slide_id], lang)), (slide_id, lang, keys)
    for slide in DECK:
        assert slide["defines"] == list(DEFINED_ON.get(slide["id"], ()))


def test_every_term_is_a_row_of_the_glossary_and_is_defined_once():
    english = {row[0] for row in glossary_rows()}
    assert set(TERMS) <= english, set(TERMS) - english
    defined = [key for keys in DEFINED_ON.values() for key in keys]
    assert sorted(defined) == sorted(TERMS)  # each term: one teaching slide, no term without one
    assert set(DEFINED_ON) <= {slide_id for section in SECTIONS for slide_id in section.slides}


def test_the_deck_follows_the_sections_and_the_agenda_lists_them():
    sections = [s["section"] for s in DECK]
    runs = [key for i, key in enumerate(sections) if i == 0 or sections[i - 1] != key]
    assert runs == [section.key for section in SECTIONS if section.key in sections]  # each section in one piece
    assert [s["id"] for s in DECK[:2]] == ["title", "agenda"] and DECK[-1]["id"].startswith("references")
    number = {s["id"]: i for i, s in enumerate(DECK, start=1)}
    listed = {row["key"]: row for row in AGENDA["sections"]}
    for section in SECTIONS:
        present = [slide_id for slide_id in section.slides if slide_id in SLIDES]
        if section.key == "start" or not present:
            assert section.key not in listed
            continue
        row = listed[section.key]
        assert row["first"] == present[0] and row["minutes"] == section.minutes
        first, last = number[present[0]], number[present[-1]]
        assert row["slides"] == (str(first) if first == last else f"{first}–{last}")
    assert list(listed) == [key for key in runs if key != "start"]


def test_the_agenda_names_every_optional_slide_and_its_minutes_add_up():
    optional = [i for i, s in enumerate(DECK, start=1) if s["optional"]]
    shown = [int(n) for part in AGENDA["optional"].split(", ") for n in _expand(part)]
    assert shown == optional and SLIDES["drift"]["optional"] and not SLIDES["layernorm"]["optional"]
    total = SLIDES["agenda"]["claim"]["values"]["minutes"]["const"]
    assert total == sum(row["minutes"] for row in AGENDA["sections"]) + 2  # + the start (title and agenda)
    assert str(total) in SLIDES["agenda"]["notes"]["en"] and str(total) in SLIDES["agenda"]["notes"]["zh"]


def _expand(part: str) -> list[int]:
    low, _, high = part.partition("–")
    return list(range(int(low), int(high or low) + 1))


def test_the_model_map_is_read_from_the_slides_requests():
    number = {s["id"]: i for i, s in enumerate(DECK, start=1)}
    rows = {row["key"]: [n for part in row["slides"].split(", ") for n in _expand(part)] for row in AGENDA["models"]}
    assert set(rows) <= {key for key, _ in MODELS}
    listed = sorted(n for numbers in rows.values() for n in numbers)
    assert len(listed) == len(set(listed))  # a slide runs one model (or every preset)
    for slide in DECK:
        model = slide_model(slide)
        assert model != "other", slide["id"]
        if model is None:
            assert number[slide["id"]] not in listed
            continue
        assert number[slide["id"]] in rows[model], (slide["id"], model)
        # the map and the orange "Not the reference model" line agree
        assert (model == "reference") == (not slide.get("departs")), slide["id"]
    assert number["live-gradient"] in rows["reference"] and number["float16"] in rows["stack-48"]
    assert model_of({"api": "chain", "query": {}}) is None


def test_a_slide_no_section_places_stops_the_build():
    with pytest.raises(ValueError, match="no section"):
        ordered({**SLIDES, "stray": {**SLIDES["chain"], "id": "stray"}})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_agenda_slide_renders_its_jumps_and_the_footer_marks_optional_slides(client, lang):
    html = client.get(f"/lecture?lang={lang}").text
    agenda = html[html.index('id="agenda"') : html.index('id="model"')]
    jumps = re.findall(r'<a href="#([\w-]+)" data-agenda="([\w-]+)"', agenda)
    assert [key for _, key in jumps] == [row["key"] for row in AGENDA["sections"]]
    assert all(target in SLIDES for target, _ in jumps)
    assert 'data-model="reference"' in agenda and ("Reference: 96 blocks" if lang == "en" else "参考模型") in agenda
    drift = html[html.index('id="drift"') : html.index('id="float16"')]
    assert (
        "optional-mark" in drift
        and "optional-mark" not in html[html.index('id="float16"') : html.index('id="softmax"')]
    )
    assert all(slide_id in html for slide_id in PREVIEW)


def test_the_docs_story_table_follows_the_deck():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "lecture.md").read_text(encoding="utf-8")
    table = text[text.index("| # | Slide |") :].split("\n\n")[0].splitlines()[2:]
    numbers = [int(row.split("|")[1]) for row in table]
    assert numbers == list(range(1, len(DECK) + 1))
    assert "agenda" in table[1] and "Title" in table[0] and "References" in table[-1]
    minutes = next(s for s in DECK if s["id"] == "agenda")["claim"]["values"]["minutes"]["const"]
    assert f"({minutes} in all;" in text
    # the deck's size in these docs and the README: tests/test_docs.py (it builds the deck without the real models)
    named = {"snowball": "The snowball", "train-shortcut": "Training with and without", "rmsnorm": "RMSNorm"}
    for slide_id, words in named.items():
        number = next(i for i, s in enumerate(DECK, start=1) if s["id"] == slide_id)
        assert words in table[number - 1], (slide_id, table[number - 1])


def test_predict_slides_ask_a_question_in_both_languages(client):
    asking = [s for s in DECK if s.get("predict")]
    assert len(asking) >= 3
    for slide in asking:
        assert slide["predict"]["en"].rstrip().endswith("?") and slide["predict"]["zh"].rstrip().endswith("？")
        assert slide["chart"], slide["id"]  # the answer is a chart and its measured caption
    html = client.get("/lecture?lang=zh").text
    for slide in asking:
        section = html[html.index(f'id="{slide["id"]}"') :]
        section = section[: section.index("</section>")]
        assert "has-predict" in html[html.rindex("<section", 0, html.index(f'id="{slide["id"]}"')) :][:400]
        assert slide["predict"]["zh"] in section and f'data-reveal="{slide["id"]}"' in section


# ---- Try it: options inside a slide, each with its own requests and its own checked caption ---------------------
TRYING = [(s["id"], o["key"]) for s in DECK for o in s.get("try_it", {}).get("options", [])]


def test_three_slides_offer_a_try_it_control_whose_default_is_the_slide():
    trying = [s for s in DECK if s.get("try_it")]
    assert len(trying) >= 3
    for slide in trying:
        options = {o["key"]: o for o in slide["try_it"]["options"]}
        default = options[slide["try_it"]["default"]]
        assert default["chart"] == slide["chart"] and default["claim"] == slide["claim"], slide["id"]
        if not slide["try_it"].get("vector"):  # names the unit: "块数" over 12 24 48 96 (a typed vector is "x")
            assert re.search(r"[\u4e00-\u9fff]", slide["try_it"]["label"]["zh"])
        for o in options.values():
            # a label in words is translated; one of numbers and signs ("[8, 2, 2]", "×10") reads the same in both
            words = re.search(r"[A-Za-z]", o["label"]["en"])
            assert o["label"]["en"] and (re.search(r"[\u4e00-\u9fff]", o["label"]["zh"]) or not words)
            assert o["chart"]["settings"]["en"] and o["chart"]["kind"] == slide["chart"]["kind"]
            en, zh = (sorted(re.findall(r"\{(\w+)", o["claim"]["statement"][lang])) for lang in ("en", "zh"))
            assert en == zh and set(en) <= set(o["claim"]["values"]) and o["claim"]["checks"], (slide["id"], o["key"])


@pytest.mark.parametrize(("slide_id", "key"), TRYING)
def test_every_try_it_option_holds_on_the_real_api(client, slide_id, key):
    from app.experiments.lecture.claims import evaluate, failures
    from tests.test_lecture import ask

    option = next(o for o in SLIDES[slide_id]["try_it"]["options"] if o["key"] == key)
    answers = [ask(client, source) for source in option["chart"]["sources"]]
    measured = evaluate(option["claim"], answers)
    assert not failures(option["claim"], measured), (failures(option["claim"], measured), measured)
    if slide_id == "live-gradient" and key != "96":  # the depth names the block the statement divides by
        assert f"block {key}'s gradient" in option["claim"]["statement"]["en"]


def test_the_offline_file_records_every_option(monkeypatch):
    """bake() holds every slide's view and each option's under "id#key" (the views themselves: the offline file's
    browser test and tests/test_lecture.py)."""
    import asyncio

    from app.services import deck
    from app.services.compute import get_pool

    async def no_compute(pool, slide_id, option, lang, recordings=None):  # which views, not their numbers (training
        return {"id": slide_id, "option": option, "lang": lang}  # would take minutes)

    monkeypatch.setattr(deck, "slide_view", no_compute)
    monkeypatch.setattr(deck, "run_source", lambda pool, source: asyncio.sleep(0, result=[]))
    monkeypatch.setattr(deck, "recording_from_events", lambda events: {})
    views = asyncio.run(deck.bake(get_pool(), "zh"))["views"]
    assert {s["id"] for s in SLIDES.values()} <= set(views)
    for slide_id, key in TRYING:  # the default option is the slide itself
        if key == SLIDES[slide_id]["try_it"]["default"]:
            assert (
                views[slide_id] == {"id": slide_id, "option": None, "lang": "zh"} and f"{slide_id}#{key}" not in views
            )
        else:
            assert views[f"{slide_id}#{key}"] == {"id": slide_id, "option": key, "lang": "zh"}


def test_the_docs_statements_table_is_what_the_claims_say():
    """docs/lecture.md's table of statements is written from the claims (python -m tools.lecture_statements): a
    claim changed without the docs fails here. Without the real models their three slides are not in the deck: every
    other row must still be the deck's, and the docs' extra rows exactly those three."""
    from app.experiments.lecture import slides_real
    from tools.lecture_statements import DOCS, block, documented, rows

    text = DOCS.read_text(encoding="utf-8")
    stale = "docs/lecture.md's statements differ from the claims: run python -m tools.lecture_statements"
    if slides_real.SLIDES:
        assert block() in text, stale
        assert len(block().splitlines()) == len(DECK) + 4  # the markers, the header, its rule and a row per slide
    in_docs = documented(text)
    for title, statement, checks in rows():
        assert in_docs.get(title) == (statement, checks), (title, stale)
    real = {s["title"]["en"] for s in (slides_real.PINNED, slides_real.SNOWBALL, slides_real.SINK)}
    assert set(in_docs) - {title for title, _, _ in rows()} == (set() if slides_real.SLIDES else real)
