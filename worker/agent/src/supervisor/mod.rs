//! Process supervision. One reaper thread owns every `waitpid`: it reaps
//! the processes we started (recording their exit) and any orphan that
//! reparents to us, as tini does. The agent is a subreaper even when it is
//! not PID 1, so it behaves the same in tests.
//!
//! Output is read by one thread per process (both streams, through poll)
//! and appended to the process's `LogStore` before anyone is told about
//! it, so readers that follow the log from disk never miss a chunk. That
//! thread is started before the process: the agent's threads count
//! against the sandbox's pids limit (see `threads`), and a process whose
//! output nobody reads must never be left behind. It is also where
//! back-pressure acts: while a live follower is too far behind, the
//! append waits and the pipes are not read, so the process blocks.

use crate::logstore::{LogStore, LogWriter, Record};
use crate::spawn;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
pub use talon_core::time::now_ms;
use talon_proto::v1 as pb;
use tokio::sync::watch;
use tonic::Status;

/// How long output may still arrive after the process exits (from
/// grandchildren that hold its pipes) before its stream ends, once
/// nothing is left unread.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// The longest a stream stays open after the exit while output is still
/// waiting to be read: an output thread starved of cpu (a throttled
/// sandbox) gets this long to catch up before the stream ends anyway.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(3);
/// Exited processes whose logs are kept for ConnectProcess and GetLogs.
pub const KEEP_EXITED: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitInfo {
    pub exit_code: i32,
    pub signal: i32,
    pub timed_out: bool,
    pub end_ms: i64,
}

impl ExitInfo {
    pub fn to_pb(self) -> pb::ProcessExited {
        pb::ProcessExited {
            exit_code: self.exit_code,
            signal: self.signal,
            timed_out: self.timed_out,
            end_time: Some(talon_core::time::ms_to_timestamp(self.end_ms)),
        }
    }
}

/// What followers watch: the last sequence number written, the exit, and
/// whether the stream is over (exited and drained).
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub last_seq: u64,
    pub exit: Option<ExitInfo>,
    pub done: bool,
}

/// A live follower of a process's log (see `logstore`).
pub type Follower = crate::logstore::Cursor<Arc<LogStore>>;

pub struct Proc {
    pub pid: u32,
    pub tag: String,
    pub command: Vec<String>,
    pub cwd: String,
    pub pty: bool,
    pub start_ms: i64,
    log: Arc<LogStore>,
    stdin: Mutex<Option<File>>,
    pty_master: Option<OwnedFd>,
    progress: watch::Sender<Progress>,
    timed_out: AtomicBool,
    open_streams: AtomicU32,
    /// Copies of the output fds of the streams still open, by stream,
    /// polled after the exit to tell "nothing more will come" from "the
    /// output thread has not read it yet". The output thread drops a
    /// stream's copy when it reads that stream's end.
    outputs: Mutex<Vec<(u8, File)>>,
    /// Set by the output thread between a read and its append.
    holding: AtomicBool,
    /// Not found or listed by the process calls (see `spawn_as`).
    hidden: bool,
    /// Values cut out of its output before the log (see `redact`).
    redact: Vec<Vec<u8>>,
}

impl Proc {
    pub fn subscribe(&self) -> watch::Receiver<Progress> {
        self.progress.subscribe()
    }

    pub fn progress(&self) -> Progress {
        self.progress.borrow().clone()
    }

    /// Records after `after`, for a reader that does not follow (what
    /// rotates away meanwhile is skipped), and the first seq still kept.
    pub fn read_after(&self, after: u64, limit: usize) -> std::io::Result<(Vec<Record>, u64)> {
        self.log.read_after(after, limit)
    }

    /// A live follower of the output after `after`: nothing it has not
    /// read rotates away, and the process waits for it (see `logstore`)
    /// until it is dropped.
    pub fn follower(&self, after: u64) -> Follower {
        self.log.follow(after)
    }

