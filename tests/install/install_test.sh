#!/usr/bin/env bash
# cmake --install into a fresh prefix, then a project outside the tree (tests/install/consumer)
# finds it with find_package(Taxel), links Taxel::client, and runs against the installed
# taxel-server: the installed tree is complete and relocatable.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$1"
SRC="$2"
WORK="$(mktemp -d)"
PID=""
cleanup() { [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log" || { cat "$WORK/install.log"; fail "install"; }
for f in bin/taxel-server bin/taxel-cli include/taxel/client.h include/taxel/version.h \
         include/taxel/v1/service.grpc.pb.h lib/cmake/Taxel/TaxelConfig.cmake lib/cmake/Taxel/TaxelConfigVersion.cmake; do
  [ -e "$WORK/prefix/$f" ] || fail "not installed: $f"
done
VERSION="$(cat "$SRC/VERSION")"
[ "$("$WORK/prefix/bin/taxel-cli" --version)" = "taxel-cli $VERSION" ] || fail "installed taxel-cli --version"

# The consumer sees only the prefix (a copy of its sources, away from the Taxel tree).
cp -r "$SRC/tests/install/consumer" "$WORK/consumer"
cmake -S "$WORK/consumer" -B "$WORK/consumer/build" -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "find_package(Taxel)"; }
cmake --build "$WORK/consumer/build" -j2 > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build against Taxel::client"; }
# A version the package does not promise is refused.
sed -i 's/find_package(Taxel 0.1 REQUIRED)/find_package(Taxel 9.0 REQUIRED)/' "$WORK/consumer/CMakeLists.txt"
if cmake -S "$WORK/consumer" -B "$WORK/consumer/build9" -DCMAKE_PREFIX_PATH="$WORK/prefix" > "$WORK/c9.log" 2>&1; then
  fail "find_package(Taxel 9.0) accepted version $VERSION"
fi

"$WORK/prefix/bin/taxel-server" --address=127.0.0.1:0 --metrics_address= 2>"$WORK/server.log" &
PID=$!
PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's/.*event=server_started .* port=\([0-9]*\).*/\1/p' "$WORK/server.log" | head -n1)"
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { cat "$WORK/server.log"; fail "the installed server did not start"; }
"$WORK/consumer/build/consumer" "127.0.0.1:$PORT" > "$WORK/out" || { cat "$WORK/out"; fail "consumer"; }
grep -qx "client $VERSION, server $VERSION" "$WORK/out" || fail "versions: $(cat "$WORK/out")"
# R - distance = 2 mm - 1 mm (tests/install/consumer/main.cc).
grep -qx "depth 0.001000 m" "$WORK/out" || fail "reading: $(cat "$WORK/out")"
echo "install_test: installed, found by find_package(Taxel), linked and run"
