//! A stored sandbox row's typed fields. Fail closed: a state, policy,
//! timeout action or label map that doesn't read is an error naming the
//! sandbox, never a default (a corrupt policy used to read as `open`, an
//! unknown state as `failed`, an unknown timeout action as `pause`).

use crate::db::entity::sandbox;
use crate::domain::policy::EgressPolicy;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// What happens to a sandbox when its timeout passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutAction {
    Pause,
    Delete,
}

impl TimeoutAction {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutAction::Pause => "pause",
            TimeoutAction::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pause" => Some(TimeoutAction::Pause),
            "delete" => Some(TimeoutAction::Delete),
            _ => None,
        }
    }
}

/// What happens to a sandbox whose processes ended with its host while
/// its workspace is kept (see `RestartPolicy` in the contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Started again when its worker is back (a paused one comes back
    /// stopped: its memory is gone).
    Always,
    /// Left stopped, for its owner to start.
    Never,
}

impl RestartPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::Always => "always",
            RestartPolicy::Never => "never",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "always" => Some(RestartPolicy::Always),
            "never" => Some(RestartPolicy::Never),
            _ => None,
        }
    }
}

/// What the platform does with a live sandbox whose worker is lost when
/// its workspace cannot come along (see `WorkerLossAction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerLoss {
    /// It runs on where it is, reachable again when its worker is.
    Wait,
    /// Its worker stops it and it starts on another with an empty
    /// workspace.
    Move,
}

impl WorkerLoss {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerLoss::Wait => "wait",
            WorkerLoss::Move => "move",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "wait" => Some(WorkerLoss::Wait),
            "move" => Some(WorkerLoss::Move),
            _ => None,
        }
    }
}

fn corrupt(row: &sandbox::Model, what: &str, value: &str) -> Error {
    Error::Internal(format!(
        "sandbox {}: its stored {what} {value:?} does not read; refusing to guess",
        row.id
    ))
}

pub fn state_of(row: &sandbox::Model) -> Result<SandboxState> {
    row.state
        .parse()
        .map_err(|_| corrupt(row, "state", &row.state))
}

pub fn policy_of(row: &sandbox::Model) -> Result<EgressPolicy> {
    EgressPolicy::from_stored(&row.network_policy)
        .map_err(|_| corrupt(row, "egress policy", &row.network_policy))
}

pub fn timeout_action_of(row: &sandbox::Model) -> Result<TimeoutAction> {
    TimeoutAction::parse(&row.timeout_action)
        .ok_or_else(|| corrupt(row, "timeout action", &row.timeout_action))
}

pub fn restart_policy_of(row: &sandbox::Model) -> Result<RestartPolicy> {
    RestartPolicy::parse(&row.restart_policy)
        .ok_or_else(|| corrupt(row, "restart policy", &row.restart_policy))
}

/// Its own action, or the platform's `default` where it chose none ("").
pub fn worker_loss_of(row: &sandbox::Model, default: WorkerLoss) -> Result<WorkerLoss> {
    match row.worker_loss.as_str() {
        "" => Ok(default),
        s => WorkerLoss::parse(s).ok_or_else(|| corrupt(row, "worker loss action", s)),
    }
}

pub fn labels_of(row: &sandbox::Model) -> Result<BTreeMap<String, String>> {
    serde_json::from_str(&row.labels).map_err(|_| corrupt(row, "labels", &row.labels))
}

pub fn metadata_of(row: &sandbox::Model) -> Result<BTreeMap<String, String>> {
    serde_json::from_str(&row.metadata).map_err(|_| corrupt(row, "metadata", &row.metadata))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A running row of one core and 512 MiB, with a timeout action of
    /// delete and no choices of its own.
    pub(crate) fn row() -> sandbox::Model {
        let mut r = crate::domain::test_support::row("sbx_t", "ten_t", "wrk_t", "running");
        r.timeout_action = "delete".into();
        r.cpu_millis = 1000;
        r.memory_mib = 512;
        r
    }

    #[test]
    fn a_good_row_reads() {
        let r = row();
        assert_eq!(state_of(&r).unwrap(), SandboxState::Running);
        assert_eq!(policy_of(&r).unwrap(), EgressPolicy::Sealed);
        assert_eq!(timeout_action_of(&r).unwrap(), TimeoutAction::Delete);
        assert!(labels_of(&r).unwrap().is_empty());
        assert_eq!(restart_policy_of(&r).unwrap(), RestartPolicy::Always);
        // No choice of its own: the platform's default.
        for d in [WorkerLoss::Wait, WorkerLoss::Move] {
            assert_eq!(worker_loss_of(&r, d).unwrap(), d);
        }
        let mut r = r;
        r.worker_loss = "move".into();
        assert_eq!(
            worker_loss_of(&r, WorkerLoss::Wait).unwrap(),
            WorkerLoss::Move
        );
    }

    /// Fail closed, each field: a corrupt value is an error naming the
    /// sandbox, never open, failed or pause.
    #[test]
    fn corrupt_fields_are_refused_not_defaulted() {
        let mut r = row();
        r.network_policy = r#"{"mode":"opne"}"#.into();
        let e = policy_of(&r).unwrap_err().to_string();
        assert!(e.contains("sbx_t") && e.contains("egress policy"), "{e}");
        r.network_policy = "not json".into();
        assert!(policy_of(&r).is_err());
        r.state = "zombie".into();
        assert!(state_of(&r).is_err());
        r.timeout_action = "hibernate".into();
        assert!(timeout_action_of(&r).is_err());
        r.timeout_action = String::new();
        assert!(timeout_action_of(&r).is_err());
        r.labels = "[1]".into();
        assert!(labels_of(&r).is_err());
        r.restart_policy = "sometimes".into();
        assert!(restart_policy_of(&r).is_err());
        r.restart_policy = String::new();
        assert!(
            restart_policy_of(&r).is_err(),
            "an empty policy is not `always`"
        );
        r.worker_loss = "teleport".into();
        assert!(worker_loss_of(&r, WorkerLoss::Wait).is_err());
        r.metadata = "nope".into();
        assert!(metadata_of(&r).is_err());
    }
}
