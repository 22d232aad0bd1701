"""Meshes: the local content id (taxel.mesh_content_id), upload, the client's mesh cache."""
import hashlib
import struct

import numpy as np
import pytest

import taxel

# A cube of half extent 5 cm centred on the origin: 8 vertices, 12 outward triangles (the cube of
# tests/cli/cli_test.sh, indices from 0).
CUBE_V = 0.05 * np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                          [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.float64)
CUBE_T = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                   [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]], dtype=np.int64)


def hand_made_id(vertices, triangles) -> str:
    """The canonical bytes of core/geometry/triangle_mesh.h, packed value by value with struct."""
    b = b"taxel-mesh-v1" + struct.pack("<Q", len(vertices))
    for v in vertices:
        b += struct.pack("<3d", *(float(x) for x in v))
    b += struct.pack("<Q", len(triangles))
    for t in triangles:
        b += struct.pack("<3i", *(int(i) for i in t))
    return hashlib.sha256(b).hexdigest()


def test_local_content_id_follows_the_documented_bytes():
    assert taxel.mesh_content_id(CUBE_V, CUBE_T) == hand_made_id(CUBE_V, CUBE_T)
    # float32 vertices are widened to float64 like the server does: 0.05 as float32 is a different
    # number than 0.05, so the id differs from the float64 cube's but equals that of the widened values.
    v32 = CUBE_V.astype(np.float32)
    assert taxel.mesh_content_id(v32, CUBE_T) == hand_made_id(v32.astype(np.float64), CUBE_T)
    assert taxel.mesh_content_id(v32, CUBE_T) != taxel.mesh_content_id(CUBE_V, CUBE_T)


def test_content_id_equals_the_servers(client):
    for vertices in (CUBE_V, CUBE_V.astype(np.float32), CUBE_V * 2):
        mesh_id = client.upload_mesh(vertices, CUBE_T.astype(np.int32))
        assert mesh_id == hand_made_id(np.asarray(vertices, dtype=np.float64), CUBE_T)
        info = client.mesh_info(mesh_id)
        assert (info.num_vertices, info.num_triangles, info.watertight, info.was_inside_out) == (8, 12, True, False)


