#!/usr/bin/env python3
"""Builds the `taxel` wheel, offline: dist/taxel-<VERSION>-py3-none-any.whl.

    build_wheel.py [--out DIR] [--python PYTHON]      (make wheel: --out dist at the repo root)

The client's sources are staged in a temporary copy of the repository's layout (client/python,
proto/, VERSION, LICENSE), and the wheel is built there with
`PYTHON -m pip wheel --no-index --no-build-isolation --no-deps` (Debian's python3-setuptools and
python3-wheel; no index is ever asked). Staging keeps the source tree as it is: setuptools' build/
and egg-info and the regenerated stubs stay in the copy, so a build never races a test run that
imports client/python/taxel. Prints the wheel's path; exit status 1 when pip fails or does not
produce exactly one taxel wheel of that version.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# What setup.py reads from the client directory (everything else there is build output).
CLIENT_FILES = ["setup.py", "pyproject.toml", "gen_stubs.py", "MANIFEST.in"]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "_proto", ".proto-*", "VERSION")


def stage(root: str) -> str:
    """Copies what the build reads into `root` in the repository's layout; returns the client dir."""
    client = os.path.join(root, "client", "python")
    os.makedirs(client)
    for name in CLIENT_FILES:
        shutil.copy2(os.path.join(HERE, name), client)
    shutil.copytree(os.path.join(HERE, "taxel"), os.path.join(client, "taxel"), ignore=IGNORE)
    shutil.copytree(os.path.join(REPO, "proto"), os.path.join(root, "proto"))
    for name in ("VERSION", "LICENSE"):
        shutil.copy2(os.path.join(REPO, name), root)
    return client


def build(out: str, python: str = sys.executable) -> str:
    """Builds the wheel into `out` (created if needed; an older wheel of the same version is
    replaced) and returns its path."""
    with open(os.path.join(REPO, "VERSION"), encoding="ascii") as f:
        version = f.read().strip()
    name = f"taxel-{version}-py3-none-any.whl"
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taxel-wheel-") as tmp:
        client = stage(os.path.join(tmp, "src"))
        built = os.path.join(tmp, "dist")
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("TAXEL_PROTO_DIR", None)  # the staged proto/ is the one to build from
        subprocess.run([python, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps",
                        "--quiet", "-w", built, client], check=True, cwd=tmp, env=env)
        wheels = sorted(os.path.basename(p) for p in glob.glob(os.path.join(built, "*.whl")))
        if wheels != [name]:
            raise SystemExit(f"build_wheel: expected {name}, pip built {wheels}")
        shutil.copyfile(os.path.join(built, name), os.path.join(out, name))
    return os.path.join(out, name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "dist"), help="directory of the wheel (default: dist/)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter whose pip, setuptools and wheel build it (default: this one)")
    args = ap.parse_args(argv)
    try:
        print(build(args.out, args.python))
    except subprocess.CalledProcessError as e:
        print(f"build_wheel: {' '.join(e.cmd[:4])} ... failed with status {e.returncode}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
