"""Answers handed over with a page (app/pages/handover.py): a warm page carries its first charts exactly as the API
answers them, under the keys its script computes; a cold page carries none and starts no computation."""

from __future__ import annotations

import re

import pytest

from app.api.deps import compute_pool
from app.pages.handover import first_calls, handover_script
from app.services.compute import ComputePool
from tests.conftest import strict_json

HANDED = re.compile(r'<script type="application/json" id="page-handed">(.*?)</script>', re.S)


def plotly_first(html: str) -> bool:
    """Whether Plotly.js runs before the page's module (deferred scripts and modules run in document order)."""
    return html.index('id="plotly-script"') < html.index('<script type="module"')


def handed(html: str) -> dict | None:
    match = HANDED.search(html)
    return strict_json(match.group(1)) if match else None


@pytest.fixture
def own_pool(client):
    """The app with a pool of its own (memory cache only, empty) for the length of a test."""
    pool = ComputePool(1, cache_size=64, queue_timeout_s=30.0, threads=1)
    client.app.dependency_overrides[compute_pool] = lambda: pool
    yield pool
    client.app.dependency_overrides.pop(compute_pool, None)


def ask(client, call) -> dict:
    response = client.post(call.path, params=call.query, json=call.body)
    assert response.status_code == 200, response.text
    return strict_json(response.text)


# Small models no other test asks for: the module-wide chart cache cannot hold them already.
GRADIENTS = {"depth": "5", "seed": "11", "d_model": "16", "n_heads": "2", "sweep_to": "4"}


def test_a_cold_page_hands_nothing_over_and_computes_nothing(client, own_pool):
    response = client.get("/gradients", params={**GRADIENTS, "seed": "12"})
    assert response.status_code == 200 and handed(response.text) is None
    assert not plotly_first(response.text)  # its first requests leave before Plotly.js runs
    assert own_pool.computed == 0 and own_pool.active == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_warm_page_hands_over_its_first_charts_as_the_api_answers_them(client, own_pool, lang):
    query = {**GRADIENTS, "heat": "absolute"} if lang == "zh" else GRADIENTS
    calls = first_calls("gradients", query, lang)
    # the profile (one seed, then the band) and the heatmap of depths 1..4, in the language and heat asked for
    assert [c.path for c in calls] == ["/api/figure/gradients"] * 2 + ["/api/figure/grad-heatmap"]
    assert calls[2].body["depths"] == [1, 2, 3, 4] and calls[2].body["relative"] is (lang == "en")
    answers = {call.key: ask(client, call) for call in calls}
    html = client.get("/gradients", params={**query, "lang": lang}).text
    assert handed(html) == answers
    assert plotly_first(html)  # nothing to ask for first: Plotly.js runs before the page's module
    computed = own_pool.computed
    client.get("/gradients", params={**query, "lang": lang})
    assert own_pool.computed == computed  # a page computes nothing, warm or cold


def test_the_training_lab_hands_over_its_idle_charts(client, own_pool):
    calls = first_calls("train", {}, "en")
    assert sorted(c.path for c in calls) == ["/api/figure/train-loss", "/api/figure/train-profile"]
    answers = {call.key: ask(client, call) for call in calls}
    assert handed(client.get("/train").text) == answers
    assert first_calls("train", {"steps": "40"}, "en") == []  # settings of its own: the script asks


def test_states_the_module_cannot_follow_hand_nothing_over(client, own_pool):
    assert first_calls("compare", {"variants": "pre_ln,rezero"}, "en") == []
    assert first_calls("gradients", {"depth": "abc"}, "en") == []
    assert first_calls("norms", {"depth": "100000"}, "en") == []
    assert first_calls("layernorm", {}, "en") == []
    assert client.get("/gradients", params={"depth": "abc"}).status_code == 200


def test_the_block_is_inert_whatever_an_answer_holds():
    script = handover_script({"k": "</script><script>alert(1)</script> & 'x'"}).decode()
    assert script.count("</script>") == 1 and "<script>alert" not in script
    assert handed(script) == {"k": "</script><script>alert(1)</script> & 'x'"}
