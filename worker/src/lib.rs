//! The Talon worker: one per host. It keeps one long-lived session with
//! the control plane (register, heartbeat, commands and their results,
//! events), runs sandboxes through a container runtime, and forwards the
//! server's agent calls to each sandbox's agent over its data plane.
//!
//! Without a runtime binary or the talon-agent binary the worker still
//! registers, and answers every build command truthfully with
//! FAILED_PRECONDITION ("this worker has no sandbox runtime").

pub mod agent_socket;
pub mod beneath;
pub mod bundle;
pub mod dataplane;
pub mod disk;
pub mod host;
pub mod image;
pub mod image_api;
pub mod keeper;
pub mod layout;
pub mod lease;
pub mod load;
pub mod net;
pub mod ns;
pub mod output_budget;
pub mod pool;
pub mod rootfs;
pub mod runtime;
pub mod sandbox_api;
pub mod seccomp;
mod session;
pub mod shared;
/// What other crates' integration tests need from the machine; not in
/// the production worker (the `testing` feature, for dev-dependencies).
#[cfg(feature = "testing")]
pub mod testing;
pub mod usage;
pub mod youki;

use session::{AbortOnDrop, fence, session};

use std::path::PathBuf;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_control_service_client::WorkerControlServiceClient;
use talon_proto::v1::SandboxState;
use tokio_stream::StreamExt;

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// "runc" or "crun" (on PATH), or "none" to run no sandboxes.
    pub runtime: String,
    /// The talon-agent binary; next to the current executable when None.
    pub agent_path: Option<PathBuf>,
    /// Where the data plane listens; the server dials it.
    pub data_listen: std::net::SocketAddr,
    /// The data plane's connection limits (`talon_core::listen`): only
    /// servers holding the worker token authenticate there.
    pub data_connections: talon_core::listen::Limits,
    /// Most bytes a second of process output one sandbox's streams carry
    /// out of the data plane (0: no limit); see `output_budget`.
    pub output_bytes_per_sec: u64,
    /// The control plane's gRPC URL, e.g. `http://127.0.0.1:7070`; or
    /// several, comma-separated, of servers sharing one database: the
    /// worker keeps one session, and when it ends (its server died, say)
    /// opens the next with the next URL.
    pub server_url: String,
    /// The worker token (`DATA_DIR/keys/worker.token` on the server).
    pub token: String,
    /// Where the worker keeps its id and, later, its sandboxes.
    pub data_dir: PathBuf,
    /// Most sandboxes this worker takes.
    pub max_sandboxes: i64,
    /// How many times its cores the worker offers as cpu.
    pub cpu_overcommit: f64,
    /// How sandboxes are built: rootfs mode, image size limit.
    pub host: host::HostOptions,
    /// The `gvisor` isolation level: runsc and its platform.
    pub gvisor: GvisorConfig,
    /// How often the worker tells the server every sandbox it holds, so
    /// that what the control plane no longer knows is removed.
    pub reconcile_interval: Duration,
}

/// Where runsc is and how it runs (see `gvisor_runtime`).
#[derive(Clone, Debug)]
pub struct GvisorConfig {
    /// A path, `auto` (on PATH, else [`RUNSC_INSTALLED`]) or `none`.
    pub runsc: String,
    /// systrap, ptrace or kvm.
    pub platform: String,
}

impl Default for GvisorConfig {
    fn default() -> Self {
        GvisorConfig {
            runsc: "auto".into(),
            platform: "systrap".into(),
        }
    }
}

/// Where scripts/install-runsc.sh puts the pinned runsc.
pub const RUNSC_INSTALLED: &str = "/usr/local/lib/talon-gvisor/runsc";

/// runsc as `--runsc` names it: a path, `auto` (on PATH, else
/// [`RUNSC_INSTALLED`]) or `none`.
pub fn find_runsc(setting: &str) -> Option<PathBuf> {
    match setting {
        "none" => None,
        "auto" => find_on_path("runsc").or_else(|| {
            let p = PathBuf::from(RUNSC_INSTALLED);
            p.is_file().then_some(p)
        }),
        path => Some(PathBuf::from(path)),
    }
}

