# ResNorm Explorer for a workshop room: one container, CPU-only PyTorch, fully offline once built.
#
#   docker build --build-arg TORCH_INDEX_URL=<PyTorch's CPU wheel index> -t resnorm-explorer .
#   docker run --rm -p 8000:8000 resnorm-explorer
#
# No "# syntax=" line and no second base image: CI builds this against a local stand-in of python:3.11-slim.
FROM python:3.11-slim

# Where pip finds a CPU-only torch, one of:
#  - TORCH_INDEX_URL: PyTorch's CPU wheel index (the --index-url that the "Get started" selector on
#    PyTorch's website shows for Linux / Pip / CPU); pip takes torch from there and everything else as usual;
#  - a torch CPU wheel in ./wheels/ (e.g. `pip download torch==2.13.0 --no-deps -d wheels/` on a machine
#    that has it); PIP_ARGS="--no-index" then builds with no network at all if ./wheels/ holds every dependency.
# With neither, the build stops: the default index only offers torch builds that pull in several GB of CUDA.
ARG TORCH_INDEX_URL=
ARG PIP_ARGS=

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Dependencies first, in a layer that changes only with pyproject.toml; "wheel[s]" copies ./wheels/ when present.
COPY pyproject.toml wheel[s] /tmp/deps/
RUN set -eu; cd /tmp/deps; \
    python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt; \
    if [ -n "$TORCH_INDEX_URL" ]; then torch_source="--extra-index-url $TORCH_INDEX_URL"; \
    elif ls torch-*.whl >/dev/null 2>&1; then torch_source=""; \
    else echo "error: no CPU torch source: pass --build-arg TORCH_INDEX_URL=<PyTorch's CPU wheel index> or put the torch CPU wheel in ./wheels/" >&2; exit 1; fi; \
    pip install --find-links /tmp/deps $torch_source $PIP_ARGS -r requirements.txt; \
    python -c "import sys, torch; sys.exit('torch %s is a CUDA build' % torch.__version__ if torch.version.cuda else 0)"; \
    cd /; rm -rf /tmp/deps

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin resnorm
WORKDIR /srv/resnorm
COPY app ./app
COPY templates ./templates
COPY static ./static

# Workshop defaults: listen on every interface inside the container, one worker per core (0 = auto).
ENV RESNORM_HOST=0.0.0.0 \
    RESNORM_PORT=8000 \
    RESNORM_WORKERS=0
USER resnorm
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/api/health' % os.environ.get('RESNORM_PORT', '8000'), timeout=4)"]
CMD ["python", "-m", "app"]
