#!/usr/bin/env python3
"""Something to watch in the live viewer: a ball rolling back and forth across a 16 x 16
KinematicTaxel pad, stepped about 100 times a second until Ctrl-C (or --steps).

    # against a server started with the viewer on
    build/server/taxel-server --ui_address=127.0.0.1:8080 &
    python3 examples/python/live_viewer.py            # then open http://127.0.0.1:8080/

    # or let the script start one (viewer on 127.0.0.1:8080) and stop it at the end
    python3 examples/python/live_viewer.py --server build/server/taxel-server

Geometry (pad frame = world; the pad does not move):

      ball r = 5 cm, centre (x(t), +5 mm, 51.5 mm), x(t) = 6 mm * sin(0.05 k) at step k
                 .---.
    ____________/_____\\____________  z = 0: 16 x 16 probes, pitch 1 mm, y = -7.5 .. +7.5 mm, R = 2 mm

A probe at p is pressed by depth = R - (|p - c| - r): 0.5 mm under the ball's centre (0.5 N with
k_n = 1000 N/m), none beyond a lateral distance of sqrt((r + R)^2 - (51.5 mm)^2) = 7.2 mm.
tests/viewer/viewer_browser_test.py drives its browser test with this scene.
"""
import argparse
import re
import threading
from typing import Optional

import numpy as np

import taxel

SCENE, SENSOR, N = "viewer", "skin", 16


def spec(num_envs: int = 2) -> taxel.SceneSpec:
    s = taxel.SceneSpec(SCENE, num_envs=num_envs, seed=1)
    s.robot("hand").link("pad")
    s.object("ball", shapes=[taxel.Sphere(0.05)])
    grid = taxel.grid_points_on_plane((-0.0075, -0.0075, 0), (0.0075, 0.0075, 0), (0, 0, 1), N, N)
    s.add_sensor(taxel.KinematicTaxel(SENSOR, link="pad", probe_local_pos=grid, probe_radius=0.002))
    return s


def poses(num_envs: int, k: int) -> np.ndarray:
    """[num_envs, 2 moving links (pad, ball), 7] xyzw poses of step k: the pad at the origin."""
    p = np.zeros((num_envs, 2, 7))
    p[..., 6] = 1
    p[:, 1, :3] = (0.006 * np.sin(0.05 * k), 0.005, 0.0515)
    return p


def run(scene, num_envs: int, stop: threading.Event, steps: Optional[int] = None, counter: Optional[list] = None):
    """Steps until `stop` is set (or `steps` steps); counter[0] follows the step count."""
    k = 0
    while not stop.is_set() and (steps is None or k < steps):
        scene.step(poses(num_envs, k), dt=0.01, quat_order="xyzw")
        k += 1
        if counter is not None:
            counter[0] = k
        stop.wait(0.01)  # about 100 steps/s: a pace to watch, not a wait for a result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default="127.0.0.1:50051", help="taxel-server address")
    ap.add_argument("--token", default=None, help="bearer token (a server with --auth_tokens_file)")
    ap.add_argument("--server", default=None, help="start this taxel-server binary (viewer on --ui_address)")
    ap.add_argument("--ui_address", default="127.0.0.1:8080", help="with --server: its --ui_address")
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: until Ctrl-C)")
    args = ap.parse_args()
    server = None
    where = "the server's --ui_address"
    if args.server:
        server = taxel.LocalServer(args.server, [f"--ui_address={args.ui_address}"]).start()
        args.target = server.target
        started = next(line for line in server.log if "event=server_started" in line)
        where = "127.0.0.1:" + re.search(r"ui_port=(\d+)", started).group(1)  # the port, also for port 0
    try:
        client = taxel.Client(args.target, token=args.token)
        scene = client.create_scene(spec(), replace=True)
        print(f"stepping scene '{SCENE}' on {args.target}; open http://{where}/?scene={SCENE}&sensor={SENSOR}"
              + (f"&token={args.token}" if args.token else ""), flush=True)
        try:
            run(scene, 2, threading.Event(), args.steps or None)
        except KeyboardInterrupt:
            pass
        print("stopped")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
