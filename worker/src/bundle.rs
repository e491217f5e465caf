//! OCI bundles for sandboxes, built with oci-spec. The built-in `host`
//! image binds the host's /usr (and /bin, /lib, /lib64, mirrored as the
//! symlinks they are on merged-/usr hosts) read-only over an empty,
//! read-only root; /workspace, /tmp, /root, /var and a private /etc are
//! per-sandbox directories. The agent enters as PID 1 from a read-only
//! sealed copy, never from the worker's own executable (CVE-2019-5736).

use oci_spec::runtime::{
    Capability, LinuxBuilder, LinuxCapabilitiesBuilder, LinuxCpuBuilder, LinuxIdMappingBuilder,
    LinuxMemoryBuilder, LinuxNamespaceBuilder, LinuxNamespaceType, LinuxPidsBuilder,
    LinuxResourcesBuilder, Mount, MountBuilder, PosixRlimitBuilder, PosixRlimitType,
    ProcessBuilder, RootBuilder, Spec, SpecBuilder, UserBuilder, get_default_maskedpaths,
    get_default_readonly_paths,
};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// Container uid/gid 0..SIZE map to host uid_base..uid_base+SIZE.
pub const ID_RANGE: u32 = 65536;

pub use crate::layout::{Layout, RootKind};

/// The files of /etc a sandbox gets from the worker, not its image.
pub const WORKER_ETC: &[&str] = &["hosts", "hostname", "resolv.conf"];

#[derive(Clone, Debug)]
pub struct Limits {
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub max_pids: i64,
}

/// The agent's own limits, from the worker's flags (`talon worker
/// --help`): passed on its command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentOptions {
    /// Most bytes of one process's output log kept (older output goes).
    pub max_log_bytes: u64,
    /// Most bytes of a process's older log files kept for a live reader
    /// that has not read them; past it the process waits for the reader.
    pub max_spill_bytes: u64,
    /// Most code contexts (kernels) one sandbox may have at once.
    pub max_code_contexts: u32,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            max_log_bytes: 8 << 20,
            max_spill_bytes: 32 << 20,
            max_code_contexts: 16,
        }
    }
}

pub struct BundleSpec<'a> {
    pub sandbox_id: &'a str,
    pub layout: &'a Layout,
    pub uid_base: u32,
    pub limits: Limits,
    pub env: &'a BTreeMap<String, String>,
    pub root: RootKind,
    /// The image's own environment (`KEY=VALUE`), under `env`.
    pub image_env: &'a [String],
    /// The sealed agent binary on the host.
    pub agent: &'a Path,
    /// Its limits.
    pub agent_options: AgentOptions,
    pub has_secret_files: bool,
    /// How the runtime that runs the bundle reads a masked-equal rule.
    pub masked_eq: crate::seccomp::MaskedEq,
    /// The level of the runtime that runs it: under gVisor the agent binds
    /// its socket in `Layout::agent_dir` (no fd is handed over).
    pub isolation: crate::runtime::Isolation,
    /// The cgroup every sandbox of this worker is under (see
    /// `HostOptions::cgroup_parent`).
    pub cgroup_parent: &'a str,
    /// Volumes: (volume id, path in the sandbox, read-only).
    pub volumes: &'a [(String, String, bool)],
}

/// What a gVisor sandbox's pids limit adds for gVisor's own kernel: its
/// threads, and the host process that stands for each of the sandbox's
/// address spaces (systrap), count in the same cgroup.
pub const GVISOR_PIDS_HEADROOM: i64 = 128;

/// Where a gVisor sandbox's agent binds its socket, inside the sandbox.
pub const AGENT_DIR: &str = "/.talon/run";

/// Docker's default capability set, and nothing wider.
pub fn default_capabilities() -> HashSet<Capability> {
    use Capability::*;
    [
        AuditWrite,
        Chown,
        DacOverride,
        Fowner,
        Fsetid,
        Kill,
        Mknod,
        NetBindService,
        NetRaw,
        Setgid,
        Setfcap,
        Setpcap,
        Setuid,
        SysChroot,
    ]
    .into_iter()
    .collect()
}

