using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Agent: agent runs (the REST AgentService; the Python SDK's
    /// `sbx.agent`). A run starts a coding agent in the sandbox with a
    /// prompt on its stdin; its output lines, workspace changes and end
    /// stream back as typed events (AgentEvents.cs). A run belongs to the
    /// sandbox, not to the call: RunAsync follows it again by itself when
    /// the stream drops, ConnectAsync follows one by id from any event
    /// (replaying what came after it), and CancelAsync stops one. The
    /// server keeps a sandbox's last 64 runs, until the sandbox restarts;
    /// it offers no call to list or get them, so neither does this SDK.
    /// </summary>
    public sealed class Agent
    {
        readonly Sandbox _s;

        internal Agent(Sandbox sandbox)
        {
            _s = sandbox;
        }

        /// <summary>
        /// `/bin/bash -lc command` as an argv: the Python SDK's form of a
        /// command line, a login shell, so that the agent finds what the
        /// user's profile puts on PATH (where CLIs such as coding agents
        /// are installed).
        /// </summary>
        public static IList<string> Shell(string command) => new[] { "/bin/bash", "-lc", command };

        /// <summary>Runs a command line under `/bin/bash -lc` (see Shell). See the argv overload.</summary>
        public Task<AgentRun> RunAsync(string command, string prompt = "", AgentRunOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken)) =>
            RunAsync(Shell(command), prompt, options, cancellationToken);

        /// <summary>
        /// Runs an agent (argv) with prompt on its stdin until it completes,
        /// calling options.OnEvent with each event as it arrives, and returns
        /// the completed run; a non-zero exit is not an error. A stream that
        /// drops once the run started is followed again by run id from the
        /// last event seen (options.Reattach times; then UnavailableException).
        /// Cancelling stops following it; the run goes on in the sandbox
        /// (CancelAsync stops it).
        /// </summary>
        public async Task<AgentRun> RunAsync(IList<string> argv, string prompt = "", AgentRunOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new AgentRunOptions();
            var body = Body(argv, prompt, o);
            var f = new AgentFollower(o.OnEvent);
            await Follow(body, f, o.Reattach, cancellationToken).ConfigureAwait(false);
            return f.Result();
        }

        /// <summary>Starts a command line under `/bin/bash -lc` (see Shell). See the argv overload.</summary>
        public Task<AgentRunHandle> StartAsync(string command, string prompt = "", AgentRunOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken)) =>
            StartAsync(Shell(command), prompt, options, cancellationToken);

        /// <summary>
        /// Starts an agent as RunAsync does, but returns once it runs (its
        /// `started` event came, so RunId is known), with a handle that
        /// follows it in the background, reattaching the same way: to watch
        /// Events, cancel it, or wait for its end while doing other work.
        /// </summary>
        public async Task<AgentRunHandle> StartAsync(IList<string> argv, string prompt = "", AgentRunOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new AgentRunOptions();
            var body = Body(argv, prompt, o);
            var f = new AgentFollower(o.OnEvent);
            return await AgentRunHandle.Open(this, f, ct => Follow(body, f, o.Reattach, ct), cancellationToken).ConfigureAwait(false);
        }

        /// <summary>
        /// Follows a run by id: its events after afterSeq (all of them from 0)
        /// are replayed, then followed until it completes, which is what this
        /// returns (Events holds only those after afterSeq). For a client
        /// that lost its stream, or another process watching the same run.
        /// An unknown run (or one the sandbox forgot: it keeps its last 64,
        /// until it restarts) is NotFoundException. A drop is not retried
        /// here: call again with the last Seq seen.
        /// </summary>
        public async Task<AgentRun> ConnectAsync(string runId, long afterSeq = 0, Action<AgentEvent> onEvent = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            Wire.Required(runId, "a run id");
            if (afterSeq < 0)
                throw new InvalidArgumentException("afterSeq is 0 (every event) or the Seq of an event, not " + afterSeq);
            var f = new AgentFollower(onEvent, runId, afterSeq);
            await Read(HttpMethod.Get, ConnectPath(runId, afterSeq), null, f, cancellationToken).ConfigureAwait(false);
            return f.Result();
        }

        /// <summary>
        /// Stops a run: its process tree is killed, and the run completes
        /// (exit code 137) for whoever follows it. A run already completed
        /// is left as it is; an unknown one is NotFoundException.
        /// </summary>
        public async Task CancelAsync(string runId, CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(runId, "a run id");
            var api = _s.Conn.Agents;
            await _s.Conn.Run(ct => api.AgentServiceCancelAgentRunAsync(_s.SandboxId, id, new M.CancelAgentRunRequest(), ct), cancellationToken)
                .ConfigureAwait(false);
        }

        /// <summary>
        /// RunAgent's stream, then ConnectAgentRun's from the last event
        /// seen while the run has not completed and the stream dropped
        /// (Python's agent.run). Before `started` nothing is resent: the
        /// run may not exist, or may exist twice.
        /// </summary>
        async Task Follow(string body, AgentFollower f, int reattach, CancellationToken cancellationToken)
        {
            TalonException lost = null;
            try
            {
                var content = new StringContent(body, new UTF8Encoding(false), "application/json");
                await Read(HttpMethod.Post, Wire.SandboxPath(_s.SandboxId, "/agent:run"), content, f, cancellationToken).ConfigureAwait(false);
            }
            catch (TalonException e) when (Dropped(e) && f.RunId.Length > 0)
            {
                lost = e;
            }
            for (var tries = 0; !f.Done && tries < reattach && f.RunId.Length > 0; tries++)
            {
                try
                {
                    await Read(HttpMethod.Get, ConnectPath(f.RunId, f.LastSeq), null, f, cancellationToken).ConfigureAwait(false);
                    lost = null;
                }
                catch (TalonException e) when (Dropped(e))
                {
                    lost = e;
                }
            }
            if (!f.Done && lost != null)
                throw new UnavailableException("lost agent run " + f.RunId + " after " + reattach.ToString(CultureInfo.InvariantCulture)
                    + " reattaches: " + lost.Message, inner: lost);
        }

        async Task Read(HttpMethod method, string path, HttpContent content, AgentFollower f, CancellationToken cancellationToken)
        {
            using (var resp = await _s.Conn.SendAsync(method, path, content, cancellationToken, stream: true, accept: null).ConfigureAwait(false))
                await Ndjson.ReadAsync(resp, line =>
                {
                    f.Add(AgentFollower.Parse(line));
                    return Done;
                }, cancellationToken).ConfigureAwait(false);
        }

        /// <summary>
        /// A stream that broke off or a server that could not be reached
        /// (Python's httpx.TransportError): worth following again. An error
        /// the server answered (an HTTP status, an error line) is not.
        /// </summary>
        static bool Dropped(TalonException e) =>
            (e is UnavailableException || e is TalonTimeoutException) && e.Status == 0 && e.InnerException != null;

        string ConnectPath(string runId, long afterSeq) =>
            Wire.SandboxPath(_s.SandboxId, "/agent-runs/" + Wire.Escape(runId) + ":connect")
            + Wire.Query(new[] { Wire.Pair("afterSeq", afterSeq.ToString(CultureInfo.InvariantCulture)) });

        /// <summary>RunAgent's body (Python's agent_body), checked before anything is sent.</summary>
        static string Body(IList<string> argv, string prompt, AgentRunOptions o)
        {
            if (argv == null || argv.Count == 0)
                throw new InvalidArgumentException("an empty agent command");
            if (o.Timeout.HasValue && o.Timeout.Value < TimeSpan.Zero)
                throw new InvalidArgumentException("an agent run's Timeout is positive, or unset for the server's 30 minutes");
            if (o.Reattach < 0)
                throw new InvalidArgumentException("Reattach is 0 or more, not " + o.Reattach.ToString(CultureInfo.InvariantCulture));
            var b = new M.RunAgentRequest(command: new List<string>(argv), prompt: prompt ?? "");
            if (o.Envs != null && o.Envs.Count > 0)
                b.Env = new Dictionary<string, string>(o.Envs);
            if (!string.IsNullOrEmpty(o.Cwd))
                b.Cwd = o.Cwd;
            if (!string.IsNullOrEmpty(o.User))
                b.User = o.User;
            if (o.Secrets != null && o.Secrets.Count > 0)
                b.SecretNames = new List<string>(o.Secrets);
            if (o.Timeout.HasValue && o.Timeout.Value > TimeSpan.Zero)
                b.Timeout = Wire.Seconds(o.Timeout.Value);
            return Wire.Json(b);
        }

        static readonly Task Done = Task.FromResult(true);
    }

    /// <summary>
    /// An agent run followed in the background (Agent.StartAsync). Its
    /// events gather as they arrive; WaitAsync gives the completed run.
    /// Dispose stops following it; the run goes on in the sandbox.
    /// </summary>
    public sealed class AgentRunHandle : IDisposable
    {
        readonly Agent _agent;
        readonly AgentFollower _f;
        readonly CancellationTokenSource _follow = new CancellationTokenSource();
        Task _reader;
        volatile bool _disconnected;

        AgentRunHandle(Agent agent, AgentFollower follower)
        {
            _agent = agent;
            _f = follower;
        }

        /// <summary>The run's id, for Agent.ConnectAsync and CancelAsync (from anywhere, later).</summary>
        public string RunId => _f.RunId;

        /// <summary>The agent process's pid in the sandbox.</summary>
        public int Pid => _f.Pid;

        /// <summary>The events so far, in order.</summary>
        public IReadOnlyList<AgentEvent> Events => _f.Events;

        /// <summary>The `completed` event came.</summary>
        public bool IsCompleted => _f.Done;

        /// <summary>Starts following and returns once the run is known to run (or has ended).</summary>
        internal static async Task<AgentRunHandle> Open(Agent agent, AgentFollower follower, Func<CancellationToken, Task> follow,
            CancellationToken cancellationToken)
        {
            var h = new AgentRunHandle(agent, follower);
            // On its own thread: the reader must not run the caller's code (or OnEvent) on the caller's.
            h._reader = Task.Run(() => follow(h._follow.Token));
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                await Task.WhenAny(follower.Started.Task, h._reader, cancelled.Task).ConfigureAwait(false);
            if (!follower.Started.Task.IsCompleted && !h._reader.IsCompleted)
            {
                h._follow.Cancel();
                throw new OperationCanceledException(cancellationToken);
            }
            if (h._reader.IsFaulted || h._reader.IsCanceled)
                await h._reader.ConfigureAwait(false); // the stream's error, as the start's
            return h;
        }

        /// <summary>
        /// Waits for the run to complete and returns it (a non-zero exit is
        /// not an error). Cancelling stops the wait, not the run or the
        /// following.
        /// </summary>
        public async Task<AgentRun> WaitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            if (_disconnected)
                throw new TalonException("this handle was disconnected; Agent.ConnectAsync(RunId) follows the run again");
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                if (await Task.WhenAny(_reader, cancelled.Task).ConfigureAwait(false) != _reader)
                    throw new OperationCanceledException(cancellationToken);
            await _reader.ConfigureAwait(false); // its error, or a Disconnect's cancellation
            return _f.Result();
        }

        /// <summary>Stops the run (Agent.CancelAsync): it completes, and WaitAsync returns it.</summary>
        public Task CancelAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            _agent.CancelAsync(RunId, cancellationToken);

        /// <summary>Stops following the run; it goes on in the sandbox.</summary>
        public void Disconnect()
        {
            if (_f.Done || _disconnected)
                return;
            _disconnected = true;
            _follow.Cancel();
        }

        public void Dispose() => Disconnect();

        public override string ToString() => "AgentRunHandle(" + RunId + (IsCompleted ? ", completed" : "") + ")";
    }
}
