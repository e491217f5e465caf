/**
 * The console's one error type. Every failed answer of the gateway
 * (`{"code", "message", "details"}` with the gRPC code, or a bare HTTP
 * status from something in between) becomes an ApiError with a code name
 * and a message a person can read; `describe` turns any thrown value into
 * a title and a message for a toast or an inline alert.
 */

/** The gRPC codes, by number. */
export const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;
export type CodeName = (typeof CODE_NAMES)[number];

/** A bare HTTP status (no error body), read with the gateway's table. */
const BY_HTTP: Record<number, CodeName> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** A short title per code: what went wrong, in words. */
const TITLES: Record<CodeName, string> = {
  OK: "Done",
  CANCELLED: "Cancelled",
  UNKNOWN: "Something went wrong",
  INVALID_ARGUMENT: "The request was not valid",
  DEADLINE_EXCEEDED: "It took too long",
  NOT_FOUND: "Not found",
  ALREADY_EXISTS: "It already exists",
  PERMISSION_DENIED: "Not allowed",
  RESOURCE_EXHAUSTED: "Over a quota or out of room",
  FAILED_PRECONDITION: "Not possible in its current state",
  ABORTED: "A conflicting change happened",
  OUT_OF_RANGE: "Out of range",
  UNIMPLEMENTED: "Not supported",
  INTERNAL: "The server failed",
  UNAVAILABLE: "The platform is unavailable",
  DATA_LOSS: "Data was lost",
  UNAUTHENTICATED: "You are not signed in",
};

/** What to say when the server gave no message. */
const FALLBACK: Partial<Record<CodeName, string>> = {
  UNAUTHENTICATED: "Sign in to go on.",
  PERMISSION_DENIED: "Your role does not allow this.",
  NOT_FOUND: "It does not exist, or it is not yours.",
  UNAVAILABLE: "The gateway or a worker cannot be reached; try again in a moment.",
  INTERNAL: "The server could not finish the request.",
};

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly code: CodeName,
    message: string,
    readonly status = 0,
    readonly details: unknown[] = [],
    readonly requestId?: string,
  ) {
    super(message || FALLBACK[code] || TITLES[code]);
  }

  /** A short title for the message. */
  get title(): string {
    return TITLES[this.code];
  }
}

function codeName(code: unknown): CodeName | undefined {
  if (typeof code === "number" && Number.isInteger(code) && code >= 0 && code < CODE_NAMES.length) {
    return CODE_NAMES[code];
  }
  if (typeof code === "string" && (CODE_NAMES as readonly string[]).includes(code)) return code as CodeName;
  return undefined;
}

/** A page's text without its markup, for the bare statuses of a proxy. */
function plain(text: string): string {
  return text
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}

/**
 * Whether the gateway refused a change for this tab's CSRF token (none
 * sent, or one of an older session: the person signed in again in
 * another tab, which replaced the cookie every tab shares).
 */
export function isCsrfRefusal(e: ApiError): boolean {
  return e.code === "PERMISSION_DENIED" && /X-CSRF-Token/.test(e.message);
}

/** What to tell the person for a refused CSRF token: what happened and what to do. */
export const STALE_TOKEN_MESSAGE =
  "This tab's sign-in is out of date (you signed in again or signed out in another tab), so it cannot make changes. Sign in again in this tab to go on.";

/**
 * The error an answer stands for: a gateway error body (`code` as a
 * number or a name), else its HTTP status.
 */
export function errorFromBody(status: number, body: unknown, requestId?: string): ApiError {
  if (body && typeof body === "object") {
    const b = body as { code?: unknown; message?: unknown; details?: unknown };
    const code = codeName(b.code);
    if (code) {
      const details = Array.isArray(b.details) ? b.details : [];
      const e = new ApiError(code, typeof b.message === "string" ? b.message : "", status, details, requestId);
      return isCsrfRefusal(e) ? new ApiError(code, STALE_TOKEN_MESSAGE, status, details, requestId) : e;
    }
  }
  const code = BY_HTTP[status] ?? (status >= 500 ? "INTERNAL" : "UNKNOWN");
  const text = typeof body === "string" ? plain(body) : "";
  const what = status ? `HTTP ${status}` : "No answer";
  return new ApiError(code, text ? `${what}: ${text}` : `${what} from the gateway.`, status, [], requestId);
}

/** The error of a failed response, reading its body. */
export async function errorFromResponse(resp: Response): Promise<ApiError> {
  let body: unknown = "";
  try {
    const text = await resp.text();
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  } catch {
    /* the body broke off: the status says enough */
  }
  return errorFromBody(resp.status, body, resp.headers.get("x-request-id") ?? undefined);
}

/** Whether a thrown value is the caller's own abort (not worth a message). */
export function isAbort(e: unknown): boolean {
  return (
    (e instanceof DOMException && e.name === "AbortError") ||
    (e instanceof Error && e.name === "AbortError")
  );
}

/** A title and a message for anything thrown. */
export function describe(e: unknown): { title: string; message: string; code?: CodeName } {
  if (e instanceof ApiError) return { title: e.title, message: e.message, code: e.code };
  if (isAbort(e)) return { title: "Cancelled", message: "The request was cancelled." };
  if (e instanceof Error) return { title: "Something went wrong", message: e.message || e.name };
  if (typeof e === "string" && e) return { title: "Something went wrong", message: e };
  return { title: "Something went wrong", message: "An unexpected error happened." };
}
