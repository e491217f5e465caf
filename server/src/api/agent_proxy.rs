//! ProcessService, PtyService and FilesystemService: authorized and
//! tenant-scoped here like every other call, then forwarded to the agent in
//! the sandbox through its worker's data plane (SDK → server → worker →
//! agent: three hops). Requests and responses are the same messages end to
//! end, so nothing is converted; streams stay streams.

use super::principal;
use crate::app::App;
use crate::audit::with_resource;
use crate::auth::Principal;
use crate::auth::file_url::{FileClaims, FileOp};
use crate::domain::sandboxes;
use crate::domain::tenants::TenantScope;
use crate::error::Error;
use std::pin::Pin;
use std::sync::Arc;
use talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient;
use talon_proto::talon::gateway::v1 as gpb;
use talon_proto::v1 as pb;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

#[derive(Clone)]
pub struct AgentProxy(pub Arc<App>);

pub(super) type Out<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Where one call goes, and the metadata that names the sandbox there.
pub(super) struct Route {
    pub(super) client: SandboxAgentServiceClient<Channel>,
    pub(super) sandbox_id: String,
    pub(super) tenant_id: String,
    generation: i64,
}

impl Route {
    pub(super) fn request<T>(
        &self,
        msg: T,
        workers: &dyn crate::workers::calls::WorkerCalls,
    ) -> Request<T> {
        crate::workers::calls::sandbox_request(workers, msg, &self.sandbox_id, self.generation)
    }
}

impl AgentProxy {
    /// `call` names the call, for the event of a sandbox resumed for it.
    pub(super) async fn route(
        &self,
        p: &Principal,
        sandbox_id: &str,
        call: &str,
    ) -> Result<Route, Status> {
        let row = sandboxes::get_cached(&self.0, &TenantScope::own(p), sandbox_id).await?;
        self.route_to(row, call).await
    }

