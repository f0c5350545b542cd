# ResNorm Explorer: every target creates and reuses .venv by itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Extra pip arguments, e.g. PIP_ARGS="--extra-index-url <PyTorch CPU wheel index>"
PIP_ARGS ?=

.PHONY: run test test-fast test-browser bench loadtest docker-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q $(PIP_ARGS) -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q $(PIP_ARGS) -e '.[test]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/python -m app --host $(HOST) --port $(PORT)

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest --ignore=tests/browser

test-browser: $(VENV)/.installed-test
	$(BIN)/python -m pytest tests/browser

bench: $(VENV)/.installed
	$(BIN)/python -m tools.bench
	$(BIN)/python -m tools.bench_train

loadtest: $(VENV)/.installed-test
	$(BIN)/python -m tests.load.loadtest

docker-test:
	bash scripts/docker_test.sh

clean:
	rm -rf $(VENV) .pytest_cache artifacts
