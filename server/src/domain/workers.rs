//! Workers as the control plane records them: registration, heartbeats,
//! draining, and what each holds (from the one allocation query). Their
//! live sessions are the hub's (`crate::workers`).

use crate::app::App;
use crate::db::entity::worker;
use crate::db::now_ms;
use crate::domain::fencing::FenceScope;
use crate::domain::sandboxes::holdings;
use crate::domain::scheduler::Amount;
use crate::error::{Error, Result};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, Set};

/// What a worker says of itself when its session starts.
pub struct Registration<'a> {
    pub worker_id: &'a str,
    pub hostname: &'a str,
    pub capacity: Amount,
    pub runtimes: &'a [String],
    pub version: &'a str,
    /// Where its data plane listens.
    pub data_address: &'a str,
    /// `local` or `shared` (see `WorkspaceBackend`).
    pub workspace_backend: &'a str,
}

/// Where a worker's sandboxes' disks live: on its own disk, or under a
/// directory every worker mounts from shared storage (a sandbox moved
/// from a lost worker keeps its files only between two `shared` ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceBackend {
    Local,
    Shared,
}

impl WorkspaceBackend {
    /// Fail closed: an unknown backend is refused, never read as `local`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "" | "local" => Ok(Self::Local),
            "shared" => Ok(Self::Shared),
            other => Err(Error::InvalidArgument(format!(
                "unknown workspace backend {other:?} (local, shared)"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Shared => "shared",
        }
    }
}

/// A worker's record, whether its session is open, and what live
/// sandboxes hold on it.
pub struct WorkerView {
    pub worker: worker::Model,
    pub connected: bool,
    pub allocated: Amount,
}

/// Records a worker (again): re-registration keeps `draining` and
/// `registered_at`. A new session starts fencing nothing until it says
/// otherwise (a new process applies no scope yet), and a worker back
/// before the autopilot began moving anything off it is no longer lost.
/// Returns the session's start (ms), which its beats' reports name.
pub async fn register(app: &App, r: &Registration<'_>) -> Result<i64> {
    if r.worker_id.is_empty() || r.worker_id.len() > 128 {
        return Err(Error::InvalidArgument(
            "worker_id must be 1-128 characters".into(),
        ));
    }
    let backend = WorkspaceBackend::parse(r.workspace_backend)?;
    let now = now_ms();
    let lease_until = crate::domain::lease::db_now_ms(app.db()).await?
        + app.config().worker_lease.as_millis() as i64;
    let row = worker::ActiveModel {
        id: Set(r.worker_id.to_string()),
        hostname: Set(r.hostname.to_string()),
        draining: Set(false),
        cpu_millis: Set(r.capacity.cpu_millis),
        memory_mib: Set(r.capacity.memory_mib),
        max_sandboxes: Set(r.capacity.sandboxes),
        runtimes: Set(r.runtimes.join(",")),
        version: Set(r.version.to_string()),
        registered_at: Set(now),
        last_heartbeat_at: Set(now),
        data_address: Set(r.data_address.to_string()),
        server_id: Set(app.config().server_id.clone()),
        inventory: Set(String::new()),
        lease_expires_at: Set(lease_until),
        lost_at: Set(0),
        moving_since: Set(0),
        last_lost_at: Set(0),
        workspace_backend: Set(backend.as_str().to_string()),
        fence_scope: Set(0),
        session_at: Set(now),
        last_moved_at: Set(0),
    };
    worker::Entity::insert(row)
        .on_conflict(
            OnConflict::column(worker::Column::Id)
                .update_columns([
                    worker::Column::Hostname,
                    worker::Column::CpuMillis,
                    worker::Column::MemoryMib,
                    worker::Column::MaxSandboxes,
                    worker::Column::Runtimes,
                    worker::Column::Version,
                    worker::Column::LastHeartbeatAt,
                    worker::Column::DataAddress,
                    worker::Column::ServerId,
                    worker::Column::LeaseExpiresAt,
                    worker::Column::WorkspaceBackend,
                    worker::Column::FenceScope,
                    worker::Column::SessionAt,
                ])
                .to_owned(),
        )
        .exec(app.db())
        .await?;
    worker::Entity::update_many()
        .col_expr(worker::Column::LostAt, Expr::value(0i64))
        .filter(worker::Column::Id.eq(r.worker_id))
        .filter(worker::Column::LostAt.gt(0))
        .filter(worker::Column::MovingSince.eq(0))
        .exec(app.db())
        .await?;
    Ok(now)
}

/// What a worker holds and offers, recorded with its heartbeats for the
/// servers that do not hold its session (they place sandboxes by it).
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Inventory {
    pub images: Vec<String>,
    pub levels: Vec<String>,
    /// cpu_millis, memory_mib, sandboxes in use, as last reported.
    pub used: Option<[i64; 3]>,
}

/// What a stored beat tells its worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renewal {
    /// The autopilot is moving its sandboxes away: it must fence now.
    pub fence: bool,
    /// What it must stop when its lease lapses, as its peers allow now.
    pub scope: FenceScope,
}

