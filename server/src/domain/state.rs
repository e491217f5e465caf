//! The sandbox state machine: which transitions exist. The server is the
//! only writer of state; workers report, and their reports are checked here.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SandboxState {
    Pending,
    Starting,
    Running,
    Paused,
    Stopping,
    Stopped,
    Failed,
    Deleted,
}

use SandboxState::*;

impl SandboxState {
    pub const ALL: [SandboxState; 8] = [
        Pending, Starting, Running, Paused, Stopping, Stopped, Failed, Deleted,
    ];
    /// States that hold cpu and memory on a worker (and against quota).
    pub const LIVE: [SandboxState; 5] = [Pending, Starting, Running, Paused, Stopping];

    pub fn as_str(self) -> &'static str {
        match self {
            Pending => "pending",
            Starting => "starting",
            Running => "running",
            Paused => "paused",
            Stopping => "stopping",
            Stopped => "stopped",
            Failed => "failed",
            Deleted => "deleted",
        }
    }

    pub fn is_live(self) -> bool {
        Self::LIVE.contains(&self)
    }

    /// Whether `self -> to` is a transition of the machine. Deleting is
    /// allowed from every state but Deleted, which is final.
    pub fn can_become(self, to: SandboxState) -> bool {
        if self == to {
            return false;
        }
        match (self, to) {
            (Deleted, _) => false,
            (_, Deleted) => true,
            (Pending, Starting | Failed) => true,
            (Starting, Running | Failed | Stopping) => true,
            (Running, Paused | Stopping | Failed) => true,
            (Paused, Running | Stopping | Failed) => true,
            (Stopping, Stopped | Failed) => true,
            // Stopped without being asked: its host restarted, or its
            // worker stopped it before a crash cut the report short. Its
            // workspace is kept.
            (Starting | Running | Paused, Stopped) => true,
            (Stopped, Starting) => true,
            // Started again (its workspace kept, where it is), or moved.
            (Failed, Starting) => true,
            _ => false,
        }
    }
}

/// What a caller may ask of a sandbox, and from which states: the
/// preconditions of pause, resume, stop and start, in one table beside the
/// machine (each is one of its edges; a test holds them to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Pause,
    Resume,
    Stop,
    Start,
}

impl Op {
    /// The state the operation leads to.
    pub fn target(self) -> SandboxState {
        match self {
            Op::Pause => Paused,
            Op::Resume => Running,
            Op::Stop => Stopping,
            Op::Start => Starting,
        }
    }

    /// The states a caller may ask it from.
    pub fn from(self) -> &'static [SandboxState] {
        match self {
            Op::Pause => &[Running],
            Op::Resume => &[Paused],
            Op::Stop => &[Starting, Running, Paused],
            Op::Start => &[Stopped, Failed],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Op::Pause => "paused",
            Op::Resume => "resumed",
            Op::Stop => "stopped",
            Op::Start => "started",
        }
    }

    /// FAILED_PRECONDITION, naming the state, when `current` is not one
    /// the operation is asked from.
    pub fn check(self, id: &str, current: SandboxState) -> crate::error::Result<()> {
        if self.from().contains(&current) {
            Ok(())
        } else {
            Err(crate::error::Error::FailedPrecondition(format!(
                "sandbox {id} is {current}; only a sandbox that is {} can be {}",
                self.from()
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
                self.name()
            )))
        }
    }
}

impl SandboxState {
    /// A move to another worker (with a new generation) starts the sandbox
    /// again there, from any state but Deleted.
    pub fn can_be_reassigned(self) -> bool {
        self != Deleted
    }
}

impl fmt::Display for SandboxState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxState {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| crate::error::Error::Internal(format!("unknown sandbox state {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleted_is_final_and_reachable_from_all() {
        for s in SandboxState::ALL {
            assert!(!Deleted.can_become(s));
            if s != Deleted {
                assert!(s.can_become(Deleted), "{s} -> deleted");
            }
        }
    }

    #[test]
    fn lifecycle_paths() {
        assert!(Pending.can_become(Starting));
        assert!(Starting.can_become(Running));
        assert!(Running.can_become(Paused));
        assert!(Paused.can_become(Running));
        assert!(Running.can_become(Stopping));
        assert!(Stopping.can_become(Stopped));
        assert!(Stopped.can_become(Starting));
        assert!(!Stopped.can_become(Running));
        // A host restart stops what ran on it, keeping its workspace.
        for s in [Starting, Running, Paused] {
            assert!(s.can_become(Stopped), "{s}");
        }
        // No dead end: a failed sandbox starts again, or is deleted.
        assert!(Failed.can_become(Starting));
        assert!(Op::Start.check("sbx_x", Failed).is_ok());
        assert!(!Paused.can_become(Paused));
        assert!(!Pending.can_become(Running));
    }

    #[test]
    fn every_op_is_an_edge_of_the_machine() {
        for op in [Op::Pause, Op::Resume, Op::Stop, Op::Start] {
            for from in op.from() {
                assert!(from.can_become(op.target()), "{op:?} from {from}");
                assert!(op.check("sbx_x", *from).is_ok());
            }
            for s in SandboxState::ALL.iter().filter(|s| !op.from().contains(s)) {
                let e = op.check("sbx_x", *s).unwrap_err().to_string();
                assert!(e.contains(s.as_str()), "{e}");
            }
        }
        assert!(
            SandboxState::ALL
                .iter()
                .all(|s| s.can_be_reassigned() == (*s != Deleted))
        );
    }

    /// Fail closed: a state this server doesn't know is an error, never
    /// read as one it does.
    #[test]
    fn an_unknown_state_is_an_error() {
        for bad in ["", "Running", "runing", "deleted "] {
            assert!(bad.parse::<SandboxState>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for s in SandboxState::ALL {
            assert_eq!(s.as_str().parse::<SandboxState>().unwrap(), s);
        }
    }
}
