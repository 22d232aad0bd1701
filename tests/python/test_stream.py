"""Scene.stream(): per-step streaming over StepStream (one request, one response, in order)."""
import numpy as np
import pytest

import taxel
from conftest import BALL_R, BALL_Z, D_CENTRE, EXPECTED_DEPTH, PROBE_R, pad_and_ball_spec, poses_xyzw


def test_a_press_streamed_step_by_step(client, scene_name):
    # The ball descends 0.5 mm per step to the pressing pose: z_k = BALL_Z + 0.5 mm·(8 − k) at step
    # k = 1..8, centre depth max(0, R − (z_k − r)): −0.5 mm (reads 0) at k = 1, ..., 3 mm at k = 8.
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))
    with scene.stream() as s:
        for k in range(1, 9):
            z = BALL_Z + 0.0005 * (8 - k)
            r = s.step(poses_xyzw([(0, 0, z), (0, 0, 1)], dtype=np.float32 if k % 2 else np.float64),
                       dt=0.01, quat_order="xyzw")
            assert r.sequence == k == s.sequence and r.step == k
            assert r["depth"].depth[0, 1, 1] == pytest.approx(max(0.0, PROBE_R - (z - BALL_R)), abs=1e-6)
            assert not r["depth"].depth[0].flags.writeable
        np.testing.assert_allclose(r["depth"].depth[0], EXPECTED_DEPTH, atol=1e-7)
        assert r.timing is not None
    assert s.closed
    assert scene.info().step == 8


def test_stream_env_subsets_and_reads(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=3))
    with scene.stream() as s:
        r = s.step(poses_xyzw([(0, 0, BALL_Z)]), env_ids=[1], dt=0.01, quat_order="xyzw",
                   read=taxel.Read(sensors=["depth"], channels=["depth"]))
        assert list(r.env_ids) == [1] and list(r) == ["depth"]
        assert r["depth"].depth[0, 1, 1] == pytest.approx(D_CENTRE, abs=1e-7)
        r = s.step(poses_xyzw([(0, 0, BALL_Z)] * 3).reshape(6, 7), dt=0.01, quat_order="xyzw", read=False)
        assert len(r) == 0 and r.sequence == 2


def test_an_error_ends_the_stream(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    s = scene.stream()
    s.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    with pytest.raises(taxel.InvalidArgumentError) as e:
        s.step(poses_xyzw([(0, 0, BALL_Z)])[:, :1], dt=0.01, quat_order="xyzw")
    assert e.value.field == "poses"  # BadRequest details travel in the stream's trailers too
    assert s.closed
    with pytest.raises(taxel.UnavailableError, match="stream is closed"):
        s.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    s.close()  # closing a closed stream is a no-op
    assert scene.info().step == 1  # the refused step changed nothing


def test_deleting_the_scene_ends_its_stream(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    with pytest.raises(taxel.NotFoundError, match="scene"):
        with scene.stream() as s:
            s.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
            client.delete_scene(scene_name)
            s.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")


def test_cancel_abandons_the_stream(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    s = scene.stream()
    s.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    s.cancel()
    assert s.closed
    assert scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw").step == 2
