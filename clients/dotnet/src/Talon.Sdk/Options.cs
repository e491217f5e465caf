using System;
using System.Collections.Generic;

namespace Talon
{
    /// <summary>
    /// How to create a sandbox (Sandbox.CreateAsync): the Python SDK's
    /// Sandbox.create keywords, with its defaults. Unset means the server's
    /// default.
    /// </summary>
    public sealed class SandboxOptions : TalonOptions
    {
        public SandboxOptions() { }

        /// <summary>Create options with the connection settings of another options object.</summary>
        public SandboxOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>The image ("host" when neither it, Template nor SnapshotId is set).</summary>
        public string Image { get; set; }

        /// <summary>E2B's name for Image; Image wins when both are set.</summary>
        public string Template { get; set; }

        /// <summary>Environment variables of every process.</summary>
        public IDictionary<string, string> Envs { get; set; }

        /// <summary>How long it may live; then OnTimeout happens.</summary>
        public TimeSpan? Timeout { get; set; }

        /// <summary>Pause (the server's default) or Kill when Timeout passes.</summary>
        public TimeoutAction? OnTimeout { get; set; }

        /// <summary>Your own key/value pairs, to find it by (ListOptions.Metadata).</summary>
        public IDictionary<string, string> Metadata { get; set; }

        public IDictionary<string, string> Labels { get; set; }

        /// <summary>false: sealed, no network at all. See also Network.</summary>
        public bool? AllowInternetAccess { get; set; }

        /// <summary>An egress allowlist (CIDRs, IPs and domain names).</summary>
        public NetworkOptions Network { get; set; }

        public Isolation? Isolation { get; set; }

        /// <summary>Paused after this long without activity.</summary>
        public TimeSpan? IdleTimeout { get; set; }

        /// <summary>The next call to a paused sandbox resumes it first, instead of failing.</summary>
        public bool AutoResume { get; set; }

        public IList<VolumeMountOptions> VolumeMounts { get; set; }

        /// <summary>A retried create with the same key (within 24 h) returns the first one's sandbox.</summary>
        public string IdempotencyKey { get; set; }

        /// <summary>Thousandths of a core (1000 = one core).</summary>
        public int? CpuMillis { get; set; }

        public int? MemoryMib { get; set; }

        /// <summary>Names of your tenant's secrets to give it.</summary>
        public IList<string> Secrets { get; set; }

        /// <summary>Start from a snapshot's files (Sandbox.CreateSnapshotAsync), on its image.</summary>
        public string SnapshotId { get; set; }

        /// <summary>Return only once it runs (the default), for at most WaitTimeout.</summary>
        public bool Wait { get; set; } = true;

        public TimeSpan WaitTimeout { get; set; } = TimeSpan.FromSeconds(60);
    }

    /// <summary>E2B's network options: Talon turns them into an egress policy (see Wire.NetworkPolicy).</summary>
    public sealed class NetworkOptions
    {
        /// <summary>CIDRs, IPs or domain names it may reach; nothing else.</summary>
        public IList<string> AllowOut { get; set; }

        /// <summary>Only ["0.0.0.0/0"] (deny everything not allowed), which Talon does anyway.</summary>
        public IList<string> DenyOut { get; set; }
    }

    /// <summary>
    /// A volume of your tenant (Volume.CreateAsync) mounted into the sandbox
    /// at create: at most 8, each mounted by one sandbox at a time.
    /// </summary>
    public sealed class VolumeMountOptions
    {
        public VolumeMountOptions() { }

        /// <summary>The volume name mounted at path (absolute, e.g. "/workspace/data").</summary>
        public VolumeMountOptions(string name, string path, bool readOnly = false)
        {
            Name = name;
            Path = path;
            ReadOnly = readOnly;
        }

        /// <summary>The volume's name (Volume.CreateAsync).</summary>
        public string Name { get; set; }
        /// <summary>Absolute path inside the sandbox.</summary>
        public string Path { get; set; }
        public bool ReadOnly { get; set; }
    }

