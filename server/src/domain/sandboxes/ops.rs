//! What callers ask of sandboxes: create, pause, resume, stop, start,
//! delete, timeouts, policies, waits and reassignment. Preconditions come
//! from the state machine's table (`state::Op`); every change of state
//! goes through the lifecycle writer; create and start take the quota
//! reservation.

use super::control::{command_for, dispatch_create, drive, require_worker, transition};
use super::lifecycle::{self, Edge};
use super::quota::{Reach, candidates, reserve};
use super::validate::{
    request_hash, resolve_resources, validate_env, validate_idempotency_key, validate_labels,
    validate_metadata,
};
use super::{NewSandbox, TimeoutAction, policy_of, publish, reload, state_of, timeout_action_of};
use crate::app::App;
use crate::auth::Principal;
use crate::db::entity::sandbox;
use crate::db::now_ms;
use crate::domain::policy::EgressPolicy;
use crate::domain::scheduler::{self, Amount};
use crate::domain::state::{Op, SandboxState};
use crate::error::{Error, Result};
use crate::workers::network_policy;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, EntityTrait, QueryFilter, QuerySelect, Set,
};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;

pub(super) fn amount(cpu_millis: i64, memory_mib: i64) -> Amount {
    Amount {
        cpu_millis,
        memory_mib,
        sandboxes: 1,
    }
}

/// How long an idempotency key keeps answering with the sandbox it made.
const IDEMPOTENCY_WINDOW_MS: i64 = 24 * 3600 * 1000;

/// The sandbox an earlier create with this key made, while the key holds.
/// A key older than the window is released (cleared on its row) so the
/// unique index lets a new create take it.
async fn idempotent_earlier(app: &App, tenant: &str, key: &str) -> Result<Option<sandbox::Model>> {
    let Some(row) = sandbox::Entity::find()
        .filter(sandbox::Column::TenantId.eq(tenant))
        .filter(sandbox::Column::IdempotencyKey.eq(key))
        .one(app.db())
        .await?
    else {
        return Ok(None);
    };
    if now_ms() - row.created_at < IDEMPOTENCY_WINDOW_MS {
        return Ok(Some(row));
    }
    sandbox::Entity::update_many()
        .col_expr(
            sandbox::Column::IdempotencyKey,
            sea_orm::sea_query::Expr::value(Option::<String>::None),
        )
        .filter(sandbox::Column::Id.eq(row.id.as_str()))
        .exec(app.db())
        .await?;
    Ok(None)
}

pub async fn create(app: &Arc<App>, p: &Principal, n: NewSandbox) -> Result<sandbox::Model> {
    let Some(key) = n.idempotency_key.clone() else {
        return create_new(app, p, n).await;
    };
    validate_idempotency_key(&key)?;
    let hash = request_hash(&n);
    if let Some(row) = idempotent_earlier(app, &p.tenant_id, &key).await? {
        return same_request(row, &key, &hash);
    }
    match create_new(app, p, n).await {
        // Two creates with one key at once: the unique index lets one
        // insert through, and the other answers with what it made.
        Err(Error::Db(e)) if is_unique_violation(&e) => {
            let row = idempotent_earlier(app, &p.tenant_id, &key)
                .await?
                .ok_or(Error::Db(e))?;
            same_request(row, &key, &hash)
        }
        other => other,
    }
}

/// The sandbox an earlier create with this key made, if it asked for the
/// same thing; a different request reusing the key is ALREADY_EXISTS
/// (409), never answered with a sandbox it did not ask for. (A row made
/// before requests were fingerprinted has none to compare.)
fn same_request(row: sandbox::Model, key: &str, hash: &str) -> Result<sandbox::Model> {
    if row.request_hash.is_empty() || row.request_hash == hash {
        return Ok(row);
    }
    Err(Error::AlreadyExists(format!(
        "idempotency key {key:?} was used for a different create request (sandbox {}); retry with the same request, or use a new key",
        row.id
    )))
}

