"""`taxel.Scene`: a handle on a scene registered on the server; steps, reads, resets, streams."""
import logging
import queue
import threading
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Tuple, Union

import grpc
import numpy as np

from taxel import split
from taxel._pb import service_pb2
from taxel._types import ArrayLike, EnvIds, QuatOrder
from taxel.contact import ContactsLike, fill_contacts
from taxel.errors import ResourceExhaustedError, TaxelError, UnavailableError, from_rpc_error
from taxel.info import SceneInfo, SensorInfo
from taxel.results import ContactMatrix, StepResult
from taxel.sensors import Sensor
from taxel.shapes import quat_order_enum
from taxel.tensors import as_numpy, encode_real

if TYPE_CHECKING:  # pragma: no cover - for type checkers only (client.py imports this module)
    from taxel.client import Client

__all__ = ["Read", "Scene", "StepStream"]

log = logging.getLogger("taxel")


class Read:
    """Which readings a step or read returns.

    Args:
      sensors: sensor names (default: every sensor).
      channels: channel names, e.g. ["force"] (default: every channel of each sensor).
      measured: include the measured branch (with imperfections).
      ground_truth: include the clean branch (`result[s].ground_truth`).
      none: return no sensor readings at all (a pure state update; the cheapest step).
      contact_matrix: steps only: also return the contact matrix of the stepped envs
        (`result.contact_matrix`, with the friction part when the scene keeps it); combines with
        none=True for the matrix alone. FailedPreconditionError for a scene without a matrix.
      sparse: the server leaves the zeros out of the readings (ReadSpec.sparse: a bit mask and
        the nonzero values, about a quarter of the bytes for typical tactile data) and the client
        expands them with numpy; the arrays are the same, read-only either way. None (default):
        the client's `sparse_readings` (True unless set otherwise) for reads of at least
        SPARSE_MIN_BYTES of readings. False: dense readings, which stay zero-copy views into the
        received bytes.
      gradients: steps only: also return each probe reading's gradient with respect to the poses
        of the sensor link and of the partner link (ReadSpec.gradients, docs/reference.md#gradients):
        channel "depth_gradient" [E, n, 2, 6] of ContactProbe/ContactDepthProbe and
        "force_gradient" [E, n, 3, 2, 6] of KinematicTaxel (`result[s].gradient` picks it), of
        the ground truth: in the ground_truth readings, and in the measured ones of sensors
        without imperfections. Axis 2 is (sensor, partner); axis 6 a world twist (δt, δθ) about
        that link's origin. InvalidArgumentError for a sensor kind without gradients (list the
        others in `sensors`) or a sensor with imperfections read without ground_truth=True.

    `Scene.step(read=False)` is `Read(none=True)`; a dict is passed to Read(**dict).
    """

    def __init__(self, sensors: Optional[Sequence[str]] = None, channels: Optional[Sequence[str]] = None,
                 measured: bool = True, ground_truth: bool = False, none: bool = False,
                 contact_matrix: bool = False, sparse: Optional[bool] = None, gradients: bool = False):
        if isinstance(sensors, str) or isinstance(channels, str):
            raise TypeError("Read: sensors and channels are lists of names")
        if not (measured or ground_truth or none):
            raise ValueError("Read: ask for the measured branch, the ground truth, or none=True")
        self.sensors, self.channels = list(sensors or []), list(channels or [])
        self.measured, self.ground_truth, self.none = measured, ground_truth, none
        self.contact_matrix = bool(contact_matrix)
        self.sparse = None if sparse is None else bool(sparse)
        self.gradients = bool(gradients)

    def fill(self, out: "service_pb2.ReadSpec", sparse_default: bool = False) -> None:
        out.sensors[:] = self.sensors
        out.channels[:] = self.channels
        out.none = self.none
        out.contact_matrix = self.contact_matrix
        out.gradients = self.gradients and not self.none
        out.sparse = (self.sparse if self.sparse is not None else sparse_default) and not self.none
        branches = ([service_pb2.MEASURED] if self.measured else []) + \
                   ([service_pb2.GROUND_TRUTH] if self.ground_truth else [])
        if branches != [service_pb2.MEASURED]:
            out.branches[:] = branches

    def __repr__(self):
        return (f"Read(sensors={self.sensors}, channels={self.channels}, measured={self.measured}, "
                f"ground_truth={self.ground_truth}, none={self.none}, contact_matrix={self.contact_matrix}, "
                f"sparse={self.sparse}, gradients={self.gradients})")


