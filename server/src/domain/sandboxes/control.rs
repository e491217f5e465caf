//! Commands to workers, and what their reports change. A command carries
//! the generation the server holds; a report (a command's result, or a
//! status in a heartbeat or a registration) changes a sandbox only through
//! the fence and the lifecycle writer.

use super::lifecycle::{self, Edge};
use super::{policy_of, publish, state_of};
use crate::app::App;
use crate::db::entity::sandbox;
use crate::domain::secrets::Missing;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use crate::workers::calls::{command_error, sandbox_failed};
use crate::workers::{command, network_policy, reported_state};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use std::collections::BTreeMap;
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

/// Moves a sandbox along `edge` in the database and tells watchers.
pub(super) async fn transition(
    app: &App,
    row: &sandbox::Model,
    edge: Edge<'_>,
) -> Result<sandbox::Model> {
    let r = lifecycle::apply(app.db(), row, edge).await;
    // At once, even if the write failed: the cached row may be stale.
    app.forget_sandbox(&row.id);
    let fresh = r?;
    publish(app, &fresh);
    Ok(fresh)
}

/// A sandbox's environment (its own, and its secrets delivered as
/// variables), its secret files and their expiries, as the store holds
/// them now.
struct Secrets {
    env: BTreeMap<String, String>,
    files: BTreeMap<String, Vec<u8>>,
    expires: BTreeMap<String, prost_types::Timestamp>,
}

async fn secrets_of(app: &App, row: &sandbox::Model, missing: Missing) -> Result<Secrets> {
    let mut env: BTreeMap<String, String> = serde_json::from_str(&row.env)?;
    let names: Vec<String> = serde_json::from_str(&row.secret_names)?;
    let resolved = crate::domain::secrets::resolve(
        app,
        &crate::domain::tenants::TenantScope::of_stored(&row.tenant_id),
        &names,
        missing,
    )
    .await?;
    for (k, v) in resolved.env {
        if env.insert(k.clone(), v).is_some() {
            return Err(crate::domain::secrets::set_twice(&k));
        }
    }
    Ok(Secrets {
        env,
        files: resolved.files,
        expires: resolved
            .expires
            .into_iter()
            .map(|(k, ms)| (k, talon_core::time::ms_to_timestamp(ms)))
            .collect(),
    })
}

/// What the worker needs to build a sandbox: its spec, with its secrets
/// resolved now (a secret gone from the store refused or left out, as
/// `missing` says).
pub(super) async fn spec(
    app: &App,
    row: &sandbox::Model,
    missing: Missing,
) -> Result<wpb::SandboxSpec> {
    let s = secrets_of(app, row, missing).await?;
    Ok(wpb::SandboxSpec {
        image: row.image.clone(),
        resources: Some(talon_proto::v1::Resources {
            cpu_millis: row.cpu_millis,
            memory_mib: row.memory_mib,
            disk_mib: row.disk_mib,
            max_pids: row.max_pids,
        }),
        env: s.env.into_iter().collect(),
        network_policy: Some(network_policy(&policy_of(row)?)),
        tenant_id: row.tenant_id.clone(),
        runtime: String::new(),
        isolation: crate::domain::isolation::Isolation::parse(&row.isolation)?.to_proto() as i32,
        secret_files: s.files.into_iter().collect(),
        secret_expire_times: s.expires.into_iter().collect(),
        idle_timeout: (row.idle_timeout_ms > 0).then(|| prost_types::Duration {
            seconds: row.idle_timeout_ms / 1000,
            nanos: ((row.idle_timeout_ms % 1000) * 1_000_000) as i32,
        }),
        volumes: crate::domain::volumes::attachments(row)?,
        move_on_worker_loss: super::worker_loss_of(row, app.config().failover_local)?
            == super::WorkerLoss::Move,
    })
}

/// Brings the sandboxes of a tenant that name any of `names` in line with
/// the secret store after those secrets changed (put, rotated, deleted,
/// expired): each placed one's worker is sent its secrets as they are
/// now, in the background. A secret gone from the store is left out, not
/// refused: the sandbox runs on without it. Failures are logged; a
/// worker that is not connected gets the change when it registers again
/// (`reconcile`; expiry it enforces itself, from the spec's expiries).
pub async fn secrets_changed(app: &Arc<App>, tenant_id: &str, names: &[String]) {
    if let Err(e) = push_secrets(app, tenant_id, names).await {
        tracing::warn!(tenant = %tenant_id, error = %e, "secrets not pushed to sandboxes");
    }
}