fn is_unique_violation(e: &sea_orm::DbErr) -> bool {
    matches!(
        e.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

async fn create_new(app: &Arc<App>, p: &Principal, mut n: NewSandbox) -> Result<sandbox::Model> {
    let t0 = std::time::Instant::now();
    let hash = request_hash(&n);
    let c = checked(app, p, &mut n).await?;
    let checked = t0.elapsed();
    let req = amount(n.cpu_millis, n.memory_mib);
    let r = reserve(app, &p.tenant_id, &req, true).await?;
    let cands = candidates(
        app,
        &r.txn,
        &r.holdings,
        None,
        &n.image,
        n.isolation,
        c.reach,
    )
    .await?;
    let worker = scheduler::place(&cands, &req, app.config().placement)
        .ok_or_else(|| unplaced(app, cands.is_empty(), &c, &n.image))?;
    let id = crate::ids::new_id("sbx");
    let mounts =
        crate::domain::volumes::attach(app, &r.txn, &p.tenant_id, &id, &n.volume_mounts).await?;
    let row = new_row(p, id, &worker.worker_id, &n, c, &mounts, hash)?
        .insert(&r.txn)
        .await?;
    r.commit().await?;
    let placed = t0.elapsed();
    publish(app, &row);
    dispatch_create(app, row.clone(), crate::domain::secrets::Missing::Fail).await?;
    tracing::debug!(sandbox = %row.id, ?checked, ?placed, dispatched = ?t0.elapsed(), "create phases");
    Ok(row)
}

/// What a create's checks settled before anything is reserved.
struct Checked {
    snapshot_id: String,
    reach: Reach,
    policy: EgressPolicy,
    timeout: Duration,
    idle_timeout_ms: i64,
}

/// Checks a create's request (its image or snapshot, resources, labels,
/// policy, timeouts, secrets, volumes, and that some worker could run
/// it), filling in its defaults.
async fn checked(app: &App, p: &Principal, n: &mut NewSandbox) -> Result<Checked> {
    let snapshot_id = n.snapshot_id.clone().unwrap_or_default();
    let mut reach = Reach::Any;
    if !snapshot_id.is_empty() {
        if !n.image.is_empty() {
            return Err(Error::InvalidArgument(
                "set either image or snapshot_id: a sandbox from a snapshot runs the snapshot's image"
                    .into(),
            ));
        }
        let (image, shared) =
            crate::domain::snapshots::image_of(app, &p.tenant_id, &snapshot_id).await?;
        n.image = image;
        if shared {
            reach = Reach::SharedImage;
        }
    } else if n.image.is_empty() {
        n.image = talon_core::image::HOST_IMAGE.into();
    }
    if n.image.len() > 255 || n.image.contains(char::is_whitespace) {
        return Err(Error::InvalidArgument("invalid image name".into()));
    }
    if snapshot_id.is_empty() && !crate::domain::images::exists(app, &n.image).await? {
        return Err(Error::NotFound(format!(
            "image {:?} (ListImages shows those available)",
            n.image
        )));
    }
    resolve_resources(
        n,
        app.config().default_resources,
        app.config().max_resources,
    )?;
    validate_labels(&n.labels)?;
    validate_metadata(&n.metadata)?;
    validate_env(&n.env)?;
    let policy = n.network_policy.clone().unwrap_or_default();
    policy.validate()?;
    let timeout = super::idle::sandbox_timeout(
        app.config(),
        n.timeout.unwrap_or(app.config().default_sandbox_timeout),
    )?;
    let idle_timeout_ms = super::idle::checked_timeout(app.config(), n.idle_timeout)?;
    // Named secrets must exist and not clash with `env`; checked before
    // anything is created, and resolved again when the spec is sent.
    let resolved = crate::domain::secrets::resolve(
        app,
        &crate::domain::tenants::TenantScope::own(p),
        &n.secret_names,
        crate::domain::secrets::Missing::Fail,
    )
    .await?;
    if let Some(k) = resolved.env.keys().find(|k| n.env.contains_key(*k)) {
        return Err(Error::InvalidArgument(format!(
            "{k} is both an environment variable and a secret"
        )));
    }
    // A server that has just started (an upgrade, a reboot) waits a moment
    // for its workers to be back rather than refuse.
    if app.hub().starting(crate::config::STARTUP_WINDOW)
        && crate::domain::workers::expected_back(app).await?
    {
        app.hub().first_worker(crate::config::STARTUP_WAIT).await;
    }
    // With no worker at all, the outage below answers (UNAVAILABLE, retry);
    // with workers none of which runs the level, this one does.
    if !app.hub().connected().is_empty()
        && !crate::domain::workers::any_offers(app, n.isolation.name()).await?
    {
        return Err(crate::domain::isolation::none_offers(n.isolation));
    }
    let shared_only = !n.volume_mounts.is_empty();
    if shared_only && reach == Reach::Any {
        reach = Reach::Shared;
    }
    crate::domain::volumes::check_requests(&n.volume_mounts)?;
    if shared_only
        && !app.hub().connected().is_empty()
        && crate::domain::workers::shared_ids(app, app.db())
            .await?
            .is_empty()
    {
        return Err(Error::FailedPrecondition(
            "volumes need a worker on the shared workspace backend (--shared-workspaces); none is connected"
                .into(),
        ));
    }
    Ok(Checked {
        snapshot_id,
        reach,
        policy,
        timeout,
        idle_timeout_ms,
    })
}

/// Why no worker was chosen: none at all is an outage (UNAVAILABLE,
/// retry); workers that are all full is a limit reached
/// (RESOURCE_EXHAUSTED, like a quota).
fn unplaced(app: &App, no_candidate: bool, c: &Checked, image: &str) -> Error {
    let snapshot_id = &c.snapshot_id;
    if no_candidate {
        Error::Unavailable(if app.hub().connected().is_empty() {
            "no worker is connected".to_string()
        } else if c.reach == Reach::SharedImage {
            format!(
                "no connected, undrained worker on the shared backend, where snapshot {snapshot_id} is"
            )
        } else if !snapshot_id.is_empty() {
            format!("the worker that holds snapshot {snapshot_id} is not connected or is draining")
        } else {
            format!("no connected, undrained worker holds image {image:?}")
        })
    } else {
        Error::ResourceExhausted(
            "no worker has capacity for this sandbox; delete or stop sandboxes, or add workers"
                .to_string(),
        )
    }
}

/// The record of a new sandbox, STARTING on `worker` at generation 1.
fn new_row(
    p: &Principal,
    id: String,
    worker: &str,
    n: &NewSandbox,
    c: Checked,
    mounts: &[crate::domain::volumes::Mount],
    hash: String,
) -> Result<sandbox::ActiveModel> {
    let now = now_ms();
    let Checked {
        snapshot_id,
        policy,
        timeout,
        idle_timeout_ms,
        ..
    } = c;
    Ok(sandbox::ActiveModel {
        id: Set(id),
        tenant_id: Set(p.tenant_id.clone()),
        owner_id: Set(p.actor_id().to_string()),
        image: Set(n.image.clone()),
        state: Set(SandboxState::Starting.as_str().into()),
        state_message: Set(String::new()),
        generation: Set(1),
        worker_id: Set(Some(worker.to_string())),
        cpu_millis: Set(n.cpu_millis),
        memory_mib: Set(n.memory_mib),
        disk_mib: Set(n.disk_mib),
        max_pids: Set(n.max_pids),
        labels: Set(serde_json::to_string(&n.labels)?),
        env: Set(serde_json::to_string(&n.env)?),
        secret_names: Set(serde_json::to_string(&n.secret_names)?),
        network_policy: Set(policy.to_stored()),
        timeout_ms: Set(timeout.as_millis() as i64),
        timeout_action: Set(n
            .timeout_action
            .unwrap_or(TimeoutAction::Pause)
            .as_str()
            .into()),
        created_at: Set(now),
        updated_at: Set(now),
        expires_at: Set(Some(now + timeout.as_millis() as i64)),
        metadata: Set(serde_json::to_string(&n.metadata)?),
        idempotency_key: Set(n.idempotency_key.clone()),
        idle_timeout_ms: Set(idle_timeout_ms),
        auto_resume: Set(n.auto_resume),
        snapshot_id: Set(snapshot_id),
        isolation: Set(n.isolation.name().to_string()),
        volume_mounts: Set(serde_json::to_string(&mounts)?),
        restart_policy: Set(n
            .restart_policy
            .unwrap_or(super::RestartPolicy::Always)
            .as_str()
            .into()),
        worker_loss: Set(n.worker_loss.map_or("", |l| l.as_str()).into()),
        request_hash: Set(hash),
    })
}

pub async fn pause(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    Op::Pause.check(&row.id, state_of(&row)?)?;
    drive(
        app,
        row,
        wpb::command::Action::Pause(wpb::PauseSandboxCommand {}),
    )
    .await
}

pub async fn resume(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    Op::Resume.check(&row.id, state_of(&row)?)?;
    drive(
        app,
        row,
        wpb::command::Action::Resume(wpb::ResumeSandboxCommand {}),
    )
    .await
}

pub async fn stop(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    Op::Stop.check(&row.id, state_of(&row)?)?;
    require_worker(app, &row).await?;
    let row = transition(app, &row, Edge::To(Op::Stop.target(), "")).await?;
    stop_again(app, row).await
}

/// Tells the worker of a STOPPING sandbox to stop it: a caller's stop, or
/// one a crash cut short (`recovery`).
pub(super) async fn stop_again(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    drive(
        app,
        row,
        wpb::command::Action::Stop(wpb::StopSandboxCommand {}),
    )
    .await
}

/// Starts a stopped (or failed) sandbox again, under the quota
/// reservation: its check and its move to Starting commit together.
pub async fn start(app: &App, p: &Principal, row: sandbox::Model) -> Result<sandbox::Model> {
    Op::Start.check(&row.id, state_of(&row)?)?;
    start_with(app, &p.tenant_id, row, "").await
}

/// `start`, with the state message of its Starting (why it starts): the
/// one path for a caller's start and the platform's own.
pub(super) async fn start_with(
    app: &App,
    tenant_id: &str,
    row: sandbox::Model,
    message: &str,
) -> Result<sandbox::Model> {
    require_worker(app, &row).await?;
    let policy = policy_of(&row)?;
    let r = reserve(
        app,
        tenant_id,
        &amount(row.cpu_millis, row.memory_mib),
        false,
    )
    .await?;
    let started = lifecycle::apply(&r.txn, &row, Edge::To(Op::Start.target(), message)).await;
    app.forget_sandbox(&row.id);
    let row = started?;
    r.commit().await?;
    publish(app, &row);
    drive(
        app,
        row,
        wpb::command::Action::Start(wpb::StartSandboxCommand {
            network_policy: Some(network_policy(&policy)),
        }),
    )
    .await
}

/// Deletes from any state. The record is DELETED at once (freeing quota);
/// the worker is told, and a worker that misses it removes the sandbox when
/// it next registers and the server tells it the sandbox is gone.
pub async fn delete(app: &App, row: sandbox::Model) -> Result<sandbox::Model> {
    // A report that moves the sandbox meanwhile (its create finishing,
    // say) makes the write ABORTED: read it again and delete that.
    let mut row = row;
    let mut tries = 0;
    let deleted = loop {
        if state_of(&row)? == SandboxState::Deleted {
            return Ok(row);
        }
        match transition(app, &row, Edge::To(SandboxState::Deleted, "")).await {
            Err(Error::Aborted(_)) if tries < 5 => {
                tries += 1;
                row = reload(app, &row.id).await?;
            }
            other => break other?,
        }
    };
    let holder = match deleted.worker_id.clone() {
        Some(w) if crate::domain::workers::reachable(app, &w).await? => Some(w),
        _ => None,
    };
    if let Some(w) = holder {
        let cmd = command_for(
            &deleted,
            wpb::command::Action::Delete(wpb::DeleteSandboxCommand::default()),
        );
        match app
            .workers()
            .command(app, &w, cmd, app.config().worker_command_timeout)
            .await
        {
            Ok(r) if r.code != 0 => {
                tracing::warn!(sandbox = %deleted.id, error = %r.message, "worker failed to delete; it is told again when it next registers")
            }
            // Gone from its worker: its volumes are free at once (else
            // once that worker has surely let go: domain::volumes).
            Ok(_) => crate::domain::volumes::release(app, &deleted.id).await?,
            Err(e) => {
                tracing::warn!(sandbox = %deleted.id, error = %e, "worker did not confirm delete")
            }
        }
    }
    Ok(deleted)
}

pub(super) fn not_deleted(row: &sandbox::Model) -> Result<SandboxState> {
    let state = state_of(row)?;
    if state == SandboxState::Deleted {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is deleted",
            row.id
        )));
    }
    Ok(state)
}

