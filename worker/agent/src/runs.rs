//! Agent runs (AgentService): one process given the prompt on stdin, its
//! output as lines, the workspace's changes from inotify (debounced per
//! path), and its end, kept as one log of numbered events in the agent, so
//! a client that drops reattaches from the last event it saw and misses
//! nothing. The output comes from the process's own log (its sequence
//! numbers are the cursor of the follower). Secret values given for the
//! run are replaced by `***` in every event.

use crate::files::Files;
use crate::supervisor::{Proc, Supervisor};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;
use tokio::sync::watch;
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

/// A run's timeout when the request sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Changes to one path within this window are one event.
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// Runs kept (running or completed) for ConnectAgentRun; the oldest
/// completed ones go first.
pub const KEEP_RUNS: usize = 64;
/// Events one run keeps; past it, output lines are counted, not kept
/// (the completion says how many were dropped).
pub const MAX_EVENTS: usize = 100_000;
/// A line longer than this is cut into pieces of this size.
pub const MAX_LINE: usize = 16 << 10;

pub struct Run {
    pub id: String,
    pub process: Arc<Proc>,
    events: Mutex<Vec<pb::RunAgentResponse>>,
    /// The number of events, and whether the run has completed.
    progress: watch::Sender<(u64, bool)>,
}

impl Run {
    fn push(&self, event: pb::run_agent_response::Event) -> bool {
        let mut ev = self.events.lock().expect("run events");
        if ev.len() >= MAX_EVENTS && !matches!(event, pb::run_agent_response::Event::Completed(_)) {
            return false;
        }
        let seq = ev.len() as u64 + 1;
        ev.push(pb::RunAgentResponse {
            event_time: Some(crate::watch::now()),
            event: Some(event),
            seq,
        });
        drop(ev);
        self.progress.send_modify(|p| p.0 = seq);
        true
    }

    fn complete(&self, c: pb::AgentCompleted) {
        self.push(pb::run_agent_response::Event::Completed(c));
        self.progress.send_modify(|p| p.1 = true);
    }

    /// The events after `after`, then live ones, until the run completes.
    pub fn follow(
        self: &Arc<Self>,
        after: u64,
    ) -> impl Stream<Item = Result<pb::RunAgentResponse, Status>> + Send + 'static {
        let rx = self.progress.subscribe();
        futures::stream::unfold(
            (self.clone(), rx, after),
            |(run, mut rx, cursor)| async move {
                loop {
                    let (count, done) = *rx.borrow_and_update();
                    if count > cursor {
                        let next = run.events.lock().expect("run events")[cursor as usize].clone();
                        return Some((Ok(next), (run, rx, cursor + 1)));
                    }
                    if done || rx.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
    }
}

pub struct Runs {
    sup: Arc<Supervisor>,
    files: Arc<Files>,
    workspace: String,
    map: Mutex<Vec<Arc<Run>>>,
}

impl Runs {
    pub fn new(sup: Arc<Supervisor>, files: Arc<Files>, workspace: String) -> Arc<Runs> {
        Arc::new(Runs {
            sup,
            files,
            workspace,
            map: Mutex::new(Vec::new()),
        })
    }

    pub fn get(&self, id: &str) -> Result<Arc<Run>, Status> {
        self.map
            .lock()
            .expect("runs")
            .iter()
            .find(|r| r.id == id)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("agent run {id} not found")))
    }

