//! Sandboxes: creation with quota and placement, lifecycle commands to the
//! worker, waiting, timeouts, and applying what workers report. All state
//! writes go through `transition`, a conditional update on the expected
//! state and generation, so a stale worker or a racing call cannot move a
//! sandbox along an edge the state machine lacks.

use crate::app::{App, SandboxEvent};
use crate::auth::Principal;
use crate::db::entity::{sandbox, tenant};
use crate::db::now_ms;
use crate::domain::policy::EgressPolicy;
use crate::domain::scheduler::{self, Amount, Candidate};
use crate::domain::state::SandboxState;
use crate::domain::tenants;
use crate::error::{Error, Result};
use sea_orm::sea_query::{Expr, LockType};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DbBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, TransactionTrait,
};
use std::collections::BTreeMap;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutAction {
    Pause,
    Delete,
}

impl TimeoutAction {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutAction::Pause => "pause",
            TimeoutAction::Delete => "delete",
        }
    }
    pub fn parse(s: &str) -> Self {
        if s == "delete" {
            TimeoutAction::Delete
        } else {
            TimeoutAction::Pause
        }
    }
}

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
}

pub fn state_of(m: &sandbox::Model) -> SandboxState {
    m.state.parse().unwrap_or(SandboxState::Failed)
}

pub fn policy_of(m: &sandbox::Model) -> EgressPolicy {
    serde_json::from_str(&m.network_policy).unwrap_or(EgressPolicy::Open)
}

fn validate_labels(labels: &BTreeMap<String, String>) -> Result<()> {
    if labels.len() > 64 {
        return Err(Error::InvalidArgument("at most 64 labels".into()));
    }
    for (k, v) in labels {
        let key_ok = !k.is_empty()
            && k.len() <= 63
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
        if !key_ok {
            return Err(Error::InvalidArgument(format!("invalid label key {k:?}")));
        }
        if v.len() > 255 || v.contains([',', '=']) || v.chars().any(char::is_control) {
            return Err(Error::InvalidArgument(format!(
                "invalid value for label {k:?}"
            )));
        }
    }
    Ok(())
}

fn validate_env(env: &BTreeMap<String, String>) -> Result<()> {
    let mut total = 0;
    for (k, v) in env {
        let ok = !k.is_empty()
            && !k.as_bytes()[0].is_ascii_digit()
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !ok {
            return Err(Error::InvalidArgument(format!(
                "invalid environment variable name {k:?}"
            )));
        }
        if v.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "environment variable {k} contains NUL"
            )));
        }
        total += k.len() + v.len() + 2;
    }
    if total > 128 * 1024 {
        return Err(Error::InvalidArgument(
            "environment is larger than 128 KiB".into(),
        ));
    }
    Ok(())
}

fn resolve_resources(app: &App, n: &mut NewSandbox) -> Result<()> {
    let d = app.config.default_resources;
    let m = app.config.max_resources;
    for (name, v, def, max) in [
        ("cpu_millis", &mut n.cpu_millis, d.cpu_millis, m.cpu_millis),
        ("memory_mib", &mut n.memory_mib, d.memory_mib, m.memory_mib),
        ("disk_mib", &mut n.disk_mib, d.disk_mib, m.disk_mib),
        ("max_pids", &mut n.max_pids, d.max_pids, m.max_pids),
    ] {
        if *v < 0 {
            return Err(Error::InvalidArgument(format!(
                "resources.{name} must not be negative"
            )));
        }
        if *v == 0 {
            *v = def;
        }
        if *v > max {
            return Err(Error::InvalidArgument(format!(
                "resources.{name} is above the maximum of {max}"
            )));
        }
    }
    if n.cpu_millis < 10 || n.memory_mib < 16 {
        return Err(Error::InvalidArgument(
            "a sandbox needs at least 10 cpu millis and 16 MiB".into(),
        ));
    }
    Ok(())
}

