//! What a (re)registering worker's report means when it is not simply a
//! state to take: its host restarted under a sandbox, or a crash cut an
//! operation short. Nothing is left in a transitional state, and nothing
//! whose workspace is there is left FAILED.
//!
//! - A sandbox whose container was gone when its worker started (the host
//!   rebooted, or its processes were killed while the worker was down)
//!   is STOPPED with its workspace; one that was running starts again if
//!   its restart policy is `always`. One that was paused stays stopped:
//!   its memory went with the host.
//! - A stop asked and not done (the row is STOPPING, the worker holds it
//!   running or paused) is asked again; a start asked and not done (the
//!   row is STARTING, the worker holds it stopped) likewise.
//!
//! The follow-ups run in the background: the registration's own session
//! carries their commands and must be serving by then.

use super::lifecycle::Edge;
use super::{RestartPolicy, restart_policy_of, state_of};
use crate::app::App;
use crate::db::entity::sandbox;
use crate::domain::state::SandboxState;
use crate::error::Result;
use crate::workers::reported_state;
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

/// What is left to do once a registration's report is applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FollowUp {
    /// Start it (again), with this state message.
    Start(String),
    /// Stop it (again).
    Stop,
}

const RESTARTED: &str = "its host restarted, and its processes ended with it";

/// Applies what worker `worker` reports of `row` at its registration (the
/// report passed the fence), saying what is left to do.
pub(super) async fn registered(
    app: &App,
    worker: &str,
    s: &wpb::SandboxStatus,
    row: &sandbox::Model,
) -> Result<Option<FollowUp>> {
    let before = state_of(row)?;
    if s.container_gone {
        return host_restarted(app, row, before).await;
    }
    let reported = reported_state(s.state);
    match (before, reported) {
        (SandboxState::Stopping, Some(SandboxState::Running | SandboxState::Paused)) => {
            Ok(Some(FollowUp::Stop))
        }
        (SandboxState::Starting, Some(SandboxState::Stopped)) => {
            Ok(Some(FollowUp::Start(row.state_message.clone())))
        }
        _ => {
            super::apply_status(app, worker, s).await?;
            Ok(None)
        }
    }
}

/// Rows of worker `worker` in a transition since before `before` whose
/// result never came (its command's session ended first: a server was
/// killed after the worker got the command), settled from the worker's
/// full report as a registration would: what it holds at the row's
/// generation in a settled state is taken, or the command asked again.
/// Without it such a row stayed STARTING (or STOPPING) for good.
pub async fn settle_stale(
    app: &Arc<App>,
    worker: &str,
    held: &[wpb::SandboxStatus],
    before: i64,
) -> Result<()> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let busy = [SandboxState::Starting, SandboxState::Stopping].map(|s| s.as_str());
    let rows = sandbox::Entity::find()
        .filter(sandbox::Column::WorkerId.eq(worker))
        .filter(sandbox::Column::State.is_in(busy))
        .filter(sandbox::Column::UpdatedAt.lt(before))
        .all(app.db())
        .await?;
    let mut todo = Vec::new();
    for row in rows {
        let Some(s) = held
            .iter()
            .find(|s| s.sandbox_id == row.id && s.generation == row.generation)
        else {
            continue;
        };
        let settled = matches!(
            reported_state(s.state),
            Some(SandboxState::Running | SandboxState::Paused | SandboxState::Stopped)
        );
        if !settled {
            continue;
        }
        tracing::warn!(sandbox = %row.id, worker = %worker, "a transition's result never came; settled from the worker's report");
        if let Some(next) = registered(app, worker, s, &row).await? {
            todo.push((row.id.clone(), next));
        }
    }
    follow_up(app, todo);
    Ok(())
}

/// A sandbox whose container vanished with its host: STOPPED with its
/// workspace and a message saying what to do; started again when it was
/// running and its policy says `always`.
async fn host_restarted(
    app: &App,
    row: &sandbox::Model,
    before: SandboxState,
) -> Result<Option<FollowUp>> {
    let policy = restart_policy_of(row)?;
    let (message, then) = match (before, policy) {
        // A start was asked: its command died with the worker (or never
        // reached it), so it is asked again. A start already under way
        // answers that the sandbox runs (starts are idempotent).
        (SandboxState::Starting, _) => {
            return Ok(Some(FollowUp::Start(row.state_message.clone())));
        }
        (SandboxState::Running, RestartPolicy::Always) => (
            format!("{RESTARTED}; starting it again with its workspace (restart policy always)"),
            Some(FollowUp::Start(format!(
                "started again with its workspace after {RESTARTED} (restart policy always)"
            ))),
        ),
        (SandboxState::Running, RestartPolicy::Never) => (
            format!(
                "{RESTARTED}; its workspace is kept: start it to run it again (restart policy never)"
            ),
            None,
        ),
        (SandboxState::Paused, _) => (
            "its host restarted while it was paused: its memory is gone and its workspace is kept; start it to run it again".to_string(),
            None,
        ),
        (SandboxState::Stopping, _) => (String::new(), None),
        // Stopped, failed or deleted: nothing ran that could end.
        _ => return Ok(None),
    };
    super::control::transition(app, row, Edge::To(SandboxState::Stopped, &message)).await?;
    Ok(then)
}

/// Carries out the follow-ups of a registration, in the background.
pub(super) fn follow_up(app: &Arc<App>, todo: Vec<(String, FollowUp)>) {
    if todo.is_empty() {
        return;
    }
    let app = app.clone();
    tokio::spawn(async move {
        use futures::StreamExt;
        // Several at once (a reboot brings back every sandbox of a host),
        // not so many that the worker's cores are all booting.
        futures::stream::iter(todo)
            .for_each_concurrent(FOLLOW_UPS_AT_ONCE, |(id, what)| {
                let app = app.clone();
                async move { carry_out(&app, &id, &what).await }
            })
            .await;
    });
}

/// Follow-ups carried out at once.
const FOLLOW_UPS_AT_ONCE: usize = 8;

async fn carry_out(app: &Arc<App>, id: &str, what: &FollowUp) {
    let r = async {
        let row = super::reload(app, id).await?;
        match what {
            FollowUp::Start(message) => {
                let row = match state_of(&row)? {
                    // Started meanwhile (a later registration's own
                    // follow-up, say): nothing left to do.
                    SandboxState::Running => return Ok(row),
                    // A start cut short: Starting again is not an edge,
                    // so it goes through Stopped.
                    SandboxState::Starting => {
                        super::control::transition(app, &row, Edge::To(SandboxState::Stopped, ""))
                            .await?
                    }
                    _ => row,
                };
                let tenant = row.tenant_id.clone();
                super::ops::start_with(app, &tenant, row, message).await
            }
            FollowUp::Stop => super::ops::stop_again(app, row).await,
        }
    }
    .await;
    match r {
        Ok(row) => {
            tracing::info!(sandbox = %id, state = %row.state, follow_up = ?what, "recovered after the worker's registration")
        }
        Err(e) => {
            tracing::warn!(sandbox = %id, follow_up = ?what, error = %e, "not recovered after the worker's registration")
        }
    }
}
