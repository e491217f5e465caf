//! A real `talon up` for the run: its own data directory, ports, bridge
//! and address pool, so it never meets a platform already on the host.
//! Dropping it stops the server and removes every container it made.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Platform {
    child: Child,
    /// Its command line, to start it again the same way.
    args: Vec<std::ffi::OsString>,
    pub dir: tempfile::TempDir,
    pub grpc: String,
    /// The REST gateway, which the SDKs other than Rust's speak.
    pub http: String,
    /// The E2B-compatible API's two listeners.
    pub e2b_api: String,
    pub e2b_sandbox: String,
    pub ops: String,
    pub api_key: String,
    talon: PathBuf,
    bridge: String,
}

pub struct Options<'a> {
    pub talon: &'a Path,
    pub agent: &'a Path,
    pub max_sandboxes: usize,
    /// Extra flags for `talon up` (the pool's, for one).
    pub extra: Vec<String>,
}

fn free_port() -> u16 {
    talon_core::listen::spare_port().expect("a free port")
}

/// The bench's bridge and pool, apart from `talon0` and the tests'.
pub const BRIDGE: &str = "tlbench";
pub const CIDR: &str = "10.82.0.0/16";

impl Platform {
    pub async fn up(o: Options<'_>) -> anyhow::Result<Platform> {
        // Overlay roots want a real filesystem, not tmpfs; sandbox users
        // must traverse the directory.
        let dir = tempfile::Builder::new()
            .prefix("talon-bench-")
            .tempdir_in("/var/tmp")?;
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )?;
        let (g, h, p) = (free_port(), free_port(), free_port());
        let (ea, es) = (free_port(), free_port());
        let log = std::fs::File::create(dir.path().join("talon.log"))?;
        let mut cmd = Command::new(o.talon);
        cmd.arg("up")
            .arg("--data-dir")
            .arg(dir.path())
            .arg("--agent-path")
            .arg(o.agent)
            .args(["--grpc-listen", &format!("127.0.0.1:{g}")])
            .args(["--http-listen", &format!("127.0.0.1:{h}")])
            .args(["--ops-listen", &format!("127.0.0.1:{p}")])
            .args(["--e2b-api-listen", &format!("127.0.0.1:{ea}")])
            .args(["--e2b-sandbox-listen", &format!("127.0.0.1:{es}")])
            .args(["--network", "bridge", "--bridge", BRIDGE])
            .args(["--sandbox-cidr", CIDR])
            .args(["--worker-max-sandboxes", &o.max_sandboxes.to_string()])
            .args(&o.extra);
        let args: Vec<std::ffi::OsString> = cmd.get_args().map(|a| a.to_owned()).collect();
        let child = cmd
            .env("TALON_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", o.talon.display()))?;
        let mut me = Platform {
            child,
            args,
            grpc: format!("http://127.0.0.1:{g}"),
            http: format!("http://127.0.0.1:{h}"),
            e2b_api: format!("http://127.0.0.1:{ea}"),
            e2b_sandbox: format!("http://127.0.0.1:{es}"),
            ops: format!("127.0.0.1:{p}"),
            api_key: String::new(),
            talon: o.talon.to_path_buf(),
            bridge: BRIDGE.into(),
            dir,
        };
        me.until_ready().await?;
        Ok(me)
    }

    /// Waits until it answers with its credentials and its embedded
    /// worker is registered.
    async fn until_ready(&mut self) -> anyhow::Result<()> {
        let me = self;
        let creds = me.dir.path().join("bootstrap-credentials.json");
        let t0 = Instant::now();
        loop {
            if let Some(k) = std::fs::read_to_string(&creds)
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|v| v["api_key"].as_str().map(String::from))
                && talon_sdk::Client::connect(&me.grpc, &k).await.is_ok()
            {
                me.api_key = k;
                break;
            }
            if let Some(st) = me.child.try_wait()? {
                anyhow::bail!("talon up exited ({st}): {}", me.log_tail());
            }
            anyhow::ensure!(
                t0.elapsed() < Duration::from_secs(60),
                "talon up did not come up in 60 s: {}",
                me.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Sandboxes need the embedded worker registered.
        while me.metric("talon_workers_connected").await.unwrap_or(0.0) < 1.0 {
            if let Some(st) = me.child.try_wait()? {
                anyhow::bail!("talon up exited ({st}): {}", me.log_tail());
            }
            anyhow::ensure!(
                t0.elapsed() < Duration::from_secs(60),
                "the embedded worker did not register in 60 s: {}",
                me.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Stops it: SIGTERM and a wait (`graceful`), or SIGKILL.
    pub fn stop(&mut self, graceful: bool) {
        if graceful {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            for _ in 0..600 {
                if self.child.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again as it was started (its data directory, ports and
    /// flags), once stopped; when it was spawned.
    pub async fn start_again(&mut self) -> anyhow::Result<Instant> {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.path().join("talon.log"))?;
        let t0 = Instant::now();
        self.child = Command::new(&self.talon)
            .args(&self.args)
            .env("TALON_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        self.until_ready().await?;
        Ok(t0)
    }

    /// The log's last lines, without backtrace frames: a panic's frames
    /// would otherwise push its message out of the tail.
    pub fn log_tail(&self) -> String {
        let s = std::fs::read_to_string(self.dir.path().join("talon.log")).unwrap_or_default();
        let lines: Vec<&str> = s.lines().filter(|l| !is_frame(l)).collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    pub async fn client(&self) -> anyhow::Result<talon_sdk::Client> {
        Ok(talon_sdk::Client::connect(&self.grpc, &self.api_key).await?)
    }

    /// The embedded worker's sandbox directory.
    pub fn sandbox_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join("worker/sandboxes").join(id)
    }

    /// Prometheus text from the ops listener.
    pub async fn metrics(&self) -> anyhow::Result<String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(&self.ops).await?;
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: bench\r\n\r\n")
            .await?;
        let mut out = String::new();
        s.read_to_string(&mut out).await?;
        Ok(out)
    }

    /// One sample of a metric (the sum over its label sets).
    pub async fn metric(&self, name: &str) -> anyhow::Result<f64> {
        Ok(self
            .metrics()
            .await?
            .lines()
            .filter(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum())
    }
}

/// Deletes every container a worker's data directory's runtime state
/// knows (they outlive their worker by design).
pub fn remove_containers(talon: &Path, worker_dir: &Path) {
    let state = worker_dir.join("runtime-state");
    if let Ok(d) = std::fs::read_dir(&state) {
        for e in d.flatten() {
            let _ = Command::new(talon)
                .arg("oci")
                .arg("--root")
                .arg(&state)
                .args(["delete", "--force"])
                .arg(e.file_name())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A line of a Rust backtrace: `  12: path::fn` or `      at file:line`.
fn is_frame(l: &str) -> bool {
    let t = l.trim_start();
    t.len() < l.len()
        && (t.starts_with("at ")
            || t.split_once(": ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
}

impl Drop for Platform {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        remove_containers(&self.talon, &self.dir.path().join("worker"));
        // gVisor's sandboxes, kept by runsc.
        let runsc_state = self.dir.path().join("worker/runsc-state");
        if let Some(runsc) = talon_worker::find_runsc("auto").filter(|_| runsc_state.is_dir())
            && let Ok(out) = Command::new(&runsc)
                .arg("--root")
                .arg(&runsc_state)
                .args(["list", "--quiet"])
                .output()
        {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new(&runsc)
                    .arg("--root")
                    .arg(&runsc_state)
                    .args(["delete", "--force", id])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        // Mounts left under the data directory would keep it from going.
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "grep -o ' {0}/[^ ]*' /proc/self/mounts | sort -r | xargs -r -n1 umount -l",
                self.dir.path().display()
            ))
            .status();
        let b = &self.bridge;
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "nft delete table inet {b}; nft delete table bridge {b}; ip link del {b}"
            ))
            .stderr(Stdio::null())
            .status();
    }
}
