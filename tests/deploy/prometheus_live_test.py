#!/usr/bin/env python3
"""A real Prometheus (127.0.0.1, free port, temporary storage, 1 s scrapes) against a real
taxel-server stepped by the Python client: the step p99 and the handled-RPC rate come back present,
finite and plausible, the recording rules of deploy/prometheus/rules.yml evaluate, and every
PromQL of the Grafana dashboard (deploy/grafana/taxel.json) parses and returns series.

    prometheus_live_test.py TAXEL_SERVER        (PYTHONPATH with client/python)

Exits 77 (CTest: skipped) without the prometheus binary (Debian package prometheus). Every wait is
bounded; nothing sleeps for a fixed long time.
"""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import numpy as np

import taxel

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEADLINE_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def query(prom: str, expr: str) -> dict:
    """Prometheus' /api/v1/query answer; a parse error comes back as HTTP 400 with errorType."""
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        return json.loads(get(url))
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def values(answer: dict) -> list:
    return [float(r["value"][1]) for r in answer.get("data", {}).get("result", [])]


def wait_until(what: str, check, timeout_s: float = DEADLINE_S):
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL: {what}: not within {timeout_s} s")
        time.sleep(0.25)


def scene_spec() -> taxel.SceneSpec:
    # 4 envs; a pad with a 3x3 grid of KinematicTaxels and ContactDepthProbes; a ball pressing it.
    spec = taxel.SceneSpec("metrics", num_envs=4, seed=1)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(0.05)])
    grid = np.array([[(j - 1) * 0.01, (i - 1) * 0.01, 0.0] for i in range(3) for j in range(3)]).reshape(3, 3, 3)
    spec.add_sensor(taxel.KinematicTaxel("skin", link="pad", probe_local_pos=grid, probe_radius=0.002))
    spec.add_sensor(taxel.ContactDepthProbe("depth", link="pad", probe_local_pos=grid, probe_radius=0.002))
    return spec


