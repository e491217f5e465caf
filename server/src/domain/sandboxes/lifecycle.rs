//! The one writer of a sandbox's state and generation, and the fence.
//!
//! `apply` moves a row along one edge: a state machine edge (`To`), or a
//! reassignment to another worker, which starts it there at a new
//! generation (`Reassign`). It is a conditional update on the state and
//! generation the caller read, so a racing call or a stale worker cannot
//! move a sandbox along an edge the machine lacks; it runs in whatever
//! connection it is given, so a quota reservation's transaction holds its
//! check and its write together. `fence` says whether a worker's report
//! may touch a row at all.

use crate::db::entity::sandbox;
use crate::db::now_ms;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// One step of a sandbox's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge<'a> {
    /// Along the state machine to this state, with a message for it.
    To(SandboxState, &'a str),
    /// To this worker, at the next generation, starting again there, with
    /// a message saying why (and what of it survived the move).
    Reassign(&'a str, &'a str),
}

/// Applies `edge` to `row` (as read: its state and generation must still
/// be those). FAILED_PRECONDITION for an edge the machine lacks, ABORTED
/// when the row changed since it was read.
pub async fn apply<C: ConnectionTrait>(
    db: &C,
    row: &sandbox::Model,
    edge: Edge<'_>,
) -> Result<sandbox::Model> {
    let current = super::state_of(row)?;
    let now = now_ms();
    let mut q =
        sandbox::Entity::update_many().col_expr(sandbox::Column::UpdatedAt, Expr::value(now));
    match edge {
        Edge::To(to, message) => {
            if !current.can_become(to) {
                return Err(Error::FailedPrecondition(format!(
                    "sandbox {} is {current}, not able to become {to}",
                    row.id
                )));
            }
            q = q.col_expr(sandbox::Column::State, Expr::value(to.as_str()));
            // Up and running says nothing new: what it was started with
            // (a move's account of its workspace) stays.
            if !(message.is_empty()
                && (current, to) == (SandboxState::Starting, SandboxState::Running))
            {
                q = q.col_expr(sandbox::Column::StateMessage, Expr::value(message));
            }
            // Resumed or started again, a sandbox gets its whole timeout.
            if matches!(
                (current, to),
                (SandboxState::Paused, SandboxState::Running)
                    | (
                        SandboxState::Stopped | SandboxState::Failed,
                        SandboxState::Starting
                    )
            ) {
                q = q.col_expr(
                    sandbox::Column::ExpiresAt,
                    Expr::value(now + row.timeout_ms),
                );
            }
        }
        Edge::Reassign(worker, message) => {
            if !current.can_be_reassigned() {
                return Err(Error::FailedPrecondition(format!(
                    "sandbox {} is {current}",
                    row.id
                )));
            }
            q = q
                .col_expr(sandbox::Column::Generation, Expr::value(row.generation + 1))
                .col_expr(sandbox::Column::WorkerId, Expr::value(worker))
                .col_expr(
                    sandbox::Column::State,
                    Expr::value(SandboxState::Starting.as_str()),
                )
                .col_expr(sandbox::Column::StateMessage, Expr::value(message));
        }
    }
    let res = q
        .filter(sandbox::Column::Id.eq(&row.id))
        .filter(sandbox::Column::Generation.eq(row.generation))
        .filter(sandbox::Column::State.eq(current.as_str()))
        .exec(db)
        .await?;
    let fresh = sandbox::Entity::find_by_id(row.id.clone())
        .one(db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("sandbox {}", row.id)))?;
    if res.rows_affected != 1 {
        return Err(Error::Aborted(format!(
            "sandbox {} changed concurrently; it is now {} (generation {})",
            row.id, fresh.state, fresh.generation
        )));
    }
    Ok(fresh)
}

