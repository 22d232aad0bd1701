"""Client and Scene against a real server: lifecycle, steps (dtypes, flat poses, env subsets,
twists, quaternion orders), reads, resets, sensors, zero-copy outputs. Geometry and expected
values: conftest.py."""
import math

import numpy as np
import pytest

import taxel
from conftest import (BALL_R, BALL_Z, D_CENTRE, D_CORNER, EXPECTED_DEPTH, FAR_Z, PITCH, PROBE_R, grid_3x3,
                      pad_and_ball_spec, poses_xyzw)
from test_mesh import CUBE_T, CUBE_V

# Envs of the lifecycle step: 0 presses the grid's centre, 1 is out of reach, 2 presses one pitch
# further along +x (its expected depths are the grid's shifted by one column).
CENTRES = [(0, 0, BALL_Z), (0, 0, FAR_Z), (PITCH, 0, BALL_Z)]


def expected_depth_env2():
    # Ball over probe (1, 2) (x = +1 cm): column 2 is the centre column, column 1 the edge one;
    # column 0 is 2 cm away: |o − c| = √(0.02² + 0.049²) = 0.052924 > r + R, so 0.
    e = np.zeros((3, 3))
    e[:, 1:] = EXPECTED_DEPTH[:, :2]
    return e


def root_base(a):
    while isinstance(a, np.ndarray):
        a = a.base
    return a


def test_server_info(client):
    info = client.server_info()
    assert info.version and info.grpc_version
    assert info.limits.max_message_bytes == 64 << 20  # the server's default
    assert info.threads == 2  # --threads=2 in conftest
    assert "step_stream" in info.capabilities and "sensor:kinematic_taxel" in info.capabilities
    assert info.proto.limits.max_scenes == info.limits.max_scenes
    assert info.limits.max_grid_build_queries == 30_000_000  # --max_grid_build_queries' default


def test_create_get_list_delete(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name))
    assert isinstance(scene, taxel.Scene) and scene.name == scene_name and scene.num_envs == 3
    info = scene.info()
    assert [(l.name, l.index, l.entity, l.kind, l.moving_index) for l in info.links] == [
        ("hand/pad", 0, "hand", "robot", 0), ("ball/body", 1, "ball", "object", 1)]
    assert info.moving_links == ("hand/pad", "ball/body") == scene.moving_links
    assert (info.seed, info.step) == (1, 0) and info.memory_bytes > 0
    assert list(info.sensors) == ["skin", "depth", "touch"]
    skin = info.sensors["skin"]
    assert (skin.kind, skin.link, skin.num_probes, skin.layout) == ("kinematic_taxel", "hand/pad", 9, (3, 3))
    assert {c: (o.dtype, o.shape) for c, o in skin.outputs.items()} == {
        "force": (np.float32, (3, 3, 3, 3)), "torque": (np.float32, (3, 3, 3, 3))}
    assert {c: (o.dtype, o.shape) for c, o in info.sensors["depth"].outputs.items()} == {
        "depth": (np.float32, (3, 3, 3)), "normal": (np.float32, (3, 3, 3, 3)), "area": (np.float32, (3, 3, 3)),
        "partner": (np.int32, (3, 3, 3))}
    assert info.sensors["touch"].outputs["contact"].dtype == np.bool_
    assert info.link("pad").index == 0 and info.link(1).name == "ball/body" and info.link("nope") is None

    again = client.scene(scene_name)
    assert again.last_info.moving_links == info.moving_links
    assert scene_name in [s.name for s in client.list_scenes()]
    with pytest.raises(taxel.AlreadyExistsError, match="already exists"):
        client.create_scene(pad_and_ball_spec(scene_name))
    replaced = client.create_scene(pad_and_ball_spec(scene_name, num_envs=2), replace=True)
    assert replaced.num_envs == 2
    client.delete_scene(scene_name)
    assert scene_name not in [s.name for s in client.list_scenes()]
    with pytest.raises(taxel.NotFoundError):
        client.scene(scene_name)


