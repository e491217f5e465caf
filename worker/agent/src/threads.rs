//! Threads under the sandbox's pids limit. The agent is PID 1 of its
//! sandbox, so every thread it starts counts against the same `pids.max`
//! as the workload: a fork bomb inside leaves it unable to start one. That
//! is the workload's doing, not a fault of the agent, so it must never
//! panic or leave half-done work; each call that needs a thread or a
//! process refuses with RESOURCE_EXHAUSTED instead, and calls that need
//! neither (signals, process lists, streams already open) keep working.

use std::io;
use tonic::Status;

/// The refusal for a call that needs a thread or process it cannot get.
pub fn exhausted() -> Status {
    Status::resource_exhausted(
        "the sandbox's process limit (pids) is reached: no thread or process can start until some exit",
    )
}

/// Maps an error from starting a thread or a process: EAGAIN is the pids
/// limit (or the user's RLIMIT_NPROC); anything else is ours.
pub fn start_error(what: &str, e: io::Error) -> Status {
    if e.kind() == io::ErrorKind::WouldBlock {
        exhausted()
    } else {
        Status::internal(format!("{what}: {e}"))
    }
}

/// `std::thread::Builder::spawn`, refused cleanly when no thread can start.
pub fn spawn<F>(name: &str, f: F) -> Result<std::thread::JoinHandle<()>, Status>
where
    F: FnOnce() + Send + 'static,
{
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| start_error("start a thread", e))
}

/// `tokio::task::spawn_blocking`, which panics when the blocking pool has
/// no thread and the OS refuses a new one; here that is a refusal.
pub fn spawn_blocking<F, T>(f: F) -> Result<tokio::task::JoinHandle<T>, Status>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tokio::task::spawn_blocking(f)
    }))
    .map_err(|_| exhausted())
}

/// Runs blocking work on the blocking pool and waits for its result.
pub async fn blocking<F, T>(f: F) -> Result<T, Status>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_blocking(f)?
        .await
        .map_err(|e| Status::internal(format!("blocking task: {e}")))
}