/// Candidates for placement: connected, undrained workers, with what live
/// sandboxes already hold on each.
async fn candidates(
    app: &App,
    db: &impl ConnectionTrait,
    exclude: Option<&str>,
    image: &str,
) -> Result<Vec<Candidate>> {
    let connected = app.hub.connected();
    if connected.is_empty() {
        return Ok(vec![]);
    }
    let drained: Vec<String> = crate::db::entity::worker::Entity::find()
        .filter(crate::db::entity::worker::Column::Draining.eq(true))
        .all(db)
        .await?
        .into_iter()
        .map(|w| w.id)
        .collect();
    let live: Vec<&str> = SandboxState::LIVE.iter().map(|s| s.as_str()).collect();
    let rows: Vec<(Option<String>, i64, i64)> = sandbox::Entity::find()
        .select_only()
        .column(sandbox::Column::WorkerId)
        .column(sandbox::Column::CpuMillis)
        .column(sandbox::Column::MemoryMib)
        .filter(sandbox::Column::State.is_in(live))
        .filter(sandbox::Column::WorkerId.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    Ok(connected
        .into_iter()
        .filter(|(id, _)| {
            !drained.contains(id) && Some(id.as_str()) != exclude && app.hub.has_image(id, image)
        })
        .map(|(id, capacity)| {
            let mut allocated = Amount::default();
            for (w, cpu, mem) in &rows {
                if w.as_deref() == Some(id.as_str()) {
                    allocated.cpu_millis += cpu;
                    allocated.memory_mib += mem;
                    allocated.sandboxes += 1;
                }
            }
            Candidate {
                worker_id: id,
                capacity,
                allocated,
            }
        })
        .collect())
}

fn check_quota(
    t: &tenant::Model,
    u: &tenants::Usage,
    add_sandbox: bool,
    cpu: i64,
    mem: i64,
) -> Result<()> {
    if add_sandbox && u.sandboxes + 1 > t.max_sandboxes {
        return Err(Error::ResourceExhausted(format!(
            "quota: tenant holds {} of {} sandboxes",
            u.sandboxes, t.max_sandboxes
        )));
    }
    if u.cpu_millis + cpu > t.max_cpu_millis {
        return Err(Error::ResourceExhausted(format!(
            "quota: {} + {} cpu millis is over the tenant's {}",
            u.cpu_millis, cpu, t.max_cpu_millis
        )));
    }
    if u.memory_mib + mem > t.max_memory_mib {
        return Err(Error::ResourceExhausted(format!(
            "quota: {} + {} MiB is over the tenant's {} MiB",
            u.memory_mib, mem, t.max_memory_mib
        )));
    }
    Ok(())
}

/// The fair-share cap (see `scheduler::over_share`) on what a tenant other
/// than the platform's may hold of the connected, undrained workers.
async fn check_share(
    app: &App,
    db: &impl ConnectionTrait,
    t: &tenant::Model,
    u: &tenants::Usage,
    req: &Amount,
) -> Result<()> {
    if t.platform || app.config.tenant_max_share >= 1.0 {
        return Ok(());
    }
    let drained: Vec<String> = crate::db::entity::worker::Entity::find()
        .filter(crate::db::entity::worker::Column::Draining.eq(true))
        .all(db)
        .await?
        .into_iter()
        .map(|w| w.id)
        .collect();
    let mut total = Amount::default();
    for (id, cap) in app.hub.connected() {
        if !drained.contains(&id) {
            total.cpu_millis += cap.cpu_millis;
            total.memory_mib += cap.memory_mib;
            total.sandboxes += cap.sandboxes;
        }
    }
    if total == Amount::default() {
        // No capacity at all: placement says so (UNAVAILABLE).
        return Ok(());
    }
    let held = Amount {
        cpu_millis: u.cpu_millis,
        memory_mib: u.memory_mib,
        sandboxes: u.live_sandboxes,
    };
    match scheduler::over_share(&held, req, &total, app.config.tenant_max_share) {
        Some(why) => Err(Error::ResourceExhausted(why)),
        None => Ok(()),
    }
}

/// Reads the tenant row inside a transaction, locking it on PostgreSQL so
/// that quota checks on several servers serialize too.
async fn tenant_for_update(
    txn: &sea_orm::DatabaseTransaction,
    tenant_id: &str,
) -> Result<tenant::Model> {
    let mut q = tenant::Entity::find_by_id(tenant_id.to_string());
    if txn.get_database_backend() == DbBackend::Postgres {
        q = q.lock(LockType::Update);
    }
    q.one(txn)
        .await?
        .ok_or_else(|| Error::NotFound(format!("tenant {tenant_id}")))
}

use sea_orm::ConnectionTrait;

pub async fn create(app: &App, p: &Principal, mut n: NewSandbox) -> Result<sandbox::Model> {
    let t0 = std::time::Instant::now();
    if n.image.is_empty() {
        n.image = talon_core::image::HOST_IMAGE.into();
    }
    if n.image.len() > 255 || n.image.contains(char::is_whitespace) {
        return Err(Error::InvalidArgument("invalid image name".into()));
    }
    if !crate::domain::images::exists(app, &n.image).await? {
        return Err(Error::NotFound(format!(
            "image {:?} (ListImages shows those available)",
            n.image
        )));
    }
    resolve_resources(app, &mut n)?;
    validate_labels(&n.labels)?;
    validate_env(&n.env)?;
    let policy = n.network_policy.clone().unwrap_or(EgressPolicy::Open);
    policy.validate()?;
    let timeout = n.timeout.unwrap_or(app.config.default_sandbox_timeout);
    if timeout.is_zero() || timeout > app.config.max_sandbox_timeout {
        return Err(Error::InvalidArgument(format!(
            "timeout must be between 1 s and {} s",
            app.config.max_sandbox_timeout.as_secs()
        )));
    }
    // Named secrets must exist and not clash with `env`; checked before
    // anything is created, and resolved again when the spec is sent.
    let resolved = crate::domain::secrets::resolve(app, &p.tenant_id, &n.secret_names).await?;
    if let Some(k) = resolved.env.keys().find(|k| n.env.contains_key(*k)) {
        return Err(Error::InvalidArgument(format!(
            "{k} is both an environment variable and a secret"
        )));
    }
    let checked = t0.elapsed();
    let lock = app.tenant_lock(&p.tenant_id);
    let _guard = lock.lock().await;
    let txn = crate::db::begin_write(&app.db).await?;
    let t = tenant_for_update(&txn, &p.tenant_id).await?;
    let u = tenants::usage(&txn, &p.tenant_id).await?;
    check_quota(&t, &u, true, n.cpu_millis, n.memory_mib)?;
    let req = Amount {
        cpu_millis: n.cpu_millis,
        memory_mib: n.memory_mib,
        sandboxes: 1,
    };
    check_share(app, &txn, &t, &u, &req).await?;
    let cands = candidates(app, &txn, None, &n.image).await?;
    // No worker at all is an outage (UNAVAILABLE, retry); workers that are
    // all full is a limit reached (RESOURCE_EXHAUSTED, like a quota).
    let worker = scheduler::place(&cands, &req).ok_or_else(|| {
        if cands.is_empty() {
            Error::Unavailable(if app.hub.connected().is_empty() {
                "no worker is connected".to_string()
            } else {
                format!("no connected, undrained worker holds image {:?}", n.image)
            })
        } else {
            Error::ResourceExhausted(
                "no worker has capacity for this sandbox; delete or stop sandboxes, or add workers"
                    .to_string(),
            )
        }
    })?;
    let now = now_ms();
    let row = sandbox::ActiveModel {
        id: Set(crate::ids::new_id("sbx")),
        tenant_id: Set(p.tenant_id.clone()),
        owner_id: Set(p.actor_id().to_string()),
        image: Set(n.image.clone()),
        state: Set(SandboxState::Starting.as_str().into()),
        state_message: Set(String::new()),
        generation: Set(1),
        worker_id: Set(Some(worker.worker_id.clone())),
        cpu_millis: Set(n.cpu_millis),
        memory_mib: Set(n.memory_mib),
        disk_mib: Set(n.disk_mib),
        max_pids: Set(n.max_pids),
        labels: Set(serde_json::to_string(&n.labels)?),
        env: Set(serde_json::to_string(&n.env)?),
        secret_names: Set(serde_json::to_string(&n.secret_names)?),
        network_policy: Set(serde_json::to_string(&policy)?),
        timeout_ms: Set(timeout.as_millis() as i64),
        timeout_action: Set(n
            .timeout_action
            .unwrap_or(TimeoutAction::Pause)
            .as_str()
            .into()),
        created_at: Set(now),
        updated_at: Set(now),
        expires_at: Set(Some(now + timeout.as_millis() as i64)),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    drop(_guard);
    let stored = t0.elapsed();
    publish(app, &row);
    dispatch_create(app, row.clone()).await?;
    tracing::debug!(sandbox = %row.id, ?checked, ?stored, dispatched = ?t0.elapsed(), "sandbox placed");
    Ok(row)
}

/// The spec a worker builds from: the stored request, with the named
/// secrets decrypted now (never stored in the sandbox row).
async fn spec(app: &App, row: &sandbox::Model) -> Result<wpb::SandboxSpec> {
    let mut env: BTreeMap<String, String> = serde_json::from_str(&row.env)?;
    let names: Vec<String> = serde_json::from_str(&row.secret_names)?;
    let resolved = crate::domain::secrets::resolve(app, &row.tenant_id, &names).await?;
    for (k, v) in resolved.env {
        if env.insert(k.clone(), v).is_some() {
            return Err(Error::InvalidArgument(format!(
                "{k} is both an environment variable and a secret"
            )));
        }
    }
    Ok(wpb::SandboxSpec {
        image: row.image.clone(),
        resources: Some(talon_proto::v1::Resources {
            cpu_millis: row.cpu_millis,
            memory_mib: row.memory_mib,
            disk_mib: row.disk_mib,
            max_pids: row.max_pids,
        }),
        env: env.into_iter().collect(),
        network_policy: Some(crate::api::convert::policy_to_pb(&policy_of(row))),
        tenant_id: row.tenant_id.clone(),
        runtime: String::new(),
        secret_files: resolved.files.into_iter().collect(),
    })
}

/// Sends the create command for a placed sandbox, in the background.
async fn dispatch_create(app: &App, row: sandbox::Model) -> Result<()> {
    let spec = spec(app, &row).await?;
    let cmd = command(
        &row,
        wpb::command::Action::Create(wpb::CreateSandboxCommand { spec: Some(spec) }),
    );
    dispatch(app, row, cmd);
    Ok(())
}

fn command(row: &sandbox::Model, action: wpb::command::Action) -> wpb::Command {
    wpb::Command {
        command_id: crate::ids::new_id("cmd"),
        sandbox_id: row.id.clone(),
        generation: row.generation,
        action: Some(action),
    }
}

/// Sends a command in the background and applies its result.
fn dispatch(app: &App, row: sandbox::Model, cmd: wpb::Command) {
    let Some(worker) = row.worker_id.clone() else {
        return;
    };
    let app = app.self_arc();
    tokio::spawn(async move {
        let timeout = app.config.worker_command_timeout;
        let t0 = std::time::Instant::now();
        match app.hub.call(&worker, cmd, timeout).await {
            Ok(result) => {
                let answered = t0.elapsed();
                let status = result.status.clone();
                if let Err(e) = apply_result(&app, &worker, &row, result).await {
                    tracing::warn!(sandbox = %row.id, error = %e, "command result not applied");
                    // Deleted (or moved) while it was built: the worker
                    // must not keep what nobody knows.
                    if let Some(s) =
                        status.filter(|s| s.state != talon_proto::v1::SandboxState::Deleted as i32)
                    {
                        for cmd in orphans(&app, &worker, &[s]).await {
                            let _ = app.hub.call(&worker, cmd, timeout).await;
                        }
                    }
                }

                tracing::debug!(sandbox = %row.id, ?answered, applied = ?t0.elapsed(), "worker command done");
            }
            Err(e) => tracing::warn!(sandbox = %row.id, error = %e, "command not delivered"),
        }
    });
}

/// Applies a command's result: its reported status, or FAILED with the
/// worker's message when the command failed and no status came back.
async fn apply_result(
    app: &App,
    worker: &str,
    row: &sandbox::Model,
    r: wpb::CommandResult,
) -> Result<sandbox::Model> {
    let status = match r.status {
        Some(s) => s,
        None if r.code != 0 => wpb::SandboxStatus {
            sandbox_id: row.id.clone(),
            generation: row.generation,
            state: talon_proto::v1::SandboxState::Failed as i32,
            message: r.message.clone(),
        },
        None => return Ok(row.clone()),
    };
    apply_status(app, worker, &status).await
}

/// Applies what a worker reports about a sandbox, fenced by generation and
/// worker: a report from a worker that no longer holds the sandbox, or of
/// an older generation, is refused.
pub async fn apply_status(
    app: &App,
    worker: &str,
    s: &wpb::SandboxStatus,
) -> Result<sandbox::Model> {
    let to = crate::api::convert::state_from_pb(s.state)
        .ok_or_else(|| Error::InvalidArgument("status has no state".into()))?;
    let row = sandbox::Entity::find_by_id(s.sandbox_id.clone())
        .one(&app.db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {}", s.sandbox_id)))?;
    if row.worker_id.as_deref() != Some(worker) || row.generation != s.generation {
        app.metrics.stale_events.inc();
        return Err(Error::Aborted(format!(
            "stale report for {} (generation {}, current {})",
            s.sandbox_id, s.generation, row.generation
        )));
    }
    let from = state_of(&row);
    if from == to {
        return Ok(row);
    }
    transition(app, &row, &[from], to, &s.message).await
}

/// Moves a sandbox from one of `from` to `to`, if its generation is still
/// the one in `row`. The only writer of `state`.
pub async fn transition(
    app: &App,
    row: &sandbox::Model,
    from: &[SandboxState],
    to: SandboxState,
    message: &str,
) -> Result<sandbox::Model> {
    let current = state_of(row);
    if !from.contains(&current) || !current.can_become(to) {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {current}, not able to become {to}",
            row.id
        )));
    }
    let now = now_ms();
    let mut q = sandbox::Entity::update_many()
        .col_expr(sandbox::Column::State, Expr::value(to.as_str()))
        .col_expr(sandbox::Column::StateMessage, Expr::value(message))
        .col_expr(sandbox::Column::UpdatedAt, Expr::value(now));
    if to == SandboxState::Running && current == SandboxState::Paused {
        // A resumed sandbox gets its whole timeout again.
        q = q.col_expr(
            sandbox::Column::ExpiresAt,
            Expr::value(now + row.timeout_ms),
        );
    }
    let res = q
        .filter(sandbox::Column::Id.eq(&row.id))
        .filter(sandbox::Column::Generation.eq(row.generation))
        .filter(sandbox::Column::State.eq(current.as_str()))
        .exec(&app.db)
        .await?;
    // At once, even if the reload below fails.
    app.running.forget(&row.id);
    let fresh = reload(app, &row.id).await?;
    if res.rows_affected != 1 {
        return Err(Error::Aborted(format!(
            "sandbox {} changed concurrently; it is now {}",
            row.id,
            state_of(&fresh)
        )));
    }
    publish(app, &fresh);
    Ok(fresh)
}

