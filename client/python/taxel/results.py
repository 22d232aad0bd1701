"""Readings returned by a step or a read, as read-only numpy views.

    r = scene.step(poses, dt=0.01, quat_order="xyzw")
    r.step, r.env_ids, r.timing.evaluate_us
    r["left_pad"].force                 # measured branch, [E, rows, cols, 3] float32
    r["left_pad"].ground_truth.force    # when the read asked for ground truth
    r["tip"].depth, r["tip"].contact    # [E, n] float32, [E, n] bool

Every array is a zero-copy `numpy.frombuffer` view over the bytes of the response (read-only; see
taxel.tensors). The first axis follows `env_ids`.
"""
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional

import numpy as np

from taxel._pb import service_pb2
from taxel.tensors import decode

__all__ = ["StepTiming", "Readings", "SensorResult", "StepResult", "ContactMatrix"]


# The server's channel order (core/sensors/sensor.h); a map on the wire has none.
_CHANNEL_ORDER = ("contact", "depth", "normal", "area", "partner", "force", "torque", "displacement")


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
    channel -> array, also readable as attributes (`.force`, `.depth`, ...)."""

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
    read the measured branch; `.ground_truth` is the clean branch (None unless requested)."""

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
        return getattr(self._measured(), channel)

    def __getitem__(self, channel: str) -> np.ndarray:
        return self._measured()[channel]

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
    stream `sequence` and the server's `timing` (None for reads)."""

    def __init__(self, step: int, env_ids: np.ndarray, sensors: Dict[str, SensorResult],
                 timing: Optional[StepTiming] = None, sequence: Optional[int] = None):
        self.step, self.env_ids, self.timing, self.sequence = step, env_ids, timing, sequence
        self.sensors = sensors

    @classmethod
    def from_proto(cls, resp) -> "StepResult":
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
        timing = sequence = None
        if isinstance(resp, service_pb2.StepResponse):
            t = resp.timing
            timing = StepTiming(t.decode_us, t.evaluate_us, t.encode_us, t.queue_us)
            sequence = resp.sequence
        return cls(resp.step, env_ids, sensors, timing, sequence)

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
        return f"StepResult(step={self.step}, envs={len(self.env_ids)}, sensors={list(self.sensors)})"


@dataclass(frozen=True)
class ContactMatrix:
    """Partner-resolved contact forces: `normal` [E, B, P, 3] float32 (N, world axes, force on the
    body), `friction` (same shape, when requested), with the env ids, row (body) and column
    (partner) names of the axes."""
    env_ids: np.ndarray
    rows: List[str]
    columns: List[str]
    normal: np.ndarray
    friction: Optional[np.ndarray]

    @classmethod
    def from_proto(cls, p) -> "ContactMatrix":
        return cls(np.array(p.env_ids, dtype=np.int32), list(p.rows), list(p.columns), decode(p.normal),
                   decode(p.friction) if p.HasField("friction") else None)
