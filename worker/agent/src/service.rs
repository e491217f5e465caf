//! The agent's gRPC service, over the unix socket the worker bind-mounts
//! into the sandbox. It speaks the public request and response messages
//! (see proto/talon/agent/v1); `sandbox_id` in them is ignored, since the
//! socket already names the sandbox.

use crate::files::Files;
use crate::follow::{Follow, event_stream, event_stream_with, follow, follow_with};
use crate::supervisor::{Proc, Supervisor};
use crate::users::acting_as;
use std::pin::Pin;
use std::sync::Arc;
pub(crate) use talon_core::time::ms_to_timestamp as ts;
use talon_proto::talon::agent::v1 as apb;
use talon_proto::talon::agent::v1::sandbox_agent_service_server::SandboxAgentService;
use talon_proto::v1 as pb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

pub struct Agent {
    pub sup: Arc<Supervisor>,
    pub files: Arc<Files>,
    pub runs: Arc<crate::runs::Runs>,
    pub browser: Arc<crate::browser::Browser>,
    pub code: Arc<crate::code::Contexts>,
    pub started: std::time::Instant,
}

type Out<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl SandboxAgentService for Agent {
    async fn ping(
        &self,
        _req: Request<apb::PingRequest>,
    ) -> Result<Response<apb::PingResponse>, Status> {
        Ok(Response::new(apb::PingResponse {
            version: env!("CARGO_PKG_VERSION").into(),
            processes: self.sup.count() as u32,
            uptime_seconds: self.started.elapsed().as_secs(),
            idle_millis: crate::activity::idle_millis(),
        }))
    }

    async fn configure(
        &self,
        req: Request<apb::ConfigureRequest>,
    ) -> Result<Response<apb::ConfigureResponse>, Status> {
        let r = req.into_inner();
        self.sup.set_base_env(r.env, r.unset)?;
        Ok(Response::new(apb::ConfigureResponse {}))
    }

    type StartProcessStream = Out<pb::StartProcessResponse>;

    async fn start_process(
        &self,
        req: Request<pb::StartProcessRequest>,
    ) -> Result<Response<Self::StartProcessStream>, Status> {
        let (p, follower) = self.sup.spawn_followed(req.get_ref())?;
        late_stream_for_tests().await;
        let s = event_stream_with(p, follower, 0, true)
            .map(|e| e.map(|event| pb::StartProcessResponse { event: Some(event) }));
        Ok(Response::new(Box::pin(s)))
    }

    type ConnectProcessStream = Out<pb::ConnectProcessResponse>;

    async fn connect_process(
        &self,
        req: Request<pb::ConnectProcessRequest>,
    ) -> Result<Response<Self::ConnectProcessStream>, Status> {
        let r = req.into_inner();
        let p = self.sup.get(&r.process)?;
        let s = event_stream(p, r.after_seq, true)
            .map(|e| e.map(|event| pb::ConnectProcessResponse { event: Some(event) }));
        Ok(Response::new(Box::pin(s)))
    }

    async fn list_processes(
        &self,
        req: Request<pb::ListProcessesRequest>,
    ) -> Result<Response<pb::ListProcessesResponse>, Status> {
        Ok(Response::new(pb::ListProcessesResponse {
            processes: self.sup.list(req.get_ref().include_exited),
        }))
    }

    async fn send_process_input(
        &self,
        req: Request<Streaming<pb::SendProcessInputRequest>>,
    ) -> Result<Response<pb::SendProcessInputResponse>, Status> {
        let mut s = req.into_inner();
        let mut target: Option<Arc<Proc>> = None;
        let mut written = 0u64;
        while let Some(msg) = s.message().await? {
            if target.is_none() {
                target = Some(self.sup.get(&msg.process)?);
            }
            let p = target.clone().expect("set above");
            let data = msg.data;
            let n = data.len() as u64;
            crate::threads::blocking(move || p.write_stdin(&data)).await??;
            written += n;
        }
        Ok(Response::new(pb::SendProcessInputResponse {
            bytes_written: written,
        }))
    }

    async fn send_process_signal(
        &self,
        req: Request<pb::SendProcessSignalRequest>,
    ) -> Result<Response<pb::SendProcessSignalResponse>, Status> {
        let r = req.into_inner();
        if !(1..=64).contains(&r.signal) {
            return Err(Status::invalid_argument("signal must be 1-64"));
        }
        self.sup.get(&r.process)?.signal(r.signal)?;
        Ok(Response::new(pb::SendProcessSignalResponse {}))
    }

    async fn close_process_stdin(
        &self,
        req: Request<pb::CloseProcessStdinRequest>,
    ) -> Result<Response<pb::CloseProcessStdinResponse>, Status> {
        self.sup.get(&req.get_ref().process)?.close_stdin()?;
        Ok(Response::new(pb::CloseProcessStdinResponse {}))
    }

    async fn resize_process_pty(
        &self,
        req: Request<pb::ResizeProcessPtyRequest>,
    ) -> Result<Response<pb::ResizeProcessPtyResponse>, Status> {
        let r = req.into_inner();
        let size = r
            .size
            .ok_or_else(|| Status::invalid_argument("size is required"))?;
        self.sup.get(&r.process)?.resize(&size)?;
        Ok(Response::new(pb::ResizeProcessPtyResponse {}))
    }

    async fn get_process_logs(
        &self,
        req: Request<pb::GetProcessLogsRequest>,
    ) -> Result<Response<pb::GetProcessLogsResponse>, Status> {
        let r = req.into_inner();
        let p = self.sup.get(&r.process)?;
        let limit = match r.page_size {
            n if n <= 0 => 500,
            n => (n as usize).min(5000),
        };
        let only = r.stream;
        let after = r.after_seq;
        let (records, first) = crate::threads::blocking(move || p.read_after(after, limit + 1))
            .await?
            .map_err(|e| Status::internal(format!("log read: {e}")))?;
        let has_more = records.len() > limit;
        let page = &records[..records.len().min(limit)];
        let next = page.last().map(|r| r.seq).unwrap_or(after);
        let entries = page
            .iter()
            .filter(|r| only == 0 || i32::from(r.stream) == only)
            .map(|r| pb::LogEntry {
                stream: i32::from(r.stream),
                data: r.data.clone(),
                seq: r.seq,
                time: Some(ts(r.time_ms)),
            })
            .collect();
        Ok(Response::new(pb::GetProcessLogsResponse {
            entries,
            next_after_seq: next,
            has_more,
            first_kept_seq: first,
        }))
    }

    type FollowProcessLogsStream = Out<pb::FollowProcessLogsResponse>;

    async fn follow_process_logs(
        &self,
        req: Request<pb::FollowProcessLogsRequest>,
    ) -> Result<Response<Self::FollowProcessLogsStream>, Status> {
        let r = req.into_inner();
        let p = self.sup.get(&r.process)?;
        let s = follow(p, r.after_seq).map(|f| {
            f.map(|f| match f {
                Follow::Chunk(r) => pb::FollowProcessLogsResponse {
                    entry: Some(pb::LogEntry {
                        stream: i32::from(r.stream),
                        data: r.data,
                        seq: r.seq,
                        time: Some(ts(r.time_ms)),
                    }),
                    exited: None,
                },
                Follow::Exit(e) => pb::FollowProcessLogsResponse {
                    entry: None,
                    exited: Some(e),
                },
            })
        });
        Ok(Response::new(Box::pin(s)))
    }

    type AttachStream = Out<pb::AttachResponse>;

    async fn attach(
        &self,
        req: Request<Streaming<pb::AttachRequest>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        use pb::attach_request::Message as In;
        use pb::attach_response::Message as OutMsg;
        let mut input = req.into_inner();
        let first = input
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("the first message must be open"))?;
        let Some(In::Open(open)) = first.message else {
            return Err(Status::invalid_argument("the first message must be open"));
        };
        let size = open.size.unwrap_or(pb::PtySize { rows: 24, cols: 80 });
        // A new command is followed from its first byte (its prompt), by a
        // follower made before it could print one; an attach to a running
        // PTY shows only what comes from now on.
        let (p, follower) = match open.target {
            Some(pb::pty_open::Target::Process(sel)) => {
                let p = self.sup.get(&Some(sel))?;
                if !p.pty {
                    return Err(Status::failed_precondition("process has no PTY"));
                }
                p.resize(&size)?;
                (p, None)
            }
            Some(pb::pty_open::Target::Command(c)) => {
                let command = if c.command.is_empty() {
                    vec!["/bin/sh".to_string(), "-l".to_string()]
                } else {
                    c.command
                };
                let (p, f) = self.sup.spawn_followed(&pb::StartProcessRequest {
                    command,
                    env: c.env,
                    cwd: c.cwd,
                    user: c.user,
                    tag: c.tag,
                    pty: Some(size),
                    stdin: true,
                    ..Default::default()
                })?;
                (p, Some(f))
            }
            None => {
                return Err(Status::invalid_argument(
                    "open needs a command or a process",
                ));
            }
        };
        // Input and resizes, until the client closes its side.
        let writer = p.clone();
        tokio::spawn(async move {
            while let Ok(Some(msg)) = input.message().await {
                match msg.message {
                    Some(In::Input(data)) => {
                        let w = writer.clone();
                        if crate::threads::blocking(move || w.write_stdin(&data))
                            .await
                            .map(|r| r.is_err())
                            .unwrap_or(true)
                        {
                            break;
                        }
                    }
                    Some(In::Resize(size)) => {
                        let _ = writer.resize(&size);
                    }
                    _ => {}
                }
            }
        });
        late_stream_for_tests().await;
        let (after, cursor) = match follower {
            Some(f) => (0, f),
            None => {
                let after = p.progress().last_seq;
                (after, p.follower(after))
            }
        };
        let pid = p.pid;
        let first = tokio_stream::iter(vec![Ok(pb::AttachResponse {
            message: Some(OutMsg::Pid(pid)),
        })]);
        let rest = follow_with(p, cursor, after).map(|f| {
            f.map(|f| match f {
                Follow::Chunk(r) => pb::AttachResponse {
                    message: Some(OutMsg::Output(r.data)),
                },
                Follow::Exit(e) => pb::AttachResponse {
                    message: Some(OutMsg::Exited(e)),
                },
            })
        });
        Ok(Response::new(Box::pin(first.chain(rest))))
    }

    async fn stat(
        &self,
        req: Request<pb::StatRequest>,
    ) -> Result<Response<pb::StatResponse>, Status> {
        let r = req.get_ref();
        let info = acting_as(&r.user, || self.files.stat(&r.path))?;
        Ok(Response::new(pb::StatResponse { info: Some(info) }))
    }

    async fn list_dir(
        &self,
        req: Request<pb::ListDirRequest>,
    ) -> Result<Response<pb::ListDirResponse>, Status> {
        let r = req.into_inner();
        let files = self.files.clone();
        let entries = crate::threads::blocking(move || {
            acting_as(&r.user, || files.list_dir(&r.path, r.depth))
        })
        .await??;
        Ok(Response::new(pb::ListDirResponse { entries }))
    }

    type ReadFileStream = Out<pb::ReadFileResponse>;

    async fn read_file(
        &self,
        req: Request<pb::ReadFileRequest>,
    ) -> Result<Response<Self::ReadFileStream>, Status> {
        let r = req.into_inner();
        let reader = acting_as(&r.user, || {
            self.files.open_read(&r.path, r.offset, r.length)
        })?;
        let (tx, rx) = mpsc::channel(8);
        crate::threads::spawn_blocking(move || {
            reader.pump(|chunk| tx.blocking_send(chunk).is_ok())
        })?;
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn write_file(
        &self,
        req: Request<Streaming<pb::WriteFileRequest>>,
    ) -> Result<Response<pb::WriteFileResponse>, Status> {
        use pb::write_file_request::Message as W;
        let mut s = req.into_inner();
        let first = s
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("the first message must be the header"))?;
        let Some(W::Header(h)) = first.message else {
            return Err(Status::invalid_argument(
                "the first message must be the header",
            ));
        };
        let mut w = acting_as(&h.user, || self.files.begin_write(&h))?;
        // Only an explicit finish commits: a stream that just ends may be
        // a cancelled one (proxies turn a reset into a clean end), and a
        // short file must never replace the real one.
        let mut received: i64 = 0;
        let finish = loop {
            match s.message().await? {
                Some(msg) => match msg.message {
                    Some(W::Data(d)) => {
                        received += d.len() as i64;
                        w.write(&d)?;
                    }
                    Some(W::Finish(f)) => break f,
                    Some(W::Header(_)) => {
                        return Err(Status::invalid_argument(
                            "only the first message is a header",
                        ));
                    }
                    None => {}
                },
                None => {
                    return Err(Status::aborted(
                        "the upload ended without its finish message; nothing was written",
                    ));
                }
            }
        };
        if s.message().await?.is_some() {
            return Err(Status::invalid_argument("nothing may follow the finish"));
        }
        if finish.size != received {
            return Err(Status::invalid_argument(format!(
                "the finish says {} bytes, {received} arrived; nothing was written",
                finish.size
            )));
        }
        let info = crate::threads::blocking(move || w.commit()).await??;
        Ok(Response::new(pb::WriteFileResponse { info: Some(info) }))
    }

    async fn make_dir(
        &self,
        req: Request<pb::MakeDirRequest>,
    ) -> Result<Response<pb::MakeDirResponse>, Status> {
        let r = req.into_inner();
        let info = acting_as(&r.user, || self.files.make_dir(&r.path, r.parents, r.mode))?;
        Ok(Response::new(pb::MakeDirResponse { info: Some(info) }))
    }

    async fn move_path(
        &self,
        req: Request<pb::MovePathRequest>,
    ) -> Result<Response<pb::MovePathResponse>, Status> {
        let r = req.into_inner();
        let info = acting_as(&r.user, || {
            self.files
                .move_path(&r.source_path, &r.destination_path, r.overwrite)
        })?;
        Ok(Response::new(pb::MovePathResponse { info: Some(info) }))
    }

    async fn remove_path(
        &self,
        req: Request<pb::RemovePathRequest>,
    ) -> Result<Response<pb::RemovePathResponse>, Status> {
        let r = req.into_inner();
        let files = self.files.clone();
        crate::threads::blocking(move || acting_as(&r.user, || files.remove(&r.path, r.recursive)))
            .await??;
        Ok(Response::new(pb::RemovePathResponse {}))
    }

    type WatchDirStream = Out<pb::WatchDirResponse>;

    async fn watch_dir(
        &self,
        req: Request<pb::WatchDirRequest>,
    ) -> Result<Response<Self::WatchDirStream>, Status> {
        let r = req.into_inner();
        let rx = acting_as(&r.user, || self.files.watch(&r.path, r.recursive))?;
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    type OpenPreviewStream = crate::tunnel::Out;

    async fn open_preview(
        &self,
        req: Request<Streaming<talon_proto::talon::gateway::v1::OpenPreviewRequest>>,
    ) -> Result<Response<Self::OpenPreviewStream>, Status> {
        crate::tunnel::open(req.into_inner())
            .await
            .map(Response::new)
    }

    async fn list_ports(
        &self,
        _req: Request<pb::ListPortsRequest>,
    ) -> Result<Response<pb::ListPortsResponse>, Status> {
        let ports = crate::threads::blocking(crate::ports::listening).await?;
        Ok(Response::new(pb::ListPortsResponse { ports }))
    }

    type RunAgentStream = Out<pb::RunAgentResponse>;

    async fn run_agent(
        &self,
        req: Request<apb::RunAgentRequest>,
    ) -> Result<Response<Self::RunAgentStream>, Status> {
        let r = req.into_inner();
        let run = r
            .run
            .ok_or_else(|| Status::invalid_argument("run is required"))?;
        let run = self.runs.start(run, r.secret_env.into_iter().collect())?;
        Ok(Response::new(Box::pin(run.follow(0))))
    }

    type ConnectAgentRunStream = Out<pb::ConnectAgentRunResponse>;

    async fn connect_agent_run(
        &self,
        req: Request<pb::ConnectAgentRunRequest>,
    ) -> Result<Response<Self::ConnectAgentRunStream>, Status> {
        let r = req.into_inner();
        let run = self.runs.get(&r.run_id)?;
        let s = run
            .follow(r.after_seq)
            .map(|e| e.map(|event| pb::ConnectAgentRunResponse { event: Some(event) }));
        Ok(Response::new(Box::pin(s)))
    }

    async fn cancel_agent_run(
        &self,
        req: Request<pb::CancelAgentRunRequest>,
    ) -> Result<Response<pb::CancelAgentRunResponse>, Status> {
        let run = self.runs.get(&req.get_ref().run_id)?;
        // Its process group; one that has ended already is cancelled.
        if run.process.running() {
            run.process.signal(libc::SIGKILL)?;
        }
        Ok(Response::new(pb::CancelAgentRunResponse {}))
    }

    async fn start_browser(
        &self,
        req: Request<pb::StartBrowserRequest>,
    ) -> Result<Response<pb::StartBrowserResponse>, Status> {
        let browser = self.browser.start(req.get_ref()).await?;
        Ok(Response::new(pb::StartBrowserResponse {
            browser: Some(browser),
        }))
    }

    async fn get_browser(
        &self,
        _req: Request<pb::GetBrowserRequest>,
    ) -> Result<Response<pb::GetBrowserResponse>, Status> {
        Ok(Response::new(pb::GetBrowserResponse {
            browser: Some(self.browser.get().await),
        }))
    }

    async fn stop_browser(
        &self,
        _req: Request<pb::StopBrowserRequest>,
    ) -> Result<Response<pb::StopBrowserResponse>, Status> {
        Ok(Response::new(pb::StopBrowserResponse {
            browser: Some(self.browser.stop().await),
        }))
    }

    async fn wait_browser(
        &self,
        _req: Request<pb::GetBrowserRequest>,
    ) -> Result<Response<pb::GetBrowserResponse>, Status> {
        Ok(Response::new(pb::GetBrowserResponse {
            browser: Some(self.browser.wait().await),
        }))
    }

    async fn create_code_context(
        &self,
        req: Request<pb::CreateCodeContextRequest>,
    ) -> Result<Response<pb::CreateCodeContextResponse>, Status> {
        let ctx = self.code.create(req.get_ref()).await?;
        Ok(Response::new(pb::CreateCodeContextResponse {
            context: Some(ctx.describe()),
        }))
    }

    async fn list_code_contexts(
        &self,
        _req: Request<pb::ListCodeContextsRequest>,
    ) -> Result<Response<pb::ListCodeContextsResponse>, Status> {
        Ok(Response::new(pb::ListCodeContextsResponse {
            contexts: self.code.list(),
        }))
    }

    async fn delete_code_context(
        &self,
        req: Request<pb::DeleteCodeContextRequest>,
    ) -> Result<Response<pb::DeleteCodeContextResponse>, Status> {
        self.code.delete(&req.get_ref().context_id).await?;
        Ok(Response::new(pb::DeleteCodeContextResponse {}))
    }

    async fn restart_code_context(
        &self,
        req: Request<pb::RestartCodeContextRequest>,
    ) -> Result<Response<pb::RestartCodeContextResponse>, Status> {
        let ctx = self.code.get(&req.get_ref().context_id)?;
        self.code.restart(&ctx).await?;
        Ok(Response::new(pb::RestartCodeContextResponse {
            context: Some(ctx.describe()),
        }))
    }

    async fn interrupt_code_context(
        &self,
        req: Request<pb::InterruptCodeContextRequest>,
    ) -> Result<Response<pb::InterruptCodeContextResponse>, Status> {
        let ctx = self.code.get(&req.get_ref().context_id)?;
        self.code.interrupt(&ctx)?;
        Ok(Response::new(pb::InterruptCodeContextResponse {}))
    }

    type RunCodeStream = Out<pb::RunCodeResponse>;

    async fn run_code(
        &self,
        req: Request<pb::RunCodeRequest>,
    ) -> Result<Response<Self::RunCodeStream>, Status> {
        let r = req.into_inner();
        if r.code.len() > crate::code::MAX_CODE {
            return Err(Status::invalid_argument(format!(
                "code is at most {} bytes",
                crate::code::MAX_CODE
            )));
        }
        let timeout = match r.timeout {
            Some(t) if t.seconds < 0 || t.nanos < 0 => {
                return Err(Status::invalid_argument("timeout must not be negative"));
            }
            Some(t) if t.seconds > 0 || t.nanos > 0 => {
                std::time::Duration::new(t.seconds as u64, t.nanos as u32)
            }
            _ => crate::code::DEFAULT_TIMEOUT,
        };
        let env = crate::code::env::RunEnv::new(&r.env)?;
        let ctx = self.code.for_run(&r).await?;
        let (tx, rx) = mpsc::channel(64);
        let code = self.code.clone();
        tokio::spawn(async move { code.run(ctx, r.code, env, timeout, tx).await });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn take_screenshot(
        &self,
        req: Request<pb::TakeScreenshotRequest>,
    ) -> Result<Response<pb::TakeScreenshotResponse>, Status> {
        Ok(Response::new(
            self.browser.screenshot(req.get_ref().full_page).await?,
        ))
    }
}

/// Tests stand in for a stream whose task runs late (a loaded host) with
/// `TALON_AGENT_TEST_STREAM_DELAY_MS`; release builds never read it.
async fn late_stream_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("TALON_AGENT_TEST_STREAM_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}
