"""Sensors of the spec builder (taxel.v1.SensorSpec).

Options are keyword arguments named like the proto fields (docs/reference.md#sensors), looked up in this order:
  1. the kind's options message: `kinematic_taxel`, `contact_probe`, `elastomer`, `proximity`
     (the SensorSpec field named after the kind, with or without its _taxel/_probe suffix);
  2. the SensorSpec's own fields: `track_links`, `n_sample_points`, or a whole nested message as
     a dict (`imperfections={"noise": 0.01, "bias": 0.1}`);
  3. the fields of the SensorSpec's other singular messages that are not some kind's options,
     given flat: `noise=0.01, probe_gain=gains, crosstalk_border="renormalize", history_length=4`
     all land in `imperfections`.
Values: scalars, lists, enum names (in full or their last part), numpy arrays for Tensor fields,
dicts for messages. Options added to the proto later are accepted as soon as the stubs are
regenerated; an unknown name is a TypeError listing the accepted ones.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from taxel._pb import scene_pb2
from taxel._types import ArrayLike
from taxel._protofields import set_field as _set_field
from taxel.tensors import encode_real

__all__ = ["Sensor", "ContactProbe", "ContactDepthProbe", "KinematicTaxel", "ElastomerTaxel", "ProximityTaxel"]

_SENSOR_CORE_FIELDS = ("name", "kind", "link", "probe_local_pos", "probe_radius", "probe_local_normal",
                       "filter_links")


def _kind_options_field(kind: int) -> Optional[str]:
    if not kind:
        return None
    fields = scene_pb2.SensorSpec.DESCRIPTOR.fields_by_name
    name = scene_pb2.SensorKind.Name(kind).lower()
    for candidate in (name, name.rsplit("_", 1)[0]):
        if candidate in fields and fields[candidate].message_type is not None:
            return candidate
    return None


def _all_kind_options_fields() -> set:
    """The SensorSpec fields that hold some kind's options (not usable by the other kinds)."""
    return {f for f in (_kind_options_field(k) for k in scene_pb2.SensorKind.values()) if f}


class Sensor:
    """A sensor on a link: probe centres `probe_local_pos` ([N, 3] or a grid [rows, cols, 3], m, link
    frame), `probe_radius` (m; a scalar or one per probe, 0 = filler), optional unit
    `probe_local_normal` ([3] or one per probe), `filter_links` (links whose geometry it ignores),
    and options as keyword arguments (see the module doc). Subclasses fix the kind."""

    kind: int = scene_pb2.SENSOR_KIND_UNSPECIFIED

    def __init__(self, name: str, link: str, probe_local_pos: ArrayLike, probe_radius: ArrayLike,
                 probe_local_normal: Optional[ArrayLike] = None,
                 filter_links: Sequence[str] = (), **options: Any):
        self.name, self.link = name, link
        self.probe_local_pos = probe_local_pos
        self.probe_radius = probe_radius
        self.probe_local_normal = probe_local_normal
        self.filter_links = list(filter_links)
        self.options: Dict[str, object] = dict(options)
        self.to_proto()  # validates the option names and values now, not at create_scene

    @classmethod
    def options_field(cls) -> Optional[str]:
        """The SensorSpec field holding this kind's options, if the proto has one: the field named
        after the kind ("kinematic_taxel", "contact_probe"), or after the kind without its
        "_taxel"/"_probe" suffix ("elastomer", "proximity")."""
        return _kind_options_field(cls.kind)

    @classmethod
    def _option_targets(cls) -> List[Tuple[Optional[str], object]]:
        """Where keyword options go, in lookup order: (SensorSpec field or None for the SensorSpec
        itself, message descriptor). 1. this kind's options message; 2. the SensorSpec's own fields
        (a nested message may be given whole, as a dict); 3. the fields of the SensorSpec's other
        singular messages that are not another kind's options (e.g. a shared `imperfections`
        message), so that its fields can be given flat."""
        spec_d = scene_pb2.SensorSpec.DESCRIPTOR
        kinds = _all_kind_options_fields()
        of = cls.options_field()
        targets = [(of, spec_d.fields_by_name[of].message_type)] if of else []
        targets.append((None, spec_d))
        for f in spec_d.fields:
            if (f.message_type is not None and f.label != f.LABEL_REPEATED and f.name not in kinds
                    and f.name not in _SENSOR_CORE_FIELDS and f.message_type.full_name != "taxel.v1.Tensor"):
                targets.append((f.name, f.message_type))
        return targets

    @classmethod
    def _resolve_option(cls, key: str) -> Optional[Tuple[Optional[str], str]]:
        kinds = _all_kind_options_fields()
        for path, desc in cls._option_targets():
            if key not in desc.fields_by_name:
                continue
            if path is None and (key in _SENSOR_CORE_FIELDS or key in kinds):
                continue
            return path, key
        return None

    @classmethod
    def option_names(cls) -> List[str]:
        """Every keyword option this kind accepts (see the module doc)."""
        names: List[str] = []
        for _, desc in cls._option_targets():
            names += [n for n in desc.fields_by_name if n not in names and cls._resolve_option(n) is not None]
        return names

    def to_proto(self) -> "scene_pb2.SensorSpec":
        where = f"{type(self).__name__} {self.name!r}"
        out = scene_pb2.SensorSpec(name=self.name, kind=self.kind, link=self.link)
        encode_real(self.probe_local_pos, out.probe_local_pos)
        encode_real(self.probe_radius, out.probe_radius)
        if self.probe_local_normal is not None:
            encode_real(self.probe_local_normal, out.probe_local_normal)
        out.filter_links[:] = self.filter_links
        for key, value in self.options.items():
            target = self._resolve_option(key)
            if target is None:
                raise TypeError(f"{where}: unknown option {key!r}; {type(self).__name__} accepts "
                                f"{', '.join(self.option_names()) or 'no options'}")
            if value is None:
                continue
            path, field_name = target
            _set_field(out if path is None else getattr(out, path), field_name, value, where)
        return out

    def __repr__(self):
        shape = list(np.shape(self.probe_local_pos))
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({self.name!r}, link={self.link!r}, probe_local_pos=<{shape}>{opts})"


