"""The lecture deck: its API shape in both languages, every slide's claim asserted on the real API's numbers,
the trace statistic it added (checked by hand), the alternatives read from the registries, the offline file."""

from __future__ import annotations

import html as html_lib
import itertools
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
import torch

from app.api.responses import SlideTrainingMessage
from app.api.responses.charts import SlideTrainingProgress, SlideTrainingView
from app.config import TraceConfig
from app.experiments.lecture import DECK, chart_key
from app.experiments.lecture.claims import evaluate, failures, read_path, statement
from app.experiments.lecture.demos import recording_from_events
from app.experiments.lecture.sources import ALTERNATIVE_AXES, EXTRA_ALTERNATIVES, alternatives
from app.pages import get_registry
from app.probes.recorder import stream_statistics
from app.services.compute import get_pool
from app.services.deck import run_source
from tests.conftest import train_through_api

SLIDES = {slide["id"]: slide for slide in DECK}
TRAINING = [s["id"] for s in DECK if s["chart"] and any(src["api"] == "train" for src in s["chart"]["sources"])]
COMPUTED = [s["id"] for s in DECK if s["id"] not in TRAINING]
PLACEHOLDER = re.compile(r"\{(\w+)(?:\|\d+)?\}")
VOLATILE = {"cached", "source", "served_ms", "elapsed_ms"}


