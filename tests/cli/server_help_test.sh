#!/usr/bin/env bash
# `taxel-server --help` exits 0 without starting a server and lists every flag that server/main.cc
# defines (the names are read from the source, so a flag added later is checked too).
# --version prints the VERSION file's version (not absl's "Debug build" placeholder) and exits 0.
# Usage: server_help_test.sh TAXEL_SERVER MAIN_CC VERSION_FILE
set -euo pipefail
SERVER="$1"
MAIN_CC="$2"
VERSION_FILE="$3"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ABSL_FLAG(type, name, ...: the type and the name are always on the macro's first line.
mapfile -t FLAGS < <(sed -n 's/^ABSL_FLAG([^,]*, *\([a-z0-9_]*\),.*/\1/p' "$MAIN_CC")
((${#FLAGS[@]} >= 20)) || fail "read only ${#FLAGS[@]} flag names from $MAIN_CC"

for arg in --help -help -h; do
  rc=0
  timeout 10 "$SERVER" "$arg" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" = 0 ] || fail "$arg exited $rc: $(cat "$WORK/err")"
  grep -q "Taxel: tactile-sensor readings" "$WORK/out" || fail "$arg: no usage message"
  for f in "${FLAGS[@]}"; do
    grep -q -- "^  --$f " "$WORK/out" || fail "$arg does not list --$f"
  done
  # Only this file's flags: none of the libraries' (those are --helpfull's).
  n="$(grep -c '^  --' "$WORK/out")"
  [ "$n" = "${#FLAGS[@]}" ] || fail "$arg lists $n flags, main.cc defines ${#FLAGS[@]}"
  grep -q 'event=server_started' "$WORK/err" && fail "$arg started the server"
done
# A flag's help text and a default (--log_level's "info" is written in main.cc itself).
grep -q "gRPC address: host:port" "$WORK/out" || fail "help text of --address"
grep -q -- "^  --log_level (default: info)" "$WORK/out" || fail "default of --log_level"

# Flag errors still fail: an unknown flag, and --help after `--` is not a request for help.
rc=0
timeout 10 "$SERVER" --no_such_flag >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" != 0 ] || fail "--no_such_flag accepted"
grep -q "no_such_flag" "$WORK/err" || fail "unknown flag message: $(cat "$WORK/err")"
out="$(timeout 10 "$SERVER" --version 2>&1)" || fail "--version exited $?: $out"
[ "$out" = "taxel-server $(cat "$VERSION_FILE")" ] || fail "--version printed: $out"
echo "server_help_test: ${#FLAGS[@]} flags listed by --help, -help and -h; exit 0"
