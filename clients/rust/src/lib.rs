//! The Rust SDK for Talon Sandbox, over the gRPC contract (its generated
//! layer is talon-proto's tonic code):
//!
//! ```no_run
//! # async fn demo() -> Result<(), talon_sdk::Error> {
//! let client = talon_sdk::Client::from_env().await?;   // TALON_GRPC_URL, TALON_API_KEY
//! let sbx = client.create(Default::default()).await?;  // waits until it runs
//! let r = sbx.commands().run(&talon_sdk::shell("echo hi"), Default::default()).await?;
//! assert_eq!((r.stdout.as_str(), r.exit_code), ("hi\n", 0));
//! sbx.kill().await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio_stream::StreamExt;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// A failed call: the gRPC status the server gave, or a transport error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {}", code_name(.0.code()), .0.message())]
    Status(#[from] tonic::Status),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// The gRPC code, `Unknown` for transport and configuration errors.
    pub fn code(&self) -> tonic::Code {
        match self {
            Error::Status(s) => s.code(),
            Error::Transport(_) => tonic::Code::Unavailable,
            Error::Config(_) => tonic::Code::InvalidArgument,
        }
    }

    /// The code as the contract names it, e.g. "NOT_FOUND".
    pub fn code_name(&self) -> &'static str {
        code_name(self.code())
    }

    /// What went wrong, without the code.
    pub fn message(&self) -> String {
        match self {
            Error::Status(s) => s.message().to_string(),
            e => e.to_string(),
        }
    }
}

pub fn code_name(c: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match c {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

pub use tonic::Code;

/// Adds the bearer credential to every call.
#[derive(Clone)]
pub struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut r: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        r.metadata_mut().insert("authorization", self.0.clone());
        Ok(r)
    }
}

type Svc = InterceptedService<Channel, Bearer>;

/// One connection to a Talon control plane.
#[derive(Clone)]
pub struct Client {
    channel: Channel,
    bearer: Bearer,
    url: String,
}

fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

impl Client {
    /// Connects to `url` (the gRPC endpoint, e.g. `http://127.0.0.1:7070`).
    pub async fn connect(url: &str, api_key: &str) -> Result<Client> {
        let channel = tonic::transport::Endpoint::from_shared(url.to_string())
            .map_err(|e| Error::Config(format!("bad url {url:?}: {e}")))?
            .tcp_nodelay(true)
            .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
            .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
            .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
            .connect()
            .await?;
        let bearer = Bearer(
            format!("Bearer {api_key}")
                .parse()
                .map_err(|_| Error::Config("the API key is not valid header text".into()))?,
        );
        Ok(Client {
            channel,
            bearer,
            url: url.to_string(),
        })
    }

    /// From TALON_GRPC_URL (default `http://127.0.0.1:7070`) and TALON_API_KEY.
    pub async fn from_env() -> Result<Client> {
        let url =
            std::env::var("TALON_GRPC_URL").unwrap_or_else(|_| "http://127.0.0.1:7070".into());
        let key = std::env::var("TALON_API_KEY")
            .map_err(|_| Error::Config("set TALON_API_KEY".into()))?;
        Client::connect(&url, &key).await
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn svc(&self) -> Svc {
        InterceptedService::new(self.channel.clone(), self.bearer.clone())
    }

    pub fn sandboxes(&self) -> pb::sandbox_service_client::SandboxServiceClient<Svc> {
        pb::sandbox_service_client::SandboxServiceClient::new(self.svc())
    }
    pub fn processes(&self) -> pb::process_service_client::ProcessServiceClient<Svc> {
        pb::process_service_client::ProcessServiceClient::new(self.svc())
            .max_decoding_message_size(64 << 20)
    }
    pub fn files(&self) -> pb::filesystem_service_client::FilesystemServiceClient<Svc> {
        pb::filesystem_service_client::FilesystemServiceClient::new(self.svc())
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20)
    }
    pub fn pty(&self) -> pb::pty_service_client::PtyServiceClient<Svc> {
        pb::pty_service_client::PtyServiceClient::new(self.svc())
    }
    pub fn preview(&self) -> pb::preview_service_client::PreviewServiceClient<Svc> {
        pb::preview_service_client::PreviewServiceClient::new(self.svc())
    }
    pub fn auth(&self) -> pb::auth_service_client::AuthServiceClient<Svc> {
        pb::auth_service_client::AuthServiceClient::new(self.svc())
    }

