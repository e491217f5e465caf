//! Filesystem snapshots of sandboxes, per tenant. The worker that runs
//! the sandbox copies its files into its own image store (frozen for the
//! copy only) as the image `snapshot/<id>`; this module keeps the
//! catalogue, the tenant's storage quota, and placement: a sandbox created
//! from a snapshot goes to a worker that holds its image. Fork is a
//! snapshot, N creates from it, and the snapshot's removal once they run
//! (their own layers stay on the worker while they use them).
//!
//! That image name is never reachable as an `image` of a create: only
//! the catalogue's images are (`images::exists`), so a snapshot is seen
//! through its tenant's `snapshot_id` alone.

use crate::app::App;
use crate::auth::Principal;
use crate::db::entity::{sandbox, snapshot};
use crate::db::now_ms;
use crate::domain::sandboxes::{self, NewSandbox};
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

/// Most sandboxes one ForkSandbox makes.
pub const MAX_FORKS: i32 = 20;
const MAX_NAME: usize = 128;

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= MAX_NAME
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The tenant's snapshot `id`; another tenant's is NOT_FOUND.
pub async fn get(app: &App, tenant: &str, id: &str) -> Result<snapshot::Model> {
    if !crate::ids::valid_id("snp", id) {
        return Err(Error::NotFound(format!("snapshot {id}")));
    }
    snapshot::Entity::find_by_id(id.to_string())
        .filter(snapshot::Column::TenantId.eq(tenant))
        .filter(snapshot::Column::Pending.eq(false))
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("snapshot {id}")))
}

/// A page of the tenant's snapshots, newest first; `sandbox` filters by
/// source. The rows and whether more follow.
pub async fn list(
    app: &App,
    tenant: &str,
    sandbox: &str,
    offset: u64,
    limit: u64,
) -> Result<(Vec<snapshot::Model>, bool)> {
    let mut q = snapshot::Entity::find()
        .filter(snapshot::Column::TenantId.eq(tenant))
        .filter(snapshot::Column::Pending.eq(false));
    if !sandbox.is_empty() {
        q = q.filter(snapshot::Column::SandboxId.eq(sandbox));
    }
    let mut rows = q
        .order_by_desc(snapshot::Column::CreatedAt)
        .order_by_desc(snapshot::Column::Id)
        .offset(offset)
        .limit(limit + 1)
        .all(app.db())
        .await?;
    let more = rows.len() as u64 > limit;
    rows.truncate(limit as usize);
    Ok((rows, more))
}

/// Bytes of snapshots the tenant keeps, and reserves for those under
/// way. (PostgreSQL's SUM of a BIGINT is
/// a NUMERIC: cast back, so both engines answer an integer.)
pub async fn used_bytes(db: &impl sea_orm::ConnectionTrait, tenant: &str) -> Result<i64> {
    let total = Expr::col(snapshot::Column::SizeBytes)
        .sum()
        .cast_as(sea_orm::sea_query::Alias::new("BIGINT"));
    let sum: Option<Option<i64>> = snapshot::Entity::find()
        .select_only()
        .column_as(total, "total")
        .filter(snapshot::Column::TenantId.eq(tenant))
        .into_tuple()
        .one(db)
        .await?;
    Ok(sum.flatten().unwrap_or(0))
}

/// Snapshots a running or paused sandbox of the caller's tenant: `begin`,
/// then `finish` in a task of its own (see `detached`).
pub async fn create(
    app: &Arc<App>,
    p: &Principal,
    row: &sandbox::Model,
    name: &str,
    memory: bool,
) -> Result<snapshot::Model> {
    let taking = begin(app, p, row, name, memory).await?;
    let app = app.clone();
    detached(async move {
        finish(
            &app,
            taking,
            &tokio::sync::watch::channel(Default::default()).0,
        )
        .await
    })
    .await
}

/// Runs `job` to its end in a task of its own, whether or not its caller
/// still waits. A call whose client leaves is dropped where it stands: a
/// copy dropped between the worker's answer and the row's update would
/// leave a reservation nobody lists and an image nobody records, and a
/// fork dropped half-way would leave sandboxes nobody asked for.
async fn detached<T: Send + 'static>(
    job: impl std::future::Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    tokio::spawn(job)
        .await
        .map_err(|e| Error::Internal(format!("a snapshot's task failed: {e}")))?
}

/// A snapshot reserved and not yet copied (see `begin`).
pub struct Taking {
    pending: snapshot::Model,
    row: sandbox::Model,
    addr: String,
    max: i64,
}

impl Taking {
    /// The snapshot's id.
    pub fn id(&self) -> &str {
        &self.pending.id
    }
}

