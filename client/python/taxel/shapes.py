"""Collision shapes and poses of the spec builder (taxel.v1.Shape, taxel.v1.Pose).

Each shape is centred on its own frame S and placed on its link by `pos` (3 values, m) and `quat`
(4 values) with an explicit `quat_order` ("xyzw" or "wxyz"): a quaternion without its order is a
ValueError, as on the wire. Units are SI; shapes are given in their link's frame.
"""
from typing import Any, Callable, List, Optional

import numpy as np

from taxel._pb import scene_pb2, tensor_pb2
from taxel._types import ArrayLike, Quat, QuatOrder, Vec3
from taxel.mesh import canonical_mesh_arrays, mesh_content_id
from taxel.tensors import encode_real

__all__ = ["XYZW", "WXYZ", "quat_order_enum", "Shape", "Sphere", "Box", "Capsule", "Cylinder", "HalfSpace",
           "Heightfield", "Mesh", "MeshResolver"]

XYZW = "xyzw"  # Newton, Warp, PhysX, Isaac Lab >= 3.0, PyBullet
WXYZ = "wxyz"  # MuJoCo, Isaac Lab 2.x, Genesis

_QUAT_ORDERS = {"xyzw": tensor_pb2.XYZW, "wxyz": tensor_pb2.WXYZ}


def quat_order_enum(order: QuatOrder, field: str = "quat_order") -> int:
    """The wire enum of "xyzw"/"wxyz" (any case, or the enum itself). None or anything else is a
    ValueError naming `field`."""
    if order is None:
        raise ValueError(f"{field} is required: 'xyzw' (Newton, Warp, PhysX, Isaac Lab >= 3, PyBullet) "
                         "or 'wxyz' (MuJoCo, Isaac Lab 2.x, Genesis)")
    if isinstance(order, str) and order.lower() in _QUAT_ORDERS:
        return _QUAT_ORDERS[order.lower()]
    if not isinstance(order, str) and order in (tensor_pb2.XYZW, tensor_pb2.WXYZ):
        return int(order)
    raise ValueError(f"{field}: expected 'xyzw' or 'wxyz', got {order!r}")


def _floats(values, n: Optional[int], field: str) -> List[float]:
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if n is not None and a.size != n:
        raise ValueError(f"{field}: expected {n} values, got {a.size}")
    return [float(x) for x in a]


def _fill_pose(pose, pos, quat, quat_order, field: str) -> None:
    if pos is not None:
        pose.position[:] = _floats(pos, 3, f"{field}.pos")
    if quat is not None:
        pose.quaternion[:] = _floats(quat, 4, f"{field}.quat")
        pose.quat_order = quat_order_enum(quat_order, f"{field}.quat_order")


def _fmt_pose(pos, quat, quat_order) -> str:
    s = ""
    if pos is not None:
        s += f", pos={tuple(_floats(pos, None, 'pos'))}"
    if quat is not None:
        s += f", quat={tuple(_floats(quat, None, 'quat'))}, quat_order={quat_order!r}"
    return s


MeshResolver = Callable[[np.ndarray, np.ndarray], str]


# ------------------------------------------------------------------------------------------------
# Shapes


class Shape:
    """A collision shape centred on its own frame S, placed on a link by `pos`/`quat` (X_LS)."""

    _field = ""  # the Shape.geometry oneof member

    def __init__(self, pos: Vec3 = None, quat: Quat = None, quat_order: QuatOrder = None):
        self.pos, self.quat, self.quat_order = pos, quat, quat_order
        if quat is not None:
            quat_order_enum(quat_order, f"{type(self).__name__}.quat_order")

    def _fill(self, geometry, resolve_mesh: Optional[MeshResolver]) -> None:
        raise NotImplementedError

    def to_proto(self, resolve_mesh: Optional[MeshResolver] = None) -> "scene_pb2.Shape":
        """The wire shape. `resolve_mesh(vertices, triangles) -> mesh_id` turns inline mesh data
        into an id (Client.create_scene uploads it); without it the local content id is used."""
        s = scene_pb2.Shape()
        if self.pos is not None or self.quat is not None:
            _fill_pose(s.pose, self.pos, self.quat, self.quat_order, type(self).__name__)
        getattr(s, self._field).SetInParent()
        self._fill(getattr(s, self._field), resolve_mesh)
        return s

    def _params(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._params()}{_fmt_pose(self.pos, self.quat, self.quat_order)})"


