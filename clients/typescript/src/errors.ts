/**
 * The SDK's errors: one class per gRPC code so callers can `instanceof`,
 * and the mapping from a gateway error body (or bare HTTP status) to them.
 */
import type { CommandResult } from "./commands.js";

/** A failed call; `code` is the gRPC code name, e.g. "NOT_FOUND". */
export class TalonError extends Error {
  code = "UNKNOWN";
  constructor(
    message: string,
    readonly status = 0,
    readonly details: unknown[] = [],
    readonly requestId?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class InvalidArgumentError extends TalonError { override code = "INVALID_ARGUMENT"; }
export class NotFoundError extends TalonError { override code = "NOT_FOUND"; }
export class AlreadyExistsError extends TalonError { override code = "ALREADY_EXISTS"; }
export class PermissionDeniedError extends TalonError { override code = "PERMISSION_DENIED"; }
export class AuthenticationError extends TalonError { override code = "UNAUTHENTICATED"; }
export class FailedPreconditionError extends TalonError { override code = "FAILED_PRECONDITION"; }
export class ResourceExhaustedError extends TalonError { override code = "RESOURCE_EXHAUSTED"; }
export class TimeoutError extends TalonError { override code = "DEADLINE_EXCEEDED"; }
export class ConflictError extends TalonError { override code = "ABORTED"; }
export class UnavailableError extends TalonError { override code = "UNAVAILABLE"; }
export class UnimplementedError extends TalonError { override code = "UNIMPLEMENTED"; }
export class InternalError extends TalonError { override code = "INTERNAL"; }

/**
 * A command ended with a non-zero exit code (or a signal). The result is
 * attached, like E2B's CommandExitError: `result`, `stdout`, `stderr`,
 * `exitCode`.
 */
export class CommandExitError extends TalonError {
  override code = "COMMAND_EXIT";
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
  constructor(readonly result: CommandResult) {
    super(
      `the command ended with ${result.signal ? `signal ${result.signal}` : `exit code ${result.exitCode}`}: ${result.stderr.slice(-500)}`,
    );
    this.stdout = result.stdout;
    this.stderr = result.stderr;
    this.exitCode = result.exitCode;
  }
}

/** A command ran past its timeout and was killed; `result` holds its output. */
export class CommandTimeoutError extends TimeoutError {
  constructor(
    readonly result: CommandResult,
    timeoutMs: number,
  ) {
    super(`the command ran longer than its timeout of ${timeoutMs} ms and was killed`);
  }
}

const BY_CODE: Record<number, typeof TalonError> = {
  3: InvalidArgumentError, 4: TimeoutError, 5: NotFoundError, 6: AlreadyExistsError,
  7: PermissionDeniedError, 8: ResourceExhaustedError, 9: FailedPreconditionError,
  10: ConflictError, 11: InvalidArgumentError, 12: UnimplementedError, 13: InternalError,
  14: UnavailableError, 16: AuthenticationError,
};
const BY_HTTP: Record<number, typeof TalonError> = {
  400: InvalidArgumentError, 401: AuthenticationError, 403: PermissionDeniedError,
  404: NotFoundError, 409: ConflictError, 429: ResourceExhaustedError, 501: UnimplementedError,
  503: UnavailableError, 504: TimeoutError,
};

/** The typed error a gateway error body (or bare HTTP status) stands for. */
export function errorFrom(status: number, body: unknown, requestId?: string): TalonError {
  const b = body as { code?: unknown; message?: unknown; details?: unknown[] } | null;
  if (b && typeof b.code === "number") {
    const Cls = BY_CODE[b.code] ?? TalonError;
    return new Cls(String(b.message ?? ""), status, b.details ?? [], requestId);
  }
  const Cls = BY_HTTP[status] ?? (status >= 500 ? InternalError : TalonError);
  return new Cls(`HTTP ${status}: ${String(body).slice(0, 200)}`, status, [], requestId);
}

export async function failure(resp: Response): Promise<TalonError> {
  const text = await resp.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return errorFrom(resp.status, body, resp.headers.get("x-request-id") ?? undefined);
}
