// Conformance adapter for the .NET SDK (Talon.Sdk): runs each case's steps
// through the SDK's public API and writes what it observed. The runner
// judges.
//
//   mono adapter.exe CASES.json RESULTS.json
//
// TALON_URL, TALON_API_KEY, TALON_VIEWER_KEY and TALON_ALT_KEY come from the
// environment (run.py sets them).
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;
using Talon;

namespace Talon.Conformance
{
    static class Program
    {
        static int Main(string[] args)
        {
            if (args.Length != 2)
            {
                Console.Error.WriteLine("usage: mono adapter.exe CASES.json RESULTS.json");
                return 2;
            }
            JArray cases;
            using (var reader = new JsonTextReader(new StreamReader(args[0], new UTF8Encoding(false))))
            {
                // Strings stay strings: Json.NET would make dates of ISO-looking ones.
                reader.DateParseHandling = DateParseHandling.None;
                cases = JArray.Load(reader);
            }
            var results = new JObject();
            foreach (JObject c in cases)
            {
                var name = (string)c["name"];
                results[name] = RunCase(c);
            }
            File.WriteAllText(args[1], results.ToString(Formatting.Indented), new UTF8Encoding(false));
            return 0;
        }

        static JArray RunCase(JObject c)
        {
            var observed = new JArray();
            // A case gets three minutes, as in the Go adapter; then its calls are cancelled.
            using (var cts = new CancellationTokenSource(TimeSpan.FromMinutes(3)))
            {
                var k = new Case(cts.Token);
                var steps = c["steps"] as JArray ?? new JArray();
                foreach (JObject st in steps)
                {
                    var op = (string)st["op"];
                    var a = st["args"] as JObject ?? new JObject();
                    observed.Add(Step(k, op, a));
                }
                k.CleanupAsync().GetAwaiter().GetResult();
            }
            return observed;
        }

        static JObject Step(Case k, string op, JObject a)
        {
            try
            {
                return k.StepAsync(op, a).GetAwaiter().GetResult();
            }
            catch (Exception e)
            {
                return Error(e);
            }
        }

        /// <summary>
        /// A failed step: the SDK's typed exceptions carry the gRPC code's
        /// name (TalonException.Code, set by each subclass: NotFoundException
        /// is NOT_FOUND and so on); anything else is the adapter's.
        /// </summary>
        internal static JObject Error(Exception e)
        {
            var agg = e as AggregateException;
            if (agg != null && agg.InnerExceptions.Count == 1)
                e = agg.InnerExceptions[0];
            var t = e as TalonException;
            if (t != null)
                return new JObject { ["error"] = t.Code, ["message"] = t.Message };
            return new JObject { ["error"] = "ADAPTER", ["message"] = e.GetType().Name + ": " + e.Message };
        }
    }

    /// <summary>One case's sandboxes (by slot) and the steps run on them.</summary>
    sealed partial class Case
    {
        static readonly Dictionary<string, string> Keys = new Dictionary<string, string>
        {
            [""] = Environment.GetEnvironmentVariable("TALON_API_KEY"),
            ["viewer"] = Environment.GetEnvironmentVariable("TALON_VIEWER_KEY"),
            ["alt"] = Environment.GetEnvironmentVariable("TALON_ALT_KEY"),
            ["invalid"] = "tln_invalid0_" + new string('x', 32),
        };

        /// <summary>For signed file URLs and the browser's CDP address: no credential of ours.</summary>
        static readonly HttpClient Plain = new HttpClient { Timeout = TimeSpan.FromSeconds(60) };

        readonly CancellationToken _ct;
        // Slots in the order they were filled (same_as names the earliest).
        readonly List<KeyValuePair<string, Sandbox>> _slots = new List<KeyValuePair<string, Sandbox>>();
        // Sandboxes made for a step's own use (whoami), deleted at the end too.
        readonly List<Sandbox> _extra = new List<Sandbox>();
        readonly List<CommandHandle> _handles = new List<CommandHandle>();

        public Case(CancellationToken ct)
        {
            _ct = ct;
        }

        // -- arguments ------------------------------------------------------

        static string Str(JObject a, string k)
        {
            var v = a[k];
            return v == null || v.Type == JTokenType.Null ? null : (string)v;
        }

        static double? Num(JObject a, string k)
        {
            var v = a[k];
            return v == null || v.Type == JTokenType.Null ? (double?)null : (double)v;
        }

        static Dictionary<string, string> Map(JObject a, string k)
        {
            var o = a[k] as JObject;
            if (o == null)
                return null;
            var m = new Dictionary<string, string>();
            foreach (var p in o.Properties())
                m[p.Name] = p.Value.Type == JTokenType.Null ? "" : (string)p.Value;
            return m;
        }

        static List<string> Strings(JToken v) => v is JArray arr ? arr.Select(x => (string)x).ToList() : null;

