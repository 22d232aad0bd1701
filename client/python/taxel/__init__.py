"""Taxel: tactile-sensor readings and contact forces as a service — the Python client.

    import numpy as np, taxel

    client = taxel.Client("127.0.0.1:50051")
    spec = taxel.SceneSpec("grasp", num_envs=1024, seed=0)
    spec.robot("hand").link("pad", shapes=[taxel.Box(half_extents=(0.02, 0.02, 0.002), pos=(0, 0, -0.002))])
    spec.object("ball", shapes=[taxel.Sphere(0.05)])
    grid = taxel.grid_points_on_plane((-0.01, -0.01, 0), (0.01, 0.01, 0), (0, 0, 1), 16, 16)
    spec.add_sensor(taxel.KinematicTaxel("skin", link="pad", probe_local_pos=grid, probe_radius=0.002))
    scene = client.create_scene(spec)
    r = scene.step(poses, dt=0.01, quat_order="xyzw")   # poses [1024, 2, 7]
    r["skin"].force                                     # [1024, 16, 16, 3] float32, link frame, N

Contact matrix: `taxel.SceneSpec(..., contact_bodies=["pad"], contact_partners=["object/*"])`, then
`scene.step(..., read=taxel.Read(contact_matrix=True)).contact_matrix` or `scene.contact_matrix()`.

See README.md ("Python client") and proto/taxel/v1/*.proto for the wire contract.
"""
from taxel import placement, plot
from taxel._version import read_version
from taxel.client import DEFAULT_MAX_MESSAGE_BYTES, Client
from taxel.contact import ContactMatrixSpec, NonlinearLaw, ReportedContacts
from taxel.crosstalk import gaussian_crosstalk_kernel
from taxel.errors import (AbortedError, AlreadyExistsError, CancelledError, DataLossError, DeadlineExceededError,
                          FailedPreconditionError, FieldViolation, InternalError, InvalidArgumentError, NotFoundError,
                          OutOfRangeError, PermissionDeniedError, ResourceExhaustedError, TaxelError,
                          UnauthenticatedError, UnavailableError, UnimplementedError, UnknownError)
from taxel.info import ContactMatrixInfo, LinkInfo, Limits, MeshGridInfo, MeshInfo, OutputInfo, SceneInfo, SensorInfo, ServerInfo
from taxel.layout import grid_points_on_plane
from taxel.local_server import LocalServer
from taxel.mesh import mesh_content_id
from taxel.replica_set import ReplicaSet, resolve_targets
from taxel.results import ContactMatrix, Readings, SensorResult, StepResult, StepTiming
from taxel.scene import Read, Scene, StepStream
from taxel.sharded import ShardedScene, ShardedStepStream, split_envs
from taxel.spec import (WXYZ, XYZW, Asset, Box, Capsule, ContactDepthProbe, ContactProbe, Cylinder, ElastomerTaxel,
                        Entity, HalfSpace, Heightfield, ImplicitShape, ImplicitSphere, KinematicTaxel, Link, Mesh,
                        ProximityTaxel, SceneSpec, Sensor, Shape, SmoothPolytope, Sphere, Superellipsoid,
                        SuperellipticCylinder, TruncatedCone)

__version__: str = read_version()  # the repository's VERSION (taxel/_version.py)

__all__ = [
    "Client", "DEFAULT_MAX_MESSAGE_BYTES", "ReplicaSet", "resolve_targets", "placement", "Scene", "StepStream", "Read",
    "ShardedScene", "ShardedStepStream", "split_envs",
    "SceneSpec", "Entity", "Link", "Asset", "Shape", "Sphere", "Box", "Capsule", "Cylinder", "HalfSpace",
    "Heightfield", "Mesh", "ImplicitShape", "ImplicitSphere", "Superellipsoid", "SmoothPolytope",
    "SuperellipticCylinder", "TruncatedCone", "Sensor", "ContactProbe", "ContactDepthProbe", "KinematicTaxel", "ElastomerTaxel",
    "ProximityTaxel", "XYZW", "WXYZ", "ContactMatrixSpec", "NonlinearLaw", "ReportedContacts",
    "StepResult", "SensorResult", "Readings", "StepTiming", "ContactMatrix",
    "ServerInfo", "Limits", "MeshInfo", "MeshGridInfo", "SceneInfo", "LinkInfo", "SensorInfo", "OutputInfo", "ContactMatrixInfo",
    "grid_points_on_plane", "gaussian_crosstalk_kernel", "mesh_content_id", "plot", "LocalServer",
    "TaxelError", "FieldViolation", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError",
    "UnavailableError", "DataLossError", "UnauthenticatedError",
]
