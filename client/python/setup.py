"""The `taxel` Python client. The protobuf/gRPC stubs are generated from ../../proto at build time
(gen_stubs.py: Debian's protoc + grpc_python_plugin) into taxel/_proto; they are never committed.

    make wheel                      # dist/taxel-<VERSION>-py3-none-any.whl (build_wheel.py)
    pip install dist/taxel-*.whl    # into any Python >= 3.9 that has (or can get) its dependencies

    /usr/bin/python3 -m venv --system-site-packages .venv      # Debian: make python
    .venv/bin/pip install --no-index --no-build-isolation client/python

The version is the repository's VERSION file (the one version of the server, the clients and the
wheel); setup.py copies it into the package as taxel/VERSION, with the repository's LICENSE next to
this file, so that an sdist or a wheel carries both. In an sdist, where ../../VERSION does not
exist, the copy is read instead.

Runtime dependencies: numpy, grpcio >= 1.51, protobuf >= 3.20. Tested with Debian 12's
python3-numpy 1.24.2, python3-grpcio 1.51.1 and python3-protobuf 4.21.12 (protobuf 3.21), which a
venv made with --system-site-packages sees, so pip finds them installed and never asks an index.
Environment: TAXEL_PROTO_DIR, TAXEL_GOOGLEAPIS_DIR, PROTOC, GRPC_PYTHON_PLUGIN override where the
inputs and tools are.
"""
import os
import shutil
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PACKAGE_VERSION = os.path.join(HERE, "taxel", "VERSION")


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


def version() -> str:
    """The repository's VERSION (copied into the package), else the copy an sdist carries."""
    repo_version = os.path.join(REPO, "VERSION")
    if os.path.isfile(repo_version):
        with open(repo_version, encoding="ascii") as f:
            text = f.read().strip()
        with open(PACKAGE_VERSION, "w", encoding="ascii") as f:
            f.write(text + "\n")
    elif os.path.isfile(PACKAGE_VERSION):
        with open(PACKAGE_VERSION, encoding="ascii") as f:
            text = f.read().strip()
    else:
        raise SystemExit(f"taxel: no VERSION at {repo_version} nor {PACKAGE_VERSION}")
    if not text or any(c.isspace() for c in text):
        raise SystemExit(f"taxel: VERSION must be one version string such as 0.1.0, got {text!r}")
    return text


def license_files():
    """The repository's LICENSE, copied next to setup.py (where setuptools takes license files)."""
    repo_license = os.path.join(REPO, "LICENSE")
    if os.path.isfile(repo_license):
        shutil.copyfile(repo_license, os.path.join(HERE, "LICENSE"))
    return ["LICENSE"] if os.path.isfile(os.path.join(HERE, "LICENSE")) else []


generate_stubs()
setup(
    name="taxel",
    version=version(),
    description="Python client of Taxel: tactile-sensor readings and contact forces as a gRPC service",
    license="Apache-2.0",
    license_files=license_files(),
    classifiers=[
        "License :: OSI Approved :: Apache Software License",
        "Programming Language :: Python :: 3",
        "Typing :: Typed",
    ],
    python_requires=">=3.9",
    install_requires=["numpy", "grpcio>=1.51", "protobuf>=3.20"],
    packages=["taxel", "taxel._proto", "taxel._proto.taxel", "taxel._proto.taxel.v1", "taxel._proto.google",
              "taxel._proto.google.rpc"],
    package_data={"taxel": ["py.typed", "VERSION"]},
    zip_safe=False,
)