def strict(text: str):
    """Parse JSON that must not hold the non-standard tokens NaN, Infinity or -Infinity."""

    def refuse(token):
        raise AssertionError(f"non-strict JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def ask(client, source: dict) -> dict:
    """One source through the real HTTP API, as the browser sends it."""
    if source["api"] == "trace":
        response = client.post("/api/trace", json=source["body"])
    elif "query" in source:
        response = client.get(f"/api/{source['api']}?{urlencode(source['query'])}")
    else:
        response = client.post(f"/api/{source['api']}", json=source["body"])
    assert response.status_code == 200, response.text
    return strict(response.text)


def test_api_answers_every_slide_in_both_languages(client):
    response = client.get("/api/lecture")
    assert response.status_code == 200
    slides = strict(response.text)["slides"]
    assert len(slides) >= 16 and slides[0]["chart"] is None
    assert len({s["id"] for s in slides}) == len(slides)
    for slide in slides:
        for field in ("title", "text", "notes"):
            assert slide[field]["en"].strip() and slide[field]["zh"].strip(), (slide["id"], field)
            assert re.search(r"[\u4e00-\u9fff]", slide[field]["zh"]), (slide["id"], field)  # really Chinese
        claim = slide["claim"]
        assert set(claim) >= {"statement", "values", "checks"}
        for lang in ("en", "zh"):
            assert set(PLACEHOLDER.findall(claim["statement"][lang])) <= set(claim["values"]), (slide["id"], lang)
        assert {check["value"] for check in claim["checks"]} <= set(claim["values"])
        if slide["chart"]:
            chart = slide["chart"]
            assert chart["sources"] and chart["explorer"].startswith("/") and chart["title"]["zh"]
            assert chart["settings"]["en"] and chart["settings"]["zh"]
            assert claim["checks"], slide["id"]  # every chart slide claims something checkable


def test_both_statements_name_the_same_numbers():
    for slide in DECK:
        statement = slide["claim"]["statement"]
        assert PLACEHOLDER.findall(statement["en"]) and sorted(PLACEHOLDER.findall(statement["en"])) == sorted(
            PLACEHOLDER.findall(statement["zh"])
        ), slide["id"]


@pytest.mark.parametrize("slide_id", COMPUTED)
def test_claim_holds_on_the_real_api(client, slide_id):
    """Every check holds on the answers of the public API, and the deck's own view of the slide (GET
    /api/lecture/slide/<id>, what the page draws) states these very numbers and finds no failing check."""
    slide = SLIDES[slide_id]
    answers = [ask(client, source) for source in slide["chart"]["sources"]] if slide["chart"] else []
    measured = evaluate(slide["claim"], answers)
    assert not failures(slide["claim"], measured), (failures(slide["claim"], measured), measured)
    for lang in ("en", "zh"):
        view = client.get(f"/api/lecture/slide/{slide_id}?lang={lang}").json()
        assert view["caption"] == statement(slide["claim"], measured, lang) and "{" not in view["caption"]
        assert view["claim"]["failed"] == [] and not view["claim"]["pending"]
        assert view["claim"]["verdict"] == (
            get_registry().t("lecture.checked", lang) if slide["claim"]["checks"] else ""
        )


@pytest.mark.xdist_group("post-vs-pre-train")  # tests/test_lr_warmup.py reads the same run from this worker's server
@pytest.mark.parametrize("slide_id", TRAINING)
def test_training_claim_holds_on_the_real_api(client, slide_id):
    """The training slides as the deck trains them (T): POST /api/lecture/slide/<id>/train streams progress and the
    view built from the runs so far, then a final view, which GET answers from then on (the server keeps the finished
    runs). About 20 s a run. The claim is checked again from /api/train's own events (replayed from the server's
    store), read by hand."""
    slide = SLIDES[slide_id]
    with client.stream("POST", f"/api/lecture/slide/{slide_id}/train?lang=en") as response:
        assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
        lines = [line for line in response.iter_lines() if line.strip()]
    messages = [SlideTrainingMessage.model_validate_json(line, strict=True).root for line in lines]
    kinds = [m.type for m in messages]
    shown = [m for m in messages if isinstance(m, SlideTrainingView)]
    assert "error" not in kinds and kinds[-1] == "view" and shown[-1] is messages[-1] and shown[-1].final, kinds[-5:]
    assert [m.final for m in shown].count(True) == 1
    fractions = [m.fraction for m in messages if isinstance(m, SlideTrainingProgress)]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 3
    views = [json.loads(line)["view"] for line, m in zip(lines, messages, strict=True) if m.type == "view"]
    final = views[-1]

    def points(view: dict) -> int:  # the longest curve drawn
        return max(len(trace.get("y") or []) for trace in view["figure"]["data"])

    during = [points(v) for v in views[:-1]]
    assert during and min(during) < points(final), (during, points(final))  # drawn from the runs so far
    assert final["claim"]["failed"] == [] and not final["claim"]["pending"]
    assert final == client.get(f"/api/lecture/slide/{slide_id}?lang=en").json()
    answers = [recording_from_events(train_through_api(client, source)) for source in slide["chart"]["sources"]]
    measured = evaluate(slide["claim"], answers)
    assert not failures(slide["claim"], measured), (failures(slide["claim"], measured), measured)


def test_exact_powers_are_what_the_chain_slide_says(client):
    """The lesson's '0.6 in 10,000' and '≈ 12000' were slips: the slide's own numbers, by hand."""
    chain = SLIDES["chain"]
    answers = [ask(client, s) for s in chain["chart"]["sources"]]
    assert f"{answers[0]['plain_final']:.3g}" == "4.05e-05" and round(answers[1]["plain_final"]) == 9412
    assert round(ask(client, SLIDES["shortcut"]["chart"]["sources"][0])["residual_final"], 2) == 2.60


def test_claim_paths_and_ops():
    data = {"layers": [{"v": 1.0}, {"v": 4.0}, {"v": None}], "x": {"y": [3, 5]}}
    assert read_path(data, "layers[*].v") == [1.0, 4.0, None]
    assert read_path(data, "layers[1:].v") == [4.0, None] and read_path(data, "layers[-2].v") == 4.0
    assert read_path(data, "x.y[-1]") == 5 and read_path(data, "layers[7].v") is None
    claim = {
        "values": {
            "a": {"source": 0, "path": "layers[0:2].v"},
            "top": {"op": "max", "of": "a"},
            "r": {"op": "ratio", "of": ["a", "top"]},
            "root": {"op": "root", "of": "top", "n": 2},
            "first": {"op": "first_over", "of": "a", "bound": 2.0},
        },
        "checks": [
            {"value": "r", "op": "between", "bound": [0.25, 1.0]},
            {"value": "root", "op": "close", "bound": 2.0},
            {"value": "first", "op": "==", "bound": 2},
        ],
    }
    measured = evaluate(claim, [data])
    checks = claim["checks"]
    assert isinstance(checks, list)
    assert measured["r"] == [0.25, 1.0] and not failures(claim, measured)
    checks.append({"value": "top", "op": "<", "bound": 3.0})
    assert failures(claim, measured) == ["top < 3.0: measured 4.0"]


def test_token_coordinate_statistics_by_hand():
    """Per snapshot: the mean over tokens of each token's largest and smallest |x_i|, done with plain Python."""
    x = torch.tensor([[[3.0, -0.5, 1.0], [-7.0, 2.0, 0.25]], [[0.0, 1.0, -1.5], [4.0, -4.0, 0.1]]])  # (B=2, T=2, C=3)
    stats = stream_statistics([x, 10 * x])
    tokens = [row for sequence in x.tolist() for row in sequence]
    largest = sum(max(abs(v) for v in row) for row in tokens) / len(tokens)  # (3 + 7 + 1.5 + 4) / 4
    smallest = sum(min(abs(v) for v in row) for row in tokens) / len(tokens)  # (0.5 + 0.25 + 0 + 0.1) / 4
    assert stats["token_max_abs"] == pytest.approx([largest, 10 * largest], rel=1e-6)
    assert stats["token_min_abs"] == pytest.approx([smallest, 10 * smallest], rel=1e-6)
    assert largest == pytest.approx(3.875) and smallest == pytest.approx(0.2125)


def test_trace_reports_the_coordinate_spread_of_the_real_stream(client):
    """The embedding's statistics equal a hand computation on the model's own embedding output."""
    from app.models.init import build_model
    from app.models.stack import make_batch

    cfg = TraceConfig(depth=2, d_model=8, n_heads=2, seq_len=4, batch=2)
    body = client.post("/api/trace", json=cfg.model_dump()).json()
    model = build_model(cfg)
    inputs, _ = make_batch(cfg)
    with torch.no_grad():
        rows = model.embed(inputs).reshape(-1, cfg.d_model).abs().tolist()
    assert body["embedding"]["token_max_abs"] == pytest.approx(sum(map(max, rows)) / len(rows), rel=1e-6)
    assert body["embedding"]["token_min_abs"] == pytest.approx(sum(map(min, rows)) / len(rows), rel=1e-6)
    for layer in body["layers"]:
        assert 0 <= layer["token_min_abs"] <= layer["token_max_abs"] <= layer["act_max_abs"]


def test_token_cosine_survives_a_vanishing_stream():
    """Entries near 1e-30 used to underflow the squared norms and turn the cosine into garbage (e.g. 4e11)."""
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
    normal, tiny = stream_statistics([x, x * 1e-30])["cosine"]
    assert -1.0 <= normal <= 1.0 and tiny == pytest.approx(normal, abs=1e-5)


def test_every_listed_alternative_is_on_the_slide_with_its_patch():
    items = {item["key"]: item for item in alternatives(96)}
    for key, patch in EXTRA_ALTERNATIVES.items():
        assert key in items, f"alternative {key} ({patch}) is missing from the slide"
        assert all(getattr(items[key]["config"], axis) == value for axis, value in patch.items()), key


def test_alternatives_cover_every_value_of_every_architecture_axis():
    """A norm, shortcut or block kind added to the request model appears on the slide without editing it."""
    items = alternatives(96)
    schema = TraceConfig.model_json_schema()["properties"]
    for axis in ALTERNATIVE_AXES:
        for value in schema.get(axis, {}).get("enum", []):
            assert any(getattr(item["config"], axis, None) == value for item in items), (axis, value)
    slide = SLIDES["alternatives"]
    assert len(slide["chart"]["sources"]) == len(items) == len(slide["chart"]["labels"])


def test_baked_answers_equal_the_api(client):
    """What the offline file shows is what the API answers (minus timing and cache flags)."""
    import asyncio

    seen = set()
    for slide in DECK:
        for source in (slide["chart"] or {}).get("sources", []):
            key = json.dumps(source, sort_keys=True)
            if source["api"] == "train" or key in seen:
                continue
            seen.add(key)
            baked = json.loads(json.dumps(_strict(asyncio.run(run_source(get_pool(), source)))))
            assert _without_volatile(baked) == _without_volatile(ask(client, source)), source


def _strict(value):
    from app.jsonsafe import to_strict

    return to_strict(value)[0]


def _without_volatile(value):
    if isinstance(value, dict):
        return {
            k: _without_volatile(v)
            for k, v in value.items()
            if k not in VOLATILE and k != "nonfinite_fields" and k != "nonfinite_count"
        }
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_every_slide(client, lang):
    html = client.get("/lecture", params={"lang": lang}).text
    for slide in DECK:
        assert f'id="{slide["id"]}"' in html and slide["title"][lang].replace("'", "&#39;") in html
        if slide["chart"]:
            assert f'data-chart="{chart_key(slide)}"' in html
    assert html.count('<section class="slide') == len(DECK)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_offline_file_is_self_contained_and_holds_every_answer(client, lang):
    response = client.get("/lecture.html", params={"lang": lang})
    assert response.status_code == 200
    assert f'filename="resnorm-lecture-{lang}.html"' in response.headers["content-disposition"]
    html = response.text
    assert html.count("plotly.js v") == 1  # Plotly inlined once
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"(?!data:)", html)  # nothing to fetch
    assert "import " not in html.split('id="page-data"')[0]
    page_data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert page_data, "no page-data block"
    data = json.loads(page_data.group(1))
    assert data["lang"] == lang
    strict(json.dumps(data["extra"]["baked"]))
    views = data["extra"]["baked"]["views"]
    for slide in DECK:  # every slide's view as the live deck gets it, its training recorded, every check holding
        view = views[slide["id"]]
        assert view["claim"]["failed"] == [] and not view["claim"]["pending"], (slide["id"], view["claim"])
        assert "{" not in view["caption"] and bool(view["figure"]) == bool(slide["chart"]), slide["id"]


