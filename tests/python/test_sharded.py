"""taxel.ShardedScene: one logical scene split over 3 real servers reads bit for bit what the same
scene reads on one server — measured branch with every imperfection on, ground truth, history and
the contact matrix — through steps of every env, steps with env_ids (in the caller's order) and
resets of some envs. Geometry: conftest.py (pad and ball)."""
import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, FAR_Z, PROBE_R, ServerProcess, grid_3x3, poses_xyzw, server_binary
from test_contact_matrix import AWAY, legs_spec, poses

NUM_ENVS = 10  # split_envs(10, 3): (0, 4), (4, 3), (7, 3)

# Every stage and timing option of the measured branch (ImperfectionOptions), each visible.
EVERY_IMPERFECTION = dict(probe_radius_noise=2e-4, probe_gain_resample_range=[0.8, 1.2], crosstalk_strength=0.3,
                          crosstalk_sigma=0.01, hysteresis_strength=0.2, hysteresis_tau=0.05, random_walk=1e-4,
                          noise=1e-4, bias=1e-5, resolution=1e-6, dead_taxel_probability=0.2,
                          dead_taxel_value_range=[-1.0, 1.0], delay=0.02, jitter=0.01, history_length=2)


@pytest.fixture(scope="module")
def more_servers():
    servers = [ServerProcess(server_binary()).start() for _ in range(2)]
    yield servers
    for s in servers:
        s.stop()


def spec(name: str) -> taxel.SceneSpec:
    s = taxel.SceneSpec(name, num_envs=NUM_ENVS, seed=7, contact_bodies=["pad"], contact_partners=["object/*"],
                        contact_friction=True)
    s.robot("hand").link("pad", shapes=[taxel.Box(half_extents=(0.03, 0.03, 0.005), pos=(0, 0, -0.005))])
    s.object("ball", shapes=[taxel.Sphere(BALL_R)])
    grid = grid_3x3()
    s.add_sensor(taxel.KinematicTaxel("skin", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                      imperfections=EVERY_IMPERFECTION))
    s.add_sensor(taxel.ContactDepthProbe("depth", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                         imperfections=dict(EVERY_IMPERFECTION, update_period=2)))
    return s


def ball_centres(envs, t):
    """The ball of global env e at step t: pressing 0.5..2 mm, a few mm off-centre, sliding between
    steps; out of reach when (e + t) % 5 == 4."""
    out = []
    for e in envs:
        press = 0.0005 + 0.0015 * ((7 * e + 3 * t) % 11) / 11.0
        z = FAR_Z if (e + t) % 5 == 4 else BALL_Z + 0.001 - press
        out.append((0.002 * ((e + t) % 5 - 2), 0.001 * ((2 * e + t) % 3 - 1), z))
    return out


def assert_same(a: taxel.StepResult, b: taxel.StepResult, when: str):
    np.testing.assert_array_equal(a.env_ids, b.env_ids, err_msg=when)
    assert sorted(a.sensors) == sorted(b.sensors), when
    for name in a.sensors:
        for branch in ("measured", "ground_truth"):
            ra, rb = getattr(a[name], branch), getattr(b[name], branch)
            assert (ra is None) == (rb is None), (when, name, branch)
            if ra is None:
                continue
            assert sorted(ra) == sorted(rb), (when, name, branch)
            for ch in ra:
                # Bit for bit: the same bytes, not merely close values.
                assert ra[ch].dtype == rb[ch].dtype and ra[ch].shape == rb[ch].shape, (when, name, ch)
                assert ra[ch].tobytes() == rb[ch].tobytes(), f"{when}: {name}.{branch}.{ch} differs"


def assert_same_matrix(a: taxel.ContactMatrix, b: taxel.ContactMatrix, when: str):
    np.testing.assert_array_equal(a.env_ids, b.env_ids, err_msg=when)
    assert (a.rows, a.columns) == (b.rows, b.columns), when
    assert a.normal.tobytes() == b.normal.tobytes(), f"{when}: normal differs"
    assert a.friction.tobytes() == b.friction.tobytes(), f"{when}: friction differs"


def test_split_envs_is_contiguous_and_as_equal_as_possible():
    # 10 = 4 + 3 + 3: the first 10 mod 3 = 1 shard takes one more.
    assert taxel.split_envs(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert taxel.split_envs(1024, 2) == [(0, 512), (512, 512)]
    assert taxel.split_envs(5, 5) == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]
    with pytest.raises(ValueError, match=r"num_shards: expected 1..num_envs \(2\) shards, got 3"):
        taxel.split_envs(2, 3)


