//! The Talon worker: one per host. It keeps one long-lived session with
//! the control plane (register, heartbeat, commands and their results,
//! events) and runs sandboxes through a runtime.
//!
//! This build has no sandbox runtime yet (that is the worker-runtime
//! issue): it registers with its real host capacity and answers every
//! command truthfully, refusing to build sandboxes with FAILED_PRECONDITION
//! and confirming deletes of sandboxes it does not hold. The session,
//! reconnect and fencing code here is what the runtime will plug into.

use std::path::PathBuf;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_control_service_client::WorkerControlServiceClient;
use talon_proto::v1::SandboxState;
use tokio_stream::StreamExt;

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The control plane's gRPC URL, e.g. `http://127.0.0.1:7070`.
    pub server_url: String,
    /// The worker token (`DATA_DIR/keys/worker.token` on the server).
    pub token: String,
    /// Where the worker keeps its id and, later, its sandboxes.
    pub data_dir: PathBuf,
    /// Most sandboxes this worker takes.
    pub max_sandboxes: i64,
}

/// This host's capacity: all its cores and memory.
pub fn host_capacity(max_sandboxes: i64) -> wpb::Capacity {
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
        cpu_millis: cpus * 1000,
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
    std::fs::write(&path, &id)?;
    Ok(id)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Answers one command. Without a runtime, nothing can be built, and a
/// delete of something never built is already done.
fn answer(cmd: &wpb::Command) -> wpb::CommandResult {
    use wpb::command::Action;
    let status = |state: SandboxState, message: &str| wpb::SandboxStatus {
        sandbox_id: cmd.sandbox_id.clone(),
        generation: cmd.generation,
        state: state as i32,
        message: message.to_string(),
    };
    const NO_RUNTIME: &str = "this worker has no sandbox runtime";
    match &cmd.action {
        Some(Action::Delete(_)) => wpb::CommandResult {
            command_id: cmd.command_id.clone(),
            code: 0,
            message: String::new(),
            status: Some(status(SandboxState::Deleted, "")),
        },
        Some(Action::Create(_)) | Some(Action::Start(_)) => wpb::CommandResult {
            command_id: cmd.command_id.clone(),
            code: tonic::Code::FailedPrecondition as i32,
            message: NO_RUNTIME.into(),
            status: Some(status(SandboxState::Failed, NO_RUNTIME)),
        },
        _ => wpb::CommandResult {
            command_id: cmd.command_id.clone(),
            code: tonic::Code::FailedPrecondition as i32,
            message: NO_RUNTIME.into(),
            status: None,
        },
    }
}

/// Runs the worker until `shutdown` turns true, reconnecting with backoff.
pub async fn run(
    config: WorkerConfig,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let id = worker_id(&config.data_dir)?;
    let mut backoff = Duration::from_millis(100);
    loop {
        let session = session(&config, &id);
        tokio::select! {
            r = session => {
                match r {
                    Ok(()) => tracing::info!(worker = %id, "session ended; reconnecting"),
                    Err(e) => tracing::warn!(worker = %id, error = %e, "session failed; reconnecting"),
                }
            }
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

async fn session(config: &WorkerConfig, id: &str) -> anyhow::Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(config.server_url.clone())?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .connect()
        .await?;
    let token: tonic::metadata::MetadataValue<_> = format!("Bearer {}", config.token).parse()?;
    let mut client =
        WorkerControlServiceClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
            req.metadata_mut().insert("authorization", token.clone());
            Ok(req)
        });
    let (tx, rx) = tokio::sync::mpsc::channel::<wpb::SessionRequest>(256);
    tx.send(wpb::SessionRequest {
        message: Some(wpb::session_request::Message::Register(wpb::Register {
            worker_id: id.to_string(),
            hostname: hostname(),
            capacity: Some(host_capacity(config.max_sandboxes)),
            runtimes: vec![],
            images: vec![],
            version: env!("CARGO_PKG_VERSION").to_string(),
            sandboxes: vec![],
        })),
    })
    .await?;
    let mut inbound = client
        .session(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut interval = Duration::from_secs(5);
    let mut beat = tokio::time::interval(interval);
    loop {
        tokio::select! {
            msg = inbound.next() => {
                let Some(msg) = msg else { return Ok(()) };
                match msg?.message {
                    Some(wpb::session_response::Message::Ack(ack)) => {
                        if let Some(d) = ack.heartbeat_interval.filter(|d| d.seconds > 0) {
                            interval = Duration::from_secs(d.seconds as u64);
                            beat = tokio::time::interval(interval);
                        }
                        tracing::info!(worker = %id, "registered with the control plane");
                    }
                    Some(wpb::session_response::Message::Command(cmd)) => {
                        let result = answer(&cmd);
                        tx.send(wpb::SessionRequest { message: Some(wpb::session_request::Message::Result(result)) }).await?;
                    }
                    None => {}
                }
            }
            _ = beat.tick() => {
                let hb = wpb::Heartbeat { used: Some(wpb::Capacity::default()), time: None };
                tx.send(wpb::SessionRequest { message: Some(wpb::session_request::Message::Heartbeat(hb)) }).await?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_reads_the_host() {
        let c = host_capacity(10);
        assert!(c.cpu_millis >= 1000);
        assert!(c.memory_mib > 0);
        assert_eq!(c.sandboxes, 10);
    }

    #[test]
    fn refuses_to_build_and_confirms_deletes() {
        let mk = |a| wpb::Command {
            command_id: "c".into(),
            sandbox_id: "s".into(),
            generation: 3,
            action: Some(a),
        };
        let r = answer(&mk(wpb::command::Action::Create(
            wpb::CreateSandboxCommand { spec: None },
        )));
        assert_eq!(r.code, tonic::Code::FailedPrecondition as i32);
        assert_eq!(r.status.unwrap().state, SandboxState::Failed as i32);
        let r = answer(&mk(wpb::command::Action::Delete(
            wpb::DeleteSandboxCommand {},
        )));
        assert_eq!(r.code, 0);
        let s = r.status.unwrap();
        assert_eq!((s.state, s.generation), (SandboxState::Deleted as i32, 3));
    }
}
