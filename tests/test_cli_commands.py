"""`resnorm-explorer trace | sweep | lecture | warm` (app/cli/): the HTTP API's numbers on stdout, options derived from
the request model, one-line errors and exit codes a script can rely on (0 ok, 1 failure, 2 usage, 130 Ctrl-C)."""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.config import TraceConfig
from tests.conftest import strict_json

ROOT = Path(__file__).resolve().parents[1]
TIMING = ("elapsed_ms", "served_ms", "cached", "source")


def run(argv: list[str], capsys) -> tuple[int | str | None, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv, prog="resnorm-explorer")
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def without_timing(answer: dict) -> dict:
    return {**answer, "summary": {k: v for k, v in answer["summary"].items() if k not in TIMING}}


def test_trace_json_prints_the_numbers_of_post_api_trace(client, capsys):
    code, out, err = run(["trace", "--depth", "7", "--norm-position", "post", "--json"], capsys)
    assert code == 0 and err == ""
    printed = strict_json(out)
    http = client.post("/api/trace", json={"depth": 7, "norm_position": "post"}).json()
    assert without_timing(printed) == without_timing(http)
    assert len(printed["layers"]) == 7


def test_trace_csv_has_one_row_per_layer_with_the_same_numbers(client, capsys):
    code, out, _ = run(["trace", "--depth", "3", "--csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    http = client.post("/api/trace", json={"depth": 3}).json()
    assert code == 0 and [r["layer"] for r in rows] == ["0", "1", "2", "3"]
    assert [float(r["grad_norm"]) for r in rows[1:]] == [l["grad_norm"] for l in http["layers"]]


def test_the_table_speaks_chinese(capsys):
    code, out, _ = run(["trace", "--depth", "2", "--lang", "zh"], capsys)
    assert code == 0 and "梯度存活率" in out and out.count("\n") == 8  # title, 3 summary lines, header, 3 layers


def test_sweep_json_is_the_http_sweep(client, capsys):
    code, out, _ = run(["sweep", "--from", "2", "--to", "4", "--norm-position", "post", "--json"], capsys)
    ours = strict_json(out)
    http = client.post(
        "/api/sweep?stream=false", json={"config": {"norm_position": "post"}, "depths": [2, 3, 4]}
    ).json()
    assert code == 0 and ours["depths"] == http["depths"] == [2, 3, 4]
    # the base model: its depth is replaced by every swept depth (here the shallowest; the HTTP body's default 12)
    assert {**ours["config"], "depth": 12} == http["config"] and ours["config"]["depth"] == 2
    assert ours["results"] == [{k: v for k, v in row.items() if k not in TIMING} for row in http["results"]]


def test_every_field_of_the_request_model_is_an_option(capsys):
    code, out, _ = run(["trace", "--help"], capsys)
    assert code == 0
    for name, info in TraceConfig.model_fields.items():
        assert "--" + name.replace("_", "-") in out
        assert " ".join(str(info.description).split())[:40] in " ".join(out.split())
    for command in ("sweep", "lecture", "warm", "serve"):
        assert run([command, "--help"], capsys)[0] == 0


@pytest.mark.parametrize(
    "argv, says",
    [
        (["trace", "--depth", "500"], "--depth: Input should be less than or equal to 128"),
        (["trace", "--norm", "weird"], "--norm: Input should be"),
        (["trace", "--n-heads", "3"], "--n-heads: must divide d_model (64)"),
        (["trace", "--d-model", "512", "--seq-len", "256", "--batch", "64", "--budget", "server"], "for this server"),
        (["trace", "--budget", "room"], "--budget: invalid choice: 'room'"),
        (["trace", "--json", "--csv"], "not allowed with argument"),
        (["trace", "--depht", "4"], "unrecognized arguments: --depht"),
        (["sweep", "--to", "130"], "--from/--to"),
        (["lecture"], "the following arguments are required: -o/--output"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(argv, says, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"resnorm-explorer {argv[0]}: error: ") and says in err, err


def test_a_failure_is_one_line_and_exit_1_and_ctrl_c_is_130(monkeypatch, capsys):
    from app.cli import commands

    def broken(cfg):
        raise RuntimeError("disk full")

    monkeypatch.setattr(commands, "_run_trace", broken)
    code, _, err = run(["trace", "--depth", "2"], capsys)
    assert code == 1 and err == "resnorm-explorer trace: error: RuntimeError: disk full\n"

    def interrupted(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "_run_trace", interrupted)
    code, _, err = run(["trace", "--depth", "2"], capsys)
    assert code == 130 and err == "resnorm-explorer trace: interrupted\n"


def test_python_m_app_trace_in_a_fresh_process():
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESNORM_")}
    result = subprocess.run(
        [sys.executable, "-m", "app", "trace", "--depth", "3", "--arch", "mlp", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**env, "RESNORM_TORCH_THREADS": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    answer = strict_json(result.stdout)
    assert answer["config"]["arch"] == "mlp" and len(answer["layers"]) == 3


def test_lecture_writes_the_offline_deck_without_a_server(monkeypatch, tmp_path, capsys):
    """The file GET /lecture.html serves, from the command line (answers stubbed here: computing and training every
    slide takes minutes; tests/test_lecture.py checks the baked answers of the real export)."""
    import re

    from app.pages import lecture_offline

    async def no_answers(pool, lang: str, progress=None) -> dict:
        return {"views": {}}

    monkeypatch.setattr(lecture_offline, "bake", no_answers)
    deck = tmp_path / "deck.html"
    code, _, err = run(["lecture", "--lang", "zh", "-o", str(deck), "--origin", "http://10.0.0.5:8000/"], capsys)
    html = deck.read_text(encoding="utf-8")
    assert code == 0 and err.startswith(f"{deck}: ")
    assert '<html lang="zh-CN"' in html and html.count("plotly.js v") == 1
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"(?!data:)", html)  # nothing to fetch
    block = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert block
    data = strict_json(block[1])
    assert data["lang"] == "zh" and data["extra"]["origin"] == "http://10.0.0.5:8000"


def test_the_top_level_help_is_serves_and_names_the_other_commands(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "--port" in out
    assert "resnorm-explorer trace | sweep | lecture | warm" in " ".join(out.split())


def test_sweep_checks_the_servers_budget_at_its_own_depths_when_asked(monkeypatch, capsys):
    """With --budget server, a model too big at the default depth 12 may still be swept at shallow depths; too deep,
    it is refused. On this machine's budget (the default) the same sweep starts."""
    from app.notebook import sweeps

    wide = ["--d-model", "512", "--seq-len", "64", "--batch", "8", "--budget", "server"]
    code, out, err = run(["sweep", "--from", "1", "--to", "1", *wide, "--csv"], capsys)
    assert code == 0 and [row["depth"] for row in csv.DictReader(io.StringIO(out))] == ["1"], err
    code, _, err = run(["sweep", "--from", "1", "--to", "40", *wide], capsys)
    # the size to blame and the largest value that fits (app/config/limits.py), at the sweep's own deepest depth
    assert code == 2 and "--from/--to: depth 40 with this config: d_model: 512 is too large" in err, err
    assert "allowed: d_model <= 104" in err, err

    def stop(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweeps, "run_trace", stop)
    code, out, err = run(["sweep", "--from", "1", "--to", "40", *wide[:-2], "--json"], capsys)
    assert code == 130 and strict_json(out)["depths"] == list(range(1, 41)), err


# One block, but the logits of 32 x 256 tokens over 4096 symbols: saved activations over the server's per-model
# budget, traced in well under a second
WIDE_VOCABULARY = {"depth": 1, "d_model": 8, "n_heads": 1, "seq_len": 256, "batch": 32, "vocab_size": 4096}


def test_trace_runs_what_the_server_refuses_unless_budget_server(client, capsys):
    options = [f"--{name.replace('_', '-')}={value}" for name, value in WIDE_VOCABULARY.items()]
    served = client.get("/api/trace", params=WIDE_VOCABULARY)
    assert served.status_code == 422
    message = served.json()["errors"][0]["message"]
    code, _, err = run(["trace", *options, "--budget", "server"], capsys)
    assert code == 2 and f"--seq-len: {message}" in err, err
    code, out, err = run(["trace", *options, "--json"], capsys)
    assert code == 0 and err == ""
    printed = strict_json(out)
    assert {name: printed["config"][name] for name in WIDE_VOCABULARY} == WIDE_VOCABULARY
    assert len(printed["layers"]) == 1 and math.isfinite(printed["loss"])


def test_trace_over_half_of_this_machines_memory_is_refused_before_computing(monkeypatch, capsys):
    from app.cli import commands
    from app.config import machine as limits

    need = limits.trace_bytes(TraceConfig(depth=3))
    monkeypatch.setattr(limits, "physical_memory", lambda: int(2 * need) - 1)
    monkeypatch.setattr(commands, "_run_trace", lambda cfg: pytest.fail("computed a model over the budget"))
    code, _, err = run(["trace", "--depth", "3"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("resnorm-explorer trace: error: --depth: this model needs about"), err
    assert "or add --budget none to run it anyway (see --help)" in err
    monkeypatch.undo()
    monkeypatch.setattr(limits, "physical_memory", lambda: int(2 * need) - 1)
    code, out, err = run(["trace", "--depth", "3", "--budget", "none", "--json"], capsys)
    assert code == 0 and len(strict_json(out)["layers"]) == 3, err


def test_options_are_never_abbreviated(capsys):
    """sweep has no --depth: `--depth 5` must be refused, not read as --depth-scaled-norm."""
    code, _, err = run(["sweep", "--depth", "5"], capsys)
    assert code == 2 and "unrecognized arguments: --depth 5" in err
    assert run(["--po", "8001", "--print-settings"], capsys)[0] == 2  # serve's options too


def test_a_mistyped_command_is_one_line_naming_the_commands(capsys):
    code, out, err = run(["trce", "--depth", "3"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "unknown command 'trce' (did you mean 'trace'?); the commands are serve, trace, sweep, lecture, warm" in err


def test_an_interrupted_sweep_json_says_so(monkeypatch, capsys):
    from app.notebook import sweeps

    real = sweeps.run_trace

    def stop_at_three(cfg):
        if cfg.depth == 3:
            raise KeyboardInterrupt
        return real(cfg)

    monkeypatch.setattr(sweeps, "run_trace", stop_at_three)
    code, out, _ = run(["sweep", "--from", "1", "--to", "5", "--json"], capsys)
    answer = strict_json(out)
    assert code == 130 and answer["interrupted"] is True and [r["depth"] for r in answer["results"]] == [1, 2]
    monkeypatch.setattr(sweeps, "run_trace", real)
    assert strict_json(run(["sweep", "--from", "1", "--to", "1", "--json"], capsys)[1])["interrupted"] is False


@pytest.mark.parametrize("output, says", [("/no/such/dir/x.html", "does not exist"), (".", "is a folder")])
def test_lecture_checks_its_output_before_computing(output, says, monkeypatch, capsys):
    from app.pages import lecture_offline

    async def never() -> str:
        raise AssertionError("computed the deck before checking where it goes")

    monkeypatch.setattr(lecture_offline, "offline_html", lambda *args, **kwargs: never())
    code, _, err = run(["lecture", "-o", output], capsys)
    assert code == 1 and err.count("\n") == 1 and says in err, err


def test_lecture_says_which_slide_it_computes_while_it_computes(monkeypatch, tmp_path, capsys):
    """One stderr line per slide view as it starts ("k of n: id" or "id#option"), read while that view computes:
    the views are stubbed (every slide computed and trained takes minutes), the deck's order and names are real."""
    from app.services import deck

    names = [deck.view_name(*name) for name in deck.view_names()]
    seen: list[str] = []

    async def view(pool, slide_id, option, lang, recordings=None):
        seen.append(capsys.readouterr().err)  # what stderr said since the previous view began
        return {}

    monkeypatch.setattr(deck, "slide_view", view)
    monkeypatch.setattr(deck.slides, "is_training", lambda slide: False)
    out_file = tmp_path / "deck.html"
    code, _, err = run(["lecture", "-o", str(out_file)], capsys)
    assert code == 0 and err.startswith(f"{out_file}: ") and out_file.stat().st_size > 0
    assert len(names) > 20 and "chain#12" in names  # the slides and their "try it" options
    assert seen == [f"resnorm-explorer lecture: {k} of {len(names)}: {name}\n" for k, name in enumerate(names, 1)]