async fn reload(app: &App, id: &str) -> Result<sandbox::Model> {
    sandbox::Entity::find_by_id(id.to_string())
        .one(&app.db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {id}")))
}

fn publish(app: &App, row: &sandbox::Model) {
    app.running.forget(&row.id);
    let _ = app.events.send(SandboxEvent {
        sandbox: row.clone(),
    });
}

/// The repository's tenant-scoped lookup: another tenant's sandbox is
/// NOT_FOUND, exactly like a missing one.
pub async fn get(app: &App, p: &Principal, id: &str) -> Result<sandbox::Model> {
    if !crate::ids::valid_id("sbx", id) {
        return Err(Error::NotFound(format!("sandbox {id}")));
    }
    sandbox::Entity::find_by_id(id.to_string())
        .filter(sandbox::Column::TenantId.eq(&p.tenant_id))
        .one(&app.db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {id}")))
}

/// `get` for the hot reads: GetSandbox and the data-plane calls (process,
/// PTY, file), which come many at a time for one running sandbox. A
/// running sandbox's row is reused for a moment (see cache.rs); every
/// change to a sandbox on this server forgets it.
pub async fn get_cached(app: &App, p: &Principal, id: &str) -> Result<sandbox::Model> {
    if let Some(row) = app.running.get(id).filter(|r| r.tenant_id == p.tenant_id) {
        return Ok(row);
    }
    let generation = app.running.generation();
    let row = get(app, p, id).await?;
    if state_of(&row) == SandboxState::Running {
        app.running.put(id.to_string(), generation, &row, None);
    }
    Ok(row)
}

/// A sandbox by id in any tenant, for callers whose credential already
/// names the tenant (a preview token); None when there is none.
pub async fn find(app: &App, id: &str) -> Result<Option<sandbox::Model>> {
    if !crate::ids::valid_id("sbx", id) {
        return Ok(None);
    }
    Ok(sandbox::Entity::find_by_id(id.to_string())
        .one(&app.db)
        .await?)
}

pub struct ListQuery {
    pub offset: u64,
    pub limit: u64,
    pub labels: Vec<(String, String)>,
    pub states: Vec<SandboxState>,
}

pub fn parse_label_selector(s: &str) -> Result<Vec<(String, String)>> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("label selector {p:?} is not key=value"))
                })
        })
        .collect()
}

