"""taxel.plot: the heatmap image of a grid sensor (matplotlib with the Agg backend)."""
import numpy as np
import pytest

import taxel
from conftest import BALL_Z, D_CENTRE, EXPECTED_DEPTH, pad_and_ball_spec, poses_xyzw
from taxel.plot import grid_image

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture
def result(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))
    return scene.step(poses_xyzw([(0, 0, 1), (0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw",
                      read=taxel.Read(ground_truth=True))


def test_force_heatmap_is_the_force_magnitude(result):
    # On the first step |F| = k_n·depth (k_n = 1000), so the image is 1000 × the depth grid.
    im = taxel.plot.heatmap(result, "skin", env=1)
    np.testing.assert_allclose(im.get_array(), 1000 * EXPECTED_DEPTH, atol=1e-4)
    assert im.axes.get_title() == "skin: |force|, env 1"
    assert im.origin == "lower"
    import matplotlib.pyplot as plt
    plt.close(im.axes.figure)


def test_depth_and_component_images(result):
    np.testing.assert_allclose(grid_image(result, "depth", "depth", env=1), EXPECTED_DEPTH, atol=1e-7)
    # F_z = −k_n·depth at the centre probe; the z component keeps the sign.
    assert grid_image(result, "skin", "force", env=1, component=2)[1, 1] == pytest.approx(-1000 * D_CENTRE, abs=1e-4)
    np.testing.assert_array_equal(grid_image(result, "depth", "depth", env=0), np.zeros((3, 3)))
    np.testing.assert_array_equal(grid_image(result, "depth", "depth", env=1, ground_truth=True),
                                  grid_image(result, "depth", "depth", env=1))


def test_heatmap_on_given_axes_and_errors(client, scene_name, result):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    im = taxel.plot.heatmap(result, "touch", channel="contact", env=1, ax=ax, colorbar=False)
    assert im.axes is ax and im.get_array().all()
    plt.close(fig)
    spec = taxel.SceneSpec(scene_name + "-flat", num_envs=1)
    spec.robot("hand").link("pad")
    spec.add_sensor(taxel.ContactDepthProbe("flat", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001))
    flat = client.create_scene(spec)
    try:
        r = flat.step(np.array([[[0, 0, 0, 0, 0, 0, 1]]]), dt=0.01, quat_order="xyzw")
        with pytest.raises(ValueError, match="not a grid sensor"):
            grid_image(r, "flat", "depth")
    finally:
        flat.delete()
