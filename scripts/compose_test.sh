#!/usr/bin/env bash
# make compose-test: deploy/compose.yaml for real, on a machine with no Docker Hub: Redis, three app containers and
# nginx, as `docker compose -f deploy/compose.yaml up --build --scale app=3` starts them. Checks that
#   1. the compose file keeps the Dockerfile's CPU torch source (a build without ./wheels/ looks in PyTorch's index
#      instead of stopping at "no CPU torch source");
#   2. the three app containers answer, and nginx answers on the published port;
#   3. what one app container computed, the other two serve from Redis;
#   4. killing an app container in the middle of a stream of requests through nginx loses none of them
#      (nginx retries an idempotent request that fails on one server on the next, deploy/nginx.conf).
#
# It shares dockerd, the python:3.11-slim stand-in, ./wheels/ and the cleanup with scripts/docker_test.sh (sourced
# below). redis:7-alpine and nginx:stable are stand-ins too: one Debian rootfs (debootstrap) with redis-server and
# nginx, cached in .docker-cache/services-standin.tar. Compose is docker-compose 1.29 (Debian's package; the
# engine here, 20.10, has no compose plugin): the same file, the same services.
#
# Environment: as docker_test.sh; COMPOSE_HTTP_PORT (the port nginx publishes here, default: a free one).
set -euo pipefail

LOG_NAME=compose-test
# shellcheck source=scripts/docker_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/docker_test.sh"

PROJECT=resnorm-compose-test
SERVICES_TAR=$CACHE/services-standin.tar
APPS=3
compose() { docker-compose --project-name "$PROJECT" --file deploy/compose.yaml "$@"; }

remove_containers() {
    local rc=$1
    [ -n "$DOCKERD_PID" ] || return 0
    if [ "$rc" -ne 0 ]; then
        log "compose logs (last 15 lines of each service):"
        compose logs --no-color --tail 15 2>&1 | tail -n 80
    fi
    compose down --volumes --remove-orphans --timeout 5 >/dev/null 2>&1
    docker ps -aq --filter "label=$PROJECT-client" | xargs -r docker rm -f >/dev/null 2>&1
}

install_compose() {
    command -v docker-compose >/dev/null && return
    log "installing docker-compose"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
}

# One rootfs with redis-server and nginx, tagged as both images; each keeps its official image's defaults that
# the compose file relies on.
ensure_service_images() {
    docker image inspect redis:7-alpine nginx:stable >/dev/null 2>&1 && return
    if [ -f "$SERVICES_TAR" ] && docker load -q -i "$SERVICES_TAR" >/dev/null 2>&1; then
        log "loaded the cached redis and nginx stand-ins"
        return
    fi
    local rootfs=$WORK/services-rootfs
    log "building the redis:7-alpine and nginx:stable stand-ins with debootstrap (bookworm)"
    $SUDO debootstrap --variant=minbase --include=redis-server,nginx bookworm "$rootfs" "$(debian_mirror)" \
        >"$WORK/debootstrap-services.log" 2>&1 \
        || { tail -n 20 "$WORK/debootstrap-services.log"; fail "debootstrap failed"; }
    # The official redis image builds redis with protected mode off (it serves other containers, not the world);
    # Debian's refuses every connection from another address when no config file is given.
    printf '#!/bin/sh\nexec /usr/bin/redis-server "$@" --protected-mode no\n' >"$rootfs/usr/local/bin/redis-server"
    chmod +x "$rootfs/usr/local/bin/redis-server"
    # The official nginx image serves only conf.d/ and logs to the container's output.
    rm -f "$rootfs/etc/nginx/sites-enabled/default"
    ln -sf /dev/stdout "$rootfs/var/log/nginx/access.log"
    ln -sf /dev/stderr "$rootfs/var/log/nginx/error.log"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import -c 'CMD ["redis-server"]' - redis:7-alpine >/dev/null
    printf 'FROM redis:7-alpine\nSTOPSIGNAL SIGQUIT\nCMD ["nginx", "-g", "daemon off;"]\n' \
        | docker build -q -t nginx:stable - >/dev/null
    mkdir -p "$CACHE"
    docker save redis:7-alpine nginx:stable -o "$SERVICES_TAR.part" && mv "$SERVICES_TAR.part" "$SERVICES_TAR"
    log "stand-ins cached in ${SERVICES_TAR#"$ROOT"/}"
}

