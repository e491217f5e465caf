using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Talon
{
    /// <summary>What an agent run's event says; Unknown: a kind this SDK does not know yet (a newer server's).</summary>
    public enum AgentEventKind
    {
        Unknown,
        /// <summary>The agent runs: <see cref="AgentStartedEvent"/>.</summary>
        Started,
        /// <summary>A line of its output: <see cref="AgentOutputEvent"/>.</summary>
        Output,
        /// <summary>A path under /workspace changed: <see cref="AgentFileChangeEvent"/>.</summary>
        FileChange,
        /// <summary>It ended: <see cref="AgentCompletedEvent"/>, always the last.</summary>
        Completed,
    }

    /// <summary>
    /// One event of an agent run. Each kind is a subclass carrying its own
    /// fields (test with `is` or switch on Kind); an event of a kind this
    /// SDK does not know is a plain AgentEvent, so a newer server does not
    /// break an older client.
    /// </summary>
    public class AgentEvent
    {
        /// <summary>Its place in the run, from 1: ConnectAsync replays the events after one.</summary>
        public long Seq { get; }
        public AgentEventKind Kind { get; }
        /// <summary>When it happened, by the sandbox's clock; null when the server did not say.</summary>
        public DateTimeOffset? Time { get; }

        internal AgentEvent(AgentEventKind kind, long seq, DateTimeOffset? time)
        {
            Kind = kind;
            Seq = seq;
            Time = time;
        }

        /// <summary>
        /// The kind as the other SDKs name it ("started", "output",
        /// "file_change", "completed", "unknown"), to compare runs across
        /// SDKs (the conformance cases use these names).
        /// </summary>
        public string KindName
        {
            get
            {
                switch (Kind)
                {
                    case AgentEventKind.Started: return "started";
                    case AgentEventKind.Output: return "output";
                    case AgentEventKind.FileChange: return "file_change";
                    case AgentEventKind.Completed: return "completed";
                    default: return "unknown";
                }
            }
        }

        public override string ToString() => "AgentEvent(" + Seq + ", " + KindName + ")";
    }

    /// <summary>The agent's process runs; its RunId is what ConnectAsync and CancelAsync take.</summary>
    public sealed class AgentStartedEvent : AgentEvent
    {
        public int Pid { get; }
        public string RunId { get; }

        internal AgentStartedEvent(long seq, DateTimeOffset? time, int pid, string runId)
            : base(AgentEventKind.Started, seq, time)
        {
            Pid = pid;
            RunId = runId ?? "";
        }

        public override string ToString() => "AgentStartedEvent(" + Seq + ", " + RunId + ", pid " + Pid + ")";
    }

    /// <summary>
    /// One line of the agent's stdout or stderr, without its newline (a
    /// line over 16 KiB comes in pieces; a last line without a newline
    /// comes at the end). Secret values are already replaced by ***.
    /// </summary>
    public sealed class AgentOutputEvent : AgentEvent
    {
        /// <summary>"stdout" or "stderr".</summary>
        public string Stream { get; }
        public bool IsStderr => Stream == "stderr";
        public string Text { get; }

        internal AgentOutputEvent(long seq, DateTimeOffset? time, bool stderr, string text)
            : base(AgentEventKind.Output, seq, time)
        {
            Stream = stderr ? "stderr" : "stdout";
            Text = text ?? "";
        }

        public override string ToString() => "AgentOutputEvent(" + Seq + ", " + Stream + ", " + Text + ")";
    }

    /// <summary>
    /// A path under /workspace changed while the agent ran. Changes to one
    /// path within 200 ms are one event with the first kind (a file created
    /// then written reads as created).
    /// </summary>
    public sealed class AgentFileChangeEvent : AgentEvent
    {
        /// <summary>Absolute inside the sandbox.</summary>
        public string Path { get; }

        /// <summary>
        /// "create", "write", "remove", "rename" or "chmod" (a string, as
        /// the Python SDK's: a newer server may name another); "" when unset.
        /// </summary>
        public string Change { get; }

        internal AgentFileChangeEvent(long seq, DateTimeOffset? time, string path, string change)
            : base(AgentEventKind.FileChange, seq, time)
        {
            Path = path ?? "";
            Change = change ?? "";
        }

        public override string ToString() => "AgentFileChangeEvent(" + Seq + ", " + Change + " " + Path + ")";
    }

    /// <summary>The run ended: the last event of every run, cancelled and timed-out ones too.</summary>
    public sealed class AgentCompletedEvent : AgentEvent
    {
        /// <summary>The agent's exit code; 128 + the signal when one killed it (CancelAsync: 137).</summary>
        public int ExitCode { get; }
        /// <summary>Its timeout (AgentRunOptions.Timeout, 30 minutes unless set) ended it.</summary>
        public bool TimedOut { get; }
        /// <summary>How long it ran.</summary>
        public TimeSpan Duration { get; }

        internal AgentCompletedEvent(long seq, DateTimeOffset? time, int exitCode, bool timedOut, TimeSpan duration)
            : base(AgentEventKind.Completed, seq, time)
        {
            ExitCode = exitCode;
            TimedOut = timedOut;
            Duration = duration;
        }

        public override string ToString() => "AgentCompletedEvent(" + Seq + ", exit " + ExitCode + (TimedOut ? ", timed out" : "") + ")";
    }

    /// <summary>
    /// A run that has completed: how it ended and every event seen, in
    /// order. A non-zero exit is not an error here (unlike a command's):
    /// an agent's exit code is part of its answer, not a failure of the call.
    /// </summary>
    public sealed class AgentRun
    {
        public string RunId { get; }
        public int ExitCode { get; }
        public bool TimedOut { get; }
        public TimeSpan Duration { get; }

        /// <summary>The events seen, in order (after the cursor for a run followed by ConnectAsync).</summary>
        public IReadOnlyList<AgentEvent> Events { get; }

        /// <summary>The text of each output event, stdout and stderr interleaved as they came.</summary>
        public IReadOnlyList<string> OutputLines { get; }

        /// <summary>Every output line with a newline after it, as the Python SDK's AgentRun.output.</summary>
        public string Output { get; }

        public IReadOnlyList<AgentFileChangeEvent> FileChanges { get; }

        internal AgentRun(string runId, AgentCompletedEvent completed, IReadOnlyList<AgentEvent> events)
        {
            RunId = runId ?? "";
            ExitCode = completed.ExitCode;
            TimedOut = completed.TimedOut;
            Duration = completed.Duration;
            Events = events;
            OutputLines = events.OfType<AgentOutputEvent>().Select(e => e.Text).ToList();
            Output = string.Concat(OutputLines.Select(l => l + "\n"));
            FileChanges = events.OfType<AgentFileChangeEvent>().ToList();
        }

        public override string ToString() => "AgentRun(" + RunId + ", exit " + ExitCode + ", " + Events.Count + " events)";
    }

    /// <summary>How to run an agent (Agent.RunAsync, StartAsync): the Python SDK's agent.run keywords.</summary>
    public sealed class AgentRunOptions
    {
        /// <summary>How many times a run whose stream dropped is followed again from its last event, as Python's reattach=3.</summary>
        public const int DefaultReattach = 3;

        /// <summary>Extra environment variables of the agent.</summary>
        public IDictionary<string, string> Envs { get; set; }

        /// <summary>Its working directory.</summary>
        public string Cwd { get; set; }

        /// <summary>The user it runs as; the sandbox's default when unset.</summary>
        public string User { get; set; }

        /// <summary>
        /// Names of your tenant's secrets it gets as environment variables
        /// of the same names; their values are replaced by *** in every event.
        /// </summary>
        public IList<string> Secrets { get; set; }

        /// <summary>The run is stopped after this long (AgentCompletedEvent.TimedOut); unset or zero: 30 minutes, the server's default.</summary>
        public TimeSpan? Timeout { get; set; }

        /// <summary>
        /// Called with each event as it arrives, in order, once each (a
        /// reattach's replay is not repeated), on the thread that reads the
        /// stream: keep it short.
        /// </summary>
        public Action<AgentEvent> OnEvent { get; set; }

        /// <summary>
        /// How many times a dropped stream is followed again by run id, from
        /// after the last event seen (only once the run has started: a
        /// request that never started one is not resent).
        /// </summary>
        public int Reattach { get; set; } = DefaultReattach;
    }

    /// <summary>
    /// Folds a run's events into an AgentRun (Python's AgentFollower): it
    /// keeps the last seq, to reattach after a dropped stream without
    /// repeating events, and the run id of `started`. Thread-safe: a
    /// handle's reader adds while its owner reads.
    /// </summary>
    internal sealed class AgentFollower
    {
        readonly object _lock = new object();
        readonly List<AgentEvent> _events = new List<AgentEvent>();
        readonly Action<AgentEvent> _onEvent;
        string _runId;
        int _pid;
        long _lastSeq;
        AgentCompletedEvent _done;

        /// <summary>Set once the run is known to run or to have ended: what StartAsync waits for.</summary>
        public readonly TaskCompletionSource<bool> Started =
            new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        public AgentFollower(Action<AgentEvent> onEvent, string runId = "", long afterSeq = 0)
        {
            _onEvent = onEvent;
            _runId = runId ?? "";
            _lastSeq = afterSeq;
        }

        public string RunId { get { lock (_lock) return _runId; } }
        public int Pid { get { lock (_lock) return _pid; } }
        public long LastSeq { get { lock (_lock) return _lastSeq; } }
        public bool Done { get { lock (_lock) return _done != null; } }

        public IReadOnlyList<AgentEvent> Events { get { lock (_lock) return _events.ToList(); } }

        public void Add(AgentEvent e)
        {
            lock (_lock)
            {
                if (e.Seq != 0 && e.Seq <= _lastSeq)
                    return; // already seen: a reattach replays from the cursor
                if (e.Seq != 0)
                    _lastSeq = e.Seq;
                var started = e as AgentStartedEvent;
                if (started != null)
                {
                    _runId = started.RunId;
                    _pid = started.Pid;
                }
                var completed = e as AgentCompletedEvent;
                if (completed != null)
                    _done = completed;
                _events.Add(e);
            }
            _onEvent?.Invoke(e);
            if (e.Kind == AgentEventKind.Started || e.Kind == AgentEventKind.Completed)
                Started.TrySetResult(true);
        }

        /// <summary>The completed run; a stream that ended before `completed` is an error, as in Python.</summary>
        public AgentRun Result()
        {
            lock (_lock)
            {
                if (_done == null)
                    throw new TalonException("agent run " + (_runId.Length > 0 ? _runId : "(not started)") + " ended without completing");
                return new AgentRun(_runId, _done, _events.ToList());
            }
        }

        /// <summary>
        /// Parses one NDJSON line of RunAgent ({"seq", "started"|…}) or of
        /// ConnectAgentRun (the same inside {"event": …}); an {"error": …}
        /// line (a failure after the stream began) raises its typed exception.
        /// </summary>
        public static AgentEvent Parse(string line)
        {
            JObject d;
            try
            {
                // Dates stay strings: Json.NET would read them as local DateTimes.
                using (var r = new JsonTextReader(new StringReader(line)) { DateParseHandling = DateParseHandling.None })
                    d = JObject.Load(r);
            }
            catch (JsonException e)
            {
                throw new TalonException("an agent run's stream line is not a JSON object: " + e.Message, inner: e);
            }
            var err = d["error"] as JObject;
            if (err != null)
                throw ErrorMap.FromStatus(err);
            var ev = d["event"] as JObject ?? d;
            var seq = Wire.Long(ev.Value<string>("seq"));
            var time = Time(ev.Value<string>("eventTime"));
            var started = ev["started"] as JObject;
            if (started != null)
                return new AgentStartedEvent(seq, time, (int)(started.Value<long?>("pid") ?? 0), started.Value<string>("runId"));
            var output = ev["output"] as JObject;
            if (output != null)
                return new AgentOutputEvent(seq, time, output.Value<string>("stream") == "OUTPUT_STREAM_STDERR", output.Value<string>("text"));
            var change = ev["fileChange"] as JObject;
            if (change != null)
            {
                var kind = Tail(change.Value<string>("kind"), "FILE_EVENT_TYPE_");
                return new AgentFileChangeEvent(seq, time, change.Value<string>("path"), kind == "unspecified" ? "" : kind);
            }
            var completed = ev["completed"] as JObject;
            if (completed != null)
                return new AgentCompletedEvent(seq, time, completed.Value<int?>("exitCode") ?? 0, completed.Value<bool?>("timedOut") ?? false,
                    Wire.Duration(completed.Value<string>("duration")) ?? TimeSpan.Zero);
            return new AgentEvent(AgentEventKind.Unknown, seq, time);
        }

        static string Tail(string s, string prefix)
        {
            s = s ?? "";
            return (s.StartsWith(prefix, StringComparison.Ordinal) ? s.Substring(prefix.Length) : s).ToLowerInvariant();
        }

        static DateTimeOffset? Time(string s)
        {
            DateTimeOffset t;
            if (string.IsNullOrEmpty(s)
                || !DateTimeOffset.TryParse(s, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out t))
                return null;
            return t;
        }
    }
}
