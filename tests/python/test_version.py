"""taxel.__version__ in a source checkout, and where it comes from elsewhere (taxel/_version.py).
The installed wheel's version is checked by tests/wheel."""
import os
import shutil
import subprocess
import sys

import pytest

import taxel

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def repo_version() -> str:
    with open(os.path.join(REPO, "VERSION"), encoding="ascii") as f:
        return f.read().strip()


def test_checkout_reads_the_repository_version():
    assert taxel.__file__.startswith(os.path.join(REPO, "client", "python"))
    assert taxel.__version__ == repo_version()


def version_of_copy(tmp_path, package_version=None) -> str:
    """taxel.__version__ of a copy of the package outside the checkout (no setup.py above it),
    optionally with a taxel/VERSION as a wheel has; imported in a fresh interpreter (-I: no
    PYTHONPATH, no user site), so the checkout is not on its path."""
    dst = tmp_path / "taxel"
    shutil.copytree(os.path.dirname(taxel.__file__), dst, ignore=shutil.ignore_patterns("__pycache__", "VERSION"))
    if package_version is not None:
        (dst / "VERSION").write_text(package_version + "\n")
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import taxel; print(taxel.__version__)"
    out = subprocess.run([sys.executable, "-I", "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path)
    return out.stdout.strip()


def test_package_copy_reads_its_own_version_file(tmp_path):
    assert version_of_copy(tmp_path, "9.8.7") == "9.8.7"


def test_package_copy_without_version_file_still_imports(tmp_path):
    try:
        import importlib.metadata
        importlib.metadata.version("taxel")
        pytest.skip("a distribution named taxel is installed for this interpreter: its metadata would answer")
    except importlib.metadata.PackageNotFoundError:
        pass
    assert version_of_copy(tmp_path) == "0+unknown"