/// One page, newest first. Label matching happens here rather than in SQL
/// (labels are a JSON column on both backends); the scan reads in batches
/// and the offset counts matching rows, so pages stay stable.
pub async fn list(app: &App, p: &Principal, q: ListQuery) -> Result<(Vec<sandbox::Model>, bool)> {
    let states: Vec<&str> = if q.states.is_empty() {
        SandboxState::ALL
            .iter()
            .filter(|s| **s != SandboxState::Deleted)
            .map(|s| s.as_str())
            .collect()
    } else {
        q.states.iter().map(|s| s.as_str()).collect()
    };
    let base = sandbox::Entity::find()
        .filter(sandbox::Column::TenantId.eq(&p.tenant_id))
        .filter(sandbox::Column::State.is_in(states))
        .order_by_desc(sandbox::Column::CreatedAt)
        .order_by_desc(sandbox::Column::Id);
    if q.labels.is_empty() {
        let mut rows = base
            .offset(q.offset)
            .limit(q.limit + 1)
            .all(&app.db)
            .await?;
        let more = rows.len() as u64 > q.limit;
        rows.truncate(q.limit as usize);
        return Ok((rows, more));
    }
    let mut matched = 0u64;
    let mut out = Vec::new();
    let mut scanned = 0u64;
    const BATCH: u64 = 500;
    loop {
        let batch = base
            .clone()
            .offset(scanned)
            .limit(BATCH)
            .all(&app.db)
            .await?;
        let n = batch.len() as u64;
        scanned += n;
        for row in batch {
            let labels: BTreeMap<String, String> =
                serde_json::from_str(&row.labels).unwrap_or_default();
            if q.labels.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                if matched >= q.offset {
                    if out.len() as u64 == q.limit {
                        return Ok((out, true));
                    }
                    out.push(row);
                }
                matched += 1;
            }
        }
        if n < BATCH {
            return Ok((out, false));
        }
    }
}

