//! ProcessService, PtyService and FilesystemService: authorized and
//! tenant-scoped here like every other call, then forwarded to the agent in
//! the sandbox through its worker's data plane (SDK → server → worker →
//! agent: three hops). Requests and responses are the same messages end to
//! end, so nothing is converted; streams stay streams.

use super::principal;
use crate::app::App;
use crate::audit::with_resource;
use crate::auth::Principal;
use crate::domain::sandboxes::{self, state_of};
use crate::domain::state::SandboxState;
use crate::domain::tenants::TenantScope;
use crate::error::Error;
use std::pin::Pin;
use std::sync::Arc;
use talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient;
use talon_proto::talon::gateway::v1 as gpb;
use talon_proto::v1 as pb;
use tokio_stream::{Stream, StreamExt};
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

#[derive(Clone)]
pub struct AgentProxy(pub Arc<App>);

type Out<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Where one call goes, and the metadata that names the sandbox there.
struct Route {
    client: SandboxAgentServiceClient<Channel>,
    sandbox_id: String,
    generation: i64,
}

impl Route {
    fn request<T>(&self, msg: T, token: &str) -> Request<T> {
        let mut r = Request::new(msg);
        let m = r.metadata_mut();
        m.insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ascii token"),
        );
        m.insert(
            talon_core::wire::SANDBOX_HEADER,
            self.sandbox_id.parse().expect("ascii id"),
        );
        m.insert(
            talon_core::wire::GENERATION_HEADER,
            MetadataValue::from(self.generation),
        );
        r
    }
}

impl AgentProxy {
    async fn route(&self, p: &Principal, sandbox_id: &str) -> Result<Route, Status> {
        let row = sandboxes::get_cached(&self.0, &TenantScope::own(p), sandbox_id).await?;
        self.route_to(row)
    }

    fn route_to(&self, row: crate::db::entity::sandbox::Model) -> Result<Route, Status> {
        let state = state_of(&row)?;
        if state != SandboxState::Running {
            return Err(Error::FailedPrecondition(format!(
                "sandbox {} is {state}, not running",
                row.id
            ))
            .into());
        }
        let worker = row.worker_id.clone().unwrap_or_default();
        let addr = self.0.hub.data_address(&worker).ok_or_else(|| {
            Error::Unavailable(format!(
                "worker {worker} holding sandbox {} is not reachable",
                row.id
            ))
        })?;
        let channel = self.0.data_channel(&addr)?;
        let client = SandboxAgentServiceClient::new(channel)
            .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES);
        Ok(Route {
            client,
            sandbox_id: row.id,
            generation: row.generation,
        })
    }

    fn token(&self) -> &str {
        &self.0.worker_token
    }
}

/// Reads the first message of a client stream (it names the sandbox) and
/// gives back a stream that starts with it again.
async fn peek<T: Send + 'static>(
    mut s: Streaming<T>,
) -> Result<(T, impl Stream<Item = T> + Send), Status> {
    let first = s
        .message()
        .await?
        .ok_or_else(|| Status::invalid_argument("empty request stream"))?;
    let rest = s.map_while(|m| m.ok());
    Ok((first, rest))
}

fn boxed<T: Send + 'static>(s: Streaming<T>) -> Out<T> {
    Box::pin(s)
}

macro_rules! unary {
    ($self:ident, $req:ident, $method:ident, audit) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self.route(&principal(&$req)?, &id).await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.token()))
            .await?;
        Ok(with_resource(Response::new(resp.into_inner()), id))
    }};
    ($self:ident, $req:ident, $method:ident) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self.route(&principal(&$req)?, &id).await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.token()))
            .await?;
        Ok(Response::new(resp.into_inner()))
    }};
}

macro_rules! server_stream {
    ($self:ident, $req:ident, $method:ident) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self.route(&principal(&$req)?, &id).await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.token()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }};
}

/// A client stream: its first message names the sandbox; it is routed by
/// that and forwarded whole. `stream` for a bidirectional call, whose
/// answer is a stream too.
macro_rules! client_stream {
    ($self:ident, $req:ident, $method:ident) => {{
        let (id, resp) = client_stream!(@call $self, $req, $method);
        Ok(with_resource(Response::new(resp.into_inner()), id))
    }};
    ($self:ident, $req:ident, $method:ident, stream) => {{
        let (id, resp) = client_stream!(@call $self, $req, $method);
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }};
    (@call $self:ident, $req:ident, $method:ident) => {{
        let p = principal(&$req)?;
        let (first, rest) = peek($req.into_inner()).await?;
        let id = first.sandbox_id.clone();
        let mut route = $self.route(&p, &id).await?;
        let out = tokio_stream::iter(vec![first]).chain(rest);
        let resp = route
            .client
            .$method(route.request(out, $self.token()))
            .await?;
        (id, resp)
    }};
}

impl AgentProxy {
    /// PreviewService.ListPorts, answered by the sandbox's agent.
    pub async fn forward_list_ports(
        &self,
        req: Request<pb::ListPortsRequest>,
    ) -> Result<Response<pb::ListPortsResponse>, Status> {
        unary!(self, req, list_ports)
    }
}

#[tonic::async_trait]
impl pb::process_service_server::ProcessService for AgentProxy {
    type StartProcessStream = Out<pb::StartProcessResponse>;
    type ConnectProcessStream = Out<pb::ConnectProcessResponse>;
    type FollowProcessLogsStream = Out<pb::FollowProcessLogsResponse>;