/// The checks of a snapshot and its reservation (see `reserve`), before
/// any copy: a refusal here leaves nothing behind. Memory is refused as
/// a precondition of the platform, not UNIMPLEMENTED (the HTTP 501 a
/// client would take for a server fault).
pub async fn begin(
    app: &App,
    p: &Principal,
    row: &sandbox::Model,
    name: &str,
    memory: bool,
) -> Result<Taking> {
    if memory {
        return Err(Error::FailedPrecondition(
            "memory snapshots need CRIU, which does not work on this platform's kernels yet; \
             snapshots hold the filesystem only (leave memory unset)"
                .into(),
        ));
    }
    let name = if name.is_empty() {
        format!("{}-{}", row.id, now_ms())
    } else {
        name.to_string()
    };
    if !valid_name(&name) {
        return Err(Error::InvalidArgument(format!(
            "invalid snapshot name {name:?}: 1 to {MAX_NAME} letters, digits and ._-"
        )));
    }
    let state = sandboxes::state_of(row)?;
    if !matches!(state, SandboxState::Running | SandboxState::Paused) {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {state}; only a running or paused sandbox can be snapshotted",
            row.id
        )));
    }
    let worker = sandboxes::require_worker(app, row).await?;
    let addr = crate::domain::workers::data_address(app, &worker)
        .await?
        .ok_or_else(|| Error::Unavailable(format!("worker {worker} has no data address")))?;
    let id = crate::ids::new_id("snp");
    let worker_image = format!("{IMAGE_PREFIX}{id}");
    let pending = snapshot::Model {
        id: id.clone(),
        tenant_id: p.tenant_id.clone(),
        name,
        sandbox_id: row.id.clone(),
        image: row.image.clone(),
        worker_id: worker.clone(),
        worker_image: worker_image.clone(),
        size_bytes: 0,
        frozen_ms: 0,
        created_at: now_ms(),
        pending: true,
    };
    let max = reserve(app, pending.clone()).await?;
    Ok(Taking {
        pending,
        row: row.clone(),
        addr,
        max,
    })
}

/// The copy of a snapshot `begin` reserved, telling `progress` how far
/// it has got: the snapshot, or the reservation and whatever the worker
/// kept let go.
pub async fn finish(
    app: &App,
    t: Taking,
    progress: &tokio::sync::watch::Sender<wpb::TakeSnapshotResponse>,
) -> Result<snapshot::Model> {
    let Taking {
        pending,
        row,
        addr,
        max,
    } = t;
    let (id, worker, worker_image) = (
        pending.id.clone(),
        pending.worker_id.clone(),
        pending.worker_image.clone(),
    );
    let row = &row;
    let done = app
        .workers()
        .snapshot(
            &addr,
            row.generation,
            wpb::SnapshotSandboxRequest {
                sandbox_id: row.id.clone(),
                image_name: worker_image.clone(),
                max_bytes: max,
            },
            progress,
        )
        .await;
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // The reservation goes; so does whatever the worker kept.
            snapshot::Entity::delete_by_id(id).exec(app.db()).await?;
            if !matches!(e, Error::AlreadyExists(_)) {
                forget(app, &worker, &worker_image).await?;
            }
            return Err(worker_error(app, row, max, e));
        }
    };
    let frozen = done.frozen.unwrap_or_default();
    let mut m: snapshot::ActiveModel = pending.into();
    m.size_bytes = Set(done.size_bytes);
    m.frozen_ms = Set(frozen.seconds * 1000 + i64::from(frozen.nanos) / 1_000_000);
    m.pending = Set(false);
    let m = m.update(app.db()).await?;
    app.hub().set_image(&worker, &worker_image, true);
    Ok(m)
}

/// How long a reservation whose copy never finished (its server was
/// killed mid-copy) holds its bytes: past it, it is let go.
const STALE_RESERVATION_MS: i64 = 3_600_000;

