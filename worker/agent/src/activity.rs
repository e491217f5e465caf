//! What the agent counts as activity in its sandbox, for the worker's
//! idle auto-pause (`PingResponse.idle_millis`): process output, stdin
//! and PTY input, preview traffic both ways, and code executions in
//! progress. Calls are the worker's to count: every one passes through
//! it. Monotonic, so a clock change never pauses or wakes a sandbox.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// The agent's, which the functions below use.
static GLOBAL: Activity = Activity::new();
static START: OnceLock<Instant> = OnceLock::new();

fn now() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

pub struct Activity {
    /// Ms since START of the last activity.
    last: AtomicU64,
    /// Executions in progress: never idle while one runs.
    busy: AtomicUsize,
}

impl Activity {
    const fn new() -> Activity {
        Activity {
            last: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        self.last.fetch_max(now(), Ordering::Relaxed);
    }

    fn idle_millis(&self) -> u64 {
        if self.busy.load(Ordering::Relaxed) > 0 {
            return 0;
        }
        now().saturating_sub(self.last.load(Ordering::Relaxed))
    }

    fn busy(&'static self) -> Busy {
        self.busy.fetch_add(1, Ordering::Relaxed);
        self.touch();
        Busy(self)
    }
}

/// Something happened.
pub fn touch() {
    GLOBAL.touch()
}

/// Ms since the last activity; 0 while an execution runs.
pub fn idle_millis() -> u64 {
    GLOBAL.idle_millis()
}

/// Held while an execution runs.
pub struct Busy(&'static Activity);

pub fn busy() -> Busy {
    GLOBAL.busy()
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touches_and_executions_reset_the_idle_time() {
        // Its own, apart from the agent's (other tests touch that one).
        static A: Activity = Activity::new();
        A.touch();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(A.idle_millis() >= 25);
        A.touch();
        assert!(A.idle_millis() < 25);
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = A.busy();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(A.idle_millis(), 0, "busy");
        drop(b);
        assert!(A.idle_millis() < 25, "the end of an execution is activity");
    }
}
