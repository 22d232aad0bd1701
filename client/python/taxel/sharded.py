"""`taxel.ShardedScene`: one logical scene whose envs span several servers (env sharding).

    scene = taxel.ShardedScene.create(["10.0.0.1:50051", "10.0.0.2:50051"], spec, quat_order="xyzw", dt=0.01)
    r = scene.step(poses)              # poses [num_envs, L, 7]: each server gets its slice
    r["skin"].force                    # [num_envs, ...], envs in order, as from one server

The envs 0..N−1 are split into K contiguous ranges (`split_envs`), one per server, and each server
holds a sub-scene of the same name with `num_envs` = the range's size and `env_offset` = its
start. Every per-env random draw of the measured branch is keyed by the global env index
(env_offset + local env), so the readings and the contact matrix are bit-identical to those of
the same scene on one server. Steps send the slices to every server concurrently (one thread per
server) and concatenate the results in env order; resets, reads, env_ids and contact-matrix
reads are routed by env, and env_ids keep the caller's order.
"""
import concurrent.futures
import dataclasses
from typing import Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from taxel import split
from taxel._pb import scene_pb2
from taxel._types import ArrayLike, EnvIds, QuatOrder
from taxel.client import Client
from taxel.contact import ContactsLike, ReportedContacts, _indices
from taxel.errors import InvalidArgumentError, OutOfRangeError, field_error
from taxel.info import SceneInfo, SensorInfo
from taxel.results import ContactMatrix, StepResult
from taxel.scene import ReadArg, Scene, StepStream, _env_list
from taxel.sensors import Sensor
from taxel.spec import SceneSpec
from taxel.tensors import as_numpy

__all__ = ["split_envs", "ShardedScene", "ShardedStepStream"]


def split_envs(num_envs: int, num_shards: int) -> List[Tuple[int, int]]:
    """The (start, count) of each shard's env range: contiguous, in order, as equal as possible —
    shard i gets ⌊N/K⌋ envs, plus one for each of the first N mod K shards (10 envs over 3 shards:
    (0, 4), (4, 3), (7, 3)). ValueError unless 1 <= K <= N."""
    num_envs, num_shards = int(num_envs), int(num_shards)
    if num_shards < 1 or num_shards > num_envs:
        raise ValueError(f"num_shards: expected 1..num_envs ({num_envs}) shards, got {num_shards}")
    base, extra = divmod(num_envs, num_shards)
    out, start = [], 0
    for i in range(num_shards):
        count = base + (1 if i < extra else 0)
        out.append((start, count))
        start += count
    return out


def _shard_spec(proto: "scene_pb2.SceneSpec", start: int, count: int) -> "scene_pb2.SceneSpec":
    """The sub-scene of envs [start, start + count): num_envs, env_offset and the per-env asset
    lists sliced."""
    out = scene_pb2.SceneSpec()
    out.CopyFrom(proto)
    out.num_envs = count
    out.env_offset = proto.env_offset + start
    for e, original in zip(out.entities, proto.entities):
        if len(original.env_assets):
            e.env_assets[:] = list(original.env_assets)[start:start + count]
    return out


def _merge(parts: Sequence[np.ndarray], positions: Sequence, total: int) -> np.ndarray:
    """The rows of each shard's array put back at their positions (slices: concatenated)."""
    if all(isinstance(p, slice) for p in positions):
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    out = np.empty((total,) + parts[0].shape[1:], dtype=parts[0].dtype)
    for a, p in zip(parts, positions):
        out[p] = a
    return out


