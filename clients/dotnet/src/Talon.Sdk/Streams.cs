using System;
using System.IO;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Talon
{
    /// <summary>One line of a process stream (StartProcess, ConnectProcess).</summary>
    internal sealed class ProcessEvent
    {
        public enum Kinds { Unknown, Started, Stdout, Stderr, Exited }

        public Kinds Kind;
        public int Pid;
        public byte[] Data = new byte[0];
        public long Seq;
        public int ExitCode;
        public int Signal;
        public bool TimedOut;

        /// <summary>
        /// Parses one NDJSON line: {"event": {"started"|"output"|"exited": …}};
        /// an {"error": …} line (a failure after the stream began) raises.
        /// </summary>
        public static ProcessEvent Parse(string line)
        {
            JObject d;
            try
            {
                d = JObject.Parse(line);
            }
            catch (JsonException e)
            {
                throw new TalonException("a process stream line is not a JSON object: " + e.Message, inner: e);
            }
            var err = d["error"] as JObject;
            if (err != null)
                throw ErrorMap.FromStatus(err);
            var ev = d["event"] as JObject ?? d;
            var started = ev["started"] as JObject;
            if (started != null)
                return new ProcessEvent { Kind = Kinds.Started, Pid = started.Value<int?>("pid") ?? 0 };
            var output = ev["output"] as JObject;
            if (output != null)
            {
                var data = output.Value<string>("data");
                return new ProcessEvent
                {
                    Kind = output.Value<string>("stream") == "OUTPUT_STREAM_STDERR" ? Kinds.Stderr : Kinds.Stdout,
                    Data = string.IsNullOrEmpty(data) ? new byte[0] : Convert.FromBase64String(data),
                    Seq = Wire.Long(output.Value<string>("seq")),
                };
            }
            var exited = ev["exited"] as JObject;
            if (exited != null)
                return new ProcessEvent
                {
                    Kind = Kinds.Exited,
                    ExitCode = exited.Value<int?>("exitCode") ?? 0,
                    Signal = exited.Value<int?>("signal") ?? 0,
                    TimedOut = exited.Value<bool?>("timedOut") ?? false,
                };
            return new ProcessEvent();
        }
    }

    /// <summary>
    /// Gathers a process's events into its CommandResult, calling the
    /// callbacks as output arrives. Thread-safe: a background command's
    /// reader adds while its owner reads Stdout.
    /// </summary>
    internal sealed class Collector
    {
        readonly object _lock = new object();
        readonly MemoryStream _out = new MemoryStream();
        readonly MemoryStream _err = new MemoryStream();
        readonly Action<string> _onStdout;
        readonly Action<string> _onStderr;
        long _lastSeq;
        ProcessEvent _exit;

        public Collector(Action<string> onStdout, Action<string> onStderr)
        {
            _onStdout = onStdout;
            _onStderr = onStderr;
        }

        public int Pid { get; set; }

        public bool Exited { get { lock (_lock) return _exit != null; } }

        public void Add(ProcessEvent e)
        {
            Action<string> callback = null;
            lock (_lock)
            {
                switch (e.Kind)
                {
                    case ProcessEvent.Kinds.Started:
                        Pid = e.Pid;
                        return;
                    case ProcessEvent.Kinds.Exited:
                        _exit = e;
                        return;
                    case ProcessEvent.Kinds.Stdout:
                    case ProcessEvent.Kinds.Stderr:
                        if (e.Seq != 0 && e.Seq <= _lastSeq)
                            return; // already seen: a reattach replays
                        _lastSeq = Math.Max(_lastSeq, e.Seq);
                        var stdout = e.Kind == ProcessEvent.Kinds.Stdout;
                        (stdout ? _out : _err).Write(e.Data, 0, e.Data.Length);
                        callback = stdout ? _onStdout : _onStderr;
                        break;
                    default:
                        return;
                }
            }
            callback?.Invoke(Encoding.UTF8.GetString(e.Data));
        }

        public string Stdout { get { lock (_lock) return Encoding.UTF8.GetString(_out.ToArray()); } }

        public string Stderr { get { lock (_lock) return Encoding.UTF8.GetString(_err.ToArray()); } }

        /// <summary>The result so far; a stream that ended without an exit line reads as exit code -1.</summary>
        public CommandResult Result()
        {
            lock (_lock)
            {
                var x = _exit ?? new ProcessEvent { Kind = ProcessEvent.Kinds.Exited, ExitCode = -1 };
                return new CommandResult(_out.ToArray(), _err.ToArray(), x.ExitCode, x.Signal, x.TimedOut, Pid);
            }
        }
    }

    internal static class Ndjson
    {
        /// <summary>
        /// Reads a streamed answer line by line until it ends, handing each
        /// non-empty line to onLine. Cancelling disposes the response, which
        /// is how a blocked read is ended on netstandard2.0.
        /// </summary>
        public static async Task ReadAsync(HttpResponseMessage resp, Func<string, Task> onLine, CancellationToken cancellationToken)
        {
            using (cancellationToken.Register(resp.Dispose))
            {
                try
                {
                    using (var body = await resp.Content.ReadAsStreamAsync().ConfigureAwait(false))
                    using (var reader = new StreamReader(body, new UTF8Encoding(false)))
                    {
                        string line;
                        while ((line = await reader.ReadLineAsync().ConfigureAwait(false)) != null)
                        {
                            if (line.Trim().Length > 0)
                                await onLine(line).ConfigureAwait(false);
                        }
                    }
                }
                catch (Exception e) when (cancellationToken.IsCancellationRequested && !(e is OperationCanceledException))
                {
                    throw new OperationCanceledException("the stream was cancelled", e, cancellationToken);
                }
                catch (Exception e) when (e is IOException || e is HttpRequestException)
                {
                    throw new UnavailableException("the stream broke off: " + e.Message, inner: e);
                }
            }
        }
    }
}
