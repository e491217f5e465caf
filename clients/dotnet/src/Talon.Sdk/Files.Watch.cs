using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Talon
{
    // Watching a directory (FilesystemService.WatchDir, an NDJSON stream):
    // the Python SDK's files.watch_dir.
    public sealed partial class Files
    {
        /// <summary>
        /// Watches a directory (and below it, when recursive) until the
        /// handle is stopped: each change goes to onEvent, on the handle's
        /// reader, and to GetNewEvents either way. It returns once the server
        /// watches, so no change made after it returns is missed; a path
        /// that is not there is NotFoundException here. Relative paths are
        /// under /workspace.
        /// </summary>
        public async Task<WatchHandle> WatchDirAsync(string path, Action<FilesystemEvent> onEvent = null, bool recursive = false,
            string user = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var q = Wire.Query(new[]
            {
                Wire.Pair("path", Required(path)),
                Wire.Pair("recursive", recursive ? "true" : "false"),
                Wire.Pair("user", Empty(user)),
            });
            var resp = await _s.Conn.SendAsync(HttpMethod.Get, Wire.SandboxPath(_s.SandboxId, "/files:watch") + q, null, cancellationToken,
                stream: true, accept: null).ConfigureAwait(false);
            return new WatchHandle(resp, FilesystemEvent.Base(path), onEvent);
        }
    }

    /// <summary>
    /// A running watch (Files.WatchDirAsync): its events arrive in the
    /// background. Stop (or Dispose) ends it; the server ending it, or the
    /// stream breaking, ends it too, with Error set for a failure.
    /// </summary>
    public sealed class WatchHandle : IDisposable
    {
        readonly ConcurrentQueue<FilesystemEvent> _new = new ConcurrentQueue<FilesystemEvent>();
        // Never disposed: a late Stop would throw on a disposed source.
        readonly CancellationTokenSource _stop = new CancellationTokenSource();
        readonly Task _reader;
        volatile Exception _error;

        internal WatchHandle(HttpResponseMessage resp, string dir, Action<FilesystemEvent> onEvent)
        {
            // Its own task: the reader must not run the caller's code on its thread.
            _reader = Task.Run(async () =>
            {
                try
                {
                    using (resp)
                        await Ndjson.ReadAsync(resp, line =>
                        {
                            var e = FilesystemEvent.Parse(line, dir);
                            _new.Enqueue(e);
                            onEvent?.Invoke(e);
                            return Task.FromResult(true);
                        }, _stop.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (_stop.IsCancellationRequested)
                {
                    // Stopped.
                }
                catch (Exception e)
                {
                    _error = e;
                }
            });
        }

        /// <summary>
        /// Why the watch ended, when it failed: the server's error (its typed
        /// exception), the stream breaking (UnavailableException), or the
        /// callback's own exception. Null while it runs and after Stop.
        /// </summary>
        public Exception Error => _error;

        /// <summary>The watch still runs (not stopped, not ended by the server or a failure).</summary>
        public bool IsRunning => !_reader.IsCompleted;

        /// <summary>The events that arrived since the last call, oldest first.</summary>
        public IReadOnlyList<FilesystemEvent> GetNewEvents()
        {
            var list = new List<FilesystemEvent>();
            FilesystemEvent e;
            while (_new.TryDequeue(out e))
                list.Add(e);
            return list;
        }

        /// <summary>
        /// Waits until the watch ends (Stop, or the server or a failure ended
        /// it) and raises its Error if it has one. Cancelling stops the wait,
        /// not the watch.
        /// </summary>
        public async Task WaitAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
                if (await Task.WhenAny(_reader, cancelled.Task).ConfigureAwait(false) != _reader)
                    throw new OperationCanceledException(cancellationToken);
            var e = _error;
            if (e != null)
                ExceptionDispatchInfo.Capture(e).Throw();
        }

        /// <summary>Ends the watch: the stream is closed and no event follows.</summary>
        public void Stop() => _stop.Cancel();

        public void Dispose() => Stop();
    }

    /// <summary>What changed, as the server names it (FILE_EVENT_TYPE_*). Unknown: a kind this SDK does not know yet.</summary>
    public enum FilesystemEventType
    {
        Unknown,
        Create,
        Write,
        Remove,
        Rename,
        Chmod,
    }

    /// <summary>
    /// One change under a watched directory. A rename comes as two events:
    /// one for the old path and one for the new.
    /// </summary>
    public sealed class FilesystemEvent
    {
        public FilesystemEventType Type { get; private set; }

        /// <summary>The changed path, absolute inside the sandbox, as the server sends it.</summary>
        public string Path { get; private set; }

        /// <summary>The path below the watched directory ("sub/b.txt"), as E2B's name; the last part of Path when it is not below it.</summary>
        public string Name { get; private set; }

        /// <summary>When the server saw it.</summary>
        public DateTimeOffset? Time { get; private set; }

        public FilesystemEvent(FilesystemEventType type, string path, string name, DateTimeOffset? time = null)
        {
            Type = type;
            Path = path ?? "";
            Name = name ?? "";
            Time = time;
        }

        /// <summary>
        /// Parses one NDJSON line of WatchDir ({"type", "path", "eventTime"})
        /// against the watched directory (absolute, as Base made it); an
        /// {"error": …} line raises.
        /// </summary>
        internal static FilesystemEvent Parse(string line, string dir)
        {
            JObject d;
            try
            {
                // Dates stay strings: DateTimeOffset reads them exactly.
                using (var reader = new JsonTextReader(new System.IO.StringReader(line)) { DateParseHandling = DateParseHandling.None })
                    d = JObject.Load(reader);
            }
            catch (JsonException e)
            {
                throw new TalonException("a watch stream line is not a JSON object: " + e.Message, inner: e);
            }
            var err = d["error"] as JObject;
            if (err != null)
                throw ErrorMap.FromStatus(err);
            var raw = d.Value<string>("type") ?? "";
            var name = raw.StartsWith("FILE_EVENT_TYPE_", StringComparison.Ordinal) ? raw.Substring("FILE_EVENT_TYPE_".Length) : raw;
            FilesystemEventType type;
            if (name.Length == 0 || !Enum.TryParse(name, true, out type) || !Enum.IsDefined(typeof(FilesystemEventType), type))
                type = FilesystemEventType.Unknown;
            var path = d.Value<string>("path") ?? "";
            DateTimeOffset? time = null;
            DateTimeOffset t;
            if (DateTimeOffset.TryParse(d.Value<string>("eventTime"), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out t))
                time = t;
            return new FilesystemEvent(type, path, Relative(path, dir), time);
        }

        /// <summary>
        /// The watched directory as the server resolves it: an absolute path
        /// as given, a relative one under /workspace; without a trailing slash.
        /// </summary>
        internal static string Base(string path)
        {
            var p = (path ?? "").Trim();
            if (!p.StartsWith("/", StringComparison.Ordinal))
                p = "/workspace/" + (p == "." ? "" : p.StartsWith("./", StringComparison.Ordinal) ? p.Substring(2) : p);
            p = p.TrimEnd('/');
            return p.Length == 0 ? "/" : p;
        }

        static string Relative(string path, string dir)
        {
            var prefix = dir == "/" ? "/" : dir + "/";
            if (path.StartsWith(prefix, StringComparison.Ordinal) && path.Length > prefix.Length)
                return path.Substring(prefix.Length);
            var slash = path.TrimEnd('/').LastIndexOf('/');
            return slash < 0 ? path : path.TrimEnd('/').Substring(slash + 1);
        }

        public override string ToString() => "FilesystemEvent(" + Type + ", " + Path + ")";
    }
}