async fn require_worker(app: &App, row: &sandbox::Model) -> Result<String> {
    let w = row.worker_id.clone().ok_or_else(|| {
        Error::FailedPrecondition(format!("sandbox {} is not placed on a worker", row.id))
    })?;
    if !app.hub.is_connected(&w) {
        return Err(Error::Unavailable(format!(
            "worker {w} holding sandbox {} is not connected",
            row.id
        )));
    }
    Ok(w)
}

/// Sends a lifecycle command and waits for the worker's answer.
async fn drive(
    app: &App,
    row: sandbox::Model,
    action: wpb::command::Action,
) -> Result<sandbox::Model> {
    let worker = require_worker(app, &row).await?;
    let cmd = command(&row, action);
    let result = app
        .hub
        .call(&worker, cmd, app.config.worker_command_timeout)
        .await?;
    if result.code != 0 && result.status.is_none() {
        return Err(Error::FailedPrecondition(format!(
            "worker refused: {}",
            result.message
        )));
    }
    apply_result(app, &worker, &row, result).await
}

pub async fn pause(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    if state_of(&row) != SandboxState::Running {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {}, not running",
            row.id,
            state_of(&row)
        )));
    }
    drive(
        app,
        row,
        wpb::command::Action::Pause(wpb::PauseSandboxCommand {}),
    )
    .await
}

