"""The load tests' own logic, on something tiny: `make loadtest SITE=1` serves a site with nginx and reads it back,
and the room's mix sends /models sentences when the server has real models. Timings are not asserted here: they
live in `make loadtest`."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from tests.load import loadtest, static_site


def tiny_site(root: Path) -> Path:
    (root / "assets").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "assets" / "plotly.min.js").write_text("/* plotly */" * 200)
    (root / "assets" / "scripts.js").write_text("console.log(1);" * 100)
    (root / "data" / "home.js").write_text("window.DATA = {};")
    (root / "index.html").write_text(
        '<script src="assets/plotly.min.js"></script><script src="./assets/scripts.js"></script>'
        '<script src="data/home.js"></script><a href="norms.html">x</a><script src="data/missing.js"></script>'
    )
    (root / "lecture.html").write_text("<p>the deck: left out</p>")
    return root


def test_site_pages_lists_each_page_with_its_own_files(tmp_path):
    pages = static_site.site_pages(tiny_site(tmp_path))
    assert pages == {"/index.html": ["/assets/plotly.min.js", "/assets/scripts.js", "/data/home.js"]}
    assert [static_site.kind_of(p) for p in ["/index.html", *pages["/index.html"]]] == [
        "page",
        "plotly",
        "asset",
        "data",
    ]


@pytest.mark.skipif(shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(), reason="needs nginx")
def test_students_read_a_tiny_site_under_nginx_without_errors(tmp_path, capsys):
    site = tiny_site(tmp_path / "site")
    assert static_site.main(["--site", str(site), "--students", "4", "--duration", "1", "--think", "0.1", "0.2",
                             "--processes", "1", "--p95-limit-ms", "10000"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "errors: 0" in out and "plotly" in out and "page" in out


def test_the_room_sends_models_sentences_when_the_server_has_real_models():
    args = loadtest.parse_args(["--students", "1"])
    room = loadtest.Room(["http://127.0.0.1:9"], args)
    room.models = ["minilm", "smollm2"]
    bodies = [room.sentence(random.Random(seed)) for seed in range(40)]
    assert {b["model"] for b in bodies} == {"minilm", "smollm2"}
    assert any(b["text"] in loadtest.SENTENCES for b in bodies) and any(
        b["text"] not in loadtest.SENTENCES for b in bodies
    )
    assert 0 < args.models_share < 1


def test_page_load_windows_split_the_first_wave_from_the_rest():
    tally = loadtest.Tally()
    tally.timeline = [(1.0, "page", 900.0), (20.0, "page", 10.0), (21.0, "health", 5000.0)]
    assert loadtest.windows(tally, loadtest.PAGE_LOAD) == [(0.0, 900.0), (15.0, 10.0)]