/// Notes that a worker is alive, with its inventory and the fence scope
/// it applies (`reported`, stored only for the session registered at
/// `session_at`: a late beat of an earlier session says nothing of this
/// one), and renews its lease for `worker_lease` from now on the
/// database's clock. Ok means the renewal is stored: only then may the
/// worker count on it.
pub async fn heartbeat(
    app: &App,
    worker_id: &str,
    session_at: i64,
    reported: FenceScope,
) -> Result<Renewal> {
    let db_now = crate::domain::lease::db_now_ms(app.db()).await?;
    let lease_until = db_now + app.config().worker_lease.as_millis() as i64;
    let mut q = worker::Entity::update_many()
        .col_expr(worker::Column::LastHeartbeatAt, Expr::value(now_ms()))
        .col_expr(worker::Column::LeaseExpiresAt, Expr::value(lease_until))
        .col_expr(
            worker::Column::FenceScope,
            Expr::case(
                worker::Column::SessionAt.eq(session_at),
                Expr::value(reported.number() as i64),
            )
            .finally(Expr::col(worker::Column::FenceScope))
            .into(),
        );
    if let Some((images, levels, used)) = app.hub().inventory(worker_id) {
        let inv = Inventory {
            images,
            levels,
            used: used.map(|u| [u.cpu_millis, u.memory_mib, u.sandboxes]),
        };
        q = q.col_expr(
            worker::Column::Inventory,
            Expr::value(serde_json::to_string(&inv)?),
        );
    }
    let res = q
        .filter(worker::Column::Id.eq(worker_id))
        .exec(app.db())
        .await?;
    if res.rows_affected != 1 {
        return Err(Error::NotFound(format!("worker {worker_id}")));
    }
    let fence = worker::Entity::find_by_id(worker_id.to_string())
        .one(app.db())
        .await?
        .is_some_and(|w| w.moving_since > 0);
    Ok(Renewal {
        fence,
        scope: crate::domain::fencing::scope_for(app, worker_id, db_now).await?,
    })
}

/// The workers whose sessions other live servers hold, alive by their
/// heartbeats, with what each holds and offers: where a server places a
/// sandbox besides its own workers.
pub async fn remote(
    app: &App,
    db: &impl sea_orm::ConnectionTrait,
) -> Result<Vec<(worker::Model, Inventory)>> {
    use crate::db::entity::server;
    let now = now_ms();
    let alive_servers: std::collections::HashSet<String> = server::Entity::find()
        .filter(server::Column::HeartbeatAt.gte(now - crate::peers::ALIVE_MS))
        .all(db)
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    let since = now - 3 * app.config().heartbeat_interval.as_millis() as i64;
    Ok(worker::Entity::find()
        .filter(worker::Column::LastHeartbeatAt.gte(since))
        .all(db)
        .await?
        .into_iter()
        .filter(|w| {
            w.server_id != app.config().server_id
                && alive_servers.contains(&w.server_id)
                && !app.hub().is_connected(&w.id)
        })
        .filter_map(|w| {
            let inv = serde_json::from_str::<Inventory>(&w.inventory).ok()?;
            Some((w, inv))
        })
        .collect())
}

/// Where a worker's data plane is: from its session when this server
/// holds it, else from its record while its heartbeats are recent (three
/// intervals), so that any server on the database reaches its sandboxes.
/// None when neither knows it alive.
pub async fn data_address(app: &App, worker_id: &str) -> Result<Option<String>> {
    if let Some(a) = app.hub().data_address(worker_id) {
        return Ok(Some(a));
    }
    let alive_since = now_ms() - 3 * app.config().heartbeat_interval.as_millis() as i64;
    Ok(worker::Entity::find_by_id(worker_id.to_string())
        .one(app.db())
        .await?
        .filter(|w| w.last_heartbeat_at >= alive_since && !w.data_address.is_empty())
        .map(|w| w.data_address))
}

