//! What sandboxes hold, and the one reservation create and start take.
//!
//! `holdings` is the one allocation query: what live sandboxes hold on
//! each worker, and what a tenant holds (its live cpu and memory, and
//! every sandbox it has not deleted, which its quota counts). `reserve`
//! serializes a tenant's quota-checked changes (a lock on this server, the
//! tenant's row locked on PostgreSQL for several servers), checks the
//! quota and the fair share against the holdings, and hands back the open
//! transaction: the caller's write (the insert of a create, the state
//! change of a start) commits with the check, so no second change slips
//! between them.

use crate::app::App;
use crate::db::entity::{sandbox, tenant};
use crate::domain::scheduler::{self, Amount, Candidate};
use crate::domain::state::SandboxState;
use crate::domain::tenants::Usage;
use crate::error::{Error, Result};
use sea_orm::sea_query::LockType;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, QueryFilter,
    QuerySelect,
};
use std::collections::HashMap;

/// What sandboxes hold (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holdings {
    /// Live sandboxes' cpu, memory and count on each worker.
    pub by_worker: HashMap<String, Amount>,
    /// The tenant asked for (zero when none was).
    pub tenant: Usage,
}

/// Reads what sandboxes hold: on every worker, and for `tenant`.
pub async fn holdings(db: &impl ConnectionTrait, tenant: Option<&str>) -> Result<Holdings> {
    let rows: Vec<(String, Option<String>, String, i64, i64)> = sandbox::Entity::find()
        .select_only()
        .column(sandbox::Column::TenantId)
        .column(sandbox::Column::WorkerId)
        .column(sandbox::Column::State)
        .column(sandbox::Column::CpuMillis)
        .column(sandbox::Column::MemoryMib)
        .filter(sandbox::Column::State.ne(SandboxState::Deleted.as_str()))
        .into_tuple()
        .all(db)
        .await?;
    let mut h = Holdings::default();
    for (tenant_id, worker, state, cpu, mem) in rows {
        // Unknown is counted as live: holding too much is the safe error.
        let live = state.parse::<SandboxState>().map_or(true, |s| s.is_live());
        let mine = tenant == Some(tenant_id.as_str());
        if mine {
            h.tenant.sandboxes += 1;
        }
        if !live {
            continue;
        }
        if mine {
            h.tenant.live_sandboxes += 1;
            h.tenant.cpu_millis += cpu;
            h.tenant.memory_mib += mem;
        }
        if let Some(w) = worker {
            let a = h.by_worker.entry(w).or_default();
            // A paused sandbox is frozen: it keeps its memory, not its
            // share of the cpus.
            if state != SandboxState::Paused.as_str() {
                a.cpu_millis += cpu;
            }
            a.memory_mib += mem;
            a.sandboxes += 1;
        }
    }
    Ok(h)
}

/// The quota and the fair share: whether `tenant`, holding `held`, may
/// take `req` more (a new sandbox when `req.sandboxes` is 1 and `new`).
/// `capacity` is the connected workers' total; `share` the most of it one
/// tenant other than the platform's may hold.
pub fn check(
    t: &tenant::Model,
    held: &Usage,
    req: &Amount,
    new: bool,
    capacity: &Amount,
    share: f64,
) -> Result<()> {
    if new && held.sandboxes + 1 > t.max_sandboxes {
        return Err(Error::ResourceExhausted(format!(
            "quota: tenant holds {} of {} sandboxes",
            held.sandboxes, t.max_sandboxes
        )));
    }
    if held.cpu_millis + req.cpu_millis > t.max_cpu_millis {
        return Err(Error::ResourceExhausted(format!(
            "quota: {} + {} cpu millis is over the tenant's {}",
            held.cpu_millis, req.cpu_millis, t.max_cpu_millis
        )));
    }
    if held.memory_mib + req.memory_mib > t.max_memory_mib {
        return Err(Error::ResourceExhausted(format!(
            "quota: {} + {} MiB is over the tenant's {} MiB",
            held.memory_mib, req.memory_mib, t.max_memory_mib
        )));
    }
    // No capacity at all: placement says so (UNAVAILABLE).
    if t.platform || capacity.sandboxes == 0 {
        return Ok(());
    }
    let live = Amount {
        cpu_millis: held.cpu_millis,
        memory_mib: held.memory_mib,
        sandboxes: held.live_sandboxes,
    };
    match scheduler::over_share(&live, req, capacity, share) {
        Some(why) => Err(Error::ResourceExhausted(why)),
        None => Ok(()),
    }
}

/// Which workers a sandbox can run on, by where its files are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Any worker that holds its image.
    Any,
    /// A worker on the shared backend that holds its image (it mounts
    /// volumes, which live on the shared storage).
    Shared,
    /// Any worker on the shared backend: its image is a snapshot on the
    /// shared storage, which such a worker copies when it lacks it.
    SharedImage,
}

