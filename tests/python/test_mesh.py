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