    /// Where a call to this sandbox goes: it must be running, or paused
    /// with `auto_resume` (then it is resumed first).
    async fn route_to(
        &self,
        row: crate::db::entity::sandbox::Model,
        call: &str,
    ) -> Result<Route, Status> {
        let row = sandboxes::ensure_running(&self.0, row, call).await?;
        let worker = row.worker_id.clone().unwrap_or_default();
        let addr = crate::domain::workers::data_address(&self.0, &worker)
            .await?
            .ok_or_else(|| {
                Error::Unavailable(format!(
                    "worker {worker} holding sandbox {} is not reachable",
                    row.id
                ))
            })?;
        let channel = self.0.workers().channel(&addr)?;
        let client = SandboxAgentServiceClient::new(channel)
            .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES);
        Ok(Route {
            client,
            sandbox_id: row.id,
            tenant_id: row.tenant_id,
            generation: row.generation,
        })
    }

    pub(super) fn workers(&self) -> &dyn crate::workers::calls::WorkerCalls {
        self.0.workers()
    }

    /// The sandbox a signed file URL's token opens for this path,
    /// operation and user: the token names a sandbox of its tenant, and
    /// one that is gone (or its id reused elsewhere) is not found. The
    /// token is Talon's own (CreateFileUrl) or an E2B-style signature made
    /// with the sandbox's access token, which the E2B facade passes on.
    async fn by_file_token(
        &self,
        token: &str,
        id: &str,
        path: &str,
        user: &str,
        op: FileOp,
    ) -> Result<(crate::db::entity::sandbox::Model, FileClaims), Status> {
        let not_found = || Error::NotFound(format!("sandbox {id}"));
        if let Some(sig) = talon_core::e2b_files::Presented::decode(token) {
            let signed_user = talon_core::e2b_files::signed_user(&sig.user);
            if path != talon_core::e2b_files::resolve(&sig.path, &sig.user) || user != signed_user {
                return Err(Error::PermissionDenied(
                    "the file signature is for another path or user".into(),
                )
                .into());
            }
            let op_name = match op {
                FileOp::Read => "read",
                FileOp::Write => "write",
            };
            let now = crate::auth::jwt::unix_now();
            let check = |sandbox_id: &str, tenant_id: &str| {
                self.0.preview().verify_file_signature(
                    &crate::auth::sandbox_token::FileSignature {
                        sandbox_id,
                        tenant_id,
                        path: &sig.path,
                        op: op_name,
                        user: &sig.user,
                        expiration: sig.expiration,
                        signature: &sig.signature,
                    },
                    now,
                )
            };
            let row = if id.is_empty() {
                // The URL names no sandbox (E2B_SANDBOX_URL serves every
                // sandbox at one address, and the SDKs' download_url and
                // upload_url put none in it): the signature, made with one
                // sandbox's token, names it. An expired one is refused
                // before any is tried. Each try is an HMAC and a SHA-256
                // (about a microsecond); a request costs one read of the
                // ids of the sandboxes not deleted.
                if sig.expiration.is_some_and(|exp| exp < now) {
                    return Err(
                        Error::Unauthenticated("the signed file URL has expired".into()).into(),
                    );
                }
                let mut found = None;
                for (sid, tid) in sandboxes::not_deleted(&self.0).await? {
                    match check(&sid, &tid) {
                        Ok(()) => {
                            found = Some(sid);
                            break;
                        }
                        Err(Error::PermissionDenied(_)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                let sid = found.ok_or_else(|| {
                    Error::PermissionDenied(
                        "the file signature matches no sandbox, path, operation and user".into(),
                    )
                })?;
                sandboxes::find(&self.0, &sid)
                    .await?
                    .ok_or_else(not_found)?
            } else {
                let row = sandboxes::find(&self.0, id).await?.ok_or_else(not_found)?;
                check(&row.id, &row.tenant_id)?;
                row
            };
            let claims = FileClaims {
                sub: row.id.clone(),
                tid: row.tenant_id.clone(),
                act: format!("sandbox-token:{}", row.id),
                path: path.into(),
                op,
                iss: String::new(),
                aud: String::new(),
                exp: sig.expiration.unwrap_or(0),
                iat: 0,
                jti: String::new(),
            };
            return Ok((row, claims));
        }
        let claims = self.0.preview().verify_file(token, id, path, op)?;
        let row = sandboxes::find(&self.0, id)
            .await?
            .filter(|r| r.tenant_id == claims.tid)
            .ok_or_else(not_found)?;
        Ok((row, claims))
    }
}

/// The signed file token of a call that has no principal.
fn file_token<T>(req: &Request<T>) -> Result<String, Status> {
    req.metadata()
        .get(crate::rbac::FILE_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
        .ok_or_else(|| Status::unauthenticated("no credential"))
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

pub(super) fn boxed<T: Send + 'static>(s: Streaming<T>) -> Out<T> {
    Box::pin(s)
}

macro_rules! unary {
    ($self:ident, $req:ident, $method:ident, audit) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self
            .route(&principal(&$req)?, &id, stringify!($method))
            .await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.workers()))
            .await?;
        Ok(with_resource(Response::new(resp.into_inner()), id))
    }};
    ($self:ident, $req:ident, $method:ident) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self
            .route(&principal(&$req)?, &id, stringify!($method))
            .await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.workers()))
            .await?;
        Ok(Response::new(resp.into_inner()))
    }};
}