# The compose file must not override the Dockerfile's TORCH_INDEX_URL with an empty value: built from a context
# without ./wheels/, pip has to look in PyTorch's CPU index (and, with no network here, fail there).
check_keeps_the_torch_index() {
    local context=$WORK/no-wheels
    mkdir -p "$context/deploy"
    cp Dockerfile pyproject.toml constraints.txt "$context/"   # what the Dockerfile copies before pip asks for torch
    cp deploy/compose.yaml "$context/deploy/"
    if docker-compose --project-name "$PROJECT-index" --file "$context/deploy/compose.yaml" \
        build --build-arg "PIP_ARGS=--retries 0 --timeout 3" app >"$WORK/index.log" 2>&1; then
        fail "built with no network and no ./wheels/: where did torch come from?"
    fi
    # the build's own output lines (the legacy builder colours stderr), not the echoed Dockerfile
    sed 's/\x1b\[[0-9;]*m//g' "$WORK/index.log" >"$WORK/index-plain.log"
    grep -q "^error: no CPU torch source" "$WORK/index-plain.log" \
        && fail "compose.yaml empties TORCH_INDEX_URL: the build has no torch source"
    grep -q "^Looking in indexes: .*download.pytorch.org/whl/cpu" "$WORK/index-plain.log" \
        || { tail -n 15 "$WORK/index-plain.log"; fail "the build did not look in PyTorch's CPU index"; }
    log "compose build keeps the Dockerfile's torch source (pip looked in download.pytorch.org/whl/cpu)"
}

