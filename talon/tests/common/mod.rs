//! Test harness: starts a real `talon server` process on free ports with a
//! fresh data directory, and gives typed gRPC clients that carry a bearer
//! credential. `TestWorker` registers over the real worker session with the
//! worker token and answers commands as a test scripts it; it stands in for
//! a runtime in control-plane tests only.

#![allow(dead_code)]

pub mod hosts;
pub mod proxy;
mod server;
mod test_worker;

use std::path::PathBuf;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub use server::*;
#[allow(unused_imports)]
pub use test_worker::*;

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

/// The effective uid (many tests need root; CI is root).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

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
    // SAFETY: sysconf has no preconditions.
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
