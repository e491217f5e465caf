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
    within_path(format!("/proc/{pid}/ns/{ns}").into(), ns, kind, f).await
}

/// `within`, for the namespace at `path` (a /proc entry or a bind mount
/// of one, see `new_netns`).
pub async fn within_path<T: Send + 'static>(
    path: std::path::PathBuf,
    ns: &'static str,
    kind: Kind,
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("talon-{ns}ns"))
        .spawn(move || {
            let r = (|| {
                let fd = std::fs::File::open(&path)?;
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

/// A new network namespace kept alive by a bind mount at `path` (made
/// empty first), as `ip netns add` does: for a runtime that must find the
/// sandbox's links in place when it starts (runsc's netstack reads them
/// once). Removed by unmounting `path`.
pub async fn new_netns(path: std::path::PathBuf) -> anyhow::Result<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("talon-newnet".into())
        .spawn(move || {
            let r = (|| {
                std::fs::File::create(&path)?;
                // SAFETY: NEWNET alone, on this thread, which ends here;
                // no fd table is unshared.
                unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET)? };
                rustix::mount::mount_bind("/proc/thread-self/ns/net", &path)?;
                anyhow::Ok(())
            })();
            let _ = tx.send(r);
        })?;
    rx.await
        .map_err(|_| anyhow::anyhow!("the new-netns thread panicked"))?
}
