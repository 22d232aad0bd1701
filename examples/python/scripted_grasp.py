#!/usr/bin/env python3
"""A scripted two-finger grasp against a running taxel-server: numpy only, a few seconds.

Two finger pads, each carrying an 8×8 grid of KinematicTaxels, close on an object from both sides,
squeeze it and hold. Every step the script streams the pads' and the object's poses for a few
parallel environments and prints, for env 0, how hard each pad presses (the sum of its taxel
forces), how many taxels touch, and the partner-resolved force the object puts on each pad (the
scene's contact matrix).

    top view (z up, out of the page)      each pad: 8×8 taxels on its face, R = 1.5 mm,
                                           pitch 2.5 mm; probes face the object
      left pad                right pad
         |>      .-----.      <|            env 0, 2, ...: a ball (radius 2.5 cm)
         |>     (   o   )     <|            env 1, 3, ...: a cube (half side 2.5 cm)
         |>      '-----'      <|
      x = -opening    x = +opening         the opening shrinks from 3 cm to 2.35 cm, then holds

Run it (after building: `cmake --build build`, which also generates the Python stubs):

    build/server/taxel-server --address=127.0.0.1:50051 &
    PYTHONPATH=client/python python3 examples/python/scripted_grasp.py

or let it start a server of its own on a free port:

    PYTHONPATH=client/python python3 examples/python/scripted_grasp.py --server build/server/taxel-server
"""
import argparse
import math
import pathlib
import sys

import numpy as np

try:
    import taxel
except ImportError:  # running from a checkout without PYTHONPATH: use the in-tree package
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "client" / "python"))
    import taxel

GRID = 8              # taxels per side
PITCH = 0.0025        # m
PROBE_R = 0.0015      # m
OBJECT_HALF = 0.025   # ball radius / cube half side, m
OPEN, CLOSED = 0.030, OBJECT_HALF - 0.0015  # pad distance from the object's centre, m

# Pads: local +z (the probes' side) faces the object. Left pad: +z -> world +x, a quarter turn
# about y; right pad: +z -> world -x. Quaternions in xyzw order.
S = math.sqrt(0.5)
LEFT_QUAT = (0.0, S, 0.0, S)
RIGHT_QUAT = (0.0, -S, 0.0, S)


def build_spec(name: str, num_envs: int) -> taxel.SceneSpec:
    """The gripper (two pads), the object slot (ball or cube per env) and the pads' taxel grids,
    with a contact matrix of the pads against the object."""
    # The contact matrix estimates the pad–object forces itself with a pressure law
    # p = k_p·δ^1.5 (Pa); k_p = 3e9 gives about 2e5 Pa at 1.5 mm, a stiff rubber pad.
    spec = taxel.SceneSpec(name, num_envs=num_envs, seed=0,
                           contact_bodies=["left_pad", "right_pad"], contact_partners=["object/*"],
                           contact_law=taxel.NonlinearLaw(stiffness=3e9, exponent=1.5))
    half = 0.5 * GRID * PITCH
    pad_shape = taxel.Box(half_extents=(half, half, 0.002), pos=(0, 0, -0.002))  # behind the taxels
    gripper = spec.robot("gripper")
    gripper.link("left_pad", shapes=[pad_shape])
    gripper.link("right_pad", shapes=[pad_shape])
    spec.object("object", shapes=[taxel.Sphere(OBJECT_HALF)],
                assets=[taxel.Asset("cube", [taxel.Box(half_extents=(OBJECT_HALF,) * 3)])],
                env_assets=[e % 2 for e in range(num_envs)])  # asset 0 = the ball, 1 = the cube
    grid = taxel.grid_points_on_plane((-half + PITCH / 2, -half + PITCH / 2, 0),
                                      (half - PITCH / 2, half - PITCH / 2, 0), (0, 0, 1), GRID, GRID)
    for pad in ("left_pad", "right_pad"):
        spec.add_sensor(taxel.KinematicTaxel(pad, link=pad, probe_local_pos=grid, probe_radius=PROBE_R,
                                             normal_stiffness=500.0))  # N/m per taxel
    return spec


