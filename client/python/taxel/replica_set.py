"""`taxel.ReplicaSet`: scenes spread over several taxel-server replicas by rendezvous placement.

    rs = taxel.ReplicaSet(["10.0.0.5:50051", "10.0.0.6:50051", "10.0.0.7:50051"], auto_recreate=True)
    rs = taxel.ReplicaSet("dns:///taxel-headless.sim.svc:50051")   # every address the name has
    scene = rs.create_scene(spec)      # on the replica with the highest score for "tenant/name"
    scene.step(poses, dt=0.01, quat_order="xyzw")

Each replica is a `taxel.Client` underneath; the scenes are ordinary `taxel.Scene`s whose calls
go to the replica they live on. The rule (taxel.placement, docs/reference.md "Placement") is the
same in the C++ and Node clients, so every client of a tenant finds a scene on the same replica.
"""
import logging
import socket
import threading
from typing import Any, Dict, List, Optional, Sequence, Union

import grpc

from taxel import placement
from taxel._pb import scene_pb2, service_pb2
from taxel._types import QuatOrder
from taxel.client import Client
from taxel.errors import AlreadyExistsError, NotFoundError, TaxelError, UnavailableError, from_rpc_error
from taxel.info import SceneInfo
from taxel.scene import Scene
from taxel.spec import SceneSpec

__all__ = ["ReplicaSet", "resolve_targets"]

log = logging.getLogger("taxel")


def _split_host_port(hostport: str, field: str):
    if hostport.startswith("["):  # [v6]:port
        host, sep, port = hostport[1:].partition("]:")
    else:
        host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{field}: expected host:port with a port in 1..65535, got {hostport!r}")
    return host, int(port)


def resolve_targets(targets: Union[str, Sequence[str]]) -> List[str]:
    """The replica targets: `targets` as given, except that an entry "dns:///host:port" (or
    "dns://authority/host:port") becomes one "address:port" target for every address the name
    resolves to (getaddrinfo; a headless Service's name gives one address per pod), in sorted
    order. Duplicates are dropped. ValueError for a malformed entry or an empty result."""
    entries = [targets] if isinstance(targets, str) else list(targets)
    out: List[str] = []
    for i, entry in enumerate(entries):
        field = f"targets[{i}]"
        if not isinstance(entry, str) or not entry:
            raise ValueError(f"{field}: expected a non-empty target string, got {entry!r}")
        if not entry.startswith("dns:"):
            out.append(entry)
            continue
        rest = entry[len("dns:"):]
        hostport = rest[2:].partition("/")[2] if rest.startswith("//") else rest
        host, port = _split_host_port(hostport, field)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as e:
            raise ValueError(f"{field}: cannot resolve {host!r}: {e}") from None
        addresses = sorted({info[4][0] for info in infos})
        out.extend(f"[{a}]:{port}" if ":" in a else f"{a}:{port}" for a in addresses)
    out = list(dict.fromkeys(out))
    if not out:
        raise ValueError("targets: no replica to connect to")
    return out


class _Route:
    """What a Scene of a ReplicaSet calls instead of a Client: the client of the replica the scene
    lives on now, moved to the next replica by score when that one becomes unreachable."""

    def __init__(self, rs: "ReplicaSet", name: str, replica_id: str):
        self._rs = rs
        self._name = name
        self.replica_id = replica_id

    @property
    def _owner(self) -> Client:
        return self._rs._clients[self.replica_id]

    # The parts of Client that Scene and StepStream use.
    @property
    def sparse_readings(self) -> bool:
        return self._owner.sparse_readings

    @property
    def _raw(self):
        return self._owner._raw

    @property
    def _metadata(self):
        return self._owner._metadata

    @property
    def wait_for_ready(self) -> bool:
        return self._owner.wait_for_ready

    @property
    def target(self) -> str:
        return self._owner.target

    def _rpc(self, method: str, request, timeout="default", raw: bool = False):
        return self._owner._rpc(method, request, timeout, raw)

    def _update_spec(self, name: str, fn) -> None:
        self._owner._update_spec(name, fn)

    def delete_scene(self, name: str) -> None:
        self._owner.delete_scene(name)

    def _recover(self, name: str, err: TaxelError) -> Optional[SceneInfo]:
        if isinstance(err, UnavailableError):
            return self._rs._fail_over(self, err)
        return self._owner._recover(name, err)  # NOT_FOUND: the replica restarted


