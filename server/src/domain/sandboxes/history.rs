//! The failover history: one row for every move of a sandbox (`moves`),
//! with where it was, where it went, why and whether its workspace came
//! along, written by the move itself after its transition took, so a
//! move that lost its race is never recorded. Read newest first by id,
//! paged by cursor (the last id seen), so moves recorded between two
//! pages never shift the next.

use crate::app::App;
use crate::db::entity::sandbox_move;
use crate::db::now_ms;
use crate::error::{Error, Result};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    Set,
};

/// Why a sandbox moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// ReassignSandbox, by a platform admin.
    Reassigned,
    /// Its worker was lost past its grace period.
    WorkerLost,
    /// Its worker no longer held it.
    NotHeld,
    /// Its worker had fenced it, and came back.
    Fenced,
}

const CAUSES: [(Cause, &str); 4] = [
    (Cause::Reassigned, "reassigned"),
    (Cause::WorkerLost, "worker_lost"),
    (Cause::NotHeld, "not_held"),
    (Cause::Fenced, "fenced"),
];

impl Cause {
    pub fn as_str(self) -> &'static str {
        CAUSES
            .iter()
            .find(|(c, _)| *c == self)
            .expect("every cause")
            .1
    }

    /// A stored name; one this release does not know is an error.
    pub fn parse(s: &str) -> Result<Cause> {
        CAUSES
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(c, _)| *c)
            .ok_or_else(|| Error::Internal(format!("unknown move cause {s:?} in the history")))
    }
}

/// Records that `sandbox` (of `tenant`) went from `from` to `to` at
/// `generation`.
pub(super) async fn record(
    app: &App,
    sandbox: &str,
    tenant: &str,
    (from, to): (&str, &str),
    cause: Cause,
    generation: i64,
    workspace_kept: bool,
) -> Result<()> {
    sandbox_move::ActiveModel {
        moved_at: Set(now_ms()),
        sandbox_id: Set(sandbox.into()),
        tenant_id: Set(tenant.into()),
        from_worker: Set(from.into()),
        to_worker: Set(to.into()),
        cause: Set(cause.as_str().into()),
        generation: Set(generation),
        workspace_kept: Set(workspace_kept),
        ..Default::default()
    }
    .insert(app.db())
    .await?;
    Ok(())
}

/// A page of the history, newest first: up to `limit + 1` moves (for
/// `paged_by`) older than the cursor `before` (an id; 0 for the newest),
/// of `sandbox` and of `worker` (from or to) when not empty.
pub async fn moves(
    app: &App,
    sandbox: &str,
    worker: &str,
    before: i64,
    limit: u64,
) -> Result<Vec<sandbox_move::Model>> {
    let mut q = sandbox_move::Entity::find();
    if before > 0 {
        q = q.filter(sandbox_move::Column::Id.lt(before));
    }
    if !sandbox.is_empty() {
        q = q.filter(sandbox_move::Column::SandboxId.eq(sandbox));
    }
    if !worker.is_empty() {
        q = q.filter(
            Condition::any()
                .add(sandbox_move::Column::FromWorker.eq(worker))
                .add(sandbox_move::Column::ToWorker.eq(worker)),
        );
    }
    Ok(q.order_by_desc(sandbox_move::Column::Id)
        .limit(limit + 1)
        .all(app.db())
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_one_name_and_an_unknown_one_is_an_error() {
        for (c, n) in CAUSES {
            assert_eq!((c.as_str(), Cause::parse(n).unwrap()), (n, c));
        }
        assert!(Cause::parse("drained").is_err());
        assert!(Cause::parse("").is_err());
    }
}