    /// Starts a run; its events are then followed with `Run::follow`.
    pub fn start(
        self: &Arc<Self>,
        req: pb::RunAgentRequest,
        secret_env: HashMap<String, String>,
    ) -> Result<Arc<Run>, Status> {
        if req.command.is_empty() {
            return Err(Status::invalid_argument("command is required"));
        }
        let timeout = match req.timeout {
            Some(t) if t.seconds < 0 || t.nanos < 0 => {
                return Err(Status::invalid_argument("timeout must not be negative"));
            }
            Some(t) if t.seconds > 0 || t.nanos > 0 => t,
            _ => prost_types::Duration {
                seconds: DEFAULT_TIMEOUT.as_secs() as i64,
                nanos: 0,
            },
        };
        // Watch before the process starts, so its first writes are seen.
        let changes = self.files.watch(&self.workspace, true)?;
        let id = format!("run_{:016x}", crate::files::rand_suffix());
        let mut env = req.env.clone();
        env.extend(secret_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let redact = secret_env
            .values()
            .filter(|v| !v.is_empty())
            .map(|v| v.as_bytes().to_vec())
            .collect();
        // Followed from its first byte: `drive` starts on a task of its
        // own, maybe late, and what rotated away before would be lost.
        let (proc, follower) = self.sup.spawn_redacted_followed(
            &pb::StartProcessRequest {
                sandbox_id: String::new(),
                command: req.command.clone(),
                env,
                cwd: req.cwd.clone(),
                user: req.user.clone(),
                tag: format!("agent-{id}"),
                pty: None,
                stdin: true,
                timeout: Some(timeout),
            },
            true,
            redact,
        )?;
        let (progress, _) = watch::channel((0, false));
        let run = Arc::new(Run {
            id: id.clone(),
            process: proc.clone(),
            events: Mutex::new(Vec::new()),
            progress,
        });
        run.push(pb::run_agent_response::Event::Started(pb::AgentStarted {
            pid: proc.pid,
            run_id: id,
        }));
        // The prompt, then end of input.
        let prompt = req.prompt.into_bytes();
        let stdin = proc.clone();
        crate::threads::spawn("agent-prompt", move || {
            let _ = stdin.write_stdin(&prompt);
            let _ = stdin.close_stdin();
        })?;
        self.keep(run.clone());
        let secrets: Vec<String> = secret_env.into_values().filter(|v| !v.is_empty()).collect();
        tokio::spawn(drive(run.clone(), follower, changes, secrets));
        Ok(run)
    }

    fn keep(&self, run: Arc<Run>) {
        let mut m = self.map.lock().expect("runs");
        while m.len() >= KEEP_RUNS {
            match m.iter().position(|r| r.progress.borrow().1) {
                Some(i) => {
                    m.remove(i);
                }
                None => break,
            }
        }
        m.push(run);
    }
}

/// Replaces every secret value in `text`.
fn redact(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "***"))
}

/// Turns chunks of one stream into whole lines.
#[derive(Default)]
struct Lines {
    partial: Vec<u8>,
}

impl Lines {
    fn feed(&mut self, data: &[u8]) -> Vec<String> {
        self.partial.extend_from_slice(data);
        let mut out = Vec::new();
        while let Some(i) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=i).collect();
            out.push(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
        }
        while self.partial.len() >= MAX_LINE {
            let piece: Vec<u8> = self.partial.drain(..MAX_LINE).collect();
            out.push(String::from_utf8_lossy(&piece).into_owned());
        }
        out
    }

    fn flush(&mut self) -> Option<String> {
        (!self.partial.is_empty())
            .then(|| String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned())
    }
}

type Pending = HashMap<String, (pb::FileEventType, Instant)>;

