using System;
using System.Collections.Generic;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Talon
{
    /// <summary>
    /// A call failed. Every failure the SDK raises is one of these, typed by
    /// the gRPC code the server gave (the gateway's JSON error body carries
    /// it), so callers catch types rather than compare HTTP statuses.
    /// Cancelling a call through its CancellationToken is not one: that is
    /// the usual OperationCanceledException.
    /// </summary>
    public class TalonException : Exception
    {
        /// <summary>The gRPC code's name, e.g. "NOT_FOUND"; "UNKNOWN" when the server named none.</summary>
        public string Code { get; }

        /// <summary>The HTTP status, or 0 when the failure was not an HTTP answer (a stream's error line, a connection).</summary>
        public int Status { get; }

        /// <summary>The gateway's x-request-id, to quote when asking the operator.</summary>
        public string RequestId { get; }

        /// <summary>The error body's google.rpc details, as sent.</summary>
        public IReadOnlyList<JToken> Details { get; }

        public TalonException(string message, string code = "UNKNOWN", int status = 0, string requestId = null,
            IReadOnlyList<JToken> details = null, Exception inner = null)
            : base(message, inner)
        {
            Code = code;
            Status = status;
            RequestId = requestId;
            Details = details ?? new JToken[0];
        }
    }

    /// <summary>INVALID_ARGUMENT (and OUT_OF_RANGE): the request itself is wrong; retrying it will not help.</summary>
    public class InvalidArgumentException : TalonException
    {
        public InvalidArgumentException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "INVALID_ARGUMENT", status, requestId, details) { }
    }

    /// <summary>NOT_FOUND: no such object, or one of another tenant (the server does not tell them apart).</summary>
    public class NotFoundException : TalonException
    {
        public NotFoundException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "NOT_FOUND", status, requestId, details) { }
    }

    /// <summary>ALREADY_EXISTS.</summary>
    public class AlreadyExistsException : TalonException
    {
        public AlreadyExistsException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "ALREADY_EXISTS", status, requestId, details) { }
    }

    /// <summary>PERMISSION_DENIED: the credential is valid but its role may not do this.</summary>
    public class PermissionDeniedException : TalonException
    {
        public PermissionDeniedException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "PERMISSION_DENIED", status, requestId, details) { }
    }

    /// <summary>UNAUTHENTICATED: no API key, or one the server does not accept.</summary>
    public class AuthenticationException : TalonException
    {
        public AuthenticationException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "UNAUTHENTICATED", status, requestId, details) { }
    }

    /// <summary>FAILED_PRECONDITION: the object's state does not allow the call (a paused sandbox without auto-resume, say).</summary>
    public class FailedPreconditionException : TalonException
    {
        public FailedPreconditionException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "FAILED_PRECONDITION", status, requestId, details) { }
    }

    /// <summary>RESOURCE_EXHAUSTED (HTTP 429): a rate limit or quota, or every worker is full. Retry later.</summary>
    public class RateLimitException : TalonException
    {
        public RateLimitException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "RESOURCE_EXHAUSTED", status, requestId, details) { }
    }

    /// <summary>
    /// DEADLINE_EXCEEDED: the server, or the SDK's own request timeout, gave
    /// up waiting. Named so as not to clash with System.TimeoutException.
    /// </summary>
    public class TalonTimeoutException : TalonException
    {
        public TalonTimeoutException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null, Exception inner = null)
            : base(message, "DEADLINE_EXCEEDED", status, requestId, details, inner) { }
    }

    /// <summary>ABORTED (HTTP 409): a concurrent change won; read again and retry.</summary>
    public class ConflictException : TalonException
    {
        public ConflictException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "ABORTED", status, requestId, details) { }
    }

    /// <summary>
    /// UNAVAILABLE: no server could be reached, or the one reached has no
    /// worker for the request. A call that failed after it was sent is not
    /// resent (a create may have happened); retry it yourself, with an
    /// idempotency key for creates.
    /// </summary>
    public class UnavailableException : TalonException
    {
        public UnavailableException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null, Exception inner = null)
            : base(message, "UNAVAILABLE", status, requestId, details, inner) { }
    }

    /// <summary>UNIMPLEMENTED: this server does not offer the call (an older version, or a feature turned off).</summary>
    public class UnimplementedException : TalonException
    {
        public UnimplementedException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "UNIMPLEMENTED", status, requestId, details) { }
    }

    /// <summary>CANCELLED by the server (HTTP 499), not by your CancellationToken.</summary>
    public class CancelledException : TalonException
    {
        public CancelledException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "CANCELLED", status, requestId, details) { }
    }

    /// <summary>INTERNAL, or any 5xx without the gateway's error body.</summary>
    public class InternalException : TalonException
    {
        public InternalException(string message, int status = 0, string requestId = null, IReadOnlyList<JToken> details = null)
            : base(message, "INTERNAL", status, requestId, details) { }
    }

    /// <summary>
    /// A command ended with a non-zero exit code or by a signal. The result
    /// is attached (like E2B's CommandExitException), so the output is not
    /// lost with the exception.
    /// </summary>
    public class CommandExitException : TalonException
    {
        public CommandResult Result { get; }
        public int ExitCode => Result.ExitCode;
        public string Stdout => Result.Stdout;
        public string Stderr => Result.Stderr;

        public CommandExitException(CommandResult result)
            : base(Describe(result), "COMMAND_EXIT")
        {
            Result = result;
        }

        static string Describe(CommandResult r)
        {
            var how = r.Signal != 0 ? "signal " + r.Signal : "exit code " + r.ExitCode;
            var tail = r.Stderr.Length > 500 ? r.Stderr.Substring(r.Stderr.Length - 500) : r.Stderr;
            return "the command ended with " + how + ": " + tail;
        }
    }

    /// <summary>A command ran past its timeout and was killed; Result holds what it wrote until then.</summary>
    public class CommandTimeoutException : TalonTimeoutException
    {
        public CommandResult Result { get; }

        public CommandTimeoutException(CommandResult result, TimeSpan timeout)
            : base("the command ran longer than its timeout of " + Wire.Seconds(timeout) + " and was killed")
        {
            Result = result;
        }
    }

    /// <summary>Maps an error answer to its typed exception.</summary>
    internal static class ErrorMap
    {
        delegate TalonException Make(string message, int status, string requestId, IReadOnlyList<JToken> details);

        static readonly Dictionary<int, Make> ByCode = new Dictionary<int, Make>
        {
            { 1, (m, s, r, d) => new CancelledException(m, s, r, d) },
            { 3, (m, s, r, d) => new InvalidArgumentException(m, s, r, d) },
            { 4, (m, s, r, d) => new TalonTimeoutException(m, s, r, d) },
            { 5, (m, s, r, d) => new NotFoundException(m, s, r, d) },
            { 6, (m, s, r, d) => new AlreadyExistsException(m, s, r, d) },
            { 7, (m, s, r, d) => new PermissionDeniedException(m, s, r, d) },
            { 8, (m, s, r, d) => new RateLimitException(m, s, r, d) },
            { 9, (m, s, r, d) => new FailedPreconditionException(m, s, r, d) },
            { 10, (m, s, r, d) => new ConflictException(m, s, r, d) },
            { 11, (m, s, r, d) => new InvalidArgumentException(m, s, r, d) }, // OUT_OF_RANGE
            { 12, (m, s, r, d) => new UnimplementedException(m, s, r, d) },
            { 13, (m, s, r, d) => new InternalException(m, s, r, d) },
            { 14, (m, s, r, d) => new UnavailableException(m, s, r, d) },
            { 16, (m, s, r, d) => new AuthenticationException(m, s, r, d) },
        };

        static readonly Dictionary<int, int> CodeOfStatus = new Dictionary<int, int>
        {
            { 400, 3 }, { 401, 16 }, { 403, 7 }, { 404, 5 }, { 409, 10 }, { 429, 8 },
            { 499, 1 }, { 501, 12 }, { 503, 14 }, { 504, 4 },
        };

        static readonly string[] CodeNames =
        {
            "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
            "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
            "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
            "UNAUTHENTICATED",
        };

        /// <summary>
        /// The error an answer stands for: the JSON body's numeric code first,
        /// the HTTP status when the body is not the gateway's (a proxy's page).
        /// </summary>
        public static TalonException FromBody(int status, string body, string requestId = null)
        {
            JObject obj = null;
            try
            {
                obj = string.IsNullOrEmpty(body) ? null : JToken.Parse(body) as JObject;
            }
            catch (JsonException)
            {
            }
            if (obj != null && obj["code"] != null && obj["code"].Type == JTokenType.Integer)
                return FromStatus(obj, status, requestId);
            var text = body ?? "";
            if (text.Length > 200)
                text = text.Substring(0, 200);
            var message = "HTTP " + status + ": " + text;
            int code;
            if (CodeOfStatus.TryGetValue(status, out code))
                return ByCode[code](message, status, requestId, null);
            if (status >= 500)
                return new InternalException(message, status, requestId);
            return new TalonException(message, "UNKNOWN", status, requestId);
        }

        /// <summary>A google.rpc.Status object (an error body, or a stream's {"error": ...} line).</summary>
        public static TalonException FromStatus(JObject status, int httpStatus = 0, string requestId = null)
        {
            var code = status.Value<int?>("code") ?? 2;
            var message = status.Value<string>("message") ?? "";
            var details = status["details"] as JArray;
            var list = details != null ? new List<JToken>(details) : null;
            Make make;
            if (ByCode.TryGetValue(code, out make))
                return make(message, httpStatus, requestId, list);
            var name = code >= 0 && code < CodeNames.Length ? CodeNames[code] : "UNKNOWN";
            return new TalonException(message, name, httpStatus, requestId, list);
        }
    }
}