def test_every_chart_of_the_deck_is_warmed_at_start():
    """The server computes each slide's requests in the background at start-up, under the keys the API looks up."""
    from app.experiments.lessons.chain import ChainRequest
    from app.experiments.requests import REQUESTS
    from app.pages import warm_computations

    keys = {item.key for item in warm_computations()}
    for slide in DECK:
        for source in (slide["chart"] or {}).get("sources", []):
            if source["api"] == "trace":
                assert TraceConfig(**source["body"]).cache_key() in keys, slide["id"]
            if source["api"] == "chain":
                assert REQUESTS["chain"].cache_key(ChainRequest(**source["query"])) in keys, slide["id"]


# ---- One reference model, one story: the summary is its slides' numbers, and no two slides disagree -------------

DIRECTION_PATHS = ("summary.grad_survival", "summary.norm_growth")
FLAT = 1.2  # a ratio within ×1.2 of 1 states no direction ("about the same")
# What a slide calls a configuration ("norm only", "both (Pre-LN)"): the stabilizers and the sizes, not the
# activation, initialisation or seed, which a student does not see in a label.
NAMED_FIELDS = ("arch", "depth", "d_model", "block", "norm", "norm_position", "residual", "dtype")


def _trace_configs(chart: dict) -> list[TraceConfig]:
    from app.experiments.lessons.precision import snowball_config

    configs = [TraceConfig(**s["body"]) for s in chart["sources"] if s["api"] == "trace"]
    for source in chart["sources"]:
        if source["api"] == "precision":
            configs.append(snowball_config({k: str(v) for k, v in source["query"].items()}))
        if source["api"] == "train":
            configs += [TraceConfig(**run) for run in source["body"]["runs"]]
        if source["api"] == "depth_scan":
            from app.experiments.depth_scan import DepthScan

            configs += DepthScan(**source["body"]).configs()
        if source["api"] == "paths":
            configs.append(TraceConfig(**source["body"]["model"]))
        if source["api"] == "recorded":
            from app.experiments.lr_warmup import cell_request

            configs += cell_request(1e-3, 0).runs
    return configs


def test_every_slide_off_the_reference_model_says_so_first():
    from app.experiments.lecture.reference import DEPARTS_PREFIX, is_reference

    for slide in DECK:
        configs = _trace_configs(slide["chart"]) if slide["chart"] else []
        off = [cfg for cfg in configs if not is_reference(cfg)]
        pretrained = slide["chart"] and any(s["api"] == "real_trace" for s in slide["chart"]["sources"])
        if off or pretrained:
            assert "departs" in slide, (slide["id"], "runs another model but does not say so")
            for lang, prefix in zip(("en", "zh"), DEPARTS_PREFIX, strict=True):
                assert slide["departs"][lang].startswith(prefix), (slide["id"], lang)
        else:
            assert "departs" not in slide, (slide["id"], "is on the reference model")


