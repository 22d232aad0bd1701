"""Imperfection options through the client: the measured branch against the ground truth, run-time
updates (UpdateSensor) and history reads. Geometry and the ground-truth values: conftest.py; the
imperfection stages: proto ImperfectionOptions (gain inside the kernel, bias added at the end)."""
import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, D_CENTRE, EXPECTED_DEPTH, FAR_Z, PITCH, PROBE_R, grid_3x3, poses_xyzw


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


# -------------------------------------------------------------------------------------------------
# taxel.gaussian_crosstalk_kernel


def test_gaussian_kernel_by_hand():
    # 3×3, σ = spacing = 1: weights e^0 (centre), e^(−1/2) (4 edges), e^(−1) (4 corners), over
    # their sum S = 1 + 4e^(−1/2) + 4e^(−1).
    k = taxel.gaussian_crosstalk_kernel(3, 3, sigma=1.0, spacing=1.0)
    s = 1 + 4 * np.exp(-0.5) + 4 * np.exp(-1.0)
    assert k.dtype == np.float64 and k.shape == (3, 3)
    assert k[1, 1] == pytest.approx(1 / s, rel=1e-15)  # 0.2041
    np.testing.assert_allclose(k[[0, 1, 1, 2], [1, 0, 2, 1]], np.exp(-0.5) / s, rtol=1e-15)
    np.testing.assert_allclose(k[[0, 0, 2, 2], [0, 2, 0, 2]], np.exp(-1.0) / s, rtol=1e-15)
    assert k.sum() == pytest.approx(1.0, rel=1e-15)
    # Only σ/spacing matters for a square grid: σ = 2 mm over a 2 mm pitch is the same kernel.
    np.testing.assert_allclose(taxel.gaussian_crosstalk_kernel(3, 3, 0.002, 0.002), k, rtol=1e-15)


def test_gaussian_kernel_rows_columns_and_spacings():
    # 1×3 along a row (x = −1, 0, 1 columns of 1 mm), σ = 1 mm: (e^(−1/2), 1, e^(−1/2)) / (1 + 2e^(−1/2)).
    k = taxel.gaussian_crosstalk_kernel(1, 3, sigma=0.001, spacing=(0.005, 0.001))
    e = np.exp(-0.5)
    np.testing.assert_allclose(k, [[e / (1 + 2 * e), 1 / (1 + 2 * e), e / (1 + 2 * e)]], rtol=1e-15)
    # 3×1 with rows 2 mm apart: y = ±2 mm, weights e^(−2).
    k = taxel.gaussian_crosstalk_kernel(3, 1, sigma=0.001, spacing=(0.002, 0.005))
    e2 = np.exp(-2.0)
    np.testing.assert_allclose(k[:, 0], [e2 / (1 + 2 * e2), 1 / (1 + 2 * e2), e2 / (1 + 2 * e2)], rtol=1e-15)
    assert taxel.gaussian_crosstalk_kernel(1, 1, 1.0).tolist() == [[1.0]]


@pytest.mark.parametrize("args, message", [
    ((2, 3, 1.0), "odd and positive, got 2x3"),
    ((3, 0, 1.0), "odd and positive"),
    ((3, 3, 0.0), "sigma must be finite and > 0"),
    ((3, 3, float("nan")), "sigma"),
    ((3, 3, 1.0, -1.0), "spacing must be finite and > 0"),
    ((3, 3, 1.0, (1.0, 0.0)), "column spacing"),
    ((3, 3, 1.0, (1.0, 1.0, 1.0)), "scalar or \\(row_spacing, col_spacing\\)"),
])
def test_gaussian_kernel_rejects_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        taxel.gaussian_crosstalk_kernel(*args)


def test_explicit_gaussian_kernel_reads_like_crosstalk_sigma(client, scene_name):
    # The server's Gaussian crosstalk with strength 1 and σ = 5 mm on the 1 cm grid covers
    # ±ceil(3σ/pitch) = ±2 taxels (at most the grid): a 5×5 kernel. The same kernel built here
    # and sent as crosstalk_kernel must give the same measured readings.
    sigma = 0.5 * PITCH
    spec = taxel.SceneSpec(scene_name, num_envs=1)
    spec.robot("hand").link("pad")
    spec.object("ball", shapes=[taxel.Sphere(BALL_R)])
    grid = grid_3x3()
    spec.add_sensor(taxel.ContactDepthProbe("by_sigma", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                            crosstalk_strength=1.0, crosstalk_sigma=sigma))
    kernel = taxel.gaussian_crosstalk_kernel(5, 5, sigma, PITCH)
    spec.add_sensor(taxel.ContactDepthProbe("by_kernel", link="pad", probe_local_pos=grid, probe_radius=PROBE_R,
                                            crosstalk_kernel=kernel))
    scene = client.create_scene(spec)
    r = scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw", read=taxel.Read(ground_truth=True))
    assert not np.allclose(r["by_sigma"].depth, r["by_sigma"].ground_truth.depth)  # crosstalk did act
    np.testing.assert_allclose(r["by_kernel"].depth, r["by_sigma"].depth, rtol=1e-6, atol=1e-9)
    # Border "zero" (Genesis): the centre taxel reads Σ_k K[k]·depth under it (cross-correlation).
    expected_centre = float(np.sum(kernel[1:4, 1:4] * EXPECTED_DEPTH))
    assert r["by_kernel"].depth[0, 1, 1] == pytest.approx(expected_centre, rel=1e-5)
