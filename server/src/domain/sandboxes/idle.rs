//! Idle auto-pause and auto-resume.
//!
//! The worker decides that a sandbox is idle, because only it sees all of
//! the activity: the calls it forwards, and what its agent reports of
//! process output, input and preview traffic. It freezes the sandbox and
//! reports it PAUSED in an event, which the server applies through the
//! fence like any report; its quota share is then released. Resuming is
//! the server's: a call that reaches a paused sandbox with `auto_resume`
//! resumes it through the ordinary resume, then goes on.

use super::{apply_status, reload, resume, state_of};
use crate::app::{App, EventKind, SandboxEvent};
use crate::config::ServerConfig;
use crate::db::entity::sandbox;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;

/// A sandbox's timeout (at create, or set later): 1 s to the longest
/// sandbox timeout. With `checked_timeout` below, the one place a
/// sandbox's timeouts are bounded.
pub(super) fn sandbox_timeout(c: &ServerConfig, t: Duration) -> Result<Duration> {
    if t.is_zero() || t > c.max_sandbox_timeout {
        return Err(Error::InvalidArgument(format!(
            "timeout must be between 1 s and {} s",
            c.max_sandbox_timeout.as_secs()
        )));
    }
    Ok(t)
}

/// A create's idle timeout, in ms (0: never): zero or unset turns it
/// off; otherwise between the configured minimum and the longest
/// sandbox timeout.
pub(super) fn checked_timeout(c: &ServerConfig, t: Option<Duration>) -> Result<i64> {
    let Some(t) = t.filter(|t| !t.is_zero()) else {
        return Ok(0);
    };
    if t < c.min_idle_timeout || t > c.max_sandbox_timeout {
        return Err(Error::InvalidArgument(format!(
            "idle_timeout must be between {} s and {} s (or unset: never)",
            c.min_idle_timeout.as_secs(),
            c.max_sandbox_timeout.as_secs()
        )));
    }
    Ok(t.as_millis() as i64)
}

/// Applies an event a worker sent on its own. A sandbox it reports
/// PAUSED was paused for being idle (the only pause a worker makes by
/// itself): that is counted and published as such.
pub async fn apply_event(app: &Arc<App>, worker: &str, s: &wpb::SandboxStatus) -> Result<()> {
    if s.fenced {
        return fenced(app, worker, s).await;
    }
    let before = super::find(app, &s.sandbox_id).await?;
    let row = apply_status(app, worker, s).await?;
    let paused_now = before.is_some_and(|b| b.state != row.state)
        && s.state == talon_proto::v1::SandboxState::Paused as i32
        && state_of(&row)? == SandboxState::Paused;
    if paused_now {
        app.metrics().idle_pauses.inc();
        tracing::info!(sandbox = %row.id, message = %s.message, "sandbox paused for being idle");
        app.emit(SandboxEvent {
            sandbox: row,
            kind: EventKind::IdlePaused,
            message: s.message.clone(),
        });
    }
    Ok(())
}

/// A worker stopped a sandbox because its lease lapsed. A report of a
/// generation the worker no longer holds is refused (and counted) like
/// any stale one; otherwise the sandbox is started again (see
/// `autopilot::restart_fenced`): its worker says it no longer runs.
async fn fenced(app: &Arc<App>, worker: &str, s: &wpb::SandboxStatus) -> Result<()> {
    let row = super::find(app, &s.sandbox_id)
        .await?
        .ok_or_else(|| crate::error::Error::NotFound(format!("sandbox {}", s.sandbox_id)))?;
    if let Err(e) = super::fence(&row, worker, s.generation) {
        app.metrics().stale_events.inc();
        return Err(e);
    }
    crate::domain::autopilot::restart_fenced(app, row).await
}

/// The sandbox, RUNNING, for a call (`call` names it) that must reach
/// it: a paused one with `auto_resume` is resumed first (and that is
/// published and counted); any other state is FAILED_PRECONDITION with
/// the state and why it is in it.
pub async fn ensure_running(app: &App, row: sandbox::Model, call: &str) -> Result<sandbox::Model> {
    let state = state_of(&row)?;
    if state == SandboxState::Running {
        return Ok(row);
    }
    if state != SandboxState::Paused || !row.auto_resume {
        return Err(not_running(&row, state));
    }
    let id = row.id.clone();
    let resumed = match resume(app, row).await {
        Ok(r) => r,
        // Several calls may race to resume it: one wins; the others find
        // it running when they read it again.
        Err(e) => {
            let fresh = reload(app, &id).await?;
            match state_of(&fresh)? {
                SandboxState::Running => return Ok(fresh),
                _ => return Err(e),
            }
        }
    };
    let s = state_of(&resumed)?;
    if s != SandboxState::Running {
        return Err(not_running(&resumed, s));
    }
    app.metrics().auto_resumes.inc();
    tracing::info!(sandbox = %id, call, "paused sandbox resumed for a call");
    app.emit(SandboxEvent {
        sandbox: resumed.clone(),
        kind: EventKind::AutoResumed,
        message: call.to_string(),
    });
    Ok(resumed)
}

/// "sandbox X is paused (why), not running[; how to resume]": the E2B
/// facade looks for ", not running", so it stays.
fn not_running(row: &sandbox::Model, state: SandboxState) -> Error {
    let why = if row.state_message.is_empty() {
        String::new()
    } else {
        format!(" ({})", row.state_message)
    };
    let hint = if state == SandboxState::Paused {
        "; resume it (ResumeSandbox), or create it with auto_resume"
    } else {
        ""
    };
    Error::FailedPrecondition(format!(
        "sandbox {} is {state}{why}, not running{hint}",
        row.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_timeouts_are_off_or_within_bounds() {
        let c = ServerConfig::with_defaults("/tmp/x".into());
        assert!(sandbox_timeout(&c, Duration::ZERO).is_err());
        assert!(sandbox_timeout(&c, c.max_sandbox_timeout + Duration::from_secs(1)).is_err());
        assert_eq!(
            sandbox_timeout(&c, Duration::from_secs(1)).unwrap(),
            Duration::from_secs(1)
        );
        assert_eq!(checked_timeout(&c, None).unwrap(), 0);
        assert_eq!(checked_timeout(&c, Some(Duration::ZERO)).unwrap(), 0);
        assert_eq!(
            checked_timeout(&c, Some(Duration::from_secs(60))).unwrap(),
            60_000
        );
        for bad in [Duration::from_secs(9), Duration::from_secs(25 * 3600)] {
            assert!(matches!(
                checked_timeout(&c, Some(bad)),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}