class CountingCall:
    """Wraps a stub method to count the calls that reach the wire."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def test_a_known_mesh_is_not_sent_twice(server):
    with taxel.Client(server.target) as c:
        counter = CountingCall(c._stub.UploadMesh)
        c._stub.UploadMesh = counter
        v = CUBE_V * 3  # a cube no other test uploads
        first = c.upload_mesh(v, CUBE_T)
        assert counter.calls == 1 and c.mesh_info(first).newly_added
        assert c.upload_mesh(v.copy(), CUBE_T.tolist()) == first  # same content, other objects
        assert counter.calls == 1
        assert c.upload_mesh(v, CUBE_T, force=True) == first  # forced: sent, the server knew it
        assert counter.calls == 2 and not c.mesh_info(first).newly_added
        assert c.known_meshes() == [first]
        # Another client does not share this client's cache: it asks the server, which has it.
        with taxel.Client(server.target) as other:
            assert other.upload_mesh(v, CUBE_T) == first
            assert not other.mesh_info(first).newly_added


def test_server_side_validation_names_the_triangle(client):
    bad = CUBE_T.copy()
    bad[3] = (0, 0, 1)  # a repeated vertex index
    with pytest.raises(taxel.InvalidArgumentError) as e:
        client.upload_mesh(CUBE_V, bad)
    assert e.value.field == "triangles[3]"
    assert "degenerate triangle" in str(e.value)


@pytest.mark.parametrize("vertices, triangles, error, message", [
    (np.zeros((4, 2)), CUBE_T, ValueError, r"vertices: expected shape \[V, 3\], got \[4, 2\]"),
    (CUBE_V, CUBE_T[:, :2], ValueError, r"triangles: expected shape \[T, 3\]"),
    (CUBE_V, CUBE_T.astype(np.float64), TypeError, "triangles: expected an integer array"),
])
def test_client_side_shape_checks(client, vertices, triangles, error, message):
    with pytest.raises(error, match=message):
        client.upload_mesh(vertices, triangles)


def test_delete_mesh_waits_for_its_scenes_and_frees_the_bytes(server):
    with taxel.Client(server.target) as c:
        v = CUBE_V * 4  # a cube no other test uploads
        before = c.server_info()
        mesh_id = c.upload_mesh(v, CUBE_T)
        spec = taxel.SceneSpec("delete_mesh_scene", num_envs=1)
        spec.robot("hand").link("pad")
        spec.object("cube", shapes=[taxel.Mesh(mesh_id)])
        c.create_scene(spec)
        with pytest.raises(taxel.FailedPreconditionError) as e:
            c.delete_mesh(mesh_id)
        assert e.value.field == "mesh_id" and "used by scene 'delete_mesh_scene'" in e.value.message
        c.delete_scene("delete_mesh_scene")
        c.delete_mesh(mesh_id)
        assert mesh_id not in c.known_meshes()
        after = c.server_info()
        assert (after.num_meshes, after.memory_bytes) == (before.num_meshes, before.memory_bytes)
        with pytest.raises(taxel.NotFoundError) as e:
            c.delete_mesh(mesh_id)
        assert e.value.field == "mesh_id"


def test_grid_backend_reads_within_the_reported_error(client, scene_name):
    # The 10 cm cube of CUBE_V, its narrow-band grid asked for 1e-3 m over a 3 mm band.
    mesh_id = client.upload_mesh(CUBE_V, CUBE_T.astype(np.int32), grid_max_error=1e-3, grid_band=3e-3)
    grid = client.mesh_info(mesh_id).grid
    assert grid is not None
    assert grid.requested_max_error == 1e-3 and grid.band == 3e-3
    assert 0 < grid.max_error <= 1e-3 and grid.p99_error <= grid.max_error
    assert grid.bytes > 0 and grid.cell_size > 0 and grid.num_check_points > 1000
    # A 9 × 9 pad of R = 2 mm probes 1 mm under the cube's bottom face (z = −0.05), edges included:
    # exact depth R + 1 mm = 3 mm where the probe is under the face, less beyond its edges.
    xs = np.linspace(-0.06, 0.06, 9)
    pos = np.array([[[x, y, 0.0] for x in xs] for y in xs])
    spec = taxel.SceneSpec(scene_name, num_envs=1)
    spec.robot("hand").link("pad")
    spec.object("cube", shapes=[taxel.Mesh(mesh_id)])
    for name, backend in (("exact", "EXACT"), ("grid", "GRID")):
        spec.add_sensor(taxel.ContactDepthProbe(name, link="pad", probe_local_pos=pos, probe_radius=0.002,
                                                sdf_backend=backend))
    poses = np.zeros((1, 2, 7))
    poses[:, :, 6] = 1.0
    poses[0, 1, 2] = 0.05 - 0.001
    r = client.create_scene(spec).step(poses, dt=0.01, quat_order="xyzw")
    exact, approx = r["exact"].depth[0], r["grid"].depth[0]
    assert exact[4, 4] == pytest.approx(0.003, abs=1e-7)
    assert (exact > 0).sum() > 20
    np.testing.assert_allclose(approx, exact, atol=grid.max_error * 1.05 + 1e-7)


def test_grid_over_the_memory_limit_is_refused(client):
    v = CUBE_V * 1.5  # a mesh of its own, so that nothing about it is cached
    with pytest.raises(taxel.ResourceExhaustedError, match="grid.max_error"):
        client.upload_mesh(v, CUBE_T.astype(np.int32), grid_max_error=1e-9)
    with pytest.raises(taxel.InvalidArgumentError, match="grid.band"):
        client.upload_mesh(v, CUBE_T.astype(np.int32), grid_band=-1.0)