def test_sharded_over_three_servers_reads_bit_for_bit_what_one_server_reads(client, server, more_servers,
                                                                          scene_name):
    whole = client.create_scene(spec(scene_name + "_whole"), quat_order="xyzw", dt=0.01)
    targets = [server.target] + [s.target for s in more_servers]
    sharded = taxel.ShardedScene.create(targets, spec(scene_name), quat_order="xyzw", dt=0.01)
    try:
        assert sharded.ranges == [(0, 4), (4, 3), (7, 3)] and sharded.num_envs == NUM_ENVS
        assert [s.last_info.num_envs for s in sharded.shards] == [4, 3, 3]
        both = taxel.Read(ground_truth=True, contact_matrix=True)
        # t: env_ids of the step (None = all); resets before steps 4 and 7.
        plan = [None, None, [8, 1, 5, 0, 9], None, None, [6, 2], None, [3, 7, 4], None]
        for t, envs in enumerate(plan):
            if t == 4:
                whole.reset([2, 5, 9])
                sharded.reset([2, 5, 9])
            if t == 7:
                whole.reset(np.array([0, 7, 6]))
                sharded.reset(np.array([0, 7, 6]))
            ids = list(range(NUM_ENVS)) if envs is None else envs
            poses = poses_xyzw(ball_centres(ids, t))
            a = whole.step(poses, env_ids=envs, read=both)
            b = sharded.step(poses, env_ids=envs, read=both)
            assert_same(a, b, f"step {t}")
            assert_same_matrix(a.contact_matrix, b.contact_matrix, f"step {t}")
            assert b.step == t + 1
            # Reads and contact-matrix reads of every env, and of a subset in a caller's order.
            for sel in (None, [9, 0, 4, 3]):
                assert_same(whole.read(sel, ground_truth=True), sharded.read(sel, ground_truth=True), f"read {t}")
                assert_same_matrix(whole.contact_matrix(sel, friction=True),
                                   sharded.contact_matrix(sel, friction=True), f"matrix {t}")
            assert_same(whole.read(history=2), sharded.read(history=2), f"history {t}")
        # The check can tell envs apart: env 0 of each shard (global 0, 4, 7) reads differently
        # with the same ball pose (the offset keys the noise).
        same = poses_xyzw([(0, 0, BALL_Z)] * NUM_ENVS)
        r = sharded.step(same, read=taxel.Read(sensors=["skin"]))
        f = r["skin"].force
        assert f[0].tobytes() != f[4].tobytes() and f[4].tobytes() != f[7].tobytes()
        assert_same(whole.step(same, read=taxel.Read(sensors=["skin"])), r, "same poses")
    finally:
        sharded.delete()
        sharded.close()
        whole.delete()


def test_sharded_stream_matches_the_unary_steps(client, server, more_servers, scene_name):
    whole = client.create_scene(spec(scene_name + "_whole"), quat_order="xyzw", dt=0.01)
    targets = [server.target] + [s.target for s in more_servers]
    with taxel.ShardedScene.create(targets, spec(scene_name), quat_order="xyzw", dt=0.01) as sharded:
        try:
            with sharded.stream() as stream:
                for t, envs in enumerate([None, [9, 2], None]):
                    ids = list(range(NUM_ENVS)) if envs is None else envs
                    poses = poses_xyzw(ball_centres(ids, t))
                    a = whole.step(poses, env_ids=envs, read=taxel.Read(ground_truth=True))
                    b = stream.step(poses, env_ids=envs, read=taxel.Read(ground_truth=True))
                    assert_same(a, b, f"stream step {t}")
                    assert b.sequence == t + 1
        finally:
            sharded.delete()
            whole.delete()


def test_global_env_ids_are_checked_with_the_global_numbering(client, server, more_servers, scene_name):
    targets = [server.target] + [s.target for s in more_servers]
    with taxel.ShardedScene.create(targets, spec(scene_name), quat_order="xyzw", dt=0.01) as sharded:
        try:
            poses = poses_xyzw(ball_centres([1, 10], 0))
            with pytest.raises(taxel.OutOfRangeError, match=r"env_ids\[1\]: env id 10 out of range \[0, 10\)") as e:
                sharded.step(poses, env_ids=[1, 10])
            assert e.value.field == "env_ids[1]"  # as one server's refusal names it
            with pytest.raises(taxel.InvalidArgumentError, match=r"env_ids\[1\]: env id 5 appears more than once") as e:
                sharded.reset([5, 5])
            assert e.value.field == "env_ids[1]"
            with pytest.raises(ValueError, match=r"poses: expected 10 envs on the first axis"):
                sharded.step(poses)
        finally:
            sharded.delete()


def test_a_failed_creation_removes_the_shards_already_made(client, server, more_servers, scene_name):
    # The name exists on the third server only: shards 0 and 1 are created, shard 2 fails.
    taxel.Client(more_servers[1].target).create_scene(spec(scene_name))
    targets = [server.target] + [s.target for s in more_servers]
    with pytest.raises(taxel.AlreadyExistsError):
        taxel.ShardedScene.create(targets, spec(scene_name))
    with pytest.raises(taxel.NotFoundError):
        client.scene(scene_name)
    taxel.Client(more_servers[1].target).delete_scene(scene_name)


