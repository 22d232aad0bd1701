"""Scene specs from MJCF and URDF files, through `taxel-cli import` (MuJoCo's own compiler).

    spec = taxel.SceneSpec.from_mjcf("humanoid.xml", bodies=["*_foot", "*_hand"], num_envs=1024)
    grid, normal = spec.grid_on_box_face("paddle", 0, face="+z", rows=8, cols=4)
    spec.add_sensor(taxel.KinematicTaxel("skin", link="paddle", probe_local_pos=grid,
                                         probe_local_normal=normal, probe_radius=0.001))
    scene = client.create_scene(spec)        # uploads the imported meshes

The import itself is done by the C++ CLI (`taxel-cli import`, which links MuJoCo): it is found as
$TAXEL_CLI, else `taxel-cli` on PATH, else in the build tree next to this package
(build/client/cpp/taxel-cli). The mapping of bodies and geoms is in docs/reference.md, "Importing
MJCF and URDF"; the JSON it prints is the scene bundle of taxel-cli (README, "taxel-cli").
"""
import json
import os
import shutil
import subprocess
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
from google.protobuf import json_format

from taxel._pb import scene_pb2, tensor_pb2
from taxel.shapes import Box, Capsule, Cylinder, HalfSpace, Heightfield, Mesh, Shape, Sphere
from taxel.tensors import decode

__all__ = ["find_cli", "import_bundle", "spec_from_bundle", "grid_on_box_face"]

_KIND_NAMES = {scene_pb2.ROBOT: "robot", scene_pb2.OBJECT: "object", scene_pb2.PROJECTILE: "projectile",
               scene_pb2.TERRAIN: "terrain", scene_pb2.STATIC: "static"}
_ORDER_NAMES = {tensor_pb2.WXYZ: "wxyz", tensor_pb2.XYZW: "xyzw"}


def find_cli() -> str:
    """The taxel-cli to run: $TAXEL_CLI, `taxel-cli` on PATH, or the build tree's. FileNotFoundError
    saying where it looked otherwise."""
    env = os.environ.get("TAXEL_CLI")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"TAXEL_CLI={env!r} is not an executable file")
        return env
    on_path = shutil.which("taxel-cli")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.normpath(os.path.join(here, "..", "..", "..", "build", "client", "cpp", "taxel-cli"))
    if os.access(built, os.X_OK):
        return built
    raise FileNotFoundError("taxel-cli not found: set TAXEL_CLI, put taxel-cli on PATH, or build it "
                            f"(make; looked for {built})")


def import_bundle(path: Union[str, "os.PathLike[str]"], entity: Optional[str] = None, bodies: Optional[Iterable[str]] = None,
                  groups: Optional[Iterable[int]] = None, num_envs: int = 1, name: Optional[str] = None) -> dict:
    """Runs `taxel-cli import` on `path` and returns the parsed bundle {"scene", "meshes",
    "geom_names"}. ValueError carrying the CLI's message (MuJoCo's error text for a file that does
    not load, the flag for a bad option)."""
    if isinstance(bodies, str):
        bodies = [bodies]
    args = [find_cli(), "import", os.fspath(path), f"--num_envs={int(num_envs)}"]
    if entity is not None:
        args.append(f"--entity={entity}")
    if name is not None:
        args.append(f"--scene={name}")
    for glob in bodies or ():
        args.append(f"--bodies={glob}")
    if groups is not None:
        args.append("--groups=" + ",".join(str(int(g)) for g in groups))
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        message = proc.stderr.strip()
        raise ValueError(message[len("taxel-cli: "):] if message.startswith("taxel-cli: ") else
                         message or f"taxel-cli import failed with status {proc.returncode}")
    return json.loads(proc.stdout)


def _pose(p) -> dict:
    kw = {}
    if len(p.position):
        kw["pos"] = tuple(p.position)
    if len(p.quaternion):
        if p.quat_order not in _ORDER_NAMES:
            raise ValueError("pose.quat_order: expected WXYZ or XYZW")
        kw["quat"], kw["quat_order"] = tuple(p.quaternion), _ORDER_NAMES[p.quat_order]
    return kw


def _shape(s, meshes: Dict[str, dict], field: str) -> Shape:
    kw = _pose(s.pose) if s.HasField("pose") else {}
    kind = s.WhichOneof("geometry")
    if kind == "sphere":
        return Sphere(s.sphere.radius, **kw)
    if kind == "box":
        return Box(tuple(s.box.half_extents), **kw)
    if kind == "capsule":
        return Capsule(s.capsule.radius, s.capsule.half_length, **kw)
    if kind == "cylinder":
        return Cylinder(s.cylinder.radius, s.cylinder.half_length, **kw)
    if kind == "half_space":
        return HalfSpace(**kw)
    if kind == "heightfield":
        return Heightfield(decode(s.heightfield.heights), s.heightfield.dx, s.heightfield.dy, **kw)
    if kind == "mesh":
        scale = tuple(s.mesh.scale) or None
        m = meshes.get(s.mesh.mesh_id)
        if m is None:  # uploaded beforehand: keep the reference
            return Mesh(mesh_id=s.mesh.mesh_id, scale=scale, **kw)
        v = np.asarray(m["vertices"], dtype=np.float64).reshape(-1, 3)
        t = np.asarray(m["triangles"], dtype=np.int32).reshape(-1, 3)
        return Mesh(vertices=v, triangles=t, scale=scale, **kw)
    raise ValueError(f"{field}: expected a shape")


