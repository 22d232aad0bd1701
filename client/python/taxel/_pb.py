"""The generated protobuf/gRPC modules, in one place.

The stubs are generated at build time from proto/ (see client/python/gen_stubs.py) into
`taxel/_proto/`, with their imports rewritten to `taxel._proto.taxel.v1`. google.rpc.Status and
BadRequest come from googleapis-common-protos when that is installed (so that the two never
register `google/rpc/status.proto` twice in protobuf's default pool), else from our own copy.
"""
try:
    from taxel._proto.taxel.v1 import scene_pb2, service_pb2, service_pb2_grpc, tensor_pb2
except ImportError as e:  # pragma: no cover - only without generated stubs
    raise ImportError(
        "taxel: the generated protobuf stubs are missing (taxel/_proto). Install the package with "
        "`pip install client/python`, build the CMake target taxel_python_stubs, or run "
        "`/usr/bin/python3 client/python/gen_stubs.py`.") from e

try:  # pragma: no cover - depends on what else is installed
    from google.rpc import error_details_pb2, status_pb2
except ImportError:
    from taxel._proto.google.rpc import error_details_pb2, status_pb2

__all__ = ["tensor_pb2", "scene_pb2", "service_pb2", "service_pb2_grpc", "status_pb2", "error_details_pb2"]
