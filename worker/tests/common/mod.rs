//! What the worker's integration tests share: a sandbox host on a fresh
//! data directory (libcontainer through `talon-oci`, the default adapter),
//! sandboxes on it, and a shell inside them through the agent's socket,
//! as the worker itself reaches it. Root is required; CI is root.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use talon_worker::host::{HostOptions, SandboxHost};
use talon_worker::runtime::OciCli;

pub type Agent = SandboxAgentServiceClient<tonic::transport::Channel>;

/// The static talon-agent (scripts/build-agent.sh), built once per run.
pub fn agent_binary() -> PathBuf {
    talon_worker::testing::static_agent()
}

pub fn require_root() {
    assert_eq!(
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() },
        0,
        "these tests need root (CI runs as root)"
    );
}

/// A sandbox id unique in this process and across runs: cgroup paths are
/// global to the host.
pub fn unique_id(prefix: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
        % 1000;
    format!("sbx_{prefix}{}x{n}x{nanos}", std::process::id())
}

/// A sandbox host on its own temporary data directory.
pub struct TestHost {
    pub dir: tempfile::TempDir,
    pub host: Arc<SandboxHost>,
}

impl TestHost {
    /// On libcontainer, the default adapter.
    pub fn new(opts: HostOptions) -> Arc<TestHost> {
        Self::with_runtime(opts, "libcontainer")
    }

    /// On "libcontainer" (through `talon-oci`) or an OCI CLI on PATH.
    pub fn with_runtime(opts: HostOptions, runtime: &str) -> Arc<TestHost> {
        Self::build(opts, runtime, false)
    }

    /// On libcontainer, and offering gVisor through the pinned runsc on
    /// the systrap platform.
    pub fn with_gvisor(opts: HostOptions) -> Arc<TestHost> {
        Self::build(opts, "libcontainer", true)
    }

    fn build(opts: HostOptions, runtime: &str, gvisor: bool) -> Arc<TestHost> {
        require_root();
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )
        .unwrap();
        let state = dir.path().join("runtime-state");
        let rt = if runtime == "libcontainer" {
            OciCli::libcontainer(env!("CARGO_BIN_EXE_talon-oci"), &[], state)
        } else {
            OciCli::new(runtime, state)
        };
        let mut host =
            SandboxHost::with_options(dir.path(), Arc::new(rt), &agent_binary(), opts).unwrap();
        if gvisor {
            host = host.with_gvisor(Arc::new(OciCli::gvisor(
                &talon_worker::testing::runsc().to_string_lossy(),
                dir.path().join("runsc-state"),
                "systrap",
            )));
        }
        Arc::new(TestHost {
            dir,
            host: Arc::new(host),
        })
    }

    /// Another host on this one's data directory: the worker restarted.
    pub fn reopen(&self, opts: HostOptions) -> Arc<SandboxHost> {
        let rt = OciCli::libcontainer(
            env!("CARGO_BIN_EXE_talon-oci"),
            &[],
            self.dir.path().join("runtime-state"),
        );
        Arc::new(
            SandboxHost::with_options(self.dir.path(), Arc::new(rt), &agent_binary(), opts)
                .unwrap(),
        )
    }

    pub fn data(&self) -> &Path {
        self.dir.path()
    }
}

/// A running sandbox, deleted when dropped.
pub struct Sandbox {
    pub env: Arc<TestHost>,
    pub id: String,
    pub agent: Agent,
    pub data: PathBuf,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let rt = tokio::runtime::Handle::current();
        let _ = tokio::task::block_in_place(|| rt.block_on(self.env.host.delete(&self.id, 1)));
    }
}

