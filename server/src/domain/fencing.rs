//! Which sandboxes a worker stops when its lease lapses (its fence scope)
//! and which the autopilot moves off a lost worker: one rule, seen from
//! both sides.
//!
//! Fencing exists so that a sandbox never runs in two places. It is worth
//! its price (the sandbox's processes) only where the platform could
//! start the sandbox elsewhere: on another worker on the shared backend
//! (its files come along), or, for a sandbox that chose to move with an
//! empty workspace (`WorkerLoss::Move`), on any other worker. Everything
//! else keeps running through any outage of the server, the database, the
//! network or the worker process, and is reachable again when its worker
//! is: killing it would protect nothing.
//!
//! The server tells each worker, in every lease renewal, the scope its
//! peers allow now. The worker applies a wider scope at once and reports
//! what it applies in its beats; a narrower one it applies only once a
//! beat reporting it has been stored. So the scope stored here is never
//! wider than what the worker (and its fence keeper) applies, and the
//! autopilot, which moves only what the stored scope covers, never moves
//! a sandbox its worker would leave running.

use crate::app::App;
use crate::db::entity::{sandbox, worker};
use crate::domain::sandboxes::{WorkerLoss, worker_loss_of};
use crate::domain::workers::WorkspaceBackend;
use crate::error::Result;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use talon_proto::talon::worker::v1 as wpb;

/// What a worker stops when its lease lapses, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FenceScope {
    /// Nothing: no other worker could take its sandboxes.
    None,
    /// Its sandboxes that move even with an empty workspace.
    Movable,
    /// Those, and every sandbox whose disk is on shared storage.
    Shared,
}

impl FenceScope {
    /// As stored and as the worker protocol numbers it. A number this
    /// server does not know reads as `None`: the autopilot then moves
    /// nothing, which never runs a sandbox twice.
    pub fn from_number(n: i64) -> FenceScope {
        match i32::try_from(n)
            .ok()
            .and_then(|n| wpb::FenceScope::try_from(n).ok())
        {
            Some(wpb::FenceScope::Movable) => FenceScope::Movable,
            Some(wpb::FenceScope::Shared) => FenceScope::Shared,
            _ => FenceScope::None,
        }
    }

    pub fn number(self) -> i32 {
        match self {
            FenceScope::None => wpb::FenceScope::None as i32,
            FenceScope::Movable => wpb::FenceScope::Movable as i32,
            FenceScope::Shared => wpb::FenceScope::Shared as i32,
        }
    }

    /// The scope a worker's peers allow: another live, undrained worker
    /// (`any`), one of them on the shared backend (`shared`).
    pub fn of_peers(any: bool, shared: bool) -> FenceScope {
        match (any, shared) {
            (_, true) => FenceScope::Shared,
            (true, false) => FenceScope::Movable,
            (false, false) => FenceScope::None,
        }
    }
}

/// The scope worker `id` should apply now: from the other workers whose
/// leases hold (on the database's clock `now`), that are not lost and
/// not draining.
pub async fn scope_for(app: &App, id: &str, now: i64) -> Result<FenceScope> {
    let peers = worker::Entity::find()
        .filter(worker::Column::Id.ne(id))
        .filter(worker::Column::LeaseExpiresAt.gt(now))
        .filter(worker::Column::LostAt.eq(0))
        .filter(worker::Column::Draining.eq(false))
        .all(app.db())
        .await?;
    let shared = peers
        .iter()
        .any(|w| w.workspace_backend == WorkspaceBackend::Shared.as_str());
    Ok(FenceScope::of_peers(!peers.is_empty(), shared))
}

/// Whether a sandbox on worker `w` is stopped by its fence at `scope`:
/// the rule the worker applies (`SandboxHost::fenced_at` on its side).
pub fn fenced_at(scope: FenceScope, backend: WorkspaceBackend, loss: WorkerLoss) -> bool {
    (backend == WorkspaceBackend::Shared && scope >= FenceScope::Shared)
        || (loss == WorkerLoss::Move && scope >= FenceScope::Movable)
}

/// Whether the autopilot may move `row` off its lost worker `w`: only
/// what `w` stops when its lease lapses, at the scope it last reported.
pub fn moves_on_loss(app: &App, row: &sandbox::Model, w: &worker::Model) -> Result<bool> {
    Ok(fenced_at(
        FenceScope::from_number(w.fence_scope),
        WorkspaceBackend::parse(&w.workspace_backend)?,
        worker_loss_of(row, app.config().failover_local)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_another_worker_could_start_is_fenced() {
        use FenceScope as S;
        use WorkerLoss::{Move, Wait};
        use WorkspaceBackend as B;
        assert_eq!(FenceScope::of_peers(false, false), S::None);
        assert_eq!(FenceScope::of_peers(true, false), S::Movable);
        assert_eq!(FenceScope::of_peers(true, true), S::Shared);
        // Alone, nothing is fenced, whatever the backend or the choice.
        for b in [B::Local, B::Shared] {
            for l in [Wait, Move] {
                assert!(!fenced_at(S::None, b, l), "{b:?} {l:?}");
            }
        }
        // A local sandbox that waits is never fenced.
        for s in [S::None, S::Movable, S::Shared] {
            assert!(!fenced_at(s, B::Local, Wait), "{s:?}");
        }
        // One that moves, as soon as any other worker is there.
        assert!(fenced_at(S::Movable, B::Local, Move));
        // A shared one only once another shared worker is there.
        assert!(!fenced_at(S::Movable, B::Shared, Wait));
        assert!(fenced_at(S::Shared, B::Shared, Wait));
        assert!(fenced_at(S::Shared, B::Local, Move));
    }

    #[test]
    fn scope_numbers_round_trip_and_unknown_ones_fence_nothing() {
        for s in [FenceScope::None, FenceScope::Movable, FenceScope::Shared] {
            assert_eq!(FenceScope::from_number(s.number() as i64), s);
        }
        for n in [0, 42, -1, i64::MAX] {
            assert_eq!(FenceScope::from_number(n), FenceScope::None, "{n}");
        }
    }
}
