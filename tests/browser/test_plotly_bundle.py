"""The Plotly.js the pages load is a partial bundle (static/vendor/README.md): it registers exactly the trace types its
header names, and a chart of any other type is caught. Every browser test checks, when it ends, that each chart on its
page drew with a registered type (tests/browser/conftest.py, PageWatch.assert_clean); the lecture walk and the
every-page phone and accessibility tests therefore cover every slide and page."""

from __future__ import annotations

from app.assets import PLOTLY_TRACES, plotly_url


def test_the_bundle_registers_exactly_the_trace_types_its_header_names(watch):
    watch.open("/norms", ("norms",))
    assert watch.page.get_attribute("#plotly-script", "src") == plotly_url()
    registered = watch.page.evaluate("Object.keys(Plotly.PlotSchema.get().traces)")
    assert sorted(registered) == sorted(PLOTLY_TRACES)


def test_a_chart_of_a_type_the_bundle_lacks_is_caught(watch):
    watch.open("/norms", ("norms",))
    chart = "[data-chart='norms']"
    # Plotly draws a trace type it does not know as nothing, without an error: only the check sees it.
    watch.page.evaluate(f"""() => Plotly.react(document.querySelector("{chart}"),
        [{{type: 'sankey', node: {{label: ['a', 'b']}}, link: {{source: [0], target: [1], value: [1]}}}}])""")
    assert [entry.split(": ")[-1] for entry in watch.unregistered_traces()] == ["sankey"]
    assert not watch.errors
    watch.page.evaluate(f'() => Plotly.purge(document.querySelector("{chart}"))')  # leave the page clean
    assert watch.unregistered_traces() == []