    /// Creates a sandbox and, unless `no_wait`, waits until it runs.
    pub async fn create(&self, o: CreateOptions) -> Result<Sandbox> {
        let req = pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox {
                image: o.image.unwrap_or_else(|| "host".into()),
                env: o.envs,
                labels: o.labels,
                secret_names: o.secrets,
                timeout: o.timeout.map(duration),
                resources: Some(pb::Resources {
                    cpu_millis: o.cpu_millis.unwrap_or(0),
                    memory_mib: o.memory_mib.unwrap_or(0),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            wait_until_running: !o.no_wait,
            wait_timeout: Some(duration(o.wait_timeout.unwrap_or(Duration::from_secs(60)))),
        };
        let s = self
            .sandboxes()
            .create_sandbox(req)
            .await?
            .into_inner()
            .sandbox
            .unwrap_or_default();
        Ok(Sandbox {
            client: self.clone(),
            info: s,
        })
    }

    /// Attaches to an existing sandbox.
    pub async fn get(&self, sandbox_id: &str) -> Result<Sandbox> {
        let s = self
            .sandboxes()
            .get_sandbox(pb::GetSandboxRequest {
                sandbox_id: sandbox_id.into(),
            })
            .await?
            .into_inner()
            .sandbox
            .unwrap_or_default();
        Ok(Sandbox {
            client: self.clone(),
            info: s,
        })
    }

    /// One page of the caller's sandboxes and the next page's token.
    pub async fn list(
        &self,
        page_size: i32,
        page_token: &str,
    ) -> Result<(Vec<pb::Sandbox>, String)> {
        let r = self
            .sandboxes()
            .list_sandboxes(pb::ListSandboxesRequest {
                page_size,
                page_token: page_token.into(),
                ..Default::default()
            })
            .await?
            .into_inner();
        Ok((r.sandboxes, r.next_page_token))
    }

    pub async fn whoami(&self) -> Result<pb::WhoAmIResponse> {
        Ok(self
            .auth()
            .who_am_i(pb::WhoAmIRequest {})
            .await?
            .into_inner())
    }
}

#[derive(Clone, Debug, Default)]
pub struct CreateOptions {
    pub image: Option<String>,
    pub envs: HashMap<String, String>,
    pub labels: HashMap<String, String>,
    pub secrets: Vec<String>,
    /// Auto-pause (by default) after this long.
    pub timeout: Option<Duration>,
    pub cpu_millis: Option<i64>,
    pub memory_mib: Option<i64>,
    pub no_wait: bool,
    pub wait_timeout: Option<Duration>,
}

/// The lowercase name of a state, e.g. "running".
pub fn state_name(state: i32) -> String {
    pb::SandboxState::try_from(state)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("SANDBOX_STATE_")
                .to_lowercase()
        })
        .unwrap_or_else(|_| "unknown".into())
}

/// One sandbox.
#[derive(Clone)]
pub struct Sandbox {
    client: Client,
    pub info: pb::Sandbox,
}

