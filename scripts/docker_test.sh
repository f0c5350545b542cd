#!/usr/bin/env bash
# make docker-test: build the image and smoke-test it, on a machine with no Docker engine running and no
# Docker Hub. Installs the Debian packages docker.io, debootstrap and iptables if missing, starts its own dockerd (data and
# exec roots: see below), makes a python:3.11-slim stand-in with debootstrap when none is cached, checks that
# a build with no CPU torch source stops with one line, builds the image with the torch CPU wheel fed from
# ./wheels/, runs it, checks health, a page, its scripts and a trace, and stops everything it started, also on
# failure.
#
# No traffic leaves this machine but the package downloads: dockerd runs without a bridge, the build uses the
# host's network (pip), and the container runs with no network at all; the checks run inside it.
#
# The daemon's data root lives in .docker-cache/data (gitignored) so a second run reuses the stand-in and the
# dependency layer (seconds instead of minutes); DOCKER_TEST_FRESH=1 uses a temp data root that is deleted
# afterwards (the stand-in then comes from .docker-cache/*.tar via docker load). The exec root is always temp.
#
# Environment: SMOKE_PAGE (page to fetch, default /),
# IMAGE (tag, default resnorm-explorer:smoke), DOCKER_TEST_FRESH=1 (see above).
#
# scripts/compose_test.sh sources this file for its functions (dockerd, the stand-in, the wheels, the cleanup)
# and runs its own main instead of the one at the bottom.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BASE_IMAGE=python:3.11-slim
IMAGE=${IMAGE:-resnorm-explorer:smoke}
CACHE=$ROOT/.docker-cache
BASE_TAR=$CACHE/python-3.11-slim-standin.tar
SMOKE_PAGE=${SMOKE_PAGE:-/}
TORCH_PIN=$(sed -n 's/^torch==//p' constraints.txt)   # the exact torch the image is built with
# Always under /tmp, whatever TMPDIR says: the daemon's sockets live here and a Unix socket path may not exceed
# 107 bytes (a long TMPDIR or checkout path makes containerd, and with it dockerd, exit at start).
WORK=$(mktemp -d /tmp/resnorm-docker.XXXXXX)
DATA_ROOT=$CACHE/data
[ "${DOCKER_TEST_FRESH:-0}" = 1 ] && DATA_ROOT=$WORK/data
DOCKERD_PID=""
CONTAINER=""
STARTED=$(date +%s)

LOG_NAME=${LOG_NAME:-docker-test}
log() { printf '[%s %3ss] %s\n' "$LOG_NAME" "$(( $(date +%s) - STARTED ))" "$*"; }
fail() { log "FAIL: $*"; exit 1; }

# The containers this run started (compose_test.sh defines its own).
remove_containers() {
    local rc=$1
    if [ -n "$CONTAINER" ]; then
        [ "$rc" -ne 0 ] && { log "container log (last 40 lines):"; docker logs --tail 40 "$CONTAINER" 2>&1 | tail -n 40; }
        docker rm -f "$CONTAINER" >/dev/null 2>&1
    fi
}

