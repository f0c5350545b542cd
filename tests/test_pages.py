"""Route tests for the HTML pages: every page and embed renders in both languages, with its data block."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.assets import IMMUTABLE, plotly_url
from app.config import TraceConfig
from app.experiments.train import TrainRequest
from app.i18n import pick_lang
from app.main import app
from app.pages import get_registry
from tests.conftest import page_data, strict_json

REGISTRY = get_registry()
PAGES, CHARTS, STRINGS, t = REGISTRY.pages, REGISTRY.charts, REGISTRY.strings, REGISTRY.t

client = TestClient(app)
EXPLORER = ["/", "/norms", "/gradients", "/compare"]


@pytest.mark.parametrize("path", EXPLORER)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_in_both_languages(path, lang):
    response = client.get(path, params={"lang": lang})
    assert response.status_code == 200
    html = response.text
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in html
    data = page_data(html)
    assert data["lang"] == lang
    assert "strings" not in data  # the words come in the shared strings file, not inside every page
    assert strings_of(html, lang)["app.name"] == t("app.name", lang)
    page = PAGES[data["page"]]
    assert t(page.title_key, lang) in html
    for chart in page.charts:
        assert f'data-chart="{chart}"' in html


def strings_of(html: str, lang: str) -> dict[str, str]:
    """The table the page's strings script sets (window.RESNORM_STRINGS), fetched as the browser fetches it."""
    match = re.search(rf'<script src="(/i18n/[0-9a-f]{{12}}/strings\.{lang}\.js)" defer></script>', html)
    assert match, "the page links no strings file"
    response = client.get(match.group(1))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == IMMUTABLE  # the current words: kept for a year under this URL
    prefix, suffix = "window.RESNORM_STRINGS = ", ";\n"
    assert response.text.startswith(prefix) and response.text.endswith(suffix)
    return strict_json(response.text[len(prefix) : -len(suffix)])


def test_the_strings_file_is_shared_and_each_page_is_lighter():
    """Every page and embed in one language links the same strings file; the words are the table in that language
    (a page used to carry all of it, ~70 kB, inside its own HTML); an old version is answered, revalidated."""
    pages = [client.get(path, params={"lang": "zh"}).text for path in ("/", "/norms", "/embed/norms", "/lecture")]
    links = {re.search(r'src="(/i18n/[^"]+)"', html).group(1) for html in pages}  # type: ignore[union-attr]
    assert len(links) == 1
    table = strings_of(pages[0], "zh")
    assert table == {key: pair[1] for key, pair in STRINGS.items()} and table["app.name"] == t("app.name", "zh")
    assert all(len(html.encode()) < 40_000 for html in pages[:3]), [len(html.encode()) for html in pages]
    stale = client.get("/i18n/000000000000/strings.en.js")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    assert stale.text == client.get(links.pop().replace("strings.zh", "strings.en")).text
    refused = client.get("/i18n/000000000000/strings.fr.js")
    assert refused.status_code == 404 and refused.json()["error"].startswith("lang: unknown language")


@pytest.mark.parametrize("chart", sorted(CHARTS))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_embed_renders_one_chart_without_navigation(chart, lang):
    response = client.get(f"/embed/{chart}", params={"lang": lang, "depth": 6})
    assert response.status_code == 200
    html = response.text
    assert html.count("data-chart=") == 1 and f'data-chart="{chart}"' in html
    assert "<nav" not in html and 'id="controls"' not in html
    assert page_data(html)["embed"] == chart


def test_unknown_embed_is_a_json_404_naming_the_field():
    response = client.get("/embed/nope")
    assert response.status_code == 404
    assert "chart" in response.json()["error"]


def test_no_inline_script_code_or_handlers_or_remote_hosts():
    """A CSP of 'self' must hold: scripts are external modules or JSON data blocks, nothing inline."""
    for path in EXPLORER + [f"/embed/{c}" for c in CHARTS]:
        html = client.get(path).text
        for attrs, body in re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S):
            assert "src=" in attrs or 'type="application/json"' in attrs, (path, attrs)
            assert "src=" not in attrs or not body.strip()
        assert not re.search(r"\son[a-z]+=", html), path
        assert not re.search(r"(src|href)=\"(https?:)?//", html), path
        assert '<link rel="icon" href="data:,">' in html


def test_controls_come_from_the_request_model_in_field_order():
    data = page_data(client.get("/norms").text)
    assert list(data["schema"]["properties"]) == list(TraceConfig.model_fields)
    assert data["presets"]["presets"][0]["key"] and data["presets"]["depth"] == 12


def test_training_page_checks_the_bounds_the_api_enforces():
    """The lab's script refuses what POST /api/train refuses: one step past each edge is a 422 naming the field,
    the edge itself is a valid request."""
    bounds = page_data(client.get("/train").text)["extra"]["settings_bounds"]
    assert bounds["clip"] == {"exclusiveMinimum": 0.0, "maximum": 1000.0}  # the optional field's number option
    assert bounds["optimizer"]["enum"] == ["adam", "adamw", "sgd"]
    past_edges = {
        "steps": bounds["steps"]["maximum"] + 1,
        "warmup_steps": bounds["warmup_steps"]["minimum"] - 1,
        "clip": bounds["clip"]["exclusiveMinimum"],
        "lr": bounds["lr"]["maximum"] * 2,
        "task": "count",
    }
    for name, value in past_edges.items():
        response = client.post("/api/train", json={name: value})
        assert response.status_code == 422 and name in response.text, (name, response.text)
    TrainRequest(
        steps=bounds["steps"]["maximum"],
        clip=bounds["clip"]["maximum"],
        lr=bounds["lr"]["maximum"],
        warmup_steps=bounds["warmup_steps"]["minimum"],
        seed=bounds["seed"]["maximum"],
    )


