using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    // Snapshots of a sandbox's filesystem and forks (new sandboxes from its
    // files now): the Python SDK's create_snapshot, fork, list_snapshots,
    // get_snapshot and delete_snapshot. A snapshot's files start a new
    // sandbox through SandboxOptions.SnapshotId.
    public sealed partial class Sandbox
    {
        /// <summary>
        /// Copies the sandbox's filesystem (its writable root, /workspace
        /// and, on the host image, /home, /root, /tmp and /var) into a
        /// snapshot of your tenant, so that new sandboxes can start from
        /// those files (SandboxOptions.SnapshotId). A running sandbox is
        /// frozen for the copy only; processes and memory are not kept.
        /// name is unique in the tenant (AlreadyExistsException otherwise);
        /// null or "": the server makes one from the sandbox's id and the
        /// time. Past the tenant's snapshot quota: RateLimitException.
        /// </summary>
        public async Task<SnapshotInfo> CreateSnapshotAsync(string name = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            // The generated request always carries "memory": false (the
            // server's default: memory snapshots are refused), and the name
            // only when given.
            var body = new M.CreateSnapshotRequest(name: Wire.NullIfEmpty(name));
            var r = await Conn.Call(ct => Conn.Sandboxes.SandboxServiceCreateSnapshotAsync(SandboxId, body, ct), cancellationToken)
                .ConfigureAwait(false);
            return SnapshotInfo.Of(r == null ? null : r.Snapshot);
        }

        /// <summary>
        /// count (1 to 20) new sandboxes from this one's files now, each with
        /// its settings (resources, environment, secret names, egress policy,
        /// timeout, metadata, labels) and its own id, tokens and secrets; all
        /// running when this returns. The server takes a snapshot for it and
        /// deletes that snapshot after; on a failure it deletes the forks it
        /// made. Volumes are not mounted in the forks. The forks share this
        /// sandbox's connection settings, and disposing one kills it.
        /// </summary>
        public async Task<IReadOnlyList<Sandbox>> ForkAsync(int count = 1, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (count < 1)
                throw new InvalidArgumentException("a fork makes 1 to 20 sandboxes, not " + count);
            var body = new M.ForkSandboxRequest(count: count);
            var r = await Conn.Call(ct => Conn.Sandboxes.SandboxServiceForkSandboxAsync(SandboxId, body, ct), cancellationToken)
                .ConfigureAwait(false);
            var forks = new List<Sandbox>();
            if (r != null && r.Sandboxes != null)
                foreach (var s in r.Sandboxes)
                    forks.Add(new Sandbox(SandboxInfo.Of(s), Conn));
            return forks;
        }

        /// <summary>
        /// One page of your tenant's snapshots, newest first (only one
        /// sandbox's when options.SandboxId is set), to find one to start
        /// from or to clean up; NextToken is "" on the last page.
        /// </summary>
        public static async Task<SnapshotPage> ListSnapshotsAsync(SnapshotListOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new SnapshotListOptions();
            var conn = Connection.For(o);
            var r = await conn.Call(ct => conn.Sandboxes.SandboxServiceListSnapshotsAsync(o.PageSize, Wire.NullIfEmpty(o.PageToken),
                Wire.NullIfEmpty(o.SandboxId), ct), cancellationToken).ConfigureAwait(false);
            var items = new List<SnapshotInfo>();
            if (r != null && r.Snapshots != null)
                foreach (var s in r.Snapshots)
                    items.Add(SnapshotInfo.Of(s));
            return new SnapshotPage(items, r == null ? "" : r.NextPageToken);
        }

        /// <summary>A snapshot by id; NotFoundException when there is none in your tenant.</summary>
        public static async Task<SnapshotInfo> GetSnapshotAsync(string snapshotId, TalonOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(snapshotId, "a snapshot id");
            var conn = Connection.For(options);
            var r = await conn.Call(ct => conn.Sandboxes.SandboxServiceGetSnapshotAsync(id, ct), cancellationToken).ConfigureAwait(false);
            return SnapshotInfo.Of(r == null ? null : r.Snapshot);
        }

        /// <summary>
        /// Deletes a snapshot, giving back its share of the tenant's quota;
        /// sandboxes made from it keep their files. NotFoundException when
        /// there is none.
        /// </summary>
        public static async Task DeleteSnapshotAsync(string snapshotId, TalonOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var id = Wire.Required(snapshotId, "a snapshot id");
            var conn = Connection.For(options);
            await conn.Run(ct => conn.Sandboxes.SandboxServiceDeleteSnapshotAsync(id, ct), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// A snapshot of a sandbox's filesystem (Sandbox.CreateSnapshotAsync):
    /// new sandboxes start from it with SandboxOptions.SnapshotId.
    /// </summary>
    public sealed class SnapshotInfo
    {
        public string SnapshotId { get; private set; }
        /// <summary>Unique in the tenant.</summary>
        public string Name { get; private set; }
        /// <summary>The sandbox it was taken from (which may be gone: snapshots outlive it).</summary>
        public string SandboxId { get; private set; }
        /// <summary>The image that sandbox was created from; a sandbox started from the snapshot runs on it.</summary>
        public string Image { get; private set; }
        /// <summary>Bytes of file content it holds: what the tenant's snapshot quota counts.</summary>
        public long SizeBytes { get; private set; }
        public DateTimeOffset? CreatedAt { get; private set; }
        /// <summary>How long the sandbox was frozen for the copy (zero when it was paused); null when not said.</summary>
        public TimeSpan? Frozen { get; private set; }

        internal static SnapshotInfo Of(M.Snapshot s)
        {
            if (s == null)
                throw new TalonException("the server's answer has no snapshot");
            return new SnapshotInfo
            {
                SnapshotId = s.SnapshotId ?? "",
                Name = s.Name ?? "",
                SandboxId = s.SandboxId ?? "",
                Image = s.Image ?? "",
                SizeBytes = Wire.Long(s.SizeBytes),
                CreatedAt = Wire.Time(s.CreateTime),
                Frozen = Wire.Duration(s.Frozen),
            };
        }

        public override string ToString() => "SnapshotInfo(" + SnapshotId + ", " + Name + ", " + SizeBytes + " bytes)";
    }

    /// <summary>One page of Sandbox.ListSnapshotsAsync: the snapshots, and the next page's token ("" on the last).</summary>
    public sealed class SnapshotPage
    {
        public IReadOnlyList<SnapshotInfo> Snapshots { get; }
        public string NextToken { get; }

        public SnapshotPage(IReadOnlyList<SnapshotInfo> snapshots, string nextToken)
        {
            Snapshots = snapshots;
            NextToken = nextToken ?? "";
        }
    }
}