/// The connected, undrained workers with what live sandboxes hold on
/// each (from `h`), those holding `image` (or reaching it: `reach`),
/// offering `level` and other than `exclude`.
pub(super) async fn candidates(
    app: &App,
    db: &impl ConnectionTrait,
    h: &Holdings,
    exclude: Option<&str>,
    image: &str,
    level: crate::domain::isolation::Isolation,
    reach: Reach,
) -> Result<Vec<Candidate>> {
    let Unplaceable {
        off: drained,
        cooling,
    } = unplaceable(app, db).await?;
    let shared = match reach {
        Reach::Any => None,
        Reach::Shared | Reach::SharedImage => {
            Some(crate::domain::workers::shared_ids(app, db).await?)
        }
    };
    let anywhere = reach == Reach::SharedImage;
    let off =
        |id: &String| drained.contains(id) || shared.as_ref().is_some_and(|s| !s.contains(id));
    let mut out: Vec<Candidate> = app
        .hub()
        .connected()
        .into_iter()
        .filter(|(id, _)| {
            !off(id)
                && Some(id.as_str()) != exclude
                && (anywhere || app.hub().has_image(id, image))
                && app.hub().offers(id, level.name())
        })
        .map(|(id, capacity)| {
            let held = h.by_worker.get(&id).cloned().unwrap_or_default();
            let used = app.hub().used(&id);
            app.config().placement.candidate(id, capacity, held, used)
        })
        .collect();
    // Workers whose sessions other servers on the database hold: their
    // commands are relayed (workers::calls).
    for (w, inv) in crate::domain::workers::remote(app, db).await? {
        let has_image = anywhere
            || image == talon_core::image::HOST_IMAGE
            || inv.images.iter().any(|i| i == image);
        if off(&w.id)
            || Some(w.id.as_str()) == exclude
            || !has_image
            || !inv.levels.iter().any(|l| l == level.name())
        {
            continue;
        }
        let capacity = Amount {
            cpu_millis: w.cpu_millis,
            memory_mib: w.memory_mib,
            sandboxes: w.max_sandboxes,
        };
        let held = h.by_worker.get(&w.id).cloned().unwrap_or_default();
        let used = inv.used.map(|[c, m, s]| Amount {
            cpu_millis: c,
            memory_mib: m,
            sandboxes: s,
        });
        out.push(app.config().placement.candidate(w.id, capacity, held, used));
    }
    // The cooldown keeps sandboxes off a worker that lost some lately, not
    // off the only workers there are.
    if out.iter().any(|c| !cooling.contains(&c.worker_id)) {
        out.retain(|c| !cooling.contains(&c.worker_id));
    }
    Ok(out)
}

/// Workers nothing is placed on (draining ones, and lost ones: their
/// lease lapsed), and those in the failover cooldown: the autopilot began
/// moving sandboxes off them within `failover_cooldown`, so a flapping
/// worker is not handed sandboxes to lose again while another worker
/// can take them (`candidates`).
struct Unplaceable {
    off: std::collections::HashSet<String>,
    cooling: std::collections::HashSet<String>,
}

async fn unplaceable(app: &App, db: &impl ConnectionTrait) -> Result<Unplaceable> {
    use crate::db::entity::worker;
    use sea_orm::Condition;
    let since = crate::db::now_ms() - app.config().failover_cooldown.as_millis() as i64;
    let mut out = Unplaceable {
        off: Default::default(),
        cooling: Default::default(),
    };
    for w in worker::Entity::find()
        .filter(
            Condition::any()
                .add(worker::Column::Draining.eq(true))
                .add(worker::Column::LostAt.gt(0))
                .add(worker::Column::LastMovedAt.gt(since)),
        )
        .all(db)
        .await?
    {
        if w.draining || w.lost_at > 0 {
            out.off.insert(w.id);
        } else {
            out.cooling.insert(w.id);
        }
    }
    Ok(out)
}

/// The placeable workers' capacity, in all: those connected here and
/// those of the other live servers on the database.
async fn capacity(app: &App, db: &impl ConnectionTrait) -> Result<Amount> {
    let drained = unplaceable(app, db).await?.off;
    let mut total = Amount::default();
    let remote = crate::domain::workers::remote(app, db)
        .await?
        .into_iter()
        .map(|(w, _)| {
            let cap = Amount {
                cpu_millis: w.cpu_millis,
                memory_mib: w.memory_mib,
                sandboxes: w.max_sandboxes,
            };
            (w.id, cap)
        });
    for (id, cap) in app.hub().connected().into_iter().chain(remote) {
        if !drained.contains(&id) {
            total.cpu_millis += cap.cpu_millis;
            total.memory_mib += cap.memory_mib;
            total.sandboxes += cap.sandboxes;
        }
    }
    Ok(total)
}

/// A tenant's quota-checked change under way: write with `txn`, then
/// `commit`. Dropping it rolls the transaction back.
pub(super) struct Reservation {
    _lock: tokio::sync::OwnedMutexGuard<()>,
    pub txn: DatabaseTransaction,
    pub holdings: Holdings,
}

impl Reservation {
    pub async fn commit(self) -> Result<()> {
        Ok(self.txn.commit().await?)
    }
}

