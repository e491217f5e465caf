//! JavaScript and Bash contexts: a long-lived `node` (running `driver.js`)
//! or interactive `bash` that reads one request per line on its stdin.
//! The code of a run goes into a file of the context's private directory;
//! the request names it and a fresh nonce, and the run ends with a marker
//! `\x1e<nonce> <payload>\x1e` on stdout and `\x1e<nonce>\x1e` on stderr,
//! so both pipes are drained up to the run's end. Output is read from the
//! process's log (the supervisor's records), in order, markers cut out.
//!
//! Bash is interactive (`-i`, no editing, no history expansion) because an
//! interactive shell is what aborts the current command line cleanly on
//! SIGINT and reads the next one with its state intact; the agent then
//! sends the interrupted run's marker itself. Code that ignores an
//! interrupt has `ESCALATE_AFTER` to end before its kernel is killed.

use super::env::RunEnv;
use super::{START_TIMEOUT, Sink};
use crate::supervisor::{Proc, Supervisor};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio::sync::Notify;
use tonic::Status;

/// How long an interrupted run has to end before its kernel is killed.
pub const ESCALATE_AFTER: Duration = Duration::from_secs(3);
/// How often an interrupted JavaScript run is sent SIGINT again.
const RESEND_EVERY: Duration = Duration::from_millis(200);
const MARK: u8 = 0x1e;
const NONCE_LEN: usize = 16;
/// A marker this long without its end is not one.
const MAX_MARKER: usize = 8 << 20;
const JS_DRIVER: &str = include_str!("driver.js");

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lang {
    Js,
    Bash,
}

pub struct LineKernel {
    pub proc: Arc<Proc>,
    lang: Lang,
    dir: String,
}

/// How a run ended.
pub struct Ended {
    pub timed_out: bool,
    /// The kernel died (or was killed): why.
    pub died: Option<String>,
}

fn nonce() -> String {
    format!("{:016x}", crate::files::rand_suffix())
}

/// Writes a file only the kernel's user may read (its key, its code).
pub(super) fn write_private(path: &str, body: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut f, body)
}

impl LineKernel {
    /// Starts the kernel and waits until it answers a first (empty) run.
    pub async fn start(
        sup: &Supervisor,
        lang: Lang,
        id: &str,
        cwd: &str,
        env: &HashMap<String, String>,
        dir: String,
    ) -> Result<LineKernel, Status> {
        let command: Vec<String> = match lang {
            Lang::Js => {
                let driver = format!("{dir}/driver.js");
                write_private(&driver, JS_DRIVER.as_bytes())
                    .map_err(|e| Status::internal(format!("the driver: {e}")))?;
                vec!["node".into(), driver]
            }
            Lang::Bash => ["bash", "--noprofile", "--norc", "--noediting", "-i"]
                .map(String::from)
                .to_vec(),
        };
        let proc = sup
            .spawn_as(
                &pb::StartProcessRequest {
                    command,
                    env: env.clone(),
                    cwd: cwd.to_string(),
                    tag: format!("code-{id}-{:08x}", crate::files::rand_suffix() as u32),
                    stdin: true,
                    ..Default::default()
                },
                true,
            )
            .map_err(|e| {
                let what = if lang == Lang::Js { "node" } else { "bash" };
                Status::failed_precondition(format!(
                    "the {what} kernel did not start: {}; is {what} installed in the image?",
                    e.message()
                ))
            })?;
        let mut k = LineKernel { proc, lang, dir };
        if lang == Lang::Bash {
            // No prompts, no history, `!` is literal; the marker function.
            let init = "PS1= PS2= PS4= PROMPT_COMMAND=; unset MAILCHECK HISTFILE; set +H +o history; \
                        __talon_done() { printf '\\036%s %s\\036' \"$1\" \"$2\"; \
                        printf '\\036%s\\036' \"$1\" >&2; }\n";
            k.proc.write_stdin(init.as_bytes())?;
        }
        let (never, no) = (Notify::new(), AtomicBool::new(false));
        let sink = Sink::discard();
        let ready = tokio::time::timeout(
            START_TIMEOUT,
            k.run(
                "",
                &RunEnv::none(),
                START_TIMEOUT,
                &never,
                &no,
                &sink,
                false,
            ),
        )
        .await;
        match ready {
            Ok(Ok(Ended { died: None, .. })) => Ok(k),
            Ok(Ok(Ended {
                died: Some(why), ..
            })) => Err(Status::failed_precondition(format!(
                "the kernel exited as it started: {why}"
            ))),
            Ok(Err(e)) => {
                let _ = k.proc.signal(libc::SIGKILL);
                Err(e)
            }
            Err(_) => {
                let _ = k.proc.signal(libc::SIGKILL);
                Err(Status::deadline_exceeded(
                    "the kernel did not answer within 60 s",
                ))
            }
        }
    }

