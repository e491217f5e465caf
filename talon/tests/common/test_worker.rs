//! `TestWorker`: registers over the real worker session with the worker
//! token and answers commands as a test scripts it; it stands in for a
//! runtime in control-plane tests only.

use super::*;

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
            container_gone: false,
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
                    container_gone: false,
                })),
            })
            .await
            .unwrap();
    }
}
