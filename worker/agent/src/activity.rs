//! What the agent counts as activity in its sandbox, for the worker's
//! idle auto-pause (`PingResponse.idle_millis`): process output, stdin
//! and PTY input, preview traffic both ways, and code executions in
//! progress. Calls are the worker's to count: every one passes through
//! it. Monotonic, so a clock change never pauses or wakes a sandbox.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();
/// Ms since START of the last activity.
static LAST: AtomicU64 = AtomicU64::new(0);
/// Executions in progress: never idle while one runs.
static BUSY: AtomicUsize = AtomicUsize::new(0);

fn now() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Something happened.
pub fn touch() {
    LAST.fetch_max(now(), Ordering::Relaxed);
}

/// Ms since the last activity; 0 while an execution runs.
pub fn idle_millis() -> u64 {
    if BUSY.load(Ordering::Relaxed) > 0 {
        return 0;
    }
    now().saturating_sub(LAST.load(Ordering::Relaxed))
}

/// Held while an execution runs.
pub struct Busy(());

pub fn busy() -> Busy {
    BUSY.fetch_add(1, Ordering::Relaxed);
    touch();
    Busy(())
}

impl Drop for Busy {
    fn drop(&mut self) {
        touch();
        BUSY.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touches_and_executions_reset_the_idle_time() {
        touch();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(idle_millis() >= 25);
        touch();
        assert!(idle_millis() < 25);
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = busy();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(idle_millis(), 0, "busy");
        drop(b);
        assert!(idle_millis() < 25, "the end of an execution is activity");
    }
}
