using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// One sandbox. Sandbox.CreateAsync makes one and, by default, waits
    /// until it runs; Sandbox.ConnectAsync attaches to an existing one (and
    /// resumes it if paused). Its parts are Commands and Files. Disposing it
    /// kills it, as Python's `with Sandbox.create() as sbx:` does: call
    /// KillAsync yourself to await that, or don't dispose one you mean to keep.
    /// The class is split by area: this file has its life cycle,
    /// Snapshots.cs its snapshots and forks, Urls.cs the links it hands out.
    /// </summary>
    public sealed partial class Sandbox : IDisposable
    {
        SandboxInfo _info;
        int _disposed;

        internal readonly Connection Conn;

        Sandbox(SandboxInfo info, Connection connection)
        {
            _info = info;
            Conn = connection;
            Commands = new Commands(this);
            Files = new Files(this);
        }

        public string SandboxId => _info.SandboxId;

        /// <summary>What the server said of it last (see GetInfoAsync for a fresh look).</summary>
        public SandboxInfo Info => _info;

        public Commands Commands { get; }

        public Files Files { get; }

        /// <summary>
        /// Creates a sandbox (from Image, "host" by default) and, unless
        /// options.Wait is false, returns once it runs. options carry the
        /// connection settings too; null: all defaults, from the environment.
        /// </summary>
        public static async Task<Sandbox> CreateAsync(SandboxOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new SandboxOptions();
            var conn = Connection.For(o);
            var body = Wire.CreateBody(o);
            var wait = o.Wait ? o.WaitTimeout : TimeSpan.Zero;
            var r = await conn.Call(ct => conn.Sandboxes.SandboxServiceCreateSandboxAsync(body,
                    o.Wait ? true : (bool?)null, o.Wait ? Wire.Seconds(o.WaitTimeout) : null,
                    string.IsNullOrEmpty(o.IdempotencyKey) ? null : o.IdempotencyKey, ct),
                cancellationToken, wait).ConfigureAwait(false);
            return new Sandbox(SandboxInfo.Of(r == null ? null : r.Sandbox), conn);
        }

        /// <summary>
        /// Attaches to a sandbox by id: a paused one is resumed and a stopped
        /// one started; a deleted one is NotFoundException, a failed one
        /// FailedPreconditionException. options.Timeout sets how long it may
        /// live from now.
        /// </summary>
        public static async Task<Sandbox> ConnectAsync(string sandboxId, ConnectOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new ConnectOptions();
            var conn = Connection.For(o);
            var info = await Get(conn, sandboxId, cancellationToken).ConfigureAwait(false);
            if (info.State == SandboxState.Deleted)
                throw new NotFoundException("sandbox " + info.SandboxId + " was deleted");
            if (info.State == SandboxState.Failed)
                throw new FailedPreconditionException("sandbox " + info.SandboxId + " failed: " + info.StateMessage);
            var sbx = new Sandbox(info, conn);
            if (info.State == SandboxState.Paused)
                await sbx.ResumeAsync(cancellationToken).ConfigureAwait(false);
            else if (info.State == SandboxState.Stopped)
                await sbx.StartAsync(cancellationToken).ConfigureAwait(false);
            var timeout = o.Timeout.HasValue && o.Timeout.Value > TimeSpan.Zero;
            if (timeout)
                await sbx.SetTimeoutAsync(o.Timeout.Value, cancellationToken).ConfigureAwait(false);
            if (info.State != SandboxState.Running || timeout)
                await sbx.GetInfoAsync(cancellationToken).ConfigureAwait(false);
            return sbx;
        }

        /// <summary>
        /// One page of your sandboxes (newest first) that hold every metadata
        /// pair and are in one of the states (all but deleted ones when unset).
        /// </summary>
        public static async Task<SandboxPage> ListAsync(ListOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new ListOptions();
            var conn = Connection.For(o);
            // By hand: the generated call sends metadata as bare k=v pairs, not metadata[k]=v.
            var path = "/v1/sandboxes" + Wire.ListQuery(o);
            string text;
            using (var resp = await conn.SendAsync(HttpMethod.Get, path, null, cancellationToken).ConfigureAwait(false))
                text = await resp.Content.ReadAsStringAsync().ConfigureAwait(false);
            M.ListSandboxesResponse r;
            try
            {
                r = Wire.Parse<M.ListSandboxesResponse>(text);
            }
            catch (Newtonsoft.Json.JsonException e)
            {
                throw new TalonException("the server answered a list with something that is not JSON: " + e.Message, inner: e);
            }
            var items = new List<SandboxInfo>();
            if (r != null && r.Sandboxes != null)
                foreach (var s in r.Sandboxes)
                    items.Add(SandboxInfo.Of(s));
            return new SandboxPage(items, r == null ? "" : r.NextPageToken);
        }

        /// <summary>A sandbox by id; unlike ConnectAsync, it never resumes anything.</summary>
        public static Task<SandboxInfo> GetInfoAsync(string sandboxId, TalonOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken)) =>
            Get(Connection.For(options), sandboxId, cancellationToken);

        /// <summary>Deletes a sandbox by id and everything in it; false if it was already gone.</summary>
        public static Task<bool> KillAsync(string sandboxId, TalonOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken)) =>
            Kill(Connection.For(options), sandboxId, cancellationToken);

        /// <summary>Looks again: the sandbox as the server has it now (Info is updated too).</summary>
        public async Task<SandboxInfo> GetInfoAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            _info = await Get(Conn, SandboxId, cancellationToken).ConfigureAwait(false);
            return _info;
        }

        public async Task<bool> IsRunningAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            (await GetInfoAsync(cancellationToken).ConfigureAwait(false)).State == SandboxState.Running;

        /// <summary>Deletes the sandbox and everything in it; false if it was already gone.</summary>
        public Task<bool> KillAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            Kill(Conn, SandboxId, cancellationToken);

        /// <summary>The sandbox may live this long from now.</summary>
        public Task SetTimeoutAsync(TimeSpan timeout, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.SetSandboxTimeoutRequest(timeout: Wire.Seconds(timeout));
            return Conn.Run(ct => Conn.Sandboxes.SandboxServiceSetSandboxTimeoutAsync(SandboxId, body, ct), cancellationToken);
        }

        /// <summary>Freezes it: its processes stop running and its CPU share is released; ResumeAsync thaws it.</summary>
        public Task PauseAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            Conn.Run(ct => Conn.Sandboxes.SandboxServicePauseSandboxAsync(SandboxId, new M.PauseSandboxRequest(), ct), cancellationToken);

        public Task ResumeAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            Conn.Run(ct => Conn.Sandboxes.SandboxServiceResumeSandboxAsync(SandboxId, new M.ResumeSandboxRequest(), ct), cancellationToken);

        /// <summary>Stops it: its processes end, its files are kept; StartAsync boots it again.</summary>
        public Task StopAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            Conn.Run(ct => Conn.Sandboxes.SandboxServiceStopSandboxAsync(SandboxId, new M.StopSandboxRequest(), ct), cancellationToken);

        public Task StartAsync(CancellationToken cancellationToken = default(CancellationToken)) =>
            Conn.Run(ct => Conn.Sandboxes.SandboxServiceStartSandboxAsync(SandboxId, new M.StartSandboxRequest(), ct), cancellationToken);

        /// <summary>What it uses now: one reading, in a list like E2B's series.</summary>
        public async Task<IReadOnlyList<SandboxMetrics>> GetMetricsAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await Conn.Call(ct => Conn.Sandboxes.SandboxServiceGetSandboxMetricsAsync(SandboxId, ct), cancellationToken)
                .ConfigureAwait(false);
            return new[] { SandboxMetrics.Of(r == null ? null : r.Metrics) };
        }

        /// <summary>
        /// Who the SDK's credential is (tenant, user or API key, role), as the
        /// server sees it: to check which tenant's sandboxes and snapshots a
        /// key reaches before acting on them.
        /// </summary>
        public async Task<CredentialInfo> WhoAmIAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await Conn.Call(ct => Conn.Auth.AuthServiceWhoAmIAsync(ct), cancellationToken).ConfigureAwait(false);
            return CredentialInfo.Of(r);
        }

        /// <summary>
        /// Kills the sandbox (once), waiting for the answer: a sandbox already
        /// gone is fine, any other failure is raised. Prefer awaiting KillAsync
        /// where you can.
        /// </summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
                return;
            KillAsync().ConfigureAwait(false).GetAwaiter().GetResult();
        }

        static async Task<SandboxInfo> Get(Connection conn, string sandboxId, CancellationToken cancellationToken)
        {
            if (string.IsNullOrEmpty(sandboxId))
                throw new InvalidArgumentException("a sandbox id is required");
            var r = await conn.Call(ct => conn.Sandboxes.SandboxServiceGetSandboxAsync(sandboxId, ct), cancellationToken).ConfigureAwait(false);
            return SandboxInfo.Of(r == null ? null : r.Sandbox);
        }

        static async Task<bool> Kill(Connection conn, string sandboxId, CancellationToken cancellationToken)
        {
            if (string.IsNullOrEmpty(sandboxId))
                throw new InvalidArgumentException("a sandbox id is required");
            try
            {
                await conn.Run(ct => conn.Sandboxes.SandboxServiceDeleteSandboxAsync(sandboxId, ct), cancellationToken).ConfigureAwait(false);
                return true;
            }
            catch (NotFoundException)
            {
                return false;
            }
        }

        public override string ToString() => "Sandbox(" + SandboxId + ")";
    }
}
