"""Errors: one exception class per gRPC status code, with the server's field violations.

Every failed call raises a subclass of `TaxelError` chosen by the status code (`NotFoundError` for
NOT_FOUND, ...). INVALID_ARGUMENT and OUT_OF_RANGE carry a `google.rpc.BadRequest` in the
`grpc-status-details-bin` trailer; its field violations are parsed into `.field_violations`
(`FieldViolation(field, description)`), e.g.

    InvalidArgumentError: INVALID_ARGUMENT: poses: expected shape [2, 2, 7] (or [4, 7]), got [2, 3, 7]
      .field_violations == [FieldViolation(field="poses", description="expected shape [2, 2, 7] ...")]

`InvalidArgumentError` and `OutOfRangeError` are also `ValueError`s.
"""
from typing import List, NamedTuple, Optional

import grpc

from taxel._pb import error_details_pb2, status_pb2

__all__ = [
    "FieldViolation", "TaxelError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
    "from_rpc_error",
]

_DETAILS_KEY = "grpc-status-details-bin"
_BAD_REQUEST = "google.rpc.BadRequest"


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
                 field_violations: Optional[List[FieldViolation]] = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.field_violations: List[FieldViolation] = list(field_violations or [])

    @property
    def field(self) -> Optional[str]:
        """The first violated field ("poses", "spec.sensors[0].probe_radius"), or None."""
        return self.field_violations[0].field if self.field_violations else None

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


def _field_violations(trailing_metadata) -> List[FieldViolation]:
    for key, value in trailing_metadata or ():
        if key != _DETAILS_KEY:
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:  # a malformed trailer must not hide the error itself
            return []
        out = []
        for any_msg in status.details:
            if any_msg.type_url.rsplit("/", 1)[-1] != _BAD_REQUEST:
                continue
            bad = error_details_pb2.BadRequest()
            if any_msg.Unpack(bad):
                out.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
        return out
    return []


def from_rpc_error(error: grpc.RpcError) -> TaxelError:
    """The `TaxelError` subclass for a failed gRPC call (a `grpc.RpcError` that is a `grpc.Call`)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = (error.details() if hasattr(error, "details") else None) or str(error)
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    cls = _BY_CODE.get(code, TaxelError)
    return cls(message, code=code, field_violations=_field_violations(trailers))