pub async fn resume(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    if state_of(&row) != SandboxState::Paused {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {}, not paused",
            row.id,
            state_of(&row)
        )));
    }
    drive(
        app,
        row,
        wpb::command::Action::Resume(wpb::ResumeSandboxCommand {}),
    )
    .await
}

pub async fn stop(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    require_worker(app, &row).await?;
    let row = transition(
        app,
        &row,
        &[
            SandboxState::Starting,
            SandboxState::Running,
            SandboxState::Paused,
        ],
        SandboxState::Stopping,
        "",
    )
    .await?;
    drive(
        app,
        row,
        wpb::command::Action::Stop(wpb::StopSandboxCommand {}),
    )
    .await
}

pub async fn start(app: &App, p: &Principal, row: sandbox::Model) -> Result<sandbox::Model> {
    if state_of(&row) != SandboxState::Stopped {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {}, not stopped",
            row.id,
            state_of(&row)
        )));
    }
    require_worker(app, &row).await?;
    let lock = app.tenant_lock(&p.tenant_id);
    let guard = lock.lock().await;
    let txn = app.db.begin().await?;
    let t = tenant_for_update(&txn, &p.tenant_id).await?;
    let u = tenants::usage(&txn, &p.tenant_id).await?;
    check_quota(&t, &u, false, row.cpu_millis, row.memory_mib)?;
    let req = Amount {
        cpu_millis: row.cpu_millis,
        memory_mib: row.memory_mib,
        sandboxes: 1,
    };
    check_share(app, &txn, &t, &u, &req).await?;
    txn.commit().await?;
    let row = transition(
        app,
        &row,
        &[SandboxState::Stopped],
        SandboxState::Starting,
        "",
    )
    .await?;
    drop(guard);
    let row = reset_expiry(app, row).await?;
    let network_policy = Some(crate::api::convert::policy_to_pb(&policy_of(&row)));
    drive(
        app,
        row,
        wpb::command::Action::Start(wpb::StartSandboxCommand { network_policy }),
    )
    .await
}

async fn reset_expiry(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    let mut am: sandbox::ActiveModel = row.clone().into();
    am.expires_at = Set(Some(now_ms() + row.timeout_ms));
    Ok(am.update(&app.db).await?)
}

/// Deletes from any state. The record is DELETED at once (freeing quota);
/// the worker is told, and a worker that misses it removes the sandbox when
/// it next registers and the server tells it the sandbox is gone.
pub async fn delete(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    let from = state_of(&row);
    if from == SandboxState::Deleted {
        return Ok(row);
    }
    let deleted = transition(app, &row, &[from], SandboxState::Deleted, "").await?;
    if let Some(w) = deleted
        .worker_id
        .clone()
        .filter(|w| app.hub.is_connected(w))
    {
        let cmd = command(
            &deleted,
            wpb::command::Action::Delete(wpb::DeleteSandboxCommand {}),
        );
        match app
            .hub
            .call(&w, cmd, app.config.worker_command_timeout)
            .await
        {
            Ok(r) if r.code != 0 => {
                tracing::warn!(sandbox = %deleted.id, error = %r.message, "worker failed to delete; it is told again when it next registers")
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(sandbox = %deleted.id, error = %e, "worker did not confirm delete")
            }
        }
    }
    Ok(deleted)
}

pub async fn set_timeout(
    app: &App,
    row: sandbox::Model,
    timeout: Duration,
    action: Option<TimeoutAction>,
) -> Result<sandbox::Model> {
    if timeout.is_zero() || timeout > app.config.max_sandbox_timeout {
        return Err(Error::InvalidArgument(format!(
            "timeout must be between 1 s and {} s",
            app.config.max_sandbox_timeout.as_secs()
        )));
    }
    if state_of(&row) == SandboxState::Deleted {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is deleted",
            row.id
        )));
    }
    let mut am: sandbox::ActiveModel = row.into();
    am.timeout_ms = Set(timeout.as_millis() as i64);
    am.expires_at = Set(Some(now_ms() + timeout.as_millis() as i64));
    if let Some(a) = action {
        am.timeout_action = Set(a.as_str().into());
    }
    am.updated_at = Set(now_ms());
    let row = am.update(&app.db).await?;
    publish(app, &row);
    Ok(row)
}

