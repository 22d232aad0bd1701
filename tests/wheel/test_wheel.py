"""The wheel as a user gets it: `make wheel`'s build (client/python/build_wheel.py), installed with
pip into a fresh venv, used from outside the source tree.

    TAXEL_SERVER_BINARY=build/server/taxel-server /usr/bin/python3 -m pytest -q tests/wheel

The venv is `/usr/bin/python3 -m venv --system-site-packages` (Debian's numpy, grpcio and
protobuf satisfy the wheel's requirements, since no index is reachable) and the wheel goes in with
`pip install --no-index`. The README's quick start then runs in that venv with `python -I` (no
PYTHONPATH, no script directory on sys.path, no user site) from a temporary directory, so the
`taxel` it imports can only be the installed one; quickstart_in_venv.py saves what it read.

The quick start's numbers, worked out here: the ball (radius r = 5 cm, centre c = (0, 0, 0.049) in
the left pad's frame, which is the world frame since the pad sits at the origin unrotated) reaches
1 mm below the pad's plane z = 0. A probe at p on that plane (radius R = 2 mm) reads

    depth = R − (|p − c| − r)          (> 0 for every probe of the ±7.5 mm grid: the farthest,
                                         a corner, has |p − c| = √(2·0.0075² + 0.049²) = 0.0501348
                                         so depth = 0.002 − 0.0001348 = 1.865 mm)
    F     = k · depth · n,  n = (p − c) / |p − c|  (the unit normal out of the ball; k = 2000 N/m,
                                                    exponent 1, and no velocity: damping adds 0)
    T     = p × F                      (the twist term needs a spin; there is none)

e.g. at p = (0, 0, 0) F would be (0, 0, −2000 · 0.003) = (0, 0, −6) N. The right pad, 10 cm aside,
is 5.5 cm from the ball's surface: it reads 0 everywhere.
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SYSTEM_PYTHON = "/usr/bin/python3"

K = 2000.0        # normal_stiffness of the quick start, N/m
PROBE_R = 0.002   # probe_radius, m
BALL_R = 0.05     # taxel.Sphere(0.05), m
BALL_C = np.array([0.0, 0.0, 0.049])


def repo_version() -> str:
    with open(os.path.join(REPO, "VERSION"), encoding="ascii") as f:
        return f.read().strip()


def readme_quickstart() -> str:
    """The first ```python block after '### Quick start' in the README's 'Python client' section."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("\n## Python client\n"):]
    section = section[section.index("\n### Quick start\n"):]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "README: no ```python block under 'Python client' / 'Quick start'"
    return m.group(1)