/// Whether what `worker` says about generation `generation` of `row` may
/// change it: only the worker that holds it, at its current generation.
/// ABORTED otherwise (a late report of a worker it was moved from, or of
/// an older generation).
pub fn fence(row: &sandbox::Model, worker: &str, generation: i64) -> Result<()> {
    if row.worker_id.as_deref() == Some(worker) && row.generation == generation {
        Ok(())
    } else {
        Err(Error::Aborted(format!(
            "stale report for {} from {worker} (generation {generation}; it is generation {} on {})",
            row.id,
            row.generation,
            row.worker_id.as_deref().unwrap_or("no worker")
        )))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sea_orm::ActiveModelTrait;

    pub(crate) async fn insert(
        db: &impl ConnectionTrait,
        tenant: &str,
        id: &str,
        state: &str,
    ) -> sandbox::Model {
        let mut r = super::super::record::tests::row();
        r.id = id.into();
        r.tenant_id = tenant.into();
        r.state = state.into();
        sandbox::ActiveModel::from(r).insert(db).await.unwrap()
    }

    async fn db() -> (sea_orm::DatabaseConnection, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::db::connect(&crate::db::sqlite_url(dir.path()))
            .await
            .unwrap();
        crate::domain::test_support::tenant(&db, "ten_l", false, 1000).await;
        (db, dir)
    }

    /// Every edge of the machine is applied, every other is refused and
    /// leaves the row as it was.
    #[tokio::test]
    async fn every_edge_and_only_those() {
        let (db, _dir) = db().await;
        for (i, from) in SandboxState::ALL.into_iter().enumerate() {
            for (j, to) in SandboxState::ALL.into_iter().enumerate() {
                let id = format!("sbx_e{i}{j}");
                let row = insert(&db, "ten_l", &id, from.as_str()).await;
                let r = apply(&db, &row, Edge::To(to, "why")).await;
                let now = sandbox::Entity::find_by_id(id.clone())
                    .one(&db)
                    .await
                    .unwrap()
                    .unwrap();
                if from.can_become(to) {
                    let r = r.unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
                    assert_eq!(
                        (r.state.as_str(), r.state_message.as_str()),
                        (to.as_str(), "why")
                    );
                    assert_eq!(r.generation, 1);
                } else {
                    assert!(
                        matches!(r, Err(Error::FailedPrecondition(_))),
                        "{from} -> {to}: {r:?}"
                    );
                    assert_eq!(now, row, "{from} -> {to} changed the row");
                }
            }
        }
    }

    /// A caller that read an older generation, or a state since changed,
    /// changes nothing.
    #[tokio::test]
    async fn a_stale_read_is_refused() {
        let (db, _dir) = db().await;
        let row = insert(&db, "ten_l", "sbx_stale", "running").await;
        let moved = apply(&db, &row, Edge::Reassign("wrk_2", "moved from wrk_t"))
            .await
            .unwrap();
        assert_eq!(
            (
                moved.generation,
                moved.state.as_str(),
                moved.worker_id.as_deref()
            ),
            (2, "starting", Some("wrk_2"))
        );
        assert!(moved.state_message.contains("wrk_t"));
        // The old read: generation 1.
        let r = apply(&db, &row, Edge::To(SandboxState::Paused, "")).await;
        assert!(matches!(r, Err(Error::Aborted(_))), "{r:?}");
        let r = apply(&db, &row, Edge::Reassign("wrk_3", "moved")).await;
        assert!(matches!(r, Err(Error::Aborted(_))), "{r:?}");
        // The same generation, but the state moved on.
        let running = apply(&db, &moved, Edge::To(SandboxState::Running, ""))
            .await
            .unwrap();
        let r = apply(&db, &moved, Edge::To(SandboxState::Failed, "")).await;
        assert!(matches!(r, Err(Error::Aborted(_))), "{r:?}");
        assert_eq!(
            sandbox::Entity::find_by_id("sbx_stale")
                .one(&db)
                .await
                .unwrap()
                .unwrap(),
            running
        );
    }

    #[tokio::test]
    async fn reassignment_from_every_state_but_deleted() {
        let (db, _dir) = db().await;
        for (i, from) in SandboxState::ALL.into_iter().enumerate() {
            let row = insert(&db, "ten_l", &format!("sbx_r{i}"), from.as_str()).await;
            let r = apply(&db, &row, Edge::Reassign("wrk_9", "moved")).await;
            assert_eq!(r.is_ok(), from != SandboxState::Deleted, "{from}: {r:?}");
        }
    }

    #[test]
    fn the_fence() {
        let row = super::super::record::tests::row();
        assert!(fence(&row, "wrk_t", 1).is_ok());
        for (w, g) in [("wrk_t", 0), ("wrk_t", 2), ("wrk_x", 1)] {
            assert!(
                matches!(fence(&row, w, g), Err(Error::Aborted(_))),
                "{w} {g}"
            );
        }
    }

    /// Fail closed: a row whose state doesn't read is not moved at all.
    #[tokio::test]
    async fn a_corrupt_state_is_not_moved() {
        let (db, _dir) = db().await;
        let row = insert(&db, "ten_l", "sbx_bad", "zombie").await;
        let r = apply(&db, &row, Edge::To(SandboxState::Deleted, "")).await;
        assert!(matches!(r, Err(Error::Internal(_))), "{r:?}");
    }
}
