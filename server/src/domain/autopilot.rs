//! The autopilot: moves the sandboxes of lost workers to live ones.
//!
//! Each worker holds a lease in the database, renewed by its heartbeats
//! (`workers::heartbeat`, on the database's clock). The autopilot runs
//! with the once-per-platform duties (one server at a time, `lease`):
//! a worker whose lease lapsed is marked lost (audited, counted); after
//! the grace period each of its live sandboxes is moved to a live worker
//! with room, at the next generation (`Edge::Reassign`), so the old
//! worker's late reports and commands are refused by the fence. The old
//! worker stops its sandboxes itself when its own view of the lease
//! lapses, which is no later than the database's (it counts from when it
//! sent the beat), so a sandbox never runs in two places as long as the
//! grace period covers its clock's drift and its stop.
//!
//! A worker back within its grace period keeps its sandboxes (those it
//! stopped meanwhile it reports, and they are started again:
//! `restart_fenced`). Once moves begin, the worker's renewals tell it to
//! fence, whatever its own view of the lease: a paused host's clock may
//! not have moved while the database's did.
//!
//! A storm is held back three ways: at most `failover_rate` moves a
//! second; a worker lost within `failover_cooldown` gets no sandbox placed
//! on it (quota::unplaceable), so a flapping worker holds nothing to lose
//! again; and a lost worker's mark is cleared only once nothing movable is
//! left on it (sandboxes that wait for their worker run on there), so it
//! causes one wave however often it returns. When no
//! worker has room, the move waits and is retried every tick; that is
//! audited once per episode and counted.

use super::sandboxes::history::Cause;
use crate::app::App;
use crate::audit::AuditRecord;
use crate::db::entity::{sandbox, worker};
use crate::domain::fencing::{FenceScope, moves_on_loss};
use crate::domain::lease::db_now_ms;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashSet;
use std::sync::Arc;
use tonic::Code;

/// The states a lost worker's sandbox is moved in: those that were
/// running there, or about to be. A stopped one has nothing running, and
/// moves when it is started (its worker is not reachable then).
const MOVED: [SandboxState; 3] = [
    SandboxState::Starting,
    SandboxState::Running,
    SandboxState::Paused,
];

/// What the autopilot remembers between ticks (on the server running it).
#[derive(Default)]
pub struct Autopilot {
    /// Lost workers (id, lost_at) whose wave began.
    waves: HashSet<(String, i64)>,
    /// Whether the all-workers-full condition was audited since it last
    /// cleared.
    full: bool,
}