pub async fn set_timeout(
    app: &App,
    row: sandbox::Model,
    timeout: Duration,
    action: Option<TimeoutAction>,
) -> Result<sandbox::Model> {
    let timeout = super::idle::sandbox_timeout(app.config(), timeout)?;
    not_deleted(&row)?;
    let mut am: sandbox::ActiveModel = row.into();
    am.timeout_ms = Set(timeout.as_millis() as i64);
    am.expires_at = Set(Some(now_ms() + timeout.as_millis() as i64));
    if let Some(a) = action {
        am.timeout_action = Set(a.as_str().into());
    }
    am.updated_at = Set(now_ms());
    let row = am.update(app.db()).await?;
    publish(app, &row);
    Ok(row)
}

pub async fn update_network_policy(
    app: &App,
    row: sandbox::Model,
    policy: EgressPolicy,
) -> Result<sandbox::Model> {
    policy.validate()?;
    let state = not_deleted(&row)?;
    if matches!(state, SandboxState::Running | SandboxState::Paused) {
        // The worker must apply it before we claim it is in force.
        let worker = require_worker(app, &row).await?;
        let cmd = command_for(
            &row,
            wpb::command::Action::UpdateNetworkPolicy(wpb::UpdateNetworkPolicyCommand {
                network_policy: Some(network_policy(&policy)),
            }),
        );
        let r = app
            .workers()
            .command(app, &worker, cmd, app.config().worker_command_timeout)
            .await?;
        if r.code != 0 {
            return Err(Error::FailedPrecondition(format!(
                "worker could not apply the policy: {}",
                r.message
            )));
        }
    }
    let mut am: sandbox::ActiveModel = row.into();
    am.network_policy = Set(policy.to_stored());
    am.updated_at = Set(now_ms());
    let row = am.update(app.db()).await?;
    publish(app, &row);
    Ok(row)
}

