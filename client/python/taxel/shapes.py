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
           "Heightfield", "Mesh", "MeshResolver", "ImplicitShape", "ImplicitSphere", "Superellipsoid", "SmoothPolytope",
           "SuperellipticCylinder", "TruncatedCone"]

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




# ------------------------------------------------------------------------------------------------
# Smooth implicit shapes (taxel.v1.Implicit): strictly convex phi(y) <= 0 around the origin of S.
# Probes measure the exact metric distance to the surface (docs/reference.md, "Implicit shapes").


class ImplicitShape(Shape):
    """Base of the smooth implicit shapes; `_kind` is the member of the Implicit.kind oneof."""
    _field = "implicit"
    _kind = ""

    def _fill(self, g, _):
        getattr(g, self._kind).SetInParent()
        self._fill_kind(getattr(g, self._kind))

    def _fill_kind(self, k) -> None:
        raise NotImplementedError


class ImplicitSphere(ImplicitShape):
    """|y|^2/R^2 - 1: the sphere through the implicit-shape path."""
    _kind = "sphere"

    def __init__(self, radius: float, **pose: Any):
        super().__init__(**pose)
        self.radius = float(radius)

    def _fill_kind(self, k):
        k.radius = self.radius

    def _params(self):
        return f"radius={self.radius}"


class Superellipsoid(ImplicitShape):
    """SE(n; a, b, c): (sum (u_i^2 + eps)^n + 1e-16)^(1/2n) - 1, u = (x/a, y/b, z/c). `n` an integer
    in [1, 32] (1: the ellipsoid; large n approaches the box |y_i| <= semi_axes[i])."""
    _kind = "superellipsoid"

    def __init__(self, n: float, semi_axes: ArrayLike, **pose: Any):
        super().__init__(**pose)
        self.n = float(n)
        self.semi_axes = tuple(_floats(semi_axes, 3, "Superellipsoid.semi_axes"))

    def _fill_kind(self, k):
        k.n = self.n
        k.semi_axes[:] = self.semi_axes

    def _params(self):
        return f"n={self.n:g}, semi_axes={self.semi_axes}"


class SmoothPolytope(ImplicitShape):
    """The half-spaces normals[i].y <= offsets[i] (4 to 64; normals of any length, offsets > 0 so
    that the origin is inside; bounded) blended by log-sum-exp with sharpness `beta` > 0."""
    _kind = "smooth_polytope"

    def __init__(self, normals: ArrayLike, offsets: ArrayLike, beta: float, **pose: Any):
        super().__init__(**pose)
        a = np.asarray(normals, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != 3:
            raise ValueError(f"SmoothPolytope.normals: expected shape [planes, 3], got {list(a.shape)}")
        self.normals = [tuple(float(x) for x in row) for row in a]
        self.offsets = tuple(_floats(offsets, len(self.normals), "SmoothPolytope.offsets"))
        self.beta = float(beta)

    def _fill_kind(self, k):
        k.normals[:] = [x for row in self.normals for x in row]
        k.offsets[:] = self.offsets
        k.beta = self.beta

    def _params(self):
        return f"planes={len(self.normals)}, beta={self.beta}"


class SuperellipticCylinder(ImplicitShape):
    """Axis +x of S: (((x/h)^2 + eps)^n + ((y^2 + z^2)/R^2 + eps)^n)^(1/2n) - 1, n in [1, 32]."""
    _kind = "superelliptic_cylinder"

    def __init__(self, n: float, radius: float, half_length: float, **pose: Any):
        super().__init__(**pose)
        self.n, self.radius, self.half_length = float(n), float(radius), float(half_length)

    def _fill_kind(self, k):
        k.n, k.radius, k.half_length = self.n, self.radius, self.half_length

    def _params(self):
        return f"n={self.n:g}, radius={self.radius}, half_length={self.half_length}"


class TruncatedCone(ImplicitShape):
    """Axis +x of S from x = -a (radius bottom_radius) to x = +b (radius top_radius), side and caps
    blended by log-sum-exp with sharpness `beta` > ln 3."""
    _kind = "truncated_cone"

    def __init__(self, beta: float, bottom_radius: float, top_radius: float, a: float, b: float, **pose: Any):
        super().__init__(**pose)
        self.beta, self.bottom_radius, self.top_radius = float(beta), float(bottom_radius), float(top_radius)
        self.a, self.b = float(a), float(b)

    def _fill_kind(self, k):
        k.beta, k.bottom_radius, k.top_radius, k.a, k.b = (self.beta, self.bottom_radius, self.top_radius, self.a,
                                                           self.b)

    def _params(self):
        return (f"beta={self.beta}, bottom_radius={self.bottom_radius}, top_radius={self.top_radius}, a={self.a}, "
                f"b={self.b}")
