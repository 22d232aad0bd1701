"""Triangle meshes on the client side: validation of array shapes and the content id.

The content id is computed exactly as the server does (core/geometry/triangle_mesh.h,
`TriangleMesh::ContentId`): SHA-256 (hex) of the ASCII tag "taxel-mesh-v1", the vertex count
(uint64 LE), the coordinates as float64 LE (x, y, z per vertex), the triangle count (uint64 LE) and
the indices as int32 LE. float32 vertices are widened to float64 first, as the server does on
upload, so the id never depends on the dtype sent. Knowing the id locally lets the client skip
re-uploading a mesh it already sent.
"""
import hashlib
import struct
from typing import Tuple

from taxel._types import ArrayLike

import numpy as np

from taxel.tensors import as_numpy

__all__ = ["mesh_content_id", "canonical_mesh_arrays"]


def canonical_mesh_arrays(vertices: ArrayLike, triangles: ArrayLike) -> Tuple[np.ndarray, np.ndarray]:
    """`vertices` as a C-contiguous [V, 3] real array (float32/float64 kept) and `triangles` as a
    [T, 3] int32 array. Raises ValueError on other shapes, TypeError on non-numeric data."""
    v = as_numpy(vertices)
    if v.dtype.kind not in "biuf":
        raise TypeError(f"vertices: expected a real array, got dtype {v.dtype}")
    if v.dtype not in (np.float32, np.float64):
        v = v.astype(np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"vertices: expected shape [V, 3], got {list(v.shape)}")
    t = as_numpy(triangles)
    if t.dtype.kind not in "iu":
        raise TypeError(f"triangles: expected an integer array, got dtype {t.dtype}")
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"triangles: expected shape [T, 3], got {list(t.shape)}")
    if t.size and (t.min() < np.iinfo(np.int32).min or t.max() > np.iinfo(np.int32).max):
        raise ValueError("triangles: expected indices that fit in int32")
    return np.ascontiguousarray(v), np.ascontiguousarray(t, dtype="<i4")


def mesh_content_id(vertices: ArrayLike, triangles: ArrayLike) -> str:
    """The server's content id of a mesh (64 hex characters), computed locally."""
    v, t = canonical_mesh_arrays(vertices, triangles)
    h = hashlib.sha256()
    h.update(b"taxel-mesh-v1")
    h.update(struct.pack("<Q", v.shape[0]))
    h.update(np.ascontiguousarray(v, dtype="<f8").tobytes())
    h.update(struct.pack("<Q", t.shape[0]))
    h.update(t.tobytes())
    return h.hexdigest()
