"""`taxel.__version__`: the project's one version, from the repository's VERSION file.

Where it is read, first found wins:
  1. a source checkout (this package at client/python/taxel, used through PYTHONPATH): the
     repository's own VERSION, two levels above client/python, so that a bump is seen at once;
  2. an installed wheel or sdist: the copy `taxel/VERSION` that setup.py wrote when it built them;
  3. the installed distribution's metadata (importlib.metadata);
  4. "0+unknown" for a copy of the package taken without any of them: importing never fails for
     want of a version.
"""
import os

__all__ = ["read_version"]

_HERE = os.path.dirname(os.path.abspath(__file__))
UNKNOWN = "0+unknown"


def read_version() -> str:
    """The version string ("0.1.0"), see the module doc for where it comes from."""
    client_dir = os.path.dirname(_HERE)
    repo_version = os.path.join(client_dir, "..", "..", "VERSION")
    in_checkout = os.path.exists(os.path.join(client_dir, "setup.py")) and os.path.isfile(repo_version)
    for path in ([repo_version] if in_checkout else []) + [os.path.join(_HERE, "VERSION")]:
        if os.path.isfile(path):
            with open(path, encoding="ascii") as f:
                return f.read().strip()
    try:
        import importlib.metadata
        return importlib.metadata.version("taxel")
    except Exception:  # not installed, or metadata unreadable
        return UNKNOWN