/// A revision later than any this server gave before: microseconds
/// since the epoch, or one more than the last.
fn next_revision() -> i64 {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = talon_core::time::now_ms() * 1000;
    let mut last = LAST.load(Ordering::SeqCst);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

/// The command that gives a sandbox its secrets as the store holds them.
/// Its revision is taken before the store is read: an update that read
/// an older store always carries the older revision.
async fn secrets_command(app: &App, row: &sandbox::Model) -> Result<wpb::Command> {
    let revision = next_revision();
    let s = secrets_of(app, row, Missing::Skip).await?;
    Ok(command_for(
        row,
        wpb::command::Action::UpdateSecrets(wpb::UpdateSecretsCommand {
            env: s.env.into_iter().collect(),
            secret_files: s.files.into_iter().collect(),
            secret_expire_times: s.expires.into_iter().collect(),
            revision,
        }),
    ))
}

async fn push_secrets(app: &Arc<App>, tenant_id: &str, names: &[String]) -> Result<()> {
    // A LIKE narrows the rows (`_` in a name matches any character, so
    // the names are compared exactly below).
    let mut any = sea_orm::Condition::any();
    for n in names {
        any = any.add(sandbox::Column::SecretNames.like(format!("%\"{n}\"%")));
    }
    let rows = sandbox::Entity::find()
        .filter(sandbox::Column::TenantId.eq(tenant_id))
        .filter(sandbox::Column::WorkerId.is_not_null())
        .filter(sandbox::Column::State.is_not_in([
            SandboxState::Deleted.as_str(),
            SandboxState::Failed.as_str(),
        ]))
        .filter(any)
        .all(app.db())
        .await?;
    for row in rows {
        let named: Vec<String> = serde_json::from_str(&row.secret_names)?;
        if !named.iter().any(|n| names.contains(n)) {
            continue;
        }
        let Some(worker) = row.worker_id.clone() else {
            continue;
        };
        let cmd = match secrets_command(app, &row).await {
            Ok(cmd) => cmd,
            Err(e) => {
                tracing::warn!(sandbox = %row.id, error = %e, "secrets not updated");
                continue;
            }
        };
        tell(app, worker, cmd);
    }
    Ok(())
}

pub(super) fn command_for(row: &sandbox::Model, action: wpb::command::Action) -> wpb::Command {
    command(&row.id, row.generation, action)
}

/// Sends the create command for a placed sandbox, in the background. A
/// new sandbox never starts without a secret it names (`Missing::Fail`);
/// one built again elsewhere (a move, a restart in place) runs on without
/// a secret deleted meanwhile, as a running one does (`Missing::Skip`). A
/// spec that cannot be made leaves the sandbox FAILED with the reason,
/// never STARTING where no create went.
pub(super) async fn dispatch_create(
    app: &Arc<App>,
    row: sandbox::Model,
    missing: Missing,
) -> Result<()> {
    let spec = match spec(app, &row, missing).await {
        Ok(spec) => spec,
        Err(e) => {
            let why = format!("its spec could not be made: {e}");
            if let Err(t) = transition(app, &row, Edge::To(SandboxState::Failed, &why)).await {
                tracing::warn!(sandbox = %row.id, error = %t, "a sandbox whose spec failed was not marked failed");
            }
            return Err(e);
        }
    };
    let cmd = command_for(
        &row,
        wpb::command::Action::Create(wpb::CreateSandboxCommand { spec: Some(spec) }),
    );
    dispatch(app, row, cmd);
    Ok(())
}

/// Sends a command in the background and applies its result.
fn dispatch(app: &Arc<App>, row: sandbox::Model, cmd: wpb::Command) {
    let Some(worker) = row.worker_id.clone() else {
        return;
    };
    let app = app.clone();
    tokio::spawn(async move {
        let timeout = app.config().worker_command_timeout;
        let t0 = std::time::Instant::now();
        match app.workers().command(&app, &worker, cmd, timeout).await {
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
                            let _ = app.workers().command(&app, &worker, cmd, timeout).await;
                        }
                    }
                }
                tracing::debug!(sandbox = %row.id, ?answered, applied = ?t0.elapsed(), "worker command done");
            }
            Err(e) => tracing::warn!(sandbox = %row.id, error = %e, "command not delivered"),
        }
    });
}

