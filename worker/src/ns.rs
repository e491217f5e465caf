//! Work the worker does inside one of a sandbox's namespaces (its network,
//! its hostname): a thread joins that namespace of the sandbox's init —
//! setns applies to the calling thread only — runs the work there and
//! ends, so the rest of the worker never leaves its own namespaces.

pub use rustix::thread::LinkNameSpaceType as Kind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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

/// A sandbox's user namespace, owned by its base host uid and kept alive
/// by a bind mount at `path` (replaced if one is there), for the runtime
/// to join (`linux.namespaces[user].path`). Per-user kernel counters
/// (inotify instances and watches, POSIX message queue bytes, pending
/// signals) are charged up the namespace tree to each namespace's owner:
/// one that host root owned, as a runtime makes it, charged every sandbox
/// to root's budget, so one sandbox could exhaust it for the host and for
/// every other sandbox. Owned by the sandbox's own uid, whom no host
/// process runs as, each sandbox has a budget of its own.
pub async fn new_userns(path: std::path::PathBuf, base: u32, size: u32) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(move || {
        if crate::rootfs::mounts_under(&path).contains(&path) {
            rustix::mount::unmount(&path, rustix::mount::UnmountFlags::DETACH)?;
        }
        let fd = userns(base, size, Some(base))?;
        if let Some(dir) = path.parent() {
            crate::private_dir(dir)?;
        }
        std::fs::File::create(&path)?;
        rustix::mount::mount_bind(format!("/proc/self/fd/{}", fd.as_raw_fd()), &path)?;
        anyhow::Ok(())
    })
    .await?
}

/// A user namespace mapping ids 0..size to base..base+size, held by an fd.
/// A forked child creates it and waits until it is killed; the child only
/// makes raw system calls, so forking from the multi-threaded worker is
/// safe. With an
/// `owner`, the child takes that host uid and gid (no groups) before it
/// creates the namespace, which that uid then owns: see `new_userns`.
pub fn userns(base: u32, size: u32, owner: Option<u32>) -> std::io::Result<OwnedFd> {
    let mut ready = [0i32; 2];
    // SAFETY: pipe2 fills the array with new fds.
    if unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: these fds are ours alone from here on.
    let (ready_r, ready_w) = unsafe {
        (
            OwnedFd::from_raw_fd(ready[0]),
            OwnedFd::from_raw_fd(ready[1]),
        )
    };
    // SAFETY: the child only calls async-signal-safe functions and _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: raw system calls on fds inherited from the parent.
        unsafe {
            let dropped = match owner {
                None => true,
                Some(o) => {
                    libc::setgroups(0, std::ptr::null()) == 0
                        && libc::setresgid(o, o, o) == 0
                        && libc::setresuid(o, o, o) == 0
                }
            };
            let ok = dropped && libc::unshare(libc::CLONE_NEWUSER) == 0;
            let b = [u8::from(ok)];
            libc::write(ready_w.as_raw_fd(), b.as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }
    }
    drop(ready_w);
    let reap = |pid| {
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    };
    let mut b = [0u8; 1];
    let n = rustix::io::read(&ready_r, &mut b).unwrap_or(0);
    let made = (|| {
        if n != 1 || b[0] != 1 {
            return Err(std::io::Error::other(
                "could not create a user namespace for the sandbox's id mapping",
            ));
        }
        let map = format!("0 {base} {size}");
        std::fs::write(format!("/proc/{pid}/uid_map"), &map)?;
        std::fs::write(format!("/proc/{pid}/gid_map"), &map)?;
        Ok(OwnedFd::from(std::fs::File::open(format!(
            "/proc/{pid}/ns/user"
        ))?))
    })();
    // Killed, not told to end by closing a pipe: a child another thread
    // forked meanwhile holds a copy of every pipe until its own parent
    // lets it go, so an end-of-file could wait on that one, which could
    // wait on ours (two sandboxes starting at once deadlocked so). The
    // namespace lives on in the fd.
    // SAFETY: a signal to our own child, which we reap next.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    reap(pid);
    made
}
