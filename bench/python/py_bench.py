#!/usr/bin/env python3
"""Python-client benchmarks (docs/reference.md#benchmarks): the step round trip through `taxel.Scene.step`.

    py_step/1env            1 env × 2 pads × 16×16 KinematicTaxels, unary Step; unit us, with
                            p50/p90/p99 — the scene and poses of the C++ e2e_step/1env_unary
    py_step/1env_stream     the same over one StepStream (e2e_step/1env_stream)
    py_grasp_batch          the 1024-env grasp batch (bench/grasp_scenario.h), unary; unit ms per
                            round trip, with p50/p90 — the C++ e2e_grasp_batch/unary. Both
                            clients' default: readings in the sparse form, expanded on receipt
    py_grasp_batch/stream   the same over one StepStream (e2e_grasp_batch/stream)
    py_grasp_batch/dense    the batch with Read(sparse=False): dense readings, zero-copy views —
                            the C++ e2e_grasp_batch/unary_dense

Output: one JSON object per line and case on stdout, as taxel-bench prints them:
    {"case", "threads", "unit", "median", "min", "max", "repeats", ...extra fields}
`threads` is the server's evaluation threads (GetServerInfo). Extra fields: p50/p90/p99, the server-side phase
times of the last step, the Python-side encode/decode times (py_encode_ms, py_decode_ms: request
building and response decoding without the network), library versions, and — when taxel-bench ran
in the same invocation — "cpp_case", "cpp_median" and "ratio_vs_cpp" (Python median / C++
median; the target for the 1024-env batch is ≤ 1.2). A summary goes to stderr. `--rounds N`
alternates Python and C++ measurements N times, for a noisy (shared) machine.

Server: by default this script starts build/server/taxel-server (or --server PATH) on a free
loopback port with --threads 2, the C++ harness' thread count; --target HOST:PORT uses a running
server instead. Afterwards, with the server stopped, it runs taxel-bench's matching e2e cases
(--cpp-bench PATH, default build/bench/taxel-bench; --no-cpp skips them), so both sides never run
at the same time.

    PYTHONPATH=client/python python3 bench/python/py_bench.py            # from the repository root
    PYTHONPATH=client/python python3 bench/python/py_bench.py --quick --case py_grasp_batch
"""
import argparse
import json
import pathlib
import platform
import subprocess
import sys
import time
from typing import Callable, Dict, List

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
try:
    import taxel
except ImportError:  # from a checkout without PYTHONPATH
    sys.path.insert(0, str(ROOT / "client" / "python"))
    import taxel
from taxel.results import StepResult  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import grasp_scenario  # noqa: E402

SERVER_THREADS = 2
BATCH_ENVS = 1024
# Python case -> the taxel-bench case measuring the same round trip from C++.
CPP_TWIN = {"py_step/1env": "e2e_step/1env_unary", "py_step/1env_stream": "e2e_step/1env_stream",
            "py_grasp_batch": "e2e_grasp_batch/unary", "py_grasp_batch/stream": "e2e_grasp_batch/stream",
            "py_grasp_batch/dense": "e2e_grasp_batch/unary_dense"}
CASES = list(CPP_TWIN)


