"""Responses with readings (StepResponse, ReadSensorsResponse, GetContactMatrixResponse) read
straight from their wire bytes (the protobuf encoding).

Through protobuf, a 1024-env grasp step (12.6 MB of readings) is copied three times on the
client: gRPC's bytes, the parsed message, and the `bytes` object each Tensor.data access creates.
Here the response stays the one `bytes` object gRPC hands over, and every reading is a
`numpy.frombuffer` view into it at the offset of its Tensor.data (or, when that offset is not a
multiple of the item size, a view of a copy of that tensor alone: arrays are always aligned). Only the fields the client
reads are decoded; the others (and fields added to the proto later) are skipped by wire type.
The protobuf path (`StepResult.from_proto`) stays the reference; tests check that both agree.

Wire format (https://protobuf.dev/programming-guides/encoding/): a message is a sequence of
(key = field_number << 3 | wire_type, value); wire types 0 varint, 1 fixed 8 bytes, 2 length-
delimited, 5 fixed 4 bytes. Repeated scalars are packed (one length-delimited run of varints) or
unpacked (one key per value); both are accepted, as protobuf parsers must.
"""
import struct
from typing import Dict, List, Tuple

import numpy as np

from taxel.tensors import DTYPES, expand_sparse

__all__ = ["WireError", "parse_step_response", "parse_read_response", "parse_contact_matrix_response"]

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a well-formed message of the expected type."""


def _varint(buf: bytes, pos: int, end: int) -> Tuple[int, int]:
    if pos < end and buf[pos] < 0x80:  # one byte: most keys, lengths of small fields, shapes
        return buf[pos], pos + 1
    result = shift = 0
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            break
    raise WireError("malformed varint")


def _signed64(v: int) -> int:
    """int32/int64 fields carry negative values as 64-bit two's complement varints."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _fields(buf: bytes, pos: int, end: int):
    """Yields (field number, wire type, value) of buf[pos:end]: the integer of a varint, the
    (start, end) span of a length-delimited field, the offset of a fixed-size one."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
            yield number, wire, value
        elif wire == _LEN:
            n, pos = _varint(buf, pos, end)
            if pos + n > end:
                raise WireError("length-delimited field past the end of its message")
            yield number, wire, (pos, pos + n)
            pos += n
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if pos + size > end:
                raise WireError("fixed-size field past the end of its message")
            yield number, wire, pos
            pos += size
        else:
            raise WireError(f"unsupported wire type {wire}")
    if pos != end:
        raise WireError("field past the end of its message")


def _packed_varints(buf: bytes, start: int, end: int) -> np.ndarray:
    """A packed run of varints as int64 (two's complement), decoded with numpy: each value ends at
    a byte < 0x80 and contributes 7 bits per byte, low bits first."""
    b = np.frombuffer(buf, np.uint8, count=end - start, offset=start)
    if b.size == 0:
        return np.zeros(0, np.int64)
    last = np.flatnonzero(b < 0x80)
    if last.size == 0 or last[-1] != b.size - 1:
        raise WireError("malformed packed varints")
    first = np.empty_like(last)
    first[0] = 0
    first[1:] = last[:-1] + 1
    length = last - first + 1
    if length.max() > 10:
        raise WireError("malformed varint")
    values = np.zeros(last.size, np.uint64)
    for k in range(int(length.max())):
        sel = length > k
        values[sel] |= (b[first[sel] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)  # bits past 64 drop
    return values.view(np.int64)


def _ints(buf: bytes, wire: int, value, out: list) -> None:
    """Appends a repeated integer field's values to `out`: Python ints for an unpacked value or a
    short packed run (a shape), an int64 array for a long packed run (env ids)."""
    if wire == _VARINT:
        out.append(_signed64(value))
    elif wire == _LEN:
        pos, end = value
        if end - pos > 64:
            out.append(_packed_varints(buf, pos, end))
            return
        while pos < end:
            v, pos = _varint(buf, pos, end)
            out.append(_signed64(v))
    else:
        raise WireError("expected an integer field")


def _joined(parts: list) -> np.ndarray:
    """The int64 array of what _ints collected."""
    if len(parts) == 1 and isinstance(parts[0], np.ndarray):
        return parts[0]
    return np.concatenate([np.atleast_1d(np.asarray(p, np.int64)) for p in parts]) if parts else np.zeros(0, np.int64)


def _text(buf: bytes, wire: int, value) -> str:
    if wire != _LEN:
        raise WireError("expected a string field")
    return buf[value[0]:value[1]].decode("utf-8")


def _tensor(buf: bytes, start: int, end: int) -> np.ndarray:
    """taxel.v1.Tensor {1 dtype, 2 shape, 3 data, 4 nonzero_mask} as a read-only view into buf
    (the sparse form, with a mask, expanded into a new array)."""
    dtype_code, dims, data, mask = 0, [], (start, start), None
    for number, wire, value in _fields(buf, start, end):
        if number == 1 and wire == _VARINT:
            dtype_code = value
        elif number == 2:
            _ints(buf, wire, value, dims)
        elif number == 3 and wire == _LEN:
            data = value
        elif number == 4 and wire == _LEN and value[1] > value[0]:
            mask = value
    shape = dims if all(type(d) is int for d in dims) else [int(d) for d in _joined(dims)]
    dtype = DTYPES.get(dtype_code)
    if dtype is None:
        raise ValueError(f"tensor: unknown dtype {dtype_code}")
    if mask is not None:
        view = memoryview(buf)
        return expand_sparse(view[data[0]:data[1]], view[mask[0]:mask[1]], dtype, tuple(shape))
    count = 1
    for d in shape:
        count *= d
    if data[1] - data[0] != count * dtype.itemsize:
        raise ValueError(f"tensor: shape {shape} of {dtype} needs {count * dtype.itemsize} bytes, "
                         f"got {data[1] - data[0]}")
    a = np.frombuffer(buf, dtype=dtype, count=count, offset=data[0])
    if not a.flags.aligned:
        # The data sit at an offset that is no multiple of the item size: copy this tensor once
        # (a fresh bytes object is aligned), since numpy users such as torch kernels assume alignment.
        a = np.frombuffer(buf[data[0]:data[1]], dtype=dtype, count=count)
    return a.reshape(shape)


def _reading(buf: bytes, start: int, end: int):
    """SensorReading {1 sensor, 2 sensor_id, 3 branch, 4 map<string, Tensor> channels}."""
    sensor, sensor_id, branch, channels = "", 0, 0, {}
    for number, wire, value in _fields(buf, start, end):
        if number == 1:
            sensor = _text(buf, wire, value)
        elif number == 2 and wire == _VARINT:
            sensor_id = _signed64(value)
        elif number == 3 and wire == _VARINT:
            branch = value
        elif number == 4 and wire == _LEN:
            key, tensor = "", None
            for n, w, v in _fields(buf, *value):  # map entry {1 key, 2 value}
                if n == 1:
                    key = _text(buf, w, v)
                elif n == 2 and w == _LEN:
                    tensor = v
            channels[key] = _tensor(buf, *(tensor or (value[1], value[1])))  # no value: an empty Tensor
    return sensor, sensor_id, branch, channels


def _timing(buf: bytes, start: int, end: int) -> Tuple[float, float, float, float]:
    """StepTiming {1 decode_us, 2 evaluate_us, 3 encode_us, 4 queue_us} (doubles)."""
    t = [0.0, 0.0, 0.0, 0.0]
    for number, wire, value in _fields(buf, start, end):
        if 1 <= number <= 4 and wire == _I64:
            t[number - 1] = struct.unpack_from("<d", buf, value)[0]
    return tuple(t)


def _contact_matrix(buf: bytes, start: int, end: int):
    """GetContactMatrixResponse {1 env_ids, 2 rows, 3 columns, 4 normal, 5 friction, 6 gradient}."""
    env_ids: list = []
    rows: List[str] = []
    columns: List[str] = []
    normal, friction, gradient = (end, end), None, None
    for number, wire, value in _fields(buf, start, end):
        if number == 1:
            _ints(buf, wire, value, env_ids)
        elif number == 2:
            rows.append(_text(buf, wire, value))
        elif number == 3:
            columns.append(_text(buf, wire, value))
        elif number == 4 and wire == _LEN:
            normal = value
        elif number == 5 and wire == _LEN:
            friction = _tensor(buf, *value)
        elif number == 6 and wire == _LEN:
            gradient = _tensor(buf, *value)
    return _joined(env_ids), rows, columns, _tensor(buf, *normal), friction, gradient


def parse_step_response(buf: bytes) -> Dict:
    """The fields of a taxel.v1.StepResponse the client uses, from its serialized bytes:
    {"sequence", "step", "env_ids" (int64 array), "readings": [(sensor, sensor_id, branch,
    {channel: array})], "timing": (decode, evaluate, encode, queue) µs, "contact_matrix":
    (env_ids, rows, columns, normal, friction, gradient) or None}. Raises WireError (a ValueError) on
    malformed input."""
    out: Dict = {"sequence": 0, "step": 0, "readings": [], "timing": (0.0, 0.0, 0.0, 0.0), "contact_matrix": None}
    env_ids: list = []
    for number, wire, value in _fields(buf, 0, len(buf)):
        if number == 2 and wire == _VARINT:
            out["sequence"] = value
        elif number == 3 and wire == _VARINT:
            out["step"] = _signed64(value)
        elif number == 4:
            _ints(buf, wire, value, env_ids)
        elif number == 5 and wire == _LEN:
            out["readings"].append(_reading(buf, *value))
        elif number == 6 and wire == _LEN:
            out["timing"] = _timing(buf, *value)
        elif number == 7 and wire == _LEN:
            out["contact_matrix"] = _contact_matrix(buf, *value)
    out["env_ids"] = _joined(env_ids)
    return out


def parse_read_response(buf: bytes) -> Dict:
    """taxel.v1.ReadSensorsResponse {1 step, 2 env_ids, 3 readings}, in the form of
    parse_step_response (no sequence, timing or contact matrix)."""
    out: Dict = {"step": 0, "readings": []}
    env_ids: list = []
    for number, wire, value in _fields(buf, 0, len(buf)):
        if number == 1 and wire == _VARINT:
            out["step"] = _signed64(value)
        elif number == 2:
            _ints(buf, wire, value, env_ids)
        elif number == 3 and wire == _LEN:
            out["readings"].append(_reading(buf, *value))
    out["env_ids"] = _joined(env_ids)
    return out


def parse_contact_matrix_response(buf: bytes):
    """taxel.v1.GetContactMatrixResponse: (env_ids, rows, columns, normal, friction or None,
    gradient or None)."""
    return _contact_matrix(buf, 0, len(buf))
