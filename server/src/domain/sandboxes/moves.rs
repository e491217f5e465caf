//! Moves: a sandbox to another worker at the next generation (by hand or
//! by the autopilot), or started again in place when none has room.

use super::control::{command_for, dispatch_create, tell, transition};
use super::history::{self, Cause};
use super::lifecycle::Edge;
use super::ops::{amount, not_deleted};
use super::quota::{self, Reach, candidates};
use super::{reload, state_of};
use crate::app::App;
use crate::db::entity::sandbox;
use crate::domain::scheduler;
use crate::domain::secrets::Missing;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

/// Moves a sandbox to another worker with a new generation, so that the old
/// worker's late reports and commands are refused.
///
/// A live sandbox never runs in two places: its worker stops it first
/// (the move is refused if it cannot), and a sandbox of a worker that
/// does not answer moves only once that worker is lost and its grace
/// period is over (by then it has fenced itself; the autopilot moves
/// such sandboxes on its own).
pub async fn reassign(app: &Arc<App>, id: &str, target: Option<&str>) -> Result<sandbox::Model> {
    let row = reload(app, id).await?;
    let live = matches!(
        state_of(&row)?,
        SandboxState::Starting | SandboxState::Running | SandboxState::Paused
    );
    if let (true, Some(w)) = (live, row.worker_id.clone()) {
        if crate::domain::workers::reachable(app, &w).await? {
            let cmd = command_for(&row, wpb::command::Action::Stop(wpb::StopSandboxCommand {}));
            let r = app
                .workers()
                .command(app, &w, cmd, app.config().worker_command_timeout)
                .await?;
            if r.code != 0 {
                return Err(Error::FailedPrecondition(format!(
                    "worker {w} could not stop sandbox {id} to move it: {}",
                    r.message
                )));
            }
        } else if !crate::domain::workers::lost_past_grace(app, &w).await? {
            return Err(Error::FailedPrecondition(format!(
                "worker {w} holding sandbox {id} does not answer: it moves once the worker is found lost and its grace period is over"
            )));
        }
    }
    move_to(app, row, target, None, Cause::Reassigned).await
}

/// Moves `row` (as read) to `target` or the placement's choice; `lost_at`
/// when its worker was found lost (the autopilot), which the state
/// message says, with whether its workspace came along: only between two
/// workers on the `shared` backend.
pub(crate) async fn move_to(
    app: &Arc<App>,
    row: sandbox::Model,
    target: Option<&str>,
    lost_at: Option<i64>,
    cause: Cause,
) -> Result<sandbox::Model> {
    not_deleted(&row)?;
    let h = quota::holdings(app.db(), None).await?;
    let level = crate::domain::isolation::Isolation::parse(&row.isolation)?;
    let from_shared = match row.worker_id.as_deref() {
        Some(w) => crate::domain::workers::on_shared_backend(app.db(), w).await?,
        None => false,
    };
    // A sandbox from a snapshot taken on the shared backend has its
    // image there (see the worker's `image::shared`).
    let reach = if from_shared
        && row
            .image
            .starts_with(crate::domain::snapshots::IMAGE_PREFIX)
    {
        Reach::SharedImage
    } else if !crate::domain::volumes::mounts_of(&row)?.is_empty() {
        Reach::Shared
    } else {
        Reach::Any
    };
    let cands = candidates(
        app,
        app.db(),
        &h,
        row.worker_id.as_deref(),
        &row.image,
        level,
        reach,
    )
    .await?;
    let worker = match target {
        Some(t) => cands
            .iter()
            .find(|c| c.worker_id == t)
            .ok_or_else(|| {
                Error::FailedPrecondition(format!(
                    "worker {t} is not connected, is draining, or holds it already"
                ))
            })?
            .worker_id
            .clone(),
        None => scheduler::place(
            &cands,
            &amount(row.cpu_millis, row.memory_mib),
            app.config().placement,
        )
        .ok_or_else(|| Error::Unavailable("no other worker has capacity".into()))?
        .worker_id
        .clone(),
    };
    let from = row.worker_id.clone().unwrap_or_default();
    let (message, kept) = move_message(app, &from, &worker, lost_at).await?;
    let fresh = transition(app, &row, Edge::Reassign(&worker, &message)).await?;
    remember(app, &fresh, (&from, &worker), cause, kept).await;
    if let Some(old) = row.worker_id.clone().filter(|w| app.hub().is_connected(w)) {
        // Tell the old worker to let go, at the generation it holds; a
        // shared disk is the new worker's.
        tell(
            app,
            old,
            command_for(
                &row,
                wpb::command::Action::Delete(wpb::DeleteSandboxCommand {
                    keep_shared_disk: true,
                }),
            ),
        );
    }
    dispatch_create(app, fresh.clone(), Missing::Skip).await?;
    Ok(fresh)
}

/// Starts a sandbox again on the worker that holds it, at the next
/// generation, when no other worker has room: its worker stopped it
/// (fencing; on the `local` backend its disk went with the fence), or no
/// longer holds it (`why`, for its state message).
pub(crate) async fn restart_in_place(
    app: &Arc<App>,
    row: sandbox::Model,
    why: &str,
    cause: Cause,
) -> Result<sandbox::Model> {
    use crate::domain::workers::{WorkspaceBackend, backend_of};
    not_deleted(&row)?;
    let worker = row.worker_id.clone().ok_or_else(|| {
        Error::FailedPrecondition(format!("sandbox {} is not placed on a worker", row.id))
    })?;
    let kept = backend_of(app, &worker).await? == WorkspaceBackend::Shared;
    let message = if kept {
        format!("started again on {worker} from its workspace on shared storage: {why}")
    } else {
        format!(
            "started again on {worker} with an empty workspace: {why}, and its disk (local backend) is not there"
        )
    };
    let fresh = transition(app, &row, Edge::Reassign(&worker, &message)).await?;
    remember(app, &fresh, (&worker, &worker), cause, kept).await;
    dispatch_create(app, fresh.clone(), Missing::Skip).await?;
    Ok(fresh)
}

/// Records a move that took in the failover history. The move stands
/// whatever happens here, so a failure is logged, not answered.
async fn remember(app: &App, fresh: &sandbox::Model, ends: (&str, &str), cause: Cause, kept: bool) {
    let r = history::record(
        app,
        &fresh.id,
        &fresh.tenant_id,
        ends,
        cause,
        fresh.generation,
        kept,
    )
    .await;
    if let Err(e) = r {
        tracing::error!(sandbox = %fresh.id, error = %e, "a move was not recorded in the failover history");
    }
}

/// The state message of a move, and whether the workspace came along.
async fn move_message(
    app: &App,
    from: &str,
    to: &str,
    lost_at: Option<i64>,
) -> Result<(String, bool)> {
    use crate::domain::workers::{WorkspaceBackend, backend_of};
    let why = match lost_at {
        Some(t) => format!("moved from worker {from}, lost at {t} ms (its lease lapsed)"),
        None => format!("reassigned from {from}"),
    };
    let kept = backend_of(app, from).await? == WorkspaceBackend::Shared
        && backend_of(app, to).await? == WorkspaceBackend::Shared;
    let message = if kept {
        format!("{why}; started on {to} from its workspace on shared storage")
    } else {
        format!(
            "{why}; its workspace was on {from}'s own disk (local backend) and is lost: started on {to} with an empty one"
        )
    };
    Ok((message, kept))
}