/// The `gvisor` level's runtime, when runsc is there and runs a sandbox
/// here (`runsc do true` on the platform, within 30 s); otherwise None,
/// and why is logged: the worker then offers containers only.
async fn gvisor_runtime(c: &GvisorConfig, state: PathBuf) -> Option<runtime::OciCli> {
    let bin = find_runsc(&c.runsc)?;
    let probe = tokio::process::Command::new(&bin)
        .arg(format!("--platform={}", c.platform))
        .args(["--network=none", "do", "true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(30), probe).await {
        Ok(Ok(o)) if o.status.success() => {}
        Ok(Ok(o)) => {
            tracing::warn!(runsc = %bin.display(), platform = %c.platform, error = %String::from_utf8_lossy(&o.stderr).trim(), "runsc does not run here; no gvisor isolation");
            return None;
        }
        Ok(Err(e)) => {
            tracing::warn!(runsc = %bin.display(), error = %e, "runsc does not start; no gvisor isolation");
            return None;
        }
        Err(_) => {
            tracing::warn!(runsc = %bin.display(), platform = %c.platform, "runsc did not finish a sandbox in 30 s; no gvisor isolation");
            return None;
        }
    }
    if let Err(e) = private_dir(&state) {
        tracing::warn!(error = %e, dir = %state.display(), "runsc state directory");
        return None;
    }
    tracing::info!(runsc = %bin.display(), platform = %c.platform, "gvisor isolation offered");
    Some(runtime::OciCli::gvisor(
        &bin.to_string_lossy(),
        state,
        &c.platform,
    ))
}

/// This host's capacity: its cores times `cpu_overcommit` (cpu limits are
/// shares of time, and most sandboxes idle), and its memory as it is.
pub fn host_capacity(max_sandboxes: i64, cpu_overcommit: f64) -> wpb::Capacity {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as i64;
    let mem_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<i64>().ok())
        })
        .unwrap_or(0);
    wpb::Capacity {
        cpu_millis: (cpus as f64 * 1000.0 * cpu_overcommit.max(0.1)) as i64,
        memory_mib: mem_kib / 1024,
        sandboxes: max_sandboxes,
    }
}