class Sphere(Shape):
    _field = "sphere"

    def __init__(self, radius: float, **pose: Any):
        super().__init__(**pose)
        self.radius = float(radius)

    def _fill(self, g, _):
        g.radius = self.radius

    def _params(self):
        return f"radius={self.radius}"


class Box(Shape):
    _field = "box"

    def __init__(self, half_extents: ArrayLike, **pose: Any):
        super().__init__(**pose)
        self.half_extents = tuple(_floats(half_extents, 3, "Box.half_extents"))

    def _fill(self, g, _):
        g.half_extents[:] = self.half_extents

    def _params(self):
        return f"half_extents={self.half_extents}"


class Capsule(Shape):
    """Axis +z of S: a segment from z = -half_length to +half_length swept by a sphere."""
    _field = "capsule"

    def __init__(self, radius: float, half_length: float, **pose: Any):
        super().__init__(**pose)
        self.radius, self.half_length = float(radius), float(half_length)

    def _fill(self, g, _):
        g.radius, g.half_length = self.radius, self.half_length

    def _params(self):
        return f"radius={self.radius}, half_length={self.half_length}"


class Cylinder(Capsule):
    """Axis +z of S; flat caps at z = ±half_length."""
    _field = "cylinder"


class HalfSpace(Shape):
    """The solid z <= 0 of S (a plane with outward normal +z). Use as terrain."""
    _field = "half_space"

    def _fill(self, g, _):
        pass


class Heightfield(Shape):
    """Heights [rows, cols] (m) centred on S like MuJoCo's hfield; sample (i, j) at
    x = (j - (cols-1)/2)·dx, y = (i - (rows-1)/2)·dy."""
    _field = "heightfield"

    def __init__(self, heights: ArrayLike, dx: float, dy: float, **pose: Any):
        super().__init__(**pose)
        self.heights = heights
        self.dx, self.dy = float(dx), float(dy)

    def _fill(self, g, _):
        encode_real(self.heights, g.heights)
        g.dx, g.dy = self.dx, self.dy

    def _params(self):
        return f"heights=<{list(np.shape(self.heights))}>, dx={self.dx}, dy={self.dy}"


class Mesh(Shape):
    """A triangle mesh: by `mesh_id` (from Client.upload_mesh), or inline `vertices` [V, 3] (m) and
    `triangles` [T, 3] (counter-clockwise seen from outside), uploaded by Client.create_scene.
    `scale`: optional per-axis scale of the vertices."""
    _field = "mesh"

    def __init__(self, mesh_id: Optional[str] = None, vertices: Optional[ArrayLike] = None,
                 triangles: Optional[ArrayLike] = None, scale: Optional[ArrayLike] = None, **pose: Any):
        super().__init__(**pose)
        if (mesh_id is None) == (vertices is None):
            raise ValueError("Mesh: give either mesh_id or vertices and triangles")
        if (vertices is None) != (triangles is None):
            raise ValueError("Mesh: vertices and triangles go together")
        self.mesh_id = mesh_id
        self.vertices, self.triangles = (None, None) if vertices is None else canonical_mesh_arrays(vertices, triangles)
        self.scale = None if scale is None else tuple(_floats(scale, 3, "Mesh.scale"))

    def _fill(self, g, resolve_mesh):
        if self.mesh_id is not None:
            g.mesh_id = self.mesh_id
        elif resolve_mesh is not None:
            g.mesh_id = resolve_mesh(self.vertices, self.triangles)
        else:
            g.mesh_id = mesh_content_id(self.vertices, self.triangles)
        if self.scale is not None:
            g.scale[:] = self.scale

    def _params(self):
        if self.mesh_id is not None:
            return f"mesh_id={self.mesh_id[:16]!r}..."
        return f"vertices=<{self.vertices.shape[0]}>, triangles=<{self.triangles.shape[0]}>"


