#!/usr/bin/env bash
# The container image: build it, or build it and smoke-test a running container.
#   scripts/image.sh build [TAG]    (make image)
#   scripts/image.sh test  [TAG]    (make image-test)
#   scripts/image.sh smoke [TAG]    (the smoke test of an image built before)
# TAG defaults to localhost/taxel:latest. Uses docker when its daemon answers, else podman. With
# podman, ../shared/tools/podman-env.sh (beside the checkout on our machines and in CI) is sourced
# when it exists: it configures rootful podman and builds the Debian base images locally; without
# it podman is used as it is configured.
#
# The smoke test (scripts/image_smoke.py does the gRPC part): the image runs as a non-root user;
# `--help` exits 0 and lists every flag of server/main.cc; in a container on 127.0.0.1 (host
# network, free ports) gRPC health answers SERVING, the Python client creates a scene and steps it,
# /metrics answers; SIGTERM with an open StepStream exits 0 within the drain grace.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
CMD="${1:-}"
TAG="${2:-localhost/taxel:latest}"
log() { printf 'image: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

pick_engine() {
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    ENGINE=docker
    return
  fi
  if [ -f "$ROOT/../shared/tools/podman-env.sh" ]; then
    eval "$(bash "$ROOT/../shared/tools/podman-env.sh")"
  fi
  command -v podman >/dev/null 2>&1 || die "neither a running docker nor podman found"
  ENGINE=podman
}

build() {
  local start=$SECONDS
  if [ "$ENGINE" = podman ]; then
    # --pull=never: the base images are local (no registry here); --format docker keeps HEALTHCHECK.
    podman build --pull=never --network host --format docker -t "$TAG" .
  else
    docker build -t "$TAG" .
  fi
  local bytes
  bytes="$($ENGINE image inspect --format '{{.Size}}' "$TAG")"
  log "built $TAG with $ENGINE in $((SECONDS - start)) s: $((bytes / 1000000)) MB"
}

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

smoke_test() {
  local rc
  # Globals, not locals: the EXIT trap runs after this function has returned.
  work="$(mktemp -d)"
  cid=""
  cleanup() {
    if [ -n "$cid" ]; then
      if [ "$ENGINE" = podman ]; then podman rm -f -t 0 "$cid"; else docker rm -f "$cid"; fi >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
  }
  trap cleanup EXIT

  # 1. Non-root: the image's user, and the uid a container really gets.
  local user uid
  user="$($ENGINE image inspect --format '{{.Config.User}}' "$TAG")"
  uid="$($ENGINE run --rm --network host --entrypoint /usr/bin/id "$TAG" -u)"
  [ -n "$user" ] && [ "$uid" != 0 ] || die "runs as root (User='$user', uid $uid)"
  log "user $user (uid $uid)"

  # 2. --help exits 0 and lists every flag main.cc defines.
  rc=0
  $ENGINE run --rm --network host "$TAG" --help >"$work/help" 2>&1 || rc=$?
  [ "$rc" = 0 ] || die "--help exited $rc: $(head -5 "$work/help")"
  local flags=0 f
  for f in $(sed -n 's/^ABSL_FLAG([^,]*, *\([a-z0-9_]*\),.*/\1/p' server/main.cc); do
    grep -q -- "^  --$f " "$work/help" || die "--help does not list --$f"
    flags=$((flags + 1))
  done
  ((flags >= 20)) || die "read only $flags flag names from server/main.cc"
  log "--help: exit 0, $flags flags"

  # 3. A server container on 127.0.0.1 (host network, free ports), a short drain grace.
  local port metrics_port grace=3
  port="$(free_port)"
  metrics_port="$(free_port)"
  cid="$($ENGINE run -d --network host "$TAG" --address="127.0.0.1:$port" \
           --metrics_address="127.0.0.1:$metrics_port" --shutdown_grace_seconds=$grace --threads=2)"
  log "container ${cid:0:12} on 127.0.0.1:$port (metrics $metrics_port)"

  # 4. The image's HEALTHCHECK command (taxel-cli info), run inside the container on its port.
  $ENGINE exec "$cid" /usr/local/bin/taxel-cli --target="127.0.0.1:$port" --timeout=5 info >"$work/info" 2>&1 \
    || die "taxel-cli info in the container: $(head -5 "$work/info")"
  grep -q max_message_bytes "$work/info" || die "taxel-cli info: $(head -5 "$work/info")"
  log "taxel-cli info in the container: ok"

  # 5. Health, a scene stepped, /metrics, SIGTERM with an open StepStream (Python, from the host).
  if [ -z "${PYTHONPATH:-}" ]; then export PYTHONPATH="$ROOT/client/python"; else export PYTHONPATH="$ROOT/client/python:$PYTHONPATH"; fi
  [ -d client/python/taxel/_proto ] || /usr/bin/python3 client/python/gen_stubs.py --proto-dir proto >/dev/null
  /usr/bin/python3 scripts/image_smoke.py --target "127.0.0.1:$port" --metrics "127.0.0.1:$metrics_port" \
    --grace "$grace" --kill "$ENGINE kill --signal TERM $cid" --wait "$ENGINE wait $cid" \
    || { $ENGINE logs "$cid" 2>&1 | tail -20 >&2; die "smoke test"; }
  # The exited container is removed by the EXIT trap.
  log "PASSED ($TAG, $ENGINE)"
}

case "$CMD" in
  build) pick_engine; build ;;
  test) pick_engine; build; smoke_test ;;
  smoke) pick_engine; smoke_test ;;
  *) echo "usage: $0 build|test|smoke [TAG]" >&2; exit 2 ;;
esac
