"""A Pythonic builder for scene specs (taxel.v1.SceneSpec), shapes and sensors.

    spec = taxel.SceneSpec("grasp", num_envs=1024, seed=0)
    hand = spec.robot("hand")
    hand.link("pad", shapes=[taxel.Box(half_extents=(0.01, 0.01, 0.002), pos=(0, 0, -0.002))])
    spec.object("ball", shapes=[taxel.Mesh(vertices=v, triangles=t)])   # uploaded by create_scene
    spec.terrain(shapes=[taxel.HalfSpace()], pos=(0, 0, -0.5))
    spec.add_sensor(taxel.KinematicTaxel("skin", link="pad", probe_local_pos=grid,
                                         probe_radius=0.002, normal_stiffness=2000))
    spec.set_contact_matrix(bodies=["pad"], partners=["terrain", "object/ball"])   # optional

Units are SI (m, s, N); a link's shapes and a sensor's probes are in that link's frame. Shapes and
poses: taxel/shapes.py; sensors and how their keyword options map onto the proto: taxel/sensors.py.
"""
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from taxel._pb import scene_pb2
from taxel._protofields import set_field
from taxel._types import ArrayLike, Quat, QuatOrder, Vec3
from taxel.contact import CONTACT_SPEC_KEYWORDS, ContactMatrixSpec, NonlinearLaw
from taxel.sensors import (ContactDepthProbe, ContactProbe, ElastomerTaxel, KinematicTaxel, ProximityTaxel,
                           Sensor)
from taxel.shapes import (WXYZ, XYZW, Box, Capsule, Cylinder, HalfSpace, Heightfield, ImplicitShape, ImplicitSphere,
                          Mesh, MeshResolver, Shape, SmoothPolytope, Sphere, Superellipsoid, SuperellipticCylinder,
                          TruncatedCone, _fill_pose, _fmt_pose, quat_order_enum)

__all__ = [
    "XYZW", "WXYZ", "quat_order_enum", "Shape", "Sphere", "Box", "Capsule", "Cylinder", "HalfSpace",
    "Heightfield", "Mesh", "Link", "Asset", "Entity", "Sensor", "ContactProbe", "ContactDepthProbe",
    "KinematicTaxel", "ElastomerTaxel", "ProximityTaxel", "SceneSpec", "ContactMatrixSpec", "NonlinearLaw",
    "ImplicitShape", "ImplicitSphere", "Superellipsoid", "SmoothPolytope", "SuperellipticCylinder", "TruncatedCone",
]

# ------------------------------------------------------------------------------------------------
# Links, assets, entities

_KINDS = {"robot": scene_pb2.ROBOT, "object": scene_pb2.OBJECT, "projectile": scene_pb2.PROJECTILE,
          "terrain": scene_pb2.TERRAIN, "static": scene_pb2.STATIC}
_FIXED = ("terrain", "static")


def _shape_list(shapes, field: str) -> List[Shape]:
    if isinstance(shapes, Shape):
        shapes = [shapes]
    out = list(shapes or [])
    for i, s in enumerate(out):
        if not isinstance(s, Shape):
            raise TypeError(f"{field}[{i}]: expected a taxel shape (Sphere, Box, ...), got {type(s).__name__}")
    return out


class Link:
    """A rigid link: a name (unique within its entity, no '/') and its shapes. `pos`/`quat` are the
    fixed pose in world (X_WL) of a TERRAIN or STATIC link; moving links get theirs every step."""

    def __init__(self, name: str, shapes: Iterable[Shape] = (), pos: Vec3 = None, quat: Quat = None,
                 quat_order: QuatOrder = None):
        self.name = name
        self.shapes = _shape_list(shapes, f"Link {name!r} shapes")
        self.pos, self.quat, self.quat_order = pos, quat, quat_order
        if quat is not None:
            quat_order_enum(quat_order, f"Link {name!r} quat_order")

    def add_shape(self, shape: Shape) -> "Link":
        self.shapes.extend(_shape_list([shape], f"Link {self.name!r} shapes"))
        return self

    def to_proto(self, resolve_mesh: Optional[MeshResolver] = None) -> "scene_pb2.Link":
        out = scene_pb2.Link(name=self.name)
        for s in self.shapes:
            out.shapes.append(s.to_proto(resolve_mesh))
        if self.pos is not None or self.quat is not None:
            _fill_pose(out.pose, self.pos, self.quat, self.quat_order, f"Link {self.name!r}")
        return out

    def __repr__(self):
        return f"Link({self.name!r}, shapes={self.shapes!r}{_fmt_pose(self.pos, self.quat, self.quat_order)})"


