//! Container runtimes behind one trait, picked per worker by name. The
//! OCI-CLI adapter drives `runc` or `crun` with the same bundle; every call
//! is a short-lived CLI process, so the containers outlive the worker.
//!
//! A container's init gets /dev/null for its stdio (a detached container
//! keeps the runtime's, and a host file there is readable through
//! /proc/1/fd: the CVE-2024-21626 family); the runtime's own messages go
//! to the bundle's log through `--log`. The agent's bound socket is the
//! one fd handed over (`--preserve-fds 1`, as fd 3).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// How strongly a sandbox is kept from the host: which runtime runs it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// Namespaces, cgroups and seccomp around the host's kernel.
    #[default]
    Container,
    /// gVisor's user-space kernel (runsc).
    Gvisor,
}

impl Isolation {
    /// From the contract; UNSPECIFIED is the default, and a level no
    /// worker can run (MICROVM, an unknown number) is an error.
    pub fn from_proto(v: i32) -> anyhow::Result<Isolation> {
        use talon_proto::v1::Isolation as P;
        match P::try_from(v) {
            Ok(P::Unspecified | P::Container) => Ok(Isolation::Container),
            Ok(P::Gvisor) => Ok(Isolation::Gvisor),
            Ok(P::Microvm) => anyhow::bail!("no worker offers microvm isolation yet"),
            Err(_) => anyhow::bail!("unknown isolation level {v}"),
        }
    }

