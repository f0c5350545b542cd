"""The Python API (app/notebook/, `import resnorm_explorer as rx`): the HTTP API's numbers, its validation, the pages'
charts as plotly figures in both languages, and an import that does not load torch."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import app as rx
from app import figures
from app.figures import style
from app.i18n import lookup
from app.notebook.fields import TraceFields
from app.notebook.strings import t
from app.numbers import fmt

ROOT = Path(__file__).resolve().parents[1]
TIMING = ("elapsed_ms", "served_ms", "cached", "source")


def without_timing(answer: dict) -> dict:
    """An answer less what differs between two runs of the same computation: how long it took, where it came from."""
    return {**answer, "summary": {k: v for k, v in answer["summary"].items() if k not in TIMING}}


def test_trace_is_the_http_answer_number_for_number(client):
    ours = rx.trace(depth=6, norm_position="post")
    http = client.post("/api/trace", json={"depth": 6, "norm_position": "post"}).json()
    assert without_timing(ours.result) == without_timing(http)
    assert ours.layers == http["layers"] and len(ours.layers) == 6
    assert ours.summary["grad_survival"] == http["summary"]["grad_survival"] > 0


@pytest.mark.parametrize(
    "fields, field, words",
    [
        ({"depth": 500}, "depth", "less than or equal to 128"),
        ({"norm_position": "sideways"}, "norm_position", "'pre', 'post', 'sandwich' or 'mix'"),
        ({"n_heads": 3}, None, "n_heads: must divide d_model"),
        ({"depth": True}, "depth", "Input should be a valid integer"),
        ({"depth": "48"}, "depth", "Input should be a valid integer"),
    ],
)
def test_bad_fields_raise_the_http_apis_validation_error(fields, field, words, client):
    with pytest.raises(ValidationError) as caught:
        rx.trace(**fields)
    error = caught.value.errors()[0]
    assert words in error["msg"]
    if field:
        assert error["loc"] == (field,)
    http = client.post("/api/trace", json=fields)
    assert http.status_code == 422 and words in http.text


def test_a_model_too_large_for_the_machine_says_why_before_computing(monkeypatch):
    """In-process calls are bounded by this machine's memory; budget="server" applies the server's budget."""
    from app.config import machine as limits
    from app.notebook import traces

    monkeypatch.setattr(traces, "run_trace", lambda cfg: pytest.fail("computed a model over the budget"))
    huge: dict[str, Any] = {"depth": 128, "d_model": 512, "seq_len": 256, "batch": 64}
    with pytest.raises(ValueError, match="more than half of this machine's") as caught:
        rx.trace(**huge)
    need = float(str(caught.value).split("about ")[1].split(" GB")[0])
    assert need == pytest.approx(limits.trace_bytes(rx.TraceConfig.model_construct(**huge)) / 1e9, rel=1e-2)
    with pytest.raises(ValidationError, match="depth: the model is too large for this server"):
        rx.trace(**huge, budget="server")
    monkeypatch.setattr(limits, "physical_memory", lambda: 2 * int(limits.trace_bytes(rx.TraceConfig())) - 1)
    with pytest.raises(ValueError, match="budget=None"):
        rx.trace()
    monkeypatch.setattr(traces, "run_trace", lambda cfg: {"config": cfg.model_dump()})
    assert rx.trace(budget=None).result["config"]["depth"] == 12


def test_compare_traces_each_variant_as_the_http_api_does(client):
    pair = rx.compare(depth=5, norm_position=["post", "pre"])
    assert pair.changes == ["norm_position:post", "norm_position:pre"]
    assert pair.names == ["Custom + norm_position:post", "Custom + norm_position:pre"]
    for position, trace in zip(["post", "pre"], pair.traces, strict=True):
        http = client.post("/api/trace", json={"depth": 5, "norm_position": position}).json()
        assert without_timing(trace.result) == without_timing(http)
    figure = pair.figure()
    norms = [s for s in figure.data if s.yaxis in ("y", "y2")]  # the top row: one column per trace
    for series, trace in zip(norms, pair.traces, strict=True):  # the plotted values are the trace's
        assert list(series.y) == [trace.result["embedding"]["act_norm"], *(l["act_norm"] for l in trace.layers)]
        assert list(series.x) == list(range(6))
    # where the norm sits keeps its colour in every view: Post-LN vermillion, Pre-LN blue, as on the deck
    assert [s.line.color for s in norms] == [style.PALETTE["vermillion"], style.PALETTE["blue"]]
    assert all(abs(l["act_norm"] - 8.0) < 0.01 for l in pair.traces[0].layers)  # Post-LN pins √d_model = 8


def test_sweep_rows_are_the_http_sweeps_rows(client):
    ours = rx.sweep(1, 4, progress=False)
    http = client.post("/api/sweep?stream=false", json={"depths": [1, 2, 3, 4]}).json()["results"]
    assert [row["depth"] for row in ours.rows] == [1, 2, 3, 4] and not ours.interrupted
    assert ours.rows == [{k: v for k, v in row.items() if k not in TIMING} for row in http]
    heatmap = ours.figure().data[0]
    last = ours.rows[-1]  # relative: each row ÷ its last layer, on a log10 colour scale
    assert heatmap.z[-1][-1] == pytest.approx(0.0)
    # colours are log10 to 0.01 decade (app/figures/heatmap.py); the exact values are the chart's CSV rows
    assert heatmap.z[-1][1] == pytest.approx(math.log10(last["grad_norm"][0] / last["grad_norm"][-1]), abs=5e-3)


def test_the_servers_sweep_budget_applies_only_when_asked(monkeypatch):
    from app.notebook import sweeps as sweep_module

    monkeypatch.setattr(sweep_module, "run_trace", lambda cfg: pytest.fail("computed a depth of a refused sweep"))
    with pytest.raises(ValidationError, match="depths: the sweep is too large"):  # each depth fits, all 128 do not
        rx.sweep(1, 128, dtype="float16", budget="server")

    def stop(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "run_trace", stop)  # on this machine's budget it starts (and Ctrl-C stops it)
    assert rx.sweep(1, 128, dtype="float16", progress=False).interrupted


def test_ctrl_c_keeps_the_depths_already_done(monkeypatch):
    from app.notebook import sweeps as sweep_module

    real, calls = sweep_module.run_trace, []

    def interrupted_at_three(cfg):
        calls.append(cfg.depth)
        if cfg.depth == 3:
            raise KeyboardInterrupt
        return real(cfg)

    monkeypatch.setattr(sweep_module, "run_trace", interrupted_at_three)
    result = rx.sweep(1, 6, progress=False)
    assert result.interrupted and [row["depth"] for row in result.rows] == [1, 2] and calls == [1, 2, 3]


def test_the_norms_figure_is_the_pages_chart_in_either_language():
    trace = rx.trace(depth=8, norm_position="pre")
    english, chinese = trace.figure(), trace.figure(lang="zh")
    titles = [lookup(figures.strings(), "chart.norms.title", lang) for lang in ("en", "zh")]
    assert [english.layout.title.text, chinese.layout.title.text] == titles
    assert chinese.layout.xaxis.title.text == "层 l（0 = 嵌入层）"
    assert [s.line.color for s in english.data[:2]] == [style.PALETTE["blue"], style.PALETTE["vermillion"]]
    # The law drawn is the one the builder names (app/figures/norms.py, tests/test_figures_norms.py), following the
    # points it was fitted to from layer 0
    from app.figures import build

    chart = build("norms", trace.result, "en")
    law = chart.claim["law"]
    measured = [trace.result["embedding"]["act_norm"], *(l["act_norm"] for l in trace.layers)]
    if law is not None:
        theory = english.data[2]
        assert theory.name.startswith("Fit: ") and theory.line.dash == "dash"
        assert max(abs(a - b) / b for a, b in zip(theory.y, measured, strict=True)) < 0.05


def test_float16_overflow_is_marked_on_the_figure():
    trace = rx.trace(depth=48, dtype="float16", residual_scale=4.0)
    assert trace.summary["nonfinite"]
    figure = trace.figure()
    assert [list(d.y) for d in figure.data if d.name == "float16 limit 65504"] == [[style.FLOAT16_MAX] * 2]
    labels = [a.text for a in figure.layout.annotations]
    assert any("overflow (inf/NaN)" in text for text in labels), labels
    assert None in figure.data[0].y  # overflowed values are gaps, as strict JSON's null on the pages


def test_to_pandas_and_the_notebook_display():
    pandas = pytest.importorskip("pandas")
    trace = rx.trace(depth=3)
    frame = trace.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame["layer"]) == [0, 1, 2, 3]
    assert list(frame["grad_norm"][1:]) == [l["grad_norm"] for l in trace.layers]
    shown = trace._repr_html_()
    assert "<table>" in shown and t("nb.grad_survival") in shown and fmt(trace.summary["grad_survival"]) in shown
    assert t("nb.grad_survival", "zh") in rx.trace(depth=3, lang="zh")._repr_html_()


def test_importing_the_package_does_not_load_torch():
    code = (
        "import sys, time; s = time.perf_counter(); import app; took = time.perf_counter() - s; "
        "print('torch' in sys.modules, 'plotly' in sys.modules, took)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    torch_loaded, plotly_loaded, seconds = out.stdout.split()
    assert (torch_loaded, plotly_loaded) == ("False", "False"), out.stderr
    assert float(seconds) < 0.5  # measured 0.3 ms warm, 30 ms cold; torch alone takes about 3 s


SMALL: TraceFields = {"depth": 2, "d_model": 32, "n_heads": 2, "seq_len": 8, "vocab_size": 8, "batch": 16}


def test_train_records_what_post_api_train_streams(client):
    from tests.conftest import strict_lines

    runs: list[TraceFields] = [{**SMALL, "norm_position": "post"}, {**SMALL, "norm_position": "pre"}]
    ours = rx.train(None, runs=runs, steps=3, live=False)
    http = strict_lines(client.post("/api/train", json={"runs": runs, "steps": 3}).text)
    steps = [(e["run"], e["step"], e["loss"]) for e in ours.events if e["type"] == "step"]
    assert steps == [(e["run"], e["step"], e["loss"]) for e in http if e["type"] == "step"] and len(steps) == 6
    assert not ours.interrupted and [run["done"]["steps_done"] for run in ours.runs] == [3, 3]
    figure = ours.figure(lang="zh")
    assert figure.layout.title.text == "答案词元上的训练损失" and len(figure.data) == 3
    guess, *curves = figure.data  # the uniform guess over the 7 data symbols, under the curves
    assert list(guess.y) == [pytest.approx(math.log(7))] * 2 and guess.line.color == style.GREY
    assert [list(s.y) for s in curves] == [run["loss"] for run in ours.runs]
    assert [s.name for s in curves] == ["1. post-layernorm, L=2", "2. pre-layernorm, L=2"]


def test_ctrl_c_stops_a_training_run_between_steps(monkeypatch):
    from app.notebook import training

    real = training.train_events

    def interrupted_after_two_steps(request, cancel):
        for event in real(request, cancel):
            yield event
            if event.get("type") == "step" and event["step"] == 2:
                raise KeyboardInterrupt

    monkeypatch.setattr(training, "train_events", interrupted_after_two_steps)
    result = rx.train(None, runs=[SMALL], steps=50, live=False)
    assert result.interrupted and result.runs[0]["steps"] == [1, 2] and result.runs[0]["done"] is None
    assert len(result.figure().data[1].y) == 2


def test_unknown_preset_or_bad_setting_is_refused_before_training():
    with pytest.raises(ValueError, match="preset: one of post_vs_pre"):
        rx.train("post_or_pre")
    with pytest.raises(ValidationError) as caught:
        rx.train("post_vs_pre", steps=0)
    assert caught.value.errors()[0]["loc"] == ("steps",)


def test_a_lecture_slide_is_computed_as_the_server_does_and_its_claim_checked(client):
    snowball = rx.lecture.slide("snowball")
    body = snowball.data["chart"]["sources"][0]["body"]
    http = client.post("/api/trace", json=body).json()
    assert without_timing(snowball.answers[0]) == without_timing(http)
    assert snowball.holds and snowball.failed == []
    growth = http["summary"]["norm_growth"]
    assert snowball.measured["growth0"] == growth and f"×{fmt(growth)} from block 1 to 96" in snowball.statement()
    assert f"变为 {fmt(growth, lang='zh')} 倍" in snowball.statement("zh")
    figure = snowball.figure(lang="zh")
    assert figure.layout.title.text == snowball.data["chart"]["title"]["zh"]
    assert list(figure.data[0].y) == [http["embedding"]["act_norm"], *(l["act_norm"] for l in http["layers"])]
    # the laws the server fitted to seed 0 from ‖x₀‖ (POST /api/laws, drawn by app/figures/slides.py), named with the
    # claim's own numbers, and the laws answer the same as the HTTP API's
    laws_body = snowball.data["chart"]["sources"][4]["body"]
    assert snowball.answers[4] == client.post("/api/laws", json=laws_body).json()
    fits = figure.data[len(snowball.data["chart"]["series"]) :]  # after one line per seed
    assert [s.line.color for s in fits] == [style.PALETTE[c] for c in ("black", "purple", "vermillion", "green")]
    assert all(list(s.x) == list(range(0, 97)) and s.y[0] == pytest.approx(http["embedding"]["act_norm"]) for s in fits)
    p0, e_power0 = fmt(snowball.measured["p0"], 2, "zh"), fmt(snowball.measured["e_power0"], 3, "zh")
    e_sqrt0 = fmt(snowball.measured["e_sqrt0"], 3, "zh")
    assert fits[0].name == "√(‖x₀‖²+c·l)" and f"√(‖x₀‖² + c·l) 为 {e_sqrt0}" in snowball.statement("zh")
    assert fits[2].name == f"幂律 {p0}" and f"p = {p0} 时为 {e_power0}" in snowball.statement("zh")
    assert fits[3].name.startswith("不拟合") and fits[3].line.dash == "dot"


def test_a_two_panel_slide_and_a_slide_drawn_only_by_the_deck():
    collapse = rx.lecture.slide("norm-collapse")
    assert collapse.holds, collapse.failed
    figure = collapse.figure()
    assert {s.yaxis or "y" for s in figure.data} == {"y", "y2"} and figure.layout.yaxis2.range == (0, 1.05)
    chain = rx.lecture.slide("chain")
    assert chain.holds, chain.failed
    drawn = chain.figure()
    assert [s.name for s in drawn.data] == [s["label"]["en"] for s in chain.data["chart"]["series"]]
    assert list(drawn.data[0].y) == chain.answers[0][chain.data["chart"]["series"][0]["field"]]
    with pytest.raises(ValueError, match="has no chart"):
        rx.lecture.slide("title").figure()


def test_a_drawn_slide_shows_its_picture_in_a_notebook():
    diagram = rx.lecture.slide("block-diagram", lang="zh")
    shown = diagram._repr_html_()
    assert diagram.holds and 'role="img"' in shown and "子层 f" in shown and "192" in shown


COMPUTED_SLIDES = [s["id"] for s in rx.lecture.DECK if s["chart"] and s["chart"]["kind"] != "train"]


@pytest.mark.parametrize("slide_id", COMPUTED_SLIDES)
def test_every_slide_draws_and_its_claim_holds(slide_id):
    slide = rx.lecture.slide(slide_id, lang="zh")
    assert slide.holds, slide.failed
    figure = slide.figure()
    assert figure.layout.title.text == slide.data["chart"]["title"]["zh"] and figure.data
    assert "{" not in slide.statement()  # every placeholder filled with a measured value


def test_a_training_slide_draws_its_recorded_runs():
    """The deck's training slides train 2 runs x 300 steps (tests/test_lecture.py checks their claims through the
    API); here the same runs train 3 steps, and the slide's chart draws what they recorded."""
    from app.experiments.lecture.demos import recording_from_events
    from app.experiments.train import TrainRequest, train_events
    from app.figures import slides

    slide = next(s for s in rx.lecture.DECK if s["chart"] and s["chart"]["kind"] == "train")
    chart = slide["chart"]
    body = {**chart["sources"][0]["body"], "steps": 3}
    recording = recording_from_events(list(train_events(TrainRequest(**body))))
    short = {**slide, "chart": {**chart, "sources": [{**chart["sources"][0], "body": body}]}}
    figure = slides.build(short, [recording], "en").figure
    guess, *runs = figure["data"][: 1 + len(recording["runs"])]  # the uniform guess under the curves
    assert guess["y"] == [pytest.approx(math.log(body["runs"][0]["vocab_size"] - 1))] * 2
    assert [s["y"] for s in runs] == [run["loss"] for run in recording["runs"]]
    assert [s["name"] for s in runs] == [label["en"] for label in chart["labels"][: len(runs)]]
    idle = slides.build(short, [None], "en")
    assert idle.claim["pending"] and not idle.figure["data"] and idle.claim["verdict"] == ""


