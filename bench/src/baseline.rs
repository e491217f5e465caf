//! The baselines every figure is divided by, measured in the same run on
//! the same host: the OCI runtimes on the sandbox's own bundle, a plain
//! fork+exec, a PTY on the host, a raw file write and read, and a
//! container that only sleeps.

use anyhow::Context;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An OCI runtime CLI on a copy of a sandbox's bundle whose process is
/// replaced by `args` (same root, mounts, namespaces, id mapping).
pub struct OciBaseline {
    pub runtime: String,
    /// The binary, when not `runtime` on PATH, and its global flags.
    binary: PathBuf,
    flags: Vec<String>,
    bundle: PathBuf,
    state: PathBuf,
    cgroup: String,
}

/// A bundle written for libcontainer carries its masked-equal seccomp
/// rules with the datum in `value` and the mask in `valueTwo` (the worker's
/// `seccomp` module says why); runc and crun read the mask from `value`.
/// Swapped here, so the baseline runs the filter the sandbox runs.
fn oci_masked_eq(cfg: &mut serde_json::Value) {
    let Some(rules) = cfg["linux"]["seccomp"]["syscalls"].as_array_mut() else {
        return;
    };
    for arg in rules
        .iter_mut()
        .filter_map(|r| r["args"].as_array_mut())
        .flatten()
    {
        let datum_first = arg["op"] == "SCMP_CMP_MASKED_EQ"
            && arg["value"].as_u64() == Some(0)
            && arg["valueTwo"].as_u64().is_some_and(|m| m != 0);
        if datum_first {
            let mask = arg["valueTwo"].take();
            arg["value"] = mask;
            arg["valueTwo"] = 0.into();
        }
    }
}