fn worker_id(data_dir: &std::path::Path) -> anyhow::Result<String> {
    let path = data_dir.join("worker-id");
    if let Ok(id) = std::fs::read_to_string(&path) {
        return Ok(id.trim().to_string());
    }
    std::fs::create_dir_all(data_dir)?;
    let id = format!("wrk_{}", uuid::Uuid::new_v4().simple());
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    std::io::Write::write_all(&mut f, id.as_bytes())?;
    Ok(id)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

const NO_RUNTIME: &str = "this worker has no sandbox runtime";

fn result(
    cmd: &wpb::Command,
    r: anyhow::Result<wpb::SandboxStatus>,
    failed_state: Option<SandboxState>,
) -> wpb::CommandResult {
    match r {
        Ok(status) => wpb::CommandResult {
            command_id: cmd.command_id.clone(),
            code: 0,
            message: String::new(),
            status: Some(status),
            pool_ready: 0,
        },
        Err(e) => {
            // The one place a failure gets its code. A refusal (a stale
            // generation, a sandbox not here) says nothing of the sandbox's
            // state; only what the runtime failed at fails it.
            let code = host::code_of(&e);
            let refused = e.downcast_ref::<host::WorkerError>().is_some();
            wpb::CommandResult {
                command_id: cmd.command_id.clone(),
                code: code as i32,
                message: format!("{e:#}"),
                pool_ready: 0,
                status: failed_state
                    .filter(|_| !refused)
                    .map(|state| wpb::SandboxStatus {
                        sandbox_id: cmd.sandbox_id.clone(),
                        generation: cmd.generation,
                        state: state as i32,
                        message: format!("{e:#}"),
                        fenced: false,
                        container_gone: false,
                    }),
            }
        }
    }
}

/// Keeps a prewarm pool; the result carries how many are ready.
async fn prewarm(
    host: &host::SandboxHost,
    cmd: &wpb::Command,
    p: &wpb::PrewarmCommand,
) -> wpb::CommandResult {
    let spec = p.spec.clone().unwrap_or_default();
    let wait = p.wait.map_or(Duration::ZERO, |d| {
        Duration::new(d.seconds.max(0) as u64, 0)
    });
    let size = p.pool_size.max(0) as usize;
    match host.prewarm(&spec, size, wait).await {
        Ok(n) => wpb::CommandResult {
            command_id: cmd.command_id.clone(),
            pool_ready: n as i32,
            ..Default::default()
        },
        Err(e) => result(cmd, Err(e), None),
    }
}

/// Carries out one command. Without a runtime, nothing can be built, and a
/// delete of something never built is already done.
async fn answer(host: Option<&host::SandboxHost>, cmd: &wpb::Command) -> wpb::CommandResult {
    use wpb::command::Action;
    let Some(action) = &cmd.action else {
        return result(cmd, Err(anyhow::anyhow!("command has no action")), None);
    };
    let (id, generation) = (cmd.sandbox_id.as_str(), cmd.generation);
    let Some(host) = host else {
        return match action {
            Action::Delete(_) => result(
                cmd,
                Ok(wpb::SandboxStatus {
                    sandbox_id: id.into(),
                    generation,
                    state: SandboxState::Deleted as i32,
                    message: String::new(),
                    fenced: false,
                    container_gone: false,
                }),
                None,
            ),
            Action::Create(_) | Action::Start(_) => result(
                cmd,
                Err(anyhow::anyhow!(NO_RUNTIME)),
                Some(SandboxState::Failed),
            ),
            _ => result(cmd, Err(anyhow::anyhow!(NO_RUNTIME)), None),
        };
    };
    match action {
        Action::Create(c) => {
            let spec = c.spec.clone().unwrap_or_default();
            result(
                cmd,
                host.create(id, generation, &spec).await,
                Some(SandboxState::Failed),
            )
        }
        Action::Start(st) => result(
            cmd,
            match st
                .network_policy
                .as_ref()
                .map(|p| net::egress_from_proto(Some(p)))
                .transpose()
            {
                Ok(policy) => host.start(id, generation, policy).await,
                Err(e) => Err(e),
            },
            Some(SandboxState::Failed),
        ),
        Action::Stop(_) => result(cmd, host.stop(id, generation).await, None),
        Action::Pause(_) => result(cmd, host.pause(id, generation).await, None),
        Action::Resume(_) => result(cmd, host.resume(id, generation).await, None),
        Action::Delete(d) if d.keep_shared_disk => {
            result(cmd, host.let_go(id, generation).await, None)
        }
        Action::Delete(_) => result(cmd, host.delete(id, generation).await, None),
        Action::UpdateNetworkPolicy(u) => result(
            cmd,
            match net::egress_from_proto(u.network_policy.as_ref()) {
                Ok(policy) => host.update_network_policy(id, generation, policy).await,
                Err(e) => Err(e),
            },
            None,
        ),
        Action::Prewarm(p) => prewarm(host, cmd, p).await,
        Action::UpdateSecrets(u) => result(cmd, host.update_secrets(id, generation, u).await, None),
        Action::DeleteVolume(d) => match host.delete_volume(&d.volume_id) {
            Ok(()) => wpb::CommandResult {
                command_id: cmd.command_id.clone(),
                ..Default::default()
            },
            Err(e) => result(cmd, Err(e), None),
        },
    }
}

/// A client of a sandbox's agent.
pub type AgentClient =
    talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient<
        tonic::transport::Channel,
    >;

/// Connects to a sandbox's agent over its socket, refusing any listener
/// but `peer` (see `agent_socket`).
pub async fn agent_client(
    socket: &std::path::Path,
    peer: agent_socket::AgentPeer,
) -> anyhow::Result<AgentClient> {
    let path = socket.to_path_buf();
    let channel = tonic::transport::Endpoint::from_static("http://agent")
        .connect_with_connector(tower::service_fn(move |_: http::Uri| {
            let path = path.clone();
            async move {
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                    agent_socket::connect(&path, peer).await?,
                ))
            }
        }))
        .await?;
    Ok(AgentClient::new(channel))
}

