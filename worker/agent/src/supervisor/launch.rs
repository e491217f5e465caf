//! Starting a process (a PTY or another user through fork+exec) and
//! pumping its output into its log.

use super::*;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use talon_proto::v1 as pb;
use tonic::Status;

/// Later entries win, as with `Command::env`; the order of first sight is kept.
pub(super) fn dedup_env(env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    let mut at: HashMap<OsString, usize> = HashMap::new();
    let mut out: Vec<(OsString, OsString)> = Vec::with_capacity(env.len());
    for (k, v) in env {
        match at.get(&k) {
            Some(&i) => out[i].1 = v,
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}

pub(super) fn spawn_error(program: &str, e: std::io::Error) -> Status {
    if e.raw_os_error() == Some(libc::E2BIG) {
        return Status::invalid_argument(format!(
            "{program}: the arguments and environment are too long (E2BIG: at most 128 KiB per string and about 2 MiB in all); \
             pass large input on stdin or in a file"
        ));
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            Status::invalid_argument(format!("{program}: command not found"))
        }
        std::io::ErrorKind::PermissionDenied => {
            Status::permission_denied(format!("{program}: permission denied"))
        }
        _ => crate::threads::start_error(&format!("spawn {program}"), e),
    }
}

pub(super) type Started = (u32, Option<File>, Vec<(u8, File)>, Option<OwnedFd>);

/// The worker starts root's `~/.local/bin` (where pip puts scripts when
/// the system site is read-only) at the head of a `host` sandbox's PATH;
/// a process run as another user gets its own home's instead.
const ROOT_USER_BIN: &str = "/root/.local/bin";

fn user_path(path: &OsString, home: &str) -> Option<OsString> {
    let rest = path.to_str()?.strip_prefix(ROOT_USER_BIN)?;
    if !(rest.is_empty() || rest.starts_with(':')) || home == "/root" || home == "/" {
        return None;
    }
    Some(format!("{}/.local/bin{rest}", home.trim_end_matches('/')).into())
}

/// fork+exec through std's Command, for what posix_spawn cannot do: a PTY
/// as the controlling terminal, another user, a script execvp hands to sh.
pub(super) fn fork_exec(
    req: &pb::StartProcessRequest,
    argv: &[String],
    env: &[(OsString, OsString)],
    cwd: &str,
) -> Result<Started, Status> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
    if !req.user.is_empty() {
        let (uid, gid, home) = lookup_user(&req.user)?;
        if let Some(path) = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v)
            && let Some(p) = user_path(path, &home)
        {
            cmd.env("PATH", p);
        }
        cmd.uid(uid).gid(gid).env("HOME", home);
    }
    let mut master: Option<OwnedFd> = None;
    if let Some(size) = &req.pty {
        let (m, s) = openpty()?;
        set_size(m.as_raw_fd(), size)?;
        let slave = File::from(s);
        cmd.stdin(slave.try_clone().map_err(io)?)
            .stdout(slave.try_clone().map_err(io)?)
            .stderr(slave);
        cmd.env(
            "TERM",
            req.env
                .get("TERM")
                .map(String::as_str)
                .unwrap_or("xterm-256color"),
        );
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        master = Some(m);
    } else {
        cmd.stdin(if req.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| spawn_error(&argv[0], e))?;
    let pid = child.id();
    let started = match &master {
        Some(m) => {
            let r = File::from(m.try_clone().map_err(io)?);
            let w = File::from(m.try_clone().map_err(io)?);
            (pid, Some(w), vec![(1, r)], master)
        }
        None => {
            let out = File::from(OwnedFd::from(child.stdout.take().expect("stdout")));
            let err = File::from(OwnedFd::from(child.stderr.take().expect("stderr")));
            let stdin = child.stdin.take().map(|s| File::from(OwnedFd::from(s)));
            (pid, stdin, vec![(1, out), (2, err)], None)
        }
    };
    drop(cmd); // closes our copy of the PTY slave, so EOF can come
    Ok(started)
}

pub(super) fn io(e: std::io::Error) -> Status {
    Status::internal(e.to_string())
}