class _Route:
    """Which rows of a call go to which shard: `parts` = [(shard, positions, local ids)] for the
    shards involved, positions a slice (all envs) or an index array into the caller's order;
    local ids None for "all envs of the shard"."""

    def __init__(self, ranges: Sequence[Tuple[int, int]], envs: Optional[list], field: str = "env_ids"):
        self.envs = envs
        if envs is None:
            self.total = sum(c for _, c in ranges)
            self.parts = [(i, slice(s, s + c), None) for i, (s, c) in enumerate(ranges)]
            return
        num_envs = sum(c for _, c in ranges)
        starts = np.array([s for s, _ in ranges])
        seen = set()
        for i, e in enumerate(envs):
            if e < 0 or e >= num_envs:
                raise field_error(OutOfRangeError, f"{field}[{i}]", f"env id {e} out of range [0, {num_envs})")
            if e in seen:
                raise field_error(InvalidArgumentError, f"{field}[{i}]", f"env id {e} appears more than once")
            seen.add(e)
        a = np.asarray(envs, dtype=np.int64)
        shard_of = np.searchsorted(starts, a, side="right") - 1
        self.total = len(envs)
        self.parts = []
        for i, (s, _) in enumerate(ranges):
            pos = np.nonzero(shard_of == i)[0]
            if pos.size:
                self.parts.append((i, pos, (a[pos] - s).tolist()))

    def rows(self, x, what: str, link_count: int, width: int):
        """Per part, the caller's rows of x ([E, L, width] or flat [E·L, width]), sliced by env."""
        a = split.rows(x, what, self.total, link_count, width)
        return [a[p] for _, p, _ in self.parts]


def _merge_results(results: List[StepResult], route: _Route, ranges, step: int,
                   sequence: Optional[int] = None) -> StepResult:
    """One StepResult of the shards' results, rows in the route's order, env ids global."""
    positions = [p for _, p, _ in route.parts]
    env_ids = _merge([r.env_ids + ranges[i][0] for r, (i, _, _) in zip(results, route.parts)], positions,
                     route.total).astype(np.int32)
    sensors = split.join_sensors(results, lambda parts: _merge(parts, positions, route.total))
    timing = None
    if results[0].timing is not None:  # the slowest shard's
        timing = max((r.timing for r in results), key=lambda t: t.total_us)
    matrix = None
    if results[0].contact_matrix is not None:
        matrix = _merge_matrices([r.contact_matrix for r in results], route, ranges)
    return StepResult(step, env_ids, sensors, timing, sequence, matrix)


def _merge_matrices(parts: List[ContactMatrix], route: _Route, ranges) -> ContactMatrix:
    positions = [p for _, p, _ in route.parts]
    env_ids = _merge([m.env_ids + ranges[i][0] for m, (i, _, _) in zip(parts, route.parts)], positions, route.total)
    normal = _merge([m.normal for m in parts], positions, route.total)
    friction, gradient = None, None
    if parts[0].friction is not None:
        friction = _merge([m.friction for m in parts], positions, route.total)
    if parts[0].gradient is not None:
        gradient = _merge([m.gradient for m in parts], positions, route.total)
    return ContactMatrix(env_ids.astype(np.int32), parts[0].rows, parts[0].columns, normal, friction, gradient)


