"""Steps and reads of any size (taxel/split.py): a step whose readings or request exceed the
message limit is sent as parts over env ranges and joined, transparently.

The issue's size: 4096 envs × 2 pads × 32×32 KinematicTaxels, force and torque in float32:
4096 · 2 · 1024 · 6 · 4 B = 201 MB of readings, over three times the server's default 64 MiB.
The reference is a twin scene (same spec, same seed) stepped by hand in slices of 256 envs, each
slice its own small step: per-env state and the noise draws (keyed by env and env step) make the
two identical bit for bit, while the step counts differ (1 logical step vs 16 steps).
"""
import numpy as np
import pytest

import taxel
from conftest import ServerProcess, server_binary
from test_mesh import CountingCall as Counting

E = 4096
G = 32            # probes per side of each pad
PITCH = 0.001     # m
PROBE_R = 0.001   # m
BALL_R = 0.005    # m
SLICE = 256


def two_pad_spec(name: str, num_envs: int) -> taxel.SceneSpec:
    spec = taxel.SceneSpec(name, num_envs=num_envs, seed=3)
    hand = spec.robot("hand")
    hand.link("left")
    hand.link("right")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    half = (G - 1) / 2 * PITCH
    grid = taxel.grid_points_on_plane((-half, -half, 0), (half, half, 0), (0, 0, 1), G, G)
    for pad in ("left", "right"):
        spec.add_sensor(taxel.KinematicTaxel(pad, link=pad, probe_local_pos=grid, probe_radius=PROBE_R,
                                             noise=1e-3 if pad == "left" else 0.0))
    return spec


def poses(num_envs: int, t: int) -> np.ndarray:
    """[E, 3, 7] xyzw: the left pad at the origin, the right pad 5 cm along x, and a ball that
    presses the left pad 0.2 to 0.8 mm deep at an env-dependent spot, moving with the step t."""
    p = np.zeros((num_envs, 3, 7))
    p[:, :, 6] = 1
    p[:, 1, 0] = 0.05
    e = np.arange(num_envs)
    p[:, 2, 0] = 0.004 * np.sin(0.01 * e + 0.3 * t)
    p[:, 2, 1] = 0.004 * np.cos(0.013 * e)
    p[:, 2, 2] = BALL_R - 0.0002 - 0.0006 * ((e + t) % 7) / 6
    return p


def assert_same(got: taxel.StepResult, want_parts, envs: slice = slice(None)):
    for pad in ("left", "right"):
        for ch in ("force", "torque"):
            want = np.concatenate([w[pad][ch] for w in want_parts])[envs]
            np.testing.assert_array_equal(got[pad][ch], want, err_msg=f"{pad}.{ch}")


@pytest.mark.parametrize("sparse", [False, True])
def test_a_step_over_the_limit_equals_small_slices(server, sparse):
    with taxel.Client(server.target, timeout=120, sparse_readings=sparse) as c:
        big = c.create_scene(two_pad_spec(f"big_{sparse}", E), quat_order="xyzw", dt=0.01)
        twin = c.create_scene(two_pad_spec(f"twin_{sparse}", E), quat_order="xyzw", dt=0.01)
        counter = Counting(c._raw["Step"])
        c._raw["Step"] = counter
        try:
            for t in range(2):
                p = poses(E, t)
                r = big.step(p, read=taxel.Read(sparse=sparse))
                calls = counter.calls
                parts = [twin.step(p[s:s + SLICE], env_ids=range(s, s + SLICE), read=taxel.Read(sparse=False))
                         for s in range(0, E, SLICE)]
                assert counter.calls - calls == E // SLICE
                assert r.step == t + 1
                np.testing.assert_array_equal(r.env_ids, np.arange(E))
                assert r["left"].force.shape == (E, G, G, 3)
                assert_same(r, parts)
                # The pressed probes read forces: the readings are not trivially zero.
                assert (np.abs(r["left"].force[..., 2]) > 0).sum() > E
            # 201 MB in parts of at most 0.9 × 64 MiB: 4 parts a step (the first call of the
            # second step's count is the twin's, so count the big scene's alone).
            assert counter.calls == 2 * (E // SLICE) + 2 * 4
        finally:
            c._raw["Step"] = counter.fn
        assert big.info().step == 2 and twin.info().step == 2 * (E // SLICE)
        # A read of every env is split the same way and equals the last step; so do small reads.
        whole = big.read()
        assert_same(whole, parts)
        assert_same(big.read(env_ids=range(1000, 1100)), parts, slice(1000, 1100))
        big.delete()
        twin.delete()


def test_a_request_over_the_servers_limit_is_split(fresh_server_1mib):
    """1000 envs × 31 moving links of float64 poses = 1.74 MB, over a server's 1 MiB limit: the
    first request is refused by the transport, the client learns the server's limit and splits.
    Probe on link l0 at its origin, R = 2 mm; ball (r = 5 mm) centred 5 + k mm above it, k = e % 3:
    depth = R − k mm = 2, 1, 0 mm."""
    n, links = 1000, 30
    spec = taxel.SceneSpec("many_links", num_envs=n)
    robot = spec.robot("bot")
    for i in range(links):
        robot.link(f"l{i}")
    spec.object("ball", shapes=[taxel.Sphere(0.005)])
    spec.add_sensor(taxel.ContactDepthProbe("d", link="l0", probe_local_pos=[[0, 0, 0]], probe_radius=0.002))
    with taxel.Client(fresh_server_1mib.target, timeout=60) as c:
        scene = c.create_scene(spec, quat_order="xyzw", dt=0.01)
        p = np.zeros((n, links + 1, 7))
        p[:, :, 6] = 1
        p[:, :links, 0] = np.arange(links) * 0.1  # links apart: only l0 is near the ball
        k = np.arange(n) % 3
        p[:, links, 2] = 0.005 + 0.001 * k
        r = scene.step(p)
        assert r.step == 1 and scene.info().step == 1
        np.testing.assert_allclose(r["d"].depth[:, 0], 0.002 - 0.001 * k, atol=1e-7)


def test_a_mesh_over_the_limit_names_the_flags(fresh_server_1mib):
    """An upload of 1.2 MB (50,000 triangles, 25,000 float64 vertices) to a 1 MiB server is
    refused by gRPC itself; the error says which limits to raise."""
    rng = np.random.default_rng(0)
    v = rng.normal(size=(25000, 3))
    t = rng.integers(0, 25000, size=(50000, 3)).astype(np.int32)
    with taxel.Client(fresh_server_1mib.target, timeout=60) as c:
        with pytest.raises(taxel.ResourceExhaustedError) as e:
            c.upload_mesh(v, t)
    assert "larger than max" in e.value.message
    assert "the server's --max_message_bytes and the client's max_message_bytes" in e.value.message


@pytest.fixture
def fresh_server_1mib():
    s = ServerProcess(server_binary(), extra_args=["--max_message_bytes=1048576"]).start()
    yield s
    s.stop()
