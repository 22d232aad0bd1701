#!/usr/bin/env bash
# Sanitizer builds, as CI runs them (`make test-asan`, `make test-tsan`).
#
#   scripts/sanitizers.sh asan [ctest args...]   build-asan: ASan + LSan + UBSan, the whole CTest
#                                                suite (`make test`'s, Python/Node/examples included)
#   scripts/sanitizers.sh tsan [ctest args...]   build-tsan: TSan, the tests labelled `concurrency`
#                                                (tests/CMakeLists.txt)
#
# Environment: JOBS (default: nproc), BUILD_DIR (default: build-asan / build-tsan), CXX (default:
# clang++, installed with its sanitizer runtimes when missing).
#
# Every executable of the tree is sanitized (cmake/Sanitizers.cmake), taxel-server included, so the
# Python, Node, CLI and shutdown tests run the sanitized server. Every report of every process goes
# to $BUILD_DIR/sanitizer-logs/<tool>.<pid>, and the run fails when that directory is not empty
# even if CTest passed: a server's report (e.g. a leak at exit) could otherwise pass unseen by the
# client test that started it. Suppressions: scripts/sanitizers/*.supp, each entry with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

mode="${1:-}"
shift || true
case "$mode" in
  asan) sanitize="address,undefined"; build="${BUILD_DIR:-build-asan}"; targets=(all); select=() ;;
  tsan) sanitize="thread"; build="${BUILD_DIR:-build-tsan}"; targets=(taxel_concurrency_tests); select=(-L concurrency) ;;
  *) echo "usage: $0 asan|tsan [ctest args...]" >&2; exit 2 ;;
esac
jobs="${JOBS:-$(nproc)}"

# clang (Debian 12: clang 14) and its sanitizer runtimes, as for scripts/fuzz.sh: its
# instrumented builds compile about 40 % faster than gcc 12's, and its UBSan checks more
# (e.g. float-cast-overflow). CXX overrides it (gcc works too).
cxx="${CXX:-clang++}"
need=()
if [ "$cxx" = clang++ ]; then
  command -v clang++ >/dev/null || need+=(clang)
  dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" || need+=(libclang-rt-14-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "sanitizers: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Debug: TAXEL_DCHECKs and Eigen's index assertions stay on; Sanitizers.cmake adds -O2 -g.
# No benchmarks: they are not part of the test gate.
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug -DTAXEL_SANITIZE="$sanitize" \
  -DTAXEL_BUILD_BENCH=OFF
start=$SECONDS
# tsan: only the test executables labelled `concurrency` (and the taxel-server they start).
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
echo "sanitizers: $mode build took $((SECONDS - start)) s"

logs="$root/$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
supp="$root/scripts/sanitizers"
# One log_path for ASan and UBSan: in a process with both, the last one set wins anyway.
# halt_on_error: the first ASan/UBSan report ends the process (UBSan: with -fno-sanitize-recover).
asan="log_path=$logs/asan:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1"
asan+=":check_initialization_order=1:strict_init_order=1:strict_string_checks=1"
export ASAN_OPTIONS="$asan"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$logs/asan:halt_on_error=1:print_stacktrace=1:report_error_type=1"
# TSan keeps going, so one run lists every race; a process with a report exits 66.
export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$supp/tsan.supp:print_suppressions=0"

start=$SECONDS
status=0
if [ "$mode" = asan ]; then
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE soak "$@" || status=$?
  # The soak test asserts that the server's resident memory levels off. ASan's quarantine keeps up
  # to 256 MB of freed blocks out of reuse (to catch use-after-free), so the RSS climbs for the
  # first minute of the run; with 16 MB it levels off within seconds, and a freed block is still
  # held back for the next 16 MB of frees.
  ASAN_OPTIONS="$asan:quarantine_size_mb=16" ctest --test-dir "$build" --output-on-failure -j"$jobs" -L soak "$@" \
    || status=$?
else
  ctest --test-dir "$build" --output-on-failure -j"$jobs" "${select[@]}" "$@" || status=$?
fi
echo "sanitizers: $mode tests took $((SECONDS - start)) s"

reports=("$logs"/*)
if [ -e "${reports[0]}" ]; then
  for r in "${reports[@]}"; do
    echo "===== $r"
    cat "$r"
  done
  echo "sanitizers: $mode: ${#reports[@]} process(es) wrote a sanitizer report (above)" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "sanitizers: $mode: ctest failed (exit $status)" >&2
  exit "$status"
fi
echo "sanitizers: $mode: no reports"
