#!/usr/bin/env bash
# `make demo` (scripts/demo.sh): the server starts, the demo streams its 300 steps, and its text
# says what happens: where the ball is (above or into the pad, never "-2 mm into"), why taxels
# touch before the ball does (the 1 mm probe radius), which frame Fz is in, and what the shading
# characters mean.
# Usage: demo_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD_DIR="$1"
SRC="$2"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
fail() { echo "FAIL: $*"; cat "$OUT"; exit 1; }
BUILD_DIR="$BUILD_DIR" timeout 120 "$SRC/scripts/demo.sh" > "$OUT" 2>&1 || fail "demo exited $?"

# Step 0: 2 mm above (press = -2 mm), nothing touches. Step 50: press = -2 + 3.5*50/99 = -0.23 mm,
# within the 1 mm probe radius, so taxels touch. Step 99: 1.5 mm into the pad.
grep -qE "^step   0  ball at x=\+0\.0 mm, 2\.00 mm above the pad \|   0 taxels touching" "$OUT" || fail "step 0"
grep -qE "^step  50  ball at x=\+0\.0 mm, 0\.23 mm above the pad \| +[1-9][0-9]* taxels touching" "$OUT" || fail "step 50"
grep -qE "^step  99  ball at x=\+0\.0 mm, 1\.50 mm into the pad" "$OUT" || fail "step 99"
grep -q "into the pad" "$OUT" && grep -qE "mm, -[0-9.]+ mm into" "$OUT" && fail "a negative depth 'into the pad'"
grep -q "sphere of radius 1 mm" "$OUT" || fail "no word on the probe radius"
grep -q "Forces are in the pad's frame (+z out of the pad)" "$OUT" || fail "no frame for Fz"
grep -qE "^    \|Fz\| per taxel.*' ' 0  \. : - = \+ \* # % @  [0-9.]+ N \(the largest\)" "$OUT" || fail "no legend"
# Pressing gives a negative total Fz (the ball pushes the pad down) at step 99.
grep -E "^step  99 " "$OUT" | grep -qE "sum Fz -[0-9]" || fail "Fz at step 99 is not negative"
grep -q "Done: 300 steps streamed" "$OUT" || fail "not all steps"
grep -q "server log: event=server_stopped" "$OUT" || fail "the server did not stop cleanly"
echo "demo_test: passed"
