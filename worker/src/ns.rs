//! Work the worker does inside one of a sandbox's namespaces (its network,
//! its hostname): a thread joins that namespace of the sandbox's init —
//! setns applies to the calling thread only — runs the work there and
//! ends, so the rest of the worker never leaves its own namespaces.

pub use rustix::thread::LinkNameSpaceType as Kind;

/// Runs `f` on a new thread inside the `kind` namespace of process `pid`
/// (`ns` is its name under /proc/PID/ns: "net", "uts").
pub async fn within<T: Send + 'static>(
    pid: u32,
    ns: &'static str,
    kind: Kind,
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("talon-{ns}ns"))
        .spawn(move || {
            let r = (|| {
                let fd = std::fs::File::open(format!("/proc/{pid}/ns/{ns}"))?;
                rustix::thread::move_into_link_name_space(
                    std::os::fd::AsFd::as_fd(&fd),
                    Some(kind),
                )?;
                f()
            })();
            let _ = tx.send(r);
        })?;
    rx.await
        .map_err(|_| anyhow::anyhow!("the {ns} namespace thread panicked"))?
}