def test_create_scene_from_a_proto_spec(client, scene_name):
    proto = pad_and_ball_spec(scene_name, num_envs=1).to_proto()
    scene = client.create_scene(proto)
    assert scene.num_envs == 1 and list(scene.last_info.sensors) == ["skin", "depth", "touch"]
    scene.delete()
    with pytest.raises(taxel.NotFoundError):
        scene.info()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_step_readings_match_the_closed_forms(client, scene_name, dtype):
    scene = client.create_scene(pad_and_ball_spec(scene_name, normal_stiffness=2000))
    r = scene.step(poses_xyzw(CENTRES, dtype=dtype), dt=0.01, quat_order="xyzw",
                   read=taxel.Read(ground_truth=True))
    assert r.step == 1 and list(r.env_ids) == [0, 1, 2] and r.env_ids.dtype == np.int32
    assert r.timing.evaluate_us >= 0 and r.timing.total_us >= r.timing.evaluate_us
    assert set(r) == {"skin", "depth", "touch"}
    tol = 1e-6 if dtype == np.float32 else 1e-7  # float32 outputs; float32 inputs shift c by ~1e-9 m

    depth = r["depth"]
    assert depth.depth.dtype == np.float32 and depth.depth.shape == (3, 3, 3)
    np.testing.assert_allclose(depth.depth[0], EXPECTED_DEPTH, atol=tol)
    np.testing.assert_array_equal(depth.depth[1], np.zeros((3, 3)))
    np.testing.assert_allclose(depth.depth[2], expected_depth_env2(), atol=tol)
    # Normal out of the ball at the centre probe: (o − c)/|o − c| = (0, 0, −1).
    np.testing.assert_allclose(depth.normal[0, 1, 1], (0, 0, -1), atol=1e-6)
    # Corner probe (i, j) = (2, 2) at (1, 1, 0) cm: n = (0.01, 0.01, −0.049)/0.051.
    np.testing.assert_allclose(depth.normal[0, 2, 2], np.array([0.01, 0.01, -0.049]) / 0.051, atol=1e-6)
    # Spherical cap area π(2Rd − d²) at d = 3 mm, R = 2 mm: π(1.2e-5 − 9e-6) = 3π·1e-6 m².
    assert depth.area[0, 1, 1] == pytest.approx(3 * math.pi * 1e-6, rel=1e-5)
    assert depth.partner.dtype == np.int32
    assert depth.partner[0, 1, 1] == 1 and depth.partner[1, 1, 1] == -1  # ball/body is link 1; none
    # No imperfections configured: the measured branch equals the ground truth.
    np.testing.assert_array_equal(depth.ground_truth.depth, depth.depth)

    # KinematicTaxel on the first step: no velocity, F = k_n·depth·n (k_n = 2000).
    skin = r["skin"]
    assert skin.force.shape == (3, 3, 3, 3) and skin.torque.dtype == np.float32
    np.testing.assert_allclose(skin.force[0, 1, 1], (0, 0, -2000 * D_CENTRE), atol=1e-4)  # (0, 0, −6 N)
    f_corner = 2000 * D_CORNER * np.array([0.01, 0.01, -0.049]) / 0.051
    np.testing.assert_allclose(skin.force[0, 2, 2], f_corner, atol=1e-4)
    # T = p × F with p = (0.01, 0.01, 0): (p_y·F_z, −p_x·F_z, p_x·F_y − p_y·F_x) = (0.01·F_z, −0.01·F_z, 0).
    np.testing.assert_allclose(skin.torque[0, 2, 2], (0.01 * f_corner[2], -0.01 * f_corner[2], 0), atol=1e-6)
    np.testing.assert_array_equal(skin.torque[0, 1, 1], np.zeros(3))  # p = 0 at the centre
    np.testing.assert_array_equal(skin.force[1], np.zeros((3, 3, 3)))

    # ContactProbe: on where depth >= 1e-4 m (every probe of env 0; column 0 of env 2 is off).
    touch = r["touch"]
    assert touch.contact.dtype == np.bool_ and touch.contact.shape == (3, 3, 3)
    assert touch.contact[0].all() and not touch.contact[1].any()
    np.testing.assert_array_equal(touch.contact[2], [[False, True, True]] * 3)


