"""Probe layouts computed on the client."""
import math

import numpy as np

from taxel._types import ArrayLike

from taxel.tensors import as_numpy

__all__ = ["grid_points_on_plane"]


def _dot(a, b):
    # Left to right, as Eigen evaluates a 3-vector dot product: (a0·b0 + a1·b1) + a2·b2.
    return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]


def _normalized(a):
    return [c / math.sqrt(_dot(a, a)) for c in a]


def grid_points_on_plane(lo: ArrayLike, hi: ArrayLike, normal: ArrayLike, nx: int, ny: int) -> np.ndarray:
    """A (ny, nx, 3) float64 grid of points on the plane through `lo` and `hi` with normal `normal`,
    like Genesis' `generate_grid_points_on_plane`; identical (same operations in the same order, in
    float64) to the server's `taxel::sensors::GridPointsOnPlane` (core/sensors/probe_layout.h).

    Tangent basis: Gram–Schmidt of the two world axes least aligned with the normal, taken in
    x, y, z order — for an axis-aligned normal simply the two other axes in increasing order
    (normal ±z: u = x, v = y; ±y: u = x, v = z; ±x: u = y, v = z), whatever the normal's sign.
    Point [i, j] = c·n̂ + u·lerp(lo·u, hi·u, j/(nx−1)) + v·lerp(lo·v, hi·v, i/(ny−1)) with
    c = ½(lo + hi)·n̂; a single row or column sits at lo. Units are those of lo and hi (m).

    Raises ValueError when nx or ny < 1, the normal is zero or not finite, or lo/hi are not finite
    3-vectors.
    """
    nx, ny = int(nx), int(ny)
    if nx < 1 or ny < 1:
        raise ValueError(f"grid_points_on_plane: nx and ny must be >= 1, got nx={nx} ny={ny}")
    lo_a, hi_a, n_a = (np.asarray(as_numpy(x), dtype=np.float64).reshape(-1) for x in (lo, hi, normal))
    if lo_a.shape != (3,) or hi_a.shape != (3,) or n_a.shape != (3,):
        raise ValueError("grid_points_on_plane: lo, hi and normal must be 3-vectors")
    if not (np.isfinite(lo_a).all() and np.isfinite(hi_a).all()):
        raise ValueError("grid_points_on_plane: lo and hi must be finite")
    lo_v, hi_v, nrm = [float(c) for c in lo_a], [float(c) for c in hi_a], [float(c) for c in n_a]
    length = math.sqrt(_dot(nrm, nrm))
    if not math.isfinite(length) or length < 1e-12:
        raise ValueError("grid_points_on_plane: normal must be a finite, non-zero vector")
    n = [c / length for c in nrm]
    # The most aligned axis is dropped (the first one on a tie); the other two, in order, are
    # orthonormalised against n.
    drop = 0
    for a in (1, 2):
        if abs(n[a]) > abs(n[drop]):
            drop = a
    axes = [[1.0 if k == a else 0.0 for k in range(3)] for a in range(3) if a != drop]
    du = _dot(axes[0], n)
    u = _normalized([axes[0][k] - du * n[k] for k in range(3)])
    dvn, dvu = _dot(axes[1], n), _dot(axes[1], u)
    v = _normalized([(axes[1][k] - dvn * n[k]) - dvu * u[k] for k in range(3)])
    c = 0.5 * _dot([lo_v[k] + hi_v[k] for k in range(3)], n)
    u0, u1, v0, v1 = _dot(lo_v, u), _dot(hi_v, u), _dot(lo_v, v), _dot(hi_v, v)
    tu = np.arange(nx, dtype=np.float64) / (nx - 1) if nx > 1 else np.zeros(1)
    tv = np.arange(ny, dtype=np.float64) / (ny - 1) if ny > 1 else np.zeros(1)
    su = u0 + tu * (u1 - u0)  # [nx]
    sv = v0 + tv * (v1 - v0)  # [ny]
    out = np.empty((ny, nx, 3), dtype=np.float64)
    for k in range(3):
        out[:, :, k] = (c * n[k] + su[None, :] * u[k]) + sv[:, None] * v[k]
    return out