    pub fn to_proto(self) -> talon_proto::v1::Isolation {
        match self {
            Isolation::Container => talon_proto::v1::Isolation::Container,
            Isolation::Gvisor => talon_proto::v1::Isolation::Gvisor,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Isolation::Container => "container",
            Isolation::Gvisor => "gvisor",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerStatus {
    Created,
    Running,
    Paused,
    Stopped,
}

#[async_trait::async_trait]
pub trait Runtime: Send + Sync {
    fn name(&self) -> &str;
    /// How this runtime reads a masked-equal seccomp rule (see `seccomp`).
    fn masked_eq(&self) -> crate::seccomp::MaskedEq {
        crate::seccomp::MaskedEq::MaskInValue
    }
    /// The isolation level it runs sandboxes at.
    fn isolation(&self) -> Isolation {
        Isolation::Container
    }
    /// Creates and starts the container from a bundle, detached, with
    /// `agent_socket` as its fd 3 (a runtime that cannot hand an fd over,
    /// runsc, gets None: its agent binds a path, see `agent_socket`);
    /// its init's host pid.
    async fn run(
        &self,
        id: &str,
        bundle: &Path,
        agent_socket: Option<&std::os::fd::OwnedFd>,
    ) -> anyhow::Result<u32>;
    /// The host process that answers on the agent's socket of container
    /// `id`, whose init is `init`: the init itself, but for runsc, whose
    /// gofer binds and accepts the sentry's host sockets.
    async fn agent_server(&self, _id: &str, init: u32) -> anyhow::Result<u32> {
        Ok(init)
    }
    /// Renames a running container from inside, where its kernel keeps
    /// the name (gVisor: the agent binary, run once with CAP_SYS_ADMIN);
    /// None for a runtime on the host's kernel, whose UTS namespace the
    /// worker enters instead.
    async fn set_hostname(&self, _id: &str, _name: &str) -> Option<anyhow::Result<()>> {
        None
    }
    async fn pause(&self, id: &str) -> anyhow::Result<()>;
    async fn resume(&self, id: &str) -> anyhow::Result<()>;
    async fn kill(&self, id: &str, signal: &str) -> anyhow::Result<()>;
    /// Removes the container (and its cgroup); a missing one is fine.
    async fn delete(&self, id: &str) -> anyhow::Result<()>;
    /// None when the runtime does not know the container.
    async fn status(&self, id: &str) -> anyhow::Result<Option<ContainerStatus>> {
        Ok(self.state(id).await?.map(|(s, _)| s))
    }
    /// The container's status and the host pid of its init (0 if none).
    async fn state(&self, id: &str) -> anyhow::Result<Option<(ContainerStatus, u32)>>;
}

/// What `run` hands a runtime: the log for its messages, the fd to keep.
struct Run<'a> {
    log: &'a Path,
    fd: Option<&'a std::os::fd::OwnedFd>,
}

/// How long a container's delete is retried while its cgroup drains.
pub const DELETE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// `runc` / `crun` (and `runsc`, which takes the same commands), or
/// `talon oci` for libcontainer.
pub struct OciCli {
    name: String,
    binary: String,
    prefix: Vec<String>,
    root: PathBuf,
    masked_eq: crate::seccomp::MaskedEq,
    isolation: Isolation,
}

impl OciCli {
    pub fn new(binary: &str, root: PathBuf) -> Self {
        let name = Path::new(binary)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        OciCli {
            name,
            binary: binary.to_string(),
            prefix: vec![],
            root,
            masked_eq: crate::seccomp::MaskedEq::MaskInValue,
            isolation: Isolation::Container,
        }
    }

    /// gVisor's runsc on `platform` (systrap, ptrace or kvm). Every call
    /// carries the same flags: the platform; the root written through to
    /// the host's files (`--overlay2=none`: snapshots and stop/start read
    /// the upper directory, which runsc's default would keep in memory);
    /// host unix sockets only created, for the agent's (`--host-uds=create`,
    /// never `open`: the sandbox connects to no socket of the host); and
    /// the sandbox's own network namespace served by gVisor's netstack.
    pub fn gvisor(binary: &str, root: PathBuf, platform: &str) -> Self {
        OciCli {
            name: "runsc".into(),
            binary: binary.into(),
            prefix: vec![
                format!("--platform={platform}"),
                "--overlay2=none".into(),
                "--host-uds=create".into(),
                "--network=sandbox".into(),
            ],
            root,
            masked_eq: crate::seccomp::MaskedEq::MaskInValue,
            isolation: Isolation::Gvisor,
        }
    }

    /// libcontainer, reached as `binary PREFIX… --root R …` (`talon oci`).
    pub fn libcontainer(binary: &str, prefix: &[&str], root: PathBuf) -> Self {
        OciCli {
            name: "libcontainer".into(),
            binary: binary.into(),
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
            root,
            masked_eq: crate::seccomp::MaskedEq::DatumInValue,
            isolation: Isolation::Container,
        }
    }

    async fn cmd(&self, args: &[&str], run: Option<Run<'_>>) -> anyhow::Result<String> {
        let mut c = tokio::process::Command::new(&self.binary);
        c.args(&self.prefix).arg("--root").arg(&self.root);
        if let Some(r) = &run {
            c.arg("--log").arg(r.log);
        }
        c.args(args).stdin(Stdio::null()).kill_on_drop(true);
        // A detached container inherits the runtime's stdio: /dev/null,
        // never a host file or our pipes. Errors are in the log.
        if let Some(Run { log, fd }) = run {
            use std::os::fd::AsRawFd;
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(log)?;
            c.stdout(Stdio::null()).stderr(Stdio::null());
            let raw = fd.map(|fd| fd.as_raw_fd());
            // A container inherits its open-file limit from the runtime
            // (see `bundle::spec`); gVisor's kernel takes the spec's.
            let nofile = (self.isolation == Isolation::Container).then(|| {
                let n = crate::bundle::nofile_limit();
                libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                }
            });
            // SAFETY: between fork and exec only setrlimit, dup2 and fcntl,
            // which are async-signal-safe, on an fd the parent keeps open
            // throughout.
            unsafe {
                c.pre_exec(move || {
                    if let Some(r) = &nofile
                        && libc::setrlimit(libc::RLIMIT_NOFILE, r) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    let failed = match raw {
                        None => false,
                        Some(raw) if raw == crate::agent_socket::AGENT_FD => {
                            libc::fcntl(raw, libc::F_SETFD, 0) != 0
                        }
                        Some(raw) => libc::dup2(raw, crate::agent_socket::AGENT_FD) < 0,
                    };
                    if failed {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let status = c.status().await?;
            if !status.success() {
                let tail = std::fs::read_to_string(log).unwrap_or_default();
                let tail: String = tail
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                anyhow::bail!("{} {}: {status}: {tail}", self.binary, args.join(" "));
            }
            return Ok(String::new());
        }
        let out = c.output().await?;
        if !out.status.success() {
            anyhow::bail!(
                "{} {}: {}",
                self.binary,
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[async_trait::async_trait]
impl Runtime for OciCli {
    fn name(&self) -> &str {
        &self.name
    }

    fn masked_eq(&self) -> crate::seccomp::MaskedEq {
        self.masked_eq
    }

    fn isolation(&self) -> Isolation {
        self.isolation
    }

    async fn set_hostname(&self, id: &str, name: &str) -> Option<anyhow::Result<()>> {
        if self.isolation != Isolation::Gvisor {
            return None;
        }
        Some(
            self.cmd(
                &[
                    "exec",
                    "--cap",
                    "CAP_SYS_ADMIN",
                    id,
                    "/.talon/agent",
                    "--set-hostname",
                    name,
                ],
                None,
            )
            .await
            .map(|_| ()),
        )
    }

    /// runsc's gofer, named in runsc's state of the container: the file
    /// `ROOT/ID_sandbox:ID.state`, JSON with `goferPid` (runsc keeps no
    /// other record of it; a runsc that moves it fails here, loudly).
    async fn agent_server(&self, id: &str, init: u32) -> anyhow::Result<u32> {
        if self.isolation != Isolation::Gvisor {
            return Ok(init);
        }
        let path = self.root.join(format!("{id}_sandbox:{id}.state"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("runsc's state {}: {e}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)?;
        v["goferPid"]
            .as_u64()
            .filter(|p| *p > 0)
            .map(|p| p as u32)
            .ok_or_else(|| anyhow::anyhow!("{}: no goferPid", path.display()))
    }

    async fn run(
        &self,
        id: &str,
        bundle: &Path,
        agent_socket: Option<&std::os::fd::OwnedFd>,
    ) -> anyhow::Result<u32> {
        // The pid comes back in a file, saving a `state` call (a process)
        // on every create.
        let pid_file = bundle.join("init.pid");
        let _ = std::fs::remove_file(&pid_file);
        let (b, p) = (bundle.to_string_lossy(), pid_file.to_string_lossy());
        let log = bundle.join("runtime.log");
        let mut args = vec!["run", "--detach"];
        if agent_socket.is_some() {
            args.extend(["--preserve-fds", "1"]);
        }
        args.extend(["--pid-file", &p, "--bundle", &b, id]);
        let ran = self
            .cmd(
                &args,
                Some(Run {
                    log: &log,
                    fd: agent_socket,
                }),
            )
            .await;
        if let Err(e) = ran {
            // A run that failed after its create left the file behind.
            let _ = std::fs::remove_file(&pid_file);
            return Err(e);
        }
        let pid = std::fs::read_to_string(&pid_file)?;
        // Written 0644 by the runtime; the bundle is root's business.
        let _ = std::fs::set_permissions(&pid_file, std::fs::Permissions::from_mode(0o600));
        pid.trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{}: not a pid: {pid:?}", pid_file.display()))
    }

    async fn pause(&self, id: &str) -> anyhow::Result<()> {
        self.cmd(&["pause", id], None).await.map(|_| ())
    }

    async fn resume(&self, id: &str) -> anyhow::Result<()> {
        self.cmd(&["resume", id], None).await.map(|_| ())
    }

    async fn kill(&self, id: &str, signal: &str) -> anyhow::Result<()> {
        self.cmd(&["kill", id, signal], None).await.map(|_| ())
    }

    /// Killed processes leave their cgroup only once the kernel has
    /// reaped them, and until then its removal fails (EBUSY); a busy
    /// sandbox may take a moment, so the delete is retried for a while.
    async fn delete(&self, id: &str) -> anyhow::Result<()> {
        let mut wait = std::time::Duration::from_millis(10);
        let deadline = tokio::time::Instant::now() + DELETE_PATIENCE;
        loop {
            match self.cmd(&["delete", "--force", id], None).await {
                Ok(_) => return Ok(()),
                Err(e)
                    if e.to_string().contains("does not exist")
                        || e.to_string().contains("not found") =>
                {
                    return Ok(());
                }
                Err(e) if tokio::time::Instant::now() + wait > deadline => return Err(e),
                Err(e) => {
                    tracing::debug!(container = %id, error = %e, "delete retried");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(std::time::Duration::from_millis(500));
                }
            }
        }
    }

    async fn state(&self, id: &str) -> anyhow::Result<Option<(ContainerStatus, u32)>> {
        match self.cmd(&["state", id], None).await {
            Ok(out) => {
                let v: serde_json::Value = serde_json::from_str(&out)?;
                let status = match v["status"].as_str().unwrap_or("") {
                    "created" => ContainerStatus::Created,
                    "running" => ContainerStatus::Running,
                    "paused" => ContainerStatus::Paused,
                    _ => ContainerStatus::Stopped,
                };
                Ok(Some((status, v["pid"].as_u64().unwrap_or(0) as u32)))
            }
            Err(e)
                if e.to_string().contains("does not exist")
                    || e.to_string().contains("not found") =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// Whether crun (1.8, Debian's) refuses this host: it won't run on a
/// hybrid cgroup layout whose unified hierarchy holds controllers, as
/// this project's VMs have ("cgroups in hybrid mode not supported").
pub fn crun_refuses_this_host() -> bool {
    std::fs::read_to_string("/sys/fs/cgroup/unified/cgroup.controllers")
        .is_ok_and(|c| !c.trim().is_empty())
}

/// A runtime that runs nothing: it keeps the containers it is told of and
/// records every call, so the host's fencing, pool and reaping logic is
/// tested without root (youki's `TestHelperSyscall` in the same way).
#[cfg(test)]
pub mod fake {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    #[derive(Default)]
    pub struct RecordingRuntime {
        /// Container -> (status, init pid).
        pub containers: Mutex<HashMap<String, (ContainerStatus, u32)>>,
        /// Every call, as "verb id".
        pub calls: Mutex<Vec<String>>,
    }

    impl RecordingRuntime {
        pub fn with(containers: &[(&str, ContainerStatus, u32)]) -> Self {
            let r = RecordingRuntime::default();
            for (id, s, pid) in containers {
                r.containers
                    .lock()
                    .unwrap()
                    .insert(id.to_string(), (*s, *pid));
            }
            r
        }

        fn note(&self, verb: &str, id: &str) {
            self.calls.lock().unwrap().push(format!("{verb} {id}"));
        }

        pub fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
    }

    #[async_trait::async_trait]
    impl Runtime for RecordingRuntime {
        fn name(&self) -> &str {
            "fake"
        }
        async fn run(
            &self,
            id: &str,
            _bundle: &Path,
            _agent_socket: Option<&std::os::fd::OwnedFd>,
        ) -> anyhow::Result<u32> {
            self.note("run", id);
            anyhow::bail!("the fake runtime runs nothing")
        }
        async fn pause(&self, id: &str) -> anyhow::Result<()> {
            self.note("pause", id);
            Ok(())
        }
        async fn resume(&self, id: &str) -> anyhow::Result<()> {
            self.note("resume", id);
            Ok(())
        }
        async fn kill(&self, id: &str, signal: &str) -> anyhow::Result<()> {
            self.note(&format!("kill-{signal}"), id);
            if let Some(c) = self.containers.lock().unwrap().get_mut(id) {
                c.0 = ContainerStatus::Stopped;
            }
            Ok(())
        }
        async fn delete(&self, id: &str) -> anyhow::Result<()> {
            self.note("delete", id);
            self.containers.lock().unwrap().remove(id);
            Ok(())
        }
        async fn state(&self, id: &str) -> anyhow::Result<Option<(ContainerStatus, u32)>> {
            Ok(self.containers.lock().unwrap().get(id).copied())
        }
    }
}