impl Sandbox {
    pub fn id(&self) -> &str {
        &self.info.sandbox_id
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub async fn refresh(&mut self) -> Result<&pb::Sandbox> {
        self.info = self.client.get(&self.info.sandbox_id).await?.info;
        Ok(&self.info)
    }

    pub fn state(&self) -> String {
        state_name(self.info.state)
    }

    pub async fn pause(&self) -> Result<()> {
        self.client
            .sandboxes()
            .pause_sandbox(pb::PauseSandboxRequest {
                sandbox_id: self.id().into(),
            })
            .await?;
        Ok(())
    }

    pub async fn resume(&self) -> Result<()> {
        self.client
            .sandboxes()
            .resume_sandbox(pb::ResumeSandboxRequest {
                sandbox_id: self.id().into(),
            })
            .await?;
        Ok(())
    }

    /// Deletes the sandbox and everything in it.
    pub async fn kill(&self) -> Result<()> {
        self.client
            .sandboxes()
            .delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: self.id().into(),
            })
            .await?;
        Ok(())
    }

    /// A signed link to one port (path-prefix preview).
    pub async fn preview_token(
        &self,
        port: u32,
        ttl: Option<Duration>,
    ) -> Result<pb::CreatePreviewTokenResponse> {
        Ok(self
            .client
            .preview()
            .create_preview_token(pb::CreatePreviewTokenRequest {
                sandbox_id: self.id().into(),
                port,
                ttl: ttl.map(duration),
            })
            .await?
            .into_inner())
    }

    pub fn commands(&self) -> Commands<'_> {
        Commands { s: self }
    }

    pub fn files(&self) -> Files<'_> {
        Files { s: self }
    }
}

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
    s: &'a Sandbox,
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

pub struct Files<'a> {
    s: &'a Sandbox,
}

impl Files<'_> {
    /// Writes a whole file atomically, in 1 MiB messages.
    pub async fn write(&self, path: &str, data: &[u8]) -> Result<pb::FileInfo> {
        use pb::write_file_request::Message as M;
        let mut msgs = vec![pb::WriteFileRequest {
            sandbox_id: self.s.id().into(),
            message: Some(M::Header(pb::WriteFileHeader {
                path: path.into(),
                mode: 0,
                create_parents: true,
                no_overwrite: false,
            })),
        }];
        msgs.extend(data.chunks(1 << 20).map(|c| pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(M::Data(c.to_vec())),
        }));
        // Only a finished upload is written.
        msgs.push(pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(M::Finish(pb::WriteFileFinish {
                size: data.len() as i64,
            })),
        });
        let r = self
            .s
            .client
            .files()
            .write_file(tokio_stream::iter(msgs))
            .await?
            .into_inner();
        Ok(r.info.unwrap_or_default())
    }

    pub async fn read(&self, path: &str) -> Result<Vec<u8>> {
        let mut s = self
            .s
            .client
            .files()
            .read_file(pb::ReadFileRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                offset: 0,
                length: 0,
            })
            .await?
            .into_inner();
        let mut out = Vec::new();
        while let Some(c) = s.next().await {
            out.extend(c?.data);
        }
        Ok(out)
    }

    pub async fn list(&self, path: &str) -> Result<Vec<pb::FileInfo>> {
        Ok(self
            .s
            .client
            .files()
            .list_dir(pb::ListDirRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                depth: 1,
            })
            .await?
            .into_inner()
            .entries)
    }

    pub async fn stat(&self, path: &str) -> Result<pb::FileInfo> {
        Ok(self
            .s
            .client
            .files()
            .stat(pb::StatRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
            })
            .await?
            .into_inner()
            .info
            .unwrap_or_default())
    }

    pub async fn make_dir(&self, path: &str) -> Result<()> {
        self.s
            .client
            .files()
            .make_dir(pb::MakeDirRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                parents: true,
                mode: 0,
            })
            .await?;
        Ok(())
    }

    pub async fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.s
            .client
            .files()
            .move_path(pb::MovePathRequest {
                sandbox_id: self.s.id().into(),
                source_path: from.into(),
                destination_path: to.into(),
                overwrite: false,
            })
            .await?;
        Ok(())
    }

    pub async fn remove(&self, path: &str, recursive: bool) -> Result<()> {
        self.s
            .client
            .files()
            .remove_path(pb::RemovePathRequest {
                sandbox_id: self.s.id().into(),
                path: path.into(),
                recursive,
            })
            .await?;
        Ok(())
    }
}