def test_reported_contacts_are_routed_by_their_global_env(client, server, more_servers, scene_name):
    # 4 envs over 2 servers ([0, 2) and [2, 4)); the contacts name global envs in any order.
    kw = dict(num_envs=4, contact_bodies="*_foot", contact_partners=["terrain", "object/ball"],
              contact_source="reported", contact_friction=True)
    whole = client.create_scene(legs_spec(scene_name + "_whole", **kw), quat_order="xyzw", dt=0.01)
    with taxel.ShardedScene.create([server.target, more_servers[0].target], legs_spec(scene_name, **kw),
                                   quat_order="xyzw", dt=0.01) as sharded:
        try:
            still = poses(*[(AWAY,) * 4] * 4)
            contacts = taxel.ReportedContacts(
                env=[3, 0, 2, 2, 1], body=["left_foot", "right_foot", "left_foot", "left_foot", "right_foot"],
                partner=["terrain", "ball", "terrain", "terrain", "terrain"],
                force=np.array([[0, 0, 1], [0, 2, 0], [0, 0, 3], [0, 0, 4], [5, 0, 0]], np.float32),
                friction=np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 2, 0], [0, 0, 3]], np.float32))
            m = taxel.Read(contact_matrix=True, none=True)
            a = whole.step(still, contacts=contacts, read=m).contact_matrix
            b = sharded.step(still, contacts=contacts, read=m).contact_matrix
            assert_same_matrix(a, b, "all envs")
            # Env 2 gets its two contacts summed: (0, 0, 3 + 4) on left_foot (row 0) from the terrain
            # (column 0).
            np.testing.assert_array_equal(b.normal[2, 0, 0], (0, 0, 7))
            # A step of envs [3, 1] (rows in that order) with contacts for both.
            sub = {"env": [1, 3, 3], "body": "left_foot", "partner": "terrain",
                   "force": np.array([[0, 0, 1], [0, 0, 2], [0, 0, 3]], np.float32)}
            a = whole.step(still[[3, 1]], env_ids=[3, 1], contacts=sub, read=m).contact_matrix
            b = sharded.step(still[[3, 1]], env_ids=[3, 1], contacts=sub, read=m).contact_matrix
            assert_same_matrix(a, b, "envs [3, 1]")
            assert_same_matrix(whole.contact_matrix(friction=True), sharded.contact_matrix(friction=True), "read")
            with pytest.raises(taxel.InvalidArgumentError,
                               match=r"contacts.env\[1\]: env 0 is not one of the envs this step updates") as e:
                sharded.step(still[[3, 1]], env_ids=[3, 1], contacts={**sub, "env": [1, 0, 3]})
            assert e.value.field == "contacts.env[1]"
        finally:
            sharded.delete()
            whole.delete()


def test_env_offset_is_checked_by_the_server(client, scene_name):
    with pytest.raises(taxel.InvalidArgumentError, match=r"spec.env_offset: expected 0 <= env_offset and "
                                                         r"env_offset \+ num_envs \(2\) <= 2\^32"):
        client.create_scene(taxel.SceneSpec(scene_name, num_envs=2, env_offset=2 ** 32 - 1))
    # The largest offset 2 envs allow is accepted.
    info = client.create_scene(taxel.SceneSpec(scene_name, num_envs=2, env_offset=2 ** 32 - 2)).info()
    assert info.num_envs == 2


def test_sensor_changes_reach_every_server_and_per_env_gains_their_env(client, server, more_servers, scene_name):
    whole = client.create_scene(spec(scene_name + "_whole"), quat_order="xyzw", dt=0.01)
    targets = [server.target] + [s.target for s in more_servers]
    with taxel.ShardedScene.create(targets, spec(scene_name), quat_order="xyzw", dt=0.01) as sharded:
        try:
            # One gain row per env (10 × 9, all different), then rows for envs [9, 2] only.
            gains = 0.5 + 0.01 * np.arange(NUM_ENVS * 9).reshape(NUM_ENVS, 9)
            for scene in (whole, sharded):
                scene.update_sensor("skin", probe_gain=gains, bias=0.25)
                scene.update_sensor("skin", probe_gain=gains[[0, 1]] * 2, env_ids=[9, 2])
                scene.add_sensor(taxel.ContactDepthProbe("late", link="pad", probe_local_pos=grid_3x3(),
                                                         probe_radius=PROBE_R, noise=1e-4))
            for t in range(4):
                ids = list(range(NUM_ENVS))
                a = whole.step(poses_xyzw(ball_centres(ids, t)), read=taxel.Read(ground_truth=True))
                b = sharded.step(poses_xyzw(ball_centres(ids, t)), read=taxel.Read(ground_truth=True))
                assert_same(a, b, f"step {t}")
            assert "late" in b.sensors
            sharded.remove_sensor("late")
            assert all("late" not in s.info().sensors for s in sharded.shards)
        finally:
            sharded.delete()
            whole.delete()
