using System;
using System.Collections.Generic;
using System.Text;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>Where a sandbox is in its life. Unknown: a state this SDK does not know yet (a newer server's).</summary>
    public enum SandboxState
    {
        Unknown,
        Pending,
        Starting,
        Running,
        Paused,
        Stopping,
        Stopped,
        Failed,
        Deleted,
    }

    /// <summary>How a sandbox's code is kept from the host.</summary>
    public enum Isolation
    {
        /// <summary>Namespaces and cgroups (the default).</summary>
        Container,
        /// <summary>gVisor: a user-space kernel between the code and the host's, where a worker offers it.</summary>
        Gvisor,
        /// <summary>A microVM, where a worker offers it.</summary>
        Microvm,
    }

    /// <summary>What happens when a sandbox's timeout passes.</summary>
    public enum TimeoutAction
    {
        /// <summary>It is paused (the server's default); ConnectAsync resumes it.</summary>
        Pause,
        /// <summary>It is deleted with everything in it.</summary>
        Kill,
    }

    /// <summary>A sandbox as the server last described it.</summary>
    public sealed class SandboxInfo
    {
        public string SandboxId { get; private set; }
        public SandboxState State { get; private set; }
        /// <summary>Why it is in its state, when the server says (a failure's reason).</summary>
        public string StateMessage { get; private set; }
        public string Image { get; private set; }
        /// <summary>E2B's name for the image.</summary>
        public string TemplateId => Image;
        public IReadOnlyDictionary<string, string> Metadata { get; private set; }
        public DateTimeOffset? StartedAt { get; private set; }
        /// <summary>When its timeout passes.</summary>
        public DateTimeOffset? EndAt { get; private set; }
        public long CpuMillis { get; private set; }
        public long MemoryMib { get; private set; }
        public string SnapshotId { get; private set; }
        /// <summary>"container", "gvisor" or "microvm" (a string: a newer server may name another).</summary>
        public string Isolation { get; private set; }
        public bool AutoResume { get; private set; }

        internal static SandboxInfo Of(M.Sandbox s)
        {
            if (s == null)
                throw new TalonException("the server's answer has no sandbox");
            var res = s.Resources ?? new M.Resources();
            SandboxState state;
            var name = Wire.Tail(s.State, "SANDBOX_STATE_");
            if (!Enum.TryParse(name, true, out state) || name.Length == 0)
                state = SandboxState.Unknown;
            var iso = Wire.Tail(s.Isolation, "ISOLATION_");
            return new SandboxInfo
            {
                SandboxId = s.SandboxId ?? "",
                State = state,
                StateMessage = s.StateMessage ?? "",
                Image = s.Image ?? "",
                Metadata = new Dictionary<string, string>(s.Metadata ?? new Dictionary<string, string>()),
                StartedAt = Wire.Time(s.CreateTime),
                EndAt = Wire.Time(s.ExpireTime),
                CpuMillis = Wire.Long(res.CpuMillis),
                MemoryMib = Wire.Long(res.MemoryMib),
                SnapshotId = s.SnapshotId ?? "",
                Isolation = iso.Length == 0 || iso == "unspecified" ? "container" : iso,
                AutoResume = s.AutoResume,
            };
        }

        public override string ToString() => "SandboxInfo(" + SandboxId + ", " + State + ", " + Image + ")";
    }

    /// <summary>One page of ListAsync: the sandboxes, and the next page's token ("" on the last).</summary>
    public sealed class SandboxPage
    {
        public IReadOnlyList<SandboxInfo> Sandboxes { get; }
        public string NextToken { get; }

        public SandboxPage(IReadOnlyList<SandboxInfo> sandboxes, string nextToken)
        {
            Sandboxes = sandboxes;
            NextToken = nextToken ?? "";
        }
    }

    /// <summary>What a sandbox uses at one moment: one reading, taken when asked (Talon keeps no series).</summary>
    public sealed class SandboxMetrics
    {
        public DateTimeOffset? Timestamp { get; private set; }
        public int CpuCount { get; private set; }
        /// <summary>CPU use as a percentage of its cores.</summary>
        public double CpuUsedPct { get; private set; }
        public long MemUsed { get; private set; }
        public long MemTotal { get; private set; }
        public long DiskUsed { get; private set; }
        public long DiskTotal { get; private set; }

        internal static SandboxMetrics Of(M.SandboxMetrics m)
        {
            m = m ?? new M.SandboxMetrics();
            return new SandboxMetrics
            {
                Timestamp = Wire.Time(m.SampleTime),
                CpuCount = m.CpuCount,
                CpuUsedPct = m.CpuUsedPct,
                MemUsed = Wire.Long(m.MemUsedBytes),
                MemTotal = Wire.Long(m.MemTotalBytes),
                DiskUsed = Wire.Long(m.DiskUsedBytes),
                DiskTotal = Wire.Long(m.DiskTotalBytes),
            };
        }
    }

    /// <summary>The kind of a path in a sandbox.</summary>
    public enum FileType
    {
        Unknown,
        File,
        Dir,
        Symlink,
        Other,
    }

    /// <summary>
    /// What Stat and List say of a path. Named as in E2B's JavaScript SDK,
    /// not FileInfo, which System.IO has.
    /// </summary>
    public sealed class EntryInfo
    {
        /// <summary>Absolute inside the sandbox.</summary>
        public string Path { get; private set; }
        public string Name { get; private set; }
        public FileType Type { get; private set; }
        public long Size { get; private set; }
        /// <summary>Permission bits.</summary>
        public int Mode { get; private set; }
        public DateTimeOffset? ModifiedTime { get; private set; }
        public string SymlinkTarget { get; private set; }
        public bool IsDir => Type == FileType.Dir;

        internal static EntryInfo Of(M.FileInfo f)
        {
            f = f ?? new M.FileInfo();
            FileType type;
            var t = Wire.Tail(f.Type, "FILE_TYPE_");
            if (t == "directory")
                t = "dir";
            if (!Enum.TryParse(t, true, out type) || t.Length == 0)
                type = FileType.Unknown;
            return new EntryInfo
            {
                Path = f.Path ?? "",
                Name = f.Name ?? "",
                Type = type,
                Size = Wire.Long(f.Size),
                Mode = f.Mode,
                ModifiedTime = Wire.Time(f.ModifyTime),
                SymlinkTarget = f.SymlinkTarget ?? "",
            };
        }

        public override string ToString() => "EntryInfo(" + Path + ", " + Type + ", " + Size + ")";
    }

    /// <summary>One file of Files.WriteFilesAsync.</summary>
    public sealed class WriteEntry
    {
        public string Path { get; }
        public byte[] Data { get; }

        public WriteEntry(string path, byte[] data)
        {
            Path = path;
            Data = data;
        }

        /// <summary>Text is written as UTF-8.</summary>
        public WriteEntry(string path, string text) : this(path, Encoding.UTF8.GetBytes(text)) { }
    }

    /// <summary>A finished process: its output and how it ended.</summary>
    public sealed class CommandResult
    {
        public string Stdout { get; }
        public string Stderr { get; }
        public int ExitCode { get; }
        /// <summary>The signal that ended it, or 0.</summary>
        public int Signal { get; }
        /// <summary>It ran past its timeout and was killed.</summary>
        public bool TimedOut { get; }
        public int Pid { get; }
        /// <summary>The output as sent: it need not be UTF-8.</summary>
        public byte[] StdoutBytes { get; }
        public byte[] StderrBytes { get; }

        public CommandResult(byte[] stdout, byte[] stderr, int exitCode, int signal = 0, bool timedOut = false, int pid = 0)
        {
            StdoutBytes = stdout ?? new byte[0];
            StderrBytes = stderr ?? new byte[0];
            Stdout = Encoding.UTF8.GetString(StdoutBytes);
            Stderr = Encoding.UTF8.GetString(StderrBytes);
            ExitCode = exitCode;
            Signal = signal;
            TimedOut = timedOut;
            Pid = pid;
        }

        public override string ToString() => "CommandResult(exit " + ExitCode + ", " + StdoutBytes.Length + " bytes out, " + StderrBytes.Length + " bytes err)";
    }

    /// <summary>
    /// A process of a sandbox as Commands.ListAsync reports it: what runs
    /// there (or ran, with includeExited), to find a pid or tag to
    /// reattach to or signal.
    /// </summary>
    public sealed class ProcessInfo
    {
        public int Pid { get; private set; }
        /// <summary>The name it was started with (CommandOptions.Tag), or "".</summary>
        public string Tag { get; private set; }
        /// <summary>Its argv.</summary>
        public IReadOnlyList<string> Command { get; private set; }
        public string Cwd { get; private set; }
        public bool Running { get; private set; }
        /// <summary>How it ended; meaningful only once Running is false.</summary>
        public int ExitCode { get; private set; }
        /// <summary>It runs on a terminal (a PTY), not on pipes.</summary>
        public bool Pty { get; private set; }
        public DateTimeOffset? StartedAt { get; private set; }

        internal static ProcessInfo Of(M.ProcessInfo p)
        {
            p = p ?? new M.ProcessInfo();
            return new ProcessInfo
            {
                Pid = p.Pid,
                Tag = p.Tag ?? "",
                Command = new List<string>(p.Command ?? new List<string>()),
                Cwd = p.Cwd ?? "",
                Running = p.Running,
                ExitCode = p.ExitCode,
                Pty = p.Pty,
                StartedAt = Wire.Time(p.StartTime),
            };
        }

        public override string ToString() => "ProcessInfo(" + Pid + ", " + string.Join(" ", Command) + (Running ? ", running" : ", exited " + ExitCode) + ")";
    }

    /// <summary>
    /// Who a credential is, as the server sees it (Sandbox.WhoAmIAsync):
    /// the tenant its calls act in and the role that bounds them.
    /// </summary>
    public sealed class CredentialInfo
    {
        public string TenantId { get; private set; }
        /// <summary>The user an access token or API key belongs to, or "".</summary>
        public string UserId { get; private set; }
        /// <summary>The API key's id when the credential is one, else "".</summary>
        public string ApiKeyId { get; private set; }
        public string Email { get; private set; }
        /// <summary>"owner", "developer" or "viewer" (a string: a newer server may name another); "" when unset.</summary>
        public string Role { get; private set; }
        /// <summary>"api_key" or "access_token"; "" when unset.</summary>
        public string CredentialKind { get; private set; }
        /// <summary>The user administers the whole platform, not only the tenant.</summary>
        public bool PlatformAdmin { get; private set; }

        internal static CredentialInfo Of(M.WhoAmIResponse r)
        {
            r = r ?? new M.WhoAmIResponse();
            var role = Wire.Tail(r.Role, "ROLE_");
            var kind = Wire.Tail(r.CredentialKind, "CREDENTIAL_KIND_");
            return new CredentialInfo
            {
                TenantId = r.TenantId ?? "",
                UserId = r.UserId ?? "",
                ApiKeyId = r.ApiKeyId ?? "",
                Email = r.Email ?? "",
                Role = role == "unspecified" ? "" : role,
                CredentialKind = kind == "unspecified" ? "" : kind,
                PlatformAdmin = r.PlatformAdmin,
            };
        }

        public override string ToString() => "CredentialInfo(" + TenantId + ", " + Role + ")";
    }
}
