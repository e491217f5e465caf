//! The platform under test: a real `talon server` or `talon up` process
//! on free ports with a fresh data directory, stopped and started again
//! on the same directory and ports when a test asks (`restart`).

use super::*;
use std::process::{Child, Command, Stdio};

pub fn free_port() -> u16 {
    talon_core::listen::spare_port().unwrap()
}

#[derive(serde::Deserialize, Clone, Debug)]
pub struct Bootstrap {
    pub tenant_id: String,
    pub user_id: String,
    pub email: String,
    pub password: String,
    pub api_key: String,
}

pub struct Server {
    child: Child,
    /// How it was started: `start_again` starts it the same way.
    cmd: Vec<std::ffi::OsString>,
    env: Vec<(String, String)>,
    pub dir: tempfile::TempDir,
    pub grpc: String,
    pub ops: String,
    /// The REST gateway (`talon up` only), e.g. `http://127.0.0.1:PORT`.
    pub http: String,
    /// The E2B-compatible API (`talon up` only).
    pub e2b: String,
    /// E2B's sandbox data plane (`talon up` only).
    pub e2b_sandbox: String,
    pub boot: Bootstrap,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Sandboxes outlive their worker by design; a test's are removed
        // with its data directory, so none keeps running after it.
        // Every worker's data directory is one below the server's
        // (`worker` embedded, `w` and others spawned).
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        for d in &dirs {
            // Its fence keeper would outlive it and act at the lease's end.
            if let Some(pid) = std::fs::read_to_string(d.join("fence-keeper.pid"))
                .ok()
                .and_then(|p| p.trim().parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c.windows(12).any(|w| w == b"fence-keeper"))
                })
            {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            remove_containers(&d.join("runtime-state"));
        }
        // And gVisor's, kept by runsc.
        for d in &dirs {
            remove_runsc_containers(&d.join("runsc-state"));
        }
        // Their disks (loop devices), secrets and roots are mounts under
        // the data directory, which would stay (and the directory too).
        let _ = talon_worker::rootfs::unmount_under(self.dir.path());
    }
}

