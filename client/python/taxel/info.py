"""Read-only descriptions returned by the server: server, scene, link, sensor and output infos.

Each keeps the wire message it came from in `.proto`.
"""
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np

from taxel._pb import scene_pb2, service_pb2
from taxel.tensors import DTYPES

__all__ = ["Limits", "ServerInfo", "MeshInfo", "LinkInfo", "OutputInfo", "SensorInfo", "SceneInfo"]


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
    max_memory_bytes: int  # 0 = unlimited


@dataclass(frozen=True)
class ServerInfo:
    version: str
    grpc_version: str
    limits: Limits
    capabilities: Tuple[str, ...]
    threads: int
    num_scenes: int
    num_meshes: int
    memory_bytes: int
    proto: "service_pb2.ServerInfo" = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, p) -> "ServerInfo":
        l = p.limits
        return cls(p.version, p.grpc_version,
                   Limits(l.max_message_bytes, l.max_scenes, l.max_envs_per_scene, l.max_probes_per_scene,
                          l.max_triangles_per_mesh, l.max_memory_bytes),
                   tuple(p.capabilities), p.threads, p.num_scenes, p.num_meshes, p.memory_bytes, p)


@dataclass(frozen=True)
class MeshInfo:
    """What the server said when a mesh was uploaded."""
    mesh_id: str
    newly_added: bool
    num_vertices: int
    num_triangles: int
    watertight: bool  # closed and consistently oriented; else signs come from the winding number
    was_inside_out: bool

    @classmethod
    def from_proto(cls, p) -> "MeshInfo":
        return cls(p.mesh_id, p.newly_added, p.num_vertices, p.num_triangles, p.watertight, p.was_inside_out)


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

    @classmethod
    def from_proto(cls, p) -> "SceneInfo":
        links = tuple(LinkInfo(l.name, l.index, l.entity, _kind_name(scene_pb2.EntityKind, l.kind), l.moving_index)
                      for l in p.links)
        sensors = {s.name: SensorInfo.from_proto(s) for s in p.sensors}
        return cls(p.name, p.num_envs, p.seed, links, tuple(p.moving_links), sensors, p.step, p.memory_bytes, p)

    def link(self, name_or_index) -> Optional[LinkInfo]:
        """A link by "entity/link" name, bare link name or canonical index (None if unknown)."""
        for l in self.links:
            if name_or_index in (l.name, l.index) or l.name.split("/", 1)[-1] == name_or_index:
                return l
        return None