def test_outputs_are_read_only_and_dense_ones_zero_copy_views(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    # The default (sparse readings, expanded): read-only arrays of their own.
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    for sensor in r.values():
        for channel, a in sensor.measured.items():
            assert not a.flags.writeable, channel
    # Dense readings: views into the received bytes.
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw", read=taxel.Read(sparse=False))
    for sensor in r.values():
        for channel, a in sensor.measured.items():
            assert not a.flags.writeable, channel
            # A view into a bytes object: the response gRPC received (or, for a tensor whose bytes sit
            # misaligned in it, that tensor's own aligned copy; see taxel/_wire.py).
            base = root_base(a)
            assert isinstance(base, bytes)
            start = np.frombuffer(base, np.uint8).ctypes.data
            assert start <= a.ctypes.data and a.ctypes.data + a.nbytes <= start + len(base)
    with pytest.raises(ValueError, match="read-only"):
        r["skin"].force[0, 0, 0, 0] = 1.0
    copy = r["skin"].force.copy()
    copy[0, 0, 0, 0] = 1.0  # a copy is writable


def test_flat_poses_equal_nested_poses(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name))
    nested = poses_xyzw(CENTRES)
    r_flat = scene.step(nested.reshape(6, 7), dt=0.01, quat_order="xyzw")
    np.testing.assert_allclose(r_flat["depth"].depth[0], EXPECTED_DEPTH, atol=1e-7)
    scene.reset()
    r_nested = scene.step(nested, dt=0.01, quat_order="xyzw")
    for sensor in ("skin", "depth", "touch"):
        for channel in r_nested[sensor]:
            np.testing.assert_array_equal(r_flat[sensor][channel], r_nested[sensor][channel])


def test_env_subsets_follow_the_order_asked(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name))
    # Step envs 2 and 0 only (in that order): env 2 gets the pressing pose, env 0 the far one.
    r = scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, FAR_Z)]), env_ids=np.array([2, 0]), dt=0.01,
                   quat_order="xyzw")
    assert list(r.env_ids) == [2, 0] and r["depth"].depth.shape == (2, 3, 3)
    np.testing.assert_allclose(r["depth"].depth[0], EXPECTED_DEPTH, atol=1e-7)
    np.testing.assert_array_equal(r["depth"].depth[1], np.zeros((3, 3)))
    # A read of [0, 2] returns the same envs the other way round; env 1 never stepped: zeros.
    read = scene.read(env_ids=[0, 2, 1], sensors=["depth"], channels=["depth"])
    assert list(read.env_ids) == [0, 2, 1] and list(read) == ["depth"] and list(read["depth"]) == ["depth"]
    np.testing.assert_array_equal(read["depth"].depth[0], np.zeros((3, 3)))
    np.testing.assert_allclose(read["depth"].depth[1], EXPECTED_DEPTH, atol=1e-7)
    np.testing.assert_array_equal(read["depth"].depth[2], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="env_ids: empty"):
        scene.step(np.zeros((0, 2, 7)), env_ids=[], dt=0.01, quat_order="xyzw")


