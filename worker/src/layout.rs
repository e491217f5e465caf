//! Where one sandbox's files are on the host, and what its root is: the
//! one place that names the paths the worker, the runtime's bundle and the
//! fence keeper share.

use std::path::PathBuf;

/// The paths of one sandbox on the host.
#[derive(Clone, Debug)]
pub struct Layout {
    pub dir: PathBuf,
    /// The disk image on shared storage (the `shared` backend), else None:
    /// it is in `dir`.
    pub shared_image: Option<PathBuf>,
}

impl Layout {
    pub fn bundle(&self) -> PathBuf {
        self.dir.join("bundle")
    }
    pub fn rootfs(&self) -> PathBuf {
        self.dir.join("bundle/rootfs")
    }
    /// The sandbox's disk image (see `disk`) and where it is mounted:
    /// every directory the sandbox writes is on it.
    pub fn disk_image(&self) -> PathBuf {
        self.shared_image
            .clone()
            .unwrap_or_else(|| self.dir.join("disk.img"))
    }
    pub fn disk(&self) -> PathBuf {
        self.dir.join("disk")
    }
    pub fn workspace(&self) -> PathBuf {
        self.disk().join("workspace")
    }
    /// The agent's socket: in the sandbox's own directory, which only the
    /// worker writes and no sandbox sees (see `agent_socket`).
    pub fn agent_socket(&self) -> PathBuf {
        self.dir.join("agent.sock")
    }
    /// A gVisor sandbox's agent socket is bound here instead, by the
    /// sandbox (see `agent_socket`): a directory of the sandbox's root,
    /// bound into it at `AGENT_DIR`.
    pub fn agent_dir(&self) -> PathBuf {
        self.dir.join("agent")
    }
    /// A gVisor sandbox's network namespace, made before runsc starts (its
    /// netstack takes the links it finds then) and bound here.
    pub fn netns(&self) -> PathBuf {
        self.dir.join("netns")
    }
    /// A container's user namespace, owned by the sandbox's base uid and
    /// bound here for the runtime to join (see `ns::new_userns`), in a
    /// directory only root may enter: a namespace file is readable by all.
    pub fn userns(&self) -> PathBuf {
        self.dir.join("ns").join("user")
    }
    pub fn agent_uds(&self) -> PathBuf {
        self.agent_dir().join("agent.sock")
    }
    /// The agent's process logs, kept outside the root so that they are
    /// written the same way whatever the image.
    pub fn logs(&self) -> PathBuf {
        self.disk().join("logs")
    }
    pub fn etc(&self) -> PathBuf {
        self.disk().join("etc")
    }
    /// The `host` image's /home, where the unprivileged `user` lives.
    pub fn home(&self) -> PathBuf {
        self.disk().join("home")
    }
    /// Where volume `volume_id` is mounted for the sandbox (bound into it
    /// at its path): under the sandbox's directory, so that fencing and
    /// the fence keeper unmount it with the rest.
    pub fn volume(&self, volume_id: &str) -> PathBuf {
        self.dir.join("volumes").join(volume_id)
    }
    /// Secret files: a small tmpfs of their own, never the disk.
    pub fn secrets(&self) -> PathBuf {
        self.dir.join("secrets")
    }
    /// The overlay's upper and work directories (imported images).
    pub fn upper(&self) -> PathBuf {
        self.disk().join("upper")
    }
    pub fn work(&self) -> PathBuf {
        self.disk().join("work")
    }
    /// Directories owned by the sandbox's root and bound read-write, for
    /// a root of this kind at this isolation level. An overlay root keeps
    /// /tmp in its upper directory, except under gVisor: runsc mounts its
    /// own tmpfs (the sentry's memory) on an empty /tmp that is no mount
    /// of the bundle, where a full /tmp meant the sandbox's memory cgroup
    /// killing the sentry instead of ENOSPC; so /tmp is a private
    /// directory on the sandbox's disk there, as for the other roots.
    pub fn private_dirs(
        &self,
        root: RootKind,
        isolation: crate::runtime::Isolation,
    ) -> Vec<(PathBuf, &'static str)> {
        let mut v = vec![(self.workspace(), "/workspace")];
        match root {
            RootKind::Host => v.extend([
                (self.disk().join("tmp"), "/tmp"),
                (self.disk().join("root"), "/root"),
                (self.home(), "/home"),
                (self.disk().join("var"), "/var"),
                (self.etc(), "/etc"),
            ]),
            RootKind::ReadOnlyImage => v.extend([
                (self.disk().join("tmp"), "/tmp"),
                (self.disk().join("root"), "/root"),
            ]),

            RootKind::Overlay if isolation == crate::runtime::Isolation::Gvisor => {
                v.push((self.disk().join("tmp"), "/tmp"))
            }
            RootKind::Overlay => {}
        }
        v.push((self.logs(), "/var/log/talon"));
        v
    }
}

/// What the sandbox's root is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootKind {
    /// An empty read-only root with the host's /usr bound in.
    Host,
    /// An imported image's layers under a writable upper directory.
    Overlay,
    /// An imported image, flattened and bound read-only.
    ReadOnlyImage,
}
