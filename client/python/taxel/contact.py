"""The partner-resolved contact matrix on the client side (docs/reference.md#contact-laws): which bodies and partners it
covers and where its forces come from (`ContactMatrixSpec`), the nonlinear contact law
(`NonlinearLaw`), and the simulator's own contacts sent with a step (`ReportedContacts`).

    spec = taxel.SceneSpec("walk", num_envs=4096, contact_bodies=["*_foot"],
                           contact_partners=["terrain", "object/*"], contact_friction=True)
    ...
    r = scene.step(poses, dt=0.02, quat_order="xyzw", read=taxel.Read(contact_matrix=True))
    r.contact_matrix.normal            # [E, B, P, 3] float32, N, world axes, force on the body
    r.contact_matrix.in_contact(1.0)   # [E, B] bool: some selected partner pushes with > 1 N

Rows are robot links ("<link>" when the name is unique among robot links, else "<entity>/<link>");
columns are "terrain" (every terrain link), "robot/<row name>", "object/<slot>",
"projectile/<slot>", "static/<name>", always in that canonical order whatever the selectors' order.
Unknown names and globs matching nothing are InvalidArgumentError at scene creation.
"""
import fnmatch
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

from taxel._pb import scene_pb2, service_pb2
from taxel._protofields import set_field
from taxel.tensors import as_numpy, encode_int32, encode_real

__all__ = ["NonlinearLaw", "ContactMatrixSpec", "ReportedContacts", "CONTACT_SPEC_KEYWORDS"]

_LAW_FIELDS = tuple(scene_pb2.NonlinearLawOptions.DESCRIPTOR.fields_by_name)


class NonlinearLaw:
    """Options of the nonlinear contact law (taxel.v1.NonlinearLawOptions; unset = server default):

        F_n = max(0, k_p·δ^n + k_c·S(δ/d_max)·v_n),  S(a) = a²(3 − 2a), a clipped to [0, 1]
        friction = −μ(s)·F_n·ŝ, μ going smoothly from μ_s (s ≤ v_s) to μ_d (s ≥ v_d)

    Keywords (defaults in brackets): stiffness k_p [1e5], exponent n [1.5], damping k_c [100],
    damping_depth d_max (m) [1e-3], static_friction μ_s [= μ_d], dynamic_friction μ_d [0.5],
    stiction_speed v_s (m/s) [0.01], transition_speed v_d (m/s) [0.05]. A force law (N) for a
    KinematicTaxel (`force_law="nonlinear", nonlinear_law=NonlinearLaw(...)`), a pressure law (Pa)
    for the estimated contact matrix (`contact_law=NonlinearLaw(...)`). The server validates the
    values (k_p ≥ 0, n > 0, k_c ≥ 0, d_max > 0, μ ≥ 0, 0 < v_s < v_d).
    """

    def __init__(self, **options):
        for key in options:
            if key not in _LAW_FIELDS:
                raise TypeError(f"NonlinearLaw: unknown option {key!r}; accepted: {', '.join(_LAW_FIELDS)}")
        self.options = {k: v for k, v in options.items() if v is not None}
        self.to_proto()  # validates the values now

    def to_proto(self) -> "scene_pb2.NonlinearLawOptions":
        out = scene_pb2.NonlinearLawOptions()
        for key, value in self.options.items():
            set_field(out, key, float(value), "NonlinearLaw")
        return out

    def __repr__(self):
        return "NonlinearLaw(" + ", ".join(f"{k}={v!r}" for k, v in self.options.items()) + ")"


def _names(value, field: str):
    if isinstance(value, str):
        return [value]
    out = list(value)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{field}[{i}]: expected a name or glob (str), got {type(v).__name__}")
    return out


_SOURCES = {"estimated": scene_pb2.ESTIMATED, "reported": scene_pb2.REPORTED}


_SDF_BACKENDS = {"exact": scene_pb2.EXACT, "grid": scene_pb2.GRID}


def _enum(value, names: Dict[str, int], field: str) -> int:
    """A name (any case) or a wire value of `names`; ValueError naming `field` otherwise."""
    if isinstance(value, str) and value.lower() in names:
        return names[value.lower()]
    if not isinstance(value, str) and value in names.values():
        return int(value)
    raise ValueError(f"{field}: expected {' or '.join(repr(n) for n in names)}, got {value!r}")


def _source_enum(source) -> int:
    return _enum(source, _SOURCES, "contact_source")