impl Autopilot {
    /// One pass: marks lapsed workers lost, moves what lost workers hold
    /// once their grace period is over. Runs every second on the server
    /// holding the duties lease.
    pub async fn tick(&mut self, app: &Arc<App>) -> Result<()> {
        let now = db_now_ms(app.db()).await?;
        self.mark_lost(app, now).await?;
        let grace = app.config().failover_grace.as_millis() as i64;
        let due = worker::Entity::find()
            .filter(worker::Column::LostAt.gt(0))
            .filter(worker::Column::LostAt.lte(now - grace))
            .order_by_asc(worker::Column::LostAt)
            .all(app.db())
            .await?;
        let mut budget = app.config().failover_rate.max(1) as u64;
        let mut waiting = 0i64;
        let live: Vec<&str> = MOVED.iter().map(|s| s.as_str()).collect();
        for w in due {
            let rows = movable(app, &w, &live, budget).await?;
            let key = (w.id.clone(), w.lost_at);
            if rows.is_empty() {
                // Nothing it would have stopped (its sandboxes run on
                // there and wait for it), or nothing left: lost it stays
                // while its lease is lapsed (marked once); back, it is
                // cleared.
                if w.lease_expires_at > now {
                    self.settle(app, &w).await?;
                    self.waves.remove(&key);
                }
                continue;
            }
            // Back within its grace period: it keeps what it holds (what it
            // stopped meanwhile it reported, and that was started again).
            if w.moving_since == 0 && w.lease_expires_at > now {
                let res = worker::Entity::update_many()
                    .col_expr(worker::Column::LostAt, Expr::value(0i64))
                    .filter(worker::Column::Id.eq(&w.id))
                    .filter(worker::Column::LostAt.eq(w.lost_at))
                    .filter(worker::Column::MovingSince.eq(0))
                    .exec(app.db())
                    .await?;
                if res.rows_affected == 1 {
                    tracing::info!(worker = %w.id, "a lost worker came back within its grace period; its sandboxes stay");
                    audit(app, "", "autopilot.WorkerBack", &w.id, Code::Ok).await;
                }
                continue;
            }
            if w.moving_since == 0 {
                // From now on its renewals tell it to fence (a paused
                // host's own clock may say its lease still holds).
                worker::Entity::update_many()
                    .col_expr(worker::Column::MovingSince, Expr::value(now))
                    .col_expr(worker::Column::LastMovedAt, Expr::value(now))
                    .filter(worker::Column::Id.eq(&w.id))
                    .filter(worker::Column::LostAt.eq(w.lost_at))
                    .exec(app.db())
                    .await?;
            }
            if self.waves.insert(key) {
                app.metrics().failover.waves.inc();
                tracing::warn!(worker = %w.id, sandboxes = rows.len(), "moving the sandboxes of a lost worker");
                audit(app, "", "autopilot.MoveLostWorker", &w.id, Code::Ok).await;
            }
            for row in rows {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let (id, tenant) = (row.id.clone(), row.tenant_id.clone());
                match super::sandboxes::move_to(app, row, None, Some(w.lost_at), Cause::WorkerLost)
                    .await
                {
                    Ok(fresh) => {
                        app.metrics().failover.moved.inc();
                        tracing::info!(sandbox = %id, from = %w.id, to = ?fresh.worker_id, generation = fresh.generation, "sandbox moved off a lost worker");
                        audit(app, &tenant, "autopilot.MoveSandbox", &id, Code::Ok).await;
                    }
                    Err(Error::Unavailable(_)) => waiting += 1,
                    Err(e) => {
                        app.metrics().failover.move_failures.inc();
                        tracing::warn!(sandbox = %id, from = %w.id, error = %e, "sandbox not moved; retrying");
                    }
                }
            }
        }
        app.metrics().failover.waiting.set(waiting);
        if waiting > 0 && !self.full {
            self.full = true;
            app.metrics().failover.no_capacity.inc();
            tracing::warn!(
                waiting,
                "no worker has room for the sandboxes of lost workers; retrying every second"
            );
            audit(app, "", "autopilot.NoCapacity", "", Code::Unavailable).await;
        } else if waiting == 0 {
            self.full = false;
        }
        Ok(())
    }

    /// Marks lost every worker whose lease lapsed.
    async fn mark_lost(&self, app: &App, now: i64) -> Result<()> {
        let lapsed = worker::Entity::find()
            .filter(worker::Column::LostAt.eq(0))
            .filter(worker::Column::LeaseExpiresAt.gt(0))
            .filter(worker::Column::LeaseExpiresAt.lt(now))
            .all(app.db())
            .await?;
        for w in lapsed {
            lose(app, &w.id, now).await?;
        }
        Ok(())
    }

    /// Clears a lost worker's mark once nothing movable is left on it (its
    /// last-lost time stays, for the placement cooldown).
    async fn settle(&self, app: &App, w: &worker::Model) -> Result<()> {
        let res = worker::Entity::update_many()
            .col_expr(worker::Column::LostAt, Expr::value(0i64))
            .col_expr(worker::Column::MovingSince, Expr::value(0i64))
            .filter(worker::Column::Id.eq(&w.id))
            .filter(worker::Column::LostAt.eq(w.lost_at))
            .exec(app.db())
            .await?;
        if res.rows_affected == 1 && self.waves.contains(&(w.id.clone(), w.lost_at)) {
            tracing::info!(worker = %w.id, "every live sandbox of the lost worker was moved");
        }
        Ok(())
    }
}

/// The live sandboxes of lost worker `w` that it stopped when its lease
/// lapsed, so may start elsewhere (`fencing`), oldest first, at most
/// `budget`. None at all while its scope covers nothing.
async fn movable(
    app: &App,
    w: &worker::Model,
    live: &[&str],
    budget: u64,
) -> Result<Vec<sandbox::Model>> {
    if FenceScope::from_number(w.fence_scope) == FenceScope::None {
        return Ok(vec![]);
    }
    let rows = sandbox::Entity::find()
        .filter(sandbox::Column::WorkerId.eq(&w.id))
        .filter(sandbox::Column::State.is_in(live.to_vec()))
        .order_by_asc(sandbox::Column::CreatedAt)
        .all(app.db())
        .await?;
    let mut out = Vec::new();
    for row in rows {
        match moves_on_loss(app, &row, w) {
            Ok(true) => out.push(row),
            Ok(false) => {}
            Err(e) => tracing::warn!(sandbox = %row.id, error = %e, "not moved"),
        }
        if out.len() as u64 >= budget.max(1) {
            break;
        }
    }
    Ok(out)
}

