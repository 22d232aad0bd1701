#!/usr/bin/env bash
# deploy/prometheus: the scrape config and the rules pass promtool, the rules' unit tests
# (rules_test.yml, answers worked out by hand) pass, and promtool does refuse a broken rule.
# Exits 77 (skipped) without promtool (Debian package prometheus; scripts/install-deps.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool_test: SKIPPED: promtool not found (apt-get install prometheus)"
  exit 77
fi
cd "$ROOT/deploy/prometheus"
promtool check config prometheus.yml
promtool check rules rules.yml | tee "$WORK/rules.log"
grep -q "SUCCESS: 10 rules found" "$WORK/rules.log" || fail "expected 10 rules"
promtool test rules rules_test.yml

# The checks can fail: a rule with a syntax error, and a unit test expecting a wrong value.
sed 's/> 0.25/> > 0.25/' rules.yml >"$WORK/broken.yml"
if promtool check rules "$WORK/broken.yml" >"$WORK/broken.log" 2>&1; then fail "a broken rule passed"; fi
grep -q "TaxelStepLatencyHigh\|parse error" "$WORK/broken.log" || { cat "$WORK/broken.log"; fail "no parse error"; }
cp rules.yml "$WORK/rules.yml"
sed 's/value: 0.496/value: 0.5/' rules_test.yml >"$WORK/rules_test.yml"
if promtool test rules "$WORK/rules_test.yml" >"$WORK/wrong.log" 2>&1; then fail "a wrong expected p99 passed"; fi
grep -q "4.96E-01" "$WORK/wrong.log" || { cat "$WORK/wrong.log"; fail "no p99 mismatch reported"; }
echo "promtool_test: PASSED"
