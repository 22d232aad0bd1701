"""Readings returned by a step or a read, as read-only numpy views.

    r = scene.step(poses, dt=0.01, quat_order="xyzw")
    r.step, r.env_ids, r.timing.evaluate_us
    r["left_pad"].force                 # measured branch, [E, rows, cols, 3] float32
    r["left_pad"].ground_truth.force    # when the read asked for ground truth
    r["tip"].depth, r["tip"].contact    # [E, n] float32, [E, n] bool

Every array is a zero-copy `numpy.frombuffer` view over the bytes of the response (read-only; see
taxel.tensors; a step's arrays are views into the one bytes object gRPC received, see
taxel/_wire.py). The first axis follows `env_ids`.
"""
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np

from taxel._pb import service_pb2
from taxel._wire import parse_contact_matrix_response, parse_read_response, parse_step_response
from taxel.contact import names_matching
from taxel.tensors import decode

__all__ = ["StepTiming", "Readings", "SensorResult", "StepResult", "ContactMatrix"]


# The server's channel order (core/sensors/sensor.h); a map on the wire has none.
_CHANNEL_ORDER = ("contact", "depth", "normal", "area", "partner", "force", "torque", "displacement",
                  "depth_gradient", "force_gradient")
_GRADIENTS = ("depth_gradient", "force_gradient")


def _channel_rank(name: str):
    return (_CHANNEL_ORDER.index(name), name) if name in _CHANNEL_ORDER else (len(_CHANNEL_ORDER), name)


@dataclass(frozen=True)
class StepTiming:
    """Server-side time per phase of a step, µs."""
    decode_us: float    # proto -> core arrays and validation
    evaluate_us: float  # state update, broad phase, sensor kernels
    encode_us: float    # core arrays -> response tensors
    queue_us: float     # waiting for the scene / an executor thread

    @property
    def total_us(self) -> float:
        return self.decode_us + self.evaluate_us + self.encode_us + self.queue_us