fn bind(src: &Path, dst: &str, ro: bool) -> Mount {
    let mut opts = vec![
        "rbind".to_string(),
        "nosuid".to_string(),
        "nodev".to_string(),
    ];
    if ro {
        opts.push("ro".into());
    }
    MountBuilder::default()
        .destination(dst)
        .typ("bind")
        .source(src)
        .options(opts)
        .build()
        .expect("mount")
}

fn fs(dst: &str, typ: &str, opts: &[&str]) -> Mount {
    MountBuilder::default()
        .destination(dst)
        .typ(typ)
        .source(typ)
        .options(opts.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .build()
        .expect("mount")
}

/// Host directories the `host` image shares read-only. Those that are
/// symlinks on the host (merged /usr) are recreated as symlinks instead.
pub const HOST_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// Host /etc entries the private /etc shares read-only.
pub const HOST_ETC: &[&str] = &[
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ld.so.cache",
    "/etc/localtime",
    // Fonts for anything that renders text (a browser's pages, plots).
    "/etc/fonts",
    // Debian's chromium wrapper reads its flags from here.
    "/etc/chromium.d",
    // Debian's matplotlib keeps its defaults here, not beside the package.
    "/etc/matplotlibrc",
];

/// The default search path of every sandbox.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// Where `pip install` puts scripts in the `host` image: its /usr is the
/// host's, read-only, so pip falls back to the user site (see the
/// worker's /etc/pip.conf). The agent swaps this for the home of the user
/// a process runs as (`~/.local/bin`), so must match `talon-agent`'s.
pub const ROOT_USER_BIN: &str = "/root/.local/bin";
/// The host's CA bundle as every usual client reads it.
pub const HOST_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";
const CA_FILE_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
];

/// The CA settings a `host` sandbox inherits, so that Python's requests,
/// curl and Node trust what the host trusts (pip-installed `certifi`
/// would otherwise bring its own list). A variable the worker itself has
/// is passed on when its file is one the sandbox sees (under /usr or a
/// shared /etc entry); otherwise each points at the host's bundle.
pub fn host_ca_env(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
    is_file: impl Fn(&Path) -> bool,
) -> Vec<(String, String)> {
    let visible = |p: &str| {
        Path::new(p).is_absolute()
            && !p.split('/').any(|c| c == "..")
            && (p.starts_with("/usr/")
                || HOST_ETC
                    .iter()
                    .any(|e| p == *e || p.starts_with(&format!("{e}/"))))
    };
    let default = is_file(Path::new(HOST_CA_FILE)).then_some(HOST_CA_FILE);
    let mut out = Vec::new();
    for k in CA_FILE_VARS {
        let own = var(k)
            .and_then(|v| v.into_string().ok())
            .filter(|v| visible(v) && is_file(Path::new(v)));
        if let Some(v) = own.as_deref().or(default) {
            out.push((k.to_string(), v.to_string()));
        }
    }
    if let Some(d) = var("SSL_CERT_DIR")
        .and_then(|v| v.into_string().ok())
        .filter(|v| visible(v))
    {
        out.push(("SSL_CERT_DIR".into(), d));
    }
    out
}

/// Open files per sandbox process: 65536, or less if the worker itself
/// may not have that many (a user namespace cannot raise a hard limit).
pub fn nofile_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit into a local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 1024;
    }
    r.rlim_max.min(65536)
}

