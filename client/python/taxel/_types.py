"""Type aliases of the public API's annotations, for IDE completion and type checkers; the client
never looks at them at run time.

`ArrayLike` is numpy's (anything `numpy.asarray` takes: lists, numpy, CPU torch tensors, warp
arrays); the client converts with taxel.tensors.as_numpy, which also moves CUDA tensors.
"""
from typing import Any, Optional, Union

try:
    from numpy.typing import ArrayLike
except ImportError:  # pragma: no cover - numpy < 1.20
    ArrayLike = Any  # type: ignore[misc]

__all__ = ["ArrayLike", "EnvIds", "QuatOrder", "Vec3", "Quat"]

EnvIds = Optional[ArrayLike]
"""Env indices (a sequence or integer array, in the order of the poses' first axis); None = every
env. Not a boolean mask: use numpy.nonzero(mask)[0]."""

QuatOrder = Optional[Union[str, int]]
"""Quaternion order: "xyzw" (taxel.XYZW) or "wxyz" (taxel.WXYZ), any case, or the wire enum; None =
the scene's default (a call with no order anywhere is a ValueError)."""

Vec3 = Optional[ArrayLike]
"""A position (3 floats, metres); None = the origin."""

Quat = Optional[ArrayLike]
"""A unit quaternion (4 floats in the call's quat_order); None = the identity."""
