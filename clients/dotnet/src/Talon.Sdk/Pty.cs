using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Pty: terminals. A process under a PTY over the gateway's WebSocket
    /// bridge (GET /v1/sandboxes/{id}/pty): keystrokes go up as they are
    /// sent and output comes down as it is written, on one connection per
    /// handle. The process is one of the sandbox's processes like any other,
    /// so it is killed, listed and given input by pid through Commands too.
    /// The Python SDK's sbx.pty: create, connect, resize, send_stdin, kill;
    /// RunAsync is the whole round (start, type, wait) in one call.
    /// </summary>
    public sealed class Pty
    {
        readonly Sandbox _s;

        /// <summary>
        /// Opens the socket: the real ClientWebSocket, or a test's. The
        /// tests replace it to drive a handle from scripted frames.
        /// </summary>
        internal Func<Uri, CancellationToken, Task<WebSocket>> OpenSocket;

        internal Pty(Sandbox sandbox)
        {
            _s = sandbox;
            OpenSocket = (url, ct) => PtyWire.ConnectAsync(url, _s.Conn.Options.ApiKey, ct);
        }

        /// <summary>
        /// Starts a terminal: options.Cmd (bash -l, a login shell, by default)
        /// under a PTY of options.Cols × options.Rows, and returns once it
        /// runs (its Pid known). Its output goes to options.OnData and
        /// gathers in the handle's Output; type with SendInputAsync. It runs
        /// until it exits or is killed: disposing the handle only closes the
        /// connection (Pty.ConnectAsync(pid) attaches again).
        /// </summary>
        public Task<PtyHandle> CreateAsync(PtyOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new PtyOptions();
            var argv = o.Cmd == null || o.Cmd.Count == 0 ? (IList<string>)new[] { "bash", "-l" } : o.Cmd;
            var open = PtyWire.Open(argv, o);
            var limit = o.Timeout.HasValue && o.Timeout.Value > TimeSpan.Zero ? o.Timeout : null;
            return Start(open, 0, o.Tag, o.OnData, limit, cancellationToken);
        }

        /// <summary>
        /// Attaches to a running terminal by pid (or by tag, when given).
        /// Output from now on comes to the new handle (what it wrote before
        /// is not replayed over the socket), and the terminal is set to
        /// cols × rows, as the server does on every attach: pass the size of
        /// the terminal you show it in. A process that is not a PTY is
        /// FailedPreconditionException.
        /// </summary>
        public Task<PtyHandle> ConnectAsync(int pid, string tag = null, int cols = 80, int rows = 24, Action<byte[]> onData = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            if (pid <= 0 && string.IsNullOrEmpty(tag))
                throw new InvalidArgumentException("a pid (or tag) is required to attach to a terminal");
            return Start(PtyWire.Attach(pid, tag, cols, rows), pid, tag, onData, null, cancellationToken);
        }

        /// <summary>
        /// Runs a terminal to its end: starts options.Cmd (bash -l by
        /// default) under a PTY, types input into it, and waits for it to
        /// exit, so the input should end the process (a shell's "exit\n").
        /// The result's Stdout is everything the terminal showed (the echo of
        /// the input too, with \r\n line ends). As Commands.RunAsync: a
        /// non-zero exit raises CommandExitException, and one that outlives
        /// options.Timeout (60 s unless set; TimeSpan.Zero: none) is killed
        /// and raises CommandTimeoutException, both with the result attached.
        /// </summary>
        public Task<CommandResult> RunAsync(string input, PtyOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken)) =>
            RunAsync(new UTF8Encoding(false).GetBytes(input ?? ""), options, cancellationToken);

        public async Task<CommandResult> RunAsync(byte[] input, PtyOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = (options ?? new PtyOptions()).Copy();
            if (!o.Timeout.HasValue)
                o.Timeout = CommandOptions.DefaultTimeout;
            using (var h = await CreateAsync(o, cancellationToken).ConfigureAwait(false))
            {
                if (input != null && input.Length > 0)
                    await h.SendInputAsync(input, cancellationToken).ConfigureAwait(false);
                return await h.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
        }

        /// <summary>
        /// Resizes a terminal by pid over REST (ResizeProcessPty), without a
        /// connection to it; a handle's ResizeAsync goes over its socket.
        /// </summary>
        public Task ResizeAsync(int pid, int cols, int rows, CancellationToken cancellationToken = default(CancellationToken))
        {
            PtyWire.CheckSize(cols, rows);
            var body = new M.ResizeProcessPtyRequest(size: new M.PtySize(cols: cols, rows: rows));
            var id = pid.ToString(System.Globalization.CultureInfo.InvariantCulture);
            return _s.Conn.Run(ct => _s.Conn.Processes.ProcessServiceResizeProcessPtyAsync(_s.SandboxId, id, body, ct), cancellationToken);
        }

        /// <summary>Keystrokes to a terminal by pid over REST (its stdin), without a connection to it.</summary>
        public Task SendInputAsync(int pid, byte[] data, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.SendStdinAsync(pid, data, null, cancellationToken);

        public Task SendInputAsync(int pid, string text, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.SendStdinAsync(pid, text, null, cancellationToken);

        /// <summary>Kills a terminal's process by pid (SIGKILL unless told otherwise).</summary>
        public Task KillAsync(int pid, int signal = 9, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.KillAsync(pid, null, signal, cancellationToken);

        /// <summary>Opens the socket, sends the open, and returns once the server named the pid.</summary>
        async Task<PtyHandle> Start(string open, int pid, string tag, Action<byte[]> onData, TimeSpan? timeout,
            CancellationToken cancellationToken)
        {
            var ws = await Connect(cancellationToken).ConfigureAwait(false);
            var h = new PtyHandle(_s, ws, pid, tag, onData, timeout);
            try
            {
                try
                {
                    await h.SendTextAsync(open, cancellationToken).ConfigureAwait(false);
                }
                catch (UnavailableException)
                {
                    // The server may refuse before it reads the open (a key it
                    // does not take): its error frame, which the reader raises
                    // below, says why better than the closed socket does.
                }
                await h.Started(_s.Conn.Options.RequestTimeout, cancellationToken).ConfigureAwait(false);
                return h;
            }
            catch
            {
                h.Dispose();
                throw;
            }
        }

        /// <summary>
        /// The socket on the server calls go to now, within the request
        /// timeout. A WebSocket's failed handshake says nothing of why on
        /// Mono ("Unable to connect"), so a failure is asked about over HTTP:
        /// the same path by GET, through the SDK's failover, which raises
        /// the typed error (no server reachable, no such route) and moves on
        /// to the next server when this one is down; the socket then tries
        /// that one. The route itself answers a GET with 400 (it wants a
        /// WebSocket), so then the upgrade is what failed: UnavailableException.
        /// </summary>
        async Task<WebSocket> Connect(CancellationToken cancellationToken)
        {
            var path = Wire.SandboxPath(Wire.Required(_s.SandboxId, "a sandbox id"), "/pty");
            var tried = new HashSet<int>();
            while (true)
            {
                var i = _s.Conn.Servers.Current;
                var url = PtyWire.SocketUrl(_s.Conn.Options.Urls[i], path);
                var limit = _s.Conn.Options.RequestTimeout;
                Exception failure;
                using (var timeout = new CancellationTokenSource(limit))
                using (var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token))
                {
                    try
                    {
                        return await OpenSocket(url, linked.Token).ConfigureAwait(false);
                    }
                    // A cancelled handshake may fail as a WebSocketException rather than a cancellation.
                    catch (Exception e) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
                    {
                        throw new TalonTimeoutException("no WebSocket to " + url + " within " + Wire.Seconds(limit), inner: e);
                    }
                    catch (Exception e) when (cancellationToken.IsCancellationRequested && !(e is OperationCanceledException))
                    {
                        throw new OperationCanceledException("the terminal's open was cancelled", e, cancellationToken);
                    }
                    catch (Exception e) when (!(e is OperationCanceledException) && !(e is TalonException))
                    {
                        failure = e;
                    }
                }
                tried.Add(i);
                try
                {
                    using (await _s.Conn.SendAsync(HttpMethod.Get, path, null, cancellationToken).ConfigureAwait(false)) { }
                }
                catch (TalonException e) when (e.Status == 400)
                {
                    // The route is there and wants a WebSocket.
                }
                if (tried.Contains(_s.Conn.Servers.Current))
                    throw new UnavailableException("cannot open the terminal's WebSocket at " + url + ": " + failure.Message
                        + " (the server answers HTTP, so the upgrade itself failed: a proxy in between?)", inner: failure);
            }
        }
    }

    /// <summary>How to start a terminal (Pty.CreateAsync, Pty.RunAsync): the Python SDK's pty.create keywords.</summary>
    public sealed class PtyOptions
    {
        /// <summary>Columns (80).</summary>
        public int Cols { get; set; } = 80;

        /// <summary>Rows (24).</summary>
        public int Rows { get; set; } = 24;

        /// <summary>The argv; unset: bash -l, as the Python SDK. Commands.Shell(cmd) makes `sh -c cmd` of a string.</summary>
        public IList<string> Cmd { get; set; }

        /// <summary>Environment variables on top of the sandbox's.</summary>
        public IDictionary<string, string> Envs { get; set; }

        /// <summary>Relative paths are under /workspace.</summary>
        public string Cwd { get; set; }

        /// <summary>Run as this user ("user" is E2B's default user); the agent's own (root) when unset.</summary>
        public string User { get; set; }

        /// <summary>A name to find it by later (Pty.ConnectAsync, Commands).</summary>
        public string Tag { get; set; }

        /// <summary>
        /// Killed after this long, with CommandTimeoutException. The socket's
        /// open message has no timeout, so the SDK kills it, while the handle
        /// is connected. Unset: 60 s for RunAsync, none for CreateAsync;
        /// TimeSpan.Zero: no limit.
        /// </summary>
        public TimeSpan? Timeout { get; set; }

        /// <summary>Called with each chunk of output as it arrives, as sent (it need not end on a UTF-8 boundary).</summary>
        public Action<byte[]> OnData { get; set; }

        internal PtyOptions Copy() => (PtyOptions)MemberwiseClone();
    }
}
