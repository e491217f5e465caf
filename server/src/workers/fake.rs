//! A recording fake of `WorkerCalls` for the domain's unit tests, as the
//! worker's fake runtime is for its host logic. Workers "connect" as a
//! session would make them (their row registered, a session in the hub
//! whose channel nobody reads), every call is recorded, and each command
//! is answered by a script: by default as a healthy worker would, the
//! sandbox in the state the command asks for.

use super::calls::WorkerCalls;
use crate::app::App;
use crate::domain::scheduler::Amount;
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1::SandboxState as P;
use tonic::transport::Channel;

/// One call the domain made.
#[derive(Clone, Debug)]
pub enum Call {
    Command {
        worker: String,
        cmd: wpb::Command,
    },
    Usage {
        addr: String,
        sandbox_id: String,
    },
    Snapshot {
        addr: String,
        req: wpb::SnapshotSandboxRequest,
    },
    DeleteImage {
        addr: String,
        name: String,
    },
}

impl Call {
    /// The command's action's name ("create", "stop", ...), if a command.
    pub fn action(&self) -> Option<&'static str> {
        use wpb::command::Action as A;
        let Call::Command { cmd, .. } = self else {
            return None;
        };
        Some(match cmd.action.as_ref()? {
            A::Create(_) => "create",
            A::Start(_) => "start",
            A::Stop(_) => "stop",
            A::Pause(_) => "pause",
            A::Resume(_) => "resume",
            A::Delete(_) => "delete",
            A::UpdateNetworkPolicy(_) => "policy",
            A::Prewarm(_) => "prewarm",
            A::UpdateSecrets(_) => "secrets",
            A::DeleteVolume(_) => "delete-volume",
        })
    }
}

type Script = dyn Fn(&str, &wpb::Command) -> Option<Result<wpb::CommandResult>> + Send + Sync;

#[derive(Default)]
pub struct FakeWorkers {
    calls: Mutex<Vec<Call>>,
    script: Mutex<Option<Box<Script>>>,
    /// The connected workers' session channels, kept open.
    sessions: Mutex<
        Vec<tokio::sync::mpsc::Receiver<std::result::Result<wpb::SessionResponse, tonic::Status>>>,
    >,
}

impl FakeWorkers {
    pub fn new() -> Arc<FakeWorkers> {
        Arc::new(FakeWorkers::default())
    }

    /// Connects a worker of `capacity` (cpu millis, MiB, sandboxes): its
    /// row as a registration writes it, and a session in the hub.
    pub async fn connect(&self, app: &App, id: &str, capacity: (i64, i64, i64)) {
        let capacity = Amount {
            cpu_millis: capacity.0,
            memory_mib: capacity.1,
            sandboxes: capacity.2,
        };
        crate::domain::workers::register(
            app,
            &crate::domain::workers::Registration {
                worker_id: id,
                hostname: id,
                capacity: capacity.clone(),
                runtimes: &["runc".to_string()],
                version: "test",
                data_address: &format!("{id}.test:7071"),
                workspace_backend: "local",
            },
        )
        .await
        .expect("register");
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        app.hub().attach(
            id,
            tx,
            capacity,
            format!("{id}.test:7071"),
            Vec::new(),
            vec!["container".to_string()],
        );
        self.sessions.lock().expect("lock").push(rx);
    }

    /// Answers commands with `f` where it returns an answer; the default
    /// answer otherwise.
    pub fn script(
        &self,
        f: impl Fn(&str, &wpb::Command) -> Option<Result<wpb::CommandResult>> + Send + Sync + 'static,
    ) {
        *self.script.lock().expect("lock") = Some(Box::new(f));
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().expect("lock").clone()
    }

    /// The commands so far as (worker, action, sandbox id).
    pub fn commands(&self) -> Vec<(String, &'static str, String)> {
        self.calls()
            .into_iter()
            .filter_map(|c| {
                let action = c.action()?;
                match c {
                    Call::Command { worker, cmd } => Some((worker, action, cmd.sandbox_id)),
                    _ => None,
                }
            })
            .collect()
    }

    /// The commands sent whose action `pick` takes, as (worker, what it
    /// took).
    pub fn sent<T>(&self, pick: impl Fn(&wpb::command::Action) -> Option<T>) -> Vec<(String, T)> {
        self.calls()
            .into_iter()
            .filter_map(|c| match c {
                Call::Command { worker, cmd } => Some((worker, pick(cmd.action.as_ref()?)?)),
                _ => None,
            })
            .collect()
    }