/// At a worker's registration: the live sandboxes placed on it before
/// (`before`, ms) that it does not hold — its records lost, or stopped by
/// its fence while no session could report it — are moved elsewhere.
pub async fn recover_missing(
    app: &Arc<App>,
    worker_id: &str,
    held: &[String],
    before: i64,
) -> Result<()> {
    let live: Vec<&str> = MOVED.iter().map(|s| s.as_str()).collect();
    let rows = sandbox::Entity::find()
        .filter(sandbox::Column::WorkerId.eq(worker_id))
        .filter(sandbox::Column::State.is_in(live))
        .filter(sandbox::Column::UpdatedAt.lt(before))
        .all(app.db())
        .await?;
    for row in rows.into_iter().filter(|r| !held.contains(&r.id)) {
        let (id, tenant) = (row.id.clone(), row.tenant_id.clone());
        tracing::warn!(sandbox = %id, worker = %worker_id, "the worker no longer holds a sandbox placed on it; starting it again");
        let moved =
            match super::sandboxes::move_to(app, row.clone(), None, None, Cause::NotHeld).await {
                // No other worker: built again where it was.
                Err(Error::Unavailable(_)) => {
                    super::sandboxes::restart_in_place(
                        app,
                        row,
                        "the worker no longer held it",
                        Cause::NotHeld,
                    )
                    .await
                }
                other => other,
            };
        match moved {
            Ok(_) => {
                app.metrics().failover.moved.inc();
                audit(app, &tenant, "autopilot.MoveSandbox", &id, Code::Ok).await;
            }
            Err(e) => tracing::warn!(sandbox = %id, error = %e, "not moved"),
        }
    }
    Ok(())
}

/// A sandbox its worker stopped because its lease lapsed (and said so,
/// at the generation it holds): started again at the next generation, on
/// another worker with room, else on the same one (the only place there
/// is; on the `local` backend with an empty workspace, as its state
/// message says). A sandbox of a worker the autopilot is moving from is
/// left to that wave.
pub async fn restart_fenced(app: &Arc<App>, row: sandbox::Model) -> Result<()> {
    let moving = match &row.worker_id {
        Some(w) => worker::Entity::find_by_id(w.clone())
            .one(app.db())
            .await?
            .is_some_and(|w| w.moving_since > 0),
        None => false,
    };
    let state = crate::domain::sandboxes::state_of(&row)?;
    if moving || !MOVED.contains(&state) {
        return Ok(());
    }
    let (id, tenant) = (row.id.clone(), row.tenant_id.clone());
    let moved = match super::sandboxes::move_to(app, row.clone(), None, None, Cause::Fenced).await {
        Err(Error::Unavailable(_)) => {
            super::sandboxes::restart_in_place(
                app,
                row,
                "the worker had stopped it when its lease lapsed",
                Cause::Fenced,
            )
            .await
        }
        other => other,
    }?;
    app.metrics().failover.moved.inc();
    tracing::info!(sandbox = %id, to = ?moved.worker_id, generation = moved.generation, "a fenced sandbox was started again");
    audit(app, &tenant, "autopilot.RestartFenced", &id, Code::Ok).await;
    Ok(())
}

/// Marks a worker lost, once (the update is conditional on it not being
/// lost, and on its lease having lapsed by `now`, so a renewal that raced
/// the autopilot's read wins); audited and counted.
async fn lose(app: &App, worker_id: &str, now: i64) -> Result<()> {
    let res = worker::Entity::update_many()
        .col_expr(worker::Column::LostAt, Expr::value(now))
        .col_expr(worker::Column::LastLostAt, Expr::value(now))
        .filter(worker::Column::Id.eq(worker_id))
        .filter(worker::Column::LostAt.eq(0))
        .filter(worker::Column::LeaseExpiresAt.lt(now))
        .exec(app.db())
        .await?;
    if res.rows_affected == 1 {
        app.metrics().failover.workers_lost.inc();
        tracing::warn!(worker = %worker_id, "worker lost: its lease lapsed");
        audit(
            app,
            "",
            "autopilot.WorkerLost",
            worker_id,
            Code::Unavailable,
        )
        .await;
    }
    Ok(())
}

async fn audit(app: &App, tenant: &str, method: &str, resource: &str, code: Code) {
    app.audit()
        .record(AuditRecord::by(
            tenant,
            &format!("autopilot:{}", app.config().server_id),
            method,
            resource,
            code,
            "",
        ))
        .await;
}