/// Reserves the bytes of snapshot `pending` in one transaction with the
/// check of the tenant's quota, its name and its snapshots under way, so
/// concurrent ones are checked together (each once saw the whole room):
/// the row, pending, holds the reservation until the copy's size
/// replaces it. The most bytes the copy may hold.
async fn reserve(app: &App, mut pending: snapshot::Model) -> Result<i64> {
    use sea_orm::{ConnectionTrait, DbBackend};
    let tenant = pending.tenant_id.clone();
    let _lock = app.tenant_lock(&tenant).lock_owned().await;
    let txn = crate::db::begin_write(app.db()).await?;
    if txn.get_database_backend() == DbBackend::Postgres {
        crate::db::entity::tenant::Entity::find_by_id(tenant.clone())
            .lock(sea_orm::sea_query::LockType::Update)
            .one(&txn)
            .await?;
    }
    snapshot::Entity::delete_many()
        .filter(snapshot::Column::TenantId.eq(&tenant))
        .filter(snapshot::Column::Pending.eq(true))
        .filter(snapshot::Column::CreatedAt.lt(now_ms() - STALE_RESERVATION_MS))
        .exec(&txn)
        .await?;
    let taken = snapshot::Entity::find()
        .filter(snapshot::Column::TenantId.eq(&tenant))
        .filter(snapshot::Column::Name.eq(&pending.name))
        .one(&txn)
        .await?;
    if taken.is_some() {
        return Err(Error::AlreadyExists(format!("snapshot {:?}", pending.name)));
    }
    let under_way = snapshot::Entity::find()
        .filter(snapshot::Column::TenantId.eq(&tenant))
        .filter(snapshot::Column::Pending.eq(true))
        .count(&txn)
        .await?;
    if under_way >= u64::from(app.config().tenant_concurrent_snapshots) {
        return Err(Error::ResourceExhausted(format!(
            "{under_way} snapshots of the tenant are being taken, its limit (--tenant-concurrent-snapshots); retry when one is done"
        )));
    }
    let room = app.config().tenant_snapshot_bytes - used_bytes(&txn, &tenant).await?;
    if room <= 0 {
        return Err(Error::ResourceExhausted(format!(
            "the tenant's snapshots hold {} MiB (taken and under way), its limit (--tenant-snapshot-mib); delete some",
            app.config().tenant_snapshot_bytes >> 20
        )));
    }
    let max = room.min(app.config().max_snapshot_bytes);
    pending.size_bytes = max;
    let m: snapshot::ActiveModel = pending.into();
    match m.insert(&txn).await {
        Ok(_) => {}
        Err(e) => {
            return Err(match e.sql_err() {
                Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => {
                    Error::AlreadyExists("a snapshot of that name".into())
                }
                _ => Error::Db(e),
            });
        }
    }
    txn.commit().await?;
    Ok(max)
}

/// A worker's refusal of a snapshot, for the caller.
fn worker_error(app: &App, row: &sandbox::Model, max: i64, e: Error) -> Error {
    match e {
        Error::ResourceExhausted(m) => Error::ResourceExhausted(format!(
            "sandbox {}'s files hold more than {} MiB, {}: {m}",
            row.id,
            max >> 20,
            if max < app.config().max_snapshot_bytes {
                "the room left in the tenant's snapshot quota"
            } else {
                "the most one snapshot may hold (--max-snapshot-mib)"
            },
        )),
        e => e,
    }
}

/// Deletes the tenant's snapshot; its worker forgets the image, keeping
/// the layers its sandboxes still use.
pub async fn delete(app: &App, tenant: &str, id: &str) -> Result<snapshot::Model> {
    let row = get(app, tenant, id).await?;
    snapshot::Entity::delete_by_id(row.id.clone())
        .exec(app.db())
        .await?;
    forget(app, &row.worker_id, &row.worker_image).await?;
    Ok(row)
}

/// Tells the snapshot's worker to forget its image; on the shared
/// backend, every reachable worker of it too (they may hold copies, and
/// the one that took it may be gone while the copy on the shared storage
/// must go).
async fn forget(app: &App, worker: &str, image: &str) -> Result<()> {
    let mut told = vec![worker.to_string()];
    if crate::domain::workers::on_shared_backend(app.db(), worker).await? {
        for w in crate::domain::workers::shared_reachable(app).await? {
            if w != worker {
                told.push(w);
            }
        }
    }
    for w in told {
        forget_on(app, &w, image).await?;
    }
    Ok(())
}

async fn forget_on(app: &App, worker: &str, image: &str) -> Result<()> {
    app.hub().set_image(worker, image, false);
    let Some(addr) = crate::domain::workers::data_address(app, worker).await? else {
        tracing::warn!(worker = %worker, image = %image, "the worker is away; it keeps the deleted snapshot's files");
        return Ok(());
    };
    let r = app.workers().delete_image(&addr, image).await;
    if let Err(e) = r {
        tracing::warn!(worker = %worker, image = %image, error = %e, "the worker kept a deleted snapshot");
    }
    Ok(())
}

/// The prefix of a snapshot's image name on its worker.
pub const IMAGE_PREFIX: &str = "snapshot/";

/// The image a create from the tenant's snapshot `id` runs, and whether
/// it is on the shared storage (taken on the shared backend), where any
/// worker of that backend reaches it.
pub async fn image_of(app: &App, tenant: &str, id: &str) -> Result<(String, bool)> {
    let row = get(app, tenant, id).await?;
    let shared = crate::domain::workers::on_shared_backend(app.db(), &row.worker_id).await?;
    Ok((row.worker_image, shared))
}

