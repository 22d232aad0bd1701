#!/usr/bin/env bash
# CTest entry for the Node client: `npm ci` only when node_modules is missing or was installed
# from another package-lock.json, then `node --test` against TAXEL_SERVER_BINARY.
# Usage: run.sh NODE NPM   (TAXEL_SERVER_BINARY in the environment)
# Exits 77 (CTest: skipped) when the dependencies cannot be installed, e.g. offline with an
# empty npm cache.
set -euo pipefail
NODE="${1:-node}"
NPM="${2:-npm}"
cd "$(dirname "$0")/.."
: "${TAXEL_SERVER_BINARY:?TAXEL_SERVER_BINARY is not set}"

stamp=node_modules/.taxel-lock-sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "node client: npm ci (node_modules missing or package-lock.json changed)"
  if ! "$NPM" ci --no-audit --no-fund --prefer-offline --ignore-scripts --loglevel=error; then
    echo "node client: SKIPPED: npm ci failed (no access to the npm registry and no cached packages?)"
    exit 77
  fi
  echo "$want" > "$stamp"
fi
exec "$NODE" --test
