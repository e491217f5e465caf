//! Sandboxes: creation with quota and placement, lifecycle commands to the
//! worker, waiting, timeouts, and applying what workers report.
//!
//! - `record`: reading a stored row's typed fields, fail closed;
//! - `validate`: a create request's rules;
//! - `quota`: what tenants hold, and the reservation create and start take;
//! - `lifecycle`: the one writer of state and generation, and the fence;
//! - `control`: commands to workers, and what their reports change;
//! - `ops`: what callers ask (create, pause, resume, stop, start, delete,
//!   timeouts, policies, waits, reassignment);
//! - `reads`: tenant-scoped lookups and lists;
//! - `metrics`: what a sandbox uses now, read by its worker;
//! - `idle`: idle auto-pause (the worker's report) and auto-resume;
//! - `recovery`: a registration's report set right (a host restart, an
//!   operation a crash cut short).

mod control;
#[cfg(test)]
mod control_tests;
pub mod history;
mod idle;
mod lifecycle;
mod metrics;
mod moves;
mod ops;
#[cfg(test)]
mod ops_tests;
mod quota;
mod reads;
mod record;
mod recovery;
mod validate;

pub use control::{apply_status, orphans, reconcile, require_worker, secrets_changed};
pub use idle::{apply_event, ensure_running};
pub use lifecycle::{Edge, fence};
pub use metrics::{Metrics, metrics};
pub use moves::reassign;
pub(crate) use moves::{move_to, restart_in_place};
pub use ops::{
    create, delete, enforce_timeouts, pause, resume, set_timeout, start, stop,
    update_network_policy, wait_until_running,
};
pub use quota::{Holdings, holdings};
pub use reads::{
    Lagged, ListQuery, access_token, find, get, get_cached, list, not_deleted, on_worker, watch,
};
pub use record::{
    RestartPolicy, TimeoutAction, WorkerLoss, labels_of, metadata_of, policy_of, restart_policy_of,
    state_of, timeout_action_of, worker_loss_of,
};
pub use recovery::settle_stale;
pub use validate::{metadata_filter, parse_label_selector};

use crate::app::{App, SandboxEvent};
use crate::db::entity::sandbox;
use crate::domain::policy::EgressPolicy;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::time::Duration;

/// A create request, converted from the API at the edge.
#[derive(Clone, Debug, Default)]
pub struct NewSandbox {
    pub image: String,
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub disk_mib: i64,
    pub max_pids: i64,
    pub labels: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub secret_names: Vec<String>,
    pub network_policy: Option<EgressPolicy>,
    pub timeout: Option<Duration>,
    pub timeout_action: Option<TimeoutAction>,
    pub metadata: BTreeMap<String, String>,
    /// See `CreateSandboxRequest.idempotency_key`.
    pub idempotency_key: Option<String>,
    /// See `Sandbox.idle_timeout`; None or zero: never.
    pub idle_timeout: Option<Duration>,
    /// See `Sandbox.auto_resume`.
    pub auto_resume: bool,
    /// See `Sandbox.snapshot_id`: create from the tenant's snapshot.
    pub snapshot_id: Option<String>,
    /// See `Sandbox.isolation`.
    pub isolation: crate::domain::isolation::Isolation,
    /// See `Sandbox.volume_mounts`.
    pub volume_mounts: Vec<crate::domain::volumes::MountRequest>,
    /// See `Sandbox.restart_policy`; None: always.
    pub restart_policy: Option<RestartPolicy>,
    /// See `Sandbox.worker_loss_action`; None: the platform's default.
    pub worker_loss: Option<WorkerLoss>,
}

async fn reload(app: &App, id: &str) -> Result<sandbox::Model> {
    sandbox::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {id}")))
}

/// Tells watchers and the hot-read cache that a sandbox changed.
pub fn publish(app: &App, row: &sandbox::Model) {
    app.emit(SandboxEvent {
        sandbox: row.clone(),
        kind: crate::app::EventKind::StateChanged,
        message: String::new(),
    });
}

use sea_orm::EntityTrait;