        static string SlotName(JObject a) => Str(a, "slot") ?? "a";

        static string KeyOf(JObject a) => Keys[Str(a, "key") ?? ""];

        static T Opts<T>(JObject a) where T : TalonOptions, new() => new T { ApiKey = KeyOf(a) };

        static byte[] Generate(int size, uint seed)
        {
            var b = new byte[size];
            unchecked
            {
                for (var i = 0; i < size; i++)
                    b[i] = (byte)(((uint)i * 2654435761u + seed) >> 24);
            }
            return b;
        }

        static string Lower(object e) => e.ToString().ToLowerInvariant();

        static JObject Empty() => new JObject();

        Sandbox Slot(JObject a)
        {
            var name = SlotName(a);
            foreach (var kv in _slots)
                if (kv.Key == name)
                    return kv.Value;
            throw new InvalidOperationException("no sandbox in slot " + name);
        }

        /// <summary>
        /// The sandbox of the step's slot, seen with the step's key: the
        /// case's own object, or one attached with the key (ConnectAsync, as
        /// the Go and TypeScript adapters do: the SDK has no handle without
        /// a look at the server).
        /// </summary>
        async Task<Sandbox> SandboxOf(JObject a)
        {
            var s = Slot(a);
            if (Str(a, "key") == null)
                return s;
            return await Sandbox.ConnectAsync(s.SandboxId, Opts<ConnectOptions>(a), _ct);
        }

        /// <summary>A command's result, also when it ended non-zero or timed out (the SDK throws then, the result attached).</summary>
        static async Task<CommandResult> Finished(Func<Task<CommandResult>> run)
        {
            try
            {
                return await run();
            }
            catch (CommandExitException e)
            {
                return e.Result;
            }
            catch (CommandTimeoutException e)
            {
                return e.Result;
            }
        }

        // -- steps ----------------------------------------------------------

        public async Task<JObject> StepAsync(string op, JObject a)
        {
            switch (op)
            {
                case "create": return await Create(a);
                case "list_filtered": return await ListFiltered(a);
                case "connect":
                {
                    var s = await Sandbox.ConnectAsync(Slot(a).SandboxId, Opts<ConnectOptions>(a), _ct);
                    return new JObject { ["state"] = Lower((await s.GetInfoAsync(_ct)).State) };
                }
                case "metrics":
                {
                    var m = (await (await SandboxOf(a)).GetMetricsAsync(_ct))[0];
                    return new JObject
                    {
                        ["cpu_count"] = m.CpuCount, ["mem_total_mib"] = m.MemTotal >> 20,
                        ["mem_used_positive"] = m.MemUsed > 0, ["disk_used_positive"] = m.DiskUsed > 0,
                    };
                }
                case "file_url": return await FileUrl(a);
                case "get":
                {
                    var id = Str(a, "sandbox_id") ?? Slot(a).SandboxId;
                    var info = await Sandbox.GetInfoAsync(id, Opts<TalonOptions>(a), _ct);
                    return new JObject { ["state"] = Lower(info.State) };
                }
                case "pause":
                    await (await SandboxOf(a)).PauseAsync(_ct);
                    return Empty();
                case "resume":
                    await (await SandboxOf(a)).ResumeAsync(_ct);
                    return Empty();
                case "kill":
                    await (await SandboxOf(a)).KillAsync(_ct);
                    return Empty();
                case "list_all": return await ListAll(a);
                case "run": return await Run(a);
                case "run_bg":
                {
                    var s = await SandboxOf(a);
                    var o = new CommandOptions { Tag = Str(a, "tag") };
                    var cmd = a["cmd"];
                    var h = cmd.Type == JTokenType.String
                        ? await s.Commands.StartAsync((string)cmd, o, _ct)
                        : await s.Commands.StartAsync(Strings(cmd), o, _ct);
                    _handles.Add(h);
                    return new JObject { ["pid"] = h.Pid };
                }
                case "reconnect":
                {
                    var s = await SandboxOf(a);
                    var h = await s.Commands.ConnectAsync(0, Str(a, "tag"), cancellationToken: _ct);
                    _handles.Add(h);
                    using (var wait = CancellationTokenSource.CreateLinkedTokenSource(_ct))
                    {
                        wait.CancelAfter(TimeSpan.FromSeconds(60));
                        var r = await Finished(() => h.WaitAsync(wait.Token));
                        return new JObject
                        {
                            ["stdout"] = r.Stdout, ["stderr"] = r.Stderr, ["exit_code"] = r.ExitCode, ["signal"] = r.Signal,
                        };
                    }
                }
                case "signal":
                {
                    var s = await SandboxOf(a);
                    await s.Commands.KillAsync(0, Str(a, "tag"), (int)(Num(a, "signal") ?? 9), _ct);
                    return Empty();
                }
                case "pty": return await Pty(a);
                case "agent_run": return await AgentRun(a);
                case "code": return await Code(a);
                case "browser": return await Browser(a);
                case "write": return await Write(a);
                case "read": return await Read(a);
                case "list_dir":
                {
                    var entries = await (await SandboxOf(a)).Files.ListAsync(Str(a, "path"), cancellationToken: _ct);
                    var names = entries.Select(e => e.Name).OrderBy(n => n, StringComparer.Ordinal);
                    return new JObject { ["names"] = new JArray(names) };
                }
                case "stat":
                {
                    var f = await (await SandboxOf(a)).Files.StatAsync(Str(a, "path"), cancellationToken: _ct);
                    return new JObject { ["size"] = f.Size, ["type"] = Lower(f.Type) };
                }
                case "mkdir":
                    await (await SandboxOf(a)).Files.MakeDirAsync(Str(a, "path"), cancellationToken: _ct);
                    return Empty();
                case "move":
                    await (await SandboxOf(a)).Files.RenameAsync(Str(a, "from"), Str(a, "to"), cancellationToken: _ct);
                    return Empty();
                case "remove":
                {
                    var recursive = a["recursive"] != null && (bool)a["recursive"];
                    await (await SandboxOf(a)).Files.RemoveAsync(Str(a, "path"), recursive, cancellationToken: _ct);
                    return Empty();
                }
                case "exists":
                    return new JObject { ["exists"] = await (await SandboxOf(a)).Files.ExistsAsync(Str(a, "path"), cancellationToken: _ct) };
                case "preview_token":
                {
                    var s = await SandboxOf(a);
                    var ttl = Num(a, "ttl_s");
                    var t = await s.PreviewTokenAsync((int)(Num(a, "port") ?? 0),
                        ttl.HasValue ? TimeSpan.FromSeconds(ttl.Value) : (TimeSpan?)null, _ct);
                    var url = t.Url ?? "";
                    return new JObject
                    {
                        ["url"] = url, ["token_present"] = !string.IsNullOrEmpty(t.Token),
                        ["url_names_sandbox"] = url.Contains(s.SandboxId),
                    };
                }
                case "whoami": return await WhoAmI(a);
            }
            throw new InvalidOperationException("unknown op " + op);
        }