class ContactProbe(Sensor):
    """Contact flag per probe: a Schmitt trigger on the depth, on at `contact_threshold` (m, default
    1e-4), off below `release_threshold` (m, default = contact_threshold). Channels: contact, depth."""
    kind = scene_pb2.CONTACT_PROBE


class ContactDepthProbe(Sensor):
    """Penetration depth per probe, `max(0, max_g(R − sd_g(o)))` (m), with the contact normal, the
    spherical-cap area and the partner link index. Channels: depth, normal, area, partner."""
    kind = scene_pb2.CONTACT_DEPTH_PROBE


class KinematicTaxel(Sensor):
    """Spring–damper force and torque per probe (link frame, N, N·m):
    F = k_n·s·n + c_n·s·v_n·n − k_t·v_t, s = depth^p; T = p_local × F − k_tw·ω_n·n. Options:
    normal_stiffness (k_n, 1000), normal_damping (c_n, 1), exponent (p, 1), shear_damping (k_t, 1),
    twist_damping (k_tw, 1). Or the nonlinear law (docs/reference.md#contact-laws) as a force law:
    `force_law="nonlinear", nonlinear_law=taxel.NonlinearLaw(stiffness=..., exponent=...)` (or a
    dict); the twist term keeps k_tw. Channels: force, torque."""
    kind = scene_pb2.KINEMATIC_TAXEL


class ElastomerTaxel(Sensor):
    """Gel-skin marker displacement (dilation + anchored shear) of the geometry of `track_links`,
    link frame, m. Options: the ElastomerOptions fields (lambda_d, dilate_scale, normal_exponent,
    compressibility, elastomer_thickness, lambda_s, shear_scale, contact_threshold,
    release_threshold, use_fft), `track_links`, `n_sample_points`. Channel: displacement."""
    kind = scene_pb2.ELASTOMER_TAXEL


class ProximityTaxel(Sensor):
    """Point-cloud sphere taxel that reads before touch: force and torque from the sample points
    of `track_links` inside each probe's sphere (link frame, N, N·m). Options: the
    ProximityOptions fields (stiffness, shear_coupling, twist_scalar, density_scalar),
    `track_links`, `n_sample_points`. Channels: force, torque."""
    kind = scene_pb2.PROXIMITY_TAXEL


