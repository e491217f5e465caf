//! Container runtimes behind one trait, picked per worker by name. The
//! OCI-CLI adapter drives `runc` or `crun` with the same bundle; every call
//! is a short-lived CLI process, so the containers outlive the worker.

use std::path::{Path, PathBuf};
use std::process::Stdio;

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
    /// Creates and starts a container from a bundle, detached.
    /// Creates and starts the container, detached; its init's host pid.
    async fn run(&self, id: &str, bundle: &Path) -> anyhow::Result<u32>;
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
        }
    }

    async fn cmd(&self, args: &[&str], bundle_log: Option<&Path>) -> anyhow::Result<String> {
        let mut c = tokio::process::Command::new(&self.binary);
        c.args(&self.prefix)
            .arg("--root")
            .arg(&self.root)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        // A detached container inherits runc's stdio: give it a file, not
        // our pipes, or it would hold them open.
        if let Some(log) = bundle_log {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)?;
            c.stdout(Stdio::from(f.try_clone()?)).stderr(Stdio::from(f));
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

    async fn run(&self, id: &str, bundle: &Path) -> anyhow::Result<u32> {
        // The pid comes back in a file, saving a `state` call (a process)
        // on every create.
        let pid_file = bundle.join("init.pid");
        let _ = std::fs::remove_file(&pid_file);
        let (b, p) = (bundle.to_string_lossy(), pid_file.to_string_lossy());
        self.cmd(
            &["run", "--detach", "--pid-file", &p, "--bundle", &b, id],
            Some(&bundle.join("runtime.log")),
        )
        .await?;
        let pid = std::fs::read_to_string(&pid_file)?;
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