    /// Runs `code`, sending its output and its result or error to `sink`.
    #[allow(clippy::too_many_arguments)]
    pub async fn run(
        &mut self,
        code: &str,
        env: &RunEnv,
        timeout: Duration,
        interrupts: &Notify,
        asked: &AtomicBool,
        sink: &Sink,
        report: bool,
    ) -> Result<Ended, Status> {
        let nonce = nonce();
        let ext = if self.lang == Lang::Js { "js" } else { "sh" };
        let cell = format!("{}/cell.{ext}", self.dir);
        write_private(&cell, code.as_bytes())
            .map_err(|e| Status::internal(format!("the cell file: {e}")))?;
        // Output from before this run (a background job's) is not its own.
        // A follower: the kernel waits for a slow caller rather than lose
        // the run's output to rotation.
        let mut output = self.proc.follower(self.proc.progress().last_seq);
        let request = match self.lang {
            Lang::Js => format!(
                "{}\n",
                serde_json::json!({"nonce": nonce, "file": cell, "env": env.js()})
            ),
            Lang::Bash if env.is_empty() => {
                format!("source {cell} </dev/null; __talon_done {nonce} $?\n")
            }
            // The run's variables are set from a file of their own, and
            // put back on a line of its own after the marker, which runs
            // even when an interrupt aborted the run's line.
            Lang::Bash => {
                let set = format!("{}/env-{nonce}.sh", self.dir);
                write_private(&set, env.bash_set().as_bytes())
                    .map_err(|e| Status::internal(format!("the run's environment: {e}")))?;
                format!(
                    "source {set}; rm -f {set}; source {cell} </dev/null; __talon_done {nonce} $?\n{}\n",
                    env.bash_restore()
                )
            }
        };
        self.proc.write_stdin(request.as_bytes())?;

        let mut demux = Demux::new(nonce.clone());
        let mut progress = self.proc.subscribe();
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let escalate = tokio::time::sleep(Duration::from_secs(86400 * 365));
        tokio::pin!(escalate);
        // Node drops a SIGINT that comes before the run is inside its
        // script (the driver idles it): under load the interrupt may be
        // early, so it is sent again until the run ends or escalates.
        let resend = tokio::time::sleep(Duration::from_secs(86400 * 365));
        tokio::pin!(resend);
        let (mut timed_out, mut interrupted, mut gone) = (false, false, false);
        loop {
            // Everything logged so far.
            loop {
                let recs = output
                    .read(256, 1 << 20)
                    .map_err(|e| Status::internal(format!("kernel output: {e}")))?;
                if recs.is_empty() {
                    break;
                }
                for r in recs {
                    for text in demux.feed(r.stream, &r.data) {
                        if report && !sink.output(r.stream, text).await {
                            // The caller went: stop the run, keep the context.
                            gone = true;
                        }
                    }
                }
            }
            if let Some(payload) = demux.finished() {
                if report {
                    self.report(&payload, sink).await;
                }
                return Ok(Ended {
                    timed_out,
                    died: None,
                });
            }
            let p = self.proc.progress();
            if p.done {
                let why = match p.exit {
                    Some(e) if e.signal != 0 => format!("killed by signal {}", e.signal),
                    Some(e) => format!("exited with status {}", e.exit_code),
                    None => "exited".into(),
                };
                return Ok(Ended {
                    timed_out,
                    died: Some(why),
                });
            }
            // An interrupt that came before this loop waited (its SIGINT
            // went) is seen by its flag.
            let interrupt = if (gone || asked.load(Ordering::Relaxed)) && !interrupted {
                if gone {
                    let _ = self.proc.signal(libc::SIGINT);
                }
                true
            } else {
                tokio::select! {
                r = progress.changed() => {
                    if r.is_err() {
                        return Ok(Ended { timed_out, died: Some("its log closed".into()) });
                    }
                    false
                }
                _ = interrupts.notified() => true,
                _ = &mut deadline, if !timed_out => {
                    timed_out = true;
                    let _ = self.proc.signal(libc::SIGINT);
                    true
                }
                _ = &mut escalate, if interrupted => {
                    let _ = self.proc.signal(libc::SIGKILL);
                    interrupted = false;
                    false
                }
                _ = &mut resend, if interrupted && self.lang == Lang::Js => {
                    let _ = self.proc.signal(libc::SIGINT);
                    resend.as_mut().reset(tokio::time::Instant::now() + RESEND_EVERY);
                    false
                }
                }
            };
            if interrupt && !interrupted {
                interrupted = true;
                escalate
                    .as_mut()
                    .reset(tokio::time::Instant::now() + ESCALATE_AFTER);
                resend
                    .as_mut()
                    .reset(tokio::time::Instant::now() + RESEND_EVERY);
                if self.lang == Lang::Bash {
                    // The shell dropped the run's line, marker and all.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = self
                        .proc
                        .write_stdin(format!("__talon_done {nonce} 130\n").as_bytes());
                }
            }
        }
    }