    /// The last `lines` non-blank lines the process wrote (both streams),
    /// those `skip` matches left out: why a helper process ended.
    pub fn tail_lines(&self, lines: usize, skip: impl Fn(&str) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut after = 0;
        while let Ok((recs, _)) = self.read_after(after, 256) {
            let Some(last) = recs.last() else { break };
            after = last.seq;
            for r in recs {
                out.extend_from_slice(&r.data);
            }
            if out.len() > 1 << 20 {
                out.drain(..out.len() - (64 << 10));
            }
        }
        let text = String::from_utf8_lossy(&out);
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !skip(l))
            .collect();
        kept[kept.len().saturating_sub(lines)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    fn append(&self, log: &mut LogWriter, stream: u8, data: &[u8]) {
        let seq = match log.append(stream, data) {
            Ok(seq) => seq,
            Err(e) => {
                eprintln!("talon-agent: log write for pid {}: {e}", self.pid);
                return;
            }
        };
        self.progress.send_modify(|p| p.last_seq = seq);
    }

    fn stream_closed(&self, stream: u8) {
        self.outputs
            .lock()
            .expect("outputs lock")
            .retain(|(s, _)| *s != stream);
        // The count and `done` are settled under the watch's lock in
        // both orders: whichever of this and `exited` comes second sees
        // the other's effect and ends the stream.
        if self.open_streams.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.progress.send_modify(|p| {
                if p.exit.is_some() {
                    p.done = true;
                }
            });
        }
    }