def opening_at(step: int, steps: int) -> float:
    """Pad distance from the object's centre (m): close over the first 60 % of the steps, hold."""
    t = min(1.0, step / max(1.0, 0.6 * steps))
    return OPEN + (CLOSED - OPEN) * t


def grasp_poses(num_envs: int, opening: float) -> np.ndarray:
    """[E, 3, 7] poses (left pad, right pad, object), xyzw; the object sits at the origin."""
    poses = np.zeros((num_envs, 3, 7))
    poses[:, 0, :3] = (-opening, 0, 0)
    poses[:, 0, 3:] = LEFT_QUAT
    poses[:, 1, :3] = (opening, 0, 0)
    poses[:, 1, 3:] = RIGHT_QUAT
    poses[:, 2, 6] = 1.0
    return poses


def run(client: "taxel.Client", num_envs: int, steps: int, dt: float, out=sys.stdout) -> dict:
    """Creates the scene, streams the grasp, prints one line per step; returns the last step's
    summary for env 0 (used by the tests)."""
    scene = client.create_scene(build_spec("scripted_grasp", num_envs), replace=True, quat_order="xyzw", dt=dt)
    print(f"scene {scene.name!r}: {num_envs} envs, moving links {list(scene.moving_links)}", file=out)
    print(" step  opening mm |  left N  taxels |  right N  taxels | object on left pad (N, world)", file=out)
    read = taxel.Read(sensors=["left_pad", "right_pad"], channels=["force"], contact_matrix=True)
    summary = {}
    try:
        with scene.stream() as stream:
            for k in range(steps):
                opening = opening_at(k, steps)
                r = stream.step(grasp_poses(num_envs, opening), read=read)
                row = {}
                for pad in ("left_pad", "right_pad"):
                    f = r[pad].force[0]                                   # [8, 8, 3], link frame, N
                    row[pad] = (float(np.linalg.norm(f.sum(axis=(0, 1)))),
                                int(np.count_nonzero(np.linalg.norm(f, axis=-1) > 0)))
                cm = r.contact_matrix                                     # [E, 2, 1, 3], world, N
                on_left = cm.normal[0, cm.row_index["left_pad"], cm.column_index["object/object"]]
                print(f"{k + 1:5d}  {1000 * opening:10.2f} | {row['left_pad'][0]:7.2f}  {row['left_pad'][1]:6d} | "
                      f"{row['right_pad'][0]:8.2f}  {row['right_pad'][1]:6d} | "
                      f"({on_left[0]:+.3f}, {on_left[1]:+.3f}, {on_left[2]:+.3f})", file=out)
                summary = {"left": row["left_pad"], "right": row["right_pad"], "object_on_left": on_left.copy(),
                           "gripping": cm.in_contact(0.0).all(axis=1)}
        grip = summary.get("gripping", np.zeros(0, bool))
        print(f"envs gripping the object with both pads: {int(grip.sum())}/{num_envs}", file=out)
    finally:
        scene.delete()
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="localhost:50051", help="taxel-server address (default %(default)s)")
    parser.add_argument("--server", metavar="BINARY",
                        help="start this taxel-server binary on a free port instead of using --target")
    parser.add_argument("--envs", type=int, default=4, help="parallel environments (default %(default)s)")
    parser.add_argument("--steps", type=int, default=40, help="simulation steps (default %(default)s)")
    parser.add_argument("--dt", type=float, default=0.01, help="step duration, s (default %(default)s)")
    args = parser.parse_args(argv)

    server = taxel.LocalServer(args.server, threads=2).start() if args.server else None
    target = server.target if server else args.target
    try:
        with taxel.Client(target, timeout=10) as client:
            try:
                client.server_info()
            except taxel.UnavailableError:
                print(f"no taxel-server answers at {target}: start one (build/server/taxel-server "
                      f"--address=127.0.0.1:50051) or pass --server build/server/taxel-server", file=sys.stderr)
                return 1
            run(client, args.envs, args.steps, args.dt)
    finally:
        if server:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