@pytest.mark.parametrize("summary_id", ["summary", "summary-limits", "summary-walls"])
def test_summary_shows_the_very_numbers_of_its_slides(client, summary_id):
    """Every summary cell re-sends its slide's requests and shows the value that slide shows, with the same digits
    (a range: both ends shown on the slide); no cell is blank. Together the summaries hold the reference model's four
    settings, where the norm sits, warm-up (recorded) and the two walls."""
    summary = SLIDES[summary_id]
    answers = [ask(client, source) for source in summary["chart"]["sources"]]
    measured = evaluate(summary["claim"], answers)
    rows = summary["chart"]["cells"]
    assert all(cell is not None for row in rows for cell in row), "a blank cell in the summary"
    assert len(rows) == len(summary["chart"]["rows"]) and all(len(r) == len(summary["chart"]["columns"]) for r in rows)
    cells = [cell for row in rows for cell in row]
    shown = set()
    for cell in cells:
        origin = SLIDES[cell["slide"]]
        origin_measured = evaluate(origin["claim"], [ask(client, source) for source in origin["chart"]["sources"]])
        for key, name in ((cell["value"], cell["name"]), (cell.get("upto"), cell.get("name_upto"))):
            if key is None:
                continue
            shown.add(key)
            statement = origin["claim"]["statement"]["en"]
            assert f"{{{name}|{cell['digits']}}}" in statement or (
                cell["digits"] == 3 and f"{{{name}}}" in statement
            ), (cell, "not shown with these digits on its slide")
            assert origin_measured[name] == measured[key], cell
    for lang in ("en", "zh"):
        assert set(PLACEHOLDER.findall(summary["claim"]["statement"][lang])) <= shown, lang  # the caption: cells only
    digits = {c["value"]: c["digits"] for c in cells} | {c["upto"]: c["digits"] for c in cells if "upto" in c}
    for found, shown_digits in re.findall(r"\{(\w+)(?:\|(\d+))?\}", summary["claim"]["statement"]["en"]):
        assert int(shown_digits or 3) == digits[found], (found, "caption and table round differently")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_summary_ranges_cover_every_seed_where_the_seeds_disagree(client, seed):
    """The 'LayerNorm, no shortcut' gradient goes down on seed 0 and up on seed 2: the summary shows a range over
    seeds 0-3, and each seed's own value lies inside it."""
    from app.experiments.lecture.reference import request

    summary = SLIDES["summary"]
    measured = evaluate(summary["claim"], [ask(client, s) for s in summary["chart"]["sources"]])
    cell = next(c for c in summary["chart"]["cells"][2] if c["name"] == "g_low")
    own = ask(client, request("norm", seed))["summary"]["grad_survival"]
    assert measured[cell["value"]] <= own <= measured[cell["upto"]]
    assert measured[cell["value"]] < 1 / FLAT and measured[cell["upto"]] > FLAT  # the seeds do disagree


def test_summary_lead_does_not_credit_the_norm_with_what_its_table_denies():
    """The table shows the tokens collapsing (cosine ≈ 1) in every row without both stabilizers: the lead must not
    say the norm keeps anything from collapsing, and the claim checks the collapse row by row."""
    summary = SLIDES["summary"]
    for lang in ("en", "zh"):
        assert "collapses" not in summary["text"][lang] or "nothing" not in summary["text"][lang]
    assert "不坍缩" not in summary["text"]["zh"]
    collapsing = {c["value"] for c in summary["claim"]["checks"] if c["op"] == ">" and c["bound"] == 0.999}
    assert {"r0c2", "r1c2", "r2c2"} <= collapsing


def _direction(value: float | None) -> str:
    if value is None:
        return "overflow"
    if value < 1 / FLAT:
        return "down"
    return "up" if value > FLAT else "flat"


OPPOSITE = {frozenset({"down", "up"}), frozenset({"down", "overflow"}), frozenset({"flat", "overflow"})}


def stated_directions(slides: list[dict], answers_of) -> dict[tuple, dict[str, set[str]]]:
    """(configuration, quantity) -> slide id -> the directions that slide states for it (read directly from a
    source: a `source` or `sources` value on a direction path, or a table column of one)."""
    found: dict[tuple, dict[str, set[str]]] = {}
    for slide in slides:
        if not slide["chart"]:
            continue
        reads = [
            (i, spec["path"])
            for spec in slide["claim"]["values"].values()
            if spec.get("path") in DIRECTION_PATHS
            for i in ([spec["source"]] if "source" in spec else spec.get("sources", []))
        ]
        columns = [c["path"] for c in slide["chart"].get("columns", []) if c.get("path") in DIRECTION_PATHS]
        reads += [(i, path) for path in columns for i in range(len(slide["chart"]["sources"]))]  # a table's cells
        if not reads:
            continue
        answers = answers_of(slide)
        for i, path in reads:
            cfg = TraceConfig(**slide["chart"]["sources"][i]["body"]).model_dump()
            key = (tuple(cfg[f] for f in NAMED_FIELDS if not (f == "norm_position" and cfg["norm"] == "none")), path)
            found.setdefault(key, {}).setdefault(slide["id"], set()).add(_direction(read_path(answers[i], path)))
    return found


def contradictions(found: dict[tuple, dict[str, set[str]]]) -> list[str]:
    """Two slides contradict when each states one direction for the same configuration and the two are opposite.
    A slide that shows both directions for it (seeds that disagree) states none."""
    out = []
    for key, by_slide in found.items():
        stated = {sid: next(iter(d)) for sid, d in by_slide.items() if len(d) == 1}
        for a, da in stated.items():
            for b, db in stated.items():
                if a < b and frozenset({da, db}) in OPPOSITE:
                    out.append(f"{a} says {da}, {b} says {db} for {key}")
    return out


def test_no_two_slides_state_opposite_directions(client):
    def answers_of(slide):
        return [ask(client, s) if s["api"] == "trace" else None for s in slide["chart"]["sources"]]

    assert not contradictions(stated_directions(DECK, answers_of))