macro_rules! server_stream {
    ($self:ident, $req:ident, $method:ident) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self
            .route(&principal(&$req)?, &id, stringify!($method))
            .await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.workers()))
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
        let mut route = $self.route(&p, &id, stringify!($method)).await?;
        let out = tokio_stream::iter(vec![first]).chain(rest);
        let resp = route
            .client
            .$method(route.request(out, $self.workers()))
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
        if req.extensions().get::<Principal>().is_some() {
            return server_stream!(self, req, read_file);
        }
        // A signed URL's token, bound to this sandbox, path and reading.
        let token = file_token(&req)?;
        let r = req.get_ref();
        let (row, _) = self
            .by_file_token(&token, &r.sandbox_id, &r.path, &r.user, FileOp::Read)
            .await?;
        let id = row.id.clone();
        let mut route = self.route_to(row, "read_file").await?;
        let resp = route
            .client
            .read_file(route.request(req.into_inner(), self.workers()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }
    async fn write_file(
        &self,
        req: Request<Streaming<pb::WriteFileRequest>>,
    ) -> Result<Response<pb::WriteFileResponse>, Status> {
        if req.extensions().get::<Principal>().is_some() {
            return client_stream!(self, req, write_file);
        }
        let token = file_token(&req)?;
        let rid = req
            .extensions()
            .get::<crate::rbac::RequestId>()
            .map(|r| r.0.clone())
            .unwrap_or_default();
        let (mut first, rest) = peek(req.into_inner()).await?;
        // A signed upload makes the file's parents, as its URL promises.
        let (path, user) = match &mut first.message {
            Some(pb::write_file_request::Message::Header(h)) => {
                h.create_parents = true;
                (h.path.clone(), h.user.clone())
            }
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must be the header",
                ));
            }
        };
        let (row, claims) = self
            .by_file_token(&token, &first.sandbox_id, &path, &user, FileOp::Write)
            .await?;
        let id = row.id.clone();
        let mut route = self.route_to(row, "write_file").await?;
        // The header is the grant's: a second one (another path) ends the
        // stream there, and without its finish nothing is written.
        let rest = rest
            .take_while(|m| !matches!(m.message, Some(pb::write_file_request::Message::Header(_))));
        let out = tokio_stream::iter(vec![first]).chain(rest);
        let resp = route
            .client
            .write_file(route.request(out, self.workers()))
            .await;
        // The layer audits principals' calls; a token's is audited here,
        // in the name of whoever signed the URL.
        let code = resp.as_ref().map_or_else(|s| s.code(), |_| tonic::Code::Ok);
        self.0
            .audit()
            .record(crate::audit::AuditRecord::by(
                &claims.tid,
                &claims.act,
                "/talon.v1.FilesystemService/WriteFile",
                &id,
                code,
                &rid,
            ))
            .await;
        Ok(with_resource(Response::new(resp?.into_inner()), id))
    }
    async fn create_file_url(
        &self,
        req: Request<pb::CreateFileUrlRequest>,
    ) -> Result<Response<pb::CreateFileUrlResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let op = match pb::FileUrlOperation::try_from(r.operation) {
            Ok(pb::FileUrlOperation::Read) => FileOp::Read,
            Ok(pb::FileUrlOperation::Write) => FileOp::Write,
            _ => {
                return Err(Status::invalid_argument(
                    "operation must be FILE_URL_OPERATION_READ or FILE_URL_OPERATION_WRITE",
                ));
            }
        };
        let ttl = crate::api::convert::ttl_secs(r.ttl)?;
        let link =
            crate::domain::preview::create_file_url(&self.0, &p, &r.sandbox_id, &r.path, op, ttl)
                .await?;
        Ok(with_resource(
            Response::new(pb::CreateFileUrlResponse {
                url: link.url,
                token: link.token,
                expire_time: Some(prost_types::Timestamp {
                    seconds: link.expires_at_secs as i64,
                    nanos: 0,
                }),
            }),
            r.sandbox_id,
        ))
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
impl pb::agent_service_server::AgentService for AgentProxy {
    type RunAgentStream = Out<pb::RunAgentResponse>;
    type ConnectAgentRunStream = Out<pb::ConnectAgentRunResponse>;

    /// The named secrets are resolved here, for the caller's tenant, and
    /// travel to the agent apart from the request, which redacts them.
    async fn run_agent(
        &self,
        req: Request<pb::RunAgentRequest>,
    ) -> Result<Response<Self::RunAgentStream>, Status> {
        let p = principal(&req)?;
        let mut run = req.into_inner();
        let id = run.sandbox_id.clone();
        let mut route = self.route(&p, &id, "run_agent").await?;
        let names = std::mem::take(&mut run.secret_names);
        let secret_env =
            crate::domain::secrets::for_run(&self.0, &TenantScope::own(&p), &names, &run.env)
                .await?;
        let msg = talon_proto::talon::agent::v1::RunAgentRequest {
            run: Some(run),
            secret_env: secret_env.into_iter().collect(),
        };
        let resp = route
            .client
            .run_agent(route.request(msg, self.workers()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }
    async fn connect_agent_run(
        &self,
        req: Request<pb::ConnectAgentRunRequest>,
    ) -> Result<Response<Self::ConnectAgentRunStream>, Status> {
        server_stream!(self, req, connect_agent_run)
    }
    async fn cancel_agent_run(
        &self,
        req: Request<pb::CancelAgentRunRequest>,
    ) -> Result<Response<pb::CancelAgentRunResponse>, Status> {
        unary!(self, req, cancel_agent_run, audit)
    }
}

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
                let checked = self.0.preview().verify(&t, &id, first.port);
                self.0
                    .metrics()
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
        let mut route = self.route_to(row, "open_preview").await?;
        let out = tokio_stream::iter(vec![first]).chain(rest);
        let resp = route
            .client
            .open_preview(route.request(out, self.workers()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }
}
