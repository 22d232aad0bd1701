#!/usr/bin/env python3
"""The gRPC half of `scripts/image.sh test`: checks a taxel-server container through its ports.

    image_smoke.py --target 127.0.0.1:P --metrics 127.0.0.1:M --grace 3 \
        --kill "podman kill --signal TERM ID" --wait "podman wait ID"

1. grpc.health.v1 Check answers SERVING for "" and "readiness" (raw bytes, no generated stub:
   HealthCheckRequest{service} is field 1, a string; HealthCheckResponse{status = SERVING = 1}
   is b"\\x08\\x01").
2. The Python client creates a one-probe scene and steps it: a ball of radius 5 cm centred 4.9 cm
   above a ContactDepthProbe of radius 2 mm at the pad's origin reads R - (|o - c| - r) =
   0.002 - (0.049 - 0.05) = 3 mm.
3. /metrics answers with taxel_build_info and exactly one CreateScene handled with OK.
4. SIGTERM while a StepStream is open: the container exits with status 0 within the grace (plus
   a few seconds for the engine to report it).
Needs PYTHONPATH with client/python (stubs generated).
"""
import argparse
import re
import shlex
import subprocess
import sys
import time
import urllib.request

import grpc
import numpy as np

import taxel

SERVING = b"\x08\x01"


def health_request(service: str) -> bytes:
    data = service.encode()
    return (b"\x0a" + bytes([len(data)]) + data) if data else b""


def wait_serving(target: str, timeout_s: float = 30.0) -> None:
    channel = grpc.insecure_channel(target)
    check = channel.unary_unary("/grpc.health.v1.Health/Check", request_serializer=lambda b: b,
                                response_deserializer=lambda b: b)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            for service in ("", "readiness"):
                answer = check(health_request(service), timeout=2)
                if answer != SERVING:
                    raise SystemExit(f"health {service!r}: answered {answer!r}, not SERVING")
            break
        except grpc.RpcError as e:
            if time.monotonic() > deadline:
                raise SystemExit(f"health: no answer within {timeout_s} s ({e.code()})")
            time.sleep(0.2)
    channel.close()
    print("smoke: health SERVING (\"\" and readiness)")


def pad_and_ball(name: str) -> taxel.SceneSpec:
    spec = taxel.SceneSpec(name, num_envs=1, seed=1)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(0.05)])
    spec.add_sensor(taxel.ContactDepthProbe("depth", link="pad", probe_local_pos=np.zeros((1, 3)),
                                            probe_radius=0.002))
    return spec


def poses() -> np.ndarray:
    p = np.zeros((1, 2, 7))
    p[:, :, 6] = 1.0          # identity, xyzw
    p[0, 1, :3] = (0, 0, 0.049)  # the ball
    return p


def check_depth(result) -> None:
    depth = float(result["depth"].depth[0, 0])
    if abs(depth - 0.003) > 1e-6:
        raise SystemExit(f"depth {depth} m, expected 0.003 m")


def check_metrics(address: str) -> None:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    if "taxel_build_info{" not in text:
        raise SystemExit("/metrics: no taxel_build_info")
    created = re.findall(r'^grpc_server_handled_total\{([^}]*)\} (\S+)$', text, re.M)
    ok = [float(v) for labels, v in created if 'grpc_method="CreateScene"' in labels and 'grpc_code="OK"' in labels]
    if ok != [1.0]:
        raise SystemExit(f"/metrics: CreateScene handled OK {ok}, expected [1.0]")
    print("smoke: /metrics answers (taxel_build_info, 1 CreateScene OK)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--grace", type=float, required=True)
    ap.add_argument("--kill", required=True, help="command that sends SIGTERM to the container")
    ap.add_argument("--wait", required=True, help="command that waits for the container and prints its status")
    args = ap.parse_args()

    wait_serving(args.target)
    client = taxel.Client(args.target, timeout=20)
    scene = client.create_scene(pad_and_ball("smoke"), quat_order="xyzw", dt=0.01)
    check_depth(scene.step(poses()))
    print("smoke: scene created and stepped (depth 3 mm)")
    check_metrics(args.metrics)

    stream = scene.stream()
    stream.__enter__()
    check_depth(stream.step(poses()))
    start = time.monotonic()
    subprocess.run(shlex.split(args.kill), check=True, stdout=subprocess.DEVNULL)
    waited = subprocess.run(shlex.split(args.wait), check=True, capture_output=True, text=True, timeout=60)
    seconds = time.monotonic() - start
    status = waited.stdout.strip().splitlines()[-1] if waited.stdout.strip() else "?"
    try:
        stream.__exit__(None, None, None)
    except taxel.TaxelError:
        pass  # the server went away under the stream, as it should
    client.close()
    if status != "0":
        raise SystemExit(f"SIGTERM: container exited with status {status}")
    if seconds > args.grace + 5:
        raise SystemExit(f"SIGTERM: exit took {seconds:.1f} s, grace {args.grace} s")
    print(f"smoke: SIGTERM with an open StepStream: exit 0 after {seconds:.1f} s (grace {args.grace} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
