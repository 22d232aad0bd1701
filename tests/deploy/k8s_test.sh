#!/usr/bin/env bash
# deploy/k8s: the rendered overlays are current (where kubectl exists), every object passes the
# Kubernetes and prometheus-operator schemas and Taxel's deployment rules, bad manifests are
# refused with the field and rule named, the PrometheusRule is the one generated from
# deploy/prometheus/rules.yml, and every flag in the ConfigMaps' flag files is a real flag.
# Usage: k8s_test.sh TAXEL_SERVER NODE NPM     Exits 77 (skipped) when npm ci cannot install.
set -euo pipefail
SERVER="$1"
NODE="${2:-node}"
NPM="${3:-npm}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VALIDATE="$ROOT/deploy/validate"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! command -v "$NODE" >/dev/null 2>&1 || ! command -v "$NPM" >/dev/null 2>&1; then
  echo "k8s_test: SKIPPED: node or npm not found (Debian: nodejs npm; scripts/install-deps.sh)"
  exit 77
fi

# The validator's pinned packages (package-lock.json), installed once per lock file.
stamp="$VALIDATE/node_modules/.taxel-lock-sha256"
want="$(sha256sum "$VALIDATE/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "k8s_test: npm ci in deploy/validate"
  if ! (cd "$VALIDATE" && "$NPM" ci --no-audit --no-fund --prefer-offline --ignore-scripts --loglevel=error); then
    echo "k8s_test: SKIPPED: npm ci failed (no access to the npm registry and no cached packages?)"
    exit 77
  fi
  echo "$want" >"$stamp"
fi

# 1. The committed renderings are what kustomize makes of the overlays today.
rc=0
"$VALIDATE/render.sh" --check || rc=$?
case "$rc" in
  0) ;;
  77) echo "k8s_test: kubectl missing: the committed renderings are validated without a fresh rendering" ;;
  *) fail "stale rendering (make deploy-render)" ;;