def test_a_claim_that_does_not_hold_says_so(monkeypatch):
    from app.notebook import lecture

    real = lecture.answer

    def shrunk(source):  # a stream that does not grow: the snowball claim must fail
        result = real(source)
        if source["api"] != "trace":
            return result
        for layer in result["layers"]:
            layer["act_norm"] = result["embedding"]["act_norm"]
        result["summary"]["norm_growth"] = 1.0
        return result

    monkeypatch.setattr(lecture, "answer", shrunk)
    slide = rx.lecture.slide("snowball")
    assert not slide.holds and slide.failed and "does NOT hold" in slide._repr_html_()
    with pytest.raises(ValueError, match="slide: one of title, agenda, model"):
        rx.lecture.slide("snowbal")


@pytest.mark.parametrize("slide_id", ["snowball", "norm-collapse", "float16", "alternatives", "summary"])
def test_the_notebook_slide_figure_is_the_pages_json(client, slide_id):
    """rx.lecture.slide(...).figure() is the figure GET /api/lecture/slide/<id> hands the deck, to the key, in both
    themes (the deck applies the "slide" patch on the 16:9 stage); the caption and verdict are the same too."""
    for lang in ("en", "zh"):
        page = client.get(f"/api/lecture/slide/{slide_id}?lang={lang}").json()
        slide = rx.lecture.slide(slide_id, lang=lang)
        from tests.test_figures_norms import plain

        assert plain(slide.figure()) == page["figure"]
        projected = plain(slide.figure(theme="slide"))
        from app.figures import apply_patch

        assert projected == apply_patch(page["figure"], page["patches"]["slide"])
        assert page["caption"] == slide.statement() and page["claim"]["failed"] == [] and slide.holds