# Reads of fewer bytes of readings than this (dense, upper estimate) go dense even with the
# client's sparse_readings: for a few envs, expanding with numpy costs more than the bytes saved.
SPARSE_MIN_BYTES = 64 << 10


ReadArg = Union[Read, Mapping[str, Any], "service_pb2.ReadSpec", bool, None]
"""What a step reads: a taxel.Read, a dict of its arguments, a taxel.v1.ReadSpec, False (no
readings), or None/True (every sensor's measured readings)."""


def _fill_read(read, out: "service_pb2.ReadSpec", sparse_default: bool) -> None:
    """`read` into `out`; sparse_default is the client's sparse_readings (a ReadSpec proto is
    taken as it is)."""
    if read is None or read is True:
        out.sparse = sparse_default
        return
    if read is False:
        out.none = True
    elif isinstance(read, dict):
        Read(**read).fill(out, sparse_default)
    elif isinstance(read, Read):
        read.fill(out, sparse_default)
    elif isinstance(read, service_pb2.ReadSpec):
        out.CopyFrom(read)
    else:
        raise TypeError(f"read: expected a taxel.Read, a dict, False or None, got {type(read).__name__}")


def _env_list(env_ids, field: str = "env_ids") -> Optional[list]:
    """None, or the env ids as a list of ints (from a list, numpy or torch array)."""
    if env_ids is None:
        return None
    a = as_numpy(env_ids)
    if a.dtype == bool:
        raise TypeError(f"{field}: expected env indices, got a boolean mask (use numpy.nonzero(mask)[0])")
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{field}: expected integers, got dtype {a.dtype}")
    return [int(e) for e in a.reshape(-1)]