/// Sends a command in the background without applying its result (a
/// worker told to let go, a sandbox's secrets); a failure is logged.
pub(super) fn tell(app: &Arc<App>, worker: String, cmd: wpb::Command) {
    let app = app.clone();
    tokio::spawn(async move {
        let sandbox = cmd.sandbox_id.clone();
        let r = app
            .workers()
            .command(&app, &worker, cmd, app.config().worker_command_timeout)
            .await;
        match r {
            Ok(r) if r.code != 0 => {
                tracing::warn!(%sandbox, %worker, error = %r.message, "worker command refused");
            }
            Err(e) => tracing::warn!(%sandbox, %worker, error = %e, "worker command not delivered"),
            Ok(_) => {}
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
        // A refusal (a stale generation, say) changes nothing here.
        None if r.code != 0 && !sandbox_failed(r.code) => {
            return Err(command_error(worker, &r));
        }
        None if r.code != 0 => wpb::SandboxStatus {
            sandbox_id: row.id.clone(),
            generation: row.generation,
            state: talon_proto::v1::SandboxState::Failed as i32,
            message: r.message.clone(),
            fenced: false,
            container_gone: false,
        },
        None => return Ok(row.clone()),
    };
    apply_status(app, worker, &status).await
}

/// Applies what a worker reports about a sandbox, through the fence: a
/// report from a worker that no longer holds the sandbox, or of an older
/// generation, is refused (and counted).
pub async fn apply_status(
    app: &App,
    worker: &str,
    s: &wpb::SandboxStatus,
) -> Result<sandbox::Model> {
    let to = reported_state(s.state)
        .ok_or_else(|| Error::InvalidArgument(format!("unknown reported state {}", s.state)))?;
    let row = sandbox::Entity::find_by_id(s.sandbox_id.clone())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {}", s.sandbox_id)))?;
    if let Err(e) = lifecycle::fence(&row, worker, s.generation) {
        app.metrics().stale_events.inc();
        return Err(e);
    }
    if state_of(&row)? == to {
        return Ok(row);
    }
    transition(app, &row, Edge::To(to, &s.message)).await
}

/// The worker holding the sandbox, if it is connected.
pub async fn require_worker(app: &App, row: &sandbox::Model) -> Result<String> {
    let w = row.worker_id.clone().ok_or_else(|| {
        Error::FailedPrecondition(format!("sandbox {} is not placed on a worker", row.id))
    })?;
    if !crate::domain::workers::reachable(app, &w).await? {
        return Err(Error::Unavailable(format!(
            "worker {w} holding sandbox {} is not connected",
            row.id
        )));
    }
    Ok(w)
}

/// Sends a lifecycle command and waits for the worker's answer.
pub(super) async fn drive(
    app: &App,
    row: sandbox::Model,
    action: wpb::command::Action,
) -> Result<sandbox::Model> {
    let worker = require_worker(app, &row).await?;
    let cmd = command_for(&row, action);
    let result = app
        .workers()
        .command(app, &worker, cmd, app.config().worker_command_timeout)
        .await?;
    if result.code != 0 && result.status.is_none() {
        return Err(command_error(&worker, &result));
    }
    apply_result(app, &worker, &row, result).await
}

/// Reconciles what a (re)registering worker holds with what the server
/// knows: sandboxes that are deleted, unknown, placed elsewhere or of an
/// older generation are deleted on the worker; the others take the state
/// the worker reports, or are set right (`recovery`: a host restart, an
/// operation a crash cut short), and those that name secrets get them as
/// the store holds them now (a change made while the worker was away).
pub async fn reconcile(
    app: &Arc<App>,
    worker: &str,
    held: &[wpb::SandboxStatus],
) -> Vec<wpb::Command> {
    let mut out = Vec::new();
    let mut todo = Vec::new();
    for s in held {
        let row = sandbox::Entity::find_by_id(s.sandbox_id.clone())
            .one(app.db())
            .await;
        // Unknown is not "gone": nothing is removed on a read error.
        let kept = row
            .as_ref()
            .map_or(true, |r| r.as_ref().is_some_and(|r| keeps(r, worker, s)));
        if !kept {
            out.push(delete_command(
                s,
                row.as_ref().ok().and_then(|r| r.as_ref()),
            ));
            continue;
        }
        if let Ok(Some(r)) = &row {
            match super::recovery::registered(app, worker, s, r).await {
                Ok(Some(next)) => todo.push((r.id.clone(), next)),
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!(sandbox = %s.sandbox_id, error = %e, "reconcile: status not applied")
                }
            }
        }
        if let Ok(Some(r)) = row
            && r.secret_names != "[]"
            && state_of(&r).is_ok_and(|st| st != SandboxState::Failed)
        {
            match secrets_command(app, &r).await {
                Ok(cmd) => out.push(cmd),
                Err(e) => {
                    tracing::warn!(sandbox = %r.id, error = %e, "reconcile: secrets not sent")
                }
            }
        }
    }
    super::recovery::follow_up(app, todo);
    out
}

fn keeps(r: &sandbox::Model, worker: &str, s: &wpb::SandboxStatus) -> bool {
    // A state that doesn't read is kept (nothing is removed on a doubt).
    lifecycle::fence(r, worker, s.generation).is_ok()
        && state_of(r).map_or(true, |st| st != SandboxState::Deleted)
}

/// A delete for a copy the control plane does not keep; when the sandbox
/// lives on (it moved to another worker or generation), its shared disk
/// is the holder's now and stays.
fn delete_command(s: &wpb::SandboxStatus, row: Option<&sandbox::Model>) -> wpb::Command {
    let moved = row.is_some_and(|r| state_of(r).is_ok_and(|st| st != SandboxState::Deleted));
    command(
        &s.sandbox_id,
        s.generation,
        wpb::command::Action::Delete(wpb::DeleteSandboxCommand {
            keep_shared_disk: moved,
        }),
    )
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
            .all(app.db())
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
            app.metrics().orphans_removed.inc();
            tracing::warn!(worker, sandbox = %s.sandbox_id, generation = s.generation, "the worker holds a sandbox the control plane does not keep; removing it");
            out.push(delete_command(s, rows.get(&s.sandbox_id)));
        }
    }
    out
}
