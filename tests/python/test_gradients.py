"""Read(gradients=True): the gradient arrays' shapes and values against the pad-and-ball closed
form, the refusals, and the README's gradient-descent example run as written. Geometry:
conftest.py (pad at the origin, identity rotation: link frame = world)."""
import os
import re

import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, PROBE_R, grid_3x3, pad_and_ball_spec, poses_xyzw
from test_mesh import CountingCall as Counting

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_gradient_arrays_have_the_documented_shapes(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))
    r = scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, 1.0)]), dt=0.01, quat_order="xyzw",
                   read=taxel.Read(gradients=True))
    assert r["depth"].gradient.shape == (2, 3, 3, 2, 6)
    assert r["touch"].gradient.shape == (2, 3, 3, 2, 6)
    assert r["skin"].gradient.shape == (2, 3, 3, 3, 2, 6)
    assert r["skin"].gradient.dtype == np.float32
    assert r["depth"]["depth_gradient"] is r["depth"].gradient or \
        np.array_equal(r["depth"]["depth_gradient"], r["depth"].gradient)
    # Env 1: the ball is out of reach, every gradient is 0.
    assert not r["depth"].gradient[1].any() and not r["skin"].gradient[1].any()
    # Without the flag: no gradient.
    r = scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, 1.0)]), dt=0.01, quat_order="xyzw")
    with pytest.raises(AttributeError, match="no gradient was read"):
        r["depth"].gradient


def test_depth_gradient_matches_the_ball_closed_form(client, scene_name):
    # Probe o, ball centre c, u = (o − c)/|o − c|: ∂d/∂t_pad = −u, ∂d/∂θ_pad = −(o − 0) × u,
    # ∂d/∂t_ball = u, ∂d/∂θ_ball = (o − c) × u = 0.
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    c = np.array([0.002, -0.001, BALL_Z])
    r = scene.step(poses_xyzw([c]), dt=0.01, quat_order="xyzw", read=taxel.Read(gradients=True))
    g = r["depth"].gradient[0]
    grid = grid_3x3()
    touching = 0
    for i in range(3):
        for j in range(3):
            o = grid[i, j]
            if r["depth"].depth[0, i, j] == 0:
                assert not g[i, j].any()
                continue
            touching += 1
            u = (o - c) / np.linalg.norm(o - c)
            np.testing.assert_allclose(g[i, j, 0, :3], -u, atol=1e-6)
            np.testing.assert_allclose(g[i, j, 0, 3:], -np.cross(o, u), atol=1e-7)
            np.testing.assert_allclose(g[i, j, 1, :3], u, atol=1e-6)
            np.testing.assert_allclose(g[i, j, 1, 3:], 0, atol=1e-7)
    assert touching == 9


def test_refusals_name_the_rule(client, scene_name):
    spec = pad_and_ball_spec(scene_name, num_envs=1)
    spec.add_sensor(taxel.ElastomerTaxel("gel", link="pad", probe_local_pos=grid_3x3(), probe_radius=0.001,
                                         probe_local_normal=(0, 0, 1), track_links=["ball"], n_sample_points=50))
    scene = client.create_scene(spec)
    poses = poses_xyzw([(0, 0, BALL_Z)])
    with pytest.raises(taxel.InvalidArgumentError, match=r"sensor 'gel' \(elastomer_taxel\) has no gradients"):
        scene.step(poses, dt=0.01, quat_order="xyzw", read=taxel.Read(gradients=True))
    r = scene.step(poses, dt=0.01, quat_order="xyzw", read=taxel.Read(sensors=["depth"], gradients=True))
    assert r["depth"].gradient.shape == (1, 3, 3, 2, 6)


def readme_block() -> str:
    """The README's gradient example: the first ```python block after '### Gradients'."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### Gradients"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_gradient_descent_step_reaches_the_target_depth(server):
    code = readme_block()
    assert code.count('"127.0.0.1:50051"') == 1
    ns = {}
    exec(compile(code.replace('"127.0.0.1:50051"', repr(server.target)), "README gradients", "exec"), ns)
    try:
        # Before the step: the tip at o = (0.01, 0, 0.03), 1.6 mm outside the ball (r = 3 cm):
        # depth = 0.002 − (|o| − 0.03), and g = −o/|o| (moving the tip outwards lowers the depth).
        o = np.array([0.01, 0, 0.03])
        assert ns["depth"] == pytest.approx(0.002 - (np.linalg.norm(o) - 0.03), abs=1e-9)
        np.testing.assert_allclose(ns["g"], -o / np.linalg.norm(o), atol=1e-6)
        # The step moved the tip along the ball's normal, where the depth is linear: on target.
        assert ns["r"]["tip"].depth[0, 0] == pytest.approx(ns["target"], abs=1e-8)
    finally:
        ns["client"].delete_scene("fingertip")
        ns["client"].close()


@pytest.fixture
def server_1mib():
    from conftest import ServerProcess, server_binary
    s = ServerProcess(server_binary(), extra_args=["--max_message_bytes=1048576"]).start()
    yield s
    s.stop()


def test_a_step_whose_gradients_exceed_the_limit_is_split_and_joined(server_1mib):
    """3000 envs of the 3×3 depth probe: 9 × 48 B of gradient per env on top of the readings,
    about 2 MB dense, over the server's 1 MiB: the client splits the step by envs and joins the
    gradient arrays like any channel. The ball sits over a different probe column per env, so
    every env's gradient differs; each is checked against the closed form ∂d/∂t_ball = u."""
    n = 3000
    spec = taxel.SceneSpec("split_gradients", num_envs=n)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    spec.add_sensor(taxel.ContactDepthProbe("depth", link="pad", probe_local_pos=grid_3x3(), probe_radius=PROBE_R))
    c_x = 0.004 * ((np.arange(n) % 5) - 2)  # ball centre x per env: −8 mm … 8 mm
    centres = np.stack([c_x, np.zeros(n), np.full(n, BALL_Z)], axis=1)
    with taxel.Client(server_1mib.target, timeout=60, max_message_bytes=1 << 20) as c:
        scene = c.create_scene(spec, quat_order="xyzw", dt=0.01)
        counter = Counting(c._raw["Step"])
        c._raw["Step"] = counter
        r = scene.step(poses_xyzw(centres), read=taxel.Read(gradients=True, sparse=False))
        assert counter.calls >= 2  # split
        assert r.step == 1
        g = r["depth"].gradient
        assert g.shape == (n, 3, 3, 2, 6)
        o = grid_3x3()[None]                                   # [1, 3, 3, 3]
        d = o - centres[:, None, None, :]                      # [n, 3, 3, 3]
        u = d / np.linalg.norm(d, axis=-1, keepdims=True)
        touching = r["depth"].depth > 0
        assert touching.sum() > 5 * n
        np.testing.assert_allclose(g[..., 1, :3][touching], u[touching], atol=1e-6)
        np.testing.assert_array_equal(g[~touching], 0)