class Scene:
    """A scene on the server (from Client.create_scene or Client.scene).

    `quat_order` and `dt` given here become the defaults of `step`. With `auto_recreate`, a call
    that finds the scene gone (NOT_FOUND for the scene, e.g. after a server restart) re-creates it
    from the spec kept by the client — re-uploading its meshes — and is retried once;
    `recreations` counts how often that happened. A re-created scene starts again from step 0.
    """

    def __init__(self, client: "Client", info: SceneInfo, auto_recreate: bool = False, quat_order: QuatOrder = None,
                 dt: Optional[float] = None):
        self._client = client
        self._info = info
        self.name = info.name
        self.auto_recreate = auto_recreate
        self.quat_order = None if quat_order is None else quat_order_enum(quat_order)
        self.dt = dt
        self.recreations = 0
        self._deleted = False

    # --------------------------------------------------------------------------------------------
    # Plumbing

    def _call(self, method: str, request, timeout="default", raw: bool = False):
        for attempt in (0, 1):
            try:
                return self._client._rpc(method, request, timeout, raw)
            except TaxelError as e:
                if attempt == 1 or not self._recreate_after(e):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _sparse_default(self, envs: Optional[list]) -> bool:
        """The client's sparse_readings for a read of `envs` (None: all), off below
        SPARSE_MIN_BYTES of readings (every output of every sensor, one branch: an upper estimate)."""
        if not self._client.sparse_readings:
            return False
        n = self._info.num_envs if envs is None else len(envs)
        return self._info.reading_bytes_per_env * n >= SPARSE_MIN_BYTES

    def _recreate_after(self, err: TaxelError) -> bool:
        """Re-creates the scene if auto_recreate applies and the client can recover from `err`
        (Client: NOT_FOUND for the scene; a ReplicaSet also moves it off an unreachable replica)."""
        if not self.auto_recreate or self._deleted:
            return False
        info = self._client._recover(self.name, err)
        if info is None:
            return False
        self._info = info
        self.recreations += 1
        return True

    # --------------------------------------------------------------------------------------------
    # Description

    @property
    def num_envs(self) -> int:
        return self._info.num_envs

    @property
    def moving_links(self) -> Tuple[str, ...]:
        """Names of the moving links: the order of the poses' second axis."""
        return self._info.moving_links

    @property
    def last_info(self) -> SceneInfo:
        """The scene info as last received (creation, info(), re-creation), without a call."""
        return self._info

    def info(self) -> SceneInfo:
        """The scene's links (canonical order), moving links, sensors with output shapes, step count."""
        self._info = SceneInfo.from_proto(self._call("GetScene", service_pb2.GetSceneRequest(scene=self.name)))
        return self._info

    # --------------------------------------------------------------------------------------------
    # Steps

    def link_index(self, name: Union[str, int], field: str = "link") -> int:
        """The canonical link index of `name` (see SceneInfo.link_index), from the last info."""
        return self._info.link_index(name, field)

    def _step_request(self, poses, twists, dt, env_ids, quat_order, read,
                      contacts=None) -> "service_pb2.StepRequest":
        order = quat_order_enum(quat_order if quat_order is not None else self.quat_order)
        dt = dt if dt is not None else self.dt
        if dt is None:
            raise ValueError("dt is required: the step's duration in seconds (> 0)")
        req = service_pb2.StepRequest(scene=self.name, quat_order=order, dt=float(dt))
        envs = _env_list(env_ids)
        if envs is not None:
            if not envs:
                raise ValueError("env_ids: empty; pass None to step every env")
            req.env_ids[:] = envs
        encode_real(poses, req.poses)
        if twists is not None:
            encode_real(twists, req.twists)
        _fill_read(read, req.read, self._sparse_default(envs))
        if contacts is not None:
            fill_contacts(contacts, req.contacts, self._info.link_index)
        return req

    def step(self, poses: ArrayLike, twists: Optional[ArrayLike] = None, dt: Optional[float] = None,
             env_ids: EnvIds = None, quat_order: QuatOrder = None, read: ReadArg = None,
             contacts: Optional[ContactsLike] = None) -> StepResult:
        """One simulation step: link poses in, readings out (unary Step).

        Args:
          poses: [E, L, 7] or flat [E·L, 7], float32 or float64 (sent as is; other real types as
            float64): position (m, world) then the quaternion in `quat_order`, for the moving links
            in `moving_links` order. E = num_envs, or len(env_ids). numpy, torch, warp: anything
            numpy.asarray takes.
          twists: optional [.., L, 6] linear velocity of the link origin and angular velocity
            (m/s, rad/s, world); without them the server differentiates poses over dt.
          dt: step duration, s (> 0); default the scene's `dt`.
          env_ids: the envs of the poses' first axis, in that order (default all, in order).
          quat_order: "xyzw" or "wxyz" (required, here or on the scene): ValueError if missing.
          read: a taxel.Read, a dict of its arguments, False for no readings, None for all
            sensors' measured readings. `Read(contact_matrix=True)` adds `result.contact_matrix`.
          contacts: REPORTED contact matrix only: the simulator's contacts of this step, a
            taxel.ReportedContacts or a dict with its keys — env [K], body [K], partner [K] (link
            indices or names), force [K, 3] (N, world, on the body), optional friction [K, 3].
            The stepped envs' rows are cleared, then the contacts of selected pairs are summed;
            without contacts the stepped envs read zero.

        Returns a StepResult of zero-copy read-only numpy arrays. Errors: InvalidArgumentError
        (`.field_violations` name "poses", "dt", "contacts.body[3]", ...), OutOfRangeError (env id),
        NotFoundError; ValueError for a link name the scene does not have.
        """
        def send(envs, first: bool, p, t, c):
            req = self._step_request(p, t, dt, envs, quat_order, read, c)
            req.continues_step = not first
            return StepResult.from_wire(self._call("Step", req, raw=True))

        return self._split_step(send, poses, twists, env_ids, read, contacts)

    def _split_step(self, send, poses, twists, env_ids, read, contacts) -> StepResult:
        """`send(envs, first, poses, twists, contacts)` once when the step fits in one message,
        else over env ranges (taxel/split.py); a single step refused as too large is split then."""
        envs = _env_list(env_ids)
        n = self.num_envs if envs is None else len(envs)
        links = len(self.moving_links)
        # From the arrays' dtypes alone: no conversion (a GPU tensor is copied to the host once, when
        # the request is encoded).
        per_request = split.request_bytes_per_env(links, poses, twists, contacts, n)
        size = self._part_size(envs, read, per_request, ask_server=False)
        if size >= n:
            try:
                return send(envs, True, poses, twists, contacts)
            except ResourceExhaustedError as e:
                if not split.too_large(e) or n == 1:
                    raise
            size = min(n // 2, self._part_size(envs, read, per_request, ask_server=True))
        ids = np.arange(n, dtype=np.int64) if envs is None else np.asarray(envs, dtype=np.int64)
        p = split.rows(poses, "poses", n, links, 7)
        t = None if twists is None else split.rows(twists, "twists", n, links, 6)

        def part(start: int, count: int, first: bool) -> StepResult:
            sl = slice(start, start + count)
            c = None if contacts is None else split.contacts_of(contacts, ids[sl])
            return send(ids[sl].tolist(), first, p[sl], None if t is None else t[sl], c)

        return split.in_parts(n, size, part)

    def _part_size(self, envs: Optional[list], read, per_request_env: int = 0, history: int = 0,
                   ask_server: bool = False) -> int:
        """Envs per message for a call on `envs` reading `read` (taxel/split.py)."""
        n = self.num_envs if envs is None else len(envs)
        spec = service_pb2.ReadSpec()
        if isinstance(read, service_pb2.ReadSpec):
            spec.CopyFrom(read)
        else:
            _fill_read(read, spec, self._sparse_default(envs))
        per_env, fixed = split.reading_bytes(self._info, spec, history)
        return split.envs_per_part(split.limit_of(self._client, ask_server), max(per_env, per_request_env), fixed, n)

    def stream(self, timeout: Optional[float] = None) -> "StepStream":
        """A bidirectional StepStream for per-step streaming (one request, one response, in order):

            with scene.stream() as s:
                for t in range(T):
                    r = s.step(poses[t], dt=0.01, quat_order="wxyz")

        `timeout` bounds the whole stream (default none)."""
        return StepStream(self, timeout)

    def read(self, env_ids: EnvIds = None, sensors: Optional[Sequence[str]] = None,
             channels: Optional[Sequence[str]] = None, ground_truth: bool = False, measured: bool = True,
             history: int = 0, sparse: Optional[bool] = None) -> StepResult:
        """The latest readings without stepping. `ground_truth=True` adds the clean branch
        (`result[s].ground_truth`); env_ids: a subset in the order wanted (default all);
        `sparse` as in taxel.Read.

        `history` > 0 returns instead the last `history` measured samples of each sensor (not
        delayed), shaped [E, history, <layout>, <channel>], index 0 the newest, zero-filled; it
        must not exceed the sensor's `history_length` imperfection option."""
        envs = _env_list(env_ids)
        if envs is not None and not envs:
            raise ValueError("env_ids: empty; pass None to read every env")

        def send(ids: Optional[list]) -> StepResult:
            req = service_pb2.ReadSensorsRequest(scene=self.name, history=int(history))
            if ids is not None:
                req.env_ids[:] = ids
            Read(sensors, channels, measured=measured, ground_truth=ground_truth, sparse=sparse).fill(
                req.read, self._sparse_default(ids))
            return StepResult.from_wire(self._call("ReadSensors", req, raw=True), read=True)

        spec = service_pb2.ReadSpec()
        Read(sensors, channels, measured=measured, ground_truth=ground_truth, sparse=sparse).fill(
            spec, self._sparse_default(envs))
        n = self.num_envs if envs is None else len(envs)
        size = self._part_size(envs, spec, history=int(history))
        if size >= n:
            try:
                return send(envs)
            except ResourceExhaustedError as e:
                if not split.too_large(e) or n == 1:
                    raise
            size = min(n // 2, self._part_size(envs, spec, history=int(history), ask_server=True))
        ids = list(range(n)) if envs is None else envs
        return split.in_parts(n, size, lambda start, count, first: send(ids[start:start + count]))

    def reset(self, env_ids: EnvIds = None) -> None:
        """Clears the per-env state (triggers, velocity history) of `env_ids` (default all envs);
        their readings and contact-matrix rows read 0 until the next step. An empty env_ids resets
        nothing (so that `reset(np.nonzero(done)[0])` is safe when no env is done)."""
        envs = _env_list(env_ids)
        if envs is not None and not envs:
            return
        self._call("ResetEnvs", service_pb2.ResetEnvsRequest(scene=self.name, env_ids=envs or []))

    def contact_matrix(self, env_ids: EnvIds = None, rows: Optional[Sequence[str]] = None,
                       columns: Optional[Sequence[str]] = None, friction: bool = False,
                       gradients: bool = False) -> ContactMatrix:
        """The latest partner-resolved contact forces (GetContactMatrix), without stepping.

        Args:
          env_ids: the envs wanted, in that order (default all, in order).
          rows: body names (exact row names, see `info().contact_matrix.rows`), in the order
            wanted (default every row).
          columns: partner names (exact column names), in the order wanted (default every column).
          friction: also return the friction matrix (FailedPreconditionError when the scene does
            not keep it).
          gradients: also return `gradient` [E, B, P, 3, 2, 6] (FailedPreconditionError unless the
            scene was created with `contact_gradients=True`; see `ContactMatrix.gradient`).

        Returns a ContactMatrix: `normal` [E, B, P, 3] float32 (N, world axes, force on the body)
        as a zero-copy read-only view, `row_index`/`column_index` name -> index maps. Rows of envs
        reset since their last step read zero. Errors: FailedPreconditionError (no contact matrix
        in the scene), InvalidArgumentError naming "rows[i]"/"columns[i]" for a name that is not in
        the matrix, OutOfRangeError (env id)."""
        for what, names in (("rows", rows), ("columns", columns)):
            if isinstance(names, str):
                raise TypeError(f"{what}: expected a list of names, got the string {names!r}")
        envs = _env_list(env_ids)
        if envs is not None and not envs:
            raise ValueError("env_ids: empty; pass None for every env")
        req = service_pb2.GetContactMatrixRequest(scene=self.name, env_ids=envs or [], rows=list(rows or []),
                                                  columns=list(columns or []), friction=friction,
                                                  gradients=gradients)
        return ContactMatrix.from_wire(self._call("GetContactMatrix", req, raw=True))

    # --------------------------------------------------------------------------------------------
    # Sensors and lifetime

    def add_sensor(self, sensor: Sensor) -> SensorInfo:
        """Adds a sensor (it reads 0 until the next step) and returns its info; the client's kept
        spec gains it too, so a re-created scene has it."""
        if not isinstance(sensor, Sensor):
            raise TypeError(f"add_sensor: expected a taxel sensor, got {type(sensor).__name__}")
        proto = sensor.to_proto()
        resp = self._call("AddSensor", service_pb2.AddSensorRequest(scene=self.name, sensor=proto))
        self._client._update_spec(self.name, lambda spec: spec.sensors.append(proto))
        return SensorInfo.from_proto(resp)

    def update_sensor(self, name: str, probe_gain: Optional[ArrayLike] = None, env_ids: EnvIds = None,
                      noise: Optional[float] = None, random_walk: Optional[float] = None,
                      bias: Optional[float] = None) -> SensorInfo:
        """Changes a sensor's imperfections at run time (like Genesis' setters); the sensor must
        have been given imperfections. `probe_gain`: one gain per probe ([n] or the layout shape)
        for every env of `env_ids` (default all), or one row per env ([len(env_ids), n] or
        [len(env_ids), rows, cols]); it lasts until a reset redraws the gains (when
        `probe_gain_resample_range` is set). `noise`, `random_walk`: new standard deviations;
        `bias`: new offset. The new noise levels are also written into the spec the client keeps
        for auto_recreate; per-env gains are not (a re-created scene starts from its spec's gains)."""
        req = service_pb2.UpdateSensorRequest(scene=self.name, sensor=name)
        envs = _env_list(env_ids)
        if envs is not None:
            if not envs:
                return self.info().sensors[name]
            req.env_ids[:] = envs
        if probe_gain is not None:
            encode_real(probe_gain, req.probe_gain)
        for field, value in (("noise", noise), ("random_walk", random_walk), ("bias", bias)):
            if value is not None:
                setattr(req, field, float(value))
        info = SensorInfo.from_proto(self._call("UpdateSensor", req))

        def keep(spec):
            for s in spec.sensors:
                if s.name == name:
                    for field, value in (("noise", noise), ("random_walk", random_walk), ("bias", bias)):
                        if value is not None:
                            setattr(s.imperfections, field, float(value))
        self._client._update_spec(self.name, keep)
        return info

    def remove_sensor(self, name: str) -> None:
        """Removes a sensor by name (NotFoundError if there is none)."""
        self._call("RemoveSensor", service_pb2.RemoveSensorRequest(scene=self.name, name=name))

        def drop(spec):
            keep = [s for s in spec.sensors if s.name != name]
            del spec.sensors[:]
            spec.sensors.extend(keep)
        self._client._update_spec(self.name, drop)

    def delete(self) -> None:
        """Deletes the scene on the server; this handle is then dead (no auto_recreate)."""
        self._deleted = True
        self._client.delete_scene(self.name)

    def __repr__(self):
        return f"Scene({self.name!r}, num_envs={self.num_envs}, moving_links={list(self.moving_links)})"


_CLOSE = object()


class StepStream:
    """One StepStream call: `step()` sends one request and waits for its response (sequence
    numbers are checked). Use as a context manager, or call `close()`. After an error the stream
    is closed; with the scene's auto_recreate, a NOT_FOUND for the scene re-creates it, opens a
    new stream and re-sends the step once. A stream that fails UNAVAILABLE before its first
    response (a connection to a server that has since restarted) is reopened and the step re-sent
    once: no server saw it."""

    def __init__(self, scene: Scene, timeout: Optional[float] = None):
        self._scene = scene
        self._timeout = timeout
        self._sequence = 0
        self._queue: Optional[queue.Queue] = None
        self._responses = None
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        q: queue.Queue = queue.Queue()

        def requests():
            while True:
                item = q.get()
                if item is _CLOSE:
                    return
                yield item

        client = self._scene._client
        self._queue = q
        self._received = 0
        self._responses = client._raw["StepStream"](requests(), timeout=self._timeout, metadata=client._metadata,
                                                    wait_for_ready=client.wait_for_ready)

    def _end_requests(self) -> None:
        if self._queue is not None:
            self._queue.put(_CLOSE)
            self._queue = None

    @property
    def closed(self) -> bool:
        return self._responses is None

    @property
    def sequence(self) -> int:
        """The sequence number of the last request sent."""
        return self._sequence

    def step(self, poses: ArrayLike, twists: Optional[ArrayLike] = None, dt: Optional[float] = None,
             env_ids: EnvIds = None, quat_order: QuatOrder = None, read: ReadArg = None,
             contacts: Optional[ContactsLike] = None) -> StepResult:
        """Like Scene.step, over the stream (a step over the message limit goes as several
        requests, see Scene.step)."""
        def send(envs, first: bool, p, t, c) -> StepResult:
            req = self._scene._step_request(p, t, dt, envs, quat_order, read, c)
            req.continues_step = not first
            return self._send(req)

        with self._lock:
            return self._scene._split_step(send, poses, twists, env_ids, read, contacts)

    def _send(self, req: "service_pb2.StepRequest") -> StepResult:
        """One request and its response (the lock held). A refusal of the request's size reopens
        the stream (the server ended it; nothing changed) so that smaller parts can follow."""
        reopened = recreated = False
        resend = False  # re-send the same sequence number: no server saw the request
        while True:
            if self._responses is None:
                raise UnavailableError("step stream: the stream is closed", code=grpc.StatusCode.UNAVAILABLE)
            if not resend:
                self._sequence += 1
            req.sequence = self._sequence
            self._queue.put(req)
            try:
                resp = next(self._responses)
            except StopIteration:
                self._end_requests()
                self._responses = None
                raise UnavailableError("step stream: the server ended the stream",
                                       code=grpc.StatusCode.UNAVAILABLE) from None
            except grpc.RpcError as e:
                self._end_requests()
                self._responses = None
                err = from_rpc_error(e)
                if isinstance(err, ResourceExhaustedError) and split.too_large(err):
                    self._open()
                    raise err from None
                if err.code == grpc.StatusCode.UNAVAILABLE and self._received == 0 and not reopened:
                    reopened = resend = True
                elif not recreated and self._scene._recreate_after(err):
                    recreated, resend = True, False
                else:
                    raise err from None
                self._open()
                continue
            self._received += 1
            result = StepResult.from_wire(resp)
            if result.sequence != req.sequence:  # pragma: no cover - a server bug
                self.cancel()
                raise TaxelError(f"step stream: response sequence {result.sequence} for request {req.sequence}",
                                 code=grpc.StatusCode.INTERNAL)
            return result

    def close(self) -> None:
        """Half-closes the stream and waits for the server to end it; errors raise TaxelError."""
        with self._lock:
            if self._responses is None:
                return
            self._end_requests()
            responses, self._responses = self._responses, None
            try:
                for _ in responses:
                    pass
            except grpc.RpcError as e:
                raise from_rpc_error(e) from None

    def cancel(self) -> None:
        """Abandons the stream at once."""
        with self._lock:
            self._end_requests()
            if self._responses is not None:
                self._responses.cancel()
                self._responses = None

    def __enter__(self) -> "StepStream":
        return self

    def __exit__(self, exc_type, *_) -> None:
        if exc_type is None:
            self.close()
        else:
            self.cancel()
