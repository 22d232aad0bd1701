#!/usr/bin/env bash
# make demo: start taxel-server on a free port, run the demo client against it, stop the server.
set -euo pipefail
BUILD_DIR="${BUILD_DIR:-build}"
LOG="$(mktemp)"
"$BUILD_DIR/server/taxel-server" --address=127.0.0.1:0 --metrics_address= 2>"$LOG" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -f "$LOG"' EXIT
PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's/.*event=server_started .* port=\([0-9]*\).*/\1/p' "$LOG" | head -n1)"
  [ -n "$PORT" ] && break
  kill -0 $SERVER 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 0.1
done
[ -n "$PORT" ] || { echo "demo: the server did not start" >&2; cat "$LOG" >&2; exit 1; }
echo "taxel-server listening on 127.0.0.1:$PORT (pid $SERVER)"
"$BUILD_DIR/examples/demo/taxel-demo" "127.0.0.1:$PORT"
kill -TERM $SERVER
wait $SERVER
echo "taxel-server stopped (SIGTERM, exit code $?)"
sed -n 's/.*\(event=server_stopped\).*/server log: \1/p' "$LOG"