    async fn start_process(
        &self,
        req: Request<pb::StartProcessRequest>,
    ) -> Result<Response<Self::StartProcessStream>, Status> {
        server_stream!(self, req, start_process)
    }
    async fn connect_process(
        &self,
        req: Request<pb::ConnectProcessRequest>,
    ) -> Result<Response<Self::ConnectProcessStream>, Status> {
        server_stream!(self, req, connect_process)
    }
    async fn list_processes(
        &self,
        req: Request<pb::ListProcessesRequest>,
    ) -> Result<Response<pb::ListProcessesResponse>, Status> {
        unary!(self, req, list_processes)
    }
    async fn send_process_input(
        &self,
        req: Request<Streaming<pb::SendProcessInputRequest>>,
    ) -> Result<Response<pb::SendProcessInputResponse>, Status> {
        client_stream!(self, req, send_process_input)
    }
    async fn send_process_signal(
        &self,
        req: Request<pb::SendProcessSignalRequest>,
    ) -> Result<Response<pb::SendProcessSignalResponse>, Status> {
        unary!(self, req, send_process_signal, audit)
    }
    async fn close_process_stdin(
        &self,
        req: Request<pb::CloseProcessStdinRequest>,
    ) -> Result<Response<pb::CloseProcessStdinResponse>, Status> {
        unary!(self, req, close_process_stdin, audit)
    }
    async fn resize_process_pty(
        &self,
        req: Request<pb::ResizeProcessPtyRequest>,
    ) -> Result<Response<pb::ResizeProcessPtyResponse>, Status> {
        unary!(self, req, resize_process_pty, audit)
    }
    async fn get_process_logs(
        &self,
        req: Request<pb::GetProcessLogsRequest>,
    ) -> Result<Response<pb::GetProcessLogsResponse>, Status> {
        unary!(self, req, get_process_logs)
    }
    async fn follow_process_logs(
        &self,
        req: Request<pb::FollowProcessLogsRequest>,
    ) -> Result<Response<Self::FollowProcessLogsStream>, Status> {
        server_stream!(self, req, follow_process_logs)
    }
}

#[tonic::async_trait]
impl pb::pty_service_server::PtyService for AgentProxy {
    type AttachStream = Out<pb::AttachResponse>;

    async fn attach(
        &self,
        req: Request<Streaming<pb::AttachRequest>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        client_stream!(self, req, attach, stream)
    }
}

#[tonic::async_trait]
impl pb::filesystem_service_server::FilesystemService for AgentProxy {
    type ReadFileStream = Out<pb::ReadFileResponse>;
    type WatchDirStream = Out<pb::WatchDirResponse>;

    async fn stat(
        &self,
        req: Request<pb::StatRequest>,
    ) -> Result<Response<pb::StatResponse>, Status> {
        unary!(self, req, stat)
    }
    async fn list_dir(
        &self,
        req: Request<pb::ListDirRequest>,
    ) -> Result<Response<pb::ListDirResponse>, Status> {
        unary!(self, req, list_dir)
    }
    async fn read_file(
        &self,
        req: Request<pb::ReadFileRequest>,
    ) -> Result<Response<Self::ReadFileStream>, Status> {
        server_stream!(self, req, read_file)
    }
    async fn write_file(
        &self,
        req: Request<Streaming<pb::WriteFileRequest>>,
    ) -> Result<Response<pb::WriteFileResponse>, Status> {
        client_stream!(self, req, write_file)
    }
    async fn make_dir(
        &self,
        req: Request<pb::MakeDirRequest>,
    ) -> Result<Response<pb::MakeDirResponse>, Status> {
        unary!(self, req, make_dir, audit)
    }
    async fn move_path(
        &self,
        req: Request<pb::MovePathRequest>,
    ) -> Result<Response<pb::MovePathResponse>, Status> {
        unary!(self, req, move_path, audit)
    }
    async fn remove_path(
        &self,
        req: Request<pb::RemovePathRequest>,
    ) -> Result<Response<pb::RemovePathResponse>, Status> {
        unary!(self, req, remove_path, audit)
    }
    async fn watch_dir(
        &self,
        req: Request<pb::WatchDirRequest>,
    ) -> Result<Response<Self::WatchDirStream>, Status> {
        server_stream!(self, req, watch_dir)
    }
}

/// The preview tunnel: authorized by the caller's credentials (the access
/// layer checked the role) or by a preview token for exactly this sandbox
/// and port, then forwarded to the agent, which connects inside.
#[tonic::async_trait]
impl gpb::preview_tunnel_service_server::PreviewTunnelService for AgentProxy {
    type OpenPreviewStream = Out<gpb::OpenPreviewResponse>;

    async fn open_preview(
        &self,
        req: Request<Streaming<gpb::OpenPreviewRequest>>,
    ) -> Result<Response<Self::OpenPreviewStream>, Status> {
        let principal = req.extensions().get::<Principal>().cloned();
        let token = req
            .metadata()
            .get(crate::rbac::PREVIEW_TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let (first, rest) = peek(req.into_inner()).await?;
        let id = first.sandbox_id.clone();
        let row = match (token, principal) {
            (Some(t), _) => {
                let checked = self.0.preview.verify(&t, &id, first.port);
                self.0
                    .metrics
                    .preview_tokens
                    .with_label_values(&[crate::auth::preview::outcome(&checked)])
                    .inc();
                let claims = checked?;
                // The token names a sandbox of its tenant; one that is gone
                // (or the id reused elsewhere) is not found.
                sandboxes::find(&self.0, &id)
                    .await?
                    .filter(|r| r.tenant_id == claims.tid)
                    .ok_or_else(|| Error::NotFound(format!("sandbox {id}")))?
            }
            (None, Some(p)) => sandboxes::get(&self.0, &TenantScope::own(&p), &id).await?,
            (None, None) => return Err(Status::unauthenticated("no credential")),
        };
        let mut route = self.route_to(row)?;
        let out = tokio_stream::iter(vec![first]).chain(rest);
        let resp = route
            .client
            .open_preview(route.request(out, self.token()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }
}