class Asset:
    """An alternative geometry for an OBJECT slot: one shape list per link of the entity. For a
    single-link object, `link_shapes` may be a flat list of shapes."""

    def __init__(self, name: str, link_shapes: Iterable[Union[Shape, Iterable[Shape]]]):
        self.name = name
        items = list(link_shapes)
        if items and all(isinstance(s, Shape) for s in items):
            items = [items]
        self.link_shapes = [_shape_list(s, f"Asset {name!r} link_shapes[{i}]") for i, s in enumerate(items)]

    def to_proto(self, resolve_mesh: Optional[MeshResolver] = None) -> "scene_pb2.Asset":
        out = scene_pb2.Asset(name=self.name)
        for shapes in self.link_shapes:
            lst = out.link_shapes.add()
            for s in shapes:
                lst.shapes.append(s.to_proto(resolve_mesh))
        return out

    def __repr__(self):
        return f"Asset({self.name!r}, link_shapes={self.link_shapes!r})"


LinksArg = Union[Iterable[Link], Mapping[str, Iterable[Shape]]]
"""An entity's links: Link objects, or a dict {link name: shapes}."""

AssetsArg = Union[Iterable[Asset], Mapping[str, Iterable[Union[Shape, Iterable[Shape]]]]]
"""An object's alternative geometries: Asset objects, or a dict {asset name: link shapes}."""


class Entity:
    """A robot, object slot, projectile, terrain or static body: a kind and one or more links.

    `links`: Link objects, or a dict {link name: shapes}. OBJECT only: `assets` (Asset objects or
    a dict {asset name: link shapes}) are assets 1..k — asset 0 is the links' own shapes — and
    `env_assets` gives each env's asset index (-1 = empty slot; omitted = asset 0 everywhere).
    """

    def __init__(self, name: str, kind: str, links: LinksArg = (), assets: AssetsArg = (),
                 env_assets: Optional[ArrayLike] = None):
        if kind not in _KINDS:
            raise ValueError(f"Entity {name!r}: kind must be one of {sorted(_KINDS)}, got {kind!r}")
        self.name, self.kind = name, kind
        self.links: List[Link] = []
        if isinstance(links, dict):
            links = [Link(n, s) for n, s in links.items()]
        for link in links or ():
            self.add_link(link)
        if isinstance(assets, dict):
            assets = [Asset(n, s) for n, s in assets.items()]
        self.assets: List[Asset] = list(assets or [])
        if (self.assets or env_assets is not None) and kind != "object":
            raise ValueError(f"Entity {name!r}: only objects have assets and env_assets")
        self.env_assets = None if env_assets is None else [int(a) for a in np.asarray(env_assets).reshape(-1)]

    def link(self, name: str, shapes: Iterable[Shape] = (), pos: Vec3 = None, quat: Quat = None,
             quat_order: QuatOrder = None) -> Link:
        """Adds a link and returns it."""
        return self.add_link(Link(name, shapes, pos=pos, quat=quat, quat_order=quat_order))

    def add_link(self, link: Link) -> Link:
        if not isinstance(link, Link):
            raise TypeError(f"Entity {self.name!r}: expected a taxel.Link, got {type(link).__name__}")
        if (link.pos is not None or link.quat is not None) and self.kind not in _FIXED:
            raise ValueError(f"Entity {self.name!r} link {link.name!r}: only terrain and static links have a "
                             "fixed pose; moving links get theirs from each step")
        self.links.append(link)
        return link

    def asset(self, name: str, link_shapes: Iterable[Union[Shape, Iterable[Shape]]]) -> Asset:
        """Adds an asset (OBJECT only) and returns it; its index is len(assets) after adding."""
        if self.kind != "object":
            raise ValueError(f"Entity {self.name!r}: only objects have assets")
        self.assets.append(Asset(name, link_shapes))
        return self.assets[-1]

    def to_proto(self, resolve_mesh: Optional[MeshResolver] = None) -> "scene_pb2.Entity":
        out = scene_pb2.Entity(name=self.name, kind=_KINDS[self.kind])
        for link in self.links:
            out.links.append(link.to_proto(resolve_mesh))
        for a in self.assets:
            out.assets.append(a.to_proto(resolve_mesh))
        if self.env_assets is not None:
            out.env_assets[:] = self.env_assets
        return out

    def __repr__(self):
        return f"Entity({self.name!r}, {self.kind!r}, links={[l.name for l in self.links]})"