pub fn spec(b: &BundleSpec) -> anyhow::Result<Spec> {
    let mut mounts = vec![
        fs("/proc", "proc", &["nosuid", "noexec", "nodev"]),
        fs(
            "/dev",
            "tmpfs",
            &["nosuid", "strictatime", "mode=755", "size=65536k"],
        ),
        fs(
            "/dev/pts",
            "devpts",
            &[
                "nosuid",
                "noexec",
                "newinstance",
                "ptmxmode=0666",
                "mode=0620",
            ],
        ),
        fs(
            "/dev/shm",
            "tmpfs",
            &["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"],
        ),
        fs("/dev/mqueue", "mqueue", &["nosuid", "noexec", "nodev"]),
        fs("/sys", "sysfs", &["nosuid", "noexec", "nodev", "ro"]),
    ];
    if b.root == RootKind::Host {
        for d in HOST_DIRS {
            let p = Path::new(d);
            if p.is_dir() && !p.is_symlink() {
                mounts.push(bind(p, d, true));
            }
        }
    }
    for (src, dst) in b.layout.private_dirs(b.root, b.isolation) {
        mounts.push(bind(&src, dst, false));
    }
    match b.root {
        RootKind::Host => {
            for e in HOST_ETC {
                let p = Path::new(e);
                if p.exists() {
                    mounts.push(bind(p, e, true));
                }
            }
        }
        RootKind::ReadOnlyImage => {
            for f in WORKER_ETC {
                mounts.push(bind(&b.layout.etc().join(f), &format!("/etc/{f}"), false));
            }
        }
        // Written into the upper directory instead.
        RootKind::Overlay => {}
    }
    if b.has_secret_files {
        mounts.push(bind(&b.layout.secrets(), "/run/secrets", true));
    }
    // After the directories they may lie in.
    for (id, path, ro) in b.volumes {
        mounts.push(bind(&b.layout.volume(id), path, *ro));
    }
    mounts.push(bind(b.agent, "/.talon/agent", true));
    let gvisor = b.isolation == crate::runtime::Isolation::Gvisor;
    if gvisor {
        mounts.push(bind(&b.layout.agent_dir(), AGENT_DIR, false));
    }

    // Defaults, then the image's environment, then the sandbox's.
    let mut vars: Vec<(String, String)> = vec![
        ("PATH".into(), DEFAULT_PATH.into()),
        ("HOME".into(), "/root".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    if b.root == RootKind::Host {
        vars[0].1 = format!("{ROOT_USER_BIN}:{DEFAULT_PATH}");
        vars.extend(host_ca_env(|k| std::env::var_os(k), |p| p.is_file()));
    }
    let mut set = |k: &str, v: &str| match vars.iter_mut().find(|(n, _)| n == k) {
        Some(e) => e.1 = v.to_string(),
        None => vars.push((k.to_string(), v.to_string())),
    };
    for kv in b.image_env {
        if let Some((k, v)) = kv.split_once('=') {
            set(k, v);
        }
    }
    set("TALON_SANDBOX_ID", b.sandbox_id);
    for (k, v) in b.env {
        set(k, v);
    }
    let env: Vec<String> = vars.into_iter().map(|(k, v)| format!("{k}={v}")).collect();

    let caps = default_capabilities();
    let process = ProcessBuilder::default()
        .terminal(false)
        .user(UserBuilder::default().uid(0u32).gid(0u32).build()?)
        .args(vec![
            "/.talon/agent".to_string(),
            if gvisor { "--socket" } else { "--listen-fd" }.into(),
            if gvisor {
                format!("{AGENT_DIR}/agent.sock")
            } else {
                crate::agent_socket::AGENT_FD.to_string()
            },
            "--workspace".into(),
            "/workspace".into(),
            "--log-dir".into(),
            "/var/log/talon".into(),
            "--max-log-bytes".into(),
            b.agent_options.max_log_bytes.to_string(),
            "--max-spill-bytes".into(),
            b.agent_options.max_spill_bytes.to_string(),
            "--max-code-contexts".into(),
            b.agent_options.max_code_contexts.to_string(),
        ])
        .env(env)
        .cwd("/")
        .no_new_privileges(true)
        .capabilities(
            LinuxCapabilitiesBuilder::default()
                .bounding(caps.clone())
                .effective(caps.clone())
                .permitted(caps)
                .inheritable(HashSet::new())
                .ambient(HashSet::new())
                .build()?,
        )
        // A container inherits its open-file limit from the runtime's
        // process (`runtime`): runc sets a spec's from outside, which over
        // a namespace another uid owns (see `ns::new_userns`) needs
        // CAP_SYS_RESOURCE, and a host's root may lack it. gVisor's kernel
        // takes it from here.
        .rlimits(if gvisor {
            let n = nofile_limit();
            vec![
                PosixRlimitBuilder::default()
                    .typ(PosixRlimitType::RlimitNofile)
                    .hard(n)
                    .soft(n)
                    .build()?,
            ]
        } else {
            Vec::new()
        })
        .build()?;

    let map = |base: u32| {
        LinuxIdMappingBuilder::default()
            .container_id(0u32)
            .host_id(base)
            .size(ID_RANGE)
            .build()
    };
    let namespaces = [
        LinuxNamespaceType::Pid,
        LinuxNamespaceType::Ipc,
        LinuxNamespaceType::Uts,
        LinuxNamespaceType::Mount,
        LinuxNamespaceType::User,
        LinuxNamespaceType::Network,
        LinuxNamespaceType::Cgroup,
    ]
    .into_iter()
    .map(|t| match t {
        // runsc joins the one made for it, links in place.
        LinuxNamespaceType::Network if gvisor => LinuxNamespaceBuilder::default()
            .typ(t)
            .path(b.layout.netns())
            .build(),
        // A container joins the one its own uid owns (gVisor's kernel
        // keeps its own counters).
        LinuxNamespaceType::User if !gvisor => LinuxNamespaceBuilder::default()
            .typ(t)
            .path(b.layout.userns())
            .build(),
        t => LinuxNamespaceBuilder::default().typ(t).build(),
    })
    .collect::<Result<Vec<_>, _>>()?;
    let period = 100_000u64;
    let memory = b.limits.memory_mib.max(16) << 20;
    let resources = LinuxResourcesBuilder::default()
        .memory(
            LinuxMemoryBuilder::default()
                .limit(memory)
                .swap(memory)
                .build()?,
        )
        .cpu(
            LinuxCpuBuilder::default()
                .quota(b.limits.cpu_millis.max(10) * period as i64 / 1000)
                .period(period)
                .build()?,
        )
        .pids(
            LinuxPidsBuilder::default()
                .limit(b.limits.max_pids.max(16) + if gvisor { GVISOR_PIDS_HEADROOM } else { 0 })
                .build()?,
        )
        .build()?;
    let linux = LinuxBuilder::default()
        .uid_mappings(vec![map(b.uid_base)?])
        .gid_mappings(vec![map(b.uid_base)?])
        .namespaces(namespaces)
        // Per-namespace: ping without raw sockets, and dev servers on low
        // ports as any user (the sandbox's own netns, nobody else's).
        .sysctl(std::collections::HashMap::from([
            (
                "net.ipv4.ping_group_range".to_string(),
                format!("0 {}", ID_RANGE - 1),
            ),
            (
                "net.ipv4.ip_unprivileged_port_start".to_string(),
                "0".to_string(),
            ),
        ]))
        .resources(resources)
        .cgroups_path(PathBuf::from(format!(
            "/{}/{}",
            b.cgroup_parent, b.sandbox_id
        )))
        .seccomp(crate::seccomp::profile(b.masked_eq))
        .masked_paths(get_default_maskedpaths())
        .readonly_paths(get_default_readonly_paths())
        .build()?;
    Ok(SpecBuilder::default()
        .version("1.0.2")
        .root(
            RootBuilder::default()
                .path("rootfs")
                .readonly(b.root != RootKind::Overlay)
                .build()?,
        )
        .hostname(b.sandbox_id.chars().take(63).collect::<String>())
        .mounts(mounts)
        .process(process)
        .linux(linux)
        .build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_defaults_are_in_the_spec() {
        let layout = Layout {
            dir: "/tmp/x".into(),
            shared_image: None,
        };
        let env = BTreeMap::from([("A".to_string(), "1".to_string())]);
        let s = spec(&BundleSpec {
            sandbox_id: "sbx_test",
            layout: &layout,
            uid_base: 1_000_000,
            limits: Limits {
                cpu_millis: 500,
                memory_mib: 256,
                max_pids: 100,
            },
            env: &env,
            root: RootKind::Host,
            image_env: &["PATH=/image/bin".into(), "A=0".into()],
            agent: Path::new("/opt/talon-agent"),
            agent_options: AgentOptions {
                max_log_bytes: 1 << 20,
                max_spill_bytes: 3 << 20,
                max_code_contexts: 4,
            },
            has_secret_files: false,
            masked_eq: crate::seccomp::MaskedEq::MaskInValue,
            isolation: crate::runtime::Isolation::Container,
            cgroup_parent: "talon",
            volumes: &[],
        })
        .unwrap();
        let j = serde_json::to_value(&s).unwrap();
        let ns: Vec<&str> = j["linux"]["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["type"].as_str().unwrap())
            .collect();
        for want in ["pid", "ipc", "uts", "mount", "user", "network", "cgroup"] {
            assert!(ns.contains(&want), "{want} namespace missing: {ns:?}");
        }
        assert_eq!(j["process"]["noNewPrivileges"], true);
        assert_eq!(j["linux"]["uidMappings"][0]["hostID"], 1_000_000);
        assert_eq!(j["linux"]["resources"]["memory"]["limit"], 256 << 20);
        assert_eq!(j["linux"]["resources"]["cpu"]["quota"], 50_000);
        assert_eq!(j["linux"]["resources"]["pids"]["limit"], 100);
        let caps = j["process"]["capabilities"]["bounding"].as_array().unwrap();
        assert_eq!(caps.len(), 14);
        assert!(!caps.iter().any(|c| c == "CAP_SYS_ADMIN"));
        assert!(
            j["linux"]["maskedPaths"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == "/proc/kcore")
        );
        assert_eq!(j["root"]["readonly"], true);
        assert_eq!(j["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ERRNO");
        let args: Vec<&str> = j["process"]["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let after = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1];
        assert_eq!(after("--max-log-bytes"), "1048576");
        assert_eq!(after("--max-spill-bytes"), "3145728");
        assert_eq!(after("--max-code-contexts"), "4");
        let agent = j["mounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["destination"] == "/.talon/agent")
            .unwrap();
        assert!(
            agent["options"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o == "ro")
        );
        // The sandbox's env wins over the image's, the image's over ours.
        let env: Vec<&str> = j["process"]["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        assert!(env.contains(&"A=1") && !env.contains(&"A=0"), "{env:?}");
        assert!(env.contains(&"PATH=/image/bin"), "{env:?}");
        assert_eq!(env.iter().filter(|e| e.starts_with("PATH=")).count(), 1);
    }

    #[test]
    fn host_ca_env_passes_on_only_what_the_sandbox_sees() {
        use std::ffi::OsString;
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let all = |_: &Path| true;
        // Nothing set: every variable names the host's bundle.
        let env = host_ca_env(vars(&[]), all);
        assert_eq!(env.len(), CA_FILE_VARS.len());
        assert!(env.iter().all(|(_, v)| v == HOST_CA_FILE), "{env:?}");
        // The worker's own bundle under a shared path is passed on; one
        // under a path the sandbox does not see, or escaping, is not.
        let env = host_ca_env(
            vars(&[
                ("SSL_CERT_FILE", "/etc/ssl/corp.pem"),
                ("REQUESTS_CA_BUNDLE", "/home/me/ca.pem"),
                ("CURL_CA_BUNDLE", "/etc/ssl/../shadow"),
                ("SSL_CERT_DIR", "/etc/ssl/certs"),
            ]),
            all,
        );
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("SSL_CERT_FILE"), Some("/etc/ssl/corp.pem"));
        assert_eq!(get("REQUESTS_CA_BUNDLE"), Some(HOST_CA_FILE));
        assert_eq!(get("CURL_CA_BUNDLE"), Some(HOST_CA_FILE));
        assert_eq!(get("SSL_CERT_DIR"), Some("/etc/ssl/certs"));
        // No bundle on the host: nothing is set.
        assert!(host_ca_env(vars(&[]), |_| false).is_empty());
    }
}
