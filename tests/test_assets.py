"""Bytes for a room on one Wi-Fi: gzip for text answers, versioned static URLs cached for a year."""

from __future__ import annotations

import gzip
import re

import pytest

from app.assets import PLOTLY_JS, PLOTLY_TRACES, PLOTLY_VERSION, STATIC, VERSION, plotly_url, tree_version

GZIP = {"accept-encoding": "gzip"}
TRACE_TYPE = re.compile(r"""\btype['"]?:\s*['"](\w+)['"]""")  # JS `type: 'bar'` and Python `"type": "bar"`


def page_assets(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/(?:static|vendor)/[^"]+)"', html)


def page_paths() -> list[str]:
    from app.pages import pages

    return [*sorted(page.path for page in pages().values()), "/embed/tour"]


def test_templates_link_static_files_only_through_the_versioned_helpers():
    from app.paths import asset_dir

    for template in sorted(asset_dir("templates").glob("*.html")):
        text = template.read_text(encoding="utf-8")
        assert not re.search(r'(?:src|href)="/(?:static|vendor)/', text), f"{template.name}: use static_url()"


@pytest.mark.parametrize("path", page_paths())
def test_pages_link_only_versioned_assets_cached_for_a_year(client, path):
    html = client.get(path).text
    assets = page_assets(html)
    assert plotly_url() in assets and any(a.endswith(".css") for a in assets)
    for url in assets:
        assert url.startswith(f"/static/v/{VERSION}/") or url == plotly_url(), url
        response = client.get(url, headers=GZIP)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_static_files_travel_gzipped_and_arrive_intact(client):
    response = client.get(f"/static/v/{VERSION}/js/charts.js", headers=GZIP)
    assert response.headers["content-encoding"] == "gzip" and response.headers["content-type"].startswith(
        "text/javascript"
    )
    assert response.content == (STATIC / "js" / "charts.js").read_bytes()  # httpx decoded the gzip
    plain = client.get(f"/static/v/{VERSION}/js/charts.js", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == response.content


def test_plotly_travels_gzipped_in_under_half_a_megabyte(client):
    with client.stream("GET", plotly_url(), headers=GZIP) as response:
        wire = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert len(wire) < 500_000 and len(wire) < PLOTLY_JS.stat().st_size * 0.4
    assert gzip.decompress(wire) == PLOTLY_JS.read_bytes()


def test_plotly_is_the_vendored_partial_bundle_under_a_url_naming_its_release_and_digest(client):
    assert PLOTLY_JS == STATIC / "vendor" / "plotly.min.js" and (STATIC / "vendor" / "LICENSE.plotly.js.txt").exists()
    assert re.fullmatch(r"\d+\.\d+\.\d+-[0-9a-f]{8}", PLOTLY_VERSION) and {"scatter", "heatmap"} <= set(PLOTLY_TRACES)
    assert 1_000_000 < PLOTLY_JS.stat().st_size < 2_000_000  # the full bundle is 4.8 MB
    stale = client.get("/vendor/plotly-1.0.0-00000000.min.js")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    fixed = client.get("/vendor/plotly.min.js")  # the old fixed address still answers, revalidated
    assert fixed.headers["cache-control"] == "no-cache" and fixed.content == PLOTLY_JS.read_bytes()


def plotly_trace_types() -> set[str]:
    """Every trace type plotly.js has (the Python package mirrors its schema), to tell traces from shapes and axes."""
    import plotly.graph_objects as graph_objects
    from plotly.basedatatypes import BaseTraceType

    classes = (getattr(graph_objects, name) for name in dir(graph_objects) if name[:1].isupper())
    return {cls().type for cls in classes if isinstance(cls, type) and issubclass(cls, BaseTraceType)}


def test_every_trace_type_the_scripts_draw_is_in_the_plotly_bundle():
    """A chart of a type the partial bundle lacks draws nothing, silently: rebuild the bundle with it
    (static/vendor/README.md). The browser tests check the charts actually drawn; this catches it before a browser."""
    everything = plotly_trace_types()
    named = {
        found
        for path in [*sorted((STATIC / "js").rglob("*.js")), *sorted((STATIC.parent / "app" / "figures").glob("*.py"))]
        for found in TRACE_TYPE.findall(path.read_text(encoding="utf-8"))
    } & everything  # the charts built in Python (app/figures/) and those the scripts still draw
    assert {"scatter", "heatmap", "bar"} <= named  # the search still finds the charts' traces
    assert named <= set(PLOTLY_TRACES), f"draw {sorted(named - set(PLOTLY_TRACES))}, not in {PLOTLY_JS.name}"
    assert set(PLOTLY_TRACES) <= everything


def test_an_old_version_is_answered_but_not_cached_and_nothing_outside_static_is(client):
    stale = client.get("/static/v/000000000000/css/app.css")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    for name in ("../app/settings.py", "..%2Fapp%2Fsettings.py", "%2e%2e/pyproject.toml", "css"):
        assert client.get(f"/static/v/{VERSION}/{name}").status_code == 404, name


def test_the_version_changes_when_any_static_file_does(tmp_path):
    (tmp_path / "a.js").write_text("1")
    before = tree_version(tmp_path)
    (tmp_path / "a.js").write_text("2")
    assert tree_version(tmp_path) != before


def test_json_answers_are_gzipped_when_asked(client):
    response = client.post("/api/trace", json={"depth": 24}, headers=GZIP)
    assert response.headers["content-encoding"] == "gzip" and response.json()["summary"]["depth"] == 24
    assert "accept-encoding" in response.headers["vary"].lower()
