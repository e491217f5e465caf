//! Connected workers: a registry of their sessions, capacity, images and
//! in-flight commands, and the worker protocol's conversions from the
//! domain's types. The server talks to a worker only through the command
//! channel of its session; a command's result comes back on the same
//! session. No rule of the domain lives here.

use crate::domain::scheduler::Amount;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use tokio::sync::{mpsc, oneshot};

pub mod calls;
#[cfg(test)]
pub mod fake;

pub type SessionTx = mpsc::Sender<std::result::Result<wpb::SessionResponse, tonic::Status>>;

struct Conn {
    session: u64,
    tx: SessionTx,
    capacity: Amount,
    /// What it last reported in use (see `scheduler::Placement`).
    used: Option<Amount>,
    data_address: String,
    /// Imported images it holds (the built-in `host` is everywhere).
    images: std::collections::HashSet<String>,
    /// The isolation levels it offers, by name (`container` always).
    levels: std::collections::HashSet<String>,
    pending: HashMap<String, oneshot::Sender<wpb::CommandResult>>,
}

pub struct WorkerHub {
    conns: Mutex<HashMap<String, Conn>>,
    next_session: std::sync::atomic::AtomicU64,
    metrics: Metrics,
    /// When this server started taking sessions.
    started: std::time::Instant,
    /// Woken when a session is attached.
    attached: tokio::sync::Notify,
}

impl WorkerHub {
    pub fn new(metrics: Metrics) -> Self {
        WorkerHub {
            conns: Mutex::new(HashMap::new()),
            next_session: 1.into(),
            metrics,
            started: std::time::Instant::now(),
            attached: tokio::sync::Notify::new(),
        }
    }

    /// Whether this server started less than `window` ago, with no worker
    /// session yet: its workers are still on their way (a restart).
    pub fn starting(&self, window: Duration) -> bool {
        self.started.elapsed() < window && self.conns.lock().expect("lock").is_empty()
    }

    /// Waits up to `at_most` for a worker's session (returns at once if
    /// one is attached).
    pub async fn first_worker(&self, at_most: Duration) {
        let notified = self.attached.notified();
        if !self.conns.lock().expect("lock").is_empty() {
            return;
        }
        let _ = tokio::time::timeout(at_most, notified).await;
    }

    /// Adds a worker's session, replacing an older one of the same worker.
    pub fn attach(
        &self,
        worker_id: &str,
        tx: SessionTx,
        capacity: Amount,
        data_address: String,
        images: Vec<String>,
        levels: Vec<String>,
    ) -> u64 {
        let session = self
            .next_session
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut conns = self.conns.lock().expect("lock");
        conns.insert(
            worker_id.to_string(),
            Conn {
                session,
                tx,
                capacity,
                used: None,
                data_address,
                images: images.into_iter().collect(),
                levels: levels
                    .into_iter()
                    .chain([crate::domain::isolation::Isolation::Container
                        .name()
                        .to_string()])
                    .collect(),
                pending: HashMap::new(),
            },
        );
        self.metrics.workers_connected.set(conns.len() as i64);
        drop(conns);
        self.attached.notify_waiters();
        session
    }

    /// Removes a session if it is still the current one.
    pub fn detach(&self, worker_id: &str, session: u64) {
        let mut conns = self.conns.lock().expect("lock");
        if conns.get(worker_id).is_some_and(|c| c.session == session) {
            conns.remove(worker_id);
        }
        self.metrics.workers_connected.set(conns.len() as i64);
    }

    /// Where the server reaches this worker's sandbox agents.
    pub fn data_address(&self, worker_id: &str) -> Option<String> {
        self.conns
            .lock()
            .expect("lock")
            .get(worker_id)
            .map(|c| c.data_address.clone())
            .filter(|a| !a.is_empty())
    }

    /// Whether sandboxes of `image` can be placed on this worker.
    pub fn has_image(&self, worker_id: &str, image: &str) -> bool {
        image == talon_core::image::HOST_IMAGE
            || self
                .conns
                .lock()
                .expect("lock")
                .get(worker_id)
                .is_some_and(|c| c.images.contains(image))
    }

    /// Whether a worker runs sandboxes at the level named `level`.
    pub fn offers(&self, worker_id: &str, level: &str) -> bool {
        self.conns
            .lock()
            .expect("lock")
            .get(worker_id)
            .is_some_and(|c| c.levels.contains(level))
    }

    /// Whether any connected worker does.
    pub fn any_offers(&self, level: &str) -> bool {
        self.conns
            .lock()
            .expect("lock")
            .values()
            .any(|c| c.levels.contains(level))
    }

    /// The imported images it holds, the levels it offers and what it
    /// last reported in use, as other servers place by them (recorded
    /// with its heartbeats); None when it is not connected here.
    pub fn inventory(&self, worker_id: &str) -> Option<(Vec<String>, Vec<String>, Option<Amount>)> {
        self.conns.lock().expect("lock").get(worker_id).map(|c| {
            let mut images: Vec<String> = c.images.iter().cloned().collect();
            let mut levels: Vec<String> = c.levels.iter().cloned().collect();
            images.sort();
            levels.sort();
            (images, levels, c.used.clone())
        })
    }