def percentile(values: List[float], q: float) -> float:
    """Linear interpolation between order statistics (taxel-bench's Percentile)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(len(v) - 1, lo + 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def record(case: str, threads: int, unit: str, samples: List[float], **extra) -> Dict:
    r = {"case": case, "threads": threads, "unit": unit, "median": float(np.median(samples)),
         "min": min(samples), "max": max(samples), "repeats": len(samples)}
    r.update(p50=percentile(samples, 0.5), p90=percentile(samples, 0.9), p99=percentile(samples, 0.99))
    r.update(extra)
    return r


def environment() -> Dict:
    from google.protobuf.internal import api_implementation
    import grpc
    return {"client": "python", "python": platform.python_version(), "grpcio": grpc.__version__,
            "protobuf_backend": api_implementation.Type(), "numpy": np.__version__}


class Bench:
    def __init__(self, client: "taxel.Client"):
        self.client = client
        vertices, triangles = grasp_scenario.geodesic_sphere()
        self.mesh_id = client.upload_mesh(vertices, triangles)
        if self.mesh_id != grasp_scenario.CPP_MESH_ID:
            print(f"py_bench: warning: mesh id {self.mesh_id} differs from the C++ benchmarks' "
                  f"{grasp_scenario.CPP_MESH_ID}", file=sys.stderr)
        self.scenes: Dict[int, "taxel.Scene"] = {}

    def scene(self, envs: int) -> "taxel.Scene":
        if envs not in self.scenes:
            spec = grasp_scenario.grasp_spec(f"py_bench_grasp_{envs}", envs, self.mesh_id)
            self.scenes[envs] = self.client.create_scene(spec, replace=True, quat_order="xyzw", dt=0.01)
        return self.scenes[envs]

    def time_steps(self, envs: int, stream: bool, count: int, read=None):
        """Round-trip times (s) of `count` steps after 3 untimed ones, and the last result."""
        scene = self.scene(envs)
        poses = grasp_scenario.grasp_poses(envs)
        s = scene.stream() if stream else None
        step: Callable = s.step if stream else scene.step
        last = None
        try:
            for _ in range(3):  # warm-up: connection, caches, the first finite differences
                last = step(poses, read=read)
            seconds = []
            for _ in range(count):
                t0 = time.perf_counter()
                last = step(poses, read=read)
                seconds.append(time.perf_counter() - t0)
        finally:
            if s is not None:
                s.close()
        return seconds, last

    def client_side_ms(self, envs: int, repeats: int, read=None) -> Dict[str, float]:
        """Python-side cost of one round trip without the network: building and serializing the
        request (poses -> Tensor, one tobytes) and reading the response's bytes into read-only
        views (StepResult.from_wire, what Scene.step does), medians in ms."""
        scene = self.scene(envs)
        poses = grasp_scenario.grasp_poses(envs)
        encode, decode = [], []
        wire = self.client._rpc("Step", scene._step_request(poses, None, None, None, None, read), raw=True)
        for _ in range(repeats):
            t0 = time.perf_counter()
            scene._step_request(poses, None, None, None, None, None).SerializeToString()
            t1 = time.perf_counter()
            StepResult.from_wire(wire)
            t2 = time.perf_counter()
            encode.append(1e3 * (t1 - t0))
            decode.append(1e3 * (t2 - t1))
        return {"py_encode_ms": float(np.median(encode)), "py_decode_ms": float(np.median(decode))}

    def run(self, case: str, repeats: int, quick: bool):
        """One round of a case: (unit, samples in that unit, extra fields)."""
        stream = case.endswith("stream")
        if case.startswith("py_step/"):
            seconds, _ = self.time_steps(1, stream, 200 if quick else 2000)
            return "us", [1e6 * s for s in seconds], {"envs": 1, "taxels": 512}
        read = taxel.Read(sparse=False) if case.endswith("dense") else None
        seconds, last = self.time_steps(BATCH_ENVS, stream, repeats, read)
        t = last.timing
        extra = {"envs": BATCH_ENVS, "response_bytes": 2 * BATCH_ENVS * 512 * 3 * 4,
                 "server_evaluate_ms": t.evaluate_us * 1e-3, "server_encode_ms": t.encode_us * 1e-3,
                 "server_decode_ms": t.decode_us * 1e-3, "server_queue_ms": t.queue_us * 1e-3}
        extra["readings_form"] = "dense" if read is not None else "sparse"
        extra.update(self.client_side_ms(BATCH_ENVS, max(3, repeats), read))
        return "ms", [1e3 * s for s in seconds], extra


def run_cpp(binary: str, cases: List[str], repeats: int, quick: bool) -> Dict[str, Dict]:
    """taxel-bench's records for `cases`, by case name ({} when it cannot run)."""
    args = [binary] + [a for c in cases for a in ("--case", c)] + ["--repeats", str(repeats)]
    if quick:
        args.append("--quick")
    try:
        out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=1800).stdout
    except (OSError, subprocess.SubprocessError) as e:
        print(f"py_bench: taxel-bench did not run ({e}); no C++ comparison", file=sys.stderr)
        return {}
    records = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            records[r["case"]] = r
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=str(ROOT / "build" / "server" / "taxel-server"),
                        help="taxel-server binary to start (default %(default)s)")
    parser.add_argument("--target", help="use a running server at HOST:PORT instead of starting one")
    parser.add_argument("--case", action="append", default=[], metavar="PREFIX",
                        help="run only cases whose name starts with PREFIX (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the case names and exit")
    parser.add_argument("--quick", action="store_true", help="3 timed repeats (200 for py_step) instead of 10 (2000)")
    parser.add_argument("--repeats", type=int, help="timed repeats of the batch cases (overrides --quick)")
    parser.add_argument("--cpp-bench", default=str(ROOT / "build" / "bench" / "taxel-bench"),
                        help="taxel-bench binary for the C++ comparison (default %(default)s)")
    parser.add_argument("--no-cpp", action="store_true", help="skip the C++ comparison")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate Python and C++ measurements this many times; the Python samples are "
                             "pooled, the C++ median is the median of its rounds' medians (default %(default)s)")
    args = parser.parse_args(argv)

    if args.list:
        print("\n".join(CASES))
        return 0
    cases = [c for c in CASES if not args.case or any(c.startswith(p) for p in args.case)]
    if not cases:
        print(f"py_bench: no case matches {args.case}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    repeats = args.repeats or (3 if args.quick else 10)
    if args.rounds < 1 or repeats < 1:
        parser.error("--rounds and --repeats must be >= 1")

    server = None if args.target else taxel.LocalServer(args.server, threads=SERVER_THREADS).start()
    samples: Dict[str, List[float]] = {c: [] for c in cases}
    units: Dict[str, str] = {}
    extras: Dict[str, Dict] = {}
    cpp_medians: Dict[str, List[float]] = {c: [] for c in cases}
    try:
        with taxel.Client(args.target or server.target, timeout=120) as client:
            threads = client.server_info().threads  # the server's evaluation threads
            bench = Bench(client)
            for _ in range(args.rounds):
                # Python, then C++ with the Python side idle: the two never compete for the cores,
                # and alternating rounds spreads any drift in the machine's load over both.
                for case in cases:
                    units[case], round_samples, extras[case] = bench.run(case, repeats, args.quick)
                    samples[case] += round_samples
                if not args.no_cpp:
                    cpp = run_cpp(args.cpp_bench, [CPP_TWIN[c] for c in cases], repeats, args.quick)
                    for case in cases:
                        if cpp.get(CPP_TWIN[case], {}).get("median"):
                            cpp_medians[case].append(cpp[CPP_TWIN[case]]["median"])
            for scene in bench.scenes.values():
                scene.delete()
    finally:
        if server is not None:
            server.stop()

    records = []
    for case in cases:
        r = record(case, threads, units[case], samples[case], rounds=args.rounds, **extras[case], **environment())
        if units[case] == "ms":
            r["steps_per_s"] = 1e3 / r["median"]
        if cpp_medians[case]:
            cpp_median = float(np.median(cpp_medians[case]))
            r.update(cpp_case=CPP_TWIN[case], cpp_median=cpp_median, ratio_vs_cpp=r["median"] / cpp_median)
        records.append(r)
        print(json.dumps(r), flush=True)
    for r in records:
        line = f"{r['case']:24s} median {r['median']:10.3f} {r['unit']}  p50 {r['p50']:.3f}  p90 {r['p90']:.3f}"
        if "ratio_vs_cpp" in r:
            line += f"  | C++ {r['cpp_case']} {r['cpp_median']:.3f} {r['unit']}  Python/C++ {r['ratio_vs_cpp']:.3f}"
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