/// The server's addresses, which sandboxes may not reach: what its URL's
/// host resolves to (loopback is denied anyway).
async fn server_addresses(url: &str) -> Vec<ipnet::IpNet> {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return vec![];
    };
    let Some(host) = uri.host() else {
        return vec![];
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(443);
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => addrs.map(|a| ipnet::IpNet::from(a.ip())).collect(),
        Err(e) => {
            tracing::warn!(server = %url, error = %e, "could not resolve the server's address for the egress deny list");
            vec![]
        }
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.is_file())
}

/// A directory only its owner may read or pass through (0700), made if
/// missing and tightened if it was made before.
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// The sandbox host, when a runtime and the agent are both here.
/// "libcontainer" is youki's library, run through `talon oci`; "runc",
/// "crun" or "runsc" are their CLIs on PATH.
async fn make_host(config: &WorkerConfig) -> Option<std::sync::Arc<host::SandboxHost>> {
    if config.runtime == "none" {
        return None;
    }
    let state = config.data_dir.join("runtime-state");
    // The runtimes' state (pids, bundle paths) is root's alone; they
    // create it 0755 otherwise.
    if let Err(e) = private_dir(&state) {
        tracing::warn!(error = %e, dir = %state.display(), "runtime state directory");
        return None;
    }
    let rt = if config.runtime == "libcontainer" {
        let exe = std::env::current_exe().ok()?;
        runtime::OciCli::libcontainer(&exe.to_string_lossy(), &["oci"], state)
    } else {
        let Some(bin) = find_on_path(&config.runtime) else {
            tracing::warn!(runtime = %config.runtime, "runtime binary not found on PATH; this worker runs no sandboxes");
            return None;
        };
        runtime::OciCli::new(&bin.to_string_lossy(), state)
    };
    let agent = config.agent_path.clone().or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join("talon-agent")))
    });
    let Some(agent) = agent.filter(|a| a.is_file()) else {
        tracing::warn!(
            "talon-agent binary not found next to the worker; this worker runs no sandboxes"
        );
        return None;
    };
    let gvisor = gvisor_runtime(&config.gvisor, config.data_dir.join("runsc-state")).await;
    match host::SandboxHost::with_options(
        &config.data_dir,
        std::sync::Arc::new(rt),
        &agent,
        config.host.clone(),
    ) {
        Ok(h) => Some(std::sync::Arc::new(match gvisor {
            Some(g) => h.with_gvisor(std::sync::Arc::new(g)),
            None => h,
        })),
        Err(e) => {
            tracing::warn!(error = %e, "sandbox host unavailable; this worker runs no sandboxes");
            None
        }
    }
}

