"""The simulator adapters of examples/python/taxel_adapters and the scripted-grasp example, against
the real server. Each adapter is fed synthetic arrays shaped like the simulator's own buffers; its
readings must equal those of a direct `scene.step` with the equivalent [E, L, 7] poses on an
identical scene (bit for bit: same inputs, same server, same evaluation).

Scene (conftest's pad and ball, with a second pad): robot "hand" with links "left_pad" and
"right_pad", each carrying a 3×3 KinematicTaxel grid ("left", "right"), object "ball". Moving links:
hand/left_pad, hand/right_pad, ball/body. Per env the left pad and the ball are placed as in
conftest (ball 1 mm into the pad's probe plane), then the whole env is turned by a rotation R_e:

    env 0: identity    env 1: 0.7 rad about (1, 2, 3)/√14    env 2: π/2 about +y

so the left pad reads conftest's depths in its own frame in every env, but only if the quaternions
reach the server in the right order. The right pad sits 0.3 m away (reads 0).
"""
import io
import math
import pathlib
import sys

import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, EXPECTED_DEPTH, PROBE_R, grid_3x3

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))
from taxel_adapters.isaaclab import IsaacLabAdapter  # noqa: E402
from taxel_adapters.newton import NewtonAdapter  # noqa: E402

AXES_ANGLES = [((1.0, 0.0, 0.0), 0.0), ((1.0, 2.0, 3.0), 0.7), ((0.0, 1.0, 0.0), math.pi / 2)]


def rotation(axis, angle):
    """(R, q_wxyz): rotation matrix (Rodrigues) and unit quaternion (w, x, y, z)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    R = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
    return R, np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a])


def world_poses_wxyz():
    """[3 envs, 3 links, 7] poses (left pad, right pad, ball) in wxyz order, built by hand."""
    out = np.zeros((3, 3, 7))
    for e, (axis, angle) in enumerate(AXES_ANGLES):
        R, q = rotation(axis, angle)
        out[e, 0, :3], out[e, 0, 3:] = 0.0, q                          # left pad at the origin, turned
        out[e, 1, :3], out[e, 1, 3:] = (0.3, 0.0, 0.0), (1, 0, 0, 0)     # right pad away
        out[e, 2, :3], out[e, 2, 3:] = R @ (0, 0, BALL_Z), q            # ball above the pad, turned
    return out


def expected_left_force():
    """[3, 3, 3] KinematicTaxel force of the left pad at rest, link frame: F = k_n·depth·n with
    k_n = 1000 N/m, the depths of conftest and n the unit vector from the ball's centre
    c = (0, 0, BALL_Z) to the probe o (out of the partner, into the sensor)."""
    o = grid_3x3()
    n = o - np.array([0.0, 0.0, BALL_Z])
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return 1000 * EXPECTED_DEPTH[..., None] * n


def to_xyzw(wxyz):
    return np.concatenate([wxyz[..., :3], wxyz[..., 4:], wxyz[..., 3:4]], axis=-1)


def two_pad_spec(name):
    spec = taxel.SceneSpec(name, num_envs=3, seed=2)
    hand = spec.robot("hand")
    hand.link("left_pad")
    hand.link("right_pad")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    for side in ("left", "right"):
        spec.add_sensor(taxel.KinematicTaxel(side, link=f"{side}_pad", probe_local_pos=grid_3x3(),
                                             probe_radius=PROBE_R))
    return spec


@pytest.fixture
def scenes(client, scene_name):
    """(scene stepped by the adapter, identical scene stepped directly)."""
    a = client.create_scene(two_pad_spec(scene_name))
    b = client.create_scene(two_pad_spec(scene_name + "_direct"))
    yield a, b
    b.delete()


def assert_same_readings(r, direct):
    assert list(r.env_ids) == list(direct.env_ids) and set(r) == set(direct)
    for sensor in r:
        for channel in r[sensor]:
            np.testing.assert_array_equal(r[sensor][channel], direct[sensor][channel], err_msg=f"{sensor}.{channel}")


class FakeTorchTensor:
    """Duck-types a CUDA torch tensor: numpy only after .detach().cpu()."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def detach(self):
        return self

    def cpu(self):
        return self._a


