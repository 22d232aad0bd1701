"""Spatial-crosstalk kernels computed on the client, for the `crosstalk_kernel` imperfection option."""
import math

import numpy as np

__all__ = ["gaussian_crosstalk_kernel"]


def _positive(value, what: str) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"gaussian_crosstalk_kernel: {what} must be finite and > 0, got {value!r}")
    return v


def gaussian_crosstalk_kernel(rows: int, cols: int, sigma: float, spacing: float = 1.0) -> np.ndarray:
    """The L1-normalised Gaussian crosstalk kernel the server builds from `crosstalk_sigma`
    (core/sensors/imperfections.h, GaussianCrosstalkKernel), as a float64 [rows, cols] array:

        k[a, b] = exp(−(x² + y²) / (2σ²)) / Σ exp(...),
        y = (a − rows//2)·row_spacing,  x = (b − cols//2)·col_spacing

    so k[rows//2, cols//2] is the taxel's own weight and the kernel sums to 1. Same operations in
    the same order as the server (the values agree to the last bit on the same libm).

    Args:
      rows, cols: kernel size, odd and >= 1 (the server sizes its own kernel 2·ceil(3σ/spacing)+1,
        at most 2·grid−1, per axis).
      sigma: standard deviation, in the unit of `spacing` (m for the sensor's grid pitch); > 0.
      spacing: the grid pitch, a scalar or (row_spacing, col_spacing); > 0. Default 1 (σ in
        taxels).

    Use it as an explicit kernel (`crosstalk_kernel=`, cross-correlated with the grid), e.g.
    blended with the identity as the server does for `crosstalk_strength` s:
    `(1 − s)·δ + s·k`. Raises ValueError for even or non-positive sizes, σ ≤ 0 or spacing ≤ 0.
    """
    if int(rows) != rows or int(cols) != cols or rows < 1 or cols < 1 or rows % 2 == 0 or cols % 2 == 0:
        raise ValueError(f"gaussian_crosstalk_kernel: the kernel size must be odd and positive, got {rows}x{cols}")
    rows, cols = int(rows), int(cols)
    sigma = _positive(sigma, "sigma")
    sp = np.asarray(spacing, dtype=np.float64).reshape(-1)
    if sp.size == 1:
        row_spacing = col_spacing = _positive(sp[0], "spacing")
    elif sp.size == 2:
        row_spacing, col_spacing = _positive(sp[0], "row spacing"), _positive(sp[1], "column spacing")
    else:
        raise ValueError(f"gaussian_crosstalk_kernel: spacing is a scalar or (row_spacing, col_spacing), got "
                         f"{sp.size} values")
    # Python floats and math.exp (the C library's exp), summed row-major like the server.
    two_sigma_sq = 2 * sigma * sigma
    weights = []
    total = 0.0
    for a in range(rows):
        y = (a - rows // 2) * row_spacing
        for b in range(cols):
            x = (b - cols // 2) * col_spacing
            w = math.exp(-(x * x + y * y) / two_sigma_sq)
            weights.append(w)
            total += w
    return np.array([w / total for w in weights], dtype=np.float64).reshape(rows, cols)
