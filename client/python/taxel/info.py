"""Read-only descriptions returned by the server: server, scene, link, sensor and output infos.

Each keeps the wire message it came from in `.proto`.
"""
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from taxel._pb import scene_pb2, service_pb2
from taxel.tensors import DTYPES

__all__ = ["Limits", "ServerInfo", "MeshInfo", "LinkInfo", "OutputInfo", "SensorInfo", "ContactMatrixInfo",
           "SceneInfo"]


def _kind_name(enum_type, value: int) -> str:
    try:
        return enum_type.Name(value).lower()
    except ValueError:
        return str(value)


@dataclass(frozen=True)
class Limits:
    max_message_bytes: int
    max_scenes: int
    max_envs_per_scene: int
    max_probes_per_scene: int
    max_triangles_per_mesh: int
    max_memory_bytes: int  # server-wide (the server resolves its default to 3/4 of its memory)
    max_scenes_per_tenant: int = 0  # 0: only max_scenes
    max_memory_bytes_per_tenant: int = 0  # 0: only max_memory_bytes
    max_grid_build_queries: int = 0  # exact distance queries one mesh grid build may make


@dataclass(frozen=True)
class ServerInfo:
    version: str
    grpc_version: str
    limits: Limits
    capabilities: Tuple[str, ...]
    threads: int
    num_scenes: int  # the caller's tenant's (the server's, without authentication)
    num_meshes: int
    memory_bytes: int
    replica_id: str  # --replica_id (default the host name): what placement ranks (taxel.ReplicaSet)
    proto: "service_pb2.ServerInfo" = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, p) -> "ServerInfo":
        l = p.limits
        return cls(p.version, p.grpc_version,
                   Limits(l.max_message_bytes, l.max_scenes, l.max_envs_per_scene, l.max_probes_per_scene,
                          l.max_triangles_per_mesh, l.max_memory_bytes, l.max_scenes_per_tenant,
                          l.max_memory_bytes_per_tenant, l.max_grid_build_queries),
                   tuple(p.capabilities), p.threads, p.num_scenes, p.num_meshes, p.memory_bytes, p.replica_id, p)


@dataclass(frozen=True)
class MeshGridInfo:
    """A mesh's narrow-band signed-distance grid (sensors with sdf_backend="GRID"), as measured
    against the exact signed distance after building (random band points, vertices, edge midpoints)."""
    requested_max_error: float  # m
    max_error: float            # m, largest |grid - exact| over the check points
    p99_error: float            # m
    cell_size: float            # m
    band: float                 # m: probes of radius <= band use it
    bytes: int                  # counted against --max_memory_bytes
    num_check_points: int
    num_bricks: int

    @classmethod
    def from_proto(cls, g) -> "MeshGridInfo":
        return cls(g.requested_max_error, g.max_error, g.p99_error, g.cell_size, g.band, g.bytes,
                   g.num_check_points, g.num_bricks)


@dataclass(frozen=True)
class MeshInfo:
    """What the server said when a mesh was uploaded."""
    mesh_id: str
    newly_added: bool
    num_vertices: int
    num_triangles: int
    watertight: bool  # closed and consistently oriented; else signs come from the winding number
    was_inside_out: bool
    grid: Optional[MeshGridInfo] = None  # when the mesh has a grid

    @classmethod
    def from_proto(cls, p) -> "MeshInfo":
        grid = MeshGridInfo.from_proto(p.grid) if p.HasField("grid") else None
        return cls(p.mesh_id, p.newly_added, p.num_vertices, p.num_triangles, p.watertight, p.was_inside_out,
                   grid)


@dataclass(frozen=True)
class LinkInfo:
    name: str          # "entity/link"
    index: int         # canonical link index (the value of `partner` outputs)
    entity: str
    kind: str          # "robot", "object", "projectile", "terrain", "static"
    moving_index: int  # index on the poses' second axis; -1 if fixed


@dataclass(frozen=True)
class OutputInfo:
    channel: str            # "contact", "depth", "normal", "area", "partner", "force", "torque"
    dtype: np.dtype         # float32, bool (contact) or int32 (partner)
    shape: Tuple[int, ...]  # [num_envs, <layout>, <3 for vectors>]


@dataclass(frozen=True)
class SensorInfo:
    name: str
    sensor_id: int
    kind: str                     # "contact_probe", "contact_depth_probe", "kinematic_taxel", ...
    link: str                     # "entity/link"
    num_probes: int
    layout: Tuple[int, ...]       # (n_probes,) or (rows, cols)
    outputs: Dict[str, OutputInfo]
    has_imperfections: bool       # the measured branch differs from the ground truth
    history_length: int           # samples kept for Scene.read(history=...)
    proto: "service_pb2.SensorInfo" = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, p) -> "SensorInfo":
        outputs = {o.channel: OutputInfo(o.channel, DTYPES.get(o.dtype, np.dtype("f4")), tuple(o.shape))
                   for o in p.outputs}
        return cls(p.name, p.sensor_id, _kind_name(scene_pb2.SensorKind, p.kind), p.link, p.num_probes,
                   tuple(p.layout), outputs, p.has_imperfections, p.history_length, p)