def test_in_jupyter_training_draws_a_live_chart(monkeypatch):
    """In a kernel (get_ipython() has a kernel) rx.train shows a FigureWidget and redraws it as the runs train; when
    done, that output becomes the finished chart (plotly's mimetype and its offline HTML) and the widget closes."""
    import IPython
    import IPython.display
    import plotly.graph_objects as go
    import plotly.io as pio

    shown: list[object] = []
    updates: list[dict] = []

    class Handle:
        def update(self, bundle, raw=False):
            updates.append(bundle)

    def display(widget, display_id=False):
        shown.append(widget)
        return Handle()

    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Kernel", (), {"kernel": object()})())
    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(pio.renderers, "default", "plotly_mimetype")
    result = rx.train(None, runs=[SMALL], steps=12)
    assert len(shown) == 1 and isinstance(shown[0], go.FigureWidget) and len(result.runs[0]["loss"]) == 12
    assert shown[0].data[1].name == "1. pre-layernorm, L=2"
    [finished] = updates
    assert finished["application/vnd.plotly.v1+json"]["data"][1]["y"] == result.runs[0]["loss"]
    assert 'class="resnorm-chart"' in finished["text/html"]


def test_the_agenda_and_the_diagram_show_in_a_notebook_without_a_global_style():
    agenda = rx.lecture.slide("agenda", lang="zh")._repr_html_()
    assert "<th>部分</th>" in agenda and "<td>参考模型：96 块、tanh</td>" in agenda and "<td>10–13</td>" in agenda
    diagram = rx.lecture.slide("block-diagram")._repr_html_()
    assert "<style" not in diagram and diagram.count("<svg") == 1 and 'class="slide-picture wide"' in diagram