/// Notes a change: within the window a path keeps its first kind (a file
/// created then written was created), unless it is then removed or
/// renamed away.
fn note(pending: &mut Pending, c: pb::WatchDirResponse) {
    use pb::FileEventType as K;
    let kind = K::try_from(c.r#type).unwrap_or(K::Unspecified);
    let e = pending.entry(c.path).or_insert((kind, Instant::now()));
    if matches!(kind, K::Remove | K::Rename) {
        e.0 = kind;
    }
    e.1 = Instant::now();
}

/// Follows the process and the workspace until the process has exited,
/// its output is drained and the last changes are in.
async fn drive(
    run: Arc<Run>,
    follower: crate::supervisor::Follower,
    mut changes: tokio::sync::mpsc::Receiver<Result<pb::WatchDirResponse, Status>>,
    secrets: Vec<String>,
) {
    use pb::run_agent_response::Event;
    let started = Instant::now();
    let mut output = Box::pin(crate::follow::follow_with(run.process.clone(), follower, 0));
    let mut lines: HashMap<u8, Lines> = HashMap::new();
    // Path -> (kind, when last seen).
    let mut pending = Pending::new();
    let mut dropped = 0u64;
    let mut tick = tokio::time::interval(DEBOUNCE / 2);
    let emit_line = |run: &Run, stream: u8, text: String, dropped: &mut u64| {
        let ok = run.push(Event::Output(pb::AgentOutput {
            stream: i32::from(stream),
            text: redact(&text, &secrets),
        }));
        if !ok {
            *dropped += 1;
        }
    };
    let flush_changes = |run: &Run, pending: &mut Pending, all: bool| {
        let ready: Vec<String> = pending
            .iter()
            .filter(|(_, (_, at))| all || at.elapsed() >= DEBOUNCE)
            .map(|(p, _)| p.clone())
            .collect();
        let mut ready = ready;
        ready.sort();
        for path in ready {
            if let Some((kind, _)) = pending.remove(&path) {
                run.push(Event::FileChange(pb::AgentFileChange {
                    path,
                    kind: kind as i32,
                }));
            }
        }
    };
    let exit = loop {
        tokio::select! {
            item = output.next() => match item {
                Some(Ok(crate::follow::Follow::Chunk(r))) => {
                    for l in lines.entry(r.stream).or_default().feed(&r.data) {
                        emit_line(&run, r.stream, l, &mut dropped);
                    }
                }
                Some(Ok(crate::follow::Follow::Exit(e))) => break Some(e),
                Some(Err(_)) | None => break None,
            },
            Some(Ok(c)) = changes.recv() => note(&mut pending, c),
            _ = tick.tick() => flush_changes(&run, &mut pending, false),
        }
    };
    for (stream, l) in lines.iter_mut() {
        if let Some(text) = l.flush() {
            emit_line(&run, *stream, text, &mut dropped);
        }
    }
    // The last writes' events arrive just after the exit.
    let until = tokio::time::Instant::now() + DEBOUNCE;
    while let Ok(Some(Ok(c))) = tokio::time::timeout_at(until, changes.recv()).await {
        note(&mut pending, c);
    }
    drop(changes);
    flush_changes(&run, &mut pending, true);
    if dropped > 0 {
        eprintln!(
            "talon-agent: agent run {}: {dropped} output lines over the {MAX_EVENTS}-event limit were not kept",
            run.id
        );
    }
    let (exit_code, timed_out) = match exit {
        Some(e) if e.signal != 0 => (128 + e.signal, e.timed_out),
        Some(e) => (e.exit_code, e.timed_out),
        None => (-1, false),
    };
    let d = started.elapsed();
    run.complete(pb::AgentCompleted {
        exit_code,
        timed_out,
        duration: Some(prost_types::Duration {
            seconds: d.as_secs() as i64,
            nanos: d.subsec_nanos() as i32,
        }),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_whole_and_long_ones_cut() {
        let mut l = Lines::default();
        assert_eq!(l.feed(b"a\nbc"), ["a"]);
        assert_eq!(l.feed(b"d\n\n"), ["bcd", ""]);
        assert_eq!(l.flush(), None);
        let long = vec![b'x'; MAX_LINE + 3];
        assert_eq!(l.feed(&long).len(), 1);
        assert_eq!(l.flush().unwrap(), "xxx");
    }

    #[test]
    fn secrets_are_redacted() {
        let s = vec!["hunter2".to_string(), "tok_abc".to_string()];
        assert_eq!(
            redact("pw=hunter2 token=tok_abc hunter2", &s),
            "pw=*** token=*** ***"
        );
    }
}