/// Whether commands reach this worker: its session is here, or another
/// live server on the database holds it (peers.rs).
pub async fn reachable(app: &App, worker_id: &str) -> Result<bool> {
    Ok(app.hub().is_connected(worker_id) || crate::peers::holder(app, worker_id).await?.is_some())
}

/// Whether workers that held their sessions with this server before are
/// not back yet (it has just restarted), or its own embedded worker has
/// not connected yet (`talon up` has just started), so a create may wait
/// for them.
pub async fn expected_back(app: &App) -> Result<bool> {
    if app.config().expects_worker && app.hub().connected().is_empty() {
        return Ok(true);
    }
    Ok(worker::Entity::find()
        .filter(worker::Column::ServerId.eq(&app.config().server_id))
        .all(app.db())
        .await?
        .iter()
        .any(|w| !app.hub().is_connected(&w.id)))
}

/// Whether any worker this server can place on (its own, or another
/// live server's) offers an isolation level.
pub async fn any_offers(app: &App, level: &str) -> Result<bool> {
    Ok(app.hub().any_offers(level)
        || remote(app, app.db())
            .await?
            .iter()
            .any(|(_, inv)| inv.levels.iter().any(|l| l == level)))
}

/// The live workers on the `shared` workspace backend (heartbeats within
/// three intervals): where a sandbox that mounts volumes may be placed.
pub async fn shared_ids(
    app: &App,
    db: &impl sea_orm::ConnectionTrait,
) -> Result<std::collections::HashSet<String>> {
    let since = now_ms() - 3 * app.config().heartbeat_interval.as_millis() as i64;
    Ok(worker::Entity::find()
        .filter(worker::Column::WorkspaceBackend.eq(WorkspaceBackend::Shared.as_str()))
        .filter(worker::Column::LastHeartbeatAt.gte(since))
        .all(db)
        .await?
        .into_iter()
        .map(|w| w.id)
        .collect())
}

/// Whether worker `id` is (or was last) on the shared backend.
pub async fn on_shared_backend(db: &impl sea_orm::ConnectionTrait, id: &str) -> Result<bool> {
    Ok(worker::Entity::find_by_id(id.to_string())
        .one(db)
        .await?
        .is_some_and(|w| w.workspace_backend == WorkspaceBackend::Shared.as_str()))
}

/// The shared-backend workers commands reach now (this server's first).
pub async fn shared_reachable(app: &App) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for id in shared_ids(app, app.db()).await? {
        if app.hub().is_connected(&id) {
            out.insert(0, id);
        } else if reachable(app, &id).await? {
            out.push(id);
        }
    }
    Ok(out)
}

/// Whether a worker was found lost (its lease lapsed) longer ago than the
/// failover grace period: by then it has stopped what it held.
pub async fn lost_past_grace(app: &App, worker_id: &str) -> Result<bool> {
    let now = crate::domain::lease::db_now_ms(app.db()).await?;
    let grace = app.config().failover_grace.as_millis() as i64;
    Ok(worker::Entity::find_by_id(worker_id.to_string())
        .one(app.db())
        .await?
        .is_some_and(|w| w.lost_at > 0 && w.lost_at + grace <= now))
}

/// A worker's workspace backend as recorded (`local` for a worker not
/// recorded: nothing of it can be assumed shared).
pub async fn backend_of(app: &App, worker_id: &str) -> Result<WorkspaceBackend> {
    match worker::Entity::find_by_id(worker_id.to_string())
        .one(app.db())
        .await?
    {
        Some(w) => WorkspaceBackend::parse(&w.workspace_backend),
        None => Ok(WorkspaceBackend::Local),
    }
}

/// The workers whose sessions other live servers hold: connected, as
/// far as an operator asking this server is concerned.
async fn held_elsewhere(app: &App) -> Result<std::collections::HashSet<String>> {
    Ok(remote(app, app.db())
        .await?
        .into_iter()
        .map(|(w, _)| w.id)
        .collect())
}

