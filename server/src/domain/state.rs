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
            (Stopped, Starting) => true,
            // A reassigned sandbox starts again elsewhere.
            (Failed, Starting) => true,
            _ => false,
        }
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
        assert!(!Paused.can_become(Paused));
        assert!(!Pending.can_become(Running));
    }

    #[test]
    fn names_round_trip() {
        for s in SandboxState::ALL {
            assert_eq!(s.as_str().parse::<SandboxState>().unwrap(), s);
        }
    }
}