esac
renderings=("$ROOT"/deploy/k8s/rendered/*.yaml)
((${#renderings[@]} >= 2)) || fail "expected the dev and prod renderings, found ${#renderings[@]}"

# 2. Every object valid.
"$NODE" "$VALIDATE/validate.mjs" "${renderings[@]}" >"$WORK/valid.log" || { cat "$WORK/valid.log"; fail "validation"; }
n="$(grep -c '^ok ' "$WORK/valid.log")"
((n >= 16)) || { cat "$WORK/valid.log"; fail "only $n objects validated"; }
grep -q 'StatefulSet/taxel' "$WORK/valid.log" && grep -q 'PrometheusRule/taxel' "$WORK/valid.log" \
  && grep -q 'ServiceMonitor/taxel' "$WORK/valid.log" || fail "a kind was not validated"
echo "k8s_test: $n objects valid in ${#renderings[@]} renderings"

# 3. Bad manifests: each a copy of the dev rendering with one mistake, refused with its message.
mutate() {  # mutate CASE > file
  /usr/bin/python3 - "$ROOT/deploy/k8s/rendered/dev.yaml" "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
case = sys.argv[2]
one = lambda kind: next(d for d in docs if d["kind"] == kind)
sts = one("StatefulSet")
pod = sts["spec"]["template"]["spec"]
c = pod["containers"][0]
if case == "replicas": sts["spec"]["replicas"] = "three"
elif case == "probe_port": c["livenessProbe"]["grpc"]["port"] = "grpc"
elif case == "policy_type": one("NetworkPolicy")["spec"]["policyTypes"] = ["Sideways"]
elif case == "monitor_interval": one("ServiceMonitor")["spec"]["endpoints"][0]["interval"] = "15 seconds"
elif case == "rule_for": one("PrometheusRule")["spec"]["groups"][1]["rules"][0]["for"] = "ten minutes"
elif case == "rule_expr": del one("PrometheusRule")["spec"]["groups"][1]["rules"][0]["expr"]
elif case == "writable_root": c["securityContext"]["readOnlyRootFilesystem"] = False
elif case == "capabilities": c["securityContext"]["capabilities"]["drop"] = ["NET_RAW"]
elif case == "grace": pod["terminationGracePeriodSeconds"] = 3
elif case == "replica_id": c["args"] = [a for a in c["args"] if not a.startswith("--replica_id")]
elif case == "secret": docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "taxel-tls"},
                                     "data": {"tls.key": "c2VjcmV0"}})
else: sys.exit("unknown case " + case)
yaml.safe_dump_all(docs, sys.stdout)
PY
}
# All cases in one node run (loading the schemas is the slow part); each file must be refused
# with its own message.
CASES=(
  "replicas|StatefulSet/taxel: schema: data/spec/replicas must be integer"
  "probe_port|livenessProbe/grpc/port must be integer"
  "policy_type|NetworkPolicy/taxel: schema: data/spec/policyTypes/0 must be equal to one of the allowed values"
  "monitor_interval|ServiceMonitor/taxel: schema: data/spec/endpoints/0/interval must match pattern"
  "rule_for|PrometheusRule/taxel: schema: data/spec/groups/1/rules/0/for must match pattern"
  "rule_expr|rules/0 must have required property expr"
  "writable_root|securityContext.readOnlyRootFilesystem must be true"
  "capabilities|securityContext.capabilities.drop must include ALL"
  "grace|terminationGracePeriodSeconds 3 must exceed --shutdown_grace_seconds 5"
  "replica_id|args must pass --replica_id=\$(POD_NAME)"
  "secret|Secret/taxel-tls: Secrets are referenced by name"
)
files=()
for c in "${CASES[@]}"; do
  mutate "${c%%|*}" >"$WORK/${c%%|*}.yaml"
  files+=("$WORK/${c%%|*}.yaml")
done
if "$NODE" "$VALIDATE/validate.mjs" "${files[@]}" >"$WORK/bad.log"; then fail "bad manifests accepted"; fi
for c in "${CASES[@]}"; do
  name="${c%%|*}" message="${c#*|}"
  line="$(grep -F "FAIL $WORK/$name.yaml: " "$WORK/bad.log" | grep -F -- "$message" | head -1 || true)"
  [ -n "$line" ] || { grep -F "$WORK/$name.yaml" "$WORK/bad.log"; fail "'$name' not refused with '$message'"; }
  echo "k8s_test: refused $name: ${line#*"$name.yaml: "}" | cut -c1-170
done
# Only the one mistake: the unchanged objects of each bad file still pass.
n_ok="$(grep -c '^ok ' "$WORK/bad.log")"
((n_ok >= ${#CASES[@]} * 7)) || fail "only $n_ok objects of the bad files passed"

# 4. One source of rules: the PrometheusRule is generated from deploy/prometheus/rules.yml.
/usr/bin/python3 "$ROOT/deploy/prometheus/make_prometheusrule.py" >"$WORK/prometheusrule.yaml"
diff -u "$ROOT/deploy/k8s/base/prometheusrule.yaml" "$WORK/prometheusrule.yaml" \
  || fail "deploy/k8s/base/prometheusrule.yaml differs from rules.yml: run deploy/prometheus/make_prometheusrule.py"

# 5. The flag files name real flags (a misspelt one would crash-loop every pod).
"$SERVER" --help >"$WORK/help"
count=0
for f in "$ROOT"/deploy/k8s/base/*.flags "$ROOT"/deploy/k8s/overlays/*/*.flags; do
  for name in $(sed -n 's/^--\([a-z0-9_]*\)=.*/\1/p' "$f"); do
    grep -q -- "^  --$name " "$WORK/help" || fail "${f#"$ROOT"/}: --$name is not a taxel-server flag"
    count=$((count + 1))
  done
done
((count >= 10)) || fail "read only $count flags from the flag files"
echo "k8s_test: $count flags in the flag files are taxel-server flags"
echo "k8s_test: PASSED"
