#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang + ASan/UBSan in their own build dir and runs each
# for a bounded time on its committed seed corpus and dictionary. Fails on any crash, leak, timeout
# or out-of-memory, and prints a summary.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (build parallelism, default nproc).
# New inputs go to $FUZZ_BUILD_DIR/fuzz-corpus/<target> (kept between local runs, never into the
# committed fuzz/corpus); crash reproducers to $FUZZ_BUILD_DIR/fuzz-artifacts/<target>/; logs to
# $FUZZ_BUILD_DIR/fuzz-logs/<target>.log. Replay a reproducer with
#   $FUZZ_BUILD_DIR/fuzz/<target> <file>
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET="${1:-30}"
shift || true
BUILD="${FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-$(nproc)}"
ALL_TARGETS=(scene_spec_fuzzer scene_create_fuzzer step_fuzzer reported_contacts_fuzzer sensor_update_fuzzer
             add_sensor_fuzzer mesh_upload_fuzzer scene_session_fuzzer)
TARGETS=("${@:-${ALL_TARGETS[@]}}")

# clang and its libFuzzer/sanitizer runtimes (Debian 12: clang 14).
need=()
command -v clang++ >/dev/null || need+=(clang)
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" || need+=(libclang-rt-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "fuzz: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  # -O1 -g without NDEBUG: the debug-only checks (TAXEL_DCHECK) stay on.
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DTAXEL_FUZZ=ON -DTAXEL_BUILD_TESTS=OFF -DTAXEL_BUILD_BENCH=OFF \
    -DTAXEL_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" >/dev/null
fi
start=$(date +%s)
cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}"
echo "fuzz: build took $(( $(date +%s) - start )) s"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$BUILD/fuzz-logs"
summary=()
failed=0
for t in "${TARGETS[@]}"; do
  work="$BUILD/fuzz-corpus/$t"
  artifacts="$BUILD/fuzz-artifacts/$t/"
  log="$BUILD/fuzz-logs/$t.log"
  mkdir -p "$work" "$artifacts"
  echo "fuzz: $t for ${SECONDS_PER_TARGET} s"
  # -timeout=25: one input may take 25 s in this -O1 ASan+UBSan build, about 2.5 s of a Release
  # server (the largest scene creation the limits allow, e.g. 2e6 contact-matrix surface samples).
  status=ok
  if ! "$BUILD/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=25 -rss_limit_mb=2048 -max_len=16384 \
       -dict="fuzz/dict/$t.dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
       "$work" "fuzz/corpus/$t" >"$log" 2>&1; then
    status=FAILED
    failed=1
    echo "---- $t: last lines of $log"
    tail -n 40 "$log"
    echo "---- reproducers in $artifacts: $(ls "$artifacts" | tr '\n' ' ')"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  summary+=("$(printf '%-26s %-7s %10s runs %7s exec/s  cov %s' "$t" "$status" "${runs:-?}" "${rate:-?}" "${cov:-?}")")
done

echo "fuzz summary (${SECONDS_PER_TARGET} s per target):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
