//! Commands in a sandbox: run to completion, or start and follow,
//! reattach by tag, send input and signals.

use super::*;
use std::collections::HashMap;
use std::time::Duration;
use talon_proto::v1 as pb;

/// An argv that runs `cmd` under `sh -c`.
pub fn shell(cmd: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), cmd.into()]
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub envs: HashMap<String, String>,
    pub cwd: Option<String>,
    pub user: Option<String>,
    pub timeout: Option<Duration>,
    pub tag: Option<String>,
    /// Written to stdin, which is then closed.
    pub stdin: Option<Vec<u8>>,
    /// Keep a stdin pipe open for the caller to feed (`send_stdin`).
    pub open_stdin: bool,
    /// Run under a PTY of (cols, rows).
    pub pty: Option<(u32, u32)>,
}

/// A finished process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandResult {
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    pub stderr_bytes: Vec<u8>,
    pub exit_code: i32,
    pub signal: i32,
    pub timed_out: bool,
    pub pid: u32,
}

/// A process by pid or by tag.
#[derive(Clone, Debug)]
pub enum Target {
    Pid(u32),
    Tag(String),
}

impl Target {
    fn selector(&self) -> Option<pb::ProcessSelector> {
        Some(pb::ProcessSelector {
            selector: Some(match self {
                Target::Pid(p) => pb::process_selector::Selector::Pid(*p),
                Target::Tag(t) => pb::process_selector::Selector::Tag(t.clone()),
            }),
        })
    }
}

/// One event of a process.
#[derive(Clone, Debug)]
pub enum Output {
    Started(u32),
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    Exited(pb::ProcessExited),
}

/// A process's event stream; `collect` waits for its end.
pub struct CommandHandle {
    pub pid: u32,
    events: tokio::sync::mpsc::Receiver<Result<pb::ProcessEvent, tonic::Status>>,
    first: Option<Output>,
}

/// Both process streams carry a `ProcessEvent`.
trait HasEvent {
    fn event(self) -> Option<pb::ProcessEvent>;
}
impl HasEvent for pb::StartProcessResponse {
    fn event(self) -> Option<pb::ProcessEvent> {
        self.event
    }
}
impl HasEvent for pb::ConnectProcessResponse {
    fn event(self) -> Option<pb::ProcessEvent> {
        self.event
    }
}

fn output(e: pb::ProcessEvent) -> Option<Output> {
    use pb::process_event::Event as E;
    Some(match e.event? {
        E::Started(s) => Output::Started(s.pid),
        E::Output(o) if o.stream == pb::OutputStream::Stderr as i32 => Output::Stderr(o.data),
        E::Output(o) => Output::Stdout(o.data),
        E::Exited(x) => Output::Exited(x),
    })
}

impl CommandHandle {
    async fn new<T: HasEvent + Send + 'static>(
        mut s: tonic::Streaming<T>,
        pid: u32,
    ) -> Result<CommandHandle> {
        // Both streams are read into one channel of ProcessEvents, so the
        // handle reads alike whichever call made it.
        let first = s.message().await?.and_then(|m| m.event()).and_then(output);
        let pid = match &first {
            Some(Output::Started(p)) => *p,
            _ => pid,
        };
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let item = match s.message().await {
                    Ok(Some(m)) => match m.event() {
                        Some(e) => Ok(e),
                        None => continue,
                    },
                    Ok(None) => break,
                    Err(e) => Err(e),
                };
                let failed = item.is_err();
                if tx.send(item).await.is_err() || failed {
                    break;
                }
            }
        });
        Ok(CommandHandle {
            pid,
            events: rx,
            first: first.filter(|o| !matches!(o, Output::Started(_))),
        })
    }

    /// The next event, or None at the end.
    pub async fn next(&mut self) -> Result<Option<Output>> {
        if let Some(f) = self.first.take() {
            return Ok(Some(f));
        }
        loop {
            match self.events.recv().await.transpose()? {
                Some(e) => {
                    if let Some(o) = output(e) {
                        return Ok(Some(o));
                    }
                }
                None => return Ok(None),
            }
        }
    }

    /// Reads to the end and gathers the output.
    pub async fn collect(mut self) -> Result<CommandResult> {
        let mut r = CommandResult {
            pid: self.pid,
            exit_code: -1,
            ..Default::default()
        };
        while let Some(o) = self.next().await? {
            match o {
                Output::Started(p) => r.pid = p,
                Output::Stdout(d) => r.stdout_bytes.extend(d),
                Output::Stderr(d) => r.stderr_bytes.extend(d),
                Output::Exited(x) => {
                    r.exit_code = x.exit_code;
                    r.signal = x.signal;
                    r.timed_out = x.timed_out;
                }
            }
        }
        r.stdout = String::from_utf8_lossy(&r.stdout_bytes).into_owned();
        r.stderr = String::from_utf8_lossy(&r.stderr_bytes).into_owned();
        Ok(r)
    }
}

