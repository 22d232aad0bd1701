"""Imperfection options through the client: the measured branch against the ground truth, run-time
updates (UpdateSensor) and history reads. Geometry and the ground-truth values: conftest.py; the
imperfection stages: proto ImperfectionOptions (gain inside the kernel, bias added at the end)."""
import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, D_CENTRE, EXPECTED_DEPTH, FAR_Z, PROBE_R, grid_3x3, poses_xyzw


@pytest.fixture
def scene(client, scene_name):
    # "d": depth probes with a bias of 0.25 (exact in float32) and 3 samples of history;
    # "k": KinematicTaxel (k_n = 1000) with every gain 2; "plain": no imperfections.
    spec = taxel.SceneSpec(scene_name, num_envs=2, seed=3)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    grid = grid_3x3()
    spec.add_sensor(taxel.ContactDepthProbe("d", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                            bias=0.25, history_length=3))
    spec.add_sensor(taxel.KinematicTaxel("k", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                         imperfections={"probe_gain": 2.0}))
    spec.add_sensor(taxel.ContactDepthProbe("plain", link="pad", probe_local_pos=grid, probe_radius=PROBE_R))
    return client.create_scene(spec, quat_order="xyzw", dt=0.01)


def test_sensor_info_reports_imperfections(scene):
    sensors = scene.info().sensors
    assert (sensors["d"].has_imperfections, sensors["d"].history_length) == (True, 3)
    assert (sensors["k"].has_imperfections, sensors["k"].history_length) == (True, 0)
    assert not sensors["plain"].has_imperfections


def test_bias_and_gain_against_the_ground_truth(scene):
    r = scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, FAR_Z)]), read=taxel.Read(ground_truth=True))
    np.testing.assert_allclose(r["d"].ground_truth.depth[0], EXPECTED_DEPTH, atol=1e-7)
    # measured = ground truth + bias, also where nothing touches (env 1).
    np.testing.assert_allclose(r["d"].depth, r["d"].ground_truth.depth + 0.25, atol=1e-6)
    # measured = gain · ground truth: (0, 0, −2·1000·3 mm) = (0, 0, −6) N at the centre probe.
    np.testing.assert_allclose(r["k"].ground_truth.force[0, 1, 1], (0, 0, -1000 * D_CENTRE), atol=1e-4)
    np.testing.assert_allclose(r["k"].force, 2 * r["k"].ground_truth.force, atol=1e-5)
    np.testing.assert_array_equal(r["plain"].depth, r["plain"].ground_truth.depth)


def test_update_sensor_changes_gains_per_env_and_the_bias(scene, client):
    scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, BALL_Z)]))
    info = scene.update_sensor("k", probe_gain=np.array([[3.0] * 9, [1.0] * 9]), bias=0.5)
    assert info.name == "k" and info.has_imperfections
    # The ball rests in both envs (no velocity): ground truth F = (0, 0, −3) N at the centre;
    # measured = gain·F + bias per component: env 0 (0.5, 0.5, −8.5), env 1 (0.5, 0.5, −2.5).
    r = scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, BALL_Z)]), read=taxel.Read(sensors=["k"], ground_truth=True))
    np.testing.assert_allclose(r["k"].ground_truth.force[:, 1, 1], [(0, 0, -3), (0, 0, -3)], atol=1e-4)
    np.testing.assert_allclose(r["k"].force[:, 1, 1], [(0.5, 0.5, -8.5), (0.5, 0.5, -2.5)], atol=1e-4)
    # The bias is kept in the spec for auto_recreate.
    kept = [s for s in client.kept_spec(scene.name).sensors if s.name == "k"][0]
    assert kept.imperfections.bias == 0.5
    with pytest.raises(taxel.NotFoundError, match="no sensor named 'nope'"):
        scene.update_sensor("nope", bias=1.0)
    with pytest.raises(taxel.FailedPreconditionError, match="has no imperfections"):
        scene.update_sensor("plain", noise=0.1)
    with pytest.raises(taxel.InvalidArgumentError) as e:
        scene.update_sensor("k", probe_gain=np.ones(4))
    assert e.value.field == "probe_gain"


def test_history_newest_first(scene):
    # Step 1: ball far in env 1; step 2: pressing in both. Centre depth + bias: env 0 reads
    # 0.253 at both steps; env 1 reads 0.25 (nothing) then 0.253.
    scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, FAR_Z)]))
    scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, BALL_Z)]))
    h = scene.read(history=2, sensors=["d"], channels=["depth"])
    depth = h["d"].depth
    assert depth.shape == (2, 2, 3, 3) and not depth.flags.writeable
    np.testing.assert_allclose(depth[:, :, 1, 1], [[D_CENTRE + 0.25, D_CENTRE + 0.25], [D_CENTRE + 0.25, 0.25]],
                               atol=1e-6)
    with pytest.raises(taxel.InvalidArgumentError, match="keeps 3 samples") as e:
        scene.read(history=5, sensors=["d"])
    assert e.value.field == "history"