@dataclass(frozen=True)
class ContactMatrixInfo:
    """The contact matrix of a scene: its axes and size."""
    rows: Tuple[str, ...]      # row b is rows[b]: robot links ("<link>", or "<entity>/<link>" when ambiguous)
    columns: Tuple[str, ...]   # column p is columns[p]: "terrain", "robot/<row>", "object/<slot>", ...
    source: str                # "estimated" or "reported"
    friction: bool             # the friction matrix is kept too
    bytes: int                 # E × B × P × 3 × 4, per matrix
    row_index: Dict[str, int] = field(repr=False)     # row name -> row
    column_index: Dict[str, int] = field(repr=False)  # column name -> column
    sdf_backend: str = "exact"  # "exact" or "grid": where sampled pairs read meshes from
    gradients: bool = False     # the gradient is kept too (12 × bytes)

    @property
    def shape(self) -> Tuple[int, int]:
        """(B, P): rows and columns."""
        return len(self.rows), len(self.columns)

    @classmethod
    def from_proto(cls, p) -> "ContactMatrixInfo":
        return cls(tuple(p.rows), tuple(p.columns), _kind_name(scene_pb2.ContactSource, p.source), p.friction,
                   p.bytes, {n: i for i, n in enumerate(p.rows)}, {n: i for i, n in enumerate(p.columns)},
                   _kind_name(scene_pb2.SdfBackend, p.sdf_backend), p.gradients)


_AMBIGUOUS = -1


@dataclass(frozen=True)
class SceneInfo:
    name: str
    num_envs: int
    seed: int
    links: Tuple[LinkInfo, ...]     # canonical order
    moving_links: Tuple[str, ...]   # the second axis of the poses, in order
    sensors: Dict[str, SensorInfo]  # by name, in the server's order
    step: int                       # steps taken so far
    memory_bytes: int
    proto: "service_pb2.SceneInfo" = field(repr=False, compare=False)
    contact_matrix: Optional[ContactMatrixInfo] = None  # None when the scene has no contact matrix

    @classmethod
    def from_proto(cls, p: "service_pb2.SceneInfo") -> "SceneInfo":
        links = tuple(LinkInfo(l.name, l.index, l.entity, _kind_name(scene_pb2.EntityKind, l.kind), l.moving_index)
                      for l in p.links)
        sensors = {s.name: SensorInfo.from_proto(s) for s in p.sensors}
        cm = ContactMatrixInfo.from_proto(p.contact_matrix) if p.HasField("contact_matrix") else None
        return cls(p.name, p.num_envs, p.seed, links, tuple(p.moving_links), sensors, p.step, p.memory_bytes, p,
                   contact_matrix=cm)

    @cached_property
    def reading_bytes_per_env(self) -> int:
        """Bytes of one env's readings: every output of every sensor, one branch, dense."""
        return sum(o.dtype.itemsize * math.prod(o.shape[1:]) for s in self.sensors.values() for o in s.outputs.values())

    def link(self, name_or_index: Union[str, int]) -> Optional[LinkInfo]:
        """A link by "entity/link" name, bare link name or canonical index (None if unknown)."""
        for l in self.links:
            if name_or_index in (l.name, l.index) or l.name.split("/", 1)[-1] == name_or_index:
                return l
        return None

    @cached_property
    def _link_names(self) -> Dict[str, int]:
        """Every name a link answers to -> its index (_AMBIGUOUS when several links do). Full
        names "entity/link" are unique; the other aliases: the bare link name, the entity name of a
        single-link entity, and the contact-matrix column of the link ("terrain" for the first
        terrain link, "robot/<link>" and "robot/<entity>/<link>", "<kind>/<entity>" for the first
        link of an object, projectile or static entity)."""
        aliases: Dict[str, List[int]] = {}

        def add(name, index):
            hits = aliases.setdefault(name, [])
            if index not in hits:
                hits.append(index)

        per_entity: Dict[str, List[LinkInfo]] = {}
        robot_bare: Dict[str, int] = {}
        for l in self.links:
            per_entity.setdefault(l.entity, []).append(l)
            if l.kind == "robot":
                bare = l.name.split("/", 1)[-1]
                robot_bare[bare] = robot_bare.get(bare, 0) + 1
        for l in self.links:
            bare = l.name.split("/", 1)[-1]
            add(bare, l.index)
            if len(per_entity[l.entity]) == 1:
                add(l.entity, l.index)
            if l.kind == "robot":
                add("robot/" + l.name, l.index)
                if robot_bare[bare] == 1:
                    add("robot/" + bare, l.index)
        first_terrain = next((l.index for l in self.links if l.kind == "terrain"), None)
        if first_terrain is not None and "terrain" not in aliases:
            add("terrain", first_terrain)  # every terrain link falls in the "terrain" column
        for entity, links in per_entity.items():
            if links[0].kind in ("object", "projectile", "static"):
                add(f"{links[0].kind}/{entity}", links[0].index)
        out = {name: (hits[0] if len(hits) == 1 else _AMBIGUOUS) for name, hits in aliases.items()}
        out.update({l.name: l.index for l in self.links})  # full names win
        return out

    def link_index(self, name: Union[str, int], field: str = "link") -> int:
        """The canonical index of a link given by index, full name "entity/link", bare link name or
        single-link entity name (when unambiguous), or contact-matrix column name ("terrain",
        "object/ball", "robot/pad"). ValueError naming `field` when unknown or ambiguous."""
        if not isinstance(name, str):
            index = int(name)
            if not 0 <= index < len(self.links):
                raise ValueError(f"{field}: link index {index} out of range [0, {len(self.links)})")
            return index
        index = self._link_names.get(name)
        if index is None:
            known = ", ".join(l.name for l in self.links[:12]) + (", ..." if len(self.links) > 12 else "")
            raise ValueError(f"{field}: no link named {name!r} in scene {self.name!r}; links: {known}")
        if index == _AMBIGUOUS:
            matches = [l.name for l in self.links if l.name.split("/", 1)[-1] == name or l.entity == name]
            raise ValueError(f"{field}: {name!r} is ambiguous ({', '.join(matches)}); use the full 'entity/link' name")
        return index
