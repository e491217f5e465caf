//! The sandbox's users: looking one up in its /etc/passwd, and doing file
//! work as one. The agent is root in the sandbox; a file call made for a
//! user switches the calling thread's filesystem identity (fsuid, fsgid,
//! and its supplementary groups, set on that thread alone with the raw
//! syscalls) for that call only. The kernel drops root's filesystem
//! capabilities while the fsuid is not 0, so permission checks are the
//! user's, and what the call creates belongs to the user. Under gVisor,
//! which has no setfsuid, the thread's effective ids do the same (`Ids`).

use tonic::Status;

/// A user to run as: uid, gid and home, from the sandbox's /etc/passwd.
/// A number that names no entry is taken as a uid (its own group, home /).
pub fn lookup(user: &str) -> Result<(u32, u32, String), Status> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    for line in passwd.lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() >= 6 && (f[0] == user || f[2] == user) {
            let uid = f[2]
                .parse()
                .map_err(|_| Status::internal("bad /etc/passwd"))?;
            let gid = f[3]
                .parse()
                .map_err(|_| Status::internal("bad /etc/passwd"))?;
            return Ok((uid, gid, f[5].to_string()));
        }
    }
    if let Ok(uid) = user.parse::<u32>() {
        return Ok((uid, uid, "/".into()));
    }
    Err(Status::invalid_argument(format!(
        "no user {user:?} in the sandbox"
    )))
}

/// This thread's filesystem identity switched to a user until dropped.
struct Acting(Ids);

/// Which of the thread's ids a user's identity goes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ids {
    /// fsuid and fsgid: nothing but file access changes.
    Fs,
    /// The effective ids, the real and saved staying root so the thread
    /// can come back: for kernels without setfsuid (gVisor's sentry
    /// answers ENOSYS). File access is the same; the effective
    /// capabilities are dropped while it lasts, as with an fsuid.
    Effective,
}

impl Ids {
    fn here() -> Ids {
        static HERE: std::sync::OnceLock<Ids> = std::sync::OnceLock::new();
        *HERE.get_or_init(|| {
            // SAFETY: setfsuid(-1) changes nothing and reports the fsuid.
            let r = unsafe { libc::syscall(libc::SYS_setfsuid, u32::MAX) };
            let enosys =
                r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS);
            #[cfg(debug_assertions)]
            let enosys = enosys || std::env::var_os("TALON_AGENT_TEST_NO_SETFSUID").is_some();
            if enosys { Ids::Effective } else { Ids::Fs }
        })
    }
}

fn set_thread_identity(
    ids: Ids,
    uid: u32,
    gid: u32,
    groups: &[libc::gid_t],
) -> std::io::Result<()> {
    let check = |r: libc::c_long| {
        if r != 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: raw syscalls on this thread's credentials with valid
    // arguments; glibc's setgroups and setres*id would change every
    // thread's.
    unsafe {
        let set_groups = || {
            check(libc::syscall(
                libc::SYS_setgroups,
                groups.len(),
                groups.as_ptr(),
            ))
        };
        let keep = u32::MAX;
        match ids {
            Ids::Fs => {
                set_groups()?;
                libc::setfsgid(gid);
                libc::setfsuid(uid);
                // setfsuid reports the previous id; reading it back checks it took.
                if libc::setfsuid(u32::MAX) as u32 != uid || libc::setfsgid(u32::MAX) as u32 != gid
                {
                    return Err(std::io::Error::other(
                        "the filesystem identity did not change",
                    ));
                }
            }
            // Groups and gid need root's capabilities: set before the uid
            // leaves root, after it comes back.
            Ids::Effective if uid != 0 => {
                set_groups()?;
                check(libc::syscall(libc::SYS_setresgid, keep, gid, keep))?;
                check(libc::syscall(libc::SYS_setresuid, keep, uid, keep))?;
            }
            Ids::Effective => {
                check(libc::syscall(libc::SYS_setresuid, keep, 0, keep))?;
                check(libc::syscall(libc::SYS_setresgid, keep, gid, keep))?;
                set_groups()?;
            }
        }
        if ids == Ids::Effective
            && (libc::syscall(libc::SYS_geteuid) as u32 != uid
                || libc::syscall(libc::SYS_getegid) as u32 != gid)
        {
            return Err(std::io::Error::other(
                "the effective identity did not change",
            ));
        }
    }
    Ok(())
}

impl Drop for Acting {
    fn drop(&mut self) {
        // Back to root, with no supplementary groups (the agent's own).
        if set_thread_identity(self.0, 0, 0, &[]).is_err() {
            // A thread that cannot become root again must not serve
            // another call with a user's identity, nor quietly as root.
            std::process::abort();
        }
    }
}

/// Runs `f` (synchronous: it must not move threads) as `user`, or as the
/// agent itself when `user` is empty.
pub fn acting_as<T>(user: &str, f: impl FnOnce() -> Result<T, Status>) -> Result<T, Status> {
    if user.is_empty() {
        return f();
    }
    acting_with(Ids::here(), user, f)
}

fn acting_with<T>(
    ids: Ids,
    user: &str,
    f: impl FnOnce() -> Result<T, Status>,
) -> Result<T, Status> {
    let (uid, gid, _) = lookup(user)?;
    set_thread_identity(ids, uid, gid, &[gid])
        .map_err(|e| Status::internal(format!("acting as {user}: {e}")))?;
    let _back = Acting(ids);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_users_are_refused() {
        assert_eq!(
            acting_as("no-such-user-here", || Ok(()))
                .unwrap_err()
                .code(),
            tonic::Code::InvalidArgument
        );
        assert_eq!(lookup("root").unwrap().0, 0);
    }

    #[test]
    fn a_user_gets_its_own_permissions_and_ownership() {
        as_a_user(Ids::Fs, "fs");
    }

    /// The same through the effective ids, as on gVisor.
    #[test]
    fn a_user_gets_its_own_permissions_and_ownership_without_setfsuid() {
        as_a_user(Ids::Effective, "effective");
    }

    fn as_a_user(ids: Ids, tag: &str) {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("needs root; skipped");
            return;
        }
        let dir = std::env::temp_dir().join(format!("talon-acting-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let secret = dir.join("secret");
        std::fs::write(&secret, "x").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        let r = acting_with(ids, "4242", || {
            std::fs::read(&secret).map_err(|e| Status::permission_denied(e.to_string()))
        });
        assert_eq!(r.unwrap_err().code(), tonic::Code::PermissionDenied);
        let made = dir.join("made");
        acting_with(ids, "4242", || {
            std::fs::write(&made, "y").map_err(|e| Status::internal(e.to_string()))
        })
        .unwrap();
        let m = std::fs::metadata(&made).unwrap();
        assert_eq!((m.uid(), m.gid()), (4242, 4242));
        // And the thread is root again afterwards.
        assert!(std::fs::read(&secret).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
