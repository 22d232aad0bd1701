"""Shared fixtures of the Python client tests: a real taxel-server and the scene they all use.

The server binary comes from $TAXEL_SERVER_BINARY (CTest passes $<TARGET_FILE:taxel-server>). It
listens on 127.0.0.1:0 and reports its port on stderr (`event=server_started ... port=NNNN`); a
reader thread of taxel.LocalServer follows the log, so no test sleeps or polls.

The common scene ("pad and ball"), in the pad's link frame L = world when the pad sits at the
origin with the identity rotation:

        ball, radius r = 5 cm, centre c = (0, 0, 0.049): its lowest point is 1 mm below z = 0
             .-''''-.
            /    c   \\
    ---o----o----o---        3×3 probe grid on the pad, z = 0, pitch 1 cm, radius R = 2 mm:
      (-1) ( 0) (+1) cm      probe (i, j) at x = (j − 1)·1 cm, y = (i − 1)·1 cm

A probe at o reads depth = R − sd(o) = R − (|o − c| − r) when positive:
    centre  o = (0, 0, 0):        |o − c| = 0.049                         -> depth = 3 mm
    edge    o = (±0.01, 0, 0):    |o − c| = √(0.01² + 0.049²) = 0.0500100 -> depth = 1.990001 mm
    corner  o = (±0.01, ±0.01, 0): |o − c| = √(0.0002 + 0.002401) = 0.051 -> depth = 1 mm
"""
import math
import os
import re

import numpy as np
import pytest

import taxel

BALL_R = 0.05
PROBE_R = 0.002
PITCH = 0.01
BALL_Z = 0.049  # ball centre height above the pad for the pressing envs
FAR_Z = 1.0     # ball centre out of reach

# Expected depths of the 3×3 grid under the ball at (0, 0, BALL_Z) (see the module doc).
D_CENTRE = PROBE_R - (BALL_Z - BALL_R)                                   # 0.003
D_EDGE = PROBE_R - (math.sqrt(PITCH ** 2 + BALL_Z ** 2) - BALL_R)        # 0.001990001
D_CORNER = PROBE_R - (math.sqrt(2 * PITCH ** 2 + BALL_Z ** 2) - BALL_R)  # 0.001
EXPECTED_DEPTH = np.array([[D_CORNER, D_EDGE, D_CORNER],
                           [D_EDGE, D_CENTRE, D_EDGE],
                           [D_CORNER, D_EDGE, D_CORNER]])


class ServerProcess(taxel.LocalServer):
    """A taxel-server subprocess on 127.0.0.1 (port 0 = any free port) with 2 evaluation threads
    and a short drain grace: SIGTERM waits for it in full while any client holds an idle
    connection."""

    def __init__(self, binary: str, extra_args=()):
        super().__init__(binary, extra_args, threads=2, grace_seconds=0.5)


def server_binary() -> str:
    path = os.environ.get("TAXEL_SERVER_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.exit("TAXEL_SERVER_BINARY must name the taxel-server binary (CTest sets it)", returncode=2)
    return path


@pytest.fixture(scope="session")
def server():
    s = ServerProcess(server_binary()).start()
    yield s
    s.stop()


@pytest.fixture
def fresh_server():
    """A server of the test's own (for restarts)."""
    s = ServerProcess(server_binary()).start()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def client(server):
    with taxel.Client(server.target, timeout=20) as c:
        yield c


@pytest.fixture
def scene_name(request):
    """A scene name unique to the test; the scene is deleted afterwards if it still exists."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:60]
    yield name
    c = request.getfixturevalue("client")
    try:
        c.delete_scene(name)
    except taxel.NotFoundError:
        pass


def grid_3x3() -> np.ndarray:
    """The (3, 3, 3) probe grid of the module doc, built by hand (not with grid_points_on_plane)."""
    g = np.zeros((3, 3, 3))
    for i in range(3):
        for j in range(3):
            g[i, j] = ((j - 1) * PITCH, (i - 1) * PITCH, 0.0)
    return g


def pad_and_ball_spec(name: str, num_envs: int = 3, ball_shape=None, **kinematic_options) -> taxel.SceneSpec:
    """Robot "hand" with link "pad" (no geometry of its own), object "ball", and on the pad three
    sensors over the same 3×3 grid: "skin" (KinematicTaxel), "depth" (ContactDepthProbe) and
    "touch" (ContactProbe)."""
    spec = taxel.SceneSpec(name, num_envs=num_envs, seed=1)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[ball_shape or taxel.Sphere(BALL_R)])
    grid = grid_3x3()
    spec.add_sensor(taxel.KinematicTaxel("skin", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                         **kinematic_options))
    spec.add_sensor(taxel.ContactDepthProbe("depth", link="hand/pad", probe_local_pos=grid, probe_radius=PROBE_R))
    spec.add_sensor(taxel.ContactProbe("touch", link="pad", probe_local_pos=grid, probe_radius=PROBE_R))
    return spec


def poses_xyzw(ball_centres, dtype=np.float64) -> np.ndarray:
    """[E, 2, 7] poses (pad at the origin, ball at each centre), identity quaternions in xyzw."""
    out = np.zeros((len(ball_centres), 2, 7), dtype=dtype)
    out[:, :, 6] = 1.0
    out[:, 1, :3] = np.asarray(ball_centres, dtype=dtype)
    return out