class ContactMatrixSpec:
    """Which contact forces the scene keeps (taxel.v1.ContactMatrixSpec). Usually given through
    `SceneSpec(..., contact_bodies=..., contact_partners=..., ...)` or
    `SceneSpec.set_contact_matrix(...)`.

    Args:
      bodies: rows — robot link names ("foot" or "robot/foot"... as "<entity>/<link>"), globs with
        `*` and `?` ("*_foot"), or "all"; a str or a list.
      partners: columns — "terrain", "robot/<link>", "object/<slot>", "projectile/<slot>",
        "static/<name>" or globs over those ("object/*"); default ["terrain"].
      source: "estimated" (Taxel computes the contacts of the selected pairs from the poses with
        `law` as a pressure law) or "reported" (each step carries the simulator's contacts,
        `Scene.step(contacts=...)`; Taxel selects, sums, resets and slices them).
      friction: keep the friction matrix as well (`ContactMatrix.friction`).
      law: ESTIMATED only: a NonlinearLaw (or a dict of its options), pressure in Pa.
      sample_spacing: ESTIMATED only: surface sampling step (m, > 0) for shape pairs without a closed
        form (server default 0.005).
      sdf_backend: ESTIMATED only: "exact" (default) or "grid" — sampled pairs read meshes from
        their narrow-band grid (`Client.upload_mesh(..., grid_max_error=, grid_band=)`, else built
        by the server with a 1 mm band): each sample's depth within the grid's `max_error`
        (`Client.mesh_info(id).grid`) inside its band, exact deeper. Unscaled meshes only.
      gradients: ESTIMATED only: also keep each cell's gradient with respect to the body's and the
        partner's poses (`Scene.contact_matrix(gradients=True)`, `ContactMatrix.gradient`); every
        shape of the selected links must be implicit (`taxel.Superellipsoid`, ...).
    """

    def __init__(self, bodies: Union[str, Sequence[str]], partners: Union[str, Sequence[str]] = ("terrain",),
                 source: Union[str, int] = "estimated", friction: bool = False,
                 law: Union["NonlinearLaw", Dict[str, Any], None] = None, sample_spacing: Optional[float] = None,
                 sdf_backend: Union[str, int, None] = None, gradients: bool = False):
        self.bodies = _names(bodies, "contact_bodies")
        if not self.bodies:
            raise ValueError("contact_bodies: empty; name at least one robot link (or 'all'), or leave the "
                             "contact matrix out")
        self.partners = _names(partners if partners is not None else ("terrain",), "contact_partners")
        if not self.partners:
            raise ValueError("contact_partners: empty; name at least one partner (default ['terrain'])")
        self.source = _source_enum(source)
        self.friction = bool(friction)
        if isinstance(law, dict):
            law = NonlinearLaw(**law)
        if law is not None and not isinstance(law, (NonlinearLaw, scene_pb2.NonlinearLawOptions)):
            raise TypeError(f"contact_law: expected a taxel.NonlinearLaw or a dict, got {type(law).__name__}")
        self.law = law
        if sample_spacing is not None and not (float(sample_spacing) > 0 and np.isfinite(sample_spacing)):
            raise ValueError(f"contact_sample_spacing: expected a finite value > 0 (m), got {sample_spacing!r}")
        self.sample_spacing = None if sample_spacing is None else float(sample_spacing)
        self.sdf_backend = None if sdf_backend is None else _enum(sdf_backend, _SDF_BACKENDS, "contact_sdf_backend")
        if self.sdf_backend == scene_pb2.GRID and self.source == scene_pb2.REPORTED:
            raise ValueError("contact_sdf_backend: 'grid' applies to 'estimated' contacts; 'reported' ones come "
                             "from the simulator")
        self.gradients = bool(gradients)
        if self.gradients and self.source == scene_pb2.REPORTED:
            raise ValueError("contact_gradients: gradients are of 'estimated' contacts; 'reported' forces come "
                             "from the simulator")

    @property
    def source_name(self) -> str:
        return "reported" if self.source == scene_pb2.REPORTED else "estimated"

    def to_proto(self, out: Optional["scene_pb2.ContactMatrixSpec"] = None) -> "scene_pb2.ContactMatrixSpec":
        out = scene_pb2.ContactMatrixSpec() if out is None else out
        out.bodies[:] = self.bodies
        out.partners[:] = self.partners
        out.source = self.source
        out.friction = self.friction
        if self.law is not None:
            out.law.CopyFrom(self.law if isinstance(self.law, scene_pb2.NonlinearLawOptions) else self.law.to_proto())
        if self.sample_spacing is not None:
            out.sample_spacing = self.sample_spacing
        if self.sdf_backend is not None:
            out.sdf_backend = self.sdf_backend
        out.gradients = self.gradients
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "ContactMatrixSpec":
        """From the proto's field names: {"bodies": ..., "partners": ..., "source": ..., ...}."""
        known = {"bodies", "partners", "source", "friction", "law", "sample_spacing", "sdf_backend", "gradients"}
        unknown = set(d) - known
        if unknown:
            raise TypeError(f"contact_matrix: unknown field(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**d)

    def __repr__(self):
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in ("law", "sample_spacing")
                        if getattr(self, k) is not None)
        if self.sdf_backend is not None:
            extra += f", sdf_backend={scene_pb2.SdfBackend.Name(self.sdf_backend).lower()!r}"
        if self.gradients:
            extra += ", gradients=True"
        return (f"ContactMatrixSpec(bodies={self.bodies}, partners={self.partners}, source={self.source_name!r}, "
                f"friction={self.friction}{extra})")


# SceneSpec keyword -> ContactMatrixSpec argument.
CONTACT_SPEC_KEYWORDS = {"contact_bodies": "bodies", "contact_partners": "partners", "contact_source": "source",
                         "contact_friction": "friction", "contact_law": "law",
                         "contact_sample_spacing": "sample_spacing", "contact_sdf_backend": "sdf_backend",
                         "contact_gradients": "gradients"}