        async Task<JObject> Create(JObject a)
        {
            var o = Opts<SandboxOptions>(a);
            o.Image = Str(a, "image");
            o.Envs = Map(a, "envs");
            o.Metadata = Map(a, "metadata");
            o.IdempotencyKey = Str(a, "idempotency_key");
            o.CpuMillis = 250;
            o.MemoryMib = 256;
            var iso = Str(a, "isolation");
            if (iso != null)
            {
                Isolation level;
                if (!Enum.TryParse(iso, true, out level))
                    throw new InvalidOperationException("no Isolation member for " + iso);
                o.Isolation = level;
            }
            var s = await Sandbox.CreateAsync(o, _ct);
            var same = _slots.Where(kv => kv.Value.SandboxId == s.SandboxId).Select(kv => kv.Key).FirstOrDefault() ?? "";
            var name = SlotName(a);
            _slots.RemoveAll(kv => kv.Key == name);
            _slots.Add(new KeyValuePair<string, Sandbox>(name, s));
            var info = await s.GetInfoAsync(_ct);
            return new JObject
            {
                ["sandbox_id"] = s.SandboxId, ["state"] = Lower(info.State), ["same_as"] = same, ["isolation"] = info.Isolation,
            };
        }

        async Task<JObject> ListFiltered(JObject a)
        {
            var o = Opts<ListOptions>(a);
            o.Metadata = Map(a, "metadata");
            var states = Strings(a["states"]);
            if (states != null)
                o.States = states.Select(x =>
                {
                    SandboxState st;
                    if (!Enum.TryParse(x, true, out st))
                        throw new InvalidOperationException("no SandboxState member for " + x);
                    return st;
                }).ToList();
            var ids = new HashSet<string>();
            while (true)
            {
                var page = await Sandbox.ListAsync(o, _ct);
                foreach (var i in page.Sandboxes)
                    ids.Add(i.SandboxId);
                if (string.IsNullOrEmpty(page.NextToken))
                    break;
                o.PageToken = page.NextToken;
            }
            var slots = _slots.Where(kv => ids.Contains(kv.Value.SandboxId)).Select(kv => kv.Key).Distinct()
                .OrderBy(n => n, StringComparer.Ordinal);
            return new JObject { ["slots"] = new JArray(slots) };
        }

