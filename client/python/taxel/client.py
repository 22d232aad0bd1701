"""`taxel.Client`: a connection to a taxel-server, its meshes and its scenes."""
import logging
import threading
from typing import Dict, List, Optional, Tuple, Union

import grpc

from taxel._pb import scene_pb2, service_pb2, service_pb2_grpc
from taxel._types import ArrayLike, QuatOrder
from taxel.errors import AlreadyExistsError, NotFoundError, from_rpc_error
from taxel.info import MeshInfo, SceneInfo, ServerInfo
from taxel.mesh import canonical_mesh_arrays, mesh_content_id
from taxel.scene import Scene
from taxel.spec import SceneSpec
from taxel.tensors import encode_int32, encode_real

__all__ = ["Client", "DEFAULT_MAX_MESSAGE_BYTES"]

log = logging.getLogger("taxel")

DEFAULT_MAX_MESSAGE_BYTES = 64 << 20  # the server's default limit


def _mesh_ids(spec: "scene_pb2.SceneSpec") -> List[str]:
    ids = []
    for e in spec.entities:
        shape_lists = [l.shapes for l in e.links] + [ls.shapes for a in e.assets for ls in a.link_shapes]
        for shapes in shape_lists:
            ids.extend(s.mesh.mesh_id for s in shapes if s.WhichOneof("geometry") == "mesh")
    return ids


