"""The `taxel` Python client. The protobuf/gRPC stubs are generated from ../../proto at build time
(gen_stubs.py: Debian's protoc + grpc_python_plugin) into taxel/_proto; they are never committed.

    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-index --no-build-isolation client/python

Runtime dependencies come from Debian (python3-grpcio, python3-protobuf, python3-numpy), seen
through --system-site-packages; they are not declared as install_requires so that pip never looks
for them on an index. Environment: TAXEL_PROTO_DIR, TAXEL_GOOGLEAPIS_DIR, PROTOC,
GRPC_PYTHON_PLUGIN override where the inputs and tools are.
"""
import os
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def generate_stubs():
    """Runs before setuptools looks at the package list (egg_info needs taxel/_proto to exist):
    generates the stubs from proto/ when it is there (a source checkout), else keeps the ones
    already generated (an sdist)."""
    sys.path.insert(0, HERE)
    try:
        import gen_stubs
    finally:
        sys.path.pop(0)
    proto_dir = os.environ.get("TAXEL_PROTO_DIR", gen_stubs.DEFAULT_PROTO_DIR)
    out = os.path.join(HERE, "taxel", "_proto")
    if os.path.isdir(proto_dir):
        gen_stubs.generate(proto_dir, os.environ.get("TAXEL_GOOGLEAPIS_DIR", gen_stubs.DEFAULT_GOOGLEAPIS_DIR), out)
    elif not os.path.isdir(out):
        raise SystemExit(f"taxel: cannot generate the stubs: no proto/ at {proto_dir} (set TAXEL_PROTO_DIR)")


generate_stubs()
setup(
    name="taxel",
    version="0.1.0",
    description="Python client of Taxel: tactile-sensor readings and contact forces as a gRPC service",
    python_requires=">=3.9",
    packages=["taxel", "taxel._proto", "taxel._proto.taxel", "taxel._proto.taxel.v1", "taxel._proto.google",
              "taxel._proto.google.rpc"],
    zip_safe=False,
)