cleanup() {
    local rc=$?
    set +e
    remove_containers "$rc"
    if [ -n "$DOCKERD_PID" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
        [ "$rc" -ne 0 ] && { log "dockerd log (last 20 lines):"; tail -n 20 "$WORK/dockerd.log"; }
        log "stopping dockerd"
        $SUDO kill "$DOCKERD_PID"
        for _ in $(seq 50); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
        $SUDO kill -9 "$DOCKERD_PID" 2>/dev/null
    fi
    # Mounts left by an interrupted daemon would make rm (or the next run) fail; unmount what is ours.
    grep -oE " ($WORK|$DATA_ROOT)/[^ ]*" /proc/mounts 2>/dev/null | sort -r | xargs -r -n1 $SUDO umount -l 2>/dev/null
    rm -rf "$WORK"
    log "$([ "$rc" -eq 0 ] && echo "passed" || echo "failed (exit $rc)")"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# Debian's client matches the daemon it installs (20.10); another client on PATH may lack the legacy builder's defaults.
DOCKER_BIN=""
docker() { "$DOCKER_BIN" "$@"; }

install_tools() {
    local missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v iptables >/dev/null || [ -x /usr/sbin/iptables ] || missing+=(iptables)
    [ ${#missing[@]} -eq 0 ] && return
    log "installing ${missing[*]}"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# One attempt: dockerd with these extra options; succeeds when `docker info` answers.
try_dockerd() {
    mkdir -p "$DATA_ROOT" "$WORK/exec"
    # No bridge and no iptables rules: every container here runs with --network host.
    $SUDO dockerd --data-root "$DATA_ROOT" --exec-root "$WORK/exec" --pidfile "$WORK/dockerd.pid" \
        --host "unix://$WORK/docker.sock" --bridge none --iptables=false --ip-masq=false "$@" \
        >"$WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    export DOCKER_HOST="unix://$WORK/docker.sock"
    for _ in $(seq 150); do
        docker info >/dev/null 2>&1 && return 0
        kill -0 "$DOCKERD_PID" 2>/dev/null || { DOCKERD_PID=""; return 1; }
        sleep 0.2
    done
    return 2
}

start_dockerd() {
    local rc=0
    try_dockerd || rc=$?
    if [ "$rc" -eq 1 ]; then
        # Seen once on a CI machine: dockerd exited at start. Show why, then try the storage driver that needs
        # nothing from the kernel (vfs: slower, copies layers) on a fresh data root.
        log "dockerd exited at start; free space: $(df -h --output=avail "$ROOT" /tmp | tail -n +2 | xargs)"
        log "its log (last 25 lines):"
        tail -n 25 "$WORK/dockerd.log" | sed 's/^/[dockerd] /'
        mv "$WORK/dockerd.log" "$WORK/dockerd-first.log"
        DATA_ROOT=$WORK/data-vfs
        log "retrying with --storage-driver vfs and a fresh data root"
        rc=0
        try_dockerd --storage-driver vfs || rc=$?
    fi
    if [ "$rc" -eq 1 ]; then
        tail -n 25 "$WORK/dockerd.log" | sed 's/^/[dockerd] /'
        fail "dockerd exited at start twice; its log is above"
    fi
    [ "$rc" -eq 0 ] || fail "dockerd did not answer within 30 s"
    log "dockerd up (pid $DOCKERD_PID, data root ${DATA_ROOT#"$ROOT"/})"
    # containers of an earlier run that was killed before its cleanup
    docker ps -aq --filter label=resnorm-smoke | xargs -r docker rm -f >/dev/null
}

# The first deb URI in apt's own sources: the mirror this machine is set up to use.
debian_mirror() {
    local uri
    uri=$(grep -hoE '^URIs:[[:space:]]*[^[:space:]]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')
    [ -n "$uri" ] || uri=$(grep -hoE '^deb[[:space:]]+[^[:space:]]+/debian/?[[:space:]]' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
    [ -n "$uri" ] || fail "no Debian mirror found in apt's sources"
    echo "$uri"
}

build_standin() {
    local rootfs=$WORK/rootfs
    log "building the $BASE_IMAGE stand-in with debootstrap (bookworm)"
    $SUDO debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
        bookworm "$rootfs" "$(debian_mirror)" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -n 20 "$WORK/debootstrap.log"; fail "debootstrap failed"; }
    # pip inside the build talks through this machine's TLS setup: give the image the same CA certificates.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
    fi
    chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
    rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    ln -sf python3 "$rootfs/usr/bin/python"
    ln -sf pip3 "$rootfs/usr/bin/pip"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' \
        -c 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        -c 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' - "$BASE_IMAGE" >/dev/null
    mkdir -p "$CACHE"
    docker save "$BASE_IMAGE" -o "$BASE_TAR.part" && mv "$BASE_TAR.part" "$BASE_TAR"
    log "stand-in cached in ${BASE_TAR#"$ROOT"/}"
}

ensure_base_image() {
    docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return
    if [ -f "$BASE_TAR" ] && docker load -q -i "$BASE_TAR" >/dev/null 2>&1; then
        log "loaded the cached $BASE_IMAGE stand-in"
        return
    fi
    build_standin
}

# The torch CPU wheel, every other dependency and the build backend from this machine's pip, so the build
# needs no network.
fetch_wheels() {
    local python=python3
    [ -x .venv/bin/python ] && python=.venv/bin/python
    local pip=("$python" -m pip) stamp
    stamp=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
    if [ -f wheels/.pyproject-stamp ] && [ "$(cat wheels/.pyproject-stamp)" = "$stamp" ] \
        && ls wheels/torch-"$TORCH_PIN"*.whl >/dev/null 2>&1; then
        return  # already fetched for this pyproject.toml
    fi
    mkdir -p wheels
    "$python" -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); \
print('\n'.join(p['project']['dependencies'] + p['build-system']['requires']))" >"$WORK/requirements.txt"
    # async-timeout: redis requires it on Pythons before 3.11.3, as the stand-in's 3.11.2 (this host's pip skips it)
    if ! { "${pip[@]}" download -q "torch==$TORCH_PIN" --no-deps -d wheels/ \
           && "${pip[@]}" download -q -d wheels/ -c constraints.txt -r "$WORK/requirements.txt" \
           && "${pip[@]}" download -q -d wheels/ "async-timeout>=4.0.3"; } >"$WORK/pip.log" 2>&1; then
        grep -v "is ignored" "$WORK/pip.log" | tail -n 20  # (pip warns about local index folders lacking a package)
        fail "pip download failed"
    fi
    ls wheels/torch-"$TORCH_PIN"*.whl >/dev/null 2>&1 || fail "no torch $TORCH_PIN wheel in wheels/"
    echo "$stamp" >wheels/.pyproject-stamp
    log "fetched $(ls wheels/*.whl | wc -l) wheels into wheels/"
}

# Without ./wheels/ and with TORCH_INDEX_URL emptied, the build must stop at once with its one error line.
check_refuses_without_torch_source() {
    local context=$WORK/no-torch-context
    mkdir -p "$context"
    cp Dockerfile pyproject.toml constraints.txt "$context/"
    if docker build --network host --build-arg TORCH_INDEX_URL= -t resnorm-explorer:refused "$context" \
        >"$WORK/refused.log" 2>&1; then
        fail "the image built with no CPU torch source"
    fi
    local line  # the build's own stderr line (the legacy builder colours it), not the echoed RUN command
    line=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/refused.log" | grep -m1 "^error: no CPU torch source") \
        || { tail -n 10 "$WORK/refused.log"; fail "no clear error line"; }
    log "no CPU torch source: refused with '${line:0:60}...'"
}

build_image() {
    log "building $IMAGE"
    # CI cannot reach PyTorch's CPU wheel index: torch and everything else come from ./wheels/.
    # WITH_MODELS=0: the real models' packages are not among those wheels (the image with them: docs/models.md).
    docker build --network host --build-arg TORCH_INDEX_URL= --build-arg PIP_ARGS=--no-index --build-arg WITH_MODELS=0 -t "$IMAGE" . \
        >"$WORK/build.log" 2>&1 \
        || { tail -n 30 "$WORK/build.log"; fail "docker build failed"; }
    log "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
}

# Run inside the container (its own python, its own loopback): is it up; then a page and a trace.
HEALTH_PY='import urllib.request; urllib.request.urlopen("http://127.0.0.1:8000/api/health", timeout=2)'

SMOKE_PY='
import json, math, sys, urllib.request
base, page = "http://127.0.0.1:8000", sys.argv[1]
def get(path, timeout=60):
    with urllib.request.urlopen(base + path, timeout=timeout) as r:
        return r.status, r.headers, r.read()
status, headers, body = get(page)
assert status == 200 and headers["content-type"].startswith("text/html"), (status, headers["content-type"])
assert "default-src" in headers["content-security-policy"], "no Content-Security-Policy"
print(f"GET {page}: 200, {len(body)} bytes of HTML, CSP present")
status, headers, body = get("/api/trace?depth=6&norm_position=post")
trace = json.loads(body)
assert trace["config"]["depth"] == 6 and len(trace["layers"]) == 6, trace["config"]
assert all(layer["grad_norm"] >= 0 for layer in trace["layers"]) and math.isfinite(trace["loss"])
loss, elapsed = trace["loss"], trace["summary"]["elapsed_ms"]
print(f"GET /api/trace: depth 6, loss {loss:.3f}, computed in {elapsed} ms")
request = urllib.request.Request(base + "/api/trace", data=b"{}", headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=60) as r:
    source = r.headers["X-Resnorm-Cache"]
assert source in ("disk", "memory"), f"the default view was {source}, not answered from the warm cache of the image"
print(f"POST /api/trace (the default view): answered from the cache built into the image ({source})")
for path in ("/static/js/charts.js", "/vendor/plotly.min.js"):
    status, headers, body = get(path)
    assert status == 200 and "javascript" in headers["content-type"], (path, status)
import importlib.util, subprocess
import resnorm_explorer
assert "site-packages" in resnorm_explorer.__file__ or "dist-packages" in resnorm_explorer.__file__, resnorm_explorer.__file__
assert importlib.util.find_spec("app") is None, "the image installs a top-level package named app"
print(f"scripts served; the app runs from the installed wheel ({resnorm_explorer.__file__})")
out = subprocess.run(["resnorm-explorer", "trace", "--depth", "3", "--json"], capture_output=True, text=True, timeout=120)
assert out.returncode == 0 and len(json.loads(out.stdout)["layers"]) == 3, out.stderr
print("resnorm-explorer trace --depth 3 --json: 3 layers")
'

smoke_test() {
    # --network none: the container has only its own loopback, so this also proves it needs no network at all.
    # Short health-check intervals so the image's own HEALTHCHECK is seen to pass within the test.
    CONTAINER=$(docker run -d --network none --label resnorm-smoke -e RESNORM_WORKERS=2 \
        --health-interval 2s --health-start-period 1s "$IMAGE")
    log "container ${CONTAINER:0:12} started (no network)"
    local deadline=$((SECONDS + 120))
    until docker exec "$CONTAINER" python -c "$HEALTH_PY" 2>/dev/null; do
        [ "$(docker inspect -f '{{.State.Running}}' "$CONTAINER")" = true ] || fail "the container exited"
        # uvicorn's supervisor restarts workers that die while importing the app: fail now, not in 2 minutes
        docker logs "$CONTAINER" 2>&1 | grep -q "Child process .* died" && fail "a worker died while starting"
        [ "$SECONDS" -lt "$deadline" ] || fail "/api/health did not answer 200 within 120 s"
        sleep 1
    done
    log "/api/health: 200"
    docker exec "$CONTAINER" python -c "$SMOKE_PY" "$SMOKE_PAGE" | sed 's/^/[docker-test]   /' \
        || fail "smoke checks failed inside the container"
    [ "$(docker exec "$CONTAINER" id -u)" != 0 ] || fail "the container runs as root"
    local health=""
    for _ in $(seq 40); do
        health=$(docker inspect -f '{{.State.Health.Status}}' "$CONTAINER")
        [ "$health" = healthy ] && break
        sleep 0.5
    done
    [ "$health" = healthy ] || fail "HEALTHCHECK says $health"
    log "HEALTHCHECK: healthy; runs as uid $(docker exec "$CONTAINER" id -u)"
    docker stop -t 20 "$CONTAINER" >/dev/null
    log "container stopped cleanly (exit $(docker inspect -f '{{.State.ExitCode}}' "$CONTAINER"))"
}

main() {
    install_tools
    DOCKER_BIN=$(command -v /usr/bin/docker || command -v docker)
    start_dockerd
    ensure_base_image
    fetch_wheels
    check_refuses_without_torch_source
    build_image
    smoke_test
    # Keep the tagged image (the next build reuses its layers); drop what earlier or failed builds left.
    docker container prune -f >/dev/null
    docker image prune -f >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main
fi