pub fn spec(image: &str, limits: (i64, i64, i64)) -> wpb::SandboxSpec {
    wpb::SandboxSpec {
        image: image.into(),
        resources: Some(pb::Resources {
            cpu_millis: limits.0,
            memory_mib: limits.1,
            max_pids: limits.2,
            disk_mib: 0,
        }),
        network_policy: Some(pb::NetworkPolicy {
            mode: pb::EgressMode::Open as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Creates a sandbox on `env`, or says why not.
pub async fn create(env: &Arc<TestHost>, spec: &wpb::SandboxSpec) -> anyhow::Result<Sandbox> {
    let id = unique_id("t");
    env.host.create(&id, 1, spec).await?;
    let agent = env.host.agent(&id).await?;
    Ok(Sandbox {
        env: env.clone(),
        data: env.data().to_path_buf(),
        id,
        agent,
    })
}

/// A sandbox of the `host` image on a host of its own.
pub async fn sandbox(limits: (i64, i64, i64)) -> Sandbox {
    let env = TestHost::new(HostOptions::default());
    create(&env, &spec("host", limits)).await.unwrap()
}

/// Runs a shell script through an agent: stdout, stderr and the exit code
/// (128 + signal when killed).
pub async fn sh(agent: &mut Agent, script: &str) -> (String, String, i32) {
    sh_as(agent, "", script).await
}

/// `sh` as another user of the sandbox ("" is its root).
pub async fn sh_as(agent: &mut Agent, user: &str, script: &str) -> (String, String, i32) {
    let req = pb::StartProcessRequest {
        command: vec!["sh".into(), "-c".into(), script.into()],
        user: user.into(),
        ..Default::default()
    };
    let mut s = agent.start_process(req).await.unwrap().into_inner();
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), -100);
    while let Some(m) = tokio::time::timeout(Duration::from_secs(60), s.message())
        .await
        .unwrap()
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) if o.stream == 2 => err.extend(o.data),
            pb::process_event::Event::Output(o) => out.extend(o.data),
            pb::process_event::Event::Exited(e) => {
                code = if e.signal != 0 {
                    128 + e.signal
                } else {
                    e.exit_code
                }
            }
            _ => {}
        }
    }
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
        code,
    )
}

impl Sandbox {
    pub async fn sh(&mut self, script: &str) -> (String, String, i32) {
        sh(&mut self.agent, script).await
    }

    /// This sandbox's directory on the host.
    pub fn dir(&self) -> PathBuf {
        self.data.join("sandboxes").join(&self.id)
    }
}

/// Every runtime adapter the worker offers on this host: libcontainer
/// (built in), runc, and crun where it can run (crun 1.8 refuses a hybrid
/// cgroup layout with controllers on the unified hierarchy, as this VM's
/// has). Escape tests run under each; a missing CLI is a failure, not a
/// skip (CI installs them).
pub fn adapters() -> Vec<&'static str> {
    let mut all = vec!["libcontainer"];
    for cli in ["runc", "crun"] {
        assert!(
            std::process::Command::new(cli)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            "the escape suite runs under every adapter: install {cli} (.ci/run does)"
        );
        if cli == "crun" && talon_worker::runtime::crun_refuses_this_host() {
            eprintln!("crun: not run here (it refuses this host's hybrid cgroup layout)");
            continue;
        }
        all.push(cli);
    }
    all
}

/// Where an escape test runs a sandbox: a container under one adapter,
/// or the `gvisor` level (runsc on systrap, beside libcontainer). Tests
/// that hold under every level loop over [`levels`]; where gVisor answers
/// a question differently (its own kernel makes namespaces, say) the test
/// says what must hold instead: that nothing reaches the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Level {
    Container(&'static str),
    Gvisor,
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Level::Container(rt) => f.write_str(rt),
            Level::Gvisor => f.write_str("gvisor"),
        }
    }
}

impl Level {
    /// A fresh host that runs this level.
    pub fn host(self, opts: HostOptions) -> Arc<TestHost> {
        match self {
            Level::Container(rt) => TestHost::with_runtime(opts, rt),
            Level::Gvisor => TestHost::with_gvisor(opts),
        }
    }

    /// `spec`, at this level.
    pub fn spec(self, image: &str, limits: (i64, i64, i64)) -> wpb::SandboxSpec {
        let mut s = spec(image, limits);
        if self == Level::Gvisor {
            s.isolation = pb::Isolation::Gvisor as i32;
        }
        s
    }

