// Validates rendered Kubernetes manifests offline: every object against the Kubernetes 1.27 and
// prometheus-operator schemas (kubernetes-models, @kubernetes-models/prometheus-operator), then
// Taxel's own deployment rules (restricted security context, probes, --replica_id from the pod
// name, a termination grace above the drain grace, Secrets referenced but never included).
//   node validate.mjs deploy/k8s/rendered/prod.yaml ...
// Prints one line per object; exits 1 when any check fails, naming the object, field and rule.
// The schemas check types, enums, formats and required fields; Kubernetes' OpenAPI schemas leave
// unknown property names open, so a misspelt optional field is not caught here.
import { createRequire } from "module";
import { readFileSync } from "fs";

const require = createRequire(import.meta.url);
const yaml = require("js-yaml");

function modelClass(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const path =
    group === "monitoring.coreos.com"
      ? `@kubernetes-models/prometheus-operator/monitoring.coreos.com/${version}`
      : `kubernetes-models/${group ? group + "/" : ""}${version}`;
  let mod;
  try {
    mod = require(path);
  } catch (e) {
    return { error: `no schema for apiVersion ${apiVersion}` };
  }
  if (typeof mod[kind] !== "function") return { error: `no schema for kind ${kind} in ${apiVersion}` };
  return { cls: mod[kind] };
}

function schemaErrors(doc) {
  const { cls, error } = modelClass(String(doc.apiVersion), String(doc.kind));
  if (error) return [error];
  try {
    new cls(doc).validate();
    return [];
  } catch (e) {
    return [String(e.message || e).replace(/\s+/g, " ").trim()];
  }
}

// --flagfile=a,b values of a container's args; later files win, as in absl.
function flagValue(files, name) {
  let value;
  for (const text of files) {
    for (const line of text.split("\n")) {
      const m = line.trim().match(/^--([a-z0-9_]+)=(.*)$/);
      if (m && m[1] === name) value = m[2];
    }
  }
  return value;
}

function labelsMatch(selector, labels) {
  return Object.entries(selector || {}).every(([k, v]) => labels[k] === v);
}

function policyErrors(docs) {
  const errors = [];
  const byKind = (k) => docs.filter((d) => d.kind === k);
  const configMaps = new Map(byKind("ConfigMap").map((c) => [c.metadata.name, c]));
  for (const s of byKind("Secret")) {
    errors.push(`Secret/${s.metadata.name}: Secrets are referenced by name and created in the cluster, never rendered`);
  }
  const sets = byKind("StatefulSet");
  if (sets.length !== 1) errors.push(`expected one StatefulSet, found ${sets.length}`);
  for (const sts of sets) {
    const where = `StatefulSet/${sts.metadata.name}`;
    const pod = sts.spec.template.spec;
    const podLabels = sts.spec.template.metadata.labels || {};
    const podSc = pod.securityContext || {};
    if (podSc.runAsNonRoot !== true) errors.push(`${where}: spec.template.spec.securityContext.runAsNonRoot must be true`);
    const headless = byKind("Service").find((s) => s.metadata.name === sts.spec.serviceName);
    if (!headless || headless.spec.clusterIP !== "None") {
      errors.push(`${where}: spec.serviceName '${sts.spec.serviceName}' must name a headless Service (clusterIP: None)`);
    }
    const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
    for (const v of volumes.values()) {
      if (v.configMap && !configMaps.has(v.configMap.name)) {
        errors.push(`${where}: volume ${v.name}: ConfigMap ${v.configMap.name} is not in the rendering`);
      }
    }
    for (const c of pod.containers) {
      const at = `${where}: container ${c.name}`;
      const sc = c.securityContext || {};
      if (sc.allowPrivilegeEscalation !== false) errors.push(`${at}: securityContext.allowPrivilegeEscalation must be false`);
      if (sc.privileged === true) errors.push(`${at}: securityContext.privileged must not be true`);
      if (sc.readOnlyRootFilesystem !== true) errors.push(`${at}: securityContext.readOnlyRootFilesystem must be true`);
      if (sc.runAsNonRoot !== true && podSc.runAsNonRoot !== true) errors.push(`${at}: runAsNonRoot must be true`);
      if (!((sc.capabilities || {}).drop || []).includes("ALL")) errors.push(`${at}: securityContext.capabilities.drop must include ALL`);
      const seccomp = (sc.seccompProfile || podSc.seccompProfile || {}).type;
      if (seccomp !== "RuntimeDefault") errors.push(`${at}: seccompProfile.type must be RuntimeDefault, is ${seccomp}`);
      if (!c.livenessProbe) errors.push(`${at}: livenessProbe missing`);
      if (!c.readinessProbe) errors.push(`${at}: readinessProbe missing`);
      const args = c.args || [];
      const podName = (c.env || []).find((e) => e.name === "POD_NAME");
      if (!args.includes("--replica_id=$(POD_NAME)")) errors.push(`${at}: args must pass --replica_id=$(POD_NAME)`);
      if (!podName || ((podName.valueFrom || {}).fieldRef || {}).fieldPath !== "metadata.name") {
        errors.push(`${at}: env POD_NAME must come from the downward API (fieldRef metadata.name)`);
      }
      // The flag files the server reads: --flagfile paths inside ConfigMap mounts.
      const files = [];
      for (const arg of args.filter((a) => a.startsWith("--flagfile="))) {
        for (const path of arg.slice("--flagfile=".length).split(",")) {
          const mount = (c.volumeMounts || []).find((m) => path.startsWith(m.mountPath + "/"));
          const volume = mount && volumes.get(mount.name);
          const cm = volume && volume.configMap && configMaps.get(volume.configMap.name);
          const key = mount && path.slice(mount.mountPath.length + 1);
          if (!cm || !(key in (cm.data || {}))) {
            errors.push(`${at}: --flagfile ${path} is not a key of a mounted ConfigMap`);
          } else {
            files.push(cm.data[key]);
          }
        }
      }
      const grace = Number(flagValue(files, "shutdown_grace_seconds") ?? 10);  // the server's default
      const termination = pod.terminationGracePeriodSeconds ?? 30;             // Kubernetes' default
      if (!(termination > grace)) {
        errors.push(`${where}: terminationGracePeriodSeconds ${termination} must exceed --shutdown_grace_seconds ${grace}`);
      }
    }
    for (const kind of ["Service", "PodDisruptionBudget"]) {
      for (const o of byKind(kind)) {
        const sel = kind === "Service" ? o.spec.selector : (o.spec.selector || {}).matchLabels;
        if (!sel || !labelsMatch(sel, podLabels)) errors.push(`${kind}/${o.metadata.name}: selector does not select the StatefulSet's pods`);
      }
    }
  }
  return errors;
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  const docs = yaml.loadAll(readFileSync(file, "utf8")).filter((d) => d);
  for (const doc of docs) {
    const name = `${doc.kind}/${(doc.metadata || {}).name}`;
    const errs = schemaErrors(doc);
    if (errs.length) {
      failed++;
      for (const e of errs) console.log(`FAIL ${file}: ${name}: schema: ${e}`);
    } else {
      console.log(`ok   ${file}: ${name} (${doc.apiVersion})`);
    }
  }
  for (const e of policyErrors(docs)) {
    failed++;
    console.log(`FAIL ${file}: policy: ${e}`);
  }
}
if (failed) {
  console.log(`validate: ${failed} failure(s)`);
  process.exit(1);
}
console.log("validate: every object valid");