def test_the_contradiction_rule_catches_the_old_deck():
    """The old deck's slide 6 (norm only grows ×18) against its summary (0.0149), and 1.08 against an overflow."""
    found = {
        ("norm only", "g"): {"collapse": {"up"}, "summary": {"down"}},
        ("shortcut", "g"): {"live": {"flat"}, "summary": {"overflow"}},
        ("seeds", "g"): {"collapse": {"down", "up"}, "summary": {"down"}},  # a slide with both states none
    }
    assert len(contradictions(found)) == 2
    assert [_direction(v) for v in (0.0149, 1.08, 18.0, None)] == ["down", "flat", "up", "overflow"]


# ---- Statements their data deny: each range a sentence names is checked on every entry of it -------------------


def _answers(client, slide_id: str) -> tuple[dict, list]:
    slide = SLIDES[slide_id]
    return slide, [ask(client, source) for source in slide["chart"]["sources"]]


def test_range_ops_follow_the_entries():
    claim = {
        "values": {
            "a": {"const": [1.0, 200.0, 150.0, 90.0, 120.0]},
            "first": {"op": "first_over", "of": "a", "bound": 100.0},
            "last": {"op": "last_over", "of": "a", "bound": 100.0},
            "run": {"op": "slice", "of": "a", "start": "first", "stop": "last"},
            "rest": {"op": "slice", "of": "a", "start": "last", "shift": 1},
        },
        "checks": [{"value": "run", "op": ">", "bound": 100.0}, {"value": "rest", "op": "<", "bound": 100.0}],
    }
    measured = evaluate(claim, [])
    assert (measured["first"], measured["last"]) == (2, 3)
    assert measured["run"] == [200.0, 150.0] and measured["rest"] == [90.0, 120.0]
    assert failures(claim, measured) == ["rest < 100.0: measured [90.0, 120.0]"]  # 120 after the run: caught
    nested = {"values": {"v": {"const": [[1.0, 2.0], [3.0, 0.5]]}}, "checks": [{"value": "v", "op": ">", "bound": 0.9}]}
    assert failures(nested, evaluate(nested, []))  # seeds × blocks: one entry below the bound fails the claim


@pytest.mark.skipif("real-sink" not in SLIDES, reason="the real models are not installed")
def test_sink_slide_names_exactly_the_blocks_above_a_hundred(client):
    """The old slide said 'from block 12 on ... more than a hundred times'; the ratio is below 100 from block 20."""
    slide, answers = _answers(client, "real-sink")
    ratios = answers[0]["summary"]["first_token_ratio"][1:]  # entry k-1: block k
    measured = evaluate(slide["claim"], answers)
    above = [k + 1 for k, r in enumerate(ratios) if r > 100]
    assert above == list(range(measured["jump"], measured["last"] + 1))  # one run, and the caption names it
    assert measured["last"] < len(ratios)  # not 'from block 12 on'
    assert "from block 12 on" not in slide["text"]["en"]
    # the attention on the first token, drawn beside the ratio: below the uniform share where the ratio passes 100,
    # at least twice it in every later block (the two curves are related, not the same)
    mass, uniform = answers[0]["attention"]["mass"], answers[0]["attention"]["uniform"]
    assert measured["dip"] == mass[measured["jump"] - 1] < uniform
    assert min(mass[measured["jump"] :]) == measured["after_low"] > 2 * uniform


@pytest.mark.skipif("real-snowball" not in SLIDES, reason="the real models are not installed")
def test_real_snowball_does_not_claim_a_constant_factor(client):
    slide, answers = _answers(client, "real-snowball")
    means = answers[0]["stream"]["mean_without_first"]
    factors = [b / a for a, b in itertools.pairwise(means[1:])]
    measured = evaluate(slide["claim"], answers)
    assert measured["low"] == pytest.approx(min(factors)) and measured["high"] == pytest.approx(max(factors))
    assert min(factors) < 1 < 1.3 < max(factors)
    assert "constant" not in slide["text"]["en"] and "固定的倍数" not in slide["text"]["zh"]
    assert "Heimersheim" in slide["notes"]["en"] and "a few per cent" not in slide["notes"]["en"]
    assert "initialisation" in slide["notes"]["en"] and "trained" in slide["notes"]["en"]


def test_snowball_exponent_words_match_every_seed(client):
    """'Between √l and a line' was false on seed 1 (p = 0.45); the caption says 'nearer ½ than 1', checked on seeds
    0-3, and names the exponent, not 'nearer √l'. Every law is fitted on the server from ‖x₀‖ (POST /api/laws): the
    old free-intercept √l curve sat at 0 for blocks 1-5, below the embedding's norm of about 8."""
    slide, answers = _answers(client, "snowball")
    measured = evaluate(slide["claim"], answers)
    assert len(answers) == 8 and all(measured[f"p{i}"] < 0.75 for i in range(4))
    assert all(measured[f"e_sqrt{i}"] < measured[f"e_line{i}"] for i in range(4))
    assert "between √l and a line" not in slide["claim"]["statement"]["en"]
    assert "xₗ₊₁" not in slide["title"]["en"]  # the model has two sublayers per block, not one x + f(x)
    for trace, laws in zip(answers[:4], answers[4:], strict=True):
        x0 = trace["embedding"]["act_norm"]
        assert laws["values"][0] == x0
        for fit in [*laws["fits"].values(), laws["independent"]]:
            assert fit["curve"][0] == pytest.approx(x0) and min(fit["curve"]) >= x0 * (1 - 1e-9)
    drawn = [o["law"] for o in slide["chart"]["overlays"]]
    assert drawn == ["sqrt", "line", "power", "independent"]


def test_pre_ln_2017_stream_is_said_to_grow_faster_than_sqrt(client):
    slide, answers = _answers(client, "post-vs-pre")
    measured = evaluate(slide["claim"], answers)
    assert measured["p"] > 0.7 and measured["e_line"] < measured["e_sqrt"]
    assert "faster than √l" in slide["notes"]["en"] and "nearly linearly" not in slide["notes"]["en"]
    assert "nearly a line" not in slide["claim"]["statement"]["en"]


