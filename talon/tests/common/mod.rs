//! Test harness: starts a real `talon server` process on free ports with a
//! fresh data directory, and gives typed gRPC clients that carry a bearer
//! credential. `TestWorker` registers over the real worker session with the
//! worker token and answers commands as a test scripts it; it stands in for
//! a runtime in control-plane tests only.

#![allow(dead_code)]

pub mod hosts;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub fn free_port() -> u16 {
    talon_core::listen::spare_port().unwrap()
}

#[derive(serde::Deserialize, Clone, Debug)]
pub struct Bootstrap {
    pub tenant_id: String,
    pub user_id: String,
    pub email: String,
    pub password: String,
    pub api_key: String,
}

pub struct Server {
    child: Child,
    pub dir: tempfile::TempDir,
    pub grpc: String,
    pub ops: String,
    /// The REST gateway (`talon up` only), e.g. `http://127.0.0.1:PORT`.
    pub http: String,
    /// The E2B-compatible API (`talon up` only).
    pub e2b: String,
    /// E2B's sandbox data plane (`talon up` only).
    pub e2b_sandbox: String,
    pub boot: Bootstrap,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Sandboxes outlive their worker by design; a test's are removed
        // with its data directory, so none keeps running after it.
        // Every worker's data directory is one below the server's
        // (`worker` embedded, `w` and others spawned).
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        for d in &dirs {
            // Its fence keeper would outlive it and act at the lease's end.
            if let Some(pid) = std::fs::read_to_string(d.join("fence-keeper.pid"))
                .ok()
                .and_then(|p| p.trim().parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c.windows(12).any(|w| w == b"fence-keeper"))
                })
            {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            remove_containers(&d.join("runtime-state"));
        }
        // And gVisor's, kept by runsc.
        for d in &dirs {
            remove_runsc_containers(&d.join("runsc-state"));
        }
        // Their disks (loop devices), secrets and roots are mounts under
        // the data directory, which would stay (and the directory too).
        let _ = talon_worker::rootfs::unmount_under(self.dir.path());
    }
}

