using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Reflection;
using System.Runtime.Serialization;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Converters;
using Newtonsoft.Json.Serialization;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// The REST side of the calls: JSON settings, durations, paths and query
    /// strings, and the generated models built from the SDK's options (the
    /// equivalent of the Python SDK's _wire.py).
    /// </summary>
    internal static class Wire
    {
        /// <summary>
        /// The settings the generated layer (de)serializes with. Generated
        /// members name their JSON fields themselves, so no naming strategy;
        /// enums read through <see cref="TolerantEnumConverter"/>, so that a
        /// value a newer server adds reads as "unset" instead of failing the
        /// whole answer (Json.NET's StringEnumConverter throws on it).
        /// </summary>
        public static readonly JsonSerializerSettings JsonSettings = new JsonSerializerSettings
        {
            ConstructorHandling = ConstructorHandling.AllowNonPublicDefaultConstructor,
            ContractResolver = new WireContractResolver(),
            MissingMemberHandling = MissingMemberHandling.Ignore,
            NullValueHandling = NullValueHandling.Ignore,
        };

        /// <summary>A proto Duration's JSON: seconds with an "s" ("60s", "1.5s").</summary>
        public static string Seconds(TimeSpan t) =>
            t.TotalSeconds.ToString("0.#########", CultureInfo.InvariantCulture) + "s";

        /// <summary>
        /// A proto Duration's JSON ("0.012s", "90s") as a TimeSpan, to the
        /// tick; null when empty or not a duration.
        /// </summary>
        public static TimeSpan? Duration(string s)
        {
            double v;
            if (string.IsNullOrEmpty(s) || !s.EndsWith("s", StringComparison.Ordinal)
                || !double.TryParse(s.Substring(0, s.Length - 1), NumberStyles.Float, CultureInfo.InvariantCulture, out v))
                return null;
            return TimeSpan.FromTicks((long)Math.Round(v * TimeSpan.TicksPerSecond));
        }

        /// <summary>A link's lifetime for its request: null (the server's default) when unset or not positive.</summary>
        public static string Ttl(TimeSpan? ttl) => ttl.HasValue && ttl.Value > TimeSpan.Zero ? Seconds(ttl.Value) : null;

        /// <summary>An id or name a call cannot do without: InvalidArgumentException, before anything is sent, when empty.</summary>
        public static string Required(string value, string what)
        {
            if (string.IsNullOrEmpty(value))
                throw new InvalidArgumentException(what + " is required");
            return value;
        }

        /// <summary>null for "", so that the generated layer leaves the field or parameter out.</summary>
        public static string NullIfEmpty(string s) => string.IsNullOrEmpty(s) ? null : s;

        public static string Escape(string s) => Uri.EscapeDataString(s ?? "");

        public static string SandboxPath(string sandboxId, string rest = "") => "/v1/sandboxes/" + Escape(sandboxId) + rest;

        /// <summary>A process by tag when one is given, else by pid; verb is ":connect", ":input" and so on.</summary>
        public static string ProcessPath(string sandboxId, int pid, string tag, string verb) =>
            SandboxPath(sandboxId, string.IsNullOrEmpty(tag) ? "/processes/" + pid.ToString(CultureInfo.InvariantCulture) + verb
                : "/processes/tags/" + Escape(tag) + verb);

        /// <summary>A query string ("?a=1&amp;b=2", or "") of the pairs whose value is not null.</summary>
        public static string Query(IEnumerable<KeyValuePair<string, string>> pairs)
        {
            var sb = new StringBuilder();
            foreach (var p in pairs)
            {
                if (p.Value == null)
                    continue;
                sb.Append(sb.Length == 0 ? '?' : '&').Append(Escape(p.Key)).Append('=').Append(Escape(p.Value));
            }
            return sb.ToString();
        }

        public static KeyValuePair<string, string> Pair(string key, string value) => new KeyValuePair<string, string>(key, value);

        /// <summary>
        /// ListSandboxes' query: paging, states as repeated SANDBOX_STATE_*
        /// values, metadata as deepObject pairs (metadata[k]=v). Built here
        /// because the generated call sends metadata as bare k=v pairs.
        /// </summary>
        public static string ListQuery(ListOptions o)
        {
            var q = new List<KeyValuePair<string, string>>();
            if (o.PageSize.HasValue)
                q.Add(Pair("pageSize", o.PageSize.Value.ToString(CultureInfo.InvariantCulture)));
            if (!string.IsNullOrEmpty(o.PageToken))
                q.Add(Pair("pageToken", o.PageToken));
            if (o.States != null)
                foreach (var s in o.States)
                {
                    if (s == SandboxState.Unknown)
                        throw new InvalidArgumentException("SandboxState.Unknown is not a state to filter by");
                    q.Add(Pair("states", "SANDBOX_STATE_" + s.ToString().ToUpperInvariant()));
                }
            if (o.Metadata != null)
                foreach (var kv in o.Metadata.OrderBy(kv => kv.Key, StringComparer.Ordinal))
                    q.Add(Pair("metadata[" + kv.Key + "]", kv.Value ?? ""));
            return Query(q);
        }

        /// <summary>The generated enum member whose wire name (EnumMember) is value; null when there is none.</summary>
        public static T? ToEnum<T>(string value) where T : struct
        {
            foreach (var f in typeof(T).GetFields(BindingFlags.Public | BindingFlags.Static))
            {
                var a = f.GetCustomAttribute<EnumMemberAttribute>();
                if (a != null && a.Value == value)
                    return (T)f.GetValue(null);
            }
            return null;
        }

        /// <summary>An enum value's wire name ("SANDBOX_STATE_RUNNING"); "" for null.</summary>
        public static string WireName(object value)
        {
            if (value == null)
                return "";
            var f = value.GetType().GetField(value.ToString(), BindingFlags.Public | BindingFlags.Static);
            var a = f == null ? null : f.GetCustomAttribute<EnumMemberAttribute>();
            return a != null ? a.Value : value.ToString();
        }

        /// <summary>A wire enum's name after its prefix, in lower case: ("FILE_TYPE_FILE", "FILE_TYPE_") → "file".</summary>
        public static string Tail(object value, string prefix)
        {
            var s = WireName(value);
            return (s.StartsWith(prefix, StringComparison.Ordinal) ? s.Substring(prefix.Length) : s).ToLowerInvariant();
        }

        public static long Long(string s)
        {
            long v;
            return long.TryParse(s, NumberStyles.Integer, CultureInfo.InvariantCulture, out v) ? v : 0;
        }

        public static DateTimeOffset? Time(DateTimeOffset t) => t == default(DateTimeOffset) ? (DateTimeOffset?)null : t;

        /// <summary>CreateSandbox's body from the options (Python's create_body).</summary>
        public static M.Sandbox CreateBody(SandboxOptions o)
        {
            var image = o.Image ?? o.Template;
            var b = new M.Sandbox();
            if (!string.IsNullOrEmpty(o.SnapshotId))
            {
                // From a snapshot the image is the snapshot's; one given too is checked by the server.
                b.SnapshotId = o.SnapshotId;
                if (!string.IsNullOrEmpty(image))
                    b.Image = image;
            }
            else
                b.Image = string.IsNullOrEmpty(image) ? "host" : image;
            if (o.Isolation.HasValue)
                b.Isolation = ToEnum<M.Sandbox.IsolationEnum>("ISOLATION_" + o.Isolation.Value.ToString().ToUpperInvariant());
            if (o.IdleTimeout.HasValue && o.IdleTimeout.Value > TimeSpan.Zero)
                b.IdleTimeout = Seconds(o.IdleTimeout.Value);
            b.AutoResume = o.AutoResume;
            if (o.Metadata != null && o.Metadata.Count > 0)
                b.Metadata = new Dictionary<string, string>(o.Metadata);
            b.NetworkPolicy = NetworkPolicy(o.AllowInternetAccess, o.Network);
            if (o.OnTimeout.HasValue)
                b.TimeoutAction = o.OnTimeout.Value == TimeoutAction.Pause
                    ? M.Sandbox.TimeoutActionEnum.TIMEOUTACTIONPAUSE
                    : M.Sandbox.TimeoutActionEnum.TIMEOUTACTIONDELETE;
            if (o.Envs != null && o.Envs.Count > 0)
                b.Env = new Dictionary<string, string>(o.Envs);
            if (o.Labels != null && o.Labels.Count > 0)
                b.Labels = new Dictionary<string, string>(o.Labels);
            if (o.Secrets != null && o.Secrets.Count > 0)
                b.SecretNames = new List<string>(o.Secrets);
            if (o.Timeout.HasValue && o.Timeout.Value > TimeSpan.Zero)
                b.Timeout = Seconds(o.Timeout.Value);
            if (o.CpuMillis.HasValue || o.MemoryMib.HasValue)
                b.Resources = new M.Resources(
                    cpuMillis: o.CpuMillis.HasValue ? o.CpuMillis.Value.ToString(CultureInfo.InvariantCulture) : null,
                    memoryMib: o.MemoryMib.HasValue ? o.MemoryMib.Value.ToString(CultureInfo.InvariantCulture) : null);
            if (o.VolumeMounts != null && o.VolumeMounts.Count > 0)
                b.VolumeMounts = o.VolumeMounts.Select(v => new M.VolumeMount(name: v.Name, path: v.Path, readOnly: v.ReadOnly)).ToList();
            return b;
        }

        /// <summary>
        /// E2B's network options as an egress policy: no internet access is a
        /// sealed sandbox; AllowOut (CIDRs, IPs or domain names) an allowlist.
        /// Talon denies private ranges whatever the policy and has no deny
        /// list beyond "everything not allowed", so DenyOut may only be
        /// ["0.0.0.0/0"]. Null: the server's default.
        /// </summary>
        public static M.NetworkPolicy NetworkPolicy(bool? allowInternetAccess, NetworkOptions network)
        {
            if (network != null)
            {
                var allow = network.AllowOut ?? new List<string>();
                var deny = network.DenyOut ?? new List<string>();
                if (deny.Count > 0 && !(deny.Count == 1 && deny[0] == "0.0.0.0/0"))
                    throw new InvalidArgumentException(
                        "DenyOut may only be [\"0.0.0.0/0\"]: Talon denies what is not allowed, and private ranges always");
                if (allow.Count > 0)
                {
                    var cidrs = new List<string>();
                    var domains = new List<string>();
                    foreach (var a in allow)
                    {
                        var net = Cidr(a);
                        if (net != null)
                            cidrs.Add(net);
                        else
                            domains.Add(a);
                    }
                    return new M.NetworkPolicy(allowCidrs: cidrs, allowDomains: domains,
                        mode: M.NetworkPolicy.ModeEnum.EGRESSMODEALLOWLIST);
                }
                if (deny.Count > 0)
                    return new M.NetworkPolicy(mode: M.NetworkPolicy.ModeEnum.EGRESSMODESEALED);
            }
            if (allowInternetAccess == false)
                return new M.NetworkPolicy(mode: M.NetworkPolicy.ModeEnum.EGRESSMODESEALED);
            return null;
        }

        /// <summary>
        /// An IP or CIDR as its network ("10.1.2.3/8" → "10.0.0.0/8", an
        /// address → "/32" or "/128", as Python's ip_network(strict=False));
        /// null when s is neither (a domain name).
        /// </summary>
        public static string Cidr(string s)
        {
            var slash = s.IndexOf('/');
            IPAddress ip;
            if (!IPAddress.TryParse(slash < 0 ? s : s.Substring(0, slash), out ip))
                return null;
            var bytes = ip.GetAddressBytes();
            var max = bytes.Length * 8;
            var prefix = max;
            if (slash >= 0 && (!int.TryParse(s.Substring(slash + 1), NumberStyles.None, CultureInfo.InvariantCulture, out prefix) || prefix > max))
                return null;
            for (var bit = prefix; bit < max; bit++)
                bytes[bit / 8] &= (byte)~(0x80 >> (bit % 8));
            return new IPAddress(bytes) + "/" + prefix.ToString(CultureInfo.InvariantCulture);
        }

        /// <summary>StartProcess's body (Python's process_body).</summary>
        public static M.StartProcessRequest ProcessBody(IList<string> argv, CommandOptions o, TimeSpan? timeout, bool stdin)
        {
            var b = new M.StartProcessRequest(command: new List<string>(argv), stdin: stdin);
            if (o.Envs != null && o.Envs.Count > 0)
                b.Env = new Dictionary<string, string>(o.Envs);
            if (!string.IsNullOrEmpty(o.Cwd))
                b.Cwd = o.Cwd;
            if (!string.IsNullOrEmpty(o.User))
                b.User = o.User;
            if (!string.IsNullOrEmpty(o.Tag))
                b.Tag = o.Tag;
            if (timeout.HasValue)
                b.Timeout = Seconds(timeout.Value);
            return b;
        }

        /// <summary>A finished command's result, or the exception it stands for.</summary>
        public static CommandResult Finish(CommandResult r, TimeSpan? timeout)
        {
            if (r.TimedOut)
                throw new CommandTimeoutException(r, timeout ?? TimeSpan.Zero);
            if (r.ExitCode != 0 || r.Signal != 0)
                throw new CommandExitException(r);
            return r;
        }

        public static string Json(object o) => JsonConvert.SerializeObject(o, JsonSettings);

        public static T Parse<T>(string json) => JsonConvert.DeserializeObject<T>(json, JsonSettings);
    }

    /// <summary>Generated members keep their own JSON names; every enum reads tolerantly.</summary>
    internal sealed class WireContractResolver : DefaultContractResolver
    {
        protected override JsonContract CreateContract(Type objectType)
        {
            var c = base.CreateContract(objectType);
            var t = Nullable.GetUnderlyingType(objectType) ?? objectType;
            if (t.IsEnum)
                c.Converter = new TolerantEnumConverter();
            return c;
        }
    }

    /// <summary>Json.NET's StringEnumConverter, but a name it does not know reads as null (or the default).</summary>
    internal sealed class TolerantEnumConverter : StringEnumConverter
    {
        public override object ReadJson(JsonReader reader, Type objectType, object existingValue, JsonSerializer serializer)
        {
            try
            {
                return base.ReadJson(reader, objectType, existingValue, serializer);
            }
            catch (JsonSerializationException)
            {
                return Nullable.GetUnderlyingType(objectType) != null ? null : Activator.CreateInstance(objectType);
            }
        }
    }
}
