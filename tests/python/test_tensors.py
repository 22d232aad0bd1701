"""taxel.tensors: arrays to wire tensors and back (dtypes, shapes, byte order, zero copy)."""
import struct

import numpy as np
import pytest

from taxel._pb import tensor_pb2
from taxel.tensors import decode, encode_int32, encode_real


def root_base(a):
    while isinstance(a, np.ndarray):
        a = a.base
    return a


@pytest.mark.parametrize("dtype, wire", [(np.float32, tensor_pb2.FLOAT32), (np.float64, tensor_pb2.FLOAT64)])
def test_float32_and_float64_travel_unconverted(dtype, wire):
    a = np.array([[1.5, -2.0, 3.25]], dtype=dtype)
    t = encode_real(a)
    assert t.dtype == wire and list(t.shape) == [1, 3]
    fmt = "<3f" if dtype == np.float32 else "<3d"
    assert t.data == struct.pack(fmt, 1.5, -2.0, 3.25)  # little-endian, C order, no padding


def test_other_real_types_become_float64_and_lists_work():
    t = encode_real([[1, 2], [3, 4]])
    assert t.dtype == tensor_pb2.FLOAT64 and list(t.shape) == [2, 2]
    assert t.data == struct.pack("<4d", 1, 2, 3, 4)
    assert encode_real(np.float16(0.5)).dtype == tensor_pb2.FLOAT64


def test_scalars_keep_an_empty_shape():
    t = encode_real(0.002)
    assert list(t.shape) == [] and t.data == struct.pack("<d", 0.002)


def test_strided_and_big_endian_inputs_are_made_contiguous_little_endian():
    a = np.arange(12, dtype=">f8").reshape(3, 4)[:, ::2]  # [[0, 2], [4, 6], [8, 10]], big-endian, strided
    t = encode_real(a)
    assert t.dtype == tensor_pb2.FLOAT64 and list(t.shape) == [3, 2]
    assert t.data == struct.pack("<6d", 0, 2, 4, 6, 8, 10)


def test_non_numeric_input_is_a_type_error():
    with pytest.raises(TypeError, match="expected a real array"):
        encode_real(np.array(["a"]))


def test_int32_tensor_and_range_check():
    t = encode_int32(np.array([[0, 1, 2]], dtype=np.int64))
    assert t.dtype == tensor_pb2.INT32 and t.data == struct.pack("<3i", 0, 1, 2)
    with pytest.raises(ValueError, match="fit in int32"):
        encode_int32([2 ** 31])


@pytest.mark.parametrize("wire, fmt, values, np_dtype", [
    (tensor_pb2.FLOAT32, "<4f", (1, 2, 3, 4), np.float32),
    (tensor_pb2.FLOAT64, "<4d", (1, 2, 3, 4), np.float64),
    (tensor_pb2.INT32, "<4i", (-1, 0, 1, 7), np.int32),
    (tensor_pb2.BOOL, "<4?", (True, False, False, True), np.bool_),
])
def test_decode_is_a_read_only_zero_copy_view(wire, fmt, values, np_dtype):
    t = tensor_pb2.Tensor(dtype=wire, shape=[2, 2], data=struct.pack(fmt, *values))
    a = decode(t)
    assert a.dtype == np_dtype and a.shape == (2, 2)
    np.testing.assert_array_equal(a.reshape(-1), values)
    assert not a.flags.writeable
    base = root_base(a)
    assert isinstance(base, bytes) and len(base) == a.nbytes
    # The array's memory is the bytes object's own buffer.
    assert np.frombuffer(base, np.uint8).ctypes.data == a.ctypes.data
    with pytest.raises(ValueError):
        a[0, 0] = 0


def test_decode_rejects_a_length_mismatch():
    with pytest.raises(ValueError, match=r"needs 16 bytes, got 12"):
        decode(tensor_pb2.Tensor(dtype=tensor_pb2.FLOAT32, shape=[4], data=b"\0" * 12))


class FakeTorchTensor:
    """Duck-types torch: numpy cannot read it before .detach().cpu()."""

    def __init__(self, a):
        self.a, self.moved = a, []

    def detach(self):
        self.moved.append("detach")
        return self

    def cpu(self):
        self.moved.append("cpu")
        return self.a


class FakeDeviceArray:
    """Duck-types a warp array on a GPU: no buffer protocol, but .numpy() copies to the host."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None):
        raise TypeError("device memory")

    def numpy(self):
        return self.a


def test_torch_and_warp_like_inputs():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = FakeTorchTensor(a)
    enc = encode_real(t)
    assert t.moved == ["detach", "cpu"] and enc.dtype == tensor_pb2.FLOAT32 and enc.data == a.tobytes()
    enc = encode_real(FakeDeviceArray(a.astype(np.float64)))
    assert enc.dtype == tensor_pb2.FLOAT64 and list(enc.shape) == [2, 3]