def test_presets_are_resolved_for_the_linked_depth():
    """DeepNorm's alpha = (2L)^(1/4) depends on the depth in the URL (Wang et al. 2022)."""
    data = page_data(client.get("/norms", params={"depth": 48}).text)
    deepnorm = next(p for p in data["presets"]["presets"] if p["key"] == "deepnorm")
    assert deepnorm["config"]["residual_scale"] == pytest.approx((2 * 48) ** 0.25, rel=1e-5)
    bad = page_data(client.get("/norms", params={"depth": "999"}).text)  # the page still renders
    assert bad["presets"]["depth"] == 12


@pytest.mark.parametrize(
    "header,expected",
    [("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("en-US,en;q=0.9", "en"), ("fr-FR, en;q=0.5, zh;q=0.7", "zh"), ("", "en")],
)
def test_language_follows_accept_language(header, expected):
    data = page_data(client.get("/norms", headers={"Accept-Language": header}).text)
    assert data["lang"] == expected
    assert pick_lang("zh-CN", "en") == "zh" and pick_lang("en", "zh") == "en"


def test_language_switch_keeps_the_state():
    html = client.get("/norms", params={"depth": 48, "norm_position": "post"}).text
    link = re.search(r'id="lang-switch" href="([^"]+)"', html)
    assert link, "no language switch"
    switch = link.group(1)
    assert "depth=48" in switch and "norm_position=post" in switch and "lang=zh" in switch


def test_every_string_has_both_languages():
    for key, (english, chinese) in STRINGS.items():
        assert english.strip() and chinese.strip(), key
        assert re.findall(r"\{(\w+)\}", english) == re.findall(r"\{(\w+)\}", chinese) or sorted(
            re.findall(r"\{(\w+)\}", english)
        ) == sorted(re.findall(r"\{(\w+)\}", chinese)), key


def test_every_enum_value_has_a_label():
    for name, prop in TraceConfig.model_json_schema()["properties"].items():
        for value in prop.get("enum", []):
            assert f"enum.{name}.{value}" in STRINGS, (name, value)


def test_plotly_is_served_by_this_server():
    response = client.get(plotly_url())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert len(response.content) > 1_000_000 and response.content.startswith(b"/**\n* plotly.js v")


def test_static_modules_exist_for_every_page():
    for page in PAGES.values():
        assert client.get(f"/static/js/pages/{page.module_name}.js").status_code == 200, page.key
    for module in ("state", "charts", "page", "controls", "api", "i18n", "presets"):
        assert client.get(f"/static/js/{module}.js").status_code == 200


# --- the page registry is the one table of a page: defaults, URL keys, default requests ---------------------------


@pytest.mark.parametrize("key", sorted(PAGES))
def test_each_page_gets_its_defaults_and_the_variant_table_from_the_server(key):
    from app.config import VARIANTS

    data = page_data(client.get(PAGES[key].path).text)
    assert data["defaults"] == PAGES[key].defaults
    assert {k: v["pins_token"] for k, v in data["variants"]["norm"].items()} == {
        k: v.pins_token for k, v in VARIANTS["norm"].items()
    }


@pytest.mark.parametrize("key", sorted(PAGES))
def test_each_default_request_is_a_valid_request_of_a_known_kind(key):
    from app.experiments.requests import REQUESTS

    for kind, request in PAGES[key].default_requests():
        assert kind in REQUESTS and isinstance(request, REQUESTS[kind].model), (key, kind)
        assert REQUESTS[kind].model.model_validate(request.model_dump()) == request


def test_a_page_url_key_is_never_a_request_field():
    """A page's own URL keys are ignored by the API, so one that shadowed a model field would silently drop it."""
    from app.experiments.requests import REQUESTS
    from app.pages import url_state_keys

    # the pages' chart requests wrap the page's model under "config" (their own fields are the chart's, not the page's)
    wrapped = {"grad_profile", "compare"}
    fields = {name for key, kind in REQUESTS.items() if key not in wrapped for name in kind.model.model_fields}
    assert not url_state_keys() & fields


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_footer_says_where_that_pages_numbers_come_from(lang):
    """The lessons compute products, a softmax Jacobian or one norm on the server, not a model's forward and
    backward pass: only the pages that run a model say they do."""
    footer = {
        key: re.search(r"<footer class=\"site\">(.*?)</footer>", client.get(f"{p.path}?lang={lang}").text, re.S)
        for key, p in PAGES.items()
    }
    model_pass = t("footer.offline", lang, where=t("footer.where.server", lang))
    for key in ("chain", "softmax", "layernorm", "batchnorm"):
        text = footer[key]
        assert text is not None and model_pass not in text.group(1) and "PyTorch" in text.group(1), key
    assert footer["chain"] is not None and "float64" in footer["chain"].group(1)
    for key in ("norms", "gradients", "compare", "train"):
        text = footer[key]
        assert text is not None and model_pass in text.group(1), key