    /// A sandbox of `image` on a host of its own.
    pub async fn sandbox(self, image: &str, limits: (i64, i64, i64)) -> Sandbox {
        let env = self.host(HostOptions::default());
        create(&env, &self.spec(image, limits))
            .await
            .unwrap_or_else(|e| panic!("{self}: {e:#}"))
    }
}

/// Every level the escape suite runs under: each adapter, then gVisor
/// (a missing runsc is a failure: .ci/run installs the pinned one).
pub fn levels() -> Vec<Level> {
    let mut all: Vec<Level> = adapters().into_iter().map(Level::Container).collect();
    all.push(Level::Gvisor);
    all
}

/// What a gVisor sandbox is on the host: every host process in its cgroup
/// (the sentry, the gofer, systrap's stubs), each with its namespaces. The
/// workload's own processes are never among them.
pub fn gvisor_host_processes(id: &str) -> Vec<HostProcess> {
    let procs = std::fs::read_to_string(format!("/sys/fs/cgroup/pids/talon/{id}/cgroup.procs"))
        .or_else(|_| {
            std::fs::read_to_string(format!("/sys/fs/cgroup/unified/talon/{id}/cgroup.procs"))
        })
        .unwrap_or_else(|e| panic!("the cgroup of {id}: {e}"));
    procs
        .lines()
        .filter_map(|p| HostProcess::read(p.parse().unwrap()))
        .collect()
}

/// One host process, as the host's kernel sees it.
#[derive(Debug)]
pub struct HostProcess {
    pub pid: i32,
    pub uid: u32,
    pub seccomp: String,
    pub no_new_privs: String,
    /// user, mnt, pid, net, ipc and uts namespace links.
    pub ns: Vec<String>,
}

pub const NAMESPACES: [&str; 6] = ["user", "mnt", "pid", "net", "ipc", "uts"];

impl HostProcess {
    /// None when it has exited meanwhile.
    pub fn read(pid: i32) -> Option<HostProcess> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
                .unwrap_or_default()
        };
        let ns = NAMESPACES
            .iter()
            .map(|n| {
                std::fs::read_link(format!("/proc/{pid}/ns/{n}")).map(|l| l.display().to_string())
            })
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        Some(HostProcess {
            pid,
            uid: field("Uid:").parse().ok()?,
            seccomp: field("Seccomp:"),
            no_new_privs: field("NoNewPrivs:"),
            ns,
        })
    }
}

/// A C program from tests/probes, built static (it runs in any image)
/// once per test binary, under the target's temporary directory.
pub fn static_probe(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap();
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/probes/{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let cc = std::process::Command::new("cc")
        .args(["-static", "-O2", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("cc (a C compiler with static glibc, Debian's gcc) is needed for the probes");
    assert!(
        cc.status.success(),
        "building {}: {}",
        src.display(),
        String::from_utf8_lossy(&cc.stderr)
    );
    built.push((name.to_string(), out.clone()));
    out
}

impl Sandbox {
    /// Writes a file through the agent's file API, with a mode.
    pub async fn put(&mut self, path: &str, data: &[u8], mode: u32) {
        use pb::write_file_request::Message as W;
        let msgs = vec![
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Header(pb::WriteFileHeader {
                    path: path.into(),
                    mode,
                    create_parents: true,
                    no_overwrite: false,
                    ..Default::default()
                })),
            },
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Data(data.to_vec())),
            },
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Finish(pb::WriteFileFinish {
                    size: data.len() as i64,
                })),
            },
        ];
        self.agent
            .write_file(tokio_stream::iter(msgs))
            .await
            .unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
}

/// A file's SHA-256, in hex.
pub fn sha(path: &Path) -> String {
    hex(&<sha2::Sha256 as sha2::Digest>::digest(
        std::fs::read(path).unwrap(),
    ))
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