def test_drift_slide_says_the_lines_are_parallel(client):
    slide, answers = _answers(client, "drift")
    measured = evaluate(slide["claim"], answers)
    assert measured["high"] / measured["low"] < 20 < measured["growth"]
    assert "grows with them" not in slide["text"]["en"] and "parallel" in slide["text"]["en"]


def test_increments_slide_does_not_take_token_cosine_for_increment_correlation():
    notes = SLIDES["increments"]["notes"]["en"]
    assert "so the increments are not independent" not in notes and "one token's own increments" in notes


def test_gamma_beta_cannot_undo_layernorm_in_the_notes():
    notes = SLIDES["gamma-beta"]["notes"]
    assert "cannot undo" in notes["en"] and "BatchNorm" in notes["en"] and "无法撤销" in notes["zh"]


def test_alternatives_do_not_file_post_ln_with_the_clear_paths(client):
    from app.experiments.lecture.slides_overview import _group

    items = {item["key"]: item for item in alternatives(96)}
    assert _group(items["post_ln"]["config"]) == "normed" and _group(items["pre_ln"]["config"]) == "clear"
    slide = SLIDES["alternatives"]
    assert "GPT-2's recipe (GELU" not in slide["departs"]["en"]


def test_one_name_per_reference_setting_and_no_pre_ln_without_a_shortcut():
    """'Pre-LN without a shortcut' contradicts Pre-LN = x + f(LN(x)); 'Shortcut' meant two models in one colour."""
    from app.experiments.lecture.reference import COLORS, NAMES

    texts = json.dumps(DECK, ensure_ascii=False)
    assert "Pre-LN without" not in texts and "Norm only (Pre-LN)" not in texts
    seen: dict[str, str] = {}
    for sid in ("live-gradient", "norm-collapse"):
        for line in SLIDES[sid]["chart"]["series"]:
            name = next(k for k, (en, _) in NAMES.items() if line["label"]["en"].startswith(en))
            assert line["color"] == COLORS[name], (sid, line["label"]["en"])
            assert seen.setdefault(line["color"], name) == name, (sid, line["color"], "two models, one colour")
    settings = SLIDES["norm-collapse"]["chart"]["settings"]["en"]
    assert "Pre-LN" not in settings and "in front of each branch" in settings


def _zh_strings(node, path: str = "") -> list[tuple[str, str]]:
    """Every Chinese text of the deck, with where it sits (slide index and field)."""
    if isinstance(node, dict):
        found = [(path, node["zh"])] if isinstance(node.get("zh"), str) else []
        return found + [item for key, value in node.items() for item in _zh_strings(value, f"{path}.{key}")]
    if isinstance(node, list):
        return [item for i, value in enumerate(node) for item in _zh_strings(value, f"{path}[{i}]")]
    return []


# The deck's Chinese, by docs/glossary.md: 奈特 (not 纳特), 范数 for ‖x‖ (not 长度), 固定 (not 钉住), 绝对值最大的分量,
# 被舍入掉 (not 吞掉), 梯度比为 5.58 (not 梯度 ×5.58); and names a student should not read in code form.
DECK_AVOIDED = ("纳特", "长度", "钉", "最大元素", "吞", "坐标 ", "梯度 ×", "d_model", "layer_norm", "^l", "^96")


def test_the_decks_chinese_follows_the_glossary():
    from tests.test_glossary import avoided_terms, masked

    texts = _zh_strings(DECK)
    for avoided in [*DECK_AVOIDED, *(form for form, _ in avoided_terms())]:
        offending = [(path, zh[:60]) for path, zh in texts if avoided in masked(zh)]
        assert not offending, (avoided, offending)
    assert any("层归一化" in zh for _, zh in texts)  # LayerNorm is named in Chinese once, where it is taught


# The axis titles a chart kind draws from the lessons' strings (the layer index, 层 l, is the glossary's "layer l" and
# goes with 块; these count layers as units).
UNIT_AXES: dict[str, tuple[str, ...]] = {"chain": ("chain.axis.x", "chain.axis.y")}


def test_no_slide_mixes_layer_and_block_in_chinese():
    """One word per slide for what the stack is made of: 块 (block), unless the slide is about generic layers (the
    chain product, the shortcut: their chart counts layers)."""
    for slide in DECK:
        texts = " ".join(zh for _, zh in _zh_strings({k: v for k, v in slide.items() if k != "notes"}))
        kind = str((slide["chart"] or {}).get("kind"))
        texts += " ".join(get_registry().t(key, "zh") for key in UNIT_AXES.get(kind, ()))
        uses_block = "块" in texts
        layer_words = [w for w in ("每层", "逐层", "经过 96 层", "每一层", "层数", "经过 l 层") if w in texts]
        assert not (uses_block and layer_words), (slide["id"], layer_words)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_offline_file_says_its_charts_were_recorded_and_links_no_loopback(client, lang):
    """Exported from a laptop (origin 127.0.0.1), the file cannot open the explorer: it names the server it needs;
    its title says the charts were recorded, and the title shows no ✓ for merely counting slides."""
    import asyncio

    from app.pages.lecture_offline import offline_html, reachable

    client.get("/lecture.html", params={"lang": lang})  # records the training runs once, if still missing
    html = asyncio.run(offline_html(get_pool(), lang, "http://127.0.0.1:8000"))
    assert "127.0.0.1" not in html.split('id="page-data"')[-1].split("</script>", 1)[1]  # no link in the slides
    assert "resnorm-explorer serve" in html
    title = SLIDES["title"]
    assert ("recorded" if lang == "en" else "记录") in title["offline_text"][lang]
    # The text as a reader gets it: HTML entities and the page data's JSON escapes (tojson writes ' as \u0027) undone.
    block = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert block, "no page-data block"
    shown = html_lib.unescape(html) + json.dumps(json.loads(block.group(1)), ensure_ascii=False)
    assert title["offline_text"][lang] in shown and title["text"][lang] not in shown
    assert title["claim"]["checks"] == []
    assert reachable("https://lectures.example.org") and not reachable("http://localhost:8000")