/// Checks that the tenant may take `req` (a new sandbox if `new`) and
/// opens the transaction its write goes in (see the module doc).
pub(super) async fn reserve(
    app: &App,
    tenant_id: &str,
    req: &Amount,
    new: bool,
) -> Result<Reservation> {
    let lock = app.tenant_lock(tenant_id).lock_owned().await;
    let txn = crate::db::begin_write(app.db()).await?;
    let mut q = tenant::Entity::find_by_id(tenant_id.to_string());
    if txn.get_database_backend() == DbBackend::Postgres {
        q = q.lock(LockType::Update);
    }
    let t = q
        .one(&txn)
        .await?
        .ok_or_else(|| Error::NotFound(format!("tenant {tenant_id}")))?;
    let holdings = holdings(&txn, Some(tenant_id)).await?;
    let capacity = app.config().placement.share_of(capacity(app, &txn).await?);
    check(
        &t,
        &holdings.tenant,
        req,
        new,
        &capacity,
        app.config().tenant_max_share,
    )?;
    Ok(Reservation {
        _lock: lock,
        txn,
        holdings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(platform: bool) -> tenant::Model {
        tenant::Model {
            id: "ten_q".into(),
            name: "q".into(),
            platform,
            max_sandboxes: 3,
            max_cpu_millis: 4000,
            max_memory_mib: 4096,
            created_at: 0,
        }
    }

    fn a(cpu: i64, mem: i64, n: i64) -> Amount {
        Amount {
            cpu_millis: cpu,
            memory_mib: mem,
            sandboxes: n,
        }
    }

    fn held(n: i64, live: i64, cpu: i64, mem: i64) -> Usage {
        Usage {
            sandboxes: n,
            live_sandboxes: live,
            cpu_millis: cpu,
            memory_mib: mem,
        }
    }

    #[test]
    fn the_quota_on_create_and_on_start() {
        let t = tenant(false);
        let cap = a(64_000, 65_536, 100);
        let one = a(1000, 512, 1);
        // Create: a new sandbox counts against the sandbox quota...
        assert!(check(&t, &held(2, 2, 2000, 1024), &one, true, &cap, 0.5).is_ok());
        let e = check(&t, &held(3, 1, 1000, 512), &one, true, &cap, 0.5).unwrap_err();
        assert!(e.to_string().contains("3 of 3 sandboxes"), "{e}");
        // ...a start does not (the stopped one is counted already), but
        // its cpu and memory do.
        assert!(check(&t, &held(3, 2, 2000, 1024), &one, false, &cap, 0.5).is_ok());
        let e = check(&t, &held(3, 3, 3500, 1024), &one, false, &cap, 0.5).unwrap_err();
        assert!(e.to_string().contains("cpu"), "{e}");
        let e = check(&t, &held(1, 1, 0, 4000), &one, false, &cap, 0.5).unwrap_err();
        assert!(e.to_string().contains("MiB"), "{e}");
    }

    #[test]
    fn the_fair_share_but_for_the_platform() {
        let mut t = tenant(false);
        t.max_cpu_millis = 64_000;
        let cap = a(8000, 65_536, 100);
        let one = a(1000, 512, 1);
        let e = check(&t, &held(1, 4, 4000, 512), &one, false, &cap, 0.5).unwrap_err();
        assert!(e.to_string().contains("fair share"), "{e}");
        assert!(check(&t, &held(1, 3, 3000, 512), &one, false, &cap, 0.5).is_ok());
        t.platform = true;
        assert!(check(&t, &held(1, 7, 7000, 512), &one, false, &cap, 0.5).is_ok());
        // No capacity known: placement decides.
        t.platform = false;
        assert!(check(&t, &held(1, 7, 7000, 512), &one, false, &a(0, 0, 0), 0.5).is_ok());
    }

    /// The reservation on a real database: the write made in it commits
    /// with the check; a second reservation sees it.
    #[tokio::test]
    async fn a_reservation_holds_its_write() {
        let (app, _dir) = crate::app::App::for_tests().await;
        let t = "ten_res".to_string();
        crate::domain::test_support::tenant(app.db(), &t, false, 3).await;
        let one = a(1000, 512, 1);
        for i in 0..3 {
            let r = reserve(&app, &t, &one, true).await.unwrap();
            assert_eq!(r.holdings.tenant.sandboxes, i);
            super::super::lifecycle::tests::insert(&r.txn, &t, &format!("sbx_r{i}"), "running")
                .await;
            r.commit().await.unwrap();
        }
        let e = reserve(&app, &t, &one, true).await.err().unwrap();
        assert!(matches!(e, Error::ResourceExhausted(_)), "{e}");
        // Dropped without commit: nothing is kept.
        {
            let r = reserve(&app, &t, &one, false).await.unwrap();
            super::super::lifecycle::tests::insert(&r.txn, &t, "sbx_gone", "running").await;
        }
        let h = holdings(app.db(), Some(&t)).await.unwrap();
        assert_eq!(h.tenant.sandboxes, 3);
        assert_eq!(h.by_worker["wrk_t"].sandboxes, 3);
    }
}