class Readings(Mapping):
    """The channels of one sensor in one branch ("measured" or "ground_truth"): a mapping
    channel -> array, also readable as attributes (`.force`, `.depth`, ...).

    The channel attributes are declared for IDEs and type checkers only: each is there when the
    sensor's kind has that channel and the read asked for it, else reading it is an
    AttributeError listing the channels there are. Shapes: [E, *grid] or [E, n] per probe, with a
    last axis of 3 for vectors (link frame)."""

    contact: np.ndarray       # bool, in contact
    depth: np.ndarray         # float32, m
    normal: np.ndarray        # float32 [..., 3], unit
    area: np.ndarray          # float32, m² (ContactDepthProbe's cap area)
    partner: np.ndarray       # int32 canonical link index, -1 for none
    force: np.ndarray         # float32 [..., 3], N
    torque: np.ndarray        # float32 [..., 3], N·m
    displacement: np.ndarray  # float32 [..., 3], m (ElastomerTaxel)

    def __init__(self, branch: str, channels: Dict[str, np.ndarray]):
        self.branch = branch
        self._channels = channels

    def __getitem__(self, channel: str) -> np.ndarray:
        try:
            return self._channels[channel]
        except KeyError:
            raise KeyError(f"no channel {channel!r} in this reading; it has {sorted(self._channels)}") from None

    def __getattr__(self, channel: str) -> np.ndarray:
        if channel.startswith("_"):
            raise AttributeError(channel)
        try:
            return self._channels[channel]
        except KeyError:
            raise AttributeError(f"no channel {channel!r} in this {self.branch} reading; it has "
                                 f"{sorted(self._channels)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._channels)

    def __len__(self) -> int:
        return len(self._channels)

    def __repr__(self):
        items = ", ".join(f"{k}: {v.dtype}{list(v.shape)}" for k, v in self._channels.items())
        return f"Readings({self.branch}, {{{items}}})"


class SensorResult:
    """The readings of one sensor. Channel attributes (`.force`, `.depth`, ...) and `[channel]`
    read the measured branch; `.ground_truth` is the clean branch (None unless requested). The
    channel attributes are those of Readings (declared for IDEs; there when read)."""

    name: str
    sensor_id: int
    measured: Optional[Readings]
    ground_truth: Optional[Readings]
    contact: np.ndarray
    depth: np.ndarray
    normal: np.ndarray
    area: np.ndarray
    partner: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    displacement: np.ndarray

    def __init__(self, name: str, sensor_id: int, measured: Optional[Readings], ground_truth: Optional[Readings]):
        self.name, self.sensor_id = name, sensor_id
        self.measured, self.ground_truth = measured, ground_truth

    def _measured(self) -> Readings:
        if self.measured is None:
            raise AttributeError(f"sensor {self.name!r}: the measured branch was not requested; use "
                                 ".ground_truth, or read with measured=True")
        return self.measured

    def __getattr__(self, channel: str) -> np.ndarray:
        if channel.startswith("_") or channel in ("measured", "ground_truth", "name", "sensor_id"):
            raise AttributeError(channel)
        if channel == "gradient":  # the property raised: keep its message
            raise AttributeError(self._NO_GRADIENT.format(self.name))
        return getattr(self._measured(), channel)

    def __getitem__(self, channel: str) -> np.ndarray:
        return self._measured()[channel]

    @property
    def gradient(self) -> np.ndarray:
        """The gradient read with Read(gradients=True): "depth_gradient" [E, n, 2, 6] or
        "force_gradient" [E, n, 3, 2, 6] (float32), from the ground truth when it was read, else
        from the measured branch (a sensor without imperfections). Axis 2: (sensor link, partner
        link); axis 6: ∂/∂(δt, δθ), a world twist about that link's origin."""
        for r in (self.ground_truth, self.measured):
            for name in _GRADIENTS:
                if r is not None and name in r:
                    return r[name]
        raise AttributeError(self._NO_GRADIENT.format(self.name))

    _NO_GRADIENT = "sensor {!r}: no gradient was read; step with taxel.Read(gradients=True)"

    @property
    def channels(self) -> List[str]:
        """The channel names read (of the measured branch, else of the ground truth)."""
        r = self.measured if self.measured is not None else self.ground_truth
        return list(r) if r is not None else []

    def __iter__(self) -> Iterator[str]:
        return iter(self.channels)

    def __len__(self) -> int:
        return len(self.channels)

    def __contains__(self, channel) -> bool:
        return channel in self.channels

    def __repr__(self):
        return f"SensorResult({self.name!r}, measured={self.measured!r}, ground_truth={self.ground_truth!r})"


class StepResult(Mapping):
    """The readings of a step (or a read): a mapping sensor name -> SensorResult, with the scene's
    step count after the step (`step`), the envs of the first axis (`env_ids`, int32), the echoed
    stream `sequence`, the server's `timing` (None for reads) and `contact_matrix` (a
    ContactMatrix of the stepped envs when the step's read asked for it, else None)."""

    def __init__(self, step: int, env_ids: np.ndarray, sensors: Dict[str, SensorResult],
                 timing: Optional[StepTiming] = None, sequence: Optional[int] = None,
                 contact_matrix: Optional["ContactMatrix"] = None):
        self.step, self.env_ids, self.timing, self.sequence = step, env_ids, timing, sequence
        self.sensors = sensors
        self.contact_matrix = contact_matrix

    @classmethod
    def from_proto(cls, resp: Union["service_pb2.StepResponse", "service_pb2.ReadSensorsResponse"]) -> "StepResult":
        branches: Dict[str, Dict[str, Readings]] = {}
        ids: Dict[str, int] = {}
        for reading in resp.readings:
            branch = "ground_truth" if reading.branch == service_pb2.GROUND_TRUTH else "measured"
            channels = {name: decode(reading.channels[name])
                        for name in sorted(reading.channels, key=_channel_rank)}
            branches.setdefault(reading.sensor, {})[branch] = Readings(branch, channels)
            ids[reading.sensor] = reading.sensor_id
        sensors = {name: SensorResult(name, ids[name], b.get("measured"), b.get("ground_truth"))
                   for name, b in branches.items()}
        env_ids = np.array(resp.env_ids, dtype=np.int32)
        timing = sequence = matrix = None
        if isinstance(resp, service_pb2.StepResponse):
            t = resp.timing
            timing = StepTiming(t.decode_us, t.evaluate_us, t.encode_us, t.queue_us)
            sequence = resp.sequence
            if resp.HasField("contact_matrix"):
                matrix = ContactMatrix.from_proto(resp.contact_matrix)
        return cls(resp.step, env_ids, sensors, timing, sequence, matrix)

    @classmethod
    def from_wire(cls, buf: bytes, read: bool = False) -> "StepResult":
        """The StepResult of a serialized taxel.v1.StepResponse (or ReadSensorsResponse with
        `read`), its arrays views into `buf` itself (see taxel/_wire.py): the same result as
        `from_proto(StepResponse.FromString(buf))` without copying the readings."""
        p = parse_read_response(buf) if read else parse_step_response(buf)
        branches: Dict[str, Dict[str, Readings]] = {}
        ids: Dict[str, int] = {}
        for sensor, sensor_id, branch_code, channels in p["readings"]:
            branch = "ground_truth" if branch_code == service_pb2.GROUND_TRUTH else "measured"
            ordered = {name: channels[name] for name in sorted(channels, key=_channel_rank)}
            branches.setdefault(sensor, {})[branch] = Readings(branch, ordered)
            ids[sensor] = sensor_id
        sensors = {name: SensorResult(name, ids[name], b.get("measured"), b.get("ground_truth"))
                   for name, b in branches.items()}
        env_ids = p["env_ids"].astype(np.int32)
        if read:
            return cls(p["step"], env_ids, sensors)
        matrix = None if p["contact_matrix"] is None else ContactMatrix._from_parts(*p["contact_matrix"])
        return cls(p["step"], env_ids, sensors, StepTiming(*p["timing"]), p["sequence"], matrix)

    def __getitem__(self, sensor: str) -> SensorResult:
        try:
            return self.sensors[sensor]
        except KeyError:
            raise KeyError(f"no readings of sensor {sensor!r}; this result has {sorted(self.sensors)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.sensors)

    def __len__(self) -> int:
        return len(self.sensors)

    def __repr__(self):
        cm = "" if self.contact_matrix is None else ", contact_matrix"
        return f"StepResult(step={self.step}, envs={len(self.env_ids)}, sensors={list(self.sensors)}{cm})"


Names = Union[str, Sequence[str], None]
"""Row or column names of a contact matrix, or globs (`*`, `?`): one or a list; None = all."""


@dataclass(frozen=True)
class ContactMatrix:
    """Partner-resolved contact forces (a slice of the scene's contact matrix).

    Attributes:
      env_ids: [E] int32, the envs of the first axis, in the order requested.
      rows: the B body (row) names of the second axis; `row_index` maps them to their index here.
      columns: the P partner (column) names of the third axis; `column_index` likewise.
      normal: [E, B, P, 3] float32, N, world axes: the summed normal force on the body from that
        partner (opposing contacts cancel). A zero-copy, read-only view of the response.
      friction: the friction part, same shape, when requested (None otherwise).
      gradient: [E, B, P, 3, 2, 6] float32 when requested (`contact_matrix(gradients=True)` of a
        scene created with `contact_gradients=True`; None otherwise): ∂normal[e, b, p, i]/∂ξ, ξ the
        world twist of the body's link about its origin (axis 4 = 0) or of the partner about the
        origin of its first link (axis 4 = 1); last axis δt (N/m) then δθ (N/rad). Implicit
        shapes only; the links' velocities held fixed.

    `in_contact`, `any_contact` and `net_force` reduce it the way RL code usually does.
    """
    env_ids: np.ndarray
    rows: List[str]
    columns: List[str]
    normal: np.ndarray
    friction: Optional[np.ndarray]
    gradient: Optional[np.ndarray] = None
    row_index: Dict[str, int] = field(init=False, repr=False, compare=False)
    column_index: Dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "row_index", {n: i for i, n in enumerate(self.rows)})
        object.__setattr__(self, "column_index", {n: i for i, n in enumerate(self.columns)})

    @classmethod
    def from_proto(cls, p: "service_pb2.GetContactMatrixResponse") -> "ContactMatrix":
        return cls(np.array(p.env_ids, dtype=np.int32), list(p.rows), list(p.columns), decode(p.normal),
                   decode(p.friction) if p.HasField("friction") else None,
                   decode(p.gradient) if p.HasField("gradient") else None)

    @classmethod
    def from_wire(cls, buf: bytes) -> "ContactMatrix":
        """From a serialized GetContactMatrixResponse; the arrays are views into `buf`."""
        return cls._from_parts(*parse_contact_matrix_response(buf))

    @classmethod
    def _from_parts(cls, env_ids, rows, columns, normal, friction, gradient=None) -> "ContactMatrix":
        return cls(env_ids.astype(np.int32), rows, columns, normal, friction, gradient)

    def _select(self, names, axis_names: List[str], what: str) -> Optional[np.ndarray]:
        if names is None:
            return None
        if isinstance(names, str):
            names = [names]
        picked: List[int] = []
        for name in names:
            hits = names_matching(name, axis_names)
            if not hits:
                raise ValueError(f"{what}: {name!r} matches none of {axis_names}")
            picked += [h for h in hits if h not in picked]
        return np.array(sorted(picked), dtype=np.intp)

    def _sliced(self, partners, bodies, friction: bool) -> np.ndarray:
        f = self.normal
        if friction:
            if self.friction is None:
                raise ValueError("friction=True: this contact matrix has no friction part (read it with friction=True "
                                 "from a scene whose contact matrix keeps friction)")
            f = f + self.friction
        rows = self._select(bodies, self.rows, "bodies")
        cols = self._select(partners, self.columns, "partners")
        if rows is not None:
            f = f[:, rows]
        if cols is not None:
            f = f[:, :, cols]
        return f

    def in_contact(self, threshold: float, partners: Names = None, bodies: Names = None,
                   friction: bool = False) -> np.ndarray:
        """[E, B] bool: whether some selected partner pushes on the body with more than `threshold`
        newtons — any over the selected columns p of |F[e, b, p]| > threshold (the Euclidean norm
        of each cell; strictly greater, so threshold 0 means "any non-zero force").

        `partners`, `bodies`: column / row names or globs (`*`, `?`), a str or a list (default all);
        the result keeps the selected rows in this matrix's order. `friction`: use the total force
        (normal + friction) instead of the normal part. ValueError for a name matching nothing or a
        negative threshold."""
        threshold = float(threshold)
        if not threshold >= 0:
            raise ValueError(f"threshold: expected a force >= 0 (N), got {threshold}")
        f = self._sliced(partners, bodies, friction)
        return np.any(np.linalg.norm(f, axis=-1) > threshold, axis=-1)

    def any_contact(self, threshold: float, partners: Names = None, bodies: Names = None,
                    friction: bool = False) -> np.ndarray:
        """[E] bool: in_contact(...) of any selected body (e.g. "the robot touches the object")."""
        return np.any(self.in_contact(threshold, partners, bodies, friction), axis=-1)

    def net_force(self, partners: Names = None, bodies: Names = None, friction: bool = False) -> np.ndarray:
        """[E, B, 3] float32: the force on each body summed over the selected partners (N, world)."""
        return self._sliced(partners, bodies, friction).sum(axis=2, dtype=np.float32)

    def __repr__(self):
        fr = "" if self.friction is None else ", friction"
        return f"ContactMatrix(envs={len(self.env_ids)}, rows={self.rows}, columns={self.columns}{fr})"