def test_every_paper_a_slide_names_is_cited_in_full():
    """A slide that leans on a paper names it in its notes; its footer and the references slide then carry it."""
    from app.experiments.lecture.papers import PAPERS, named

    references = [paper for slide in DECK for paper in slide.get("references", [])]  # over its slides
    assert len(references) == len(set(references))
    for slide in DECK:
        for lang in ("en", "zh"):
            for short in named(slide["text"][lang] + " " + slide["notes"][lang]):
                assert short in PAPERS, (slide["id"], lang, short, "not in papers.PAPERS")
                assert short in slide["cites"] or slide["id"].startswith("references"), (slide["id"], short)
                assert PAPERS[short] in references, short
    assert "Heimersheim & Turner 2023" in SLIDES["real-snowball"]["cites"] if "real-snowball" in SLIDES else True
    assert "Xiong et al. 2020" in SLIDES["snowball"]["cites"]


def test_the_alternatives_cite_the_paper_of_every_variant_they_draw():
    """The alternatives slide draws variants from papers: its source line names each one the variant registry cites
    (app/config/variants.py's `paper`, where it names an author and a year)."""
    from app.config.variants import VARIANTS
    from app.experiments.lecture.papers import named

    slide = SLIDES["alternatives"]
    drawn = {(axis, getattr(item["config"], axis)) for item in alternatives(96) for axis in VARIANTS}
    from app.experiments.lecture.papers import PAPERS

    cited = [short for axis, value in drawn if value in VARIANTS[axis] for short in named(VARIANTS[axis][value].paper)]
    needed = {short for short in cited if short in PAPERS}  # "Ba, Kiros & Hinton 2016" is LayerNorm's own slide
    assert needed and needed <= set(slide["cites"]), needed - set(slide["cites"])


# A slide number written into a text ("slides 8 and 9", "第 8、9 页", "slide 16"): it goes stale when a slide is
# inserted, so slides name each other by id ({slide:post-vs-pre}) and build_deck writes the number in.
LECTURE = Path(__file__).resolve().parents[1] / "app" / "experiments" / "lecture"
LITERAL_SLIDE_NUMBER = re.compile(r"\b[Ss]lides? \d|第 ?\d+[^页。；]{0,12}页")


def _slide_texts(slide: dict) -> list[tuple[str, str]]:
    fields = {"title": slide["title"], "text": slide["text"], "notes": slide["notes"], **slide["claim"]}
    fields |= {key: slide[key] for key in ("aside", "departs", "offline_text") if key in slide}
    return [(f"{name}.{lang}", pair[lang]) for name, pair in fields.items() if "en" in pair for lang in ("en", "zh")]


def test_slides_name_each_other_by_id_never_by_a_written_number():
    from app.experiments.lecture import SLIDE_REFERENCE

    sources = {path.name: path.read_text(encoding="utf-8") for path in LECTURE.glob("slides_*.py")}
    references = [found for text in sources.values() for found in SLIDE_REFERENCE.findall(text)]
    assert references and set(references) <= set(SLIDES), set(references) - set(SLIDES)
    for name, text in sources.items():  # the written form, before numbering: only ids
        assert not LITERAL_SLIDE_NUMBER.search(text), (name, LITERAL_SLIDE_NUMBER.search(text))
    number = {slide_id: i for i, slide_id in enumerate(SLIDES, start=1)}
    for slide in DECK:
        for field, text in _slide_texts(slide):
            assert "{slide:" not in text, (slide["id"], field)
    notes = SLIDES["post-vs-pre"]["notes"]
    assert f"slides {number['snowball']} and {number['increments']}" in notes["en"]
    assert f"第 {number['snowball']}、{number['increments']} 页" in notes["zh"]
    summary = SLIDES["summary"]["notes"]["en"]
    assert f"next slide ({number['summary-limits']})" in summary
    assert f"slides {number['train-shortcut']} and {number['post-vs-pre-train']}" in summary


def test_a_slide_reference_to_no_slide_stops_the_build():
    from app.experiments.lecture import number_slides

    assert number_slides({"a": ["see slide {slide:x}"]}, {"x": 3}) == {"a": ["see slide 3"]}
    with pytest.raises(ValueError, match="names no slide"):
        number_slides("slide {slide:gone}", {"x": 3})


def _picture(lang: str, layout: str = "wide"):
    import xml.etree.ElementTree as ET

    svgs = re.findall(r"<svg .*?</svg>", SLIDES["block-diagram"]["picture"][lang], re.S)
    (svg,) = [s for s in svgs if f"slide-picture {layout}" in s]
    return ET.fromstring(svg)


SVG = "{http://www.w3.org/2000/svg}"


def _nodes(column) -> dict[str, dict]:
    """node -> its path (stream or branch) and its centre, read from the drawing."""
    return {
        g.get("data-node"): {"path": g.get("data-path"), "x": float(g.get("data-x")), "y": float(g.get("data-y"))}
        for g in column.iter(f"{SVG}g")
        if g.get("data-node")
    }


def test_block_diagram_comes_before_post_vs_pre_with_no_chart_and_no_check():
    ids = list(SLIDES)
    assert ids.index("block-diagram") == ids.index("post-vs-pre") - 1
    slide = SLIDES["block-diagram"]
    assert slide["chart"] is None and slide["claim"]["checks"] == []
    assert slide["claim"]["values"]["post"] == {"const": 192} and slide["claim"]["values"]["pre"] == {"const": 0}