free_port() {
    "$(command -v python3)" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_services() {
    # WITH_MODELS=0, as docker-test: the real models' packages are not among ./wheels/ (docs/models.md)
    log "compose build (torch and everything else from ./wheels/; without the real models)"
    compose build --build-arg PIP_ARGS=--no-index --build-arg WITH_MODELS=0 >"$WORK/build.log" 2>&1 \
        || { tail -n 30 "$WORK/build.log"; fail "docker-compose build failed"; }
    HTTP_PORT=${COMPOSE_HTTP_PORT:-$(free_port)}
    log "compose up --scale app=$APPS (nginx on port $HTTP_PORT)"
    RESNORM_HTTP_PORT=$HTTP_PORT compose up -d --no-build --scale app=$APPS >"$WORK/up.log" 2>&1 \
        || { tail -n 30 "$WORK/up.log"; fail "docker-compose up failed"; }
    NETWORK=$(docker inspect -f '{{range $name, $_ := .NetworkSettings.Networks}}{{$name}}{{end}}' "$(compose ps -q nginx)")
    APP_IMAGE=$(docker inspect -f '{{.Image}}' "$(compose ps -q app | head -n1)")
    mapfile -t APP_NAMES < <(for id in $(compose ps -q app); do docker inspect -f '{{.Name}}' "$id" | cut -c2-; done | sort)
    [ "${#APP_NAMES[@]}" -eq "$APPS" ] || fail "expected $APPS app containers, found ${#APP_NAMES[@]}"
}

# The checks run in a throwaway container of the app image on the compose network (names resolve there).
CHECK_PY='
import json, random, sys, threading, time, urllib.error, urllib.request
mode, apps = sys.argv[1], sys.argv[2:]

def get(url, timeout=120):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers, r.read()

if mode == "ready":  # up, and done warming up (as a room is before the students come)
    deadline, views = time.time() + 600, set()
    for base in [f"http://{a}:8000" for a in apps] + ["http://nginx"]:
        while True:
            try:
                status, _, body = get(base + "/api/health", timeout=5)
                warm = json.loads(body)["warm"]
                if status == 200 and not warm["running"]:
                    views.add(warm["total"])
                    break
            except (OSError, urllib.error.URLError):
                pass
            assert time.time() < deadline, f"{base} did not answer /api/health, warm-up done, within 600 s"
            time.sleep(2)
    counts = " or ".join(map(str, sorted(views)))
    print(f"all {len(apps)} app containers and nginx answer /api/health; warm-up done ({counts} views each)")

if mode == "shared":
    query = f"/api/trace?depth=3&d_model=32&seed={random.randrange(10**6, 10**9)}"
    sources = []
    for a in apps:
        status, headers, body = get(f"http://{a}:8000{query}")
        assert status == 200 and json.loads(body)["config"]["depth"] == 3
        sources.append(headers["X-Resnorm-Cache"])
        time.sleep(1.0)  # a result is stored (disk, then Redis) in the background after it is answered
    assert sources == ["computed"] + ["redis"] * (len(apps) - 1), sources
    print(f"{apps[0]} computed a new trace; " + ", ".join(f"{a} served it from {s}" for a, s in zip(apps[1:], sources[1:])))

if mode == "load":  # a stream of new traces through nginx while the host kills an app container
    seconds, threads = float(apps[0]), 4
    results, lock, stop = [], threading.Lock(), time.time() + seconds
    def worker(n):
        i = 0
        while time.time() < stop:
            i += 1
            query = f"/api/trace?depth=8&d_model=32&seed={n * 100000 + i + random.randrange(10**6)}"
            try:
                status = get("http://nginx" + query, timeout=60)[0]
            except urllib.error.HTTPError as exc:
                status = exc.code
            except OSError as exc:
                status = repr(exc)
            with lock:
                results.append(status)
    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    [t.start() for t in pool]
    [t.join() for t in pool]
    failed = [s for s in results if s != 200]
    print(f"{len(results)} requests through nginx in {seconds:.0f} s, {len(failed)} failed {failed[:5]}")
    sys.exit(1 if failed or len(results) < 20 else 0)
'

check() {
    docker run --rm --label "$PROJECT-client" --network "$NETWORK" "$APP_IMAGE" python -c "$CHECK_PY" "$@" \
        | sed 's/^/[compose-test]   /'
    return "${PIPESTATUS[0]}"
}

check_services() {
    check ready "${APP_NAMES[@]}" || fail "the services did not come up"
    local status
    status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/api/health" || true)
    [ "$status" = 200 ] || fail "nginx on the published port $HTTP_PORT answered $status"
    log "nginx answers on the published port $HTTP_PORT"
    check shared "${APP_NAMES[@]}" || fail "the app containers do not share results through Redis"
}

check_kill() {
    local client victim=${APP_NAMES[1]}
    client=$(docker run -d --label "$PROJECT-client" --network "$NETWORK" "$APP_IMAGE" python -c "$CHECK_PY" load 20)
    sleep 6
    docker kill "$victim" >/dev/null
    log "killed $victim in the middle of the requests"
    local rc
    rc=$(docker wait "$client")
    docker logs "$client" 2>&1 | sed 's/^/[compose-test]   /'
    docker rm -f "$client" >/dev/null
    [ "$rc" -eq 0 ] || fail "requests were lost when $victim was killed"
    log "no request lost: nginx sent the killed container's requests to the others"
}

compose_main() {
    install_tools
    install_compose
    DOCKER_BIN=$(command -v /usr/bin/docker || command -v docker)
    start_dockerd
    ensure_base_image
    ensure_service_images
    check_keeps_the_torch_index
    fetch_wheels
    start_services
    check_services
    check_kill
}

compose_main