/// The OCI runtimes on this host that we compare with (crun not where it
/// refuses the host's cgroup layout).
pub fn runtimes() -> Vec<String> {
    ["runc", "crun"]
        .into_iter()
        .filter(|r| *r != "crun" || !talon_worker::runtime::crun_refuses_this_host())
        .filter(|r| {
            Command::new(r)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(String::from)
        .collect()
}

impl OciBaseline {
    /// `sandbox_dir` is a live sandbox's directory; its bundle's root is
    /// the sandbox's mounted root filesystem.
    pub fn new(
        runtime: &str,
        sandbox_dir: &Path,
        work: &Path,
        args: &[&str],
    ) -> anyhow::Result<Self> {
        let src = sandbox_dir.join("bundle/config.json");
        let mut cfg: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&src).with_context(|| format!("reading {}", src.display()))?,
        )?;
        let root = cfg["root"]["path"].as_str().unwrap_or("rootfs").to_string();
        let root = if Path::new(&root).is_absolute() {
            PathBuf::from(root)
        } else {
            sandbox_dir.join("bundle").join(root)
        };
        cfg["root"]["path"] = root.to_string_lossy().into();
        cfg["process"]["args"] = serde_json::json!(args);
        cfg["process"]["terminal"] = false.into();
        if let Some(o) = cfg.as_object_mut() {
            o.remove("hooks");
        }
        oci_masked_eq(&mut cfg);
        let cgroup = format!("/talon-bench/{runtime}");
        cfg["linux"]["cgroupsPath"] = cgroup.clone().into();
        let bundle = work.join(format!("{runtime}-bundle"));
        std::fs::create_dir_all(&bundle)?;
        std::fs::write(bundle.join("config.json"), serde_json::to_vec_pretty(&cfg)?)?;
        let state = work.join(format!("{runtime}-state"));
        std::fs::create_dir_all(&state)?;
        Ok(OciBaseline {
            runtime: runtime.into(),
            binary: runtime.into(),
            flags: vec![],
            bundle,
            state,
            cgroup,
        })
    }

    /// runsc at `binary` on a gVisor sandbox's bundle, with the worker's
    /// flags (see `talon_worker::runtime::OciCli::gvisor`) but no network
    /// namespace of the sandbox's: a new one, loopback only.
    pub fn gvisor(
        binary: &Path,
        platform: &str,
        sandbox_dir: &Path,
        work: &Path,
        args: &[&str],
    ) -> anyhow::Result<Self> {
        let mut b = Self::new("runsc", sandbox_dir, work, args)?;
        let path = b.bundle.join("config.json");
        let mut cfg: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        if let Some(ns) = cfg["linux"]["namespaces"].as_array_mut() {
            for n in ns.iter_mut().filter(|n| n["type"] == "network") {
                if let Some(o) = n.as_object_mut() {
                    o.remove("path");
                }
            }
        }
        std::fs::write(&path, serde_json::to_vec_pretty(&cfg)?)?;
        b.binary = binary.into();
        b.flags = vec![
            format!("--platform={platform}"),
            "--overlay2=none".into(),
            "--network=none".into(),
        ];
        Ok(b)
    }

    /// `exec` of `args` in the running container `name`, to its end.
    pub fn exec_once(&self, name: &str, args: &[&str]) -> anyhow::Result<Duration> {
        let t0 = Instant::now();
        let out = self.cmd().arg("exec").arg(name).args(args).output()?;
        let took = t0.elapsed();
        anyhow::ensure!(
            out.status.success(),
            "{} exec: {}",
            self.runtime,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(took)
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new(&self.binary);
        c.args(&self.flags);
        c.arg("--root").arg(&self.state);
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// `run` to the end of the process (create, start, wait, delete).
    /// `warm` unmeasured then `runs` measured `run_once`s, named
    /// PREFIX-i; hands itself back for what comes next.
    pub fn timed_runs(
        self,
        prefix: &str,
        warm: usize,
        runs: usize,
    ) -> anyhow::Result<(Self, Vec<Duration>)> {
        let mut v = Vec::new();
        for i in 0..warm + runs {
            let t = self.run_once(&format!("{prefix}-{i}"))?;
            if i >= warm {
                v.push(t);
            }
        }
        Ok((self, v))
    }

    pub fn run_once(&self, name: &str) -> anyhow::Result<Duration> {
        let t0 = Instant::now();
        let out = self
            .cmd()
            .args(["run", "--bundle"])
            .arg(&self.bundle)
            .arg(name)
            .output()?;
        let took = t0.elapsed();
        anyhow::ensure!(
            out.status.success(),
            "{} run: {}",
            self.runtime,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(took)
    }

    /// Starts a detached container (its process should stay, e.g. sleep).
    pub fn start_detached(&self, name: &str) -> anyhow::Result<()> {
        let mut cfg: serde_json::Value =
            serde_json::from_slice(&std::fs::read(self.bundle.join("config.json"))?)?;
        cfg["linux"]["cgroupsPath"] = format!("{}-{name}", self.cgroup).into();
        let b = self
            .bundle
            .with_file_name(format!("{}-{name}", self.runtime));
        std::fs::create_dir_all(&b)?;
        std::fs::write(b.join("config.json"), serde_json::to_vec(&cfg)?)?;
        // The container keeps the stdio it is given: a pipe would never
        // close. Errors go to the runtime's log.
        let log = b.join("runtime.log");
        let st = self
            .cmd()
            .arg("--log")
            .arg(&log)
            .stderr(Stdio::null())
            .args(["run", "--detach", "--bundle"])
            .arg(&b)
            .arg(name)
            .status()?;
        anyhow::ensure!(
            st.success(),
            "{} run --detach: {}",
            self.runtime,
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Ok(())
    }

    pub fn delete(&self, name: &str) {
        let _ = self
            .cmd()
            .args(["delete", "--force", name])
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(
            self.bundle
                .with_file_name(format!("{}-{name}", self.runtime)),
        );
    }
}

impl Drop for OciBaseline {
    fn drop(&mut self) {
        // The runtimes leave the cgroups' parent (v1: one per controller).
        let _ = Command::new("sh")
            .arg("-c")
            .arg("for c in /sys/fs/cgroup/*/talon-bench /sys/fs/cgroup/talon-bench; do [ -d \"$c\" ] && find \"$c\" -depth -type d -exec rmdir {} \\; ; done")
            .stderr(Stdio::null())
            .status();
    }
}

/// fork+exec of `true`, its output collected.
pub fn fork_exec_true() -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let out = Command::new("true").stdin(Stdio::null()).output()?;
    let took = t0.elapsed();
    anyhow::ensure!(out.status.success(), "true failed");
    Ok(took)
}

/// The program both PTY figures run: a raw-mode echo, as a shell's line
/// editor is (the echo comes from the process, not the line discipline).
pub const PTY_ECHO: &str = "stty raw -echo; echo ready; exec cat";

/// A PTY on the host running [`PTY_ECHO`].
pub struct HostPty {
    master: std::fs::File,
    child: std::process::Child,
}

impl HostPty {
    pub fn open() -> anyhow::Result<HostPty> {
        let (mut m, mut s) = (0, 0);
        // SAFETY: openpty writes two fds into the given ints.
        let r = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        anyhow::ensure!(r == 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both fds are new and owned here.
        let (master, slave) = unsafe { (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        let child = Command::new("sh")
            .args(["-c", PTY_ECHO])
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave))
            .spawn()?;
        let mut p = HostPty { master, child };
        p.expect(b"ready")?;
        Ok(p)
    }

    fn expect(&mut self, want: &[u8]) -> anyhow::Result<()> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !seen.windows(want.len()).any(|w| w == want) {
            let n = self.master.read(&mut buf)?;
            anyhow::ensure!(n > 0, "the host PTY closed");
            seen.extend_from_slice(&buf[..n]);
        }
        Ok(())
    }

    /// One keystroke until its echo.
    pub fn echo_once(&mut self) -> anyhow::Result<Duration> {
        let t0 = Instant::now();
        self.master.write_all(b"k")?;
        self.expect(b"k")?;
        Ok(t0.elapsed())
    }
}

impl Drop for HostPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.master.as_raw_fd();
    }
}

/// Writes `data` as the agent does (temp file, fsync, rename, fsync of
/// the directory), then reads it back; (write, read) times.
pub fn raw_file(dir: &Path, data: &[u8]) -> anyhow::Result<(Duration, Duration)> {
    let target = dir.join("bench-raw.bin");
    let tmp = dir.join(".bench-raw.tmp");
    let t0 = Instant::now();
    {
        let mut f = std::fs::File::create(&tmp)?;
        for c in data.chunks(1 << 20) {
            f.write_all(c)?;
        }
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &target)?;
    std::fs::File::open(dir)?.sync_all()?;
    let w = t0.elapsed();
    let t1 = Instant::now();
    let mut back = Vec::with_capacity(data.len());
    std::fs::File::open(&target)?.read_to_end(&mut back)?;
    let r = t1.elapsed();
    anyhow::ensure!(back.len() == data.len(), "short read");
    std::fs::remove_file(&target)?;
    Ok((w, r))
}

/// Empties the page cache, so that memory figures count what is held.
pub fn drop_caches() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
}