def test_quaternion_orders(client, scene_name):
    # The pad turned 90° about +z: its local probe (i, j) = (1, 2) at x_L = +1 cm sits at world
    # (0, +1 cm, 0). A ball centred at (0, 0.01, BALL_Z) presses that probe by 3 mm.
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    s = math.sqrt(0.5)
    xyzw = np.array([[[0, 0, 0, 0, 0, s, s], [0, PITCH, BALL_Z, 0, 0, 0, 1]]])
    r = scene.step(xyzw, dt=0.01, quat_order="xyzw")
    assert r["depth"].depth[0, 1, 2] == pytest.approx(D_CENTRE, abs=1e-7)
    scene.reset()
    wxyz = np.array([[[0, 0, 0, s, 0, 0, s], [0, PITCH, BALL_Z, 1, 0, 0, 0]]])
    r = scene.step(wxyz, dt=0.01, quat_order=taxel.WXYZ)
    assert r["depth"].depth[0, 1, 2] == pytest.approx(D_CENTRE, abs=1e-7)
    # The normal is in the pad's frame: world (0, 0, −1) stays (0, 0, −1) under a turn about z.
    np.testing.assert_allclose(r["depth"].normal[0, 1, 2], (0, 0, -1), atol=1e-6)


def test_twists_drive_the_damping_terms(client, scene_name):
    # k_n = 1000, c_n = 10, k_t = 2. Ball at the pressing pose, moving at v = (0.1, 0, −0.1) m/s;
    # the pad at rest. At the centre probe n = (0, 0, −1), depth d = 3 mm (p = 1, s = d):
    #   v_n = v·n = 0.1 (approaching), v_t = v − v_n·n = (0.1, 0, 0)
    #   F = k_n·s·n + c_n·s·v_n·n − k_t·v_t = (−0.2, 0, −(3 + 10·0.003·0.1)) = (−0.2, 0, −3.003) N
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1, normal_damping=10, shear_damping=2))
    twists = np.zeros((1, 2, 6))
    twists[0, 1, :3] = (0.1, 0, -0.1)
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), twists=twists, dt=0.01, quat_order="xyzw")
    np.testing.assert_allclose(r["skin"].force[0, 1, 1], (-0.2, 0, -3.003), atol=1e-5)


def test_scene_defaults_for_quat_order_and_dt(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1), quat_order="xyzw", dt=0.01)
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]))
    assert r["depth"].depth[0, 1, 1] == pytest.approx(D_CENTRE, abs=1e-7)


def test_read_branches_and_none(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw", read=False)
    assert r.step == 1 and len(r) == 0
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw",
                   read={"sensors": ["skin"], "channels": ["force"], "measured": False, "ground_truth": True})
    assert list(r) == ["skin"] and r["skin"].measured is None
    assert list(r["skin"].ground_truth) == ["force"]
    with pytest.raises(AttributeError, match="measured branch was not requested"):
        r["skin"].force
    read = scene.read(ground_truth=True)
    assert read.step == 2 and read.timing is None
    np.testing.assert_array_equal(read["depth"].depth, read["depth"].ground_truth.depth)
    with pytest.raises(AttributeError, match="no channel 'force'.*depth"):
        read["depth"].force
    with pytest.raises(KeyError, match="no readings of sensor 'nope'"):
        read["nope"]


def test_reset_clears_the_envs_asked(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))
    scene.step(poses_xyzw([(0, 0, BALL_Z)] * 2), dt=0.01, quat_order="xyzw")
    scene.reset([], )  # nothing to reset: no call, nothing changes
    assert scene.read()["depth"].depth[:, 1, 1] == pytest.approx([D_CENTRE] * 2, abs=1e-7)
    scene.reset(np.array([1]))
    after = scene.read()["depth"].depth
    assert after[0, 1, 1] == pytest.approx(D_CENTRE, abs=1e-7) and after[1, 1, 1] == 0
    scene.reset()
    assert not scene.read()["depth"].depth.any()