pub async fn update_network_policy(
    app: &App,
    row: sandbox::Model,
    policy: EgressPolicy,
) -> Result<sandbox::Model> {
    policy.validate()?;
    let state = state_of(&row);
    if state == SandboxState::Deleted {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is deleted",
            row.id
        )));
    }
    let pb = crate::api::convert::policy_to_pb(&policy);
    if matches!(state, SandboxState::Running | SandboxState::Paused) {
        // The worker must apply it before we claim it is in force.
        let worker = require_worker(app, &row).await?;
        let cmd = command(
            &row,
            wpb::command::Action::UpdateNetworkPolicy(wpb::UpdateNetworkPolicyCommand {
                network_policy: Some(pb),
            }),
        );
        let r = app
            .hub
            .call(&worker, cmd, app.config.worker_command_timeout)
            .await?;
        if r.code != 0 {
            return Err(Error::FailedPrecondition(format!(
                "worker could not apply the policy: {}",
                r.message
            )));
        }
    }
    let mut am: sandbox::ActiveModel = row.into();
    am.network_policy = Set(serde_json::to_string(&policy)?);
    am.updated_at = Set(now_ms());
    let row = am.update(&app.db).await?;
    publish(app, &row);
    Ok(row)
}

/// Waits until the sandbox is RUNNING. FAILED or DELETED end the wait with
/// FAILED_PRECONDITION; the timeout with DEADLINE_EXCEEDED carrying the
/// sandbox as it was.
pub async fn wait_until_running(
    app: &App,
    row: sandbox::Model,
    timeout: Duration,
) -> Result<sandbox::Model> {
    let mut rx = app.events.subscribe();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut current = reload(app, &row.id).await?;
    loop {
        match state_of(&current) {
            SandboxState::Running => return Ok(current),
            s @ (SandboxState::Failed | SandboxState::Deleted | SandboxState::Stopped) => {
                return Err(Error::FailedPrecondition(format!(
                    "sandbox {} is {s}{}",
                    current.id,
                    if current.state_message.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", current.state_message)
                    }
                )));
            }
            _ => {}
        }
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => {
                let detail = crate::api::convert::state_detail(&current);
                return Err(Error::DeadlineExceeded {
                    message: format!(
                        "sandbox {} is still {} after {} s",
                        current.id,
                        state_of(&current),
                        timeout.as_secs_f64()
                    ),
                    detail,
                });
            }
            Ok(Ok(ev)) if ev.sandbox.id == current.id => current = ev.sandbox,
            Ok(Ok(_)) => {}
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                current = reload(app, &row.id).await?
            }
            Ok(Err(_)) => return Err(Error::Unavailable("server is shutting down".into())),
        }
    }
}

/// Moves a sandbox to another worker with a new generation, so that the old
/// worker's late reports and commands are refused.
pub async fn reassign(app: &App, id: &str, target: Option<&str>) -> Result<sandbox::Model> {
    let row = reload(app, id).await?;
    if state_of(&row) == SandboxState::Deleted {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {id} is deleted"
        )));
    }
    let cands = candidates(app, &app.db, row.worker_id.as_deref(), &row.image).await?;
    let req = Amount {
        cpu_millis: row.cpu_millis,
        memory_mib: row.memory_mib,
        sandboxes: 1,
    };
    let worker = match target {
        Some(t) => cands
            .iter()
            .find(|c| c.worker_id == t)
            .ok_or_else(|| {
                Error::FailedPrecondition(format!(
                    "worker {t} is not connected, is draining, or holds it already"
                ))
            })?
            .worker_id
            .clone(),
        None => scheduler::place(&cands, &req)
            .ok_or_else(|| Error::Unavailable("no other worker has capacity".into()))?
            .worker_id
            .clone(),
    };
    let old_worker = row.worker_id.clone();
    let res = sandbox::Entity::update_many()
        .col_expr(sandbox::Column::Generation, Expr::value(row.generation + 1))
        .col_expr(sandbox::Column::WorkerId, Expr::value(worker.clone()))
        .col_expr(
            sandbox::Column::State,
            Expr::value(SandboxState::Starting.as_str()),
        )
        .col_expr(
            sandbox::Column::StateMessage,
            Expr::value(format!(
                "reassigned from {}",
                old_worker.clone().unwrap_or_default()
            )),
        )
        .col_expr(sandbox::Column::UpdatedAt, Expr::value(now_ms()))
        .filter(sandbox::Column::Id.eq(id))
        .filter(sandbox::Column::Generation.eq(row.generation))
        .exec(&app.db)
        .await?;
    app.running.forget(id);
    if res.rows_affected != 1 {
        return Err(Error::Aborted(format!("sandbox {id} changed concurrently")));
    }
    let fresh = reload(app, id).await?;
    publish(app, &fresh);
    if let Some(old) = old_worker.filter(|w| app.hub.is_connected(w)) {
        // Tell the old worker to let go, at the generation it holds.
        let cmd = command(
            &row,
            wpb::command::Action::Delete(wpb::DeleteSandboxCommand {}),
        );
        let app2 = app.self_arc();
        tokio::spawn(async move {
            let _ = app2
                .hub
                .call(&old, cmd, app2.config.worker_command_timeout)
                .await;
        });
    }
    dispatch_create(app, fresh.clone()).await?;
    Ok(fresh)
}