/// Host memory in use, in bytes: total less free, buffers, page cache
/// and reclaimable slab, as `free` counts it, but with shared memory
/// (tmpfs, which sandboxes mount) counted as used. (MemAvailable is an
/// estimate that moves by tens of MiB on its own.)
pub fn memory_used() -> u64 {
    let m = Meminfo::read();
    m.get("MemTotal:")
        .saturating_sub(m.get("MemFree:"))
        .saturating_sub(m.get("Buffers:"))
        .saturating_sub(m.get("Cached:").saturating_sub(m.get("Shmem:")))
        .saturating_sub(m.get("SReclaimable:"))
}

/// /proc/meminfo, read once.
pub struct Meminfo(String);

impl Meminfo {
    pub fn read() -> Meminfo {
        Meminfo(std::fs::read_to_string("/proc/meminfo").unwrap_or_default())
    }

    /// A field (e.g. "MemTotal:") in bytes; 0 when absent.
    pub fn get(&self, name: &str) -> u64 {
        self.0
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    }
}

/// Debian's Chromium, as the sandbox's browser runs it.
pub const CHROMIUM: &str = "/usr/lib/chromium/chromium";

/// The baseline of the browser figure: Chromium started on the host with
/// the flags the agent gives it (talon-agent's `browser`), timed until
/// its DevTools answer `/json/version`, then killed. The profile is
/// reused between runs, as the sandbox's is.
pub fn chromium_until_cdp(profile: &Path) -> anyhow::Result<Duration> {
    let port = talon_core::listen::spare_port()?;
    let t0 = Instant::now();
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--log-level=3",
            "--remote-debugging-address=127.0.0.1",
            "--window-size=1280,720",
        ])
        .arg(format!("--remote-debugging-port={port}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting chromium")?;
    let answered = loop {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let req = format!("GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
            let mut buf = [0u8; 16];
            if s.write_all(req.as_bytes()).is_ok()
                && s.read(&mut buf)
                    .is_ok_and(|n| buf[..n].starts_with(b"HTTP/1.1 200"))
            {
                break Ok(t0.elapsed());
            }
        }
        if t0.elapsed() > Duration::from_secs(30) {
            break Err(anyhow::anyhow!(
                "chromium's DevTools did not answer in 30 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // SAFETY: kill(2) on the process group of our own child.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGTERM) };
    let _ = child.wait();
    answered
}

/// Whether the host's Python has ipykernel and jupyter_client (Debian's
/// python3-ipykernel brings both): the code figure needs them.
pub fn has_ipykernel() -> bool {
    Command::new("/usr/bin/python3")
        .args(["-c", "import ipykernel, jupyter_client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The baseline of the code figure: the same kernel (ipykernel, with the
/// agent's flags) started on the host and driven by `jupyter_client`,
/// the Jupyter project's own client: `1+1` executed and waited for (the
/// reply on shell and the kernel idle on IOPub), timed in the client's
/// process. It runs one execution per line it reads, so the bench can
/// interleave its runs with Talon's: both then see the same machine (a
/// browser still shutting down after the figure before, say).
pub struct JupyterBaseline {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl JupyterBaseline {
    const SCRIPT: &str = r#"
import sys, time
from jupyter_client import KernelManager
km = KernelManager(kernel_cmd=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                               "--IPKernelApp.parent_handle=0", "--InteractiveShell.colors=NoColor"])
km.start_kernel()
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=60)
print("ready", flush=True)
try:
    for _ in sys.stdin:
        t0 = time.perf_counter()
        reply = kc.execute_interactive("1+1", timeout=30, output_hook=lambda m: None)
        t = time.perf_counter() - t0
        assert reply["content"]["status"] == "ok", reply
        print(t * 1000.0, flush=True)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
"#;

    /// Starts the kernel and its client; answers once the kernel is ready.
    pub async fn start() -> anyhow::Result<JupyterBaseline> {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new("/usr/bin/python3")
            .args(["-c", Self::SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Read on failure; at exit jupyter_client's finalizers print
            // noise there ("'NoneType' object is not callable").
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("running jupyter_client")?;
        let stdin = child.stdin.take().context("its stdin")?;
        let stdout = tokio::io::BufReader::new(child.stdout.take().context("its stdout")?).lines();
        let mut b = JupyterBaseline {
            child,
            stdin,
            stdout,
        };
        let first = b.stdout.next_line().await?;
        anyhow::ensure!(
            first.as_deref() == Some("ready"),
            "the jupyter_client baseline did not start: {first:?}"
        );
        Ok(b)
    }

    /// One execution of `1+1`, as the client timed it.
    pub async fn run(&mut self) -> anyhow::Result<Duration> {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(b"run\n").await?;
        let line = self
            .stdout
            .next_line()
            .await?
            .context("the jupyter_client baseline ended")?;
        let ms: f64 = line.trim().parse().context("its timing")?;
        Ok(Duration::from_secs_f64(ms / 1000.0))
    }

    /// Ends the client, which shuts its kernel down.
    pub async fn stop(self) -> anyhow::Result<()> {
        drop(self.stdin);
        let out = self.child.wait_with_output().await?;
        anyhow::ensure!(
            out.status.success(),
            "the jupyter_client baseline failed: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    }
}
