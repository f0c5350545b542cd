"""The static site's views and keys (app/pages/static_views.py) without a browser: Python writes each baked answer's
key as static/js/viewkeys.js does (node runs the module itself), and a view that was not baked names the nearest."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from app.config import PRESETS, TraceConfig
from app.pages import pages
from app.pages.static_site import all_views, manifest
from app.pages.static_views import Call, canonical, js_number, request_key
from app.paths import asset_dir

VIEWKEYS = asset_dir("static") / "js" / "viewkeys.js"
NUMBERS = [0, 1, -1, 1.0, 2.5, 1e-5, 2.5e-6, 1e-7, 1.5e-7, 0.001, 123456.789, 1e20, 1e21, 1.5e300, 2.213363839400643]


def node(script: str, payload) -> Any:
    """Run `script` (an ES module importing viewkeys.js as `keys`, reading `input`) under node; its printed JSON."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    source = f"import * as keys from {json.dumps(VIEWKEYS.as_uri())};\nconst input = {json.dumps(payload)};\n{script}"
    done = subprocess.run(
        ["node", "--input-type=module", "-e", source], capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(done.stdout)


def test_numbers_and_keys_are_written_as_javascript_writes_them():
    body = TraceConfig(depth=12, residual_scale=(2 * 12) ** 0.25).model_dump()
    calls = [
        ("POST", "/api/trace", {}, body),
        ("GET", "/api/presets?depth=12", {"depth": "12"}, None),
        ("POST", "/api/figure/norms?lang=zh", {"lang": "zh"}, {"text": "残差", "x": [8.0, -0.5, 1e-5]}),
    ]
    script = """console.log(JSON.stringify({numbers: input.numbers.map((n) => JSON.stringify(n)),
      keys: input.calls.map(([method, url, , body]) => keys.requestKey(method, url, body))}));"""
    answer = node(script, {"numbers": NUMBERS, "calls": calls})
    assert answer["numbers"] == [js_number(n) for n in NUMBERS]
    assert answer["keys"] == [request_key(m, url.split("?")[0], query, body) for m, url, query, body in calls]


def test_lists_two_answers_share_are_written_once_and_read_back_alike():
    """The data script's pool (app/pages/static_pages.py) as Python and the browser read it back."""
    from app.pages.static_pages import data_script, read_data_script

    z = [[float(i * j) for j in range(12)] for i in range(6)]
    layers = list(range(40))
    answers = {
        "en": {"figure": {"data": [{"z": z, "x": layers}]}, "caption": "Each cell", "rows": [{"layer": 1}]},
        "zh": {"figure": {"data": [{"z": z, "x": layers}]}, "caption": "每个格子", "rows": [{"layer": 1}]},
        "other": {"y": [1.5, None, 2.0], "x": layers[:3]},
    }
    script = data_script("gradients", answers)
    assert script.count("[0.0,0.0,0.0") == 1 and script.count('"$shared":"gradients:') == 2  # the same traces, twice
    assert read_data_script(script) == answers
    read = "const window = {}; new Function('window', input.script)(window);"
    read += "console.log(JSON.stringify(Object.fromEntries(Object.entries(window.RESNORM_ANSWERS)"
    read += ".map(([k, v]) => [k, keys.resolveShared(v, window.RESNORM_SHARED)]))));"
    assert node(read, {"script": script}) == answers


def test_canonical_sorts_keys_and_keeps_text():
    assert canonical({"b": 1.0, "a": [True, None, "√d"]}) == '{"a":[true,null,"√d"],"b":1}'
    assert js_number(float("inf")) == "null"


def test_nearest_views_are_the_fewest_differing_keys_in_manifest_order():
    views = [
        {"query": {}, "preset": ""},
        {"query": {"depth": "12", "norm": "rmsnorm"}, "preset": "llama"},
        {"query": {"depth": "12", "norm_position": "post"}, "preset": "post_ln"},
        {"query": {"depth": "96", "norm": "rmsnorm"}, "preset": "llama"},
    ]
    keys = ["depth", "norm", "norm_position", "seed"]
    cases = [
        ({"depth": "12", "norm": "rmsnorm", "seed": "3"}, [1, 3, 0]),  # 1 differing, 2, then 3 and 3 in order
        ({"seed": "3"}, [0, 1, 2]),
        ({"depth": "96", "norm": "rmsnorm", "theme": "slide"}, [3, 1, 0]),  # a key outside `keys` never counts
    ]
    script = (
        "console.log(JSON.stringify(input.cases.map(([query]) => keys.nearestViews(input.views, query, input.keys))));"
    )
    assert node(script, {"views": views, "keys": keys, "cases": cases}) == [want for _, want in cases]


def test_every_page_bakes_its_default_and_each_preset_at_each_depth():
    views = all_views((12, 96), ("en", "zh"))
    assert {"home", "norms", "gradients", "compare", "chain", "layernorm", "softmax", "precision", "batchnorm"} <= set(
        views
    )
    for page in ("norms", "gradients", "compare"):
        assert views[page][0].query == {} and views[page][0].preset == ""
        assert len(views[page]) == 1 + 2 * len(PRESETS)
        for view in views[page][1:]:
            default = str(
                pages()[page].defaults.get("depth", TraceConfig().depth)
            )  # not in the URL when it is the default
            assert view.query.get("depth", default) in ("12", "96")
            TraceConfig(**next(c.body for c in view.calls if c.path == "/api/budget"))  # the API accepts the body
    norms = [c for c in views["norms"][0].calls if c.path == "/api/figure/norms"]
    assert sorted(c.query["lang"] for c in norms) == ["en", "zh"]  # the chart's words are in the page's language
    sweep = next(c for c in views["gradients"][0].calls if c.path == "/api/sweep")
    assert sweep.stream and sweep.body["depths"] == list(range(1, 97))  # the heatmap up to the model's depth
    shown = manifest("norms", views["norms"])
    assert "depth" in shown["keys"] and "lang" not in shown["keys"]
    assert [v["query"] for v in shown["views"]] == [v.query for v in views["norms"]]


def test_a_call_key_does_not_depend_on_the_order_of_its_fields():
    body = TraceConfig().model_dump()
    assert (
        Call("POST", "/api/trace", body=body).key == Call("POST", "/api/trace", body=dict(reversed(body.items()))).key
    )


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--depths", "0"], "each depth must be from 1 to"),
        (["--depths", "12,x"], "not a list of whole numbers"),
        (["--lang", "fr"], "languages are en, zh"),
    ],
)
def test_site_refuses_bad_options_in_one_line(argv, words, tmp_path, capsys):
    from app.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["site", "-o", str(tmp_path / "site"), *argv], prog="resnorm-explorer")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_site_refuses_a_file_as_its_folder(tmp_path, capsys):
    from app.cli import main

    target = tmp_path / "site.html"
    target.write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["site", "-o", str(target)], prog="resnorm-explorer")
    assert exit_.value.code == 1 and "is a file, not a folder" in capsys.readouterr().err


