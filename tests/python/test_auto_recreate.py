"""auto_recreate across a real server restart: stop the server (SIGTERM), start a new one on the
same port, step again. The new server knows neither the scene nor its mesh."""
import numpy as np
import pytest

import taxel
from conftest import BALL_Z, PROBE_R, pad_and_ball_spec, poses_xyzw
from test_mesh import CUBE_T, CUBE_V

# The cube of test_mesh centred at (0, 0, BALL_Z): its bottom face is 1 mm below every probe, which
# reads R + 1 mm = 3 mm (see test_scene.test_inline_mesh_is_uploaded_by_create_scene).
CUBE_DEPTH = np.full((3, 3), PROBE_R + 0.001)


def restart(server):
    port = server.port
    server.stop()
    server.start(port=port)


def cube_spec(name):
    return pad_and_ball_spec(name, num_envs=2, ball_shape=taxel.Mesh(vertices=CUBE_V, triangles=CUBE_T))


def test_scene_and_mesh_come_back_after_a_restart(fresh_server):
    with taxel.Client(fresh_server.target, auto_recreate=True, timeout=20) as client:
        scene = client.create_scene(cube_spec("restart"), quat_order="xyzw", dt=0.01)
        scene.add_sensor(taxel.ContactDepthProbe("extra", link="pad", probe_local_pos=[[0, 0, 0]],
                                                 probe_radius=PROBE_R))
        poses = poses_xyzw([(0, 0, BALL_Z), (0, 0, 1)])
        r = scene.step(poses)
        np.testing.assert_allclose(r["depth"].depth[0], CUBE_DEPTH, atol=1e-7)
        for _ in range(2):
            scene.step(poses)
        assert scene.info().step == 3

        restart(fresh_server)
        assert client.server_info().num_scenes == 0  # a new process: nothing there

        r = scene.step(poses)
        assert scene.recreations == 1
        assert r.step == 1  # the re-created scene starts again from step 0
        np.testing.assert_allclose(r["depth"].depth[0], CUBE_DEPTH, atol=1e-7)
        np.testing.assert_allclose(r["extra"].depth[0], [PROBE_R + 0.001], atol=1e-7)  # the added sensor too
        info = client.server_info()
        assert (info.num_scenes, info.num_meshes) == (1, 1)  # the mesh was re-uploaded once

        # Other calls recover the same way: reset after another restart.
        restart(fresh_server)
        scene.reset([0])
        assert scene.recreations == 2 and scene.info().step == 0


def test_a_stream_reopened_after_a_restart_recreates_the_scene(fresh_server):
    with taxel.Client(fresh_server.target, auto_recreate=True, timeout=20) as client:
        scene = client.create_scene(cube_spec("restart-stream"))
        poses = poses_xyzw([(0, 0, BALL_Z), (0, 0, 1)])
        with scene.stream() as s:
            s.step(poses, dt=0.01, quat_order="xyzw")
        restart(fresh_server)
        with scene.stream() as s:
            r = s.step(poses, dt=0.01, quat_order="xyzw")  # NOT_FOUND -> re-create, reopen, resend
            assert scene.recreations == 1 and r.step == 1 and r.sequence == 2
            np.testing.assert_allclose(r["depth"].depth[0], CUBE_DEPTH, atol=1e-7)


def test_without_auto_recreate_the_scene_is_gone(fresh_server):
    with taxel.Client(fresh_server.target, timeout=20) as client:
        scene = client.create_scene(cube_spec("no-recreate"))
        restart(fresh_server)
        with pytest.raises(taxel.NotFoundError, match="scene: no scene named 'no-recreate'"):
            scene.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, 1)]), dt=0.01, quat_order="xyzw")
        assert scene.recreations == 0
        # Creating it again by hand also restores the mesh this client had uploaded before.
        again = client.create_scene(cube_spec("no-recreate"))
        r = again.step(poses_xyzw([(0, 0, BALL_Z), (0, 0, 1)]), dt=0.01, quat_order="xyzw")
        np.testing.assert_allclose(r["depth"].depth[0], CUBE_DEPTH, atol=1e-7)


def test_a_deleted_scene_is_not_recreated(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1), auto_recreate=True)
    scene.delete()
    with pytest.raises(taxel.NotFoundError):
        scene.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
    assert scene.recreations == 0


def test_a_scene_this_client_did_not_create_cannot_be_recreated(client, server, scene_name):
    client.create_scene(pad_and_ball_spec(scene_name, num_envs=1))
    with taxel.Client(server.target, auto_recreate=True) as other:
        handle = other.scene(scene_name)
        client.delete_scene(scene_name)
        with pytest.raises(taxel.NotFoundError):
            handle.step(poses_xyzw([(0, 0, BALL_Z)]), dt=0.01, quat_order="xyzw")
        assert handle.recreations == 0