class ReplicaSet:
    """Scenes placed over several taxel-server replicas.

    Args:
      targets: a list of gRPC targets ("host:port"), or one "dns:///name:port" whose addresses are
        the replicas (see resolve_targets), or a list mixing both.
      tenant: the tenant the token maps to on the servers ("" without authentication): part of
        the placement key "tenant/name", so every client of the tenant agrees.
      auto_recreate: default for the scenes: a scene whose replica is unreachable (UNAVAILABLE)
        moves to the next live replica by score and is re-created there from the spec this client
        kept (meshes re-uploaded), and the call is retried once; a scene gone from a restarted
        replica (NOT_FOUND) is re-created in place, as with Client. A re-created scene starts from
        step 0 with fresh sensor state.
      probe_timeout: how long `refresh()` (and the constructor) wait for each replica to connect
        and answer GetServerInfo, seconds.
      **client_options: passed to every taxel.Client (timeout, token, credentials, ...).

    On construction each replica is asked its replica_id (GetServerInfo); replicas that do not
    answer within probe_timeout are left out (UnavailableError when none answers) until `refresh()`. Two targets with
    the same replica_id are a ValueError. Thread-safe.
    """

    def __init__(self, targets: Union[str, Sequence[str]], tenant: str = "", auto_recreate: bool = False,
                 probe_timeout: float = 2.0, **client_options: Any):
        if not isinstance(tenant, str):
            raise TypeError(f"tenant: expected a string, got {type(tenant).__name__}")
        self.tenant = tenant
        self.auto_recreate = bool(auto_recreate)
        self.probe_timeout = float(probe_timeout)
        self._targets = resolve_targets(targets)
        self._client_options = dict(client_options)
        self._lock = threading.Lock()
        self._by_target: Dict[str, Client] = {t: Client(t, **self._client_options) for t in self._targets}
        self._clients: Dict[str, Client] = {}  # replica_id -> client, every replica ever seen
        self._live: Dict[str, bool] = {}       # replica_id -> reachable at last contact
        self.refresh()
        if not any(self._live.values()):
            self.close()
            raise UnavailableError(f"replica set: no replica answered GetServerInfo among {self._targets}")

    def refresh(self) -> Dict[str, str]:
        """Asks every target its replica_id again; replicas that answer are live (again). Scenes
        stay where they are; new scenes and failovers use the refreshed set. Returns
        {replica_id: target} of the live replicas."""
        seen: Dict[str, str] = {}
        for target, client in self._by_target.items():
            rid = self._probe(client)
            if rid is None:
                continue
            if not rid:
                raise ValueError(f"replica set: {target} reports no replica_id (a server older than --replica_id)")
            if rid in seen:
                raise ValueError(f"replica set: targets {seen[rid]} and {target} both report replica_id {rid!r}; "
                                 "replica ids must be unique")
            seen[rid] = target
        with self._lock:
            for rid, target in seen.items():
                self._clients[rid] = self._by_target[target]
            self._live = {rid: rid in seen for rid in self._clients}
        return dict(seen)

    def _probe(self, client: Client) -> Optional[str]:
        """The replica_id `client`'s server reports; None when it does not answer in time. The call
        waits for the channel to connect (a channel in reconnect backoff would fail at once)."""
        try:
            resp = client._stub.GetServerInfo(service_pb2.GetServerInfoRequest(), timeout=self.probe_timeout,
                                              metadata=client._metadata, wait_for_ready=True)
        except grpc.RpcError as e:
            if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                return None
            raise from_rpc_error(e) from None
        return resp.replica_id

    # --------------------------------------------------------------------------------------------
    # Placement

    @property
    def replica_ids(self) -> List[str]:
        """The live replicas' ids (sorted)."""
        with self._lock:
            return sorted(r for r, up in self._live.items() if up)

    def client(self, replica_id: str) -> Client:
        """The taxel.Client of one replica (KeyError for an unknown id)."""
        return self._clients[replica_id]

    def ranking(self, name: str) -> List[str]:
        """The live replicas by decreasing score for scene `name` of this tenant."""
        return placement.rank(self.replica_ids, self.tenant, name)

    def place(self, name: str) -> str:
        """The replica id scene `name` goes to (the highest score among the live replicas)."""
        ranking = self.ranking(name)
        if not ranking:
            raise UnavailableError("replica set: no live replica")
        return ranking[0]

    def _mark_down(self, replica_id: str) -> None:
        with self._lock:
            if self._live.get(replica_id):
                log.warning("taxel: replica %r (%s) is unreachable; its scenes move to the next replica by score",
                            replica_id, self._clients[replica_id].target)
                self._live[replica_id] = False

    # --------------------------------------------------------------------------------------------
    # Scenes

    def create_scene(self, spec: Union[SceneSpec, "scene_pb2.SceneSpec"], replace: bool = False,
                     auto_recreate: Optional[bool] = None, quat_order: QuatOrder = None,
                     dt: Optional[float] = None) -> Scene:
        """Client.create_scene on the replica `place(spec.name)`; the client of that replica keeps
        the spec (and meshes) for failover. A replica that turns out unreachable is marked down
        and the next one by score is tried."""
        name = spec.name
        recreate = self.auto_recreate if auto_recreate is None else auto_recreate
        while True:
            rid = self.place(name)
            try:
                created = self._clients[rid].create_scene(spec, replace=replace, auto_recreate=recreate,
                                                          quat_order=quat_order, dt=dt)
            except UnavailableError:
                self._mark_down(rid)
                continue
            return self._rehome(created, rid)

    def scene(self, name: str, auto_recreate: Optional[bool] = None, quat_order: QuatOrder = None,
              dt: Optional[float] = None) -> Scene:
        """A handle on an existing scene: looked up on the live replicas in ranking order (so a
        scene created when the replicas were others is still found). NotFoundError if none has it."""
        for rid in self.ranking(name):
            try:
                found = self._clients[rid].scene(name, auto_recreate=False, quat_order=quat_order, dt=dt)
            except NotFoundError:
                continue
            except UnavailableError:
                self._mark_down(rid)
                continue
            found.auto_recreate = self.auto_recreate if auto_recreate is None else auto_recreate
            return self._rehome(found, rid)
        raise NotFoundError(f"scene: no scene named {name!r} on any live replica", field_path="scene")

    def _rehome(self, scene: Scene, replica_id: str) -> Scene:
        scene._client = _Route(self, scene.name, replica_id)
        return scene

    def delete_scene(self, name: str) -> None:
        """Deletes scene `name` from the first live replica (in ranking order) that has it."""
        self.scene(name).delete()

    def list_scenes(self) -> List[SceneInfo]:
        """The scenes of this tenant on every live replica."""
        out: List[SceneInfo] = []
        for rid in self.replica_ids:
            try:
                out.extend(self._clients[rid].list_scenes())
            except UnavailableError:
                self._mark_down(rid)
        return out

    def _fail_over(self, route: _Route, err: TaxelError) -> Optional[SceneInfo]:
        """Moves route's scene off its unreachable replica: re-created, from the kept spec, on the
        next live replica by score. None (the error stands) without a kept spec or a live replica."""
        name, old = route._name, route._owner
        spec = old.kept_spec(name)
        if spec is None:
            return None
        self._mark_down(route.replica_id)
        for rid in self.ranking(name):
            new = self._clients[rid]
            new._adopt(old, name)
            log.warning("taxel: scene %r moves from replica %r to %r (%s)", name, route.replica_id, rid, err.message)
            try:
                info = new._create(spec)
            except AlreadyExistsError:  # another client moved it first
                info = new.scene(name).info()
            except UnavailableError:
                new._forget(name)
                self._mark_down(rid)
                continue
            old._forget(name)
            route.replica_id = rid
            return info
        return None

    # --------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes every channel; scenes stay on the servers."""
        for client in self._by_target.values():
            client.close()

    def __enter__(self) -> "ReplicaSet":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        return f"ReplicaSet({self._targets!r}, live={self.replica_ids!r})"