class FakeWarpArray:
    """Duck-types a warp array on a GPU: numpy only through .numpy()."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def numpy(self):
        return self._a


# -------------------------------------------------------------------------------------------------
# Isaac Lab


def isaaclab_buffers(order="wxyz"):
    """An articulation with bodies ["base", "right_pad", "wrist", "left_pad"] (another order than
    the scene's, and bodies the scene does not have): body_link_pose_w [3, 4, 7] and the ball's
    root_link_pose_w [3, 7], with velocities [3, 4, 6] / [3, 6]."""
    direct = world_poses_wxyz() if order == "wxyz" else to_xyzw(world_poses_wxyz())
    rng = np.random.default_rng(5)
    pose_w = rng.normal(size=(3, 4, 7))  # base and wrist: junk the adapter must not pick
    pose_w[:, 1], pose_w[:, 3] = direct[:, 1], direct[:, 0]
    vel_w = rng.normal(scale=0.01, size=(3, 4, 6))
    ball_vel = rng.normal(scale=0.01, size=(3, 6))
    direct_twists = np.stack([vel_w[:, 3], vel_w[:, 1], ball_vel], axis=1)
    return ["base", "right_pad", "wrist", "left_pad"], pose_w, direct[:, 2].copy(), vel_w, ball_vel, direct, \
        direct_twists


def test_isaaclab_adapter_matches_a_direct_step(scenes):
    scene, direct_scene = scenes
    names, pose_w, ball_pose, vel_w, ball_vel, direct, direct_twists = isaaclab_buffers("wxyz")
    adapter = IsaacLabAdapter(scene, names)  # Isaac Lab 2.x: wxyz by default
    assert adapter.quat_order == "wxyz" and list(adapter.body_index) == [3, 1, -1]
    assert adapter.extra_links == ["ball/body"]
    np.testing.assert_array_equal(adapter.poses(pose_w, extra={"ball": ball_pose}), direct)
    r = adapter.step(FakeTorchTensor(pose_w), dt=0.01, body_link_vel_w=FakeTorchTensor(vel_w),
                     extra={"ball/body": FakeTorchTensor(ball_pose)}, extra_vel={"ball": ball_vel})
    d = direct_scene.step(direct, twists=direct_twists, dt=0.01, quat_order="wxyz")
    assert_same_readings(r, d)
    # And the readings are the right ones: at rest, in every env, the left pad feels the ball as
    # in conftest, in its own frame (see expected_left_force).
    r0 = adapter.step(pose_w, dt=0.01, body_link_vel_w=np.zeros_like(vel_w), extra={"ball": ball_pose},
                      extra_vel={"ball": np.zeros_like(ball_vel)})
    np.testing.assert_allclose(r0["left"].force, np.broadcast_to(expected_left_force(), (3, 3, 3, 3)), atol=2e-5)
    np.testing.assert_array_equal(r0["right"].force, 0)


def test_isaaclab_3_xyzw_env_subsets_and_a_stream(scenes):
    scene, direct_scene = scenes
    names, pose_w, ball_pose, _, _, direct, _ = isaaclab_buffers("xyzw")
    adapter = IsaacLabAdapter(scene, names, quat_order="xyzw")  # Isaac Lab >= 3.0
    pose32 = pose_w.astype(np.float32)
    with scene.stream() as s:
        r = adapter.step(pose32, dt=0.01, extra={"ball": ball_pose.astype(np.float32)}, env_ids=[2, 0], stream=s)
    d = direct_scene.step(direct[[2, 0]].astype(np.float32), dt=0.01, env_ids=[2, 0], quat_order="xyzw")
    assert list(r.env_ids) == [2, 0]
    assert_same_readings(r, d)


def test_isaaclab_adapter_errors(scenes):
    scene, _ = scenes
    names, pose_w, ball_pose, *_ = isaaclab_buffers()
    adapter = IsaacLabAdapter(scene, names)
    with pytest.raises(ValueError, match="moving link 'ball/body' is not a body of the articulation"):
        adapter.poses(pose_w)
    with pytest.raises(ValueError, match="expected shape \\[num_envs, 4, 7\\], got \\[3, 3, 7\\]"):
        adapter.poses(pose_w[:, :3], extra={"ball": ball_pose})
    with pytest.raises(ValueError, match="extra\\['ball/body'\\]: expected shape \\[3, 7\\]"):
        adapter.poses(pose_w, extra={"ball": ball_pose[:2]})
    with pytest.raises(ValueError, match="appears twice"):
        IsaacLabAdapter(scene, ["left_pad", "left_pad"])
    with pytest.raises(ValueError, match="link_map: body 'finger' .* is not in body_names"):
        IsaacLabAdapter(scene, names, link_map={"left_pad": "finger"})


# -------------------------------------------------------------------------------------------------
# Newton


def test_newton_adapter_with_body_world_and_a_global_body(scenes):
    scene, direct_scene = scenes
    direct = to_xyzw(world_poses_wxyz())
    # model.body_key / body_world of one replicated builder plus a global ground body (world −1):
    # per world "base", "left_pad", "right_pad", "ball".
    keys = ["ground"] + ["base", "left_pad", "right_pad", "ball"] * 3
    world = np.array([-1] + [0] * 4 + [1] * 4 + [2] * 4, np.int32)
    body_q = np.zeros((13, 7), np.float32)
    body_q[:, 6] = 1.0
    for e in range(3):
        body_q[1 + 4 * e + 1: 1 + 4 * e + 4] = direct[e]  # left_pad, right_pad, ball
    adapter = NewtonAdapter(scene, keys, body_world=FakeWarpArray(world), link_map={"ball/body": "ball"})
    np.testing.assert_array_equal(adapter.body_index, [[2, 3, 4], [6, 7, 8], [10, 11, 12]])
    np.testing.assert_array_equal(adapter.poses(FakeWarpArray(body_q)), direct.astype(np.float32))
    r = adapter.step(FakeWarpArray(body_q), dt=0.01)
    d = direct_scene.step(direct.astype(np.float32), dt=0.01, quat_order="xyzw")
    assert_same_readings(r, d)
    np.testing.assert_allclose(r["left"].force, np.broadcast_to(expected_left_force(), (3, 3, 3, 3)), atol=2e-5)


def test_newton_adapter_with_usd_paths_in_world_blocks(scenes):
    scene, direct_scene = scenes
    direct = to_xyzw(world_poses_wxyz())
    # No body_world: bodies world-major in equal blocks; keys are USD paths.
    keys = [f"/World/envs/env_{e}/{path}" for e in range(3) for path in ("Ball/body", "Hand/right_pad",
                                                                          "Hand/left_pad")]
    body_q = np.concatenate([direct[e, ::-1] for e in range(3)])  # ball, right, left per world
    adapter = NewtonAdapter(scene, keys)
    np.testing.assert_array_equal(adapter.body_index, [[2, 1, 0], [5, 4, 3], [8, 7, 6]])
    r = adapter.step(body_q, dt=0.01, env_ids=[1])
    d = direct_scene.step(direct[[1]], dt=0.01, env_ids=[1], quat_order="xyzw")
    assert_same_readings(r, d)


def test_newton_adapter_errors(scenes):
    scene, _ = scenes
    with pytest.raises(ValueError, match="world 1: expected exactly one body .* 'hand/left_pad', found none"):
        NewtonAdapter(scene, ["left_pad", "right_pad", "body", "x", "right_pad", "body", "left_pad", "right_pad",
                              "body"])
    with pytest.raises(ValueError, match="do not split into 3 equal worlds"):
        NewtonAdapter(scene, ["left_pad", "right_pad", "body"] * 2 + ["extra"])
    adapter = NewtonAdapter(scene, ["left_pad", "right_pad", "body"] * 3)
    with pytest.raises(ValueError, match="body_q: expected shape \\[body_count, 7\\]"):
        adapter.poses(np.zeros((9, 6)))


# -------------------------------------------------------------------------------------------------
# The scripted grasp example


def test_scripted_grasp_example_closes_on_the_object(server, capsys):
    import scripted_grasp
    assert scripted_grasp.main(["--target", server.target, "--steps", "12", "--envs", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("scene 'scripted_grasp': 2 envs")
    assert out[-1] == "envs gripping the object with both pads: 2/2"
    with taxel.Client(server.target) as c:
        summary = scripted_grasp.run(c, num_envs=2, steps=12, dt=0.01, out=io.StringIO())
        assert "scripted_grasp" not in [s.name for s in c.list_scenes()]  # it cleans up
    # The pads squeeze the ball symmetrically; the object pushes the left pad towards −x.
    assert summary["left"][0] == pytest.approx(summary["right"][0], rel=1e-5) and summary["left"][1] > 0
    assert summary["object_on_left"][0] < 0