    async fn report(&self, payload: &str, sink: &Sink) {
        use pb::run_code_response::Event;
        match self.lang {
            Lang::Bash => {
                let rc: i32 = payload.trim().parse().unwrap_or(-1);
                if rc != 0 {
                    sink.send(Event::CodeError(pb::CodeError {
                        name: "ExitStatus".into(),
                        value: rc.to_string(),
                        traceback: vec![],
                    }))
                    .await;
                }
            }
            Lang::Js => {
                let v: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
                if v["result"].is_object() {
                    let data = serde_json::json!({ "data": v["result"] });
                    sink.send(Event::Result(super::result(&data, true))).await;
                }
                if let Some(e) = v["error"].as_object() {
                    let s = |k: &str| {
                        e.get(k)
                            .and_then(|x| x.as_str())
                            .unwrap_or_default()
                            .to_string()
                    };
                    sink.send(Event::CodeError(pb::CodeError {
                        name: s("name"),
                        value: s("value"),
                        traceback: e
                            .get("traceback")
                            .and_then(|t| t.as_array())
                            .map(|a| {
                                a.iter()
                                    .filter_map(|t| t.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    }))
                    .await;
                }
            }
        }
    }
}

/// Cuts a run's markers out of its stdout and stderr, and markers of
/// earlier runs (an interrupted bash run's second marker) as well.
struct Demux {
    nonce: String,
    bufs: [Vec<u8>; 2],
    payload: Option<String>,
    err_done: bool,
}

impl Demux {
    fn new(nonce: String) -> Demux {
        Demux {
            nonce,
            bufs: [Vec::new(), Vec::new()],
            payload: None,
            err_done: false,
        }
    }

    fn finished(&self) -> Option<String> {
        if self.err_done {
            self.payload.clone()
        } else {
            None
        }
    }

    /// Text ready to pass on, from `stream` (1 stdout, 2 stderr).
    fn feed(&mut self, stream: u8, data: &[u8]) -> Vec<String> {
        let i = if stream == 2 { 1 } else { 0 };
        self.bufs[i].extend_from_slice(data);
        let buf = std::mem::take(&mut self.bufs[i]);
        let mut text = Vec::new();
        let mut pos = 0;
        let mut keep_from = buf.len();
        while pos < buf.len() {
            let Some(at) = buf[pos..].iter().position(|&b| b == MARK).map(|o| pos + o) else {
                text.extend_from_slice(&buf[pos..]);
                break;
            };
            text.extend_from_slice(&buf[pos..at]);
            let rest = &buf[at + 1..];
            let hex = rest.iter().take(NONCE_LEN).all(|b| b.is_ascii_hexdigit());
            if !hex {
                // Not a marker: the byte is the program's.
                text.push(MARK);
                pos = at + 1;
                continue;
            }
            let end = rest.iter().position(|&b| b == MARK);
            match end {
                None if rest.len() < MAX_MARKER => {
                    // Perhaps a marker, not all here yet.
                    keep_from = at;
                    break;
                }
                None => {
                    text.push(MARK);
                    pos = at + 1;
                }
                Some(e) if e < NONCE_LEN => {
                    text.push(MARK);
                    pos = at + 1;
                }
                Some(e) => {
                    let body = &rest[..e];
                    if body[..NONCE_LEN] == *self.nonce.as_bytes() {
                        if i == 1 {
                            self.err_done = true;
                        } else if self.payload.is_none() {
                            let p = String::from_utf8_lossy(&body[NONCE_LEN..]);
                            self.payload = Some(p.trim_start().to_string());
                        }
                    }
                    pos = at + 1 + e + 1;
                }
            }
        }
        if keep_from < buf.len() {
            self.bufs[i] = buf[keep_from..].to_vec();
        }
        // Hold back a character cut in two by the pipe.
        let valid = match std::str::from_utf8(&text) {
            Ok(_) => text.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => text.len(),
        };
        if valid < text.len() {
            let mut carry = text.split_off(valid);
            carry.append(&mut self.bufs[i]);
            self.bufs[i] = carry;
        }
        if text.is_empty() {
            Vec::new()
        } else {
            vec![String::from_utf8_lossy(&text).into_owned()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_cut_out_even_when_split() {
        let n = "0123456789abcdef";
        let mut d = Demux::new(n.into());
        let mut out = d.feed(1, b"hello \x1e012345");
        out.extend(d.feed(1, b"6789abcdef {\"x\":1}\x1e tail"));
        assert_eq!(out.concat(), "hello  tail");
        assert_eq!(d.finished(), None);
        assert!(d.feed(2, b"\x1e0123456789abcdef\x1e").is_empty());
        assert_eq!(d.finished().as_deref(), Some("{\"x\":1}"));
    }

    #[test]
    fn stray_and_stale_markers() {
        let mut d = Demux::new("0123456789abcdef".into());
        // A lone separator is the program's; another run's marker is not.
        let out = d.feed(1, b"a\x1eb \x1effffffffffffffff 130\x1ec");
        assert_eq!(out.concat(), "a\x1eb c");
        // A character split across records comes out whole.
        let mut s = d.feed(2, &"é".as_bytes()[..1]);
        s.extend(d.feed(2, &"é".as_bytes()[1..]));
        assert_eq!(s.concat(), "é");
    }
}
