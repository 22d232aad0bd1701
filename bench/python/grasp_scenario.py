"""The grasp-batch scenario of the benchmarks (bench/grasp_scenario.h, docs/reference.md#benchmarks) built with the
Python client, so that `py_grasp_batch` and `py_step/1env` step exactly the scene of the C++ cases
`e2e_grasp_batch/*` and `e2e_step/*`: the same spec, the same mesh bytes (hence the same content
id), the same poses.

    num_envs grippers, each with two finger pads of 16×16 KinematicTaxels (R = 2 mm, pitch 3.5 mm)
    squeezing an object: the 20,480-triangle geodesic sphere of radius 4 cm.

        left pad (probes face +x)      object       right pad (probes face −x)
             |::::|                    .-----.            |::::|
             |::::|  --> +x           /       \\           |::::|
             |::::|                   \\       /           |::::|
                                       '-----'
    The pads press δ = 0.5–1.5 mm into the object (δ = 0.5 mm·(1 + e mod 3)) and the object's
    centre is jittered per env by (0, 2 mm·sin(0.7e), 2 mm·cos(1.3e)).
"""
import math
from typing import Tuple

import numpy as np

import taxel

GRID = 16
PITCH = 0.0035
PROBE_R = 0.002
OBJECT_R = 0.04
SUBDIVISIONS = 32

# taxel::geometry::TriangleMesh::ContentId of GeodesicSphere(0.04, 32) as the C++ benchmarks build
# it (core/geometry/mesh_generators.cc); geodesic_sphere() below reproduces it bit for bit.
CPP_MESH_ID = "efb3bdd82018f93a6fff9c77b95e0ea941f4d36aeb167ef48c2e29f1928fd1e4"

_PHI = (1.0 + math.sqrt(5.0)) / 2.0
_ICO = [(-1.0, _PHI, 0.0), (1.0, _PHI, 0.0), (-1.0, -_PHI, 0.0), (1.0, -_PHI, 0.0),
        (0.0, -1.0, _PHI), (0.0, 1.0, _PHI), (0.0, -1.0, -_PHI), (0.0, 1.0, -_PHI),
        (_PHI, 0.0, -1.0), (_PHI, 0.0, 1.0), (-_PHI, 0.0, -1.0), (-_PHI, 0.0, 1.0)]
_FACES = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
          (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
          (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]


def geodesic_sphere(radius: float = OBJECT_R, n: int = SUBDIVISIONS) -> Tuple[np.ndarray, np.ndarray]:
    """The icosahedron with each face split into n² triangles, projected on the sphere: vertices
    [V, 3] float64 (m), triangles [T, 3] int32 (counter-clockwise from outside), T = 20·n².

    Float operations in the server's order, so the bytes (and the content id) equal the C++
    generator's: a point with integer barycentric weights (w0, w1, w2) summing to n is
    Σ (w/n)·corner over the corners in ascending index order (skipping zero weights), then
    radius·p/|p| with |p|² = (x² + y²) + z² (Eigen's order for a 3-vector); vertices are shared by
    exact coordinates, numbered in order of first use."""
    index = {}
    vertices = []

    def point(face, w0, w1, w2):
        x = y = z = 0.0
        for corner, w in sorted(((face[0], w0), (face[1], w1), (face[2], w2))):
            if w:
                s = w / n
                cx, cy, cz = _ICO[corner]
                x, y, z = x + s * cx, y + s * cy, z + s * cz
        norm = math.sqrt((x * x + y * y) + z * z)
        key = (radius * (x / norm), radius * (y / norm), radius * (z / norm))
        i = index.get(key)
        if i is None:
            i = index[key] = len(vertices)
            vertices.append(key)
        return i

    triangles = []
    for f in _FACES:
        for i in range(n):  # row i from corner 0 towards the opposite edge; j along the row
            for j in range(i + 1):
                a = point(f, n - i, i - j, j)
                b = point(f, n - i - 1, i + 1 - j, j)
                c = point(f, n - i - 1, i - j, j + 1)
                triangles.append((a, b, c))
                if j < i:
                    triangles.append((a, c, point(f, n - i, i - j - 1, j + 1)))
    return np.array(vertices, dtype=np.float64), np.array(triangles, dtype=np.int32)


def grasp_spec(name: str, num_envs: int, mesh_id: str) -> taxel.SceneSpec:
    """The scene of bench/grasp_scenario.cc (object kMesh20k): robot "gripper" with the two pads
    (a 2.8 × 2.8 × 0.4 cm box behind each probe plane), object "object" (the mesh), and the sensors
    "left_pad"/"right_pad" (16×16 KinematicTaxels on z = 0 of the pad frame, default options)."""
    spec = taxel.SceneSpec(name, num_envs=num_envs, seed=7)
    half = 0.5 * GRID * PITCH
    pad = taxel.Box(half_extents=(half, half, 0.002), pos=(0, 0, -0.002))
    gripper = spec.robot("gripper")
    gripper.link("left_pad", shapes=[pad])
    gripper.link("right_pad", shapes=[pad])
    spec.object("object", shapes=[taxel.Mesh(mesh_id=mesh_id)])
    grid = np.zeros((GRID, GRID, 3))
    for i in range(GRID):
        for j in range(GRID):
            grid[i, j] = ((j - 0.5 * (GRID - 1)) * PITCH, (i - 0.5 * (GRID - 1)) * PITCH, 0.0)
    for name_ in ("left_pad", "right_pad"):
        spec.add_sensor(taxel.KinematicTaxel(name_, link=name_, probe_local_pos=grid, probe_radius=PROBE_R))
    return spec


def grasp_poses(num_envs: int) -> np.ndarray:
    """[num_envs, 3, 7] float64 poses (left pad, right pad, object), quaternions xyzw."""
    h = math.sqrt(0.5)
    poses = np.empty((num_envs, 3, 7))
    for e in range(num_envs):
        depth = 0.0005 + 0.0005 * (e % 3)
        cx, cy, cz = 0.0, 0.002 * math.sin(0.7 * e), 0.002 * math.cos(1.3 * e)
        x = OBJECT_R - depth
        poses[e] = ((cx - x, cy, cz, 0, h, 0, h),     # left pad: local +z -> world +x
                    (cx + x, cy, cz, 0, -h, 0, h),    # right pad: local +z -> world −x
                    (cx, cy, cz, 0, 0, 0, 1))
    return poses