class ShardedScene:
    """A scene whose envs are split over several servers, with the API of taxel.Scene.

    Build it with `ShardedScene.create(clients, spec, ...)`. `shards` are the per-server
    taxel.Scene handles and `ranges` their (start, count) env ranges (see `split_envs`). Readings,
    contact matrices and env ids come back in global env numbering, in the caller's order.
    `step` of a result counts the steps taken through this handle (a server skipped by a step
    whose env_ids hold none of its envs does not count it). Errors of a server are raised as it
    reports them (shapes and env ids in its own, local numbering); env ids are checked here first,
    with the global numbering."""

    def __init__(self, shards: Sequence[Scene], ranges: Sequence[Tuple[int, int]],
                 owned_clients: Sequence["Client"] = ()):
        if len(shards) != len(ranges) or not shards:
            raise ValueError("ShardedScene: one env range per shard, at least one shard")
        self.shards, self.ranges = list(shards), [tuple(r) for r in ranges]
        self.name = shards[0].name
        self._owned = list(owned_clients)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(shards), thread_name_prefix="taxel-shard")
        self._steps = max(s.last_info.step for s in shards)

    @classmethod
    def create(cls, clients: Sequence[Union["Client", str]], spec: Union[SceneSpec, "scene_pb2.SceneSpec"],
               replace: bool = False, auto_recreate: Optional[bool] = None, quat_order: QuatOrder = None,
               dt: Optional[float] = None) -> "ShardedScene":
        """Creates scene `spec.name` on every server: `clients` are taxel.Clients or targets
        ("host:port"; clients made here are closed by `close()`), one shard each, envs split by
        `split_envs(spec.num_envs, len(clients))`. `spec`: a taxel.SceneSpec (inline meshes are
        uploaded to every server) or a taxel.v1.SceneSpec proto; its env_offset (default 0) is the
        global index of the logical scene's env 0. Other arguments as for Client.create_scene, for
        each shard. If one creation fails, the shards created so far are deleted and the error raised."""
        owned = [Client(c) for c in clients if isinstance(c, str)]
        it = iter(owned)
        clients = [next(it) if isinstance(c, str) else c for c in clients]
        num_envs = spec.num_envs
        ranges = split_envs(num_envs, len(clients))
        shards: List[Scene] = []
        try:
            for c, (start, count) in zip(clients, ranges):
                if isinstance(spec, SceneSpec):
                    proto = spec.to_proto(resolve_mesh=c.upload_mesh)
                elif isinstance(spec, scene_pb2.SceneSpec):
                    proto = spec
                else:
                    raise TypeError(f"create: expected a taxel.SceneSpec or taxel.v1.SceneSpec, got "
                                    f"{type(spec).__name__}")
                shards.append(c.create_scene(_shard_spec(proto, start, count), replace=replace,
                                             auto_recreate=auto_recreate, quat_order=quat_order, dt=dt))
        except BaseException:
            for s in shards:
                try:
                    s.delete()
                except Exception:  # pragma: no cover - best effort clean-up
                    pass
            for c in owned:
                c.close()
            raise
        return cls(shards, ranges, owned)

    # --------------------------------------------------------------------------------------------
    # Plumbing

    def _each(self, fn: Callable, parts) -> list:
        """fn(shard, *part) for every part, concurrently; the results in part order. Every call
        finishes before the first error is raised."""
        if len(parts) == 1:
            return [fn(self.shards[parts[0][0]], *parts[0])]
        futures = [self._pool.submit(fn, self.shards[p[0]], *p) for p in parts]
        concurrent.futures.wait(futures)
        return [f.result() for f in futures]

    def _route(self, env_ids, field: str = "env_ids") -> _Route:
        return _Route(self.ranges, _env_list(env_ids, field), field)

    def _step_parts(self, route: _Route, poses, twists, contacts):
        """Per part: (shard, positions, local ids, poses, twists, contacts) of a step."""
        links = len(self.moving_links)
        poses_p = route.rows(poses, "poses", links, 7)
        twists_p = route.rows(twists, "twists", links, 6) if twists is not None else [None] * len(route.parts)
        contacts_p = self._split_contacts(contacts, route) if contacts is not None else [None] * len(route.parts)
        return [(i, pos, local, p, t, c)
                for (i, pos, local), p, t, c in zip(route.parts, poses_p, twists_p, contacts_p)]

    def _split_contacts(self, contacts, route: _Route) -> list:
        """REPORTED contacts split by env (global env ids -> the shard's local ids)."""
        if isinstance(contacts, dict):
            contacts = ReportedContacts(**contacts)
        if not isinstance(contacts, ReportedContacts):
            raise TypeError(f"contacts: expected a taxel.ReportedContacts or a dict, got {type(contacts).__name__}")
        force = as_numpy(contacts.force)
        if force.ndim != 2 or force.shape[1] != 3:
            raise ValueError(f"contacts.force: expected shape [K, 3], got {list(force.shape)}")
        k = force.shape[0]
        env = _indices(contacts.env, k, "contacts.env", None)
        resolve = self.shards[0].link_index
        body = _indices(contacts.body, k, "contacts.body", resolve)
        partner = _indices(contacts.partner, k, "contacts.partner", resolve)
        friction = None if contacts.friction is None else as_numpy(contacts.friction)
        stepped = np.zeros(self.num_envs + 1, dtype=bool)  # the last slot: every env out of range
        stepped[:-1] = route.envs is None
        if route.envs is not None:
            stepped[route.envs] = True
        for i, e in enumerate(env.tolist()):
            if not stepped[e if 0 <= e < self.num_envs else -1]:
                raise field_error(InvalidArgumentError, f"contacts.env[{i}]",
                                  f"env {e} is not one of the envs this step updates")
        out = []
        for i, _, _ in route.parts:
            start, count = self.ranges[i]
            m = (env >= start) & (env < start + count)
            out.append(ReportedContacts(env[m] - start, body[m], partner[m], force[m],
                                        None if friction is None else friction[m]))
        return out

    # --------------------------------------------------------------------------------------------
    # Description

    @property
    def num_envs(self) -> int:
        return sum(c for _, c in self.ranges)

    @property
    def moving_links(self) -> Tuple[str, ...]:
        """Names of the moving links: the order of the poses' second axis."""
        return self.shards[0].moving_links

    @property
    def quat_order(self) -> Optional[int]:
        return self.shards[0].quat_order

    @property
    def dt(self) -> Optional[float]:
        return self.shards[0].dt

    @property
    def last_info(self) -> SceneInfo:
        """Shard 0's last info with the logical scene's num_envs and step count."""
        return dataclasses.replace(self.shards[0].last_info, num_envs=self.num_envs, step=self._steps)

    def info(self) -> SceneInfo:
        """As Scene.info: shard 0's description, num_envs of the whole scene, memory summed."""
        infos = self._each(lambda s, *_: s.info(), [(i,) for i in range(len(self.shards))])
        return dataclasses.replace(infos[0], num_envs=self.num_envs, step=self._steps,
                                   memory_bytes=sum(x.memory_bytes for x in infos))

    def link_index(self, name: Union[str, int], field: str = "link") -> int:
        return self.shards[0].link_index(name, field)

    # --------------------------------------------------------------------------------------------
    # Steps, reads, resets

    def step(self, poses: ArrayLike, twists: Optional[ArrayLike] = None, dt: Optional[float] = None,
             env_ids: EnvIds = None, quat_order: QuatOrder = None, read: ReadArg = None,
             contacts: Optional[ContactsLike] = None) -> StepResult:
        """As Scene.step: each server steps its envs' rows (concurrently); the readings (and the
        contact matrix the read asks for) are concatenated in the caller's env order. `contacts`
        (REPORTED) are split by their global env."""
        route = self._route(env_ids)
        parts = self._step_parts(route, poses, twists, contacts)
        results = self._each(lambda s, i, pos, local, p, t, c: s.step(p, t, dt, local, quat_order, read, c), parts)
        self._steps += 1
        return _merge_results(results, route, self.ranges, self._steps)

    def stream(self, timeout: Optional[float] = None) -> "ShardedStepStream":
        """One StepStream per server, stepped together (see ShardedStepStream)."""
        return ShardedStepStream(self, timeout)

    def read(self, env_ids: EnvIds = None, sensors: Optional[Sequence[str]] = None,
             channels: Optional[Sequence[str]] = None, ground_truth: bool = False, measured: bool = True,
             history: int = 0, sparse: Optional[bool] = None) -> StepResult:
        """As Scene.read, routed by env."""
        route = self._route(env_ids)
        results = self._each(lambda s, i, pos, local: s.read(local, sensors, channels, ground_truth, measured,
                                                             history, sparse), route.parts)
        return _merge_results(results, route, self.ranges, self._steps)

    def reset(self, env_ids: EnvIds = None) -> None:
        """As Scene.reset: each server resets its envs among `env_ids` (default all)."""
        envs = _env_list(env_ids)
        if envs is not None and not envs:
            return
        route = _Route(self.ranges, envs)
        self._each(lambda s, i, pos, local: s.reset(local), route.parts)

    def contact_matrix(self, env_ids: EnvIds = None, rows: Optional[Sequence[str]] = None,
                       columns: Optional[Sequence[str]] = None, friction: bool = False,
                       gradients: bool = False) -> ContactMatrix:
        """As Scene.contact_matrix, routed by env: [E, B, P, 3] in the caller's env order."""
        envs = _env_list(env_ids)
        if envs is not None and not envs:
            raise ValueError("env_ids: empty; pass None for every env")
        route = _Route(self.ranges, envs)
        parts = self._each(lambda s, i, pos, local: s.contact_matrix(local, rows, columns, friction, gradients),
                           route.parts)
        return _merge_matrices(parts, route, self.ranges)

    # --------------------------------------------------------------------------------------------
    # Sensors and lifetime

    def add_sensor(self, sensor: Sensor) -> SensorInfo:
        """Adds the sensor on every server (shard 0's info returned)."""
        return self._all(lambda s: s.add_sensor(sensor))[0]

    def remove_sensor(self, name: str) -> None:
        self._all(lambda s: s.remove_sensor(name))

    def update_sensor(self, name: str, probe_gain: Optional[ArrayLike] = None, env_ids: EnvIds = None,
                      noise: Optional[float] = None, random_walk: Optional[float] = None,
                      bias: Optional[float] = None) -> SensorInfo:
        """As Scene.update_sensor, routed by env; a `probe_gain` with one row per env is split with
        the envs, one shared row goes to every server."""
        route = self._route(env_ids)
        n = self.shards[0].last_info.sensors[name].num_probes if name in self.shards[0].last_info.sensors else None
        gains = None if probe_gain is None else as_numpy(probe_gain)
        per_env = gains is not None and n is not None and gains.size == route.total * n and gains.size != n
        rows = gains.reshape(route.total, n) if per_env else None
        infos = self._each(lambda s, i, pos, local: s.update_sensor(name, rows[pos] if per_env else gains, local,
                                                                     noise, random_walk, bias), route.parts)
        return infos[0]

    def _all(self, fn) -> list:
        return self._each(lambda s, *_: fn(s), [(i,) for i in range(len(self.shards))])

    def delete(self) -> None:
        """Deletes the sub-scene on every server (this handle is then dead)."""
        self._all(lambda s: s.delete())

    def close(self) -> None:
        """Stops the worker threads and closes the clients `create` made from targets."""
        self._pool.shutdown(wait=True)
        for c in self._owned:
            c.close()

    def __enter__(self) -> "ShardedScene":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        return f"ShardedScene({self.name!r}, num_envs={self.num_envs}, ranges={self.ranges})"


