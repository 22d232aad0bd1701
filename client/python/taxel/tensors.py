"""numpy arrays <-> taxel.v1.Tensor.

Outgoing arrays (poses, twists, probe positions, vertices, ...): anything `numpy.asarray` accepts —
numpy, CPU torch tensors, warp arrays, lists. float32 and float64 travel as they are (no
conversion); other real types become float64. The bytes are taken with one `tobytes()` of the
C-contiguous little-endian array (a copy only when the input is strided or big-endian); protobuf
then copies them once more into the message.

Incoming arrays: `numpy.frombuffer` over bytes, reshaped — a zero-copy, read-only view
(`arr.flags.writeable` is False; `arr.base` leads to the bytes object). `decode` views a Tensor's
`data`; the readings of steps, reads and contact-matrix reads are views straight into the
response's bytes as gRPC received them (taxel/_wire.py), so one array keeps the whole response
alive. Copy it (`arr.copy()`) to modify it or to keep it alone.
"""
import math
from typing import Optional

import numpy as np

from taxel._pb import tensor_pb2
from taxel._types import ArrayLike

__all__ = ["encode_real", "encode_int32", "decode", "expand_sparse", "as_numpy", "DTYPES"]

# Wire dtype -> numpy dtype (little-endian).
DTYPES = {
    tensor_pb2.FLOAT32: np.dtype("<f4"),
    tensor_pb2.FLOAT64: np.dtype("<f8"),
    tensor_pb2.INT32: np.dtype("<i4"),
    tensor_pb2.BOOL: np.dtype("?"),
}


def as_numpy(x: ArrayLike) -> np.ndarray:
    """`numpy.asarray(x)`. A torch tensor is first detached and moved to the CPU
    (`.detach().cpu()`); an object numpy cannot read directly but that has a `.numpy()` method
    (a warp array on a GPU) is converted with it."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
    try:
        a = np.asarray(x)
    except (TypeError, ValueError, RuntimeError):
        if callable(getattr(x, "numpy", None)):
            return np.asarray(x.numpy())
        raise
    if a.dtype == object and a.ndim == 0 and callable(getattr(x, "numpy", None)):
        return np.asarray(x.numpy())  # numpy wrapped the object itself: ask it for its data
    return a


def _little_contiguous(a: np.ndarray) -> np.ndarray:
    # (not np.ascontiguousarray: it turns a 0-d array into shape [1])
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a if a.flags.c_contiguous else np.array(a, order="C")


def encode_real(x: ArrayLike, out: Optional["tensor_pb2.Tensor"] = None) -> "tensor_pb2.Tensor":
    """A FLOAT32 or FLOAT64 tensor of `x` (float32/float64 kept, other real types -> float64)."""
    a = as_numpy(x)
    if a.dtype.kind == "f" and a.dtype.itemsize == 4:
        wire = tensor_pb2.FLOAT32
    elif a.dtype.kind == "f" and a.dtype.itemsize == 8:
        wire = tensor_pb2.FLOAT64
    elif a.dtype.kind in "biuf":
        a, wire = a.astype("<f8"), tensor_pb2.FLOAT64
    else:
        raise TypeError(f"expected a real array (float32 or float64), got dtype {a.dtype}")
    a = _little_contiguous(a)
    t = tensor_pb2.Tensor() if out is None else out
    t.dtype = wire
    t.shape[:] = a.shape
    t.data = a.tobytes()
    return t


def encode_int32(x: ArrayLike, out: Optional["tensor_pb2.Tensor"] = None) -> "tensor_pb2.Tensor":
    """An INT32 tensor of an integer array (values must fit in int32)."""
    a = as_numpy(x)
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and a.size == 0):
        raise TypeError(f"expected an integer array, got dtype {a.dtype}")
    if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
        raise ValueError("expected values that fit in int32")
    a = _little_contiguous(a.astype("<i4", copy=False))
    t = tensor_pb2.Tensor() if out is None else out
    t.dtype = tensor_pb2.INT32
    t.shape[:] = a.shape
    t.data = a.tobytes()
    return t


def expand_sparse(values, mask, dtype: np.dtype, shape) -> np.ndarray:
    """The dense array of a tensor in the sparse form (Tensor.nonzero_mask): `mask` has bit i
    (byte i // 8, least significant bit first) set where element i is stored in `values`; the
    other elements are zero. A new array, read-only like every received array. ValueError when the
    sizes do not fit the shape."""
    count = math.prod(shape)
    m = np.frombuffer(mask, np.uint8)
    if m.size != (count + 7) // 8:
        raise ValueError(f"tensor: sparse form of {count} elements needs a {(count + 7) // 8}-byte mask, "
                         f"got {m.size}")
    bits = np.unpackbits(m, bitorder="little")
    if bits[count:].any():
        raise ValueError("tensor: sparse form with mask bits past the last element")
    bits = bits[:count].view(bool)
    v = np.frombuffer(values, dtype)
    if len(values) != v.size * dtype.itemsize or v.size != np.count_nonzero(bits):
        raise ValueError(f"tensor: sparse form with {np.count_nonzero(bits)} mask bits and {len(values)} bytes "
                         f"of {dtype}")
    out = np.zeros(count, dtype)
    out[bits] = v
    out.flags.writeable = False
    return out.reshape(shape)


def decode(t: "tensor_pb2.Tensor") -> np.ndarray:
    """A read-only numpy view over the tensor's bytes (zero copy); a tensor in the sparse form
    (Tensor.nonzero_mask) is expanded into a new array."""
    dtype = DTYPES.get(t.dtype)
    if dtype is None:
        raise ValueError(f"tensor: unknown dtype {t.dtype}")
    shape = tuple(int(d) for d in t.shape)
    if t.nonzero_mask:
        return expand_sparse(t.data, t.nonzero_mask, dtype, shape)
    data = t.data  # one bytes object; the view keeps it alive
    count = math.prod(shape)  # (1 for a scalar; not np.prod, 20× slower on a short tuple)
    if len(data) != count * dtype.itemsize:
        raise ValueError(f"tensor: shape {list(shape)} of {dtype} needs {count * dtype.itemsize} bytes, "
                         f"got {len(data)}")
    return np.frombuffer(data, dtype=dtype, count=count).reshape(shape)
