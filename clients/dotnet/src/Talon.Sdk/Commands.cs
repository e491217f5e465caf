using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Commands: processes started, followed and signalled. A command
    /// string runs under `sh -c`; a list is the argv itself.
    /// </summary>
    public sealed class Commands
    {
        readonly Sandbox _s;

        internal Commands(Sandbox sandbox)
        {
            _s = sandbox;
        }

        /// <summary>Runs `sh -c cmd` to its end. See the argv overload.</summary>
        public Task<CommandResult> RunAsync(string cmd, CommandOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            RunAsync(Shell(cmd), options, cancellationToken);

        /// <summary>
        /// Runs a command to its end and returns its output and exit code. A
        /// non-zero exit raises CommandExitException, and one that outlives
        /// its timeout (60 s unless options say) is killed and raises
        /// CommandTimeoutException; both carry the result. Cancelling stops
        /// following it; the process runs on in the sandbox.
        /// </summary>
        public async Task<CommandResult> RunAsync(IList<string> argv, CommandOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new CommandOptions();
            var limit = Limit(o.Timeout, CommandOptions.DefaultTimeout);
            if (o.Stdin != null)
            {
                var h = await Start(argv, o, limit, cancellationToken).ConfigureAwait(false);
                try
                {
                    if (o.Stdin.Length > 0)
                        await h.SendStdinAsync(o.Stdin, cancellationToken).ConfigureAwait(false);
                    await h.CloseStdinAsync(cancellationToken).ConfigureAwait(false);
                    return await h.WaitAsync(cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    h.Disconnect();
                }
            }
            var c = new Collector(o.OnStdout, o.OnStderr);
            using (var resp = await Open(argv, o, limit, false, cancellationToken).ConfigureAwait(false))
                await Ndjson.ReadAsync(resp, line =>
                {
                    c.Add(ProcessEvent.Parse(line));
                    return Done;
                }, cancellationToken).ConfigureAwait(false);
            return Wire.Finish(c.Result(), limit);
        }

        /// <summary>Starts `sh -c cmd` in the background. See the argv overload.</summary>
        public Task<CommandHandle> StartAsync(string cmd, CommandOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            StartAsync(Shell(cmd), options, cancellationToken);

        /// <summary>
        /// Starts a command and returns once it runs, with a handle that
        /// follows its output in the background (E2B's run(background=True)).
        /// No timeout unless options set one. With options.Stdin set (even
        /// empty) its stdin stays open for the handle's SendStdinAsync; the
        /// bytes themselves are not written here. Callbacks run on the
        /// handle's reader, not on your thread.
        /// </summary>
        public Task<CommandHandle> StartAsync(IList<string> argv, CommandOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new CommandOptions();
            return Start(argv, o, Limit(o.Timeout, null), cancellationToken);
        }

        Task<CommandHandle> Start(IList<string> argv, CommandOptions o, TimeSpan? limit, CancellationToken cancellationToken) =>
            CommandHandle.Open(_s, ct => Open(argv, o, limit, o.Stdin != null, ct), new Collector(o.OnStdout, o.OnStderr),
                o.Tag, limit, cancellationToken);

        /// <summary>
        /// Reattaches to a process by pid (or tag, when given): its output so
        /// far is replayed, then followed.
        /// </summary>
        public Task<CommandHandle> ConnectAsync(int pid, string tag = null, Action<string> onStdout = null, Action<string> onStderr = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var path = Wire.ProcessPath(_s.SandboxId, pid, tag, ":connect");
            var c = new Collector(onStdout, onStderr) { Pid = pid };
            return CommandHandle.Open(_s, ct => _s.Conn.SendAsync(HttpMethod.Get, path, null, ct, stream: true, accept: null),
                c, tag, null, cancellationToken);
        }

        /// <summary>Sends a signal (SIGKILL by default) to a process by pid, or by tag when one is given.</summary>
        public Task KillAsync(int pid, string tag = null, int signal = 9, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.SendProcessSignalRequest(signal: signal);
            var api = _s.Conn.Processes;
            if (!string.IsNullOrEmpty(tag))
                return _s.Conn.Run(ct => api.ProcessServiceSendProcessSignal2Async(_s.SandboxId, tag, body, ct), cancellationToken);
            return _s.Conn.Run(ct => api.ProcessServiceSendProcessSignalAsync(_s.SandboxId, Pid(pid), body, ct), cancellationToken);
        }

        /// <summary>Writes to a process's stdin (it was started with CommandOptions.Stdin set).</summary>
        public async Task SendStdinAsync(int pid, byte[] data, string tag = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var content = new ByteArrayContent(data ?? new byte[0]);
            content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            var path = Wire.ProcessPath(_s.SandboxId, pid, tag, ":input");
            using (await _s.Conn.SendAsync(HttpMethod.Post, path, content, cancellationToken).ConfigureAwait(false)) { }
        }

        public Task SendStdinAsync(int pid, string text, string tag = null, CancellationToken cancellationToken = default(CancellationToken)) =>
            SendStdinAsync(pid, Encoding.UTF8.GetBytes(text ?? ""), tag, cancellationToken);

        /// <summary>Closes a process's stdin: it reads end of file.</summary>
        public Task CloseStdinAsync(int pid, string tag = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.CloseProcessStdinRequest();
            var api = _s.Conn.Processes;
            if (!string.IsNullOrEmpty(tag))
                return _s.Conn.Run(ct => api.ProcessServiceCloseProcessStdin2Async(_s.SandboxId, tag, body, ct), cancellationToken);
            return _s.Conn.Run(ct => api.ProcessServiceCloseProcessStdinAsync(_s.SandboxId, Pid(pid), body, ct), cancellationToken);
        }

        /// <summary>
        /// The sandbox's processes started through the API (and, with
        /// includeExited, those that ended and are still remembered): to find
        /// a pid or tag to reattach to (ConnectAsync) or signal (KillAsync).
        /// Agent runs and the browser are not listed.
        /// </summary>
        public async Task<IReadOnlyList<ProcessInfo>> ListAsync(bool includeExited = false,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await _s.Conn.Call(ct => _s.Conn.Processes.ProcessServiceListProcessesAsync(_s.SandboxId, includeExited, ct),
                cancellationToken).ConfigureAwait(false);
            var list = new List<ProcessInfo>();
            if (r != null && r.Processes != null)
                foreach (var p in r.Processes)
                    list.Add(ProcessInfo.Of(p));
            return list;
        }

        /// <summary>`sh -c cmd` as an argv.</summary>
        public static IList<string> Shell(string cmd) => new[] { "sh", "-c", cmd };

        static string Pid(int pid) => pid.ToString(CultureInfo.InvariantCulture);

        static readonly Task Done = Task.FromResult(true);

        /// <summary>A command's limit: unset is the default, zero none.</summary>
        static TimeSpan? Limit(TimeSpan? given, TimeSpan? fallback)
        {
            var t = given ?? fallback;
            return t.HasValue && t.Value > TimeSpan.Zero ? t : null;
        }

        Task<HttpResponseMessage> Open(IList<string> argv, CommandOptions o, TimeSpan? limit, bool stdin, CancellationToken cancellationToken)
        {
            if (argv == null || argv.Count == 0)
                throw new InvalidArgumentException("an empty command");
            var body = Wire.Json(Wire.ProcessBody(argv, o, limit, stdin));
            var content = new StringContent(body, new UTF8Encoding(false), "application/json");
            return _s.Conn.SendAsync(HttpMethod.Post, Wire.SandboxPath(_s.SandboxId, "/processes"), content, cancellationToken,
                stream: true, accept: null);
        }
    }

    /// <summary>
    /// A process followed in the background (Commands.StartAsync or
    /// ConnectAsync). Its output gathers as it arrives; WaitAsync gives the
    /// result, raising on a non-zero exit as RunAsync does. Dispose stops
    /// following it; the process runs on.
    /// </summary>
    public sealed class CommandHandle : IDisposable
    {
        readonly Sandbox _s;
        readonly Collector _c;
        readonly CancellationTokenSource _follow = new CancellationTokenSource();
        readonly TimeSpan? _timeout;
        Task _reader;
        volatile bool _disconnected;

        CommandHandle(Sandbox sandbox, Collector collector, string tag, TimeSpan? timeout)
        {
            _s = sandbox;
            _c = collector;
            Tag = tag;
            _timeout = timeout;
        }

        public int Pid => _c.Pid;
        public string Tag { get; }

        /// <summary>The output so far.</summary>
        public string Stdout => _c.Stdout;

        public string Stderr => _c.Stderr;

        /// <summary>Opens the stream and returns once the process is known to run (or has ended).</summary>
        internal static async Task<CommandHandle> Open(Sandbox sandbox, Func<CancellationToken, Task<HttpResponseMessage>> open,
            Collector collector, string tag, TimeSpan? timeout, CancellationToken cancellationToken)
        {
            var h = new CommandHandle(sandbox, collector, tag, timeout);
            var resp = await open(cancellationToken).ConfigureAwait(false);
            // Continuations run on their own: the reader must not run the
            // caller's code on its thread.
            var started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            h._reader = Task.Run(async () =>
            {
                using (resp)
                    await Ndjson.ReadAsync(resp, line =>
                    {
                        var e = ProcessEvent.Parse(line);
                        collector.Add(e);
                        if (e.Kind == ProcessEvent.Kinds.Started || e.Kind == ProcessEvent.Kinds.Exited || collector.Pid != 0)
                            started.TrySetResult(true);
                        return Task.FromResult(true);
                    }, h._follow.Token).ConfigureAwait(false);
            });
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                await Task.WhenAny(started.Task, h._reader, cancelled.Task).ConfigureAwait(false);
            if (!started.Task.IsCompleted && !h._reader.IsCompleted)
            {
                h._follow.Cancel();
                throw new OperationCanceledException(cancellationToken);
            }
            if (h._reader.IsFaulted)
                await h._reader.ConfigureAwait(false); // the stream's error, as the start's
            return h;
        }

        /// <summary>
        /// Waits for the process to end and returns its result; a non-zero exit
        /// raises CommandExitException, a timeout CommandTimeoutException.
        /// Cancelling stops the wait, not the process.
        /// </summary>
        public async Task<CommandResult> WaitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            if (_disconnected)
                throw new TalonException("this handle was disconnected; Commands.ConnectAsync(pid) follows the process again");
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                if (await Task.WhenAny(_reader, cancelled.Task).ConfigureAwait(false) != _reader)
                    throw new OperationCanceledException(cancellationToken);
            await _reader.ConfigureAwait(false); // its error, or a Disconnect's cancellation
            return Wire.Finish(_c.Result(), _timeout);
        }

        public Task KillAsync(int signal = 9, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.KillAsync(Pid, null, signal, cancellationToken);

        public Task SendStdinAsync(byte[] data, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.SendStdinAsync(Pid, data, null, cancellationToken);

        public Task SendStdinAsync(string text, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.SendStdinAsync(Pid, text, null, cancellationToken);

        public Task CloseStdinAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.CloseStdinAsync(Pid, null, cancellationToken);

        /// <summary>Stops following the process; it keeps running in the sandbox.</summary>
        public void Disconnect()
        {
            if (_c.Exited || _disconnected)
                return;
            _disconnected = true;
            _follow.Cancel();
        }

        public void Dispose() => Disconnect();
    }
}