    pub fn clear(&self) {
        self.calls.lock().expect("lock").clear();
    }

    fn record(&self, c: Call) {
        self.calls.lock().expect("lock").push(c);
    }
}

/// What a healthy worker answers: the sandbox in the state asked for.
pub fn healthy(cmd: &wpb::Command) -> wpb::CommandResult {
    use wpb::command::Action as A;
    let state = match cmd.action.as_ref() {
        Some(A::Create(_) | A::Start(_) | A::Resume(_) | A::UpdateNetworkPolicy(_)) => {
            Some(P::Running)
        }
        Some(A::Stop(_)) => Some(P::Stopped),
        Some(A::Pause(_)) => Some(P::Paused),
        Some(A::Delete(_)) => Some(P::Deleted),
        _ => None,
    };
    let pool_ready = match cmd.action.as_ref() {
        Some(A::Prewarm(p)) => p.pool_size,
        _ => 0,
    };
    wpb::CommandResult {
        command_id: cmd.command_id.clone(),
        code: 0,
        message: String::new(),
        status: state.map(|s| status(cmd, s, "")),
        pool_ready,
    }
}

/// A status for the command's sandbox at its generation.
pub fn status(cmd: &wpb::Command, state: P, message: &str) -> wpb::SandboxStatus {
    wpb::SandboxStatus {
        sandbox_id: cmd.sandbox_id.clone(),
        generation: cmd.generation,
        state: state as i32,
        message: message.to_string(),
        fenced: false,
        container_gone: false,
    }
}

/// A command the worker answered with `code` and no status.
pub fn refused(cmd: &wpb::Command, code: tonic::Code, message: &str) -> wpb::CommandResult {
    wpb::CommandResult {
        command_id: cmd.command_id.clone(),
        code: code as i32,
        message: message.to_string(),
        status: None,
        pool_ready: 0,
    }
}

#[tonic::async_trait]
impl WorkerCalls for FakeWorkers {
    async fn command(
        &self,
        app: &App,
        worker_id: &str,
        cmd: wpb::Command,
        _timeout: Duration,
    ) -> Result<wpb::CommandResult> {
        self.record(Call::Command {
            worker: worker_id.to_string(),
            cmd: cmd.clone(),
        });
        if !app.hub().is_connected(worker_id) {
            return Err(Error::Unavailable(format!(
                "worker {worker_id} is not connected"
            )));
        }
        let scripted = self
            .script
            .lock()
            .expect("lock")
            .as_ref()
            .and_then(|f| f(worker_id, &cmd));
        scripted.unwrap_or_else(|| Ok(healthy(&cmd)))
    }

    async fn usage(
        &self,
        addr: &str,
        sandbox_id: &str,
        _generation: i64,
    ) -> Result<wpb::GetSandboxUsageResponse> {
        self.record(Call::Usage {
            addr: addr.into(),
            sandbox_id: sandbox_id.into(),
        });
        Ok(wpb::GetSandboxUsageResponse::default())
    }

    async fn snapshot(
        &self,
        addr: &str,
        _generation: i64,
        req: wpb::SnapshotSandboxRequest,
        _progress: &tokio::sync::watch::Sender<wpb::TakeSnapshotResponse>,
    ) -> Result<wpb::SnapshotSandboxResponse> {
        self.record(Call::Snapshot {
            addr: addr.into(),
            req,
        });
        Ok(wpb::SnapshotSandboxResponse::default())
    }

    async fn delete_image(&self, addr: &str, name: &str) -> Result<()> {
        self.record(Call::DeleteImage {
            addr: addr.into(),
            name: name.into(),
        });
        Ok(())
    }

    fn channel(&self, addr: &str) -> Result<Channel> {
        Err(Error::Unavailable(format!(
            "no data plane at {addr} in a unit test"
        )))
    }

    fn authorize(&self, metadata: &mut tonic::metadata::MetadataMap) {
        metadata.insert("authorization", "Bearer fake".parse().expect("ascii"));
    }
}

impl App {
    /// `for_tests`, with its calls to workers going to a fake.
    pub async fn with_fake_workers() -> (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir) {
        let fake = FakeWorkers::new();
        let (app, dir) = App::for_tests_with(fake.clone()).await;
        (app, fake, dir)
    }
}