class ShardedStepStream:
    """One StepStream per server; `step()` sends every server its slice, waits for all responses
    and merges them as ShardedScene.step does. `sequence` counts the merged steps. A server whose
    envs a step (with env_ids) does not touch gets no request for it."""

    def __init__(self, scene: ShardedScene, timeout: Optional[float] = None):
        self._scene = scene
        self._streams: List[StepStream] = [s.stream(timeout) for s in scene.shards]
        self.sequence = 0

    @property
    def closed(self) -> bool:
        return all(s.closed for s in self._streams)

    def step(self, poses: ArrayLike, twists: Optional[ArrayLike] = None, dt: Optional[float] = None,
             env_ids: EnvIds = None, quat_order: QuatOrder = None, read: ReadArg = None,
             contacts: Optional[ContactsLike] = None) -> StepResult:
        """Like ShardedScene.step, over the streams."""
        sc = self._scene
        route = sc._route(env_ids)
        parts = sc._step_parts(route, poses, twists, contacts)
        streams = self._streams
        results = sc._each(lambda s, i, pos, local, p, t, c: streams[i].step(p, t, dt, local, quat_order, read, c),
                           parts)
        sc._steps += 1
        self.sequence += 1
        return _merge_results(results, route, sc.ranges, sc._steps, self.sequence)

    def close(self) -> None:
        """Half-closes every stream and waits for the servers to end them."""
        errors = []
        for s in self._streams:
            try:
                s.close()
            except Exception as e:  # close the others first
                errors.append(e)
        if errors:
            raise errors[0]

    def cancel(self) -> None:
        for s in self._streams:
            s.cancel()

    def __enter__(self) -> "ShardedStepStream":
        return self

    def __exit__(self, exc_type, *_) -> None:
        if exc_type is None:
            self.close()
        else:
            self.cancel()