    /// <summary>Sandbox.ConnectAsync: a paused sandbox is resumed and a stopped one started.</summary>
    public sealed class ConnectOptions : TalonOptions
    {
        public ConnectOptions() { }

        public ConnectOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>How long it may live from now.</summary>
        public TimeSpan? Timeout { get; set; }
    }

    /// <summary>Sandbox.ListAsync's filters and page.</summary>
    public sealed class ListOptions : TalonOptions
    {
        public ListOptions() { }

        public ListOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>Only sandboxes holding every pair.</summary>
        public IDictionary<string, string> Metadata { get; set; }

        /// <summary>Only sandboxes in one of these states; all but deleted ones when unset.</summary>
        public IList<SandboxState> States { get; set; }

        /// <summary>At most this many (the server's default is 50, its maximum 500).</summary>
        public int? PageSize { get; set; }

        /// <summary>The previous page's NextToken.</summary>
        public string PageToken { get; set; }
    }

    /// <summary>Sandbox.ListSnapshotsAsync's filter and page.</summary>
    public sealed class SnapshotListOptions : TalonOptions
    {
        public SnapshotListOptions() { }

        public SnapshotListOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>Only the snapshots taken of this sandbox (they outlive it).</summary>
        public string SandboxId { get; set; }

        /// <summary>At most this many (the server's default is 50, its maximum 500).</summary>
        public int? PageSize { get; set; }

        /// <summary>The previous page's NextToken.</summary>
        public string PageToken { get; set; }
    }

    /// <summary>How to create a volume (Volume.CreateAsync).</summary>
    public sealed class VolumeOptions : TalonOptions
    {
        public VolumeOptions() { }

        public VolumeOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>Its size in MiB, 16 up to the server's --volume-max-mib; unset: the server's default (its --volume-default-mib).</summary>
        public long? SizeMib { get; set; }
    }

    /// <summary>Volume.ListAsync's page.</summary>
    public sealed class VolumeListOptions : TalonOptions
    {
        public VolumeListOptions() { }

        public VolumeListOptions(TalonOptions connection) { CopyConnection(connection); }

        /// <summary>At most this many (the server's default is 50, its maximum 500).</summary>
        public int? PageSize { get; set; }

        /// <summary>The previous page's NextToken.</summary>
        public string PageToken { get; set; }
    }

    /// <summary>How to run a command (Commands.RunAsync).</summary>
    public sealed class CommandOptions
    {
        /// <summary>Foreground commands are killed after this long unless told otherwise, like E2B's.</summary>
        public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(60);

        public IDictionary<string, string> Envs { get; set; }

        /// <summary>Relative paths are under /workspace.</summary>
        public string Cwd { get; set; }

        /// <summary>Run as this user ("user" is E2B's default user); the agent's own (root) when unset.</summary>
        public string User { get; set; }

        /// <summary>
        /// Killed after this long, with CommandTimeoutException. Unset: 60 s
        /// for RunAsync, none for StartAsync; TimeSpan.Zero: no limit.
        /// </summary>
        public TimeSpan? Timeout { get; set; }

        /// <summary>A name to find it by later (Commands.ConnectAsync, KillAsync).</summary>
        public string Tag { get; set; }

        /// <summary>Written to its stdin, which is then closed. Unset: no stdin.</summary>
        public byte[] Stdin { get; set; }

        /// <summary>Called with each chunk of stdout as it arrives (decoded as UTF-8).</summary>
        public Action<string> OnStdout { get; set; }

        public Action<string> OnStderr { get; set; }
    }

    /// <summary>Options of a file write.</summary>
    public sealed class WriteOptions
    {
        /// <summary>Permission bits of a new file; 0: the server's default.</summary>
        public int Mode { get; set; }

        /// <summary>Create missing parent directories (the default).</summary>
        public bool CreateParents { get; set; } = true;

        /// <summary>The file becomes this user's (and is written as them).</summary>
        public string User { get; set; }
    }
}