pub struct Commands<'a> {
    pub(crate) s: &'a Sandbox,
}

impl Commands<'_> {
    /// Starts a process and gives its event stream.
    pub async fn start(&self, argv: &[String], o: RunOptions) -> Result<CommandHandle> {
        let req = pb::StartProcessRequest {
            sandbox_id: self.s.id().into(),
            command: argv.to_vec(),
            env: o.envs,
            cwd: o.cwd.unwrap_or_default(),
            user: o.user.unwrap_or_default(),
            tag: o.tag.unwrap_or_default(),
            pty: o.pty.map(|(cols, rows)| pb::PtySize { rows, cols }),
            stdin: o.stdin.is_some() || o.open_stdin || o.pty.is_some(),
            timeout: o.timeout.map(duration),
        };
        let s = self
            .s
            .client
            .processes()
            .start_process(req)
            .await?
            .into_inner();
        let h = CommandHandle::new(s, 0).await?;
        if let Some(data) = o.stdin {
            let t = Target::Pid(h.pid);
            if !data.is_empty() {
                self.send_stdin(&t, data).await?;
            }
            self.close_stdin(&t).await?;
        }
        Ok(h)
    }

    /// Runs a process to its end.
    pub async fn run(&self, argv: &[String], o: RunOptions) -> Result<CommandResult> {
        self.start(argv, o).await?.collect().await
    }

    /// Reattaches to a process, replaying output after `after_seq`.
    pub async fn connect(&self, t: &Target, after_seq: u64) -> Result<CommandHandle> {
        let s = self
            .s
            .client
            .processes()
            .connect_process(pb::ConnectProcessRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
                after_seq,
            })
            .await?
            .into_inner();
        let pid = match t {
            Target::Pid(p) => *p,
            Target::Tag(_) => 0,
        };
        CommandHandle::new(s, pid).await
    }

    pub async fn signal(&self, t: &Target, signal: i32) -> Result<()> {
        self.s
            .client
            .processes()
            .send_process_signal(pb::SendProcessSignalRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
                signal,
            })
            .await?;
        Ok(())
    }

    pub async fn send_stdin(&self, t: &Target, data: Vec<u8>) -> Result<()> {
        let msg = pb::SendProcessInputRequest {
            sandbox_id: self.s.id().into(),
            process: t.selector(),
            data,
        };
        self.s
            .client
            .processes()
            .send_process_input(tokio_stream::iter(vec![msg]))
            .await?;
        Ok(())
    }

    pub async fn close_stdin(&self, t: &Target) -> Result<()> {
        self.s
            .client
            .processes()
            .close_process_stdin(pb::CloseProcessStdinRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
            })
            .await?;
        Ok(())
    }

    pub async fn resize(&self, t: &Target, cols: u32, rows: u32) -> Result<()> {
        self.s
            .client
            .processes()
            .resize_process_pty(pb::ResizeProcessPtyRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
                size: Some(pb::PtySize { rows, cols }),
            })
            .await?;
        Ok(())
    }

    /// A page of a process's kept output after `after_seq`.
    pub async fn logs(&self, t: &Target, after_seq: u64) -> Result<pb::GetProcessLogsResponse> {
        Ok(self
            .s
            .client
            .processes()
            .get_process_logs(pb::GetProcessLogsRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
                after_seq,
                ..Default::default()
            })
            .await?
            .into_inner())
    }

    /// Follows a process's kept output (a `logs -f`).
    pub async fn follow_logs(
        &self,
        t: &Target,
    ) -> Result<tonic::Streaming<pb::FollowProcessLogsResponse>> {
        Ok(self
            .s
            .client
            .processes()
            .follow_process_logs(pb::FollowProcessLogsRequest {
                sandbox_id: self.s.id().into(),
                process: t.selector(),
                ..Default::default()
            })
            .await?
            .into_inner())
    }
}