/// Reads a process's streams until each ends (EOF, or EIO when a PTY's
/// other side is gone), appending what comes to its log. An append waits
/// while a live reader is too far behind: the pipes fill meanwhile, and
/// the process blocks on its next write.
pub(super) fn pump(p: Arc<Proc>, mut readers: Vec<(u8, File)>) {
    let mut log = p.log.writer();
    let mut buf = vec![0u8; 32 * 1024];
    let mut redactors: std::collections::HashMap<u8, crate::redact::Redactor> = readers
        .iter()
        .map(|(s, _)| (*s, crate::redact::Redactor::new(&p.redact)))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    while !readers.is_empty() {
        let mut fds: Vec<libc::pollfd> = readers
            .iter()
            .map(|(_, f)| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if fds.len() == 1 {
            // One stream: a blocking read is the wait.
            fds[0].revents = libc::POLLIN;
        } else {
            // SAFETY: poll over a live array of fds.len() pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // Cannot happen with valid fds; end the streams, never hang.
                for (stream, _) in readers.drain(..) {
                    p.stream_closed(stream);
                }
                break;
            }
        }
        let mut ready = fds.iter().map(|f| f.revents != 0);
        readers.retain_mut(|(stream, f)| {
            if !ready.next().unwrap_or(false) {
                return true;
            }
            let read = f.read(&mut buf);
            if let Ok(n @ 1..) = read {
                p.holding.store(true, Ordering::SeqCst);
                match redactors.get_mut(stream) {
                    Some(r) => {
                        let clean = r.feed(&buf[..n]);
                        if !clean.is_empty() {
                            p.append(&mut log, *stream, &clean);
                        }
                    }
                    None => p.append(&mut log, *stream, &buf[..n]),
                }
                p.holding.store(false, Ordering::SeqCst);
            }
            match read {
                Ok(0) => {}
                Ok(_) => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return true,
                Err(_) => {}
            }
            if let Some(rest) = redactors.get_mut(stream).map(|r| r.finish())
                && !rest.is_empty()
            {
                p.append(&mut log, *stream, &rest);
            }
            p.stream_closed(*stream);
            false
        });
    }
}

pub(super) fn openpty() -> Result<(OwnedFd, OwnedFd), Status> {
    let (mut m, mut s) = (0, 0);
    // SAFETY: openpty fills two fds; null name, termios and winsize.
    let r = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(Status::internal(format!(
            "openpty: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: both fds were just returned to us.
    unsafe {
        libc::fcntl(m, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(s, libc::F_SETFD, libc::FD_CLOEXEC);
        Ok((OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)))
    }
}

/// Sets a PTY's window size (1 to 1000 rows and columns).
pub(super) fn set_size(fd: i32, size: &pb::PtySize) -> Result<(), Status> {
    if size.rows == 0 || size.cols == 0 || size.rows > 1000 || size.cols > 1000 {
        return Err(Status::invalid_argument(
            "PTY size must be 1-1000 rows and columns",
        ));
    }
    let ws = libc::winsize {
        ws_row: size.rows as u16,
        ws_col: size.cols as u16,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ with a valid winsize on our PTY master.
    if unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) } != 0 {
        return Err(Status::internal(format!(
            "resize: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::user_path;

    #[test]
    fn another_user_gets_its_own_local_bin() {
        let p = |s: &str| std::ffi::OsString::from(s);
        assert_eq!(
            user_path(&p("/root/.local/bin:/usr/bin"), "/home/user"),
            Some(p("/home/user/.local/bin:/usr/bin"))
        );
        assert_eq!(
            user_path(&p("/root/.local/bin"), "/home/user/"),
            Some(p("/home/user/.local/bin"))
        );
        // A PATH the sandbox set itself, or root's own, is left alone.
        assert_eq!(
            user_path(&p("/usr/bin:/root/.local/bin"), "/home/user"),
            None
        );
        assert_eq!(
            user_path(&p("/root/.local/binx:/usr/bin"), "/home/user"),
            None
        );
        assert_eq!(user_path(&p("/root/.local/bin:/usr/bin"), "/root"), None);
    }
}