@pytest.fixture(scope="module")
def work():
    d = tempfile.mkdtemp(prefix="taxel-wheel-test-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def wheel(work):
    """Built as `make wheel` does, into a directory of the test's own."""
    out = subprocess.run([SYSTEM_PYTHON, os.path.join(REPO, "client", "python", "build_wheel.py"),
                          "--out", os.path.join(work, "dist")], check=True, capture_output=True, text=True)
    path = out.stdout.strip().splitlines()[-1]
    assert os.path.isfile(path), out.stdout + out.stderr
    return path


@pytest.fixture(scope="module")
def venv(work, wheel):
    """A fresh venv with the wheel installed; returns its python."""
    env_dir = os.path.join(work, "venv")
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", env_dir], check=True)
    python = os.path.join(env_dir, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--quiet", wheel],
                   check=True, cwd=work, env=clean_env())
    return python


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def server_binary() -> str:
    path = os.environ.get("TAXEL_SERVER_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.exit("TAXEL_SERVER_BINARY must name the taxel-server binary (CTest sets it)", returncode=2)
    return path


@pytest.fixture(scope="module")
def quickstart(work, venv):
    """Runs the README quick start in the venv, cwd a fresh directory outside the source tree."""
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    block = os.path.join(run_dir, "quickstart.py")
    with open(block, "w", encoding="utf-8") as f:
        f.write(readme_quickstart())
    runner = shutil.copy(os.path.join(HERE, "quickstart_in_venv.py"), run_dir)
    out = os.path.join(run_dir, "out.npz")
    proc = subprocess.run([venv, "-I", runner, server_binary(), block, out], cwd=run_dir, env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = np.load(out)
    return data, json.loads(str(data["facts"]))


def test_wheel_name_and_contents(wheel):
    version = repo_version()
    assert os.path.basename(wheel) == f"taxel-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(f"taxel-{version}.dist-info/METADATA").decode()
        license_text = z.read(f"taxel-{version}.dist-info/LICENSE").decode()
        packaged_version = z.read("taxel/VERSION").decode().strip()
    for stub in ("scene_pb2.py", "service_pb2.py", "service_pb2_grpc.py", "tensor_pb2.py"):
        assert f"taxel/_proto/taxel/v1/{stub}" in names
    assert "taxel/_proto/google/rpc/error_details_pb2.py" in names
    assert "taxel/py.typed" in names and packaged_version == version
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    headers = [line for line in meta.splitlines() if ": " in line]
    assert f"Version: {version}" in headers and "License: Apache-2.0" in headers
    assert "Requires-Python: >=3.9" in headers
    requires = sorted(re.sub(r"[ ()]", "", h.split(": ", 1)[1]) for h in headers if h.startswith("Requires-Dist: "))
    assert requires == ["grpcio>=1.51", "numpy", "protobuf>=3.20"]


def test_sdist_builds_the_same_wheel_without_the_repository(work, wheel):
    """An sdist has no ../../VERSION and no proto/: its wheel takes the version from the copy
    taxel/VERSION and keeps the stubs it carries."""
    sys.path.insert(0, os.path.join(REPO, "client", "python"))
    try:
        import build_wheel
    finally:
        sys.path.pop(0)
    root = tempfile.mkdtemp(prefix="sdist-", dir=work)
    client = build_wheel.stage(os.path.join(root, "src"))
    env = dict(clean_env(), PIP_NO_INDEX="1")
    subprocess.run([SYSTEM_PYTHON, "setup.py", "-q", "sdist", "-d", os.path.join(root, "sdist")], check=True,
                   cwd=client, env=env, capture_output=True)
    version = repo_version()
    sdist = os.path.join(root, "sdist", f"taxel-{version}.tar.gz")
    with tarfile.open(sdist) as t:
        t.extractall(os.path.join(root, "unpacked"))
    unpacked = os.path.join(root, "unpacked", f"taxel-{version}")
    assert not os.path.exists(os.path.join(unpacked, "..", "..", "VERSION"))
    subprocess.run([SYSTEM_PYTHON, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps", "--quiet",
                    "-w", os.path.join(root, "wheel"), unpacked], check=True, cwd=root, env=env)
    rebuilt = os.path.join(root, "wheel", os.path.basename(wheel))
    with zipfile.ZipFile(rebuilt) as z, zipfile.ZipFile(wheel) as original:
        assert z.read("taxel/VERSION").decode().strip() == version
        assert sorted(n for n in z.namelist() if "dist-info" not in n) == \
            sorted(n for n in original.namelist() if "dist-info" not in n)


def test_versions_agree(quickstart, wheel):
    """One version: VERSION, the Node package (and its lock file), the wheel's name and metadata,
    taxel.__version__ of the installed wheel."""
    _, facts = quickstart
    version = repo_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    with open(os.path.join(REPO, "client", "node", "package.json"), encoding="utf-8") as f:
        package = json.load(f)
    assert package["version"] == version and package["license"] == "Apache-2.0"
    with open(os.path.join(REPO, "client", "node", "package-lock.json"), encoding="utf-8") as f:
        lock = json.load(f)
    assert lock["version"] == version and lock["packages"][""]["version"] == version
    assert lock["packages"][""]["license"] == "Apache-2.0"
    assert os.path.basename(wheel).split("-")[1] == version
    assert facts["version"] == version and facts["dist_version"] == version


def test_pip_show(venv, work):
    out = subprocess.run([venv, "-m", "pip", "show", "taxel"], check=True, capture_output=True, text=True,
                         cwd=work, env=clean_env()).stdout
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert fields["Name"] == "taxel" and fields["Version"] == repo_version()
    assert fields["License"] == "Apache-2.0"
    assert sorted(r.strip() for r in fields["Requires"].split(",")) == ["grpcio", "numpy", "protobuf"]
    assert fields["Location"].startswith(os.path.join(work, "venv"))


def test_quickstart_imports_the_installed_wheel(quickstart, work):
    _, facts = quickstart
    site = os.path.join(work, "venv", "lib")
    assert facts["taxel_file"].startswith(site) and "site-packages" in facts["taxel_file"], facts["taxel_file"]
    assert not facts["taxel_file"].startswith(os.path.join(REPO, "client"))
    assert facts["license"] == "Apache-2.0"
    # setuptools 66 writes "grpcio (>=1.51)"; newer ones "grpcio>=1.51": the same requirement.
    assert sorted(re.sub(r"[ ()]", "", r) for r in facts["requires"]) == ["grpcio>=1.51", "numpy", "protobuf>=3.20"]


def expected_left_pad(grid: np.ndarray):
    """F and T of every probe of the left pad (the module doc's closed form), [16, 16, 3] each."""
    d = grid - BALL_C
    dist = np.linalg.norm(d, axis=-1, keepdims=True)
    depth = PROBE_R - (dist - BALL_R)
    np.testing.assert_allclose(depth.min(), 0.0018652, rtol=1e-4)  # the corners (module doc)
    assert depth.max() < 0.003  # the grid has no probe at the pad's centre (16 is even)
    force = K * depth * d / dist
    return force, np.cross(grid, force)


def test_quickstart_readings_match_the_closed_form(quickstart):
    data, facts = quickstart
    assert facts["moving_links"] == ["hand/left_pad", "hand/right_pad", "ball/body"]
    assert facts["num_envs"] == 1024 and facts["env_ids_first"] == [0, 1023, 1024]
    assert facts["first_step"] == 1 and facts["last_step"] == 11  # one step, then 10 on the stream
    grid = data["grid"]
    assert grid.shape == (16, 16, 3) and np.all(grid[..., 2] == 0)
    # grid_points_on_plane's corners are the ones asked for (a spot check of the input only).
    np.testing.assert_allclose(grid[0, 0, :2], (-0.0075, -0.0075))
    np.testing.assert_allclose(grid[-1, -1, :2], (0.0075, 0.0075))
    force, torque = expected_left_pad(grid)
    # Centre-most probe, by hand: p = (±0.0005, ±0.0005, 0), |p − c| = √(5e-7 + 0.049²) = 0.04900510,
    # depth = 0.002 − (0.04900510 − 0.05) = 0.0029949, |F| = 2000 · depth = 5.98980 N.
    np.testing.assert_allclose(np.linalg.norm(force[8, 8]), 5.98980, rtol=1e-5)
    for name in ("first_left_force", "last_left_force"):
        got = data[name]
        assert got.shape == (1024, 16, 16, 3) and got.dtype == np.float32
        np.testing.assert_allclose(got, np.broadcast_to(force, got.shape), atol=2e-5, rtol=1e-5)
    for name in ("first_left_torque", "last_left_torque"):
        np.testing.assert_allclose(data[name], np.broadcast_to(torque, data[name].shape), atol=1e-6)
    np.testing.assert_array_equal(data["first_right_force"], np.zeros((1024, 16, 16, 3), np.float32))


# Run in the venv: every parameter and return of the public API's methods is annotated (what an
# IDE completes from), and the result types declare their channel attributes.
ANNOTATIONS_CHECK = r"""
import inspect, typing, taxel
missing = []
classes = [taxel.Client, taxel.Scene, taxel.StepStream, taxel.SceneSpec, taxel.Entity, taxel.Link, taxel.Asset,
           taxel.ShardedScene, taxel.ShardedStepStream, taxel.ReplicaSet, taxel.Read, taxel.StepResult,
           taxel.SensorResult, taxel.Readings, taxel.ContactMatrix, taxel.SceneInfo, taxel.Sphere, taxel.Box,
           taxel.Capsule, taxel.Cylinder, taxel.HalfSpace, taxel.Heightfield, taxel.Mesh, taxel.KinematicTaxel,
           taxel.ContactMatrixSpec, taxel.ReportedContacts, taxel.LocalServer]
for cls in classes:
    for name, fn in vars(cls).items():
        if isinstance(fn, property):
            fn, name = fn.fget, name + " (property)"
        if isinstance(fn, (classmethod, staticmethod)):
            fn = fn.__func__
        if not inspect.isfunction(fn) or (name.startswith("_") and name != "__init__"):
            continue
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        for p in params[1:] if params and params[0].name in ("self", "cls") else params:
            if p.annotation is inspect.Parameter.empty:
                missing.append(f"{cls.__name__}.{name}({p.name})")
        if name != "__init__" and sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{cls.__name__}.{name} -> ?")
for fn in (taxel.grid_points_on_plane, taxel.mesh_content_id, taxel.gaussian_crosstalk_kernel, taxel.split_envs):
    sig = inspect.signature(fn)
    missing += [f"{fn.__name__}({p.name})" for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
hints = typing.get_type_hints(taxel.SensorResult)
for channel in ("contact", "depth", "normal", "area", "partner", "force", "torque", "displacement"):
    if channel not in hints or channel not in typing.get_type_hints(taxel.Readings):
        missing.append(f"channel {channel}")
print("\n".join(missing))
"""


def test_public_api_is_annotated(venv, work):
    out = subprocess.run([venv, "-I", "-c", ANNOTATIONS_CHECK], check=True, capture_output=True, text=True,
                         cwd=work, env=clean_env()).stdout.splitlines()
    missing = [line for line in out if line.strip()]
    assert missing == [], "not annotated: " + ", ".join(missing)


def test_package_sources_are_python_3_9(wheel):
    """py3-none-any promises any Python >= 3.9: no syntax newer than 3.9, and no `X | Y`
    annotation (evaluated at import before 3.10) in a module without `from __future__ import
    annotations`."""
    with zipfile.ZipFile(wheel) as z:
        sources = {n: z.read(n).decode() for n in z.namelist() if n.endswith(".py")}
    assert len(sources) > 20
    for name, text in sources.items():
        tree = ast.parse(text, filename=name, feature_version=(3, 9))
        if "from __future__ import annotations" in text:
            continue
        for node in ast.walk(tree):
            notes = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                notes = [a.annotation for a in node.args.args + node.args.kwonlyargs if a.annotation] + [node.returns]
            elif isinstance(node, ast.AnnAssign):
                notes = [node.annotation]
            for note in filter(None, notes):
                unions = [n for n in ast.walk(note) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr)]
                assert not unions, f"{name}:{note.lineno}: an `X | Y` annotation needs Python 3.10"