    fn exited(self: &Arc<Self>, status: libc::c_int, rt: &tokio::runtime::Handle) {
        let (exit_code, signal) = if libc::WIFEXITED(status) {
            (libc::WEXITSTATUS(status), 0)
        } else if libc::WIFSIGNALED(status) {
            (-1, libc::WTERMSIG(status))
        } else {
            (-1, 0)
        };
        let info = ExitInfo {
            exit_code,
            signal,
            timed_out: self.timed_out.load(Ordering::SeqCst),
            end_ms: now_ms(),
        };
        // Tests stand in for a reaper that loses the cpu just before it
        // publishes the exit, while the output thread reads the ends.
        #[cfg(debug_assertions)]
        if let Some(ms) = std::env::var("TALON_AGENT_TEST_EXIT_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let mut drained = false;
        self.progress.send_modify(|p| {
            drained = self.open_streams.load(Ordering::SeqCst) == 0;
            p.exit = Some(info);
            p.done = drained;
        });
        *self.stdin.lock().expect("stdin lock") = None;
        if !drained {
            // A timer task, not a thread: this runs on the reaper, which
            // must not fail when the workload holds every pid.
            let me = self.clone();
            rt.spawn(async move {
                let mut limit = tokio::time::Instant::now() + DRAIN_LIMIT;
                loop {
                    tokio::time::sleep(DRAIN_AFTER_EXIT).await;
                    // Time spent waiting for a slow reader is not time
                    // the output thread had to catch up.
                    if me.log.held_back() {
                        limit = tokio::time::Instant::now() + DRAIN_LIMIT;
                    }
                    if me.open_streams.load(Ordering::SeqCst) == 0
                        || !me.unread()
                        || tokio::time::Instant::now() >= limit
                    {
                        break;
                    }
                }
                me.progress.send_modify(|p| p.done = true);
            });
        }
    }

    /// Whether output (or an end of stream) is waiting for the output
    /// thread, or it holds a chunk it has not appended yet.
    fn unread(&self) -> bool {
        if self.holding.load(Ordering::SeqCst) {
            return true;
        }
        let outputs = self.outputs.lock().expect("outputs lock");
        let mut fds: Vec<libc::pollfd> = outputs
            .iter()
            .map(|(_, f)| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: a non-blocking poll over a live array of fds.len() pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
        n > 0
            && fds
                .iter()
                .any(|f| f.revents & (libc::POLLIN | libc::POLLHUP) != 0)
    }

    pub fn running(&self) -> bool {
        self.progress.borrow().exit.is_none()
    }

    pub fn write_stdin(&self, data: &[u8]) -> Result<(), Status> {
        crate::activity::touch();
        let mut guard = self.stdin.lock().expect("stdin lock");
        let f = guard
            .as_mut()
            .ok_or_else(|| Status::failed_precondition("stdin is closed"))?;
        f.write_all(data)
            .map_err(|e| Status::failed_precondition(format!("stdin: {e}")))
    }

    pub fn close_stdin(&self) -> Result<(), Status> {
        if self.pty {
            // Closing a PTY's input is sending EOF (^D).
            return self.write_stdin(&[4]);
        }
        let mut guard = self.stdin.lock().expect("stdin lock");
        match guard.take() {
            Some(_) => Ok(()),
            None => Err(Status::failed_precondition("stdin is closed")),
        }
    }

    pub fn resize(&self, size: &pb::PtySize) -> Result<(), Status> {
        let fd = self
            .pty_master
            .as_ref()
            .ok_or_else(|| Status::failed_precondition("process has no PTY"))?;
        set_size(fd.as_raw_fd(), size)
    }

    /// Signals the process's whole group (it leads its own session).
    pub fn signal(&self, sig: i32) -> Result<(), Status> {
        if !self.running() {
            return Err(Status::failed_precondition("process has exited"));
        }
        // SAFETY: plain kill(2) on our child's process group.
        let r = unsafe { libc::kill(-(self.pid as i32), sig) };
        if r != 0 {
            return Err(Status::invalid_argument(format!(
                "kill: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(())
    }

    pub fn info(&self) -> pb::ProcessInfo {
        let p = self.progress();
        pb::ProcessInfo {
            pid: self.pid,
            tag: self.tag.clone(),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            pty: self.pty,
            running: p.exit.is_none(),
            exit_code: p.exit.map(|e| e.exit_code).unwrap_or(0),
            start_time: Some(prost_types::Timestamp {
                seconds: self.start_ms / 1000,
                nanos: 0,
            }),
        }
    }
}

pub struct Supervisor {
    procs: Mutex<HashMap<u32, Arc<Proc>>>,
    log_dir: PathBuf,
    max_log_bytes: u64,
    /// How far beyond its two files a live follower may lag (see `logstore`).
    max_spill_bytes: u64,
    workspace: PathBuf,
    wake: (Mutex<bool>, Condvar),
    /// Set by `Configure` (when a prewarmed sandbox is claimed, when its
    /// secrets change): variables every later process gets on top of the
    /// agent's own environment, and names it does not get.
    base_env: Mutex<BaseEnv>,
    /// For timers started from the reaper thread.
    rt: tokio::runtime::Handle,
}

use crate::users::lookup as lookup_user;

/// What `Configure` said of the environment of later processes.
#[derive(Default)]
struct BaseEnv {
    set: HashMap<String, String>,
    unset: std::collections::HashSet<String>,
}

impl Supervisor {
    pub fn new(
        log_dir: PathBuf,
        max_log_bytes: u64,
        max_spill_bytes: u64,
        workspace: PathBuf,
    ) -> Arc<Self> {
        // SAFETY: prctl with constant arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let sup = Arc::new(Supervisor {
            procs: Mutex::new(HashMap::new()),
            log_dir,
            max_log_bytes,
            max_spill_bytes,
            workspace,
            wake: (Mutex::new(false), Condvar::new()),
            base_env: Mutex::new(BaseEnv::default()),
            rt: tokio::runtime::Handle::current(),
        });
        let reaper = sup.clone();
        std::thread::Builder::new()
            .name("reaper".into())
            .spawn(move || reaper.reap())
            .expect("reaper thread");
        sup
    }

    fn reap(&self) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid on any child; we own all waiting in this process.
            let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
            if pid > 0 {
                // Taking the lock waits for a spawn in progress to register.
                let proc = self
                    .procs
                    .lock()
                    .expect("procs")
                    .get(&(pid as u32))
                    .cloned();
                if let Some(p) = proc {
                    p.exited(status, &self.rt);
                }
                continue;
            }
            let err = std::io::Error::last_os_error().raw_os_error();
            if err == Some(libc::EINTR) {
                continue;
            }
            // ECHILD: nothing to wait for until the next spawn.
            let (lock, cv) = &self.wake;
            let mut woken = lock.lock().expect("wake");
            if !*woken {
                woken = cv
                    .wait_timeout(woken, Duration::from_secs(1))
                    .expect("wake")
                    .0;
            }
            *woken = false;
        }
    }

    pub fn get(&self, sel: &Option<pb::ProcessSelector>) -> Result<Arc<Proc>, Status> {
        let procs = self.procs.lock().expect("procs");
        let found = match sel.as_ref().and_then(|s| s.selector.as_ref()) {
            Some(pb::process_selector::Selector::Pid(pid)) => {
                procs.get(pid).filter(|p| !p.hidden).cloned()
            }
            Some(pb::process_selector::Selector::Tag(tag)) => {
                // The running one with the tag, else the newest that ran.
                let mut with_tag: Vec<_> = procs
                    .values()
                    .filter(|p| &p.tag == tag && !p.hidden)
                    .cloned()
                    .collect();
                with_tag.sort_by_key(|p| (p.running(), p.start_ms));
                with_tag.pop()
            }
            None => {
                return Err(Status::invalid_argument(
                    "process: a pid or a tag is required",
                ));
            }
        };
        found.ok_or_else(|| Status::not_found("process not found"))
    }

    pub fn list(&self, include_exited: bool) -> Vec<pb::ProcessInfo> {
        let mut v: Vec<_> = self
            .procs
            .lock()
            .expect("procs")
            .values()
            .filter(|p| !p.hidden && (include_exited || p.running()))
            .map(|p| p.info())
            .collect();
        v.sort_by_key(|p| p.pid);
        v
    }

    pub fn count(&self) -> usize {
        self.procs.lock().expect("procs").len()
    }

    /// Drops the oldest exited processes and their logs beyond KEEP_EXITED.
    fn evict(&self, procs: &mut HashMap<u32, Arc<Proc>>) {
        let mut exited: Vec<_> = procs
            .values()
            .filter(|p| p.progress().done)
            .map(|p| (p.start_ms, p.pid))
            .collect();
        if exited.len() <= KEEP_EXITED {
            return;
        }
        exited.sort();
        for (_, pid) in exited.iter().take(exited.len() - KEEP_EXITED) {
            if let Some(p) = procs.remove(pid) {
                p.log.remove();
            }
        }
    }

    /// Adds to the environment of every process started from now on.
    pub fn set_base_env(
        &self,
        env: HashMap<String, String>,
        unset: Vec<String>,
    ) -> Result<(), Status> {
        if env
            .iter()
            .any(|(k, v)| k.is_empty() || k.contains(['\0', '=']) || v.contains('\0'))
        {
            return Err(Status::invalid_argument(
                "env names must be non-empty, without NUL or '='; values without NUL",
            ));
        }
        let mut base = self.base_env.lock().expect("env lock");
        for k in unset {
            base.set.remove(&k);
            base.unset.insert(k);
        }
        for (k, v) in env {
            base.unset.remove(&k);
            base.set.insert(k, v);
        }
        Ok(())
    }

    /// Starts a process; a hidden process (an agent run's, whose output may hold
    /// secrets until the run redacts it) is its owner's alone: the process
    /// calls neither find nor list it.
    pub fn spawn_as(
        &self,
        req: &pb::StartProcessRequest,
        hidden: bool,
    ) -> Result<Arc<Proc>, Status> {
        self.spawn_redacted(req, hidden, Vec::new())
    }

    /// `spawn_as`, `redact`'s values cut out of the output before it is
    /// written to the log (an agent run's secrets: the log is on the
    /// sandbox's disk, which the file API reads).
    pub fn spawn_redacted(
        &self,
        req: &pb::StartProcessRequest,
        hidden: bool,
        redact: Vec<Vec<u8>>,
    ) -> Result<Arc<Proc>, Status> {
        Ok(self.spawn_inner(req, hidden, redact, false)?.0)
    }

    /// Starts a process with a live follower of its output from the first byte,
    /// made before the process can write one: a stream that starts with
    /// the process (StartProcess, a PTY's new command) must not find its
    /// first segments rotated away because its task ran a moment late (a
    /// loaded host once lost 192 KiB of `seq 1 200000` so).
    pub fn spawn_followed(
        &self,
        req: &pb::StartProcessRequest,
    ) -> Result<(Arc<Proc>, Follower), Status> {
        self.spawn_redacted_followed(req, false, Vec::new())
    }

    /// `spawn_redacted` with a follower from the first byte (an agent run).
    pub fn spawn_redacted_followed(
        &self,
        req: &pb::StartProcessRequest,
        hidden: bool,
        redact: Vec<Vec<u8>>,
    ) -> Result<(Arc<Proc>, Follower), Status> {
        let (p, f) = self.spawn_inner(req, hidden, redact, true)?;
        Ok((p, f.expect("asked for a follower")))
    }

    fn spawn_inner(
        &self,
        req: &pb::StartProcessRequest,
        hidden: bool,
        redact: Vec<Vec<u8>>,
        followed: bool,
    ) -> Result<(Arc<Proc>, Option<Follower>), Status> {
        const MAX_TAG_BYTES: usize = 256;
        // Room for output on a full disk (see logstore), if it was used.
        crate::logstore::keep_reserve(&self.log_dir);
        let argv = &req.command;

        if argv.is_empty() || argv[0].is_empty() {
            return Err(Status::invalid_argument("command is required"));
        }
        if argv.iter().any(|a| a.contains('\0'))
            || req
                .env
                .iter()
                .any(|(k, v)| k.contains(['\0', '=']) || v.contains('\0'))
        {
            return Err(Status::invalid_argument(
                "command and env must not contain NUL (or '=' in names)",
            ));
        }
        if req.tag.len() > MAX_TAG_BYTES || req.tag.chars().any(char::is_control) {
            return Err(Status::invalid_argument(format!(
                "a tag is at most {MAX_TAG_BYTES} bytes, without control characters"
            )));
        }
        if let Some(t) = &req.timeout
            && (t.seconds < 0 || t.nanos < 0)
        {
            return Err(Status::invalid_argument("timeout must not be negative"));
        }
        let cwd = if req.cwd.is_empty() {
            self.workspace.to_string_lossy().into_owned()
        } else {
            req.cwd.clone()
        };
        if !std::path::Path::new(&cwd).is_dir() {
            return Err(Status::invalid_argument(format!(
                "cwd {cwd:?} is not a directory"
            )));
        }
        // The environment it gets: the agent's, then Configure's, then its own.
        let mut env: Vec<(OsString, OsString)> = {
            let base = self.base_env.lock().expect("env lock");
            std::env::vars_os()
                .filter(|(k, _)| k.to_str().is_none_or(|k| !base.unset.contains(k)))
                .chain(base.set.iter().map(|(k, v)| (k.into(), v.into())))
                .collect()
        };
        env.extend(req.env.iter().map(|(k, v)| (k.into(), v.into())));
        let env = dedup_env(env);
        // The output thread first: without it the process must not start.
        let (give, take) = std::sync::mpsc::sync_channel::<(Arc<Proc>, Vec<(u8, File)>)>(1);
        crate::threads::spawn("output", move || {
            if let Ok((p, readers)) = take.recv() {
                // Tests stand in for an output thread starved of cpu.
                #[cfg(debug_assertions)]
                if let Some(ms) = std::env::var("TALON_AGENT_TEST_OUTPUT_DELAY_MS")
                    .ok()
                    .and_then(|v| v.parse().ok())
                {
                    std::thread::sleep(Duration::from_millis(ms));
                }
                pump(p, readers);
            }
        })?;

        let mut procs = self.procs.lock().expect("procs");
        if !req.tag.is_empty() && procs.values().any(|p| p.tag == req.tag && p.running()) {
            return Err(Status::already_exists(format!(
                "a running process has tag {:?}",
                req.tag
            )));
        }
        // Under the lock: the reaper waits for the new pid to be registered.
        let started = if req.pty.is_none() && req.user.is_empty() {
            match spawn::spawn(argv, &env, &cwd, req.stdin) {
                // A script without `#!`: execvp (below) runs it with /bin/sh.
                Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => None,
                other => Some(other.map_err(|e| spawn_error(&argv[0], e))?),
            }
        } else {
            None
        };
        let (pid, stdin, readers, master) = match started {
            Some(s) => (s.pid, s.stdin, vec![(1, s.stdout), (2, s.stderr)], None),
            None => fork_exec(req, argv, &env, &cwd)?,
        };
        let log = LogStore::create(
            self.log_dir.join(format!("{pid}-{}", now_ms())),
            self.max_log_bytes,
            self.max_spill_bytes,
            format!("pid {pid}"),
        );
        let (progress, _) = watch::channel(Progress::default());
        let proc = Arc::new(Proc {
            pid,
            tag: req.tag.clone(),
            command: argv.clone(),
            cwd,
            pty: master.is_some(),
            start_ms: now_ms(),
            log,
            stdin: Mutex::new(stdin),
            pty_master: master,
            progress,
            timed_out: AtomicBool::new(false),
            open_streams: AtomicU32::new(readers.len() as u32),
            outputs: Mutex::new(
                readers
                    .iter()
                    .filter_map(|(s, f)| Some((*s, f.try_clone().ok()?)))
                    .collect(),
            ),
            holding: AtomicBool::new(false),
            hidden,
            redact,
        });
        procs.insert(pid, proc.clone());
        self.evict(&mut procs);
        drop(procs);
        {
            let (lock, cv) = &self.wake;
            *lock.lock().expect("wake") = true;
            cv.notify_all();
        }
        // The follower holds the log from before the output thread can
        // write to it.
        let follower = followed.then(|| proc.follower(0));
        let _ = give.send((proc.clone(), readers));
        if let Some(t) = req
            .timeout
            .as_ref()
            .filter(|t| t.seconds > 0 || t.nanos > 0)
        {
            let d = Duration::new(t.seconds.max(0) as u64, t.nanos.max(0) as u32);
            let p = proc.clone();
            tokio::spawn(async move {
                tokio::time::sleep(d).await;
                if p.running() {
                    p.timed_out.store(true, Ordering::SeqCst);
                    let _ = p.signal(libc::SIGKILL);
                }
            });
        }
        Ok((proc, follower))
    }
}

mod launch;
use launch::*;
