"""Typed errors. Every failed call raises a subclass of TalonError that
names the gRPC code the server gave (the REST gateway's JSON error body
carries it), so callers branch on types, not on HTTP statuses."""

from __future__ import annotations

from typing import Any


class TalonError(Exception):
    """A call failed. `code` is the gRPC code name, e.g. "NOT_FOUND"."""

    code = "UNKNOWN"

    def __init__(self, message: str, *, status: int = 0, details: list[Any] | None = None,
                 request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.details = details or []
        self.request_id = request_id


class InvalidArgumentError(TalonError):
    code = "INVALID_ARGUMENT"


class NotFoundError(TalonError):
    code = "NOT_FOUND"


class AlreadyExistsError(TalonError):
    code = "ALREADY_EXISTS"


class PermissionDeniedError(TalonError):
    code = "PERMISSION_DENIED"


class AuthenticationError(TalonError):
    code = "UNAUTHENTICATED"


class FailedPreconditionError(TalonError):
    code = "FAILED_PRECONDITION"


class ResourceExhaustedError(TalonError):
    code = "RESOURCE_EXHAUSTED"


class TimeoutError(TalonError):  # noqa: A001 - the SDK's own, like E2B's
    code = "DEADLINE_EXCEEDED"


class CommandExitError(TalonError):
    """A command ended with a non-zero exit code (or by a signal). The
    result is attached: `result`, and its `stdout`, `stderr`, `exit_code`
    as attributes, like E2B's CommandExitException."""

    code = "COMMAND_EXIT"

    def __init__(self, result: Any) -> None:
        how = f"signal {result.signal}" if result.signal else f"exit code {result.exit_code}"
        super().__init__(f"the command ended with {how}: {result.stderr[-500:]}")
        self.result = result
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.exit_code = result.exit_code


class CommandTimeoutError(TimeoutError):
    """A command ran past its timeout and was killed; `result` holds what
    it wrote until then."""

    def __init__(self, result: Any, timeout: float) -> None:
        super().__init__(f"the command ran longer than its timeout of {timeout:g} s and was killed")
        self.result = result


CommandExitException = CommandExitError


class ConflictError(TalonError):
    code = "ABORTED"


class UnavailableError(TalonError):
    code = "UNAVAILABLE"


class UnimplementedError(TalonError):
    code = "UNIMPLEMENTED"


class CancelledError(TalonError):
    code = "CANCELLED"


class InternalError(TalonError):
    code = "INTERNAL"


_BY_CODE = {
    1: CancelledError,
    3: InvalidArgumentError,
    4: TimeoutError,
    5: NotFoundError,
    6: AlreadyExistsError,
    7: PermissionDeniedError,
    8: ResourceExhaustedError,
    9: FailedPreconditionError,
    10: ConflictError,
    11: InvalidArgumentError,  # OUT_OF_RANGE
    12: UnimplementedError,
    13: InternalError,
    14: UnavailableError,
    16: AuthenticationError,
}

_BY_HTTP = {400: InvalidArgumentError, 401: AuthenticationError, 403: PermissionDeniedError,
            404: NotFoundError, 409: ConflictError, 429: ResourceExhaustedError,
            501: UnimplementedError, 503: UnavailableError, 504: TimeoutError}


def from_body(status: int, body: Any, request_id: str | None = None) -> TalonError:
    """The error a gateway response stands for: its JSON `code` first,
    the HTTP status when the body is not the gateway's."""
    if isinstance(body, dict) and isinstance(body.get("code"), int):
        cls = _BY_CODE.get(body["code"], TalonError)
        return cls(str(body.get("message", "")), status=status,
                   details=body.get("details") or [], request_id=request_id)
    cls = _BY_HTTP.get(status, InternalError if status >= 500 else TalonError)
    return cls(f"HTTP {status}: {str(body)[:200]}", status=status, request_id=request_id)
