"""Errors: one exception class per gRPC status code, with the server's field violations.

Every failed call raises a subclass of `TaxelError` chosen by the status code (`NotFoundError` for
NOT_FOUND, ...). INVALID_ARGUMENT and OUT_OF_RANGE carry a `google.rpc.BadRequest` in the
`grpc-status-details-bin` trailer; its field violations are parsed into `.field_violations`
(`FieldViolation(field, description)`), e.g.

    InvalidArgumentError: INVALID_ARGUMENT: poses: expected shape [2, 2, 7] (or [4, 7]), got [2, 3, 7]
      .field_violations == [FieldViolation(field="poses", description="expected shape [2, 2, 7] ...")]

The field an error concerns (`.field`) is read from whichever the status details carry: the
BadRequest's first field violation, or a detail of type URL `type.taxel/field-path` whose value is
the path itself (UTF-8), the form the server's field errors have inside it; e.g. a NOT_FOUND for
an unknown mesh: `.field == "spec.entities[1].links[0].shapes[0].mesh.mesh_id"`. The message text
is never parsed: a status without either detail has `.field is None`.

`InvalidArgumentError` and `OutOfRangeError` are also `ValueError`s.
"""
from typing import List, NamedTuple, Optional, Tuple

import grpc

from taxel._pb import error_details_pb2, status_pb2

__all__ = [
    "FieldViolation", "TaxelError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
    "from_rpc_error", "field_error",
]

_DETAILS_KEY = "grpc-status-details-bin"
_BAD_REQUEST = "google.rpc.BadRequest"
_FIELD_PATH_TYPE_URL = "type.taxel/field-path"


class FieldViolation(NamedTuple):
    """One entry of a google.rpc.BadRequest: the request field and what was expected."""
    field: str
    description: str


class TaxelError(Exception):
    """A call to taxel-server failed.

    Attributes:
      code: the `grpc.StatusCode`.
      message: the server's message; it starts with the offending field ("poses: expected ...").
      field_violations: `FieldViolation`s from the status details (empty when there are none).
    """

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str, code: Optional[grpc.StatusCode] = None,
                 field_violations: Optional[List[FieldViolation]] = None, field_path: Optional[str] = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.field_violations: List[FieldViolation] = list(field_violations or [])
        self._field_path = field_path or None

    @property
    def field(self) -> Optional[str]:
        """The request field the error concerns ("poses", "spec.sensors[0].probe_radius",
        "spec.entities[0].links[0].shapes[0].mesh.mesh_id"): the first field violation's, else
        the status' field-path detail, else None."""
        if self.field_violations:
            return self.field_violations[0].field
        return self._field_path

    def with_hint(self, hint: str) -> "TaxelError":
        """A copy of this error (same class, code, field violations and field) whose message ends
        with " (<hint>)": what the caller can do about it."""
        return type(self)(f"{self.message} ({hint})", code=self.code, field_violations=self.field_violations,
                          field_path=self._field_path)

    def __str__(self) -> str:
        text = f"{self.code.name}: {self.message}"
        for v in self.field_violations:
            line = f"{v.field}: {v.description}"
            if line not in self.message:
                text += f"\n  {line}"
        return text


def _subclass(name, code, *bases):
    cls = type(name, (TaxelError, *bases), {"code": code, "__doc__": f"Status code {code.name}."})
    cls.__module__ = __name__
    return cls


C = grpc.StatusCode
CancelledError = _subclass("CancelledError", C.CANCELLED)
UnknownError = _subclass("UnknownError", C.UNKNOWN)
InvalidArgumentError = _subclass("InvalidArgumentError", C.INVALID_ARGUMENT, ValueError)
DeadlineExceededError = _subclass("DeadlineExceededError", C.DEADLINE_EXCEEDED)
NotFoundError = _subclass("NotFoundError", C.NOT_FOUND)
AlreadyExistsError = _subclass("AlreadyExistsError", C.ALREADY_EXISTS)
PermissionDeniedError = _subclass("PermissionDeniedError", C.PERMISSION_DENIED)
ResourceExhaustedError = _subclass("ResourceExhaustedError", C.RESOURCE_EXHAUSTED)
FailedPreconditionError = _subclass("FailedPreconditionError", C.FAILED_PRECONDITION)
AbortedError = _subclass("AbortedError", C.ABORTED)
OutOfRangeError = _subclass("OutOfRangeError", C.OUT_OF_RANGE, ValueError)
UnimplementedError = _subclass("UnimplementedError", C.UNIMPLEMENTED)
InternalError = _subclass("InternalError", C.INTERNAL)
UnavailableError = _subclass("UnavailableError", C.UNAVAILABLE)
DataLossError = _subclass("DataLossError", C.DATA_LOSS)
UnauthenticatedError = _subclass("UnauthenticatedError", C.UNAUTHENTICATED)
del C

_BY_CODE = {cls.code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError, DataLossError,
    UnauthenticatedError)}


def _status_details(trailing_metadata) -> Tuple[List[FieldViolation], Optional[str]]:
    """The BadRequest field violations and the field-path detail of a call's status details
    (`grpc-status-details-bin`); ([], None) when there are none or they do not parse."""
    for key, value in trailing_metadata or ():
        if key != _DETAILS_KEY:
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:  # a malformed trailer must not hide the error itself
            return [], None
        violations: List[FieldViolation] = []
        path: Optional[str] = None
        for any_msg in status.details:
            if any_msg.type_url == _FIELD_PATH_TYPE_URL:
                path = path or any_msg.value.decode("utf-8", errors="replace")
                continue
            if any_msg.type_url.rsplit("/", 1)[-1] != _BAD_REQUEST:
                continue
            bad = error_details_pb2.BadRequest()
            if any_msg.Unpack(bad):
                violations.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
        return violations, path
    return [], None


def field_error(cls: type, field: str, description: str) -> TaxelError:
    """An error of class `cls` about `field` made by the client itself, in the server's form: the
    message "<field>: <description>" and one field violation, so that `.field` names it as it
    would for the same refusal from a server."""
    return cls(f"{field}: {description}", field_violations=[FieldViolation(field, description)])


# The transport's refusal of a message over a size limit names no flag: say which ones set it.
SIZE_HINT = ("; the limits are the server's --max_message_bytes and the client's max_message_bytes "
             "(steps and reads are split by envs on their own; a mesh must fit in one message)")


def with_size_hint(code, message: str) -> str:
    """`message` with SIZE_HINT when it is gRPC's own "message larger than max" refusal."""
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "message larger than max" in message and SIZE_HINT not in message:
        return message + SIZE_HINT
    return message


def from_rpc_error(error: grpc.RpcError) -> TaxelError:
    """The `TaxelError` subclass for a failed gRPC call (a `grpc.RpcError` that is a `grpc.Call`)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = with_size_hint(code, (error.details() if hasattr(error, "details") else None) or str(error))
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    cls = _BY_CODE.get(code, TaxelError)
    violations, path = _status_details(trailers)
    return cls(message, code=code, field_violations=violations, field_path=path)
