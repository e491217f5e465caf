using System;
using System.Collections.Generic;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// Your tenant's volumes: storage that outlives the sandboxes that mount
    /// it (an ext4 filesystem of its own on the workers' shared storage, so
    /// it needs workers on the shared workspace backend). A volume is mounted
    /// at create (SandboxOptions.VolumeMounts), by one sandbox at a time, and
    /// is free again once that sandbox is deleted. Volumes are named, unique
    /// in the tenant. The REST API's VolumeService (docs/api.md, "Volumes");
    /// the Python SDK has no volume calls, so the names follow E2B's Volume
    /// class and this SDK's snapshots.
    /// </summary>
    public static class Volume
    {
        /// <summary>
        /// Creates a volume named name (1 to 63 of a-z, 0-9 and '-'), of
        /// options.SizeMib or the server's default size. A name the tenant
        /// has already is AlreadyExistsException; a size under 16 MiB or past
        /// the server's maximum InvalidArgumentException; a volume past the
        /// tenant's count RateLimitException.
        /// </summary>
        public static async Task<VolumeInfo> CreateAsync(string name, VolumeOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new VolumeOptions();
            if (o.SizeMib.HasValue && o.SizeMib.Value <= 0)
                throw new InvalidArgumentException("a volume's SizeMib is positive, or unset for the server's default");
            var volume = new M.Volume(name: Wire.Required(name, "a volume name"),
                sizeMib: o.SizeMib.HasValue ? o.SizeMib.Value.ToString(CultureInfo.InvariantCulture) : null);
            var conn = Connection.For(o);
            var r = await conn.Call(ct => conn.Volumes.VolumeServiceCreateVolumeAsync(new M.CreateVolumeRequest(volume: volume), ct),
                cancellationToken).ConfigureAwait(false);
            return VolumeInfo.Of(r == null ? null : r.Volume);
        }

        /// <summary>One page of your tenant's volumes, oldest first; NextToken is "" on the last page.</summary>
        public static async Task<VolumePage> ListAsync(VolumeListOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var o = options ?? new VolumeListOptions();
            var conn = Connection.For(o);
            var r = await conn.Call(ct => conn.Volumes.VolumeServiceListVolumesAsync(o.PageSize, Wire.NullIfEmpty(o.PageToken), ct),
                cancellationToken).ConfigureAwait(false);
            var items = new List<VolumeInfo>();
            if (r != null && r.Volumes != null)
                foreach (var v in r.Volumes)
                    items.Add(VolumeInfo.Of(v));
            return new VolumePage(items, r == null ? "" : r.NextPageToken);
        }

        /// <summary>
        /// A volume by name, with the sandbox that mounts it now (SandboxId,
        /// "" when free); NotFoundException when the tenant has none of that name.
        /// </summary>
        public static async Task<VolumeInfo> GetInfoAsync(string name, TalonOptions options = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var n = Wire.Required(name, "a volume name");
            var conn = Connection.For(options);
            var r = await conn.Call(ct => conn.Volumes.VolumeServiceGetVolumeAsync(n, ct), cancellationToken).ConfigureAwait(false);
            return VolumeInfo.Of(r == null ? null : r.Volume);
        }

        /// <summary>
        /// Deletes a volume and its files, for good. While a sandbox mounts it:
        /// FailedPreconditionException (delete that sandbox first); while no
        /// shared worker is there to remove the files of one that was ever
        /// mounted: UnavailableException; none of that name: NotFoundException.
        /// </summary>
        public static async Task DeleteAsync(string name, TalonOptions options = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var n = Wire.Required(name, "a volume name");
            var conn = Connection.For(options);
            await conn.Run(ct => conn.Volumes.VolumeServiceDeleteVolumeAsync(n, ct), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>A volume of your tenant, as the server last described it.</summary>
    public sealed class VolumeInfo
    {
        /// <summary>"vol_" and 26 characters; calls name the volume by Name.</summary>
        public string VolumeId { get; private set; }
        /// <summary>Unique in the tenant: what VolumeMountOptions.Name and the calls of Volume take.</summary>
        public string Name { get; private set; }
        /// <summary>The sandbox that mounts it (until that sandbox is deleted), or "" when it is free.</summary>
        public string SandboxId { get; private set; }
        public long SizeMib { get; private set; }
        public DateTimeOffset? CreatedAt { get; private set; }

        /// <summary>No sandbox mounts it: a create may mount it, and it may be deleted.</summary>
        public bool IsFree => SandboxId.Length == 0;

        internal static VolumeInfo Of(M.Volume v)
        {
            if (v == null)
                throw new TalonException("the server's answer has no volume");
            return new VolumeInfo
            {
                VolumeId = v.VolumeId ?? "",
                Name = v.Name ?? "",
                SandboxId = v.SandboxId ?? "",
                SizeMib = Wire.Long(v.SizeMib),
                CreatedAt = Wire.Time(v.CreateTime),
            };
        }

        public override string ToString() => "VolumeInfo(" + Name + ", " + SizeMib + " MiB" + (IsFree ? "" : ", mounted by " + SandboxId) + ")";
    }

    /// <summary>One page of Volume.ListAsync: the volumes, and the next page's token ("" on the last).</summary>
    public sealed class VolumePage
    {
        public IReadOnlyList<VolumeInfo> Volumes { get; }
        public string NextToken { get; }

        public VolumePage(IReadOnlyList<VolumeInfo> volumes, string nextToken)
        {
            Volumes = volumes;
            NextToken = nextToken ?? "";
        }
    }
}