@pytest.mark.parametrize("layout", ["wide", "tall"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_block_diagram_is_an_image_with_a_title_and_a_description(lang, layout):
    svg = _picture(lang, layout)
    assert svg.get("role") == "img"
    title, desc = svg.find(f"{SVG}title"), svg.find(f"{SVG}desc")
    assert svg.get("aria-labelledby") == title.get("id") and svg.get("aria-describedby") == desc.get("id")
    chinese = re.compile(r"[\u4e00-\u9fff]")
    assert bool(chinese.search(title.text)) == (lang == "zh") and bool(chinese.search(desc.text)) == (lang == "zh")
    assert "Post-LN" in desc.text and "Pre-LN" in desc.text and ("shortcut" if lang == "en" else "捷径") in desc.text
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert ("sublayer f" if lang == "en" else "子层 f") in texts and texts.count("LayerNorm") == 2
    assert "Post-LN (2017)" in texts or "Post-LN（2017）" in texts
    assert "x ← LN(x + f(x))" in texts and "x ← x + f(LN(x))" in texts
    assert all(int(t.get("font-size")) >= 24 for t in svg.iter(f"{SVG}text"))  # drawn 1:1 on the 1280x720 stage


def test_post_ln_draws_the_norm_on_the_shortcut_after_the_add_and_pre_ln_only_on_the_branch():
    svg = _picture("en")
    columns = {g.get("data-placement"): g for g in svg.iter(f"{SVG}g") if g.get("data-placement")}
    post, pre = _nodes(columns["post"]), _nodes(columns["pre"])

    def upward(nodes, path):  # the nodes of a path, in the order the stream meets them (drawn bottom to top)
        return [n for n, _ in sorted(((n, v) for n, v in nodes.items() if v["path"] == path), key=lambda i: -i[1]["y"])]

    assert upward(post, "stream") == ["input", "add", "norm", "output"] and upward(post, "branch") == ["sublayer"]
    assert upward(pre, "stream") == ["input", "add", "output"] and upward(pre, "branch") == ["norm", "sublayer"]
    spine = post["input"]["x"]
    assert post["norm"]["x"] == spine and pre["norm"]["x"] != spine  # on the shortcut's line, or off it
    # The thick blue line is unbroken in Pre-LN: one segment after another from input to output, nothing boxed on it.
    for nodes, column in ((post, columns["post"]), (pre, columns["pre"])):
        thick = [line for line in column.iter(f"{SVG}line") if line.get("data-path") == "shortcut"]
        assert all(float(line.get("x1")) == float(line.get("x2")) == spine for line in thick)
        assert len(thick) == sum(v["path"] == "stream" for v in nodes.values()) - 1
    boxes_on_spine = [n for n, v in pre.items() if v["x"] == spine and n not in ("input", "add", "output")]
    assert boxes_on_spine == []


def test_block_diagram_claim_counts_the_norms_the_drawing_shows():
    from app.experiments.lecture.diagram import PLACEMENTS, norms_on_stream

    assert {p.key: norms_on_stream(p.key) for p in PLACEMENTS} == {"post": 1, "pre": 0}
    values = SLIDES["block-diagram"]["claim"]["values"]
    assert values["sublayers"]["const"] == 2 * values["blocks"]["const"] == 192  # attention and FFN in each block


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_block_diagram_is_in_the_live_deck_and_the_offline_file(client, lang, monkeypatch):
    import asyncio

    from app.pages import lecture_offline

    async def nothing_baked(pool: object, lang: str, progress: object = None):  # the picture needs no chart answers
        return {"views": {}}

    monkeypatch.setattr(lecture_offline, "bake", nothing_baked)
    live = client.get("/lecture", params={"lang": lang}).text
    offline = asyncio.run(lecture_offline.offline_html(get_pool(), lang, "https://lectures.example.org"))
    picture = SLIDES["block-diagram"]["picture"][lang]
    for html in (live, offline):
        section = html.split('id="block-diagram"', 1)[1].split("</section>", 1)[0]
        assert picture in section and 'class="slide-figure"' in section and "data-chart=" not in section


def _speed_answer(ratios: list[float], spread: str) -> dict:
    """A norm-speed answer with these RMSNorm ÷ LayerNorm ratios (as GET /api/norm_speed shapes it)."""
    from app.experiments.lessons.norm_speed import speed_verdict

    rows = [{"ratio": r, "composed_ratio": 1.5} for r in ratios]
    return {"rows": rows, "verdict": speed_verdict(ratios), "spread": spread, "widths": [64, 256, 1024, 4096]}


@pytest.mark.parametrize(
    "ratios,spread,en,zh",
    [
        ([0.8, 0.7, 0.9, 0.85], "narrow", "RMSNorm is faster", "RMSNorm 更快"),
        ([1.2, 1.5, 1.1, 1.3], "narrow", "RMSNorm is slower", "RMSNorm 更慢"),
        ([0.9, 1.2, 1.0, 1.1], "wide", "neither norm is clearly faster", "没有明显的快慢之分"),
    ],
)
def test_rmsnorm_speed_caption_says_what_this_machine_measured(ratios, spread, en, zh):
    """The speed slide's direction is the measurement's (every width beyond ±5 %, else no winner), in both languages;
    a busy machine's wide bars are said."""
    slide = SLIDES["rmsnorm-speed"]
    measured = evaluate(slide["claim"], [_speed_answer(ratios, spread)])
    assert not failures(slide["claim"], measured)
    said = {lang: statement(slide["claim"], measured, lang) for lang in ("en", "zh")}
    assert en in said["en"] and zh in said["zh"], said
    assert ("busy" in said["en"]) == (spread == "wide") and ("很忙" in said["zh"]) == (spread == "wide")
    assert sum(word in said["en"] for word in ("is faster", "is slower", "clearly faster")) == 1
    assert f"{min(ratios):.2g}×" in said["en"] and f"{max(ratios):.2g}×" in said["en"]
