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
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;

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

pub use talon_proto::v1::Isolation;
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

type Svc = InterceptedService<Servers, Bearer>;

/// One connection to a Talon control plane.
#[derive(Clone)]
pub struct Client {
    channel: Servers,
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
    /// Several servers of one platform, comma-separated
    /// (`http://a:7070,http://b:7070`), are one client: calls go to one
    /// of them, and a call that finds it gone moves the next ones to the
    /// next server, so a call retried after a server is lost goes to
    /// another (`servers`; the connections are then made on first use,
    /// not here).
    pub async fn connect(url: &str, api_key: &str) -> Result<Client> {
        let urls: Vec<&str> = url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        let endpoint = |u: &str| -> Result<tonic::transport::Endpoint> {
            Ok(tonic::transport::Endpoint::from_shared(u.to_string())
                .map_err(|e| Error::Config(format!("bad url {u:?}: {e}")))?
                .tcp_nodelay(true)
                .connect_timeout(Duration::from_secs(5))
                .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
                .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
                .max_frame_size(Some(talon_proto::h2::MAX_FRAME)))
        };
        let channel = match urls.as_slice() {
            [] => return Err(Error::Config("no url".into())),
            [one] => Servers::new(vec![endpoint(one)?.connect().await?]),
            many => Servers::new(
                many.iter()
                    .map(|u| Ok(endpoint(u)?.connect_lazy()))
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
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

    /// The URL (or URLs, comma-separated) it was made with.
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
    pub fn agents(&self) -> pb::agent_service_client::AgentServiceClient<Svc> {
        pb::agent_service_client::AgentServiceClient::new(self.svc())
            .max_decoding_message_size(64 << 20)
    }
    pub fn browsers(&self) -> pb::browser_service_client::BrowserServiceClient<Svc> {
        pb::browser_service_client::BrowserServiceClient::new(self.svc())
            .max_decoding_message_size(64 << 20)
    }
    pub fn code(&self) -> pb::code_service_client::CodeServiceClient<Svc> {
        pb::code_service_client::CodeServiceClient::new(self.svc())
            .max_decoding_message_size(64 << 20)
    }
    pub fn auth(&self) -> pb::auth_service_client::AuthServiceClient<Svc> {
        pb::auth_service_client::AuthServiceClient::new(self.svc())
    }

    /// Creates a sandbox and, unless `no_wait`, waits until it runs.
    pub async fn create(&self, o: CreateOptions) -> Result<Sandbox> {
        let req = pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox {
                // From a snapshot, its image (an image too is refused).
                image: match (&o.snapshot_id, o.image) {
                    (Some(_), image) => image.unwrap_or_default(),
                    (None, image) => image.unwrap_or_else(|| "host".into()),
                },
                snapshot_id: o.snapshot_id.unwrap_or_default(),
                env: o.envs,
                labels: o.labels,
                metadata: o.metadata,
                secret_names: o.secrets,
                timeout: o.timeout.map(duration),
                idle_timeout: o.idle_timeout.map(duration),
                auto_resume: o.auto_resume,
                isolation: o.isolation as i32,
                resources: Some(pb::Resources {
                    cpu_millis: o.cpu_millis.unwrap_or(0),
                    memory_mib: o.memory_mib.unwrap_or(0),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            wait_until_running: !o.no_wait,
            wait_timeout: Some(duration(o.wait_timeout.unwrap_or(Duration::from_secs(60)))),
            idempotency_key: o.idempotency_key.unwrap_or_default(),
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

    /// One page of the caller's sandboxes whose metadata holds every pair
    /// and whose state is one of `states` (all but deleted when empty).
    pub async fn list_filtered(
        &self,
        metadata: HashMap<String, String>,
        states: &[pb::SandboxState],
        page_size: i32,
        page_token: &str,
    ) -> Result<(Vec<pb::Sandbox>, String)> {
        let r = self
            .sandboxes()
            .list_sandboxes(pb::ListSandboxesRequest {
                page_size,
                page_token: page_token.into(),
                metadata,
                states: states.iter().map(|s| *s as i32).collect(),
                ..Default::default()
            })
            .await?
            .into_inner();
        Ok((r.sandboxes, r.next_page_token))
    }

    /// Attaches to a sandbox the way E2B's connect does: a paused one is
    /// resumed and a stopped one started; a deleted one is NOT_FOUND.
    pub async fn connect_sandbox(&self, sandbox_id: &str) -> Result<Sandbox> {
        let mut sb = self.get(sandbox_id).await?;
        match pb::SandboxState::try_from(sb.info.state) {
            Ok(pb::SandboxState::Deleted) => {
                return Err(
                    tonic::Status::not_found(format!("sandbox {sandbox_id} was deleted")).into(),
                );
            }
            Ok(pb::SandboxState::Paused) => sb.resume().await?,
            Ok(pb::SandboxState::Stopped) => {
                self.sandboxes()
                    .start_sandbox(pb::StartSandboxRequest {
                        sandbox_id: sandbox_id.into(),
                    })
                    .await?;
            }
            _ => return Ok(sb),
        }
        sb.refresh().await?;
        Ok(sb)
    }

    /// One page of the tenant's snapshots (newest first; of one sandbox
    /// when `sandbox_id` is not empty) and the next page's token.
    pub async fn list_snapshots(
        &self,
        sandbox_id: &str,
        page_token: &str,
    ) -> Result<(Vec<pb::Snapshot>, String)> {
        let r = self
            .sandboxes()
            .list_snapshots(pb::ListSnapshotsRequest {
                sandbox_id: sandbox_id.into(),
                page_token: page_token.into(),
                page_size: 0,
            })
            .await?
            .into_inner();
        Ok((r.snapshots, r.next_page_token))
    }

    pub async fn get_snapshot(&self, snapshot_id: &str) -> Result<pb::Snapshot> {
        Ok(self
            .sandboxes()
            .get_snapshot(pb::GetSnapshotRequest {
                snapshot_id: snapshot_id.into(),
            })
            .await?
            .into_inner()
            .snapshot
            .unwrap_or_default())
    }

    /// Deletes a snapshot; sandboxes made from it keep their files.
    pub async fn delete_snapshot(&self, snapshot_id: &str) -> Result<()> {
        self.sandboxes()
            .delete_snapshot(pb::DeleteSnapshotRequest {
                snapshot_id: snapshot_id.into(),
            })
            .await?;
        Ok(())
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
    /// Free-form metadata, filterable when listing.
    pub metadata: HashMap<String, String>,
    /// Makes a retried create return the first one's sandbox (24 hours).
    pub idempotency_key: Option<String>,
    pub secrets: Vec<String>,
    /// Auto-pause (by default) after this long.
    pub timeout: Option<Duration>,
    /// Pause after this long without activity (calls, output, input,
    /// preview traffic).
    pub idle_timeout: Option<Duration>,
    /// The next call to it while paused resumes it first.
    pub auto_resume: bool,
    /// Start from this snapshot's files (`Sandbox::create_snapshot`), on
    /// its image; leave `image` unset.
    pub snapshot_id: Option<String>,
    /// `Container` (unspecified: the default) or `Gvisor`, a user-space
    /// kernel between the code and the host's, where a worker offers it.
    pub isolation: pb::Isolation,
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

    /// Copies the sandbox's filesystem (writable root, workspace, home)
    /// into a snapshot of the tenant ("" names it from the sandbox and the
    /// time); a running sandbox is frozen for the copy only. Processes and
    /// memory are not kept.
    pub async fn create_snapshot(&self, name: &str) -> Result<pb::Snapshot> {
        Ok(self
            .client
            .sandboxes()
            .create_snapshot(pb::CreateSnapshotRequest {
                sandbox_id: self.id().into(),
                name: name.into(),
                memory: false,
            })
            .await?
            .into_inner()
            .snapshot
            .unwrap_or_default())
    }

    /// `count` (1 to 20) new sandboxes from this one's files now, with its
    /// settings and each its own id, tokens and secrets; all running.
    pub async fn fork(&self, count: i32) -> Result<Vec<Sandbox>> {
        let r = self
            .client
            .sandboxes()
            .fork_sandbox(pb::ForkSandboxRequest {
                sandbox_id: self.id().into(),
                count,
            })
            .await?
            .into_inner();
        Ok(r.sandboxes
            .into_iter()
            .map(|info| Sandbox {
                client: self.client.clone(),
                info,
            })
            .collect())
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

    /// What the sandbox uses now.
    pub async fn metrics(&self) -> Result<pb::SandboxMetrics> {
        Ok(self
            .client
            .sandboxes()
            .get_sandbox_metrics(pb::GetSandboxMetricsRequest {
                sandbox_id: self.id().into(),
            })
            .await?
            .into_inner()
            .metrics
            .unwrap_or_default())
    }

    /// Lets the sandbox live `timeout` from now.
    pub async fn set_timeout(&self, timeout: Duration) -> Result<()> {
        self.client
            .sandboxes()
            .set_sandbox_timeout(pb::SetSandboxTimeoutRequest {
                sandbox_id: self.id().into(),
                timeout: Some(duration(timeout)),
                ..Default::default()
            })
            .await?;
        Ok(())
    }

    /// A URL on the gateway that reads (`write: false`) or writes one file
    /// with no other credential, for `ttl` (an hour when None).
    pub async fn file_url(&self, path: &str, write: bool, ttl: Option<Duration>) -> Result<String> {
        let operation = if write {
            pb::FileUrlOperation::Write
        } else {
            pb::FileUrlOperation::Read
        };
        Ok(self
            .client
            .files()
            .create_file_url(pb::CreateFileUrlRequest {
                sandbox_id: self.id().into(),
                path: path.into(),
                operation: operation as i32,
                ttl: ttl.map(duration),
            })
            .await?
            .into_inner()
            .url)
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

    /// Agent runs in this sandbox.
    pub fn agent(&self) -> Agent<'_> {
        Agent { s: self }
    }

    /// The sandbox's browser.
    pub fn browser(&self) -> Browser<'_> {
        Browser { s: self }
    }

    /// The sandbox's code contexts.
    pub fn code(&self) -> CodeContexts<'_> {
        CodeContexts { s: self }
    }
}

mod agent;
mod browser;
mod code;
mod commands;
mod files;
mod servers;
pub use agent::*;
pub use browser::*;
pub use code::*;
pub use commands::*;
pub use files::*;
use servers::Servers;