/// Deletes every container a runtime state directory knows.
pub fn remove_containers(state: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(state) else {
        return;
    };
    for e in entries.flatten() {
        let _ = Command::new(env!("CARGO_BIN_EXE_talon"))
            .arg("oci")
            .arg("--root")
            .arg(state)
            .args(["delete", "--force"])
            .arg(e.file_name())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Deletes every gVisor sandbox a runsc state directory knows.
pub fn remove_runsc_containers(state: &std::path::Path) {
    let Some(runsc) = talon_worker::find_runsc("auto").filter(|_| state.is_dir()) else {
        return;
    };
    let Ok(out) = Command::new(&runsc)
        .arg("--root")
        .arg(state)
        .args(["list", "--quiet"])
        .output()
    else {
        return;
    };
    for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        let _ = Command::new(&runsc)
            .arg("--root")
            .arg(state)
            .args(["delete", "--force", id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Server {
    pub async fn start() -> Server {
        Self::start_with(None, &[]).await
    }

    /// `talon up`: the control plane with its embedded worker.
    pub async fn up() -> Server {
        Self::start_cmd("up", None, &[]).await
    }

    /// `talon up` with extra flags.
    pub async fn up_with(extra: &[&str]) -> Server {
        Self::start_cmd("up", None, extra).await
    }

    pub async fn start_with(database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_cmd("server", database_url, extra).await
    }

    /// A second `talon server` on the database of `first`, which
    /// bootstrapped it (this one writes no credentials of its own).
    pub async fn join(first: &Server, database_url: &str, extra: &[&str]) -> Server {
        Self::start_full(
            "server",
            Some(database_url),
            extra,
            Some((first.boot.clone(), first.data_dir())),
            "127.0.0.1",
        )
        .await
    }

    /// A `talon server` listening for gRPC on `ip` (a test LAN's gateway),
    /// on `database_url` if given.
    pub async fn start_on(ip: &str, database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_full("server", database_url, extra, None, ip).await
    }

    /// `join`, listening on `ip`.
    pub async fn join_on(first: &Server, database_url: &str, ip: &str, extra: &[&str]) -> Server {
        Self::start_full(
            "server",
            Some(database_url),
            extra,
            Some((first.boot.clone(), first.data_dir())),
            ip,
        )
        .await
    }

    async fn start_cmd(sub: &str, database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_full(sub, database_url, extra, None, "127.0.0.1").await
    }

    async fn start_full(
        sub: &str,
        database_url: Option<&str>,
        extra: &[&str],
        joined: Option<(Bootstrap, PathBuf)>,
        ip: &str,
    ) -> Server {
        let dir = tempfile::tempdir().unwrap();
        // Sandboxes' mapped users must traverse the data directory.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )
        .unwrap();
        // Servers on one database share the platform's keys (each keeps
        // its own server.id), as operators deploy them.
        let joined = joined.map(|(boot, first_dir)| {
            let keys = dir.path().join("keys");
            std::fs::create_dir_all(&keys).unwrap();
            for k in ["jwt.key", "worker.token", "preview.key", "secrets.key"] {
                std::fs::copy(first_dir.join("keys").join(k), keys.join(k)).unwrap();
            }
            boot
        });
        let (g, o, h, e) = (free_port(), free_port(), free_port(), free_port());
        let es = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_talon"));
        cmd.arg(sub);
        if sub == "up" {
            cmd.arg("--agent-path")
                .arg(agent_binary())
                .arg("--http-listen")
                .arg(format!("127.0.0.1:{h}"))
                .arg("--e2b-api-listen")
                .arg(format!("127.0.0.1:{e}"))
                .arg("--e2b-sandbox-listen")
                .arg(format!("127.0.0.1:{es}"));
            // Servers of one test binary run side by side: only a test
            // that asks for a network gets one (with its own bridge).
            if !extra.contains(&"--network") {
                cmd.arg("--network").arg("none");
            }
        }
        // Pools build in the background; only the tests of the pool ask
        // for one (conformance and the README run `talon up` as shipped).
        if sub != "server" && !extra.contains(&"--prewarm-pool-size") {
            cmd.arg("--prewarm-pool-size").arg("0");
        }
        // `TALON_NAME=value` among the extras is a setting by environment.
        let (env, extra): (Vec<&str>, Vec<&str>) = extra
            .iter()
            .partition(|a| a.starts_with("TALON_") && a.contains('='));
        cmd.envs(env.iter().filter_map(|e| e.split_once('=')));
        cmd.arg("--data-dir")
            .arg(dir.path())
            .arg("--grpc-listen")
            .arg(format!("{ip}:{g}"))
            .arg("--ops-listen")
            .arg(format!("127.0.0.1:{o}"))
            .args(extra)
            .env("TALON_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(u) = database_url {
            cmd.arg("--database-url").arg(u);
        }
        let child = cmd.spawn().expect("spawn talon server");
        let grpc = format!("http://{ip}:{g}");
        let creds = dir.path().join("bootstrap-credentials.json");
        let mut boot = None;
        for _ in 0..300 {
            let ready = joined.clone().or_else(|| {
                std::fs::read_to_string(&creds)
                    .ok()
                    .and_then(|s| serde_json::from_str::<Bootstrap>(&s).ok())
            });
            if let Some(b) = ready
                && Channel::from_shared(grpc.clone())
                    .unwrap()
                    .connect()
                    .await
                    .is_ok()
            {
                boot = Some(b);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // `up` serves REST too; its listener binds just after gRPC's.
        if sub == "up" {
            for _ in 0..200 {
                if tokio::net::TcpStream::connect(("127.0.0.1", h))
                    .await
                    .is_ok()
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        Server {
            child,
            grpc,
            ops: format!("http://127.0.0.1:{o}"),
            http: format!("http://127.0.0.1:{h}"),
            e2b: format!("http://127.0.0.1:{e}"),
            e2b_sandbox: format!("http://127.0.0.1:{es}"),
            boot: boot.expect("server did not start"),
            dir,
        }
    }

    /// SIGKILL, and waits for it to be gone: no clean shutdown.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The talon process's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.grpc.clone())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub async fn as_(&self, token: &str) -> Clients {
        Clients::new(self.channel().await, token)
    }

    pub async fn admin(&self) -> Clients {
        self.as_(&self.boot.api_key).await
    }

    pub fn worker_token(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("keys/worker.token"))
            .unwrap()
            .trim()
            .to_string()
    }

    pub fn jwt_key(&self) -> Vec<u8> {
        std::fs::read_to_string(self.dir.path().join("keys/jwt.key"))
            .unwrap()
            .trim()
            .as_bytes()
            .to_vec()
    }
}

#[derive(Clone)]
pub struct Bearer(pub Option<MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

pub type Authed = InterceptedService<Channel, Bearer>;

/// The interceptor that sends `token` as a bearer token.
pub fn bearer(token: &str) -> Bearer {
    Bearer(Some(format!("Bearer {token}").parse().unwrap()))
}

pub struct Clients {
    pub channel: Channel,
    pub token: String,
    pub auth: pb::auth_service_client::AuthServiceClient<Authed>,
    pub tenants: pb::tenant_service_client::TenantServiceClient<Authed>,
    pub sandboxes: pb::sandbox_service_client::SandboxServiceClient<Authed>,
    pub admin: pb::admin_service_client::AdminServiceClient<Authed>,
}

impl Clients {
    pub fn new(channel: Channel, token: &str) -> Clients {
        let b = Bearer(if token.is_empty() {
            None
        } else {
            Some(format!("Bearer {token}").parse().unwrap())
        });
        Clients {
            auth: pb::auth_service_client::AuthServiceClient::with_interceptor(
                channel.clone(),
                b.clone(),
            ),
            tenants: pb::tenant_service_client::TenantServiceClient::with_interceptor(
                channel.clone(),
                b.clone(),
            ),
            sandboxes: pb::sandbox_service_client::SandboxServiceClient::with_interceptor(
                channel.clone(),
                b.clone(),
            ),
            admin: pb::admin_service_client::AdminServiceClient::with_interceptor(
                channel.clone(),
                b,
            ),
            channel,
            token: token.to_string(),
        }
    }
}

/// A tenant with one user of each role, each with an API key.
pub struct TestTenant {
    pub tenant_id: String,
    pub owner: String,
    pub developer: String,
    pub viewer: String,
    pub owner_email: String,
}

pub const PASSWORD: &str = "correct-horse-battery";

pub async fn login(s: &Server, email: &str, password: &str) -> pb::TokenPair {
    let mut c = s.as_("").await;
    c.auth
        .login(pb::LoginRequest {
            email: email.into(),
            password: password.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .tokens
        .unwrap()
}

pub async fn tenant(s: &Server, name: &str) -> TestTenant {
    let mut admin = s.admin().await;
    let owner_email = format!("owner@{name}.test");
    let t = admin
        .tenants
        .create_tenant(pb::CreateTenantRequest {
            name: name.into(),
            quota: None,
            owner_email: owner_email.clone(),
            owner_password: PASSWORD.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let tenant_id = t.tenant.unwrap().tenant_id;
    let owner_tok = login(s, &owner_email, PASSWORD).await.access_token;
    let mut owner = s.as_(&owner_tok).await;
    let key = |c: &mut Clients, name: &str| {
        let mut t = c.tenants.clone();
        let name = name.to_string();
        async move {
            t.create_api_key(pb::CreateApiKeyRequest {
                tenant_id: "-".into(),
                name,
                role: 0,
                expire_time: None,
            })
            .await
            .unwrap()
            .into_inner()
            .secret
        }
    };
    let mut out = TestTenant {
        tenant_id,
        owner: key(&mut owner, "owner").await,
        developer: String::new(),
        viewer: String::new(),
        owner_email,
    };
    for (role, slot) in [(pb::Role::Developer, 0), (pb::Role::Viewer, 1)] {
        let email = format!("{}@{name}.test", role.as_str_name().to_lowercase());
        owner
            .tenants
            .create_user(pb::CreateUserRequest {
                tenant_id: "-".into(),
                email: email.clone(),
                password: PASSWORD.into(),
                role: role as i32,
            })
            .await
            .unwrap();
        let tok = login(s, &email, PASSWORD).await.access_token;
        let mut c = s.as_(&tok).await;
        let k = key(&mut c, "k").await;
        if slot == 0 {
            out.developer = k
        } else {
            out.viewer = k
        }
    }
    out
}

/// How the test worker answers commands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Every command succeeds with the state it asks for.
    Obey,
    /// Commands are never answered.
    Silent,
}

pub struct TestWorker {
    pub worker_id: String,
    pub tx: tokio::sync::mpsc::Sender<wpb::SessionRequest>,
    pub commands: tokio::sync::mpsc::UnboundedReceiver<wpb::Command>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn obeyed(cmd: &wpb::Command) -> wpb::CommandResult {
    use wpb::command::Action;
    let state = match cmd.action.as_ref().unwrap() {
        Action::Create(_) | Action::Start(_) | Action::Resume(_) => pb::SandboxState::Running,
        Action::Pause(_) => pb::SandboxState::Paused,
        Action::Stop(_) => pb::SandboxState::Stopped,
        Action::Delete(_) => pb::SandboxState::Deleted,
        Action::UpdateNetworkPolicy(_)
        | Action::Prewarm(_)
        | Action::UpdateSecrets(_)
        | Action::DeleteVolume(_) => {
            return wpb::CommandResult {
                command_id: cmd.command_id.clone(),
                ..Default::default()
            };
        }
    };
    wpb::CommandResult {
        command_id: cmd.command_id.clone(),
        code: 0,
        message: String::new(),
        status: Some(wpb::SandboxStatus {
            sandbox_id: cmd.sandbox_id.clone(),
            generation: cmd.generation,
            state: state as i32,
            message: String::new(),
            fenced: false,
        }),
        pool_ready: 0,
    }
}

impl TestWorker {
    pub async fn connect(s: &Server, worker_id: &str, behaviour: Behaviour) -> TestWorker {
        Self::connect_holding(s, worker_id, behaviour, vec![]).await
    }

    /// Registers as a worker that already holds `held` (as after a restart).
    pub async fn connect_holding(
        s: &Server,
        worker_id: &str,
        behaviour: Behaviour,
        held: Vec<wpb::SandboxStatus>,
    ) -> TestWorker {
        let ch = s.channel().await;
        let b = Bearer(Some(
            format!("Bearer {}", s.worker_token()).parse().unwrap(),
        ));
        let mut client =
            wpb::worker_control_service_client::WorkerControlServiceClient::with_interceptor(ch, b);
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        tx.send(wpb::SessionRequest {
            message: Some(wpb::session_request::Message::Register(wpb::Register {
                worker_id: worker_id.into(),
                hostname: "test".into(),
                capacity: Some(wpb::Capacity {
                    cpu_millis: 64_000,
                    memory_mib: 262_144,
                    sandboxes: 100,
                }),
                runtimes: vec!["test".into()],
                images: vec![],
                version: "test".into(),
                sandboxes: held,
                data_address: String::new(),
                isolation_levels: vec![],
                workspace_backend: String::new(),
            })),
        })
        .await
        .unwrap();
        let mut inbound = client
            .session(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        let first = inbound.message().await.unwrap().unwrap();
        assert!(matches!(
            first.message,
            Some(wpb::session_response::Message::Ack(_))
        ));
        // It beats every second, as a real worker does, renewing its
        // lease; the beats end with the session (the last sender dropped).
        let beats = tx.downgrade();
        tokio::spawn(async move {
            let mut seq = 0;
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let Some(tx) = beats.upgrade() else { return };
                seq += 1;
                let beat = wpb::SessionRequest {
                    message: Some(wpb::session_request::Message::Heartbeat(wpb::Heartbeat {
                        seq,
                        ..Default::default()
                    })),
                };
                if tx.send(beat).await.is_err() {
                    return;
                }
            }
        });
        let (ctx, crx) = tokio::sync::mpsc::unbounded_channel();
        let reply = tx.clone();
        let task = tokio::spawn(async move {
            while let Ok(Some(msg)) = inbound.message().await {
                if let Some(wpb::session_response::Message::Command(cmd)) = msg.message {
                    if behaviour == Behaviour::Obey {
                        let r = obeyed(&cmd);
                        let _ = reply
                            .send(wpb::SessionRequest {
                                message: Some(wpb::session_request::Message::Result(r)),
                            })
                            .await;
                    }
                    let _ = ctx.send(cmd);
                }
            }
        });
        TestWorker {
            worker_id: worker_id.into(),
            tx,
            commands: crx,
            task,
        }
    }

    /// Sends an unsolicited status event.
    pub async fn report(&self, sandbox_id: &str, generation: i64, state: pb::SandboxState) {
        self.tx
            .send(wpb::SessionRequest {
                message: Some(wpb::session_request::Message::Event(wpb::SandboxStatus {
                    sandbox_id: sandbox_id.into(),
                    generation,
                    state: state as i32,
                    message: String::new(),
                    fenced: false,
                })),
            })
            .await
            .unwrap();
    }
}

pub fn code<T: std::fmt::Debug>(r: Result<T, tonic::Status>) -> tonic::Code {
    match r {
        Ok(_) => tonic::Code::Ok,
        Err(s) => s.code(),
    }
}

/// A sandbox of the defaults, created and running.
pub async fn create_running(c: &mut Clients) -> pb::Sandbox {
    c.sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            wait_until_running: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
}

/// A running sandbox whose timeout is `secs` seconds.
pub async fn create_with_timeout(c: &mut Clients, secs: i64) -> pb::Sandbox {
    create_running_as(
        c,
        pb::Sandbox {
            timeout: Some(prost_types::Duration {
                seconds: secs,
                nanos: 0,
            }),
            ..Default::default()
        },
    )
    .await
}

/// A running sandbox of `sandbox`'s settings.
pub async fn create_running_as(c: &mut Clients, sandbox: pb::Sandbox) -> pb::Sandbox {
    c.sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(sandbox),
            wait_until_running: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
}

/// A sandbox of `body` created through REST once RUNNING (retried while
/// the embedded worker is not up: 503), or the refusal (status, body).
pub async fn rest_create(
    s: &Server,
    key: &str,
    body: serde_json::Value,
) -> Result<String, (u16, serde_json::Value)> {
    let c = reqwest::Client::new();
    for _ in 0..300 {
        let (st, b) = rest_json(
            &c,
            key,
            reqwest::Method::POST,
            format!("{}/v1/sandboxes?waitUntilRunning=true", s.http),
            Some(body.clone()),
        )
        .await;
        match st {
            200 => {
                assert_eq!(b["sandbox"]["state"], "SANDBOX_STATE_RUNNING", "{b}");
                return Ok(b["sandbox"]["sandboxId"].as_str().unwrap().to_string());
            }
            503 => tokio::time::sleep(Duration::from_millis(100)).await,
            _ => return Err((st, b)),
        }
    }
    panic!("no worker came up");
}

pub async fn get(c: &mut Clients, id: &str) -> pb::Sandbox {
    c.sandboxes
        .get_sandbox(pb::GetSandboxRequest {
            sandbox_id: id.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
}

/// Polls until the sandbox reaches `state`, for up to 5 s.
pub async fn until_state(c: &mut Clients, id: &str, state: pb::SandboxState) -> pb::Sandbox {
    for _ in 0..100 {
        let s = get(c, id).await;
        if s.state == state as i32 {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "sandbox {id} never became {state:?}; it is {:?}",
        get(c, id).await.state
    );
}

/// The static talon-agent (scripts/build-agent.sh), built once per run.
pub fn agent_binary() -> PathBuf {
    talon_worker::testing::static_agent()
}

/// Kept for the tests' wording: the agent they run is the static one.
pub fn ensure_agent_built() {
    agent_binary();
}

/// A `talon worker` process on the server's data dir (`w/`), killable.
pub struct Worker {
    pub child: std::process::Child,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn spawn_worker(s: &Server) -> Worker {
    spawn_worker_to(s, &s.grpc)
}

/// A worker of `s` (its token, a data directory under it) connecting to
/// `server_url` (several servers' URLs, comma-separated, are allowed).
pub fn spawn_worker_to(s: &Server, server_url: &str) -> Worker {
    spawn_worker_with(s, server_url, "w", &[])
}

/// A worker of `s` with its data directory at `s`'s `name` and extra flags.
pub fn spawn_worker_with(s: &Server, server_url: &str, name: &str, extra: &[&str]) -> Worker {
    let talon = std::path::PathBuf::from(env!("CARGO_BIN_EXE_talon"));
    let mut cmd = std::process::Command::new(&talon);
    worker_args(&mut cmd, s, server_url, name, "127.0.0.1", extra);
    Worker {
        child: cmd.spawn().unwrap(),
    }
}

/// A worker of `s` on a test host (its network namespace), its data
/// plane on the host's address.
pub fn spawn_worker_on(
    host: &hosts::Host,
    s: &Server,
    server_url: &str,
    name: &str,
    extra: &[&str],
) -> Worker {
    let mut cmd = host.command(std::path::Path::new(env!("CARGO_BIN_EXE_talon")));
    worker_args(&mut cmd, s, server_url, name, &host.addr, extra);
    Worker {
        child: cmd.spawn().unwrap(),
    }
}

fn worker_args(
    cmd: &mut std::process::Command,
    s: &Server,
    server_url: &str,
    name: &str,
    data_ip: &str,
    extra: &[&str],
) {
    cmd.args(["worker", "--server-url", server_url, "--data-listen"])
        .arg(format!("{data_ip}:0"))
        .arg("--token-file")
        .arg(s.data_dir().join("keys/worker.token"))
        .arg("--data-dir")
        .arg(s.data_dir().join(name))
        .arg("--agent-path")
        .arg(agent_binary())
        .args(["--network", "none", "--prewarm-pool-size", "0"])
        .args(extra)
        .env("TALON_LOG", "warn");
}

/// Waits until a worker with a runtime is (or is no longer) connected.
pub async fn until_worker(admin: &mut Clients, connected: bool) {
    for _ in 0..200 {
        let w = admin
            .admin
            .list_workers(pb::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        let up = w
            .iter()
            .any(|w| w.state == pb::WorkerState::Active as i32 && !w.runtimes.is_empty());
        if up == connected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("worker never became connected={connected}");
}

pub fn sel_tag(tag: &str) -> Option<pb::ProcessSelector> {
    Some(pb::ProcessSelector {
        selector: Some(pb::process_selector::Selector::Tag(tag.into())),
    })
}

/// A REST call with a bearer credential: the status and the JSON body
/// (null when there is none).
pub async fn rest_json(
    c: &reqwest::Client,
    key: &str,
    m: reqwest::Method,
    url: String,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut r = c.request(m, url).bearer_auth(key);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.unwrap();
    let st = resp.status().as_u16();
    (st, resp.json().await.unwrap_or(serde_json::Value::Null))
}

/// Runs a shell script in a sandbox through REST: the NDJSON events.
pub async fn rest_sh(c: &reqwest::Client, key: &str, base: &str, id: &str, script: &str) -> String {
    c.post(format!("{base}/v1/sandboxes/{id}/processes"))
        .bearer_auth(key)
        .json(&serde_json::json!({"command": ["sh", "-c", script]}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The standard output carried by a process's NDJSON events.
pub fn ndjson_stdout(events: &str) -> String {
    use base64::Engine;
    let mut out = Vec::new();
    for l in events.lines() {
        let e: serde_json::Value = serde_json::from_str(l).unwrap();
        if let Some(d) = e["event"]["output"]["data"].as_str() {
            out.extend(base64::engine::general_purpose::STANDARD.decode(d).unwrap());
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

mod clients;
#[allow(unused_imports)]
pub use clients::*;

// What a process of the platform holds, from /proc (the hostile tests'
// bounds on memory, descriptors and cpu).

pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap()
}

pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

pub fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / ticks
}

/// A series of a server's `/metrics`: the sum of its samples (every label
/// set); None when the server does not answer or has no such series.
pub async fn metric(s: &Server, name: &str) -> Option<f64> {
    let text = reqwest::get(format!("{}/metrics", s.ops))
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    let values: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

pub type Procs = pb::process_service_client::ProcessServiceClient<Authed>;

/// `sh -c script` in a sandbox through ProcessService: what it wrote (both
/// streams) and its exit code.
pub async fn proc_sh(p: &mut Procs, id: &str, script: &str) -> (String, i32) {
    let req = pb::StartProcessRequest {
        sandbox_id: id.into(),
        command: vec!["sh".into(), "-c".into(), script.into()],
        ..Default::default()
    };
    let mut s = p.start_process(req).await.unwrap().into_inner();
    let (mut out, mut code) = (Vec::new(), -1);
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), s.message())
        .await
        .unwrap()
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) => out.extend(o.data),
            pb::process_event::Event::Exited(e) => code = e.exit_code,
            _ => {}
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), code)
}

/// `talon migrate` on a database, which must succeed.
pub fn migrate(url: &str) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_talon"))
        .args(["migrate", "--database-url", url])
        .env("TALON_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "migrate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A database of its own on TALON_TEST_POSTGRES_URL's server, migrated:
/// (its URL, an admin connection, its name). None outside CI without the
/// variable (CI must set it).
pub async fn pg_database(tag: &str) -> Option<(String, sea_orm::DatabaseConnection, String)> {
    let Ok(admin_url) = std::env::var("TALON_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").is_err(),
            "CI must set TALON_TEST_POSTGRES_URL"
        );
        eprintln!("TALON_TEST_POSTGRES_URL is not set: PostgreSQL part not run here");
        return None;
    };
    let name = format!("talon_{tag}_{}", std::process::id());
    let admin = sea_orm::Database::connect(&admin_url).await.unwrap();
    use sea_orm::ConnectionTrait;
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
        .await
        .unwrap();
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let url = format!("{base}/{name}");
    migrate(&url);
    Some((url, admin, name))
}

/// `talon_duties_leader` of a server: 1 while it runs the duties.
pub async fn leads(s: &Server) -> Option<bool> {
    metric(s, "talon_duties_leader").await.map(|v| v == 1.0)
}