# ------------------------------------------------------------------------------------------------
# The scene


_SCENE_CORE_FIELDS = ("name", "num_envs", "seed", "entities", "sensors", "contact_matrix")


class SceneSpec:
    """A scene: `num_envs` parallel environments, a `seed`, entities, sensors and optionally the
    partner-resolved contact matrix.

    Links are numbered entity by entity, link by link, in the order they are added; the scene info
    (`Scene.info().moving_links`) gives the order of the poses' second axis.

    Contact matrix (docs/reference.md#contact-laws; see taxel.ContactMatrixSpec for the details), by keywords:
      contact_bodies: robot link names or globs, or "all" — the rows (required to have a matrix);
      contact_partners: "terrain", "robot/<link>", "object/<slot>", "projectile/<slot>",
        "static/<name>" or globs — the columns (default ["terrain"]);
      contact_source: "estimated" (default: Taxel computes the forces) or "reported" (the
        simulator sends its contacts with each step);
      contact_friction: also keep the friction matrix (default False);
      contact_law: ESTIMATED pressure law, a taxel.NonlinearLaw or a dict of its options;
      contact_sample_spacing: ESTIMATED surface sampling step (m) for pairs without a closed form;
      contact_sdf_backend: ESTIMATED: "exact" (default) or "grid" (meshes from their narrow-band grid).
      contact_gradients: ESTIMATED, implicit shapes: also keep each cell's gradient (`ContactMatrix.gradient`).
    or `contact_matrix=` a taxel.ContactMatrixSpec / a dict of the proto's field names, or later
    with `set_contact_matrix(...)`.
    """

    def __init__(self, name: str, num_envs: int = 1, seed: int = 0,
                 contact_bodies: Optional[Union[str, Sequence[str]]] = None,
                 contact_partners: Optional[Union[str, Sequence[str]]] = None,
                 contact_source: Optional[Union[str, int]] = None, contact_friction: Optional[bool] = None,
                 contact_law: Union[NonlinearLaw, Dict[str, Any], None] = None,
                 contact_sample_spacing: Optional[float] = None, contact_sdf_backend: Union[str, int, None] = None,
                 contact_gradients: Optional[bool] = None, contact_matrix: Optional[ContactMatrixSpec] = None,
                 **fields: Any):
        self.name, self.num_envs, self.seed = name, int(num_envs), int(seed)
        self.entities: List[Entity] = []
        self.sensors: List[Sensor] = []
        self.contact_matrix: Optional[ContactMatrixSpec] = None
        contact_kw = {k: v for k, v in (("contact_bodies", contact_bodies), ("contact_partners", contact_partners),
                                         ("contact_source", contact_source), ("contact_friction", contact_friction),
                                         ("contact_law", contact_law),
                                         ("contact_sample_spacing", contact_sample_spacing),
                                         ("contact_sdf_backend", contact_sdf_backend),
                                         ("contact_gradients", contact_gradients)) if v is not None}
        if contact_matrix is not None and contact_kw:
            raise TypeError("SceneSpec: give the contact matrix either as contact_matrix= or with the contact_* "
                            "keywords, not both")
        if contact_kw:
            if "contact_bodies" not in contact_kw:
                raise ValueError(f"SceneSpec: {', '.join(contact_kw)} without contact_bodies; the contact matrix "
                                 "needs its rows (robot link names, globs or 'all')")
            self.set_contact_matrix(**{CONTACT_SPEC_KEYWORDS[k]: v for k, v in contact_kw.items()})
        elif contact_matrix is not None:
            self.set_contact_matrix(contact_matrix)
        # Other taxel.v1.SceneSpec fields by name (dicts for messages), e.g. scene-level options
        # added to the proto later.
        known = [f for f in scene_pb2.SceneSpec.DESCRIPTOR.fields_by_name if f not in _SCENE_CORE_FIELDS]
        for key in fields:
            if key not in known:
                accepted = known + ["contact_matrix"] + list(CONTACT_SPEC_KEYWORDS)
                raise TypeError(f"SceneSpec: unknown field {key!r}; accepted: {', '.join(accepted)}")
        self.fields = dict(fields)
        self.geom_names: Dict[str, List[str]] = {}  # "entity/link" -> source geom name per shape (imports)
        probe = scene_pb2.SceneSpec()
        for key, value in self.fields.items():
            set_field(probe, key, value, "SceneSpec")  # validates the values now

    def set_contact_matrix(self, bodies: Union[str, Sequence[str]], partners: Union[str, Sequence[str]] = ("terrain",),
                           source: Union[str, int] = "estimated", friction: bool = False,
                           law: Union[NonlinearLaw, Dict[str, Any], None] = None,
                           sample_spacing: Optional[float] = None,
                           sdf_backend: Union[str, int, None] = None, gradients: bool = False) -> ContactMatrixSpec:
        """Sets (or replaces) the scene's contact matrix and returns it; the arguments are those of
        taxel.ContactMatrixSpec. `bodies` may also be a ContactMatrixSpec, a dict of the proto's
        field names, or a taxel.v1.ContactMatrixSpec; None removes the matrix."""
        if bodies is None:
            self.contact_matrix = None
            return None
        if isinstance(bodies, ContactMatrixSpec):
            cm = bodies
        elif isinstance(bodies, dict):
            cm = ContactMatrixSpec.from_dict(bodies)
        elif isinstance(bodies, scene_pb2.ContactMatrixSpec):
            cm = ContactMatrixSpec(list(bodies.bodies), list(bodies.partners) or ["terrain"], bodies.source,
                                   bodies.friction, bodies.law if bodies.HasField("law") else None,
                                   bodies.sample_spacing or None, bodies.sdf_backend, bodies.gradients)
        else:
            cm = ContactMatrixSpec(bodies, partners, source, friction, law, sample_spacing, sdf_backend, gradients)
        self.contact_matrix = cm
        return cm

    def add_entity(self, entity: Entity) -> Entity:
        if not isinstance(entity, Entity):
            raise TypeError(f"expected a taxel.Entity, got {type(entity).__name__}")
        self.entities.append(entity)
        return entity

    def _entity(self, name, kind, links, shapes, link, **kw) -> Entity:
        e = Entity(name, kind, links=links, **kw)
        if shapes is not None:
            e.link(link, shapes)
        return self.add_entity(e)

    def robot(self, name: str, links: LinksArg = (), shapes: Optional[Iterable[Shape]] = None,
              link: str = "body") -> Entity:
        """Adds a ROBOT (moving links; one pose per env and link each step)."""
        return self._entity(name, "robot", links, shapes, link)

    def object(self, name: str, links: LinksArg = (), shapes: Optional[Iterable[Shape]] = None, link: str = "body",
               assets: AssetsArg = (), env_assets: Optional[ArrayLike] = None) -> Entity:
        """Adds an OBJECT slot (moving; may hold a different asset per env, or be empty).
        `shapes` is a shortcut for one link named `link` ("body")."""
        return self._entity(name, "object", links, shapes, link, assets=assets, env_assets=env_assets)

    def projectile(self, name: str, links: LinksArg = (), shapes: Optional[Iterable[Shape]] = None,
                   link: str = "body") -> Entity:
        """Adds a PROJECTILE (moving)."""
        return self._entity(name, "projectile", links, shapes, link)

    def terrain(self, name: str = "terrain", links: LinksArg = (), shapes: Optional[Iterable[Shape]] = None,
                link: str = "body", pos: Vec3 = None, quat: Quat = None, quat_order: QuatOrder = None) -> Entity:
        """Adds TERRAIN (fixed, shared by all envs). `shapes` (+ `pos`/`quat`, the link's pose in
        world) is a shortcut for one link named `link` ("body")."""
        return self._fixed(name, "terrain", links, shapes, link, pos, quat, quat_order)

    def static(self, name: str, links: LinksArg = (), shapes: Optional[Iterable[Shape]] = None, link: str = "body",
               pos: Vec3 = None, quat: Quat = None, quat_order: QuatOrder = None) -> Entity:
        """Adds STATIC geometry (fixed, shared by all envs); same shortcut as `terrain`."""
        return self._fixed(name, "static", links, shapes, link, pos, quat, quat_order)

    def _fixed(self, name, kind, links, shapes, link, pos, quat, quat_order) -> Entity:
        e = Entity(name, kind, links=links)
        if shapes is not None:
            e.link(link, shapes, pos=pos, quat=quat, quat_order=quat_order)
        elif pos is not None or quat is not None:
            raise ValueError(f"{kind} {name!r}: pos/quat go with shapes (or on each Link)")
        return self.add_entity(e)

    def add_sensor(self, sensor: Sensor) -> Sensor:
        if not isinstance(sensor, Sensor):
            raise TypeError(f"expected a taxel sensor (KinematicTaxel, ...), got {type(sensor).__name__}")
        self.sensors.append(sensor)
        return sensor

    def meshes(self) -> List[Mesh]:
        """Every Mesh shape of the spec (links and assets)."""
        out = []
        for e in self.entities:
            for shapes in [l.shapes for l in e.links] + [s for a in e.assets for s in a.link_shapes]:
                out.extend(s for s in shapes if isinstance(s, Mesh))
        return out

    def to_proto(self, resolve_mesh: Optional[MeshResolver] = None) -> "scene_pb2.SceneSpec":
        """The wire spec. Inline meshes get their id from `resolve_mesh` (the client's upload), or
        else from the local content id."""
        out = scene_pb2.SceneSpec(name=self.name, num_envs=self.num_envs, seed=self.seed)
        for e in self.entities:
            out.entities.append(e.to_proto(resolve_mesh))
        for s in self.sensors:
            out.sensors.append(s.to_proto())
        if self.contact_matrix is not None:
            self.contact_matrix.to_proto(out.contact_matrix)
        for key, value in self.fields.items():
            set_field(out, key, value, "SceneSpec")
        return out

    # -- Import from MJCF / URDF (taxel/model_import.py; docs/reference.md, "Importing MJCF and URDF")

    @classmethod
    def from_mjcf(cls, path: Union[str, "os.PathLike[str]"], entity: Optional[str] = None,
                  bodies: Optional[Union[str, Iterable[str]]] = None, groups: Optional[Iterable[int]] = None,
                  num_envs: int = 1, name: Optional[str] = None) -> "SceneSpec":
        """A spec compiled from an MJCF file by MuJoCo (through `taxel-cli import`): one ROBOT entity
        (`entity`, default the model's name) whose links are the bodies that move, named after
        them; bodies welded to the world go to STATIC `<entity>_static`, planes and height fields
        there to TERRAIN `<entity>_terrain`. `bodies`: globs selecting bodies (default all);
        `groups`: geom groups to take (default: the geoms that can collide). Meshes are inline
        (create_scene uploads them). ValueError with MuJoCo's message when the file does not load."""
        from taxel.model_import import import_bundle, spec_from_bundle
        return spec_from_bundle(import_bundle(path, entity, bodies, groups, num_envs, name))

    @classmethod
    def from_urdf(cls, path: Union[str, "os.PathLike[str]"], entity: Optional[str] = None,
                  bodies: Optional[Union[str, Iterable[str]]] = None, groups: Optional[Iterable[int]] = None,
                  num_envs: int = 1, name: Optional[str] = None) -> "SceneSpec":
        """As from_mjcf, for a URDF file (MuJoCo's URDF reader: <collision> elements only, links
        welded to their parent fused into it, the root link's geoms on the world body)."""
        return cls.from_mjcf(path, entity, bodies, groups, num_envs, name)

    @classmethod
    def from_bundle(cls, bundle: Union[str, "os.PathLike[str]", Dict[str, Any]]) -> "SceneSpec":
        """A spec from a scene bundle: the dict, or the path of a JSON file `taxel-cli import` wrote."""
        from taxel.model_import import spec_from_bundle
        if not isinstance(bundle, dict):
            import json
            with open(bundle) as f:
                bundle = json.load(f)
        return spec_from_bundle(bundle)

    def grid_on_box_face(self, link: str, shape: Union[int, str], face: str = "+z", rows: int = 4, cols: int = 4,
                         pitch: Optional[Tuple[float, float]] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Probe centres [rows, cols, 3] on a face of a Box shape of `link`, in the link frame, and
        the face's outward normal [3] in the link frame; `shape` is the box's index in the link or
        its geom name in the imported file. See taxel.model_import.grid_on_box_face."""
        from taxel.model_import import grid_on_box_face
        return grid_on_box_face(self, link, shape, face, rows, cols, pitch)

    def __repr__(self):
        cm = "" if self.contact_matrix is None else f", contact_matrix={self.contact_matrix!r}"
        return (f"SceneSpec({self.name!r}, num_envs={self.num_envs}, seed={self.seed}, "
                f"entities={self.entities!r}, sensors={[s.name for s in self.sensors]}{cm})")


SpecLike = Union[SceneSpec, "scene_pb2.SceneSpec"]