/// Runs the worker until `shutdown` turns true, reconnecting with backoff.
pub async fn run(
    config: WorkerConfig,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let id = worker_id(&config.data_dir)?;
    let host = make_host(&config).await;
    // What the last run (or a reboot) left, set right before anything is
    // re-attached or reported.
    if let Some(h) = &host {
        let settled = h.settle().await;
        tracing::info!(worker = %id, ?settled, "sandboxes found at start");
    }
    let mut data_address = String::new();
    if let (Some(h), Some(net)) = (&host, &config.host.network) {
        let mut net = net.clone();
        for url in server_urls(&config.server_url) {
            net.deny.extend(server_addresses(&url).await);
        }
        h.enable_network(net).await?;
    }
    if let Some(h) = &host {
        let listener = tokio::net::TcpListener::bind(config.data_listen).await?;
        data_address = listener.local_addr()?.to_string();
        tokio::spawn(dataplane::serve(
            listener,
            h.clone(),
            config.token.clone(),
            config.output_bytes_per_sec,
            config.data_connections,
        ));
        // Pooled sandboxes of the last run: kept or removed, then refilled.
        h.reclaim_pool().await;
        tokio::spawn(h.clone().refill());
        tracing::info!(worker = %id, runtime = %h.runtime_name(), data_plane = %data_address, "sandbox host ready");
    }
    let urls = server_urls(&config.server_url);
    anyhow::ensure!(!urls.is_empty(), "--server-url names no server");
    // Fencing runs apart from the sessions: a lease lapses just as well
    // while no server answers.
    let lease = std::sync::Arc::new(lease::Lease::default());
    // And a process apart kills the sandboxes if this one cannot (keeper).
    let keeper = match (&host, std::env::current_exe()) {
        (Some(h), Ok(exe)) => {
            match keeper::Keeper::spawn(
                &exe,
                &config.data_dir,
                h.cgroup_parent(),
                &config.data_dir.join("sandboxes"),
            ) {
                Ok(k) => Some(k),
                Err(e) => {
                    tracing::warn!(error = %e, "no fence keeper: a stopped worker's sandboxes would run on past its lease");
                    None
                }
            }
        }
        _ => None,
    };
    let _fence = host
        .clone()
        .map(|h| AbortOnDrop(tokio::spawn(fence(h, lease.clone(), keeper))));
    let mut backoff = Duration::from_millis(100);
    let mut next = 0;
    loop {
        let url = &urls[next % urls.len()];
        let started = std::time::Instant::now();
        let session = session(&config, url, &id, host.clone(), &data_address, &lease);
        tokio::select! {
            r = session => {
                match r {
                    Ok(()) => tracing::info!(worker = %id, server = %url, "session ended; reconnecting"),
                    Err(e) => tracing::warn!(worker = %id, server = %url, error = %e, "session failed; reconnecting"),
                }
            }
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        }
        // The next server, at once after a session that lived; the same
        // list again with a growing pause once every server has failed.
        next += 1;
        if started.elapsed() > Duration::from_secs(10) {
            backoff = Duration::from_millis(100);
        }
        if next % urls.len() == 0 || urls.len() == 1 {
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = shutdown.wait_for(|s| *s) => return Ok(()),
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }
}

/// The servers a worker may keep its session with, in order of preference.
fn server_urls(setting: &str) -> Vec<String> {
    setting
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_reads_the_host() {
        let c = host_capacity(10, 1.0);
        assert!(c.cpu_millis >= 1000);
        assert_eq!(host_capacity(10, 4.0).cpu_millis, 4 * c.cpu_millis);
        assert!(c.memory_mib > 0);
        assert_eq!(c.sandboxes, 10);
    }

    #[tokio::test]
    async fn without_a_runtime_it_refuses_to_build_and_confirms_deletes() {
        let mk = |a| wpb::Command {
            command_id: "c".into(),
            sandbox_id: "s".into(),
            generation: 3,
            action: Some(a),
        };
        let r = answer(
            None,
            &mk(wpb::command::Action::Create(wpb::CreateSandboxCommand {
                spec: None,
            })),
        )
        .await;
        assert_eq!(r.code, tonic::Code::FailedPrecondition as i32);
        assert_eq!(r.status.unwrap().state, SandboxState::Failed as i32);
        let r = answer(
            None,
            &mk(wpb::command::Action::Delete(
                wpb::DeleteSandboxCommand::default(),
            )),
        )
        .await;
        assert_eq!(r.code, 0);
        let s = r.status.unwrap();
        assert_eq!((s.state, s.generation), (SandboxState::Deleted as i32, 3));
    }
}