/// Every recorded worker, by id.
pub async fn list(app: &App) -> Result<Vec<WorkerView>> {
    let rows = worker::Entity::find()
        .order_by_asc(worker::Column::Id)
        .all(app.db())
        .await?;
    let h = holdings(app.db(), None).await?;
    let elsewhere = held_elsewhere(app).await?;
    Ok(rows
        .into_iter()
        .map(|w| WorkerView {
            connected: app.hub().is_connected(&w.id) || elsewhere.contains(&w.id),
            allocated: h.by_worker.get(&w.id).cloned().unwrap_or_default(),
            worker: w,
        })
        .collect())
}

pub async fn get(app: &App, id: &str) -> Result<WorkerView> {
    let w = worker::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("worker {id}")))?;
    let h = holdings(app.db(), None).await?;
    let elsewhere = held_elsewhere(app).await?;
    Ok(WorkerView {
        connected: app.hub().is_connected(&w.id) || elsewhere.contains(&w.id),
        allocated: h.by_worker.get(&w.id).cloned().unwrap_or_default(),
        worker: w,
    })
}

/// Drains a worker (no new sandboxes are placed there) or undrains it.
pub async fn set_draining(app: &App, id: &str, draining: bool) -> Result<WorkerView> {
    let w = worker::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("worker {id}")))?;
    let mut am: worker::ActiveModel = w.into();
    am.draining = Set(draining);
    am.update(app.db()).await?;
    get(app, id).await
}

/// Forgets a worker gone for good (decommissioned, or a test's): one with
/// no session anywhere whose lease has lapsed, that holds nothing.
/// Whatever is still recorded on it (a sandbox, even stopped, keeps its
/// disk there; a snapshot its copy) would be stranded, so the caller moves
/// or deletes that first. The checks and the delete are one write
/// transaction with the worker's row locked (SQLite's write transaction
/// serializes; PostgreSQL's `FOR UPDATE`), and the delete names the
/// session and the lapsed lease it saw: a worker that registers or renews
/// meanwhile is not deleted. One that registers again later is recorded
/// again.
pub async fn forget(app: &App, id: &str) -> Result<()> {
    use crate::db::entity::{sandbox, snapshot};
    use crate::domain::state::SandboxState;
    use sea_orm::{PaginatorTrait, QuerySelect};
    if get(app, id).await?.connected {
        return Err(Error::FailedPrecondition(format!(
            "worker {id} is connected: stop it first (drain it and move its sandboxes to keep them)"
        )));
    }
    let txn = crate::db::begin_write(app.db()).await?;
    let now = crate::domain::lease::db_now_ms(&txn).await?;
    let w = worker::Entity::find_by_id(id.to_string())
        .lock_exclusive()
        .one(&txn)
        .await?
        .ok_or_else(|| Error::NotFound(format!("worker {id}")))?;
    if w.lease_expires_at > now {
        return Err(Error::FailedPrecondition(format!(
            "worker {id}'s lease holds for {} s more: it may still be running; try again once it is lost",
            (w.lease_expires_at - now + 999) / 1000
        )));
    }
    let sandboxes = sandbox::Entity::find()
        .filter(sandbox::Column::WorkerId.eq(id))
        .filter(sandbox::Column::State.ne(SandboxState::Deleted.as_str()))
        .count(&txn)
        .await?;
    if sandboxes > 0 {
        return Err(Error::FailedPrecondition(format!(
            "worker {id} still holds {sandboxes} sandbox(es) (a stopped one keeps its disk there): move or delete them first"
        )));
    }
    let snapshots = snapshot::Entity::find()
        .filter(snapshot::Column::WorkerId.eq(id))
        .count(&txn)
        .await?;
    if snapshots > 0 {
        return Err(Error::FailedPrecondition(format!(
            "worker {id} still holds {snapshots} snapshot(s): delete them first"
        )));
    }
    let gone = worker::Entity::delete_many()
        .filter(worker::Column::Id.eq(id))
        .filter(worker::Column::SessionAt.eq(w.session_at))
        .filter(worker::Column::LeaseExpiresAt.lte(now))
        .exec(&txn)
        .await?;
    if gone.rows_affected != 1 {
        return Err(Error::Aborted(format!(
            "worker {id} changed meanwhile; look again"
        )));
    }
    txn.commit().await?;
    Ok(())
}