def test_add_and_remove_sensors(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    info = scene.add_sensor(taxel.ContactDepthProbe("tip", link="pad", probe_local_pos=[[0, 0, 0], [0.05, 0, 0]],
                                                    probe_radius=PROBE_R))
    assert (info.name, info.kind, info.layout, info.num_probes) == ("tip", "contact_depth_probe", (2,), 2)
    assert info.outputs["depth"].shape == (1, 2)
    assert [s.name for s in client.kept_spec(scene_name).sensors] == ["skin", "depth", "touch", "tip"]
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw", read=taxel.Read(sensors=["tip"]))
    # Probe 1 at x = 5 cm: |o − c| = √(0.05² + 0.049²) = 0.07001 > r + R: 0.
    np.testing.assert_allclose(r["tip"].depth[0], (D_CENTRE, 0), atol=1e-7)
    scene.remove_sensor("tip")
    assert "tip" not in scene.info().sensors
    assert [s.name for s in client.kept_spec(scene_name).sensors] == ["skin", "depth", "touch"]
    with pytest.raises(taxel.NotFoundError, match="no sensor named 'tip'"):
        scene.remove_sensor("tip")


def test_inline_mesh_is_uploaded_by_create_scene(client, scene_name):
    # The 10 cm cube centred at (0, 0, 0.049): its bottom face is 1 mm below every probe of the
    # grid, so each reads R + 1 mm = 3 mm (the face spans ±5 cm, the grid ±1 cm).
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1,
                                                  ball_shape=taxel.Mesh(vertices=CUBE_V, triangles=CUBE_T)))
    assert taxel.mesh_content_id(CUBE_V, CUBE_T) in client.known_meshes()
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    np.testing.assert_allclose(r["depth"].depth[0], np.full((3, 3), PROBE_R + 0.001), atol=1e-7)


def test_contact_matrix_without_one_is_a_clear_error(client, scene_name):
    # The scene selects no contact-matrix bodies: FAILED_PRECONDITION, saying how to get one.
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    with pytest.raises(taxel.FailedPreconditionError) as e:
        scene.contact_matrix(env_ids=[0], friction=True)
    assert "this scene has no contact matrix" in e.value.message and "contact_matrix.bodies" in e.value.message


def test_client_context_manager_and_token_metadata(server):
    # A server without --auth_tokens_file ignores the authorization header.
    with taxel.Client(server.target, token="secret", timeout=5) as c:
        assert c.server_info().version
        assert repr(c) == f"Client('{server.target}')"


def test_grid_sensor_from_grid_points_on_plane(client, scene_name):
    # The hand-made 3×3 grid equals grid_points_on_plane((−1, −1, 0) cm, (1, 1, 0) cm, +z, 3, 3).
    grid = taxel.grid_points_on_plane((-PITCH, -PITCH, 0), (PITCH, PITCH, 0), (0, 0, 1), 3, 3)
    np.testing.assert_allclose(grid, grid_3x3(), atol=1e-17)
    spec = taxel.SceneSpec(scene_name, num_envs=1)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    spec.add_sensor(taxel.ContactDepthProbe("g", link="pad", probe_local_pos=grid.astype(np.float32),
                                            probe_radius=PROBE_R))
    r = client.create_scene(spec).step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    np.testing.assert_allclose(r["g"].depth[0], EXPECTED_DEPTH, atol=1e-6)


def test_bearer_tokens_select_the_tenant(tmp_path):
    # --auth_tokens_file lines are "token tenant": tokens a and b belong to two tenants.
    from conftest import ServerProcess, server_binary
    tokens = tmp_path / "tokens"
    tokens.write_text("token-a alice\ntoken-b bob\n")
    srv = ServerProcess(server_binary(), [f"--auth_tokens_file={tokens}"]).start()
    try:
        with taxel.Client(srv.target, timeout=10) as anonymous:
            with pytest.raises(taxel.UnauthenticatedError, match="authorization"):
                anonymous.list_scenes()
        with taxel.Client(srv.target, token="token-a") as alice, taxel.Client(srv.target, token="token-b") as bob:
            alice.create_scene(pad_and_ball_spec("mine", num_envs=1))
            assert [s.name for s in alice.list_scenes()] == ["mine"]
            assert bob.list_scenes() == []
            with pytest.raises(taxel.NotFoundError):
                bob.scene("mine")
    finally:
        srv.stop()