class Client:
    """A connection to taxel-server.

    Args:
      target: "host:port", "unix:/path/taxel.sock", or any gRPC target.
      timeout: deadline of every unary call, seconds (None: no deadline).
      token: bearer token sent as `authorization: Bearer <token>` (servers run with
        --auth_tokens_file); each token's tenant sees only its own scenes.
      max_message_bytes: largest request/response this client sends or accepts (the server's
        default limit is 64 MiB; see `server_info().limits`).
      auto_recreate: default for the scenes of this client: when a call on a scene gets NOT_FOUND
        for the scene (the server restarted), re-upload the meshes, re-create the scene from the
        spec kept by the client and retry the call once. The scene restarts from step 0 with
        fresh sensor state.
      credentials: `grpc.ChannelCredentials` for TLS (e.g. `grpc.ssl_channel_credentials(...)`).
      wait_for_ready: let calls wait (up to `timeout`) for an unreachable server instead of
        failing at once with UnavailableError.
      options: extra gRPC channel arguments.
      sparse_readings: steps and reads of at least taxel.scene.SPARSE_MIN_BYTES (64 KiB) of
        readings ask for the sparse form (zeros left out on the wire: a quarter of the bytes of a
        typical grasp batch, 20 % faster end to end even on loopback) and expand it with numpy;
        `taxel.Read(sparse=True|False)` decides for one call.

    The client remembers the meshes it uploaded (their id and bytes), so a known mesh is never sent
    twice and can be restored after a server restart; and the specs of the scenes it created, for
    `auto_recreate`. Use as a context manager or call `close()`. Thread-safe.
    """

    def __init__(self, target: str, timeout: Optional[float] = 30.0, token: Optional[str] = None,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, auto_recreate: bool = False,
                 credentials: Optional[grpc.ChannelCredentials] = None, wait_for_ready: bool = False,
                 options: Optional[List[Tuple[str, object]]] = None, sparse_readings: bool = True):
        self.target = target
        self.sparse_readings = bool(sparse_readings)
        self.timeout = timeout
        self.auto_recreate = auto_recreate
        self.wait_for_ready = wait_for_ready
        self.max_message_bytes = int(max_message_bytes)
        channel_options = [
            ("grpc.max_send_message_length", self.max_message_bytes),
            ("grpc.max_receive_message_length", self.max_message_bytes),
            # Reconnect quickly to a restarted sidecar (the default backoff starts at 1 s).
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 2000),
        ] + list(options or [])
        if credentials is not None:
            self._channel = grpc.secure_channel(target, credentials, options=channel_options)
        else:
            self._channel = grpc.insecure_channel(target, options=channel_options)
        self._stub = service_pb2_grpc.TaxelStub(self._channel)
        # Responses with readings are taken as the bytes gRPC received (no protobuf parse, no copy
        # of the readings): StepResult/ContactMatrix.from_wire make numpy views into them.
        service = "/" + service_pb2.DESCRIPTOR.services_by_name["Taxel"].full_name
        self._raw = {
            method: self._channel.unary_unary(f"{service}/{method}", request_serializer=request.SerializeToString,
                                              response_deserializer=None)
            for method, request in (("Step", service_pb2.StepRequest),
                                    ("ReadSensors", service_pb2.ReadSensorsRequest),
                                    ("GetContactMatrix", service_pb2.GetContactMatrixRequest))}
        self._raw["StepStream"] = self._channel.stream_stream(
            f"{service}/StepStream", request_serializer=service_pb2.StepRequest.SerializeToString,
            response_deserializer=None)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._lock = threading.Lock()
        self._meshes: Dict[str, "service_pb2.UploadMeshRequest"] = {}  # id -> request, for re-uploads
        self._mesh_infos: Dict[str, MeshInfo] = {}
        self._specs: Dict[str, "scene_pb2.SceneSpec"] = {}  # scenes created here, for auto_recreate

    # --------------------------------------------------------------------------------------------
    # Plumbing

    def _rpc(self, method: str, request, timeout="default", raw: bool = False):
        """Calls a unary RPC; gRPC errors become TaxelError subclasses. `raw`: return the
        response's serialized bytes (Step, ReadSensors, GetContactMatrix)."""
        call = self._raw[method] if raw else getattr(self._stub, method)
        try:
            return call(request, timeout=self.timeout if timeout == "default" else timeout, metadata=self._metadata,
                        wait_for_ready=self.wait_for_ready)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def close(self) -> None:
        """Closes the channel; scenes stay on the server."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        return f"Client({self.target!r})"

    # --------------------------------------------------------------------------------------------
    # Server and meshes

    def server_info(self) -> ServerInfo:
        """Versions, limits, capabilities and load of the server."""
        return ServerInfo.from_proto(self._rpc("GetServerInfo", service_pb2.GetServerInfoRequest()))

    def upload_mesh(self, vertices: ArrayLike, triangles: ArrayLike, force: bool = False,
                    grid_max_error: Optional[float] = None, grid_band: Optional[float] = None) -> str:
        """Uploads a triangle mesh and returns its content id (SHA-256 hex).

        `vertices`: [V, 3] real (float32/float64 sent as they are), metres, mesh frame.
        `triangles`: [T, 3] integer indices, counter-clockwise seen from outside.
        `grid_max_error`, `grid_band` (m): also build the mesh's narrow-band signed-distance grid now
        (for sensors with `sdf_backend="GRID"`; they otherwise build it on first use), for that
        error (default 1e-4) over that band (default 5e-3, at least the largest probe radius);
        `mesh_info(id).grid` then holds what the server measured. A grid over the memory limit
        raises ResourceExhaustedError naming grid.max_error.

        The id is computed locally first (the server's canonical hash, taxel.mesh_content_id); a mesh
        this client already uploaded is not sent again unless `force` or a grid is asked for.
        Server-side validation errors (degenerate triangles, indices out of range) raise
        InvalidArgumentError.
        """
        v, t = canonical_mesh_arrays(vertices, triangles)
        mesh_id = mesh_content_id(v, t)
        want_grid = grid_max_error is not None or grid_band is not None
        with self._lock:
            if mesh_id in self._meshes and not force and not want_grid:
                return mesh_id
        req = service_pb2.UploadMeshRequest()
        encode_real(v, req.vertices)
        encode_int32(t, req.triangles)
        if want_grid:
            req.grid.SetInParent()  # present even when both are 0 (the defaults)
            req.grid.max_error = 0.0 if grid_max_error is None else float(grid_max_error)
            req.grid.band = 0.0 if grid_band is None else float(grid_band)
        return self._upload(mesh_id, req)

    def _upload(self, mesh_id: str, req) -> str:
        resp = self._rpc("UploadMesh", req)
        if resp.mesh_id != mesh_id:  # pragma: no cover - a server with another hash
            log.warning("taxel: the server's mesh id %s differs from the local content id %s", resp.mesh_id, mesh_id)
        with self._lock:
            self._meshes[resp.mesh_id] = req
            self._mesh_infos[resp.mesh_id] = MeshInfo.from_proto(resp)
        return resp.mesh_id

    def delete_mesh(self, mesh_id: str) -> None:
        """Forgets a mesh this client's tenant uploaded; the server frees it once no tenant holds it.

        Raises FailedPreconditionError while one of the tenant's scenes uses it (delete those first)
        and NotFoundError (`.field == "mesh_id"`) when the tenant has not uploaded it.
        """
        self._rpc("DeleteMesh", service_pb2.DeleteMeshRequest(mesh_id=mesh_id))
        with self._lock:
            self._meshes.pop(mesh_id, None)
            self._mesh_infos.pop(mesh_id, None)

    def mesh_info(self, mesh_id: str) -> Optional[MeshInfo]:
        """What the server answered when this client uploaded `mesh_id` (None if it did not)."""
        with self._lock:
            return self._mesh_infos.get(mesh_id)

    def known_meshes(self) -> List[str]:
        """Ids of the meshes this client uploaded (and would restore after a server restart)."""
        with self._lock:
            return list(self._meshes)

    def _restore_meshes(self, ids) -> bool:
        """Re-uploads the meshes among `ids` this client knows; True if any was sent."""
        with self._lock:
            reqs = [(i, self._meshes[i]) for i in dict.fromkeys(ids) if i in self._meshes]
        for mesh_id, req in reqs:
            self._upload(mesh_id, req)
        return bool(reqs)

    # --------------------------------------------------------------------------------------------
    # Scenes

    def create_scene(self, spec: Union[SceneSpec, "scene_pb2.SceneSpec"], replace: bool = False,
                     auto_recreate: Optional[bool] = None, quat_order: QuatOrder = None,
                     dt: Optional[float] = None) -> Scene:
        """Registers a scene and returns its handle.

        `spec`: a taxel.SceneSpec (inline meshes are uploaded first) or a taxel.v1.SceneSpec proto.
        `replace`: delete an existing scene of that name first. `auto_recreate`: see Client
        (default: the client's). `quat_order`, `dt`: defaults for `Scene.step` (still explicit).
        Errors: InvalidArgumentError naming the spec field ("spec.sensors[0].probe_radius"),
        AlreadyExistsError (a scene of that name exists; the message says to pass replace=True),
        NotFoundError (unknown mesh id or link; `.field` names it), ResourceExhaustedError.
        """
        if isinstance(spec, SceneSpec):
            proto = spec.to_proto(resolve_mesh=self.upload_mesh)
        elif isinstance(spec, scene_pb2.SceneSpec):
            proto = scene_pb2.SceneSpec()
            proto.CopyFrom(spec)
        else:
            raise TypeError(f"create_scene: expected a taxel.SceneSpec or taxel.v1.SceneSpec, got {type(spec).__name__}")
        if replace:
            try:
                self._rpc("DeleteScene", service_pb2.DeleteSceneRequest(scene=proto.name))
            except NotFoundError:
                pass
        try:
            info = self._create(proto)
        except AlreadyExistsError as e:
            if replace:  # someone created it again between our delete and create
                raise
            raise e.with_hint(f"pass replace=True to delete the existing scene '{proto.name}' and create this "
                              "one") from None
        with self._lock:
            self._specs[proto.name] = proto
        return Scene(self, info, auto_recreate=self.auto_recreate if auto_recreate is None else auto_recreate,
                     quat_order=quat_order, dt=dt)

    def _create(self, proto) -> SceneInfo:
        """CreateScene; a mesh the server lost (it restarted) but this client knows is re-uploaded
        and the creation retried once."""
        try:
            return SceneInfo.from_proto(self._rpc("CreateScene", service_pb2.CreateSceneRequest(spec=proto)))
        except NotFoundError as e:
            about_mesh = (e.field or "").endswith(".mesh.mesh_id") or ".mesh.mesh_id:" in e.message
            if not about_mesh or not self._restore_meshes(_mesh_ids(proto)):
                raise
        return SceneInfo.from_proto(self._rpc("CreateScene", service_pb2.CreateSceneRequest(spec=proto)))

    def _recreate(self, name: str) -> Optional[SceneInfo]:
        """Re-creates scene `name` from its kept spec (None if this client has no spec for it)."""
        with self._lock:
            proto = self._specs.get(name)
        if proto is None:
            return None
        log.warning("taxel: scene %r is gone from %s (server restart?); re-creating it from its spec", name,
                    self.target)
        try:
            return self._create(proto)
        except AlreadyExistsError:  # someone else re-created it meanwhile
            return self.scene(name).info()

    def _recover(self, name: str, err) -> Optional[SceneInfo]:
        """Scene's auto_recreate: after NOT_FOUND for scene `name` (the server restarted), its
        re-created info; None when `err` is another error or there is no spec to re-create from."""
        if not isinstance(err, NotFoundError) or not err.message.startswith("scene:"):
            return None
        info = self._recreate(name)
        if info is None:
            log.warning("taxel: scene %r is gone and this client has no spec to re-create it", name)
        return info

    def scene(self, name: str, auto_recreate: Optional[bool] = None, quat_order: QuatOrder = None,
              dt: Optional[float] = None) -> Scene:
        """A handle on an existing scene (NotFoundError if there is none). auto_recreate needs the
        spec, which only the client that created the scene keeps."""
        info = SceneInfo.from_proto(self._rpc("GetScene", service_pb2.GetSceneRequest(scene=name)))
        return Scene(self, info, auto_recreate=self.auto_recreate if auto_recreate is None else auto_recreate,
                     quat_order=quat_order, dt=dt)

    def list_scenes(self) -> List[SceneInfo]:
        """The scenes of this tenant."""
        resp = self._rpc("ListScenes", service_pb2.ListScenesRequest())
        return [SceneInfo.from_proto(s) for s in resp.scenes]

    def delete_scene(self, name: str) -> None:
        """Deletes a scene (NotFoundError if there is none); an open stream on it ends."""
        with self._lock:
            self._specs.pop(name, None)
        self._rpc("DeleteScene", service_pb2.DeleteSceneRequest(scene=name))

    def kept_spec(self, name: str) -> Optional["scene_pb2.SceneSpec"]:
        """The spec (with its current sensors) this client would re-create `name` from."""
        with self._lock:
            return self._specs.get(name)

    def _adopt(self, other: "Client", name: str) -> None:
        """Takes over scene `name`'s kept spec from `other` (a replica it leaves), with the meshes
        `other` uploaded for it, so that _create can restore them here."""
        with other._lock:
            spec = other._specs.get(name)
            meshes = {i: other._meshes[i] for i in _mesh_ids(spec) if i in other._meshes} if spec else {}
        with self._lock:
            if spec is not None:
                self._specs[name] = spec
            for mesh_id, req in meshes.items():
                self._meshes.setdefault(mesh_id, req)

    def _forget(self, name: str) -> None:
        """Drops the kept spec of `name` (the scene moved to another replica)."""
        with self._lock:
            self._specs.pop(name, None)

    def _update_spec(self, name: str, fn) -> None:
        with self._lock:
            if name in self._specs:
                fn(self._specs[name])