/// `count` new sandboxes from `row`'s files now, with its settings; all
/// running when it answers, or none left behind.
pub async fn fork(
    app: &Arc<App>,
    p: &Principal,
    row: &sandbox::Model,
    count: i32,
) -> Result<Vec<sandbox::Model>> {
    if !(1..=MAX_FORKS).contains(&count) {
        return Err(Error::InvalidArgument(format!(
            "count must be 1 to {MAX_FORKS}"
        )));
    }
    let (app, p, row) = (app.clone(), p.clone(), row.clone());
    detached(async move {
        let name = format!("fork-{}-{}", row.id, now_ms());
        let snap = create(&app, &p, &row, &name, false).await?;
        let made = make_forks(&app, &p, &row, &snap, count).await;
        let _ = delete(&app, &p.tenant_id, &snap.id).await;
        made
    })
    .await
}

async fn make_forks(
    app: &Arc<App>,
    p: &Principal,
    row: &sandbox::Model,
    snap: &snapshot::Model,
    count: i32,
) -> Result<Vec<sandbox::Model>> {
    let env: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&row.env).map_err(|_| {
            Error::Internal(format!("sandbox {}: its environment does not read", row.id))
        })?;
    let secret_names: Vec<String> = serde_json::from_str(&row.secret_names).map_err(|_| {
        Error::Internal(format!("sandbox {}: its secret names do not read", row.id))
    })?;
    let n = NewSandbox {
        image: String::new(),
        snapshot_id: Some(snap.id.clone()),
        cpu_millis: row.cpu_millis,
        memory_mib: row.memory_mib,
        disk_mib: row.disk_mib,
        max_pids: row.max_pids,
        labels: sandboxes::labels_of(row)?,
        env,
        secret_names,
        network_policy: Some(sandboxes::policy_of(row)?),
        timeout: Some(std::time::Duration::from_millis(
            row.timeout_ms.max(1) as u64
        )),
        timeout_action: Some(sandboxes::timeout_action_of(row)?),
        metadata: sandboxes::metadata_of(row)?,
        idempotency_key: None,
        idle_timeout: (row.idle_timeout_ms > 0)
            .then(|| std::time::Duration::from_millis(row.idle_timeout_ms as u64)),
        auto_resume: row.auto_resume,
        isolation: crate::domain::isolation::Isolation::parse(&row.isolation)?,
        // A volume is mounted by one sandbox at a time: forks start
        // without the parent's (a snapshot holds its disk, not volumes).
        volume_mounts: Vec::new(),
        restart_policy: Some(sandboxes::restart_policy_of(row)?),
        worker_loss: match row.worker_loss.as_str() {
            "" => None,
            _ => Some(sandboxes::worker_loss_of(row, app.config().failover_local)?),
        },
    };
    let mut made: Vec<sandbox::Model> = Vec::new();
    let mut failed = None;
    for _ in 0..count {
        match sandboxes::create(app, p, n.clone()).await {
            Ok(r) => made.push(r),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if failed.is_none() {
        let waits = made
            .iter()
            .map(|r| sandboxes::wait_until_running(app, r.clone(), app.config().max_wait_timeout));
        let mut running = Vec::new();
        for r in futures::future::join_all(waits).await {
            match r {
                Ok(r) => running.push(r),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if failed.is_none() {
            return Ok(running);
        }
    }
    // None left behind: a fork of 5 that made 3 is an error, not 3.
    for r in made {
        if let Ok(r) =
            sandboxes::get(app, &crate::domain::tenants::TenantScope::own(p), &r.id).await
        {
            let _ = sandboxes::delete(app, r).await;
        }
    }
    Err(failed.expect("failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts a snapshot row of `bytes` for `tenant`.
    pub async fn row(db: &impl sea_orm::ConnectionTrait, tenant: &str, bytes: i64) {
        snapshot::ActiveModel {
            id: Set(crate::ids::new_id("snp")),
            tenant_id: Set(tenant.into()),
            name: Set(crate::ids::new_id("n")),
            sandbox_id: Set("sbx_x".into()),
            image: Set("host".into()),
            worker_id: Set("wrk_x".into()),
            worker_image: Set("snapshot/x".into()),
            size_bytes: Set(bytes),
            frozen_ms: Set(0),
            created_at: Set(now_ms()),
            pending: Set(false),
        }
        .insert(db)
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn a_tenants_snapshot_bytes_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::db::connect(&crate::db::sqlite_url(dir.path()))
            .await
            .unwrap();
        assert_eq!(used_bytes(&db, "ten_a").await.unwrap(), 0);
        row(&db, "ten_a", 5 << 30).await;
        row(&db, "ten_a", 7).await;
        row(&db, "ten_b", 100).await;
        assert_eq!(used_bytes(&db, "ten_a").await.unwrap(), (5 << 30) + 7);
        assert!(valid_name("after-setup.v2_x") && !valid_name("") && !valid_name("a/b"));
        assert!(!valid_name(&"x".repeat(MAX_NAME + 1)));
    }
}