/// Waits until the sandbox is RUNNING. FAILED, STOPPED or DELETED end the
/// wait with FAILED_PRECONDITION; the timeout with DEADLINE_EXCEEDED
/// carrying the sandbox as it was.
pub async fn wait_until_running(
    app: &App,
    row: sandbox::Model,
    timeout: Duration,
) -> Result<sandbox::Model> {
    let mut rx = app.events().subscribe();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut current = reload(app, &row.id).await?;
    loop {
        match state_of(&current)? {
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
                return Err(Error::DeadlineExceeded {
                    message: format!(
                        "sandbox {} is still {} after {} s",
                        current.id,
                        current.state,
                        timeout.as_secs_f64()
                    ),
                    sandbox: Box::new(current),
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

/// Applies timeouts: RUNNING sandboxes past `expires_at` are paused or
/// deleted, as their `timeout_action` says. Runs once a second.
pub async fn enforce_timeouts(app: &App) -> Result<()> {
    let now = now_ms();
    let due = sandbox::Entity::find()
        .filter(sandbox::Column::State.eq(SandboxState::Running.as_str()))
        .filter(Condition::all().add(sandbox::Column::ExpiresAt.lte(now)))
        .limit(100)
        .all(app.db())
        .await?;
    for row in due {
        let id = row.id.clone();
        let res = match timeout_action_of(&row) {
            Ok(TimeoutAction::Pause) => pause(app, row).await.map(|_| ()),
            Ok(TimeoutAction::Delete) => delete(app, row).await.map(|_| ()),
            Err(e) => Err(e),
        };
        match res {
            Ok(()) => tracing::info!(sandbox = %id, "timeout applied"),
            Err(e) => tracing::warn!(sandbox = %id, error = %e, "timeout not applied"),
        }
    }
    Ok(())
}
