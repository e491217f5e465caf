//! The fence keeper: a small process beside the worker that kills the
//! worker's sandboxes when the worker's lease lapses and the worker cannot
//! do it itself — stopped (SIGSTOP), hung, or dead. Sandboxes outlive their
//! worker by design (an upgrade restarts it under them), but only while
//! the lease holds: past it the control plane may start them elsewhere.
//!
//! The worker writes one line to the keeper's stdin every 100 ms: until
//! when its lease holds (CLOCK_MONOTONIC, ns; 0 for none) and the
//! sandboxes its fence scope covers (only those another worker could
//! start: see `lease`), each as `ID` or `ID:CONTAINER` when its container
//! (and so its cgroup) has another name (a sandbox claimed from the
//! prewarm pool keeps the pooled container's). When that time passes with
//! no later one, the keeper kills every process in those containers'
//! cgroups (thawing frozen ones, so the kill lands) and unmounts their
//! disks (a shared disk is the next worker's to mount). Sandboxes the
//! scope does not cover are never named, so never touched. When the worker is gone (EOF) it keeps the
//! last word: it kills at that deadline, then exits. A restarted worker
//! starts its own keeper and, once its own lease is granted, ends the old
//! one (`fence-keeper.pid`), so a quick restart loses nothing.

use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The `talon` subcommand that runs the keeper.
pub const SUBCOMMAND: &str = "fence-keeper";

/// CLOCK_MONOTONIC now, in ns (the same clock in every process).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A sandbox the keeper stops: its directory's name, and its container's
/// (whose cgroup it kills).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub sandbox: String,
    pub container: String,
}

/// One word from the worker.
#[derive(Debug, PartialEq, Eq)]
pub struct Word {
    pub until_ns: u64,
    pub sandboxes: Vec<Target>,
}

impl Word {
    pub fn line(&self) -> String {
        let mut s = self.until_ns.to_string();
        for t in &self.sandboxes {
            s.push(' ');
            s.push_str(&t.sandbox);
            if t.container != t.sandbox {
                s.push(':');
                s.push_str(&t.container);
            }
        }
        s.push('\n');
        s
    }

    /// Fail closed: a line that does not read is refused, and the keeper
    /// keeps what it had.
    pub fn parse(line: &str) -> Option<Word> {
        let mut parts = line.split_whitespace();
        let until_ns = parts.next()?.parse().ok()?;
        let sandboxes = parts
            .map(|p| {
                let (sandbox, container) = p.split_once(':').unwrap_or((p, p));
                let valid = talon_core::ids::valid_sandbox_id;
                (valid(sandbox) && valid(container)).then(|| Target {
                    sandbox: sandbox.to_string(),
                    container: container.to_string(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Word {
            until_ns,
            sandboxes,
        })
    }
}

/// Runs the keeper on stdin until the worker is gone and its last
/// deadline has been acted on; `args`: the worker's cgroup parent and
/// its sandboxes' directory.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let (Some(parent), Some(dir)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: talon {SUBCOMMAND} CGROUP_PARENT SANDBOXES_DIR");
    };
    let dir = PathBuf::from(dir);
    anyhow::ensure!(
        crate::host::valid_cgroup_parent(parent),
        "invalid cgroup parent {parent:?}"
    );
    let (tx, rx) = mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) => {
                    if tx.send(Some(l)).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    let mut word = Word {
        until_ns: 0,
        sandboxes: vec![],
    };
    let mut worker_gone = false;
    loop {
        let now = monotonic_ns();
        if word.until_ns != 0 && now >= word.until_ns {
            if !word.sandboxes.is_empty() {
                eprintln!(
                    "fence-keeper: the worker's lease lapsed; killing {} sandboxes",
                    word.sandboxes.len()
                );
                for t in &word.sandboxes {
                    kill_sandbox(parent, &t.container);
                    // Its disk too: on shared storage the next worker
                    // mounts it, and this kernel must not write it then.
                    if let Err(e) = crate::rootfs::unmount_under(&dir.join(&t.sandbox)) {
                        eprintln!("fence-keeper: {e:#}");
                    }
                }
                // SAFETY: sync has no memory effects.
                unsafe { libc::sync() };
            }
            word.sandboxes.clear();
            word.until_ns = 0;
        }
        if worker_gone {
            if word.until_ns == 0 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_nanos(word.until_ns.saturating_sub(now)));
            continue;
        }
        let wait = if word.until_ns == 0 {
            Duration::from_secs(3600)
        } else {
            Duration::from_nanos(word.until_ns - now)
        };
        match rx.recv_timeout(wait) {
            Ok(Some(line)) => match Word::parse(&line) {
                Some(w) => word = w,
                None => eprintln!("fence-keeper: ignoring a line that does not read: {line:?}"),
            },
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => worker_gone = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Every cgroup directory of sandbox `id`, in every hierarchy mounted
/// (cgroup v1 controllers and v2 alike): `<mount>/<parent>/<id>`.
pub(crate) fn cgroup_dirs(parent: &str, id: &str) -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return vec![];
    };
    info.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let fstype = post.split_whitespace().next()?;
            (fstype == "cgroup" || fstype == "cgroup2")
                .then(|| pre.split_whitespace().nth(4).map(PathBuf::from))?
        })
        .map(|m| m.join(parent).join(id))
        .filter(|d| d.is_dir())
        .collect()
}