    /// Records that a worker gained (or lost) an image.
    pub fn set_image(&self, worker_id: &str, image: &str, held: bool) {
        if let Some(c) = self.conns.lock().expect("lock").get_mut(worker_id) {
            if held {
                c.images.insert(image.to_string());
            } else {
                c.images.remove(image);
            }
        }
    }

    /// Connected workers that run sandboxes, with their data-plane address.
    pub fn data_planes(&self) -> Vec<(String, String)> {
        self.conns
            .lock()
            .expect("lock")
            .iter()
            .filter(|(_, c)| !c.data_address.is_empty())
            .map(|(id, c)| (id.clone(), c.data_address.clone()))
            .collect()
    }

    pub fn is_connected(&self, worker_id: &str) -> bool {
        self.conns.lock().expect("lock").contains_key(worker_id)
    }

    /// Connected workers and their capacity.
    pub fn connected(&self) -> Vec<(String, Amount)> {
        self.conns
            .lock()
            .expect("lock")
            .iter()
            .map(|(id, c)| (id.clone(), c.capacity.clone()))
            .collect()
    }

    /// Records what a worker reports in use (its heartbeat).
    pub fn set_used(&self, worker_id: &str, used: Amount) {
        if let Some(c) = self.conns.lock().expect("lock").get_mut(worker_id) {
            c.used = Some(used);
        }
    }

    /// What a worker last reported in use; None before its first report.
    pub fn used(&self, worker_id: &str) -> Option<Amount> {
        self.conns
            .lock()
            .expect("lock")
            .get(worker_id)
            .and_then(|c| c.used.clone())
    }

    pub fn set_capacity(&self, worker_id: &str, capacity: Amount) {
        if let Some(c) = self.conns.lock().expect("lock").get_mut(worker_id) {
            c.capacity = capacity;
        }
    }

    /// Delivers a command's result to whoever waits for it. False when
    /// nobody does (a late or unknown result).
    pub fn resolve(&self, worker_id: &str, result: wpb::CommandResult) -> bool {
        let waiter = self
            .conns
            .lock()
            .expect("lock")
            .get_mut(worker_id)
            .and_then(|c| c.pending.remove(&result.command_id));
        match waiter {
            Some(tx) => tx.send(result).is_ok(),
            None => false,
        }
    }

    /// Sends a command and waits for its result.
    pub async fn call(
        &self,
        worker_id: &str,
        mut cmd: wpb::Command,
        timeout: Duration,
    ) -> Result<wpb::CommandResult> {
        if cmd.command_id.is_empty() {
            cmd.command_id = crate::ids::new_id("cmd");
        }
        let id = cmd.command_id.clone();
        let (tx, rx) = oneshot::channel();
        let session_tx = {
            let mut conns = self.conns.lock().expect("lock");
            let conn = conns.get_mut(worker_id).ok_or_else(|| {
                Error::Unavailable(format!("worker {worker_id} is not connected"))
            })?;
            conn.pending.insert(id.clone(), tx);
            conn.tx.clone()
        };
        let msg = wpb::SessionResponse {
            message: Some(wpb::session_response::Message::Command(cmd)),
        };
        if session_tx.send(Ok(msg)).await.is_err() {
            self.forget(worker_id, &id);
            return Err(Error::Unavailable(format!(
                "worker {worker_id} disconnected"
            )));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(_)) => Err(Error::Unavailable(format!(
                "worker {worker_id} disconnected"
            ))),
            Err(_) => {
                self.forget(worker_id, &id);
                Err(Error::Unavailable(format!(
                    "worker {worker_id} did not answer in {timeout:?}"
                )))
            }
        }
    }

    fn forget(&self, worker_id: &str, command_id: &str) {
        if let Some(c) = self.conns.lock().expect("lock").get_mut(worker_id) {
            c.pending.remove(command_id);
        }
    }
}

/// A policy as the worker protocol carries it.
pub fn network_policy(p: &crate::domain::policy::EgressPolicy) -> talon_proto::v1::NetworkPolicy {
    let parts = crate::domain::policy::PolicyParts::from(p);
    talon_proto::v1::NetworkPolicy {
        mode: parts.mode,
        allow_cidrs: parts.cidrs,
        allow_domains: parts.domains,
    }
}

/// The state a worker reports; None for one this server doesn't know.
pub fn reported_state(v: i32) -> Option<crate::domain::state::SandboxState> {
    use crate::domain::state::SandboxState as S;
    use talon_proto::v1::SandboxState as P;
    Some(match P::try_from(v).ok()? {
        P::Unspecified => return None,
        P::Pending => S::Pending,
        P::Starting => S::Starting,
        P::Running => S::Running,
        P::Paused => S::Paused,
        P::Stopping => S::Stopping,
        P::Stopped => S::Stopped,
        P::Failed => S::Failed,
        P::Deleted => S::Deleted,
    })
}

/// A command for a sandbox at the generation the server holds.
pub fn command(sandbox_id: &str, generation: i64, action: wpb::command::Action) -> wpb::Command {
    wpb::Command {
        command_id: crate::ids::new_id("cmd"),
        sandbox_id: sandbox_id.to_string(),
        generation,
        action: Some(action),
    }
}