def spec_from_bundle(bundle: dict):
    """A taxel.SceneSpec from a scene bundle (the dict of `import_bundle`, or json.load of the file
    `taxel-cli import` wrote): entities with inline meshes (create_scene uploads them), and the
    contact matrix if one was added. The bundle's geom names are kept in `spec.geom_names`."""
    from taxel.spec import Entity, Link, SceneSpec  # spec.py imports this module

    if "scene" not in bundle:
        raise ValueError("bundle: expected a 'scene' key (a taxel-cli import bundle)")
    pb = json_format.ParseDict(bundle["scene"], scene_pb2.SceneSpec())
    if len(pb.sensors):
        raise ValueError("bundle.scene.sensors: not read here; add sensors with SceneSpec.add_sensor")
    meshes = {m["mesh_id"]: m for m in bundle.get("meshes", [])}
    spec = SceneSpec(pb.name, num_envs=pb.num_envs or 1, seed=pb.seed)
    for ei, e in enumerate(pb.entities):
        entity = Entity(e.name, _KIND_NAMES[e.kind])
        for li, l in enumerate(e.links):
            field = f"scene.entities[{ei}].links[{li}]"
            shapes = [_shape(s, meshes, f"{field}.shapes[{si}]") for si, s in enumerate(l.shapes)]
            entity.add_link(Link(l.name, shapes, **(_pose(l.pose) if l.HasField("pose") else {})))
        spec.add_entity(entity)
    if pb.HasField("contact_matrix") and len(pb.contact_matrix.bodies):
        spec.set_contact_matrix(pb.contact_matrix)
    spec.geom_names = {k: list(v) for k, v in bundle.get("geom_names", {}).items()}
    return spec


def _quat_matrix(q: Sequence[float], order: str) -> np.ndarray:
    w, x, y, z = q if order == "wxyz" else (q[3], q[0], q[1], q[2])
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


_FACES = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0), "+z": (2, 1.0), "-z": (2, -1.0)}


def grid_on_box_face(spec, link: str, shape: Union[int, str], face: str = "+z", rows: int = 4, cols: int = 4,
                     pitch: Optional[Tuple[float, float]] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Probe centres on one face of a Box shape, in the LINK frame (what SensorSpec.probe_local_pos
    expects), and the face's outward unit normal in the link frame.

    `link`: "entity/link" or a bare link name (unique in the spec). `shape`: the index of the box in
    the link's shapes, or its geom name in the source file (spec.geom_names). `face`: "+x", "-x",
    "+y", "-y", "+z" or "-z" of the box's own frame. For face ±k, columns run along box axis
    (k + 1) mod 3 and rows along (k + 2) mod 3 (so "+z": columns along x, rows along y, as the
    server's grid layouts). Without `pitch` the face is split into rows × cols equal cells and the
    probes sit at the cell centres; with `pitch` = (row pitch, column pitch) in metres the grid is
    centred on the face with that spacing (ValueError if it does not fit).
    Returns (positions [rows, cols, 3], normal [3]), metres."""
    if face not in _FACES:
        raise ValueError(f"face: expected one of {sorted(_FACES)}, got {face!r}")
    rows, cols = int(rows), int(cols)
    if rows < 1 or cols < 1:
        raise ValueError(f"rows, cols: expected >= 1, got {rows}, {cols}")
    qualified, box = _find_box(spec, link, shape)
    axis, sign = _FACES[face]
    col_axis, row_axis = (axis + 1) % 3, (axis + 2) % 3
    h = np.asarray(box.half_extents)
    if pitch is None:
        u = -h[col_axis] + (np.arange(cols) + 0.5) * (2 * h[col_axis] / cols)
        v = -h[row_axis] + (np.arange(rows) + 0.5) * (2 * h[row_axis] / rows)
    else:
        pr, pc = float(pitch[0]), float(pitch[1])
        if (cols - 1) * pc > 2 * h[col_axis] + 1e-12 or (rows - 1) * pr > 2 * h[row_axis] + 1e-12:
            raise ValueError(f"pitch: a {rows} x {cols} grid at {pitch} m does not fit the {face} face of "
                             f"{qualified} ({2 * h[row_axis]} x {2 * h[col_axis]} m)")
        u = (np.arange(cols) - (cols - 1) / 2) * pc
        v = (np.arange(rows) - (rows - 1) / 2) * pr
    p_S = np.zeros((rows, cols, 3))
    p_S[:, :, col_axis] = u[None, :]
    p_S[:, :, row_axis] = v[:, None]
    p_S[:, :, axis] = sign * h[axis]
    n_S = np.zeros(3)
    n_S[axis] = sign
    R = np.eye(3) if box.quat is None else _quat_matrix(box.quat, box.quat_order)
    t = np.zeros(3) if box.pos is None else np.asarray(box.pos, dtype=np.float64)
    return p_S @ R.T + t, R @ n_S


def _find_box(spec, link: str, shape):
    matches = []
    for e in spec.entities:
        for l in e.links:
            if link in (f"{e.name}/{l.name}", l.name):
                matches.append((f"{e.name}/{l.name}", l))
    if not matches:
        raise ValueError(f"link: no link {link!r} in the spec")
    if len(matches) > 1:
        raise ValueError(f"link: {link!r} is ambiguous ({', '.join(m[0] for m in matches)}); use 'entity/link'")
    qualified, l = matches[0]
    if isinstance(shape, str):
        names: List[str] = getattr(spec, "geom_names", {}).get(qualified, [])
        if shape not in names:
            raise ValueError(f"shape: {qualified} has no geom named {shape!r} (names: {names})")
        index = names.index(shape)
    else:
        index = int(shape)
    if not 0 <= index < len(l.shapes):
        raise ValueError(f"shape: {qualified} has {len(l.shapes)} shapes, no index {index}")
    box = l.shapes[index]
    if not isinstance(box, Box):
        raise ValueError(f"shape: shape {index} of {qualified} is a {type(box).__name__}, not a Box")
    return qualified, box