fn procs_under(dir: &Path, out: &mut Vec<i32>) {
    if let Ok(s) = std::fs::read_to_string(dir.join("cgroup.procs")) {
        out.extend(s.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                procs_under(&e.path(), out);
            }
        }
    }
}

/// Kills every process of a sandbox: SIGKILL to each, then thawed (a
/// frozen task dies only once thawed), a few rounds for what forked in
/// between.
pub fn kill_sandbox(parent: &str, id: &str) {
    for _ in 0..5 {
        let dirs = cgroup_dirs(parent, id);
        let mut pids = Vec::new();
        for d in &dirs {
            procs_under(d, &mut pids);
        }
        if pids.is_empty() {
            return;
        }
        for pid in &pids {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        for d in &dirs {
            let _ = std::fs::write(d.join("freezer.state"), "THAWED");
            let _ = std::fs::write(d.join("cgroup.freeze"), "0");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The worker's side: the keeper process and its stdin.
pub struct Keeper {
    child: Child,
    stdin: ChildStdin,
    /// The keeper of the worker's previous run, ended once this one's
    /// lease is granted.
    previous: Option<i32>,
}

impl Keeper {
    /// Starts a keeper (`exe fence-keeper`) and records its pid.
    pub fn spawn(
        exe: &Path,
        data_dir: &Path,
        cgroup_parent: &str,
        sandboxes: &Path,
    ) -> anyhow::Result<Keeper> {
        let pid_file = data_dir.join("fence-keeper.pid");
        let previous = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .filter(|pid| is_keeper(*pid));
        let mut child = Command::new(exe)
            .arg(SUBCOMMAND)
            .arg(cgroup_parent)
            .arg(sandboxes)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            // Its own process group: a signal to the worker's group (a
            // terminal's ^Z, say) does not stop it too.
            .process_group(0)
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| anyhow::anyhow!("the fence keeper has no stdin"))?;
        // Root's alone, like everything under the data directory.
        let tmp = pid_file.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(child.id().to_string().as_bytes())?;
        std::fs::rename(&tmp, &pid_file)?;
        Ok(Keeper {
            child,
            stdin,
            previous,
        })
    }

    /// Tells the keeper the lease and the sandboxes; once a lease is
    /// granted, ends the previous run's keeper.
    pub fn tell(&mut self, word: &Word) -> std::io::Result<()> {
        self.stdin.write_all(word.line().as_bytes())?;
        if word.until_ns > monotonic_ns()
            && let Some(pid) = self.previous.take()
            && is_keeper(pid)
        {
            // SAFETY: kill has no memory effects; the pid was checked to
            // be a keeper just now.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        Ok(())
    }
}

impl Drop for Keeper {
    /// A worker shutting down leaves its keeper to act on the last word
    /// (its stdin closes); nothing is killed here.
    fn drop(&mut self) {
        let _ = self.child.try_wait();
    }
}

/// Whether `pid` runs a fence keeper (a recycled pid is left alone).
fn is_keeper(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == SUBCOMMAND.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_back_and_bad_ones_are_refused() {
        let t = |s: &str, c: &str| Target {
            sandbox: s.into(),
            container: c.into(),
        };
        let w = Word {
            until_ns: 42,
            sandboxes: vec![t("sbx_a", "sbx_a"), t("sbx_b", "sbx_pool_0c1d")],
        };
        assert_eq!(w.line(), "42 sbx_a sbx_b:sbx_pool_0c1d\n");
        assert_eq!(Word::parse(&w.line()), Some(w));
        assert_eq!(Word::parse("5 sbx_a:../x"), None);
        assert_eq!(Word::parse("5 sbx_a:"), None);
        assert_eq!(
            Word::parse("7"),
            Some(Word {
                until_ns: 7,
                sandboxes: vec![]
            })
        );
        assert_eq!(Word::parse("x sbx_a"), None);
        assert_eq!(Word::parse("5 ../../etc"), None);
        assert_eq!(Word::parse(""), None);
    }
}