        async Task<JObject> ListAll(JObject a)
        {
            var o = Opts<ListOptions>(a);
            o.PageSize = (int?)Num(a, "page_size");
            var ids = new List<string>();
            var pages = 0;
            while (true)
            {
                var page = await Sandbox.ListAsync(o, _ct);
                ids.AddRange(page.Sandboxes.Select(s => s.SandboxId));
                pages++;
                if (string.IsNullOrEmpty(page.NextToken))
                    break;
                o.PageToken = page.NextToken;
            }
            var seen = new HashSet<string>(ids);
            return new JObject
            {
                ["all_created_listed"] = _slots.All(kv => seen.Contains(kv.Value.SandboxId)),
                ["unique"] = seen.Count == ids.Count, ["pages"] = pages,
            };
        }

        async Task<JObject> FileUrl(JObject a)
        {
            var s = await SandboxOf(a);
            var path = Str(a, "path");
            HttpResponseMessage resp;
            if (Str(a, "operation") == "write")
            {
                var url = await s.UploadUrlAsync(path, null, _ct);
                var body = new ByteArrayContent(new UTF8Encoding(false).GetBytes(Str(a, "text") ?? ""));
                body.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
                resp = await Plain.PostAsync(url, body, _ct);
            }
            else
            {
                var url = await s.DownloadUrlAsync(path, null, _ct);
                resp = await Plain.GetAsync(url, _ct);
            }
            using (resp)
            {
                var bytes = await resp.Content.ReadAsByteArrayAsync();
                var r = new JObject { ["status"] = (int)resp.StatusCode };
                if (Str(a, "operation") == "read")
                    r["text"] = new UTF8Encoding(false).GetString(bytes);
                return r;
            }
        }

        async Task<JObject> Run(JObject a)
        {
            var s = await SandboxOf(a);
            var o = new CommandOptions { Envs = Map(a, "envs"), Cwd = Str(a, "cwd") };
            var timeout = Num(a, "timeout_s");
            if (timeout.HasValue)
                o.Timeout = TimeSpan.FromSeconds(timeout.Value);
            var stdin = Str(a, "stdin");
            if (stdin != null)
                o.Stdin = new UTF8Encoding(false).GetBytes(stdin);
            var cmd = a["cmd"];
            var r = await Finished(() => cmd.Type == JTokenType.String
                ? s.Commands.RunAsync((string)cmd, o, _ct)
                : s.Commands.RunAsync(Strings(cmd), o, _ct));
            return new JObject
            {
                ["stdout"] = r.Stdout, ["stderr"] = r.Stderr, ["exit_code"] = r.ExitCode, ["signal"] = r.Signal,
                ["timed_out"] = r.TimedOut,
            };
        }

        async Task<JObject> Write(JObject a)
        {
            var s = await SandboxOf(a);
            byte[] data;
            var g = a["generate"] as JObject;
            if (g != null)
                data = Generate((int)g["size"], (uint)(long)g["seed"]);
            else
                data = new UTF8Encoding(false).GetBytes(Str(a, "text") ?? "");
            var info = await s.Files.WriteAsync(Str(a, "path"), data, new WriteOptions { User = Str(a, "user") }, _ct);
            return new JObject { ["size"] = info.Size };
        }

        async Task<JObject> Read(JObject a)
        {
            var data = await (await SandboxOf(a)).Files.ReadBytesAsync(Str(a, "path"), Str(a, "user"), _ct);
            string hex;
            using (var sha = SHA256.Create())
                hex = string.Concat(sha.ComputeHash(data).Select(b => b.ToString("x2")));
            var r = new JObject { ["size"] = data.Length, ["sha256"] = hex };
            try
            {
                r["text"] = new UTF8Encoding(false, true).GetString(data);
            }
            catch (DecoderFallbackException)
            {
                // binary: no text
            }
            return r;
        }

        /// <summary>
        /// WhoAmIAsync is an instance method of Sandbox only (no static form
        /// taking TalonOptions, unlike Go's client.WhoAmI or TypeScript's
        /// whoami()): a sandbox of the case made with the same key answers
        /// it, else one made for the step, deleted when the case ends.
        /// </summary>
        async Task<JObject> WhoAmI(JObject a)
        {
            Sandbox s = null;
            if (Str(a, "key") == null && _slots.Count > 0)
                s = _slots[0].Value;
            if (s == null)
            {
                var o = Opts<SandboxOptions>(a);
                o.CpuMillis = 250;
                o.MemoryMib = 256;
                s = await Sandbox.CreateAsync(o, _ct);
                _extra.Add(s);
            }
            var me = await s.WhoAmIAsync(_ct);
            return new JObject { ["tenant_id"] = me.TenantId ?? "" };
        }

        public async Task CleanupAsync()
        {
            foreach (var h in _handles)
                h.Disconnect();
            foreach (var s in _slots.Select(kv => kv.Value).Concat(_extra))
            {
                try
                {
                    await s.KillAsync();
                }
                catch (Exception)
                {
                    // already gone, or the platform is: nothing more to do
                }
            }
        }
    }
}