/// Deletes every container a runtime state directory knows.
pub fn remove_containers(state: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(state) else {
        return;
    };
    for e in entries.flatten() {
        let _ = Command::new(env!("CARGO_BIN_EXE_talon"))
            .arg("oci")
            .arg("--root")
            .arg(state)
            .args(["delete", "--force"])
            .arg(e.file_name())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Deletes every gVisor sandbox a runsc state directory knows.
pub fn remove_runsc_containers(state: &std::path::Path) {
    let Some(runsc) = talon_worker::find_runsc("auto").filter(|_| state.is_dir()) else {
        return;
    };
    let Ok(out) = Command::new(&runsc)
        .arg("--root")
        .arg(state)
        .args(["list", "--quiet"])
        .output()
    else {
        return;
    };
    for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        let _ = Command::new(&runsc)
            .arg("--root")
            .arg(state)
            .args(["delete", "--force", id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Server {
    pub async fn start() -> Server {
        Self::start_with(None, &[]).await
    }

    /// `talon up`: the control plane with its embedded worker.
    pub async fn up() -> Server {
        Self::start_cmd("up", None, &[]).await
    }

    /// `talon up` with extra flags.
    pub async fn up_with(extra: &[&str]) -> Server {
        Self::start_cmd("up", None, extra).await
    }

    pub async fn start_with(database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_cmd("server", database_url, extra).await
    }

    /// A second `talon server` on the database of `first`, which
    /// bootstrapped it (this one writes no credentials of its own).
    pub async fn join(first: &Server, database_url: &str, extra: &[&str]) -> Server {
        Self::start_full(
            "server",
            Some(database_url),
            extra,
            Some((first.boot.clone(), first.data_dir())),
            "127.0.0.1",
        )
        .await
    }

    /// A `talon server` listening for gRPC on `ip` (a test LAN's gateway),
    /// on `database_url` if given.
    pub async fn start_on(ip: &str, database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_full("server", database_url, extra, None, ip).await
    }

    /// `join`, listening on `ip`.
    pub async fn join_on(first: &Server, database_url: &str, ip: &str, extra: &[&str]) -> Server {
        Self::start_full(
            "server",
            Some(database_url),
            extra,
            Some((first.boot.clone(), first.data_dir())),
            ip,
        )
        .await
    }

    async fn start_cmd(sub: &str, database_url: Option<&str>, extra: &[&str]) -> Server {
        Self::start_full(sub, database_url, extra, None, "127.0.0.1").await
    }

    async fn start_full(
        sub: &str,
        database_url: Option<&str>,
        extra: &[&str],
        joined: Option<(Bootstrap, PathBuf)>,
        ip: &str,
    ) -> Server {
        let dir = tempfile::tempdir().unwrap();
        // Sandboxes' mapped users must traverse the data directory.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )
        .unwrap();
        // Servers on one database share the platform's keys (each keeps
        // its own server.id), as operators deploy them.
        let joined = joined.map(|(boot, first_dir)| {
            let keys = dir.path().join("keys");
            std::fs::create_dir_all(&keys).unwrap();
            for k in ["jwt.key", "worker.token", "preview.key", "secrets.key"] {
                std::fs::copy(first_dir.join("keys").join(k), keys.join(k)).unwrap();
            }
            boot
        });
        let (g, o, h, e) = (free_port(), free_port(), free_port(), free_port());
        let es = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_talon"));
        cmd.arg(sub);
        if sub == "up" {
            cmd.arg("--agent-path")
                .arg(agent_binary())
                .arg("--http-listen")
                .arg(format!("127.0.0.1:{h}"))
                .arg("--e2b-api-listen")
                .arg(format!("127.0.0.1:{e}"))
                .arg("--e2b-sandbox-listen")
                .arg(format!("127.0.0.1:{es}"));
            // Servers of one test binary run side by side: only a test
            // that asks for a network gets one (with its own bridge).
            if !extra.contains(&"--network") {
                cmd.arg("--network").arg("none");
            }
        }
        // Pools build in the background; only the tests of the pool ask
        // for one (conformance and the README run `talon up` as shipped).
        if sub != "server" && !extra.contains(&"--prewarm-pool-size") {
            cmd.arg("--prewarm-pool-size").arg("0");
        }
        // `TALON_NAME=value` among the extras is a setting by environment.
        let (env, extra): (Vec<&str>, Vec<&str>) = extra
            .iter()
            .partition(|a| a.starts_with("TALON_") && a.contains('='));
        cmd.envs(env.iter().filter_map(|e| e.split_once('=')));
        cmd.arg("--data-dir")
            .arg(dir.path())
            .arg("--grpc-listen")
            .arg(format!("{ip}:{g}"))
            .arg("--ops-listen")
            .arg(format!("127.0.0.1:{o}"))
            .args(extra)
            .env("TALON_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(u) = database_url {
            cmd.arg("--database-url").arg(u);
        }
        let args: Vec<std::ffi::OsString> = cmd.get_args().map(|a| a.to_owned()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .filter_map(|e| e.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let child = cmd.spawn().expect("spawn talon server");
        let grpc = format!("http://{ip}:{g}");
        let creds = dir.path().join("bootstrap-credentials.json");
        let mut boot = None;
        for _ in 0..300 {
            let ready = joined.clone().or_else(|| {
                std::fs::read_to_string(&creds)
                    .ok()
                    .and_then(|s| serde_json::from_str::<Bootstrap>(&s).ok())
            });
            if let Some(b) = ready
                && Channel::from_shared(grpc.clone())
                    .unwrap()
                    .connect()
                    .await
                    .is_ok()
            {
                boot = Some(b);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // `up` serves REST too; its listener binds just after gRPC's.
        if sub == "up" {
            for _ in 0..200 {
                if tokio::net::TcpStream::connect(("127.0.0.1", h))
                    .await
                    .is_ok()
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        Server {
            child,
            cmd: args,
            env,
            grpc,
            ops: format!("http://127.0.0.1:{o}"),
            http: format!("http://127.0.0.1:{h}"),
            e2b: format!("http://127.0.0.1:{e}"),
            e2b_sandbox: format!("http://127.0.0.1:{es}"),
            boot: boot.expect("server did not start"),
            dir,
        }
    }

    /// SIGKILL, and waits for it to be gone: no clean shutdown.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, and waits for it to be gone (up to a minute, then
    /// SIGKILL): a clean shutdown, as systemd stops it.
    pub fn terminate(&mut self) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        for _ in 0..600 {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill9();
    }

    /// Starts it again as it was first started (the same flags, data
    /// directory and ports), once it has stopped, and waits until it
    /// answers gRPC (and REST for `up`).
    pub async fn start_again(&mut self) {
        assert!(
            self.child.try_wait().ok().flatten().is_some(),
            "it is still running"
        );
        self.child = Command::new(env!("CARGO_BIN_EXE_talon"))
            .args(&self.cmd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("TALON_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn talon again");
        for _ in 0..600 {
            if Channel::from_shared(self.grpc.clone())
                .unwrap()
                .connect()
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if self.cmd.first().is_some_and(|a| a == "up") {
            let http = self.http.trim_start_matches("http://").to_string();
            for _ in 0..400 {
                if tokio::net::TcpStream::connect(&http).await.is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
    }

    /// The talon process's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.grpc.clone())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub async fn as_(&self, token: &str) -> Clients {
        Clients::new(self.channel().await, token)
    }

    pub async fn admin(&self) -> Clients {
        self.as_(&self.boot.api_key).await
    }

    pub fn worker_token(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("keys/worker.token"))
            .unwrap()
            .trim()
            .to_string()
    }

    pub fn jwt_key(&self) -> Vec<u8> {
        std::fs::read_to_string(self.dir.path().join("keys/jwt.key"))
            .unwrap()
            .trim()
            .as_bytes()
            .to_vec()
    }
}