LinkResolver = Callable[[str, str], int]
"""(link name, field path for errors) -> canonical link index, e.g. SceneInfo.link_index."""


@dataclass
class ReportedContacts:
    """The simulator's contacts of one step, for a scene whose contact matrix has source
    "reported" (taxel.v1.ReportedContacts), K of them:

      env:      [K] ints: the env of each contact (one of the step's envs); a scalar applies to all.
      body:     [K] the link the force acts on: canonical link indices, or names ("hand/pad",
                a bare link name or single-link entity name when unambiguous, a contact-matrix
                row name); a scalar applies to all.
      partner:  [K] the other link, likewise; column names work too ("terrain", "object/ball").
      force:    [K, 3] normal force on the body (N, world axes), float32 or float64.
      friction: optional [K, 3] friction force on the body.

    Taxel keeps the contacts of selected (body, partner) pairs, sums them per cell and drops the
    others. `Scene.step(contacts=...)` also takes a dict with these keys.
    """
    env: Any
    body: Any
    partner: Any
    force: Any
    friction: Any = None

    def to_proto(self, resolve_link: Optional[LinkResolver],
                 out: Optional["service_pb2.ReportedContacts"] = None) -> "service_pb2.ReportedContacts":
        """The wire message; `resolve_link(name, field)` turns a link name into its canonical index
        (SceneInfo.link_index)."""
        out = service_pb2.ReportedContacts() if out is None else out
        force = as_numpy(self.force)
        if force.ndim != 2 or force.shape[1] != 3:
            raise ValueError(f"contacts.force: expected shape [K, 3], got {list(force.shape)}")
        k = force.shape[0]
        encode_int32(_indices(self.env, k, "contacts.env", None), out.env)
        encode_int32(_indices(self.body, k, "contacts.body", resolve_link), out.body)
        encode_int32(_indices(self.partner, k, "contacts.partner", resolve_link), out.partner)
        encode_real(force, out.force)
        if self.friction is not None:
            friction = as_numpy(self.friction)
            if friction.shape != force.shape:
                raise ValueError(f"contacts.friction: expected shape [{k}, 3], got {list(friction.shape)}")
            encode_real(friction, out.friction)
        return out


def _indices(values, k: int, field: str, resolve_link) -> np.ndarray:
    """[k] int32 indices from ints, names (through resolve_link) or a scalar of either."""
    if isinstance(values, (str, int, np.integer)):
        values = [values] * k
    a = as_numpy(values) if not isinstance(values, (list, tuple)) else None
    if a is not None and a.dtype.kind in "iu":
        out = a.reshape(-1)
    else:
        items = list(values) if a is None else a.reshape(-1).tolist()
        out = np.empty(len(items), dtype=np.int64)
        for i, v in enumerate(items):
            if isinstance(v, str):
                if resolve_link is None:
                    raise TypeError(f"{field}[{i}]: expected an env index, got {v!r}")
                out[i] = resolve_link(v, f"{field}[{i}]")
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                out[i] = int(v)
            else:
                raise TypeError(f"{field}[{i}]: expected an index or a link name, got {v!r}")
    if out.shape != (k,):
        raise ValueError(f"{field}: expected {k} values (one per row of contacts.force), got {out.size}")
    return out


ContactsLike = Union[ReportedContacts, dict, "service_pb2.ReportedContacts"]
"""Reported contacts: a taxel.ReportedContacts, a dict of its arguments, or the wire message."""


def fill_contacts(contacts: ContactsLike, out: "service_pb2.ReportedContacts",
                  resolve_link: Optional[LinkResolver]) -> None:
    """Writes a ReportedContacts, a dict of its fields or a wire message into `out`."""
    if isinstance(contacts, service_pb2.ReportedContacts):
        out.CopyFrom(contacts)
        return
    if isinstance(contacts, dict):
        fields = {"env", "body", "partner", "force", "friction"}
        unknown = set(contacts) - fields
        missing = {"env", "body", "partner", "force"} - set(contacts)
        if unknown or missing:
            raise TypeError(f"contacts: expected keys env, body, partner, force (and optionally friction); "
                            f"missing {sorted(missing)}, unknown {sorted(unknown)}")
        contacts = ReportedContacts(**contacts)
    if not isinstance(contacts, ReportedContacts):
        raise TypeError(f"contacts: expected a taxel.ReportedContacts or a dict, got {type(contacts).__name__}")
    contacts.to_proto(resolve_link, out)


def names_matching(pattern: str, names: Sequence[str]) -> list:
    """Indices of `names` matched by `pattern`: an exact name, or a glob with `*` (any run of
    characters) and `?` (one character) — the server's selector syntax (no character classes)."""
    if "*" not in pattern and "?" not in pattern:
        return [i for i, n in enumerate(names) if n == pattern]
    literal_brackets = pattern.replace("[", "[[]")  # fnmatch's classes are not part of the syntax
    return [i for i, n in enumerate(names) if fnmatch.fnmatchcase(n, literal_brackets)]