def test_each_training_preset_is_baked_as_the_lab_defines_it():
    """The body /train's script sends for a preset (app/pages/static_train.py retraces it) is that preset's request."""
    from app.experiments.train_answer import TrainCharts
    from app.experiments.train_presets import TRAIN_PRESETS, preset_request
    from app.pages.static_train import train_views, trained_requests

    views = train_views(("en", "zh"))
    assert len(views) == len(TRAIN_PRESETS) and views[0].query == {}  # the first preset is the page's default
    for view, key in zip(views, TRAIN_PRESETS, strict=True):
        charts = [c for c in view.calls if c.path.startswith("/api/figure/train-")]
        assert sorted((c.path, c.query["lang"]) for c in charts) == [
            (f"/api/figure/train-{chart}", lang) for chart in ("loss", "profile") for lang in ("en", "zh")
        ]
        asked = TrainCharts.model_validate(charts[0].body, context={"train_budget": False})
        assert asked.training() == preset_request(key)  # the run the charts draw is the preset's
        assert asked.kinds == list(TRAIN_PRESETS[key]["runs"])  # the curves named as on the page
        assert view.label == {"en": TRAIN_PRESETS[key]["name"], "zh": TRAIN_PRESETS[key]["name_zh"]}
    assert views[4].query == {"warmup_steps": "100", "depth": "24"}  # "24 blocks with warm-up": only what differs
    assert "runs" in manifest("train", views)["keys"] and "profile" not in manifest("train", views)["keys"]
    assert [TrainCharts.model_validate(body).training() for body in trained_requests(views)] == [
        preset_request(key) for key in TRAIN_PRESETS
    ]  # each run trained once, whatever the languages


