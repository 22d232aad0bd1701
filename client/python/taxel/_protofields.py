"""Assigning Python values to protobuf fields by name: the mechanism behind keyword options
(sensor options, scene-level options) that follow the proto without client changes."""
import numpy as np

from taxel._pb import tensor_pb2
from taxel.tensors import encode_real

__all__ = ["set_field"]


def _enum_number(fd, value, where: str) -> int:
    """An enum value given by its full name ("CROSSTALK_BORDER_RENORMALIZE") or last part
    ("renormalize"), any case; numbers pass through."""
    if not isinstance(value, str):
        return value
    names = fd.enum_type.values_by_name
    hits = [e for n, e in names.items() if n == value.upper()] or \
           [e for n, e in names.items() if n.endswith("_" + value.upper())]
    if len(hits) != 1:
        raise ValueError(f"{where}.{fd.name}: expected one of {', '.join(names)}, got {value!r}")
    return hits[0].number


def _fill_message(msg, value, where: str) -> None:
    if isinstance(value, dict):
        msg.SetInParent()
        for k, v in value.items():
            if k not in msg.DESCRIPTOR.fields_by_name:
                raise TypeError(f"{where}: unknown field {k!r}; known: {', '.join(sorted(msg.DESCRIPTOR.fields_by_name))}")
            set_field(msg, k, v, where)
    elif callable(getattr(value, "to_proto", None)):  # a client-side options object (taxel.NonlinearLaw)
        msg.CopyFrom(value.to_proto())
    else:
        msg.CopyFrom(value)


def set_field(msg, name: str, value, where: str) -> None:
    """Assigns `value` to field `name` of `msg`, naming `where` in errors: scalars; enum names;
    lists or numpy arrays for repeated fields; numpy arrays (any real dtype, as FLOAT32/FLOAT64)
    or a Tensor for Tensor fields; dicts, messages or objects with a `to_proto()` (taxel.NonlinearLaw)
    for message fields (lists of them when repeated)."""
    fd = msg.DESCRIPTOR.fields_by_name[name]
    here = f"{where}.{name}"
    repeated = fd.label == fd.LABEL_REPEATED
    if fd.message_type is not None:
        if repeated:
            field = getattr(msg, name)
            del field[:]
            for item in value:
                _fill_message(field.add(), item, here)
        elif fd.message_type.full_name == "taxel.v1.Tensor" and not isinstance(value, (dict, tensor_pb2.Tensor)):
            encode_real(value, getattr(msg, name))
        else:
            _fill_message(getattr(msg, name), value, here)
        return

    def scalar(v):
        if fd.enum_type is not None:
            return _enum_number(fd, v, where)
        return v.item() if isinstance(v, np.generic) else v

    if repeated:
        items = np.asarray(value).reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        getattr(msg, name)[:] = [scalar(v) for v in items]
    else:
        setattr(msg, name, scalar(value))
