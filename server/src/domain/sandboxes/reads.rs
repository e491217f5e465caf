//! Tenant-scoped lookups and lists of sandboxes.

use super::{labels_of, metadata_of, state_of};
use crate::app::App;
use crate::db::entity::sandbox;
use crate::domain::state::SandboxState;
use crate::domain::tenants::TenantScope;
use crate::error::{Error, Result};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

/// The repository's tenant-scoped lookup: another tenant's sandbox is
/// NOT_FOUND, exactly like a missing one.
pub async fn get(app: &App, scope: &TenantScope, id: &str) -> Result<sandbox::Model> {
    if !talon_core::ids::valid_sandbox_id(id) || !scope.reaches(id) {
        return Err(Error::NotFound(format!("sandbox {id}")));
    }
    sandbox::Entity::find_by_id(id.to_string())
        .filter(sandbox::Column::TenantId.eq(scope.id()))
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {id}")))
}

/// `get` for the hot reads: GetSandbox and the data-plane calls (process,
/// PTY, file), which come many at a time for one running sandbox. A
/// running sandbox's row is reused for a moment (see cache.rs); every
/// change to a sandbox on this server forgets it.
pub async fn get_cached(app: &App, scope: &TenantScope, id: &str) -> Result<sandbox::Model> {
    if let Some(row) = app
        .running()
        .get(id)
        .filter(|r| r.tenant_id == scope.id() && scope.reaches(id))
    {
        return Ok(row);
    }
    let generation = app.running().generation();
    let row = get(app, scope, id).await?;
    if state_of(&row)? == SandboxState::Running {
        app.running().put(id.to_string(), generation, &row, None);
    }
    Ok(row)
}

/// A sandbox by id in any tenant, for callers whose credential already
/// names the tenant (a preview token); None when there is none.
pub async fn find(app: &App, id: &str) -> Result<Option<sandbox::Model>> {
    if !talon_core::ids::valid_sandbox_id(id) {
        return Ok(None);
    }
    Ok(sandbox::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await?)
}

/// The ids and tenants of every sandbox not deleted, in any tenant, for a
/// credential bound to one sandbox that does not name it (an E2B file
/// signature on a URL with no sandbox in it): the caller tries each.
pub async fn not_deleted(app: &App) -> Result<Vec<(String, String)>> {
    Ok(sandbox::Entity::find()
        .select_only()
        .column(sandbox::Column::Id)
        .column(sandbox::Column::TenantId)
        .filter(sandbox::Column::State.ne(SandboxState::Deleted.as_str()))
        .into_tuple()
        .all(app.db())
        .await?)
}

pub struct ListQuery {
    pub offset: u64,
    pub limit: u64,
    pub labels: Vec<(String, String)>,
    /// Pairs the metadata must hold, checked like labels.
    pub metadata: Vec<(String, String)>,
    pub states: Vec<SandboxState>,
}

impl ListQuery {
    fn matches(&self, row: &sandbox::Model) -> Result<bool> {
        let holds = |have: &std::collections::BTreeMap<String, String>,
                     want: &[(String, String)]| {
            want.iter().all(|(k, v)| have.get(k) == Some(v))
        };
        Ok(
            (self.labels.is_empty() || holds(&labels_of(row)?, &self.labels))
                && (self.metadata.is_empty() || holds(&metadata_of(row)?, &self.metadata)),
        )
    }
}

/// One page, newest first. Label and metadata matching happen here rather
/// than in SQL (both are JSON columns on both backends); the scan reads in batches
/// and the offset counts matching rows, so pages stay stable.
pub async fn list(
    app: &App,
    scope: &TenantScope,
    q: ListQuery,
) -> Result<(Vec<sandbox::Model>, bool)> {
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
        .filter(sandbox::Column::TenantId.eq(scope.id()))
        .filter(sandbox::Column::State.is_in(states))
        .order_by_desc(sandbox::Column::CreatedAt)
        .order_by_desc(sandbox::Column::Id);
    if q.labels.is_empty() && q.metadata.is_empty() {
        let mut rows = base
            .offset(q.offset)
            .limit(q.limit + 1)
            .all(app.db())
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
            .all(app.db())
            .await?;
        let n = batch.len() as u64;
        scanned += n;
        for row in batch {
            if q.matches(&row)? {
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

/// Changes to the scope's sandboxes (or to one of them) from now on, and
/// that sandbox as it is now first. A subscriber that falls behind gets
/// one `Err(Lagged)` and should read again.
pub async fn watch(
    app: &App,
    scope: &TenantScope,
    sandbox_id: Option<String>,
) -> Result<
    impl futures::Stream<Item = std::result::Result<crate::app::SandboxEvent, Lagged>> + use<>,
> {
    use tokio_stream::StreamExt;
    // Subscribe before reading, so no change between the two is lost.
    let rx = app.events().subscribe();
    let first = match &sandbox_id {
        Some(id) => Some(crate::app::SandboxEvent {
            sandbox: get(app, scope, id).await?,
            kind: crate::app::EventKind::StateChanged,
            message: String::new(),
        }),
        None => None,
    };
    let tenant = scope.id().to_string();
    let live = tokio_stream::wrappers::BroadcastStream::new(rx).filter_map(move |ev| match ev {
        Ok(ev)
            if ev.sandbox.tenant_id == tenant
                && sandbox_id.as_ref().is_none_or(|id| *id == ev.sandbox.id) =>
        {
            Some(Ok(ev))
        }
        Ok(_) => None,
        Err(_) => Some(Err(Lagged)),
    });
    Ok(tokio_stream::iter(first.map(Ok)).chain(live))
}

/// A watcher fell behind the changes and missed some.
#[derive(Debug)]
pub struct Lagged;

/// The access token of one of the caller's sandboxes (see
/// auth/sandbox_token.rs); none for a sandbox that is gone.
pub async fn access_token(app: &App, p: &crate::auth::Principal, id: &str) -> Result<String> {
    let row = get(app, &TenantScope::own(p), id).await?;
    if matches!(
        state_of(&row)?,
        SandboxState::Deleted | SandboxState::Failed
    ) {
        return Err(Error::NotFound(format!("sandbox {id}")));
    }
    app.preview().sandbox_token(&row.id, &row.tenant_id)
}

/// The sandboxes recorded on a worker, of every tenant, newest first,
/// deleted ones left out: up to `limit + 1` rows after the row `after`
/// (its creation time and id; none for the first page), so a sandbox
/// made between two pages never shifts the next (keyset, not offset).
/// For platform admins only (the access table says so): it crosses
/// tenants, so its caller gives out what placement needs, not contents.
pub async fn on_worker(
    app: &App,
    worker_id: &str,
    after: Option<(i64, String)>,
    limit: u64,
) -> Result<Vec<sandbox::Model>> {
    use sea_orm::Condition;
    crate::domain::workers::get(app, worker_id).await?;
    let mut q = sandbox::Entity::find()
        .filter(sandbox::Column::WorkerId.eq(worker_id))
        .filter(sandbox::Column::State.ne(SandboxState::Deleted.as_str()));
    if let Some((at, id)) = after {
        q = q.filter(
            Condition::any().add(sandbox::Column::CreatedAt.lt(at)).add(
                Condition::all()
                    .add(sandbox::Column::CreatedAt.eq(at))
                    .add(sandbox::Column::Id.lt(id)),
            ),
        );
    }
    Ok(q.order_by_desc(sandbox::Column::CreatedAt)
        .order_by_desc(sandbox::Column::Id)
        .limit(limit + 1)
        .all(app.db())
        .await?)
}
