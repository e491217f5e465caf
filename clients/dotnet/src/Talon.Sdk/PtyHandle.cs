using System;
using System.IO;
using System.Net.WebSockets;
using System.Runtime.ExceptionServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Talon
{
    /// <summary>
    /// A terminal, connected (Pty.CreateAsync or ConnectAsync): one
    /// WebSocket that carries keystrokes and resizes up and output down.
    /// Output gathers in Output and goes to the onData callback, on the
    /// handle's reader, not on your thread. WaitAsync gives the result as
    /// CommandHandle's does (Stdout is the terminal's output). Dispose closes
    /// the connection; the process runs on until it exits or is killed.
    /// </summary>
    public sealed class PtyHandle : IDisposable
    {
        static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(2);

        readonly Sandbox _s;
        readonly WebSocket _ws;
        readonly Action<byte[]> _onData;
        readonly TimeSpan? _timeout;
        readonly object _lock = new object();
        readonly MemoryStream _out = new MemoryStream();
        readonly SemaphoreSlim _send = new SemaphoreSlim(1, 1);
        // Never disposed: a late Cancel on a disposed source would throw.
        readonly CancellationTokenSource _follow = new CancellationTokenSource();
        readonly CancellationTokenSource _timer = new CancellationTokenSource();
        readonly TaskCompletionSource<bool> _started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        readonly TaskCompletionSource<bool> _exited = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        readonly Task _reader;
        ProcessEvent _exit;
        int _pid;
        volatile bool _timedOut;
        volatile bool _disconnected;

        internal PtyHandle(Sandbox sandbox, WebSocket socket, int pid, string tag, Action<byte[]> onData, TimeSpan? timeout)
        {
            _s = sandbox;
            _ws = socket;
            _pid = pid;
            Tag = tag;
            _onData = onData;
            _timeout = timeout;
            // Its own task: the reader must not run the caller's code on its thread.
            _reader = Task.Run(() => Read());
        }

        /// <summary>The terminal's process, in the sandbox's pid namespace.</summary>
        public int Pid => Volatile.Read(ref _pid);

        /// <summary>The tag it was started or attached with, or null.</summary>
        public string Tag { get; }

        /// <summary>What the terminal showed so far, as UTF-8 (control sequences and \r\n included).</summary>
        public string Output { get { lock (_lock) return new UTF8Encoding(false).GetString(_out.ToArray()); } }

        /// <summary>The output so far as sent.</summary>
        public byte[] OutputBytes { get { lock (_lock) return _out.ToArray(); } }

        /// <summary>The process has exited (WaitAsync returns at once).</summary>
        public bool HasExited => _exited.Task.IsCompleted;

        /// <summary>Keystrokes, as raw bytes (a binary frame).</summary>
        public Task SendInputAsync(byte[] data, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (data == null || data.Length == 0)
                return Task.FromResult(true);
            return Send(new ArraySegment<byte>(data), WebSocketMessageType.Binary, cancellationToken);
        }

        /// <summary>Keystrokes as UTF-8 text ("ls\n"; "\u0003" is Ctrl-C).</summary>
        public Task SendInputAsync(string text, CancellationToken cancellationToken = default(CancellationToken)) =>
            SendInputAsync(new UTF8Encoding(false).GetBytes(text ?? ""), cancellationToken);

        /// <summary>A new terminal size, over the connection: the process gets SIGWINCH.</summary>
        public Task ResizeAsync(int cols, int rows, CancellationToken cancellationToken = default(CancellationToken)) =>
            SendTextAsync(PtyWire.Resize(cols, rows), cancellationToken);

        /// <summary>Sends a signal (SIGKILL by default) to the process; WaitAsync then ends with it.</summary>
        public Task KillAsync(int signal = 9, CancellationToken cancellationToken = default(CancellationToken)) =>
            _s.Commands.KillAsync(Pid, null, signal, cancellationToken);

        /// <summary>
        /// Waits for the process to exit and returns its result (Stdout is
        /// the terminal's output); a non-zero exit or a signal raises
        /// CommandExitException and the SDK's timeout CommandTimeoutException,
        /// both with the result. The connection breaking first is
        /// UnavailableException. Cancelling stops the wait, not the process.
        /// </summary>
        public async Task<CommandResult> WaitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            if (_disconnected)
                throw Disconnected();
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                if (await Task.WhenAny(_exited.Task, _reader, cancelled.Task).ConfigureAwait(false) == cancelled.Task)
                    throw new OperationCanceledException(cancellationToken);
            if (!_exited.Task.IsCompleted)
            {
                await _reader.ConfigureAwait(false); // its error, or a Disconnect's cancellation
                throw new TalonException("the terminal's stream ended without its exit");
            }
            return Wire.Finish(Result(), _timeout);
        }

        /// <summary>
        /// Closes the connection (politely: a close frame first). The
        /// process runs on; Pty.ConnectAsync(pid) attaches again.
        /// </summary>
        public void Disconnect()
        {
            _timer.Cancel();
            if (HasExited || _disconnected || _reader.IsCompleted)
            {
                // The server's close follows the exit at once, and the reader
                // answers it; give it a moment before dropping the socket.
                if (!_reader.IsCompleted)
                    Task.Run(async () =>
                    {
                        await Task.WhenAny(_reader, Task.Delay(CloseWait)).ConfigureAwait(false);
                        _ws.Dispose();
                    });
                return;
            }
            _disconnected = true;
            Task.Run(async () =>
            {
                await CloseOutput().ConfigureAwait(false);
                _follow.Cancel();
                _ws.Dispose();
            });
        }

        public void Dispose() => Disconnect();

        public override string ToString() => "PtyHandle(" + Pid + (HasExited ? ", exited" : "") + ")";

        /// <summary>The result so far; without an exit yet, exit code -1.</summary>
        internal CommandResult Result()
        {
            lock (_lock)
            {
                var x = _exit ?? new ProcessEvent { Kind = ProcessEvent.Kinds.Exited, ExitCode = -1 };
                return new CommandResult(_out.ToArray(), new byte[0], x.ExitCode, x.Signal, x.TimedOut || _timedOut, Pid);
            }
        }

        internal Task SendTextAsync(string json, CancellationToken cancellationToken) =>
            Send(new ArraySegment<byte>(new UTF8Encoding(false).GetBytes(json)), WebSocketMessageType.Text, cancellationToken);

        /// <summary>
        /// Returns once the server named the pid: its first message, sent once
        /// the process runs. Its error (a bad cwd, an unknown user, a
        /// sandbox that is not running) is raised here; so is no answer
        /// within the request timeout.
        /// </summary>
        internal async Task Started(TimeSpan limit, CancellationToken cancellationToken)
        {
            var stop = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (var timeout = new CancellationTokenSource(limit))
            using (timeout.Token.Register(() => stop.TrySetResult(false)))
            using (cancellationToken.Register(() => stop.TrySetResult(true)))
            {
                if (await Task.WhenAny(_started.Task, _reader, stop.Task).ConfigureAwait(false) == stop.Task)
                {
                    if (cancellationToken.IsCancellationRequested)
                        throw new OperationCanceledException(cancellationToken);
                    throw new TalonTimeoutException("the terminal did not start within " + Wire.Seconds(limit));
                }
            }
            if (_started.Task.IsCompleted)
            {
                if (_timeout.HasValue)
                    _ = Expire(_timeout.Value); // ends on its own and raises nothing
                return;
            }
            await _reader.ConfigureAwait(false);
            throw new TalonException("the terminal's stream ended before it named its process");
        }

        /// <summary>Kills the process once the timeout passes, unless it exited or the handle let go first.</summary>
        async Task Expire(TimeSpan after)
        {
            try
            {
                await Task.Delay(after, _timer.Token).ConfigureAwait(false);
                if (HasExited)
                    return;
                _timedOut = true;
                await KillAsync().ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
            }
            catch (TalonException)
            {
                // Gone already, or unreachable: WaitAsync tells.
            }
        }

        async Task Read()
        {
            var buffer = new byte[16384];
            try
            {
                while (true)
                {
                    PtyWire.Frame f;
                    try
                    {
                        f = await PtyWire.ReceiveAsync(_ws, buffer, _follow.Token).ConfigureAwait(false);
                    }
                    catch (Exception e)
                    {
                        if (_follow.IsCancellationRequested || _disconnected)
                            throw new OperationCanceledException("the handle was disconnected", e, _follow.Token);
                        if (HasExited)
                            return; // the socket went after the exit: nothing is lost
                        throw new UnavailableException("the terminal's connection broke off: " + e.Message, inner: e);
                    }
                    if (f == null)
                    {
                        if (HasExited)
                            return;
                        throw PtyWire.ClosedEarly(_ws.CloseStatus, _ws.CloseStatusDescription);
                    }
                    if (!f.IsText)
                    {
                        Add(f.Data);
                        continue;
                    }
                    var e2 = PtyWire.Parse(f.Text);
                    switch (e2.Kind)
                    {
                        case ProcessEvent.Kinds.Started:
                            Volatile.Write(ref _pid, e2.Pid);
                            _started.TrySetResult(true);
                            break;
                        case ProcessEvent.Kinds.Stdout:
                            Add(e2.Data);
                            break;
                        case ProcessEvent.Kinds.Exited:
                            lock (_lock)
                                _exit = e2;
                            _timer.Cancel();
                            _exited.TrySetResult(true);
                            break;
                    }
                }
            }
            finally
            {
                if (_ws.State == WebSocketState.CloseReceived)
                    await CloseOutput().ConfigureAwait(false);
                _ws.Dispose();
            }
        }

        void Add(byte[] data)
        {
            if (data.Length == 0)
                return;
            lock (_lock)
                _out.Write(data, 0, data.Length);
            _onData?.Invoke(data);
        }

        async Task Send(ArraySegment<byte> data, WebSocketMessageType type, CancellationToken cancellationToken)
        {
            if (_disconnected)
                throw Disconnected();
            await _send.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await _ws.SendAsync(data, type, true, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (!(e is OperationCanceledException && cancellationToken.IsCancellationRequested))
            {
                if (HasExited)
                    throw new FailedPreconditionException("the terminal's process has exited");
                if (_disconnected)
                    throw Disconnected();
                if (_reader.IsFaulted)
                    ExceptionDispatchInfo.Capture(_reader.Exception.InnerException).Throw(); // the server's reason
                throw new UnavailableException("the terminal's connection is closed: " + e.Message, inner: e);
            }
            finally
            {
                _send.Release();
            }
        }

        /// <summary>Our close frame, best effort and briefly: the socket is dropped after it either way.</summary>
        async Task CloseOutput()
        {
            try
            {
                using (var t = new CancellationTokenSource(CloseWait))
                {
                    await _send.WaitAsync(t.Token).ConfigureAwait(false);
                    try
                    {
                        if (_ws.State == WebSocketState.Open || _ws.State == WebSocketState.CloseReceived)
                            await _ws.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", t.Token).ConfigureAwait(false);
                    }
                    finally
                    {
                        _send.Release();
                    }
                }
            }
            catch (Exception)
            {
                // The connection is going anyway.
            }
        }

        static TalonException Disconnected() =>
            new TalonException("this terminal handle was disconnected; Pty.ConnectAsync(pid) attaches again");
    }
}