def test_models_bakes_the_built_in_sentence_then_each_given_one(monkeypatch):
    from app.pages.static_views import models_view

    extra = pages()["models"].extra
    for key, value in {"ready": True, "default_model": "minilm", "default_compare": "smollm2"}.items():
        monkeypatch.setitem(extra, key, value)
    views = models_view(("en", "zh"), ("Hello there.", extra["default_text"], "残差连接。", "Hello there."))
    assert [v.query for v in views] == [{}, {"text": "Hello there."}, {"text": "残差连接。"}]
    charts = [c for c in views[2].calls if c.path.startswith("/api/figure/")]
    assert len(charts) == 2 * len(extra["charts"]) and {c.body["text"] for c in charts} == {"残差连接。"}
    assert {c.path.removeprefix("/api/figure/"): c.body.get("compare") for c in charts} == {
        key: "smollm2" if kind == "real_pair" else None for key, kind in extra["charts"].items()
    }  # each chart's body as its request kind takes it (static/js/pages/models.js `bodyOf`)
    counted = [(c.body["model"], c.body["text"]) for c in views[2].calls if c.path == "/api/real_tokens"]
    assert counted == [("minilm", "残差连接。"), ("smollm2", "残差连接。")]
    assert views[1].label == {"en": "Hello there.", "zh": "Hello there."}


def test_a_sentence_file_is_read_line_by_line():
    from app.cli.site_options import read_sentences

    assert read_sentences("First one.\r\n\n  \nSecond\tone.\n") == ((1, "First one."), (4, "Second\tone."))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Fine.\nA bell\x07 rings.\n", "line 2: contains control characters; allowed: one sentence per line"),
        ("Fine.\n\n" + "x" * 2001 + "\n", "line 3: 2001 characters; allowed: one sentence per line, each 1 to 2000"),
        ("".join(f"Sentence {i}.\n" for i in range(101)), "101 sentences; allowed:"),
    ],
)
def test_site_refuses_a_bad_sentence_naming_its_line(text, words, tmp_path, capsys):
    from app.cli import main

    sentences = tmp_path / "sentences.txt"
    sentences.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        main(["site", "-o", str(tmp_path / "site"), "--sentences", str(sentences)], prog="resnorm-explorer")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert "at most 256 tokens" in err and "sentences.txt" in err


@pytest.mark.parametrize("url", ["ftp://x.edu", "https://x.edu/?a=1", "x.edu", "https://"])
def test_site_refuses_a_server_that_is_not_an_address(url, tmp_path, capsys):
    from app.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["site", "-o", str(tmp_path / "site"), "--server", url], prog="resnorm-explorer")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "must be the explorer server's address" in err


def test_a_keys_hash_is_the_same_in_python_and_javascript():
    from app.pages.static_data import key_hash

    keys = [
        "",
        Call("POST", "/api/trace", body=TraceConfig(depth=96).model_dump()).key,
        request_key("POST", "/api/figure/models-stream", {"lang": "zh"}, {"text": "残差连接让梯度活下来 🙂"}),
    ]
    script = "console.log(JSON.stringify(input.map((key) => keys.keyHash(key))));"
    assert node(script, keys) == [key_hash(key) for key in keys]
    assert key_hash("") == "811c9dc5" and key_hash("a") == "e40c292c"  # FNV-1a's published values


def test_a_page_loads_its_first_view_with_it_and_each_other_view_from_its_own_file():
    from app.pages.static_data import key_hash, split
    from app.pages.static_views import View

    presets, budget = Call("GET", "/api/presets", {"depth": "12"}), Call("POST", "/api/budget", body={"depth": 12})
    trace = [Call("POST", "/api/trace", body={"depth": depth}) for depth in (96, 12, 13)]
    views = [
        View("norms", {}, (trace[0],)),
        View("norms", {"depth": "12"}, (presets, budget, trace[1]), "llama"),
        View("norms", {"depth": "13"}, (presets, budget), "post_ln"),  # nothing of its own: no file
        View("norms", {"depth": "13", "seed": "1"}, (presets, trace[2]), "pre_ln"),
    ]
    answers = {call.key: {"asked": call.path, "body": call.body} for view in views for call in view.calls}
    data = split("norms", views, answers)
    assert list(data.first) == [trace[0].key, presets.key, budget.key]  # the first view, then what views share
    assert data.views == {"data/norms/1.js": {trace[1].key: answers[trace[1].key]}, "data/norms/3.js": {
        trace[2].key: answers[trace[2].key]}}  # fmt: skip
    assert data.index == {key_hash(trace[1].key): 0, key_hash(trace[2].key): 1}
    assert data.manifest() == {"files": ["data/norms/1.js", "data/norms/3.js"], "index": data.index}
