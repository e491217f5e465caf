//! A sandbox's agent socket, which no sandbox can redirect.
//!
//! The worker binds it (without listening) in the sandbox's own directory
//! on the host, which only root writes, and hands the bound socket to the
//! container as fd [`AGENT_FD`]; the agent calls listen() on it. Nothing a
//! sandbox can write is ever dialled: the probe that found this class put
//! a symlink at `/run/talon/agent.sock`, then a writable bind of the host
//! directory the worker dialled by path, and the worker (root) followed it
//! to another tenant's agent, or to any socket on the host.
//!
//! Every connection is checked: on a unix socket, SO_PEERCRED names the
//! process that called listen(), so the peer must be the sandbox's init
//! (its host pid, start time checked by the caller) running as the
//! sandbox's root (the first host uid of its range).
//!
//! runsc takes no fd of that kind: a gVisor sandbox's agent binds its own
//! socket at a path in a directory of the sandbox's (`Layout::agent_dir`,
//! the sandbox's root's, bound into it), which runsc's gofer creates on
//! the host (`--host-uds=create`). The gofer then listens for it, so the
//! peer must be that sandbox's gofer (`Runtime::agent_server`) as its
//! root. The sandbox can write that directory, so the path is opened
//! without following links and dialled through the fd.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The fd the agent finds its bound socket on.
pub const AGENT_FD: i32 = 3;

/// Who must be listening on a sandbox's agent socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AgentPeer {
    /// The host pid of the sandbox's init (the agent).
    pub pid: u32,
    /// The host uid of the sandbox's root.
    pub uid: u32,
}

/// A fresh socket bound at `path` (a stale file there is replaced),
/// reachable by root only; the agent listens on it.
pub fn bind(path: &Path) -> io::Result<OwnedFd> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&fd, &SocketAddrUnix::new(path)?)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(fd)
}

/// Connects to the agent socket at `path` and checks that `peer` listens
/// on it: anything else (a socket another process bound, a path that is
/// not a socket) is refused with PermissionDenied.
pub async fn connect(path: &Path, peer: AgentPeer) -> io::Result<tokio::net::UnixStream> {
    use rustix::fs::{FileType, Mode, OFlags};
    // Opened without following a symlink and then reached through the fd,
    // so a link swapped in after the check is never followed: a gVisor
    // sandbox's root can write the directory its agent binds in.
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != FileType::Socket {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a socket", path.display()),
        ));
    }
    use std::os::fd::AsRawFd;
    let stream =
        tokio::net::UnixStream::connect(format!("/proc/self/fd/{}", fd.as_raw_fd())).await?;
    drop(fd);
    let cred = stream.peer_cred()?;
    let pid = cred.pid().and_then(|p| u32::try_from(p).ok());
    if cred.uid() != peer.uid || pid != Some(peer.pid) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the agent socket is served by pid {pid:?} as uid {}, not by the sandbox's init {} as uid {}",
                cred.uid(),
                peer.pid,
                peer.uid
            ),
        ));
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_expected_listener_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.sock");
        let fd = bind(&path).unwrap();
        rustix::net::listen(&fd, 8).unwrap();
        let me = AgentPeer {
            pid: std::process::id(),
            uid: rustix::process::geteuid().as_raw(),
        };
        connect(&path, me).await.expect("our own listener");
        let other = AgentPeer {
            pid: me.pid + 1,
            ..me
        };
        let e = connect(&path, other).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        let other = AgentPeer {
            uid: me.uid + 1,
            ..me
        };
        assert!(connect(&path, other).await.is_err());
        // A symlink to the socket is not followed.
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = connect(&link, me).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