/// Reconciles what a (re)registering worker holds with what the server
/// knows: sandboxes that are deleted, unknown, placed elsewhere or of an
/// older generation are deleted on the worker; the others take the state
/// the worker reports.
pub async fn reconcile(app: &App, worker: &str, held: &[wpb::SandboxStatus]) -> Vec<wpb::Command> {
    let mut out = Vec::new();
    for s in held {
        if kept(app, worker, s).await {
            if let Err(e) = apply_status(app, worker, s).await {
                tracing::debug!(sandbox = %s.sandbox_id, error = %e, "reconcile: status not applied");
            }
        } else {
            out.push(delete_command(s));
        }
    }
    out
}

/// Whether the server keeps what a worker says it holds: a sandbox it
/// knows, not deleted, placed on that worker at that generation.
async fn kept(app: &App, worker: &str, s: &wpb::SandboxStatus) -> bool {
    let row = sandbox::Entity::find_by_id(s.sandbox_id.clone())
        .one(&app.db)
        .await;
    match row {
        Ok(row) => row.is_some_and(|r| keeps(&r, worker, s)),
        // Unknown is not "gone": nothing is removed on a read error.
        Err(_) => true,
    }
}

fn keeps(r: &sandbox::Model, worker: &str, s: &wpb::SandboxStatus) -> bool {
    r.worker_id.as_deref() == Some(worker)
        && r.generation == s.generation
        && state_of(r) != SandboxState::Deleted
}

fn delete_command(s: &wpb::SandboxStatus) -> wpb::Command {
    wpb::Command {
        command_id: crate::ids::new_id("cmd"),
        sandbox_id: s.sandbox_id.clone(),
        generation: s.generation,
        action: Some(wpb::command::Action::Delete(wpb::DeleteSandboxCommand {})),
    }
}

/// The periodic half of `reconcile`: delete commands for what a worker
/// holds that the control plane does not keep (a create that finished
/// after its delete, a sandbox placed elsewhere since). States are not
/// applied: a worker's records lag the server's transitions.
pub async fn orphans(app: &App, worker: &str, held: &[wpb::SandboxStatus]) -> Vec<wpb::Command> {
    let mut rows = std::collections::HashMap::new();
    for chunk in held.chunks(500) {
        let ids: Vec<&str> = chunk.iter().map(|s| s.sandbox_id.as_str()).collect();
        match sandbox::Entity::find()
            .filter(sandbox::Column::Id.is_in(ids))
            .all(&app.db)
            .await
        {
            Ok(found) => rows.extend(found.into_iter().map(|r| (r.id.clone(), r))),
            // Unknown is not "gone": nothing is removed on a read error.
            Err(_) => return vec![],
        }
    }
    let mut out = Vec::new();
    for s in held {
        if !rows.get(&s.sandbox_id).is_some_and(|r| keeps(r, worker, s)) {
            app.metrics.orphans_removed.inc();
            tracing::warn!(worker, sandbox = %s.sandbox_id, generation = s.generation, "the worker holds a sandbox the control plane does not keep; removing it");
            out.push(delete_command(s));
        }
    }
    out
}

/// Applies timeouts: RUNNING sandboxes past `expires_at` are paused or
/// deleted, as their `timeout_action` says. Runs once a second.
pub async fn enforce_timeouts(app: &App) -> Result<()> {
    let now = now_ms();
    let due = sandbox::Entity::find()
        .filter(sandbox::Column::State.eq(SandboxState::Running.as_str()))
        .filter(Condition::all().add(sandbox::Column::ExpiresAt.lte(now)))
        .limit(100)
        .all(&app.db)
        .await?;
    for row in due {
        let id = row.id.clone();
        let res = match TimeoutAction::parse(&row.timeout_action) {
            TimeoutAction::Pause => pause(app, row).await.map(|_| ()),
            TimeoutAction::Delete => delete(app, row).await.map(|_| ()),
        };
        match res {
            Ok(()) => tracing::info!(sandbox = %id, "timeout applied"),
            Err(e) => tracing::warn!(sandbox = %id, error = %e, "timeout not applied"),
        }
    }
    Ok(())
}