def main() -> int:
    binary = sys.argv[1]
    prometheus = shutil.which("prometheus")
    if not prometheus:
        print("prometheus_live_test: SKIPPED: prometheus not found (apt-get install prometheus)")
        return 77
    work = tempfile.mkdtemp(prefix="taxel-prom-")
    server = taxel.LocalServer(binary, ["--metrics_address=127.0.0.1:0"], threads=2, grace_seconds=0.5).start()
    prom_proc = None
    stop = threading.Event()
    try:
        started = next(line for line in server.log if "event=server_started" in line)
        metrics_port = int(re.search(r"metrics_port=(\d+)", started).group(1))
        prom = f"127.0.0.1:{free_port()}"
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.join(ROOT, "deploy", "prometheus", "rules.yml")}
scrape_configs:
  - job_name: taxel
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
""")
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        prom_proc = subprocess.Popen(
            [prometheus, f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/data",
             f"--web.listen-address={prom}", "--storage.tsdb.retention.time=1h"],
            stdout=prom_log, stderr=subprocess.STDOUT)

        def ready():
            if prom_proc.poll() is not None:
                raise SystemExit("FAIL: prometheus exited:\n" + open(prom_log.name).read()[-3000:])
            try:
                return get(f"http://{prom}/-/ready") is not None
            except OSError:
                return False
        wait_until("prometheus ready", ready, 60)
        print(f"prometheus_live_test: prometheus on {prom}, taxel metrics on 127.0.0.1:{metrics_port}")

        client = taxel.Client(server.target, timeout=20)
        scene = client.create_scene(scene_spec(), quat_order="xyzw", dt=0.01)
        poses = np.zeros((4, 2, 7))
        poses[:, :, 6] = 1.0
        poses[:, 1, :3] = (0, 0, 0.049)
        try:  # one caller mistake, so that the errors-by-code panel has a series
            scene.step(poses[:, :1])
        except taxel.InvalidArgumentError:
            pass
        else:
            raise SystemExit("FAIL: a step with one pose per env was accepted")

        def drive():  # steps until told to stop, ~100 a second, over a StepStream and unary calls
            with scene.stream() as s:
                while not stop.is_set():
                    s.step(poses)
                    scene.step(poses)
                    time.sleep(0.01)
        driver = threading.Thread(target=drive, daemon=True)
        driver.start()

        # The step p99 and the handled-RPC rate of the brief, over 1 min windows.
        p99_expr = "histogram_quantile(0.99, sum by (le) (rate(taxel_step_duration_seconds_bucket[1m])))"
        rate_expr = "sum(rate(grpc_server_handled_total[1m]))"

        def p99_and_rate():
            p99, rate = values(query(prom, p99_expr)), values(query(prom, rate_expr))
            return (p99, rate) if p99 and rate and rate[0] > 0 and math.isfinite(p99[0]) else None
        p99, rate = wait_until("step p99 and RPC rate", p99_and_rate)
        if not (1e-6 < p99[0] < 10):
            raise SystemExit(f"FAIL: step p99 {p99[0]} s is not between 1e-6 and 10 s")
        print(f"prometheus_live_test: step p99 {p99[0]:.6f} s, handled RPCs {rate[0]:.1f}/s")

        # Counters Prometheus must carry exactly: one CreateScene OK, one Step INVALID_ARGUMENT.
        created = values(query(prom, 'grpc_server_handled_total{grpc_method="CreateScene", grpc_code="OK"}'))
        refused = values(query(prom, 'grpc_server_handled_total{grpc_method="Step", grpc_code="INVALID_ARGUMENT"}'))
        if created != [1.0] or refused != [1.0]:
            raise SystemExit(f"FAIL: CreateScene OK {created}, Step INVALID_ARGUMENT {refused}; expected [1.0] each")

        # The recording rules evaluate to finite numbers.
        for record in ("taxel:step_duration_seconds:p99_5m", "taxel:step_duration_seconds:p50_5m",
                       "taxel:grpc_server_handled:rate5m", "taxel:grpc_server_errors:ratio_rate5m",
                       "taxel:probe_evaluations:rate5m"):
            got = wait_until(f"recording rule {record}", lambda: values(query(prom, record)))
            if not all(math.isfinite(v) for v in got):
                raise SystemExit(f"FAIL: {record} = {got}")
        ratio = values(query(prom, "taxel:grpc_server_errors:ratio_rate5m"))
        if ratio != [0.0]:  # INVALID_ARGUMENT is the caller's: no server-side error
            raise SystemExit(f"FAIL: server-side error ratio {ratio}, expected [0.0]")
        print("prometheus_live_test: 5 recording rules evaluate; server-side error ratio 0")

        # Every panel of the Grafana dashboard, with Grafana's variables as Grafana expands them
        # here: $__rate_interval at least 4 scrape intervals (4 s; 1m keeps more samples), the
        # replica variable at its "All" value.
        with open(os.path.join(ROOT, "deploy", "grafana", "taxel.json")) as f:
            dash = json.load(f)
        all_value = dash["templating"]["list"][0]["allValue"]
        n = 0
        for panel in dash["panels"]:
            for target in panel["targets"]:
                expr = target["expr"].replace("$__rate_interval", "1m").replace("$instance", all_value)
                def answered():
                    a = query(prom, expr)
                    if a.get("status") != "success":
                        raise SystemExit(f"FAIL: panel '{panel['title']}': {a.get('errorType')}: {a.get('error')}")
                    return a["data"]["result"]
                result = wait_until(f"panel '{panel['title']}' series", answered, 30)
                n += 1
                print(f"prometheus_live_test: panel '{panel['title']}': {len(result)} series")
        variable = dash["templating"]["list"][0]["definition"]
        m = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable)
        series = json.loads(get(f"http://{prom}/api/v1/series?" + urllib.parse.urlencode({"match[]": m.group(1)})))
        if not [s for s in series["data"] if m.group(2) in s]:
            raise SystemExit(f"FAIL: dashboard variable {variable}: no series")
        if n < 9:
            raise SystemExit(f"FAIL: only {n} panel queries")
        print(f"prometheus_live_test: PASSED ({n} panel queries)")
        return 0
    finally:
        stop.set()
        if prom_proc:
            prom_proc.terminate()
            try:
                prom_proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                prom_proc.kill()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
