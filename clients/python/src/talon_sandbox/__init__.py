"""Talon Sandbox SDK.

    from talon_sandbox import Sandbox

    with Sandbox.create() as sbx:          # waits until it runs
        r = sbx.commands.run("echo hi")   # non-zero exit: CommandExitError
        print(r.stdout, r.exit_code)
        sbx.files.write("hello.txt", "hi")

`AsyncSandbox` is the same for asyncio. Errors are `talon_sandbox.errors`
classes, one per gRPC code. Configuration: `api_key=`/`base_url=` or
TALON_API_KEY / TALON_URL (the REST gateway, http://127.0.0.1:8080 by
default).
"""

from . import errors
from ._core import AgentEvent, AgentRun, BrowserInfo, CodeContext, CodeError, CodeResult, CommandResult, Config, FileInfo, FilesystemEvent, SandboxInfo, SandboxMetrics, SnapshotInfo, WriteEntry
from ._core import Execution
from .async_sandbox import AsyncCommandHandle, AsyncSandbox, AsyncWatchHandle
from .errors import (
    AuthenticationError,
    CommandExitError,
    CommandExitException,
    CommandTimeoutError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    TalonError,
    TimeoutError,
)
from .sandbox import CommandHandle, PtyHandle, Sandbox, WatchHandle

__all__ = [
    "AgentEvent",
    "AgentRun",
    "BrowserInfo",
    "CodeContext",
    "CodeError",
    "CodeResult",
    "Execution",
    "AsyncCommandHandle",
    "AsyncSandbox",
    "AsyncWatchHandle",
    "AuthenticationError",
    "CommandExitError",
    "CommandExitException",
    "CommandHandle",
    "CommandResult",
    "CommandTimeoutError",
    "Config",
    "FailedPreconditionError",
    "FileInfo",
    "FilesystemEvent",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "PtyHandle",
    "ResourceExhaustedError",
    "Sandbox",
    "SandboxInfo",
    "SandboxMetrics",
    "SnapshotInfo",
    "TalonError",
    "TimeoutError",
    "WatchHandle",
    "WriteEntry",
    "errors",
]
