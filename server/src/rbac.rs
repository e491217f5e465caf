//! Authorization: the explicit per-method access table and the one tower
//! layer that enforces it on every RPC. The layer authenticates the bearer
//! credential, checks the table, puts the `Principal` into the request, and
//! writes one audit record for every mutating call. A method missing from
//! the table is refused, so a new RPC is closed until someone decides who
//! may call it.

use crate::audit::{AuditLog, AuditRecord, AuditResource};
use crate::auth::{Authenticator, Credential, Principal, Role};
use crate::metrics::Metrics;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::{Code, Status};

/// Who may call a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without a credential.
    Public,
    /// A tenant user or API key with at least this role.
    Role(Role),
    /// An owner of the platform tenant.
    PlatformAdmin,
    /// A worker, with the worker token.
    Worker,
    /// Another server on the same database, with the peer token.
    Peer,
    /// A tenant user with at least this role, or a preview token in the
    /// `talon-preview-token` metadata, which the handler verifies against
    /// the sandbox and port it names (the layer sees no principal then).
    RoleOrPreviewToken(Role),
    /// A tenant user with at least this role, or a signed file URL's token
    /// in the `talon-file-token` metadata, which the handler verifies
    /// against the sandbox, path and operation it names (and audits).
    RoleOrFileToken(Role),
}

/// The metadata that carries a signed file URL's token.
pub use talon_core::wire::FILE_TOKEN_HEADER;
/// The metadata that carries a preview token to the preview tunnel.
pub use talon_core::wire::PREVIEW_TOKEN_HEADER;

/// One row of the access table.
#[derive(Clone, Copy, Debug)]
pub struct MethodRule {
    /// The gRPC path, `/package.Service/Method`.
    pub method: &'static str,
    pub access: Access,
    /// Changes state, so it is audited.
    pub mutating: bool,
}

const fn rule(method: &'static str, access: Access, mutating: bool) -> MethodRule {
    MethodRule {
        method,
        access,
        mutating,
    }
}

use Access::{Peer, PlatformAdmin, Public, Worker};
const OWNER: Access = Access::Role(Role::Owner);
const DEV: Access = Access::Role(Role::Developer);
const VIEW: Access = Access::Role(Role::Viewer);
const MUT: bool = true;
const READ: bool = false;

/// The access table: every RPC the server may serve.
pub const METHODS: &[MethodRule] = &[
    // SandboxService
    rule("/talon.v1.SandboxService/CreateSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/GetSandbox", VIEW, READ),
    rule("/talon.v1.SandboxService/ListSandboxes", VIEW, READ),
    rule("/talon.v1.SandboxService/DeleteSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/PauseSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/ResumeSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/StopSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/StartSandbox", DEV, MUT),
    rule("/talon.v1.SandboxService/SetSandboxTimeout", DEV, MUT),
    rule("/talon.v1.SandboxService/GetSandboxMetrics", VIEW, READ),
    rule(
        "/talon.v1.SandboxService/CreateSandboxAccessToken",
        DEV,
        MUT,
    ),
    rule("/talon.v1.SandboxService/UpdateNetworkPolicy", DEV, MUT),
    rule("/talon.v1.SandboxService/WatchSandboxEvents", VIEW, READ),
    rule("/talon.v1.SandboxService/CreateSnapshot", DEV, MUT),
    rule("/talon.v1.SandboxService/TakeSnapshot", DEV, MUT),
    rule("/talon.v1.SandboxService/ListSnapshots", VIEW, READ),
    rule("/talon.v1.SandboxService/GetSnapshot", VIEW, READ),
    rule("/talon.v1.SandboxService/DeleteSnapshot", DEV, MUT),
    rule("/talon.v1.SandboxService/ForkSandbox", DEV, MUT),
    // ProcessService
    rule("/talon.v1.ProcessService/StartProcess", DEV, MUT),
    rule("/talon.v1.ProcessService/ConnectProcess", VIEW, READ),
    rule("/talon.v1.ProcessService/ListProcesses", VIEW, READ),
    rule("/talon.v1.ProcessService/SendProcessInput", DEV, MUT),
    rule("/talon.v1.ProcessService/SendProcessSignal", DEV, MUT),
    rule("/talon.v1.ProcessService/CloseProcessStdin", DEV, MUT),
    rule("/talon.v1.ProcessService/ResizeProcessPty", DEV, MUT),
    rule("/talon.v1.ProcessService/GetProcessLogs", VIEW, READ),
    rule("/talon.v1.ProcessService/FollowProcessLogs", VIEW, READ),
    // PtyService
    rule("/talon.v1.PtyService/Attach", DEV, MUT),
    // FilesystemService
    rule("/talon.v1.FilesystemService/Stat", VIEW, READ),
    rule("/talon.v1.FilesystemService/ListDir", VIEW, READ),
    rule(
        "/talon.v1.FilesystemService/ReadFile",
        Access::RoleOrFileToken(Role::Viewer),
        READ,
    ),
    rule(
        "/talon.v1.FilesystemService/WriteFile",
        Access::RoleOrFileToken(Role::Developer),
        MUT,
    ),
    rule("/talon.v1.FilesystemService/CreateFileUrl", DEV, MUT),
    rule("/talon.v1.FilesystemService/MakeDir", DEV, MUT),
    rule("/talon.v1.FilesystemService/MovePath", DEV, MUT),
    rule("/talon.v1.FilesystemService/RemovePath", DEV, MUT),
    rule("/talon.v1.FilesystemService/WatchDir", VIEW, READ),
    // PreviewService
    rule("/talon.v1.PreviewService/CreatePreviewToken", DEV, MUT),
    rule("/talon.v1.PreviewService/ListPorts", VIEW, READ),
    // The gateway's preview tunnel: what a developer may reach with their
    // own credentials, or what a preview token names.
    rule(
        "/talon.gateway.v1.PreviewTunnelService/OpenPreview",
        Access::RoleOrPreviewToken(Role::Developer),
        READ,
    ),
    // BrowserService
    rule("/talon.v1.BrowserService/StartBrowser", DEV, MUT),
    rule("/talon.v1.BrowserService/GetBrowser", VIEW, READ),
    rule("/talon.v1.BrowserService/StopBrowser", DEV, MUT),
    // A screenshot reads the screen; GetBrowser gives a viewer no URLs.
    rule("/talon.v1.BrowserService/TakeScreenshot", VIEW, READ),
    // CodeService: running code is a developer's; a viewer may list.
    rule("/talon.v1.CodeService/CreateCodeContext", DEV, MUT),
    rule("/talon.v1.CodeService/ListCodeContexts", VIEW, READ),
    rule("/talon.v1.CodeService/DeleteCodeContext", DEV, MUT),
    rule("/talon.v1.CodeService/RestartCodeContext", DEV, MUT),
    rule("/talon.v1.CodeService/InterruptCodeContext", DEV, MUT),
    rule("/talon.v1.CodeService/RunCode", DEV, MUT),
    // AgentService
    rule("/talon.v1.AgentService/RunAgent", DEV, MUT),
    rule("/talon.v1.AgentService/ConnectAgentRun", VIEW, READ),
    rule("/talon.v1.AgentService/CancelAgentRun", DEV, MUT),
    // AuthService
    rule("/talon.v1.AuthService/Login", Public, READ),
    rule("/talon.v1.AuthService/Refresh", Public, READ),
    rule("/talon.v1.AuthService/CreateBrowserSession", Public, READ),
    rule("/talon.v1.AuthService/DeleteBrowserSession", VIEW, MUT),
    rule("/talon.v1.AuthService/Logout", VIEW, MUT),
    rule("/talon.v1.AuthService/WhoAmI", VIEW, READ),
    // One's own password, given the current one (domain::sessions).
    rule("/talon.v1.AuthService/ChangePassword", VIEW, MUT),
    // TenantService. Anyone may hold keys for themselves, never above
    // their own role (checked in domain::tenants).
    rule("/talon.v1.TenantService/CreateTenant", PlatformAdmin, MUT),
    rule("/talon.v1.TenantService/ListTenants", PlatformAdmin, READ),
    rule("/talon.v1.TenantService/GetTenant", VIEW, READ),
    rule(
        "/talon.v1.TenantService/UpdateTenantQuota",
        PlatformAdmin,
        MUT,
    ),
    rule("/talon.v1.TenantService/CreateUser", OWNER, MUT),
    rule("/talon.v1.TenantService/ListUsers", VIEW, READ),
    rule("/talon.v1.TenantService/GetUser", VIEW, READ),
    rule("/talon.v1.TenantService/UpdateUser", OWNER, MUT),
    rule("/talon.v1.TenantService/DeleteUser", OWNER, MUT),
    rule("/talon.v1.TenantService/CreateApiKey", VIEW, MUT),
    rule("/talon.v1.TenantService/ListApiKeys", VIEW, READ),
    rule("/talon.v1.TenantService/DeleteApiKey", VIEW, MUT),
    // SecretService
    rule("/talon.v1.SecretService/PutSecret", DEV, MUT),
    rule("/talon.v1.SecretService/ListSecrets", VIEW, READ),
    rule("/talon.v1.SecretService/DeleteSecret", DEV, MUT),
    // VolumeService
    rule("/talon.v1.VolumeService/CreateVolume", DEV, MUT),
    rule("/talon.v1.VolumeService/GetVolume", VIEW, READ),
    rule("/talon.v1.VolumeService/ListVolumes", VIEW, READ),
    rule("/talon.v1.VolumeService/DeleteVolume", DEV, MUT),
    // ImageService
    rule("/talon.v1.ImageService/ListImages", VIEW, READ),
    rule("/talon.v1.ImageService/GetImage", VIEW, READ),
    rule("/talon.v1.ImageService/ImportImage", PlatformAdmin, MUT),
    rule("/talon.v1.ImageService/PrewarmImage", PlatformAdmin, MUT),
    rule("/talon.v1.ImageService/DeleteImage", PlatformAdmin, MUT),
    // AdminService
    rule("/talon.v1.AdminService/ListWorkers", PlatformAdmin, READ),
    rule("/talon.v1.AdminService/GetWorker", PlatformAdmin, READ),
    rule("/talon.v1.AdminService/DrainWorker", PlatformAdmin, MUT),
    rule("/talon.v1.AdminService/ReassignSandbox", PlatformAdmin, MUT),
    rule("/talon.v1.AdminService/DeleteWorker", PlatformAdmin, MUT),
    rule("/talon.v1.AdminService/ListServers", PlatformAdmin, READ),
    rule(
        "/talon.v1.AdminService/ListWorkerSandboxes",
        PlatformAdmin,
        READ,
    ),
    rule(
        "/talon.v1.AdminService/GetPlatformMetrics",
        PlatformAdmin,
        READ,
    ),
    rule(
        "/talon.v1.AdminService/ListSandboxMoves",
        PlatformAdmin,
        READ,
    ),
    rule("/talon.v1.AdminService/ListAuditEvents", OWNER, READ),
    // Internal
    rule(
        "/talon.worker.v1.WorkerControlService/Session",
        Worker,
        READ,
    ),
    // Servers relay to each other with the peer token (never a worker's).
    rule(
        "/talon.worker.v1.WorkerControlService/RelayCommand",
        Peer,
        MUT,
    ),
    // Infrastructure
    rule("/grpc.health.v1.Health/Check", Public, READ),
    rule("/grpc.health.v1.Health/Watch", Public, READ),
    rule(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        Public,
        READ,
    ),
    rule(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        Public,
        READ,
    ),
];

/// What a sandbox access token may call: the data plane (processes, PTY,
/// files, code contexts, the preview tunnel), and only of its own sandbox, which
/// `AgentProxy` checks. It may not mint file URLs or touch the sandbox's
/// lifecycle.
pub const SANDBOX_TOKEN_METHODS: &[&str] = &[
    "/talon.v1.ProcessService/StartProcess",
    "/talon.v1.ProcessService/ConnectProcess",
    "/talon.v1.ProcessService/ListProcesses",
    "/talon.v1.ProcessService/SendProcessInput",
    "/talon.v1.ProcessService/SendProcessSignal",
    "/talon.v1.ProcessService/CloseProcessStdin",
    "/talon.v1.ProcessService/ResizeProcessPty",
    "/talon.v1.ProcessService/GetProcessLogs",
    "/talon.v1.ProcessService/FollowProcessLogs",
    "/talon.v1.PtyService/Attach",
    "/talon.v1.FilesystemService/Stat",
    "/talon.v1.FilesystemService/ListDir",
    "/talon.v1.FilesystemService/ReadFile",
    "/talon.v1.FilesystemService/WriteFile",
    "/talon.v1.FilesystemService/MakeDir",
    "/talon.v1.FilesystemService/MovePath",
    "/talon.v1.FilesystemService/RemovePath",
    "/talon.v1.FilesystemService/WatchDir",
    "/talon.v1.CodeService/CreateCodeContext",
    "/talon.v1.CodeService/ListCodeContexts",
    "/talon.v1.CodeService/DeleteCodeContext",
    "/talon.v1.CodeService/RestartCodeContext",
    "/talon.v1.CodeService/InterruptCodeContext",
    "/talon.v1.CodeService/RunCode",
    "/talon.gateway.v1.PreviewTunnelService/OpenPreview",
];

pub fn lookup(method: &str) -> Option<&'static MethodRule> {
    static INDEX: OnceLock<HashMap<&'static str, &'static MethodRule>> = OnceLock::new();
    INDEX
        .get_or_init(|| METHODS.iter().map(|r| (r.method, r)).collect())
        .get(method)
        .copied()
}

/// The authorization decision, apart from transport.
pub fn authorize(rule: &MethodRule, p: &Principal) -> Result<(), Status> {
    if p.sandbox_bound().is_some() && !SANDBOX_TOKEN_METHODS.contains(&rule.method) {
        return Err(Status::permission_denied(format!(
            "a sandbox access token may not call {}",
            rule.method
        )));
    }
    let ok = match rule.access {
        Access::Public => true,
        Access::Worker => p.credential == Credential::Worker,
        Access::Peer => p.credential == Credential::Peer,
        Access::PlatformAdmin => !p.credential.is_component() && p.platform_admin,
        Access::Role(r) | Access::RoleOrPreviewToken(r) | Access::RoleOrFileToken(r) => {
            !p.credential.is_component() && p.role.at_least(r)
        }
    };
    if ok {
        Ok(())
    } else {
        Err(Status::permission_denied(format!(
            "{} may not call {}",
            match p.credential {
                Credential::Worker => "a worker".to_string(),
                Credential::Peer => "a peer server".to_string(),
                _ => format!("role {}", p.role),
            },
            rule.method
        )))
    }
}

/// The request id of a call, from `x-request-id` or generated.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

#[derive(Clone)]
pub struct AccessLayer {
    state: Arc<LayerState>,
}

struct LayerState {
    auth: Authenticator,
    audit: AuditLog,
    metrics: Metrics,
}

impl AccessLayer {
    pub fn new(auth: Authenticator, audit: AuditLog, metrics: Metrics) -> Self {
        AccessLayer {
            state: Arc::new(LayerState {
                auth,
                audit,
                metrics,
            }),
        }
    }
}

impl<S> tower::Layer<S> for AccessLayer {
    type Service = AccessService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        AccessService {
            inner,
            state: self.state.clone(),
        }
    }
}

#[derive(Clone)]
pub struct AccessService<S> {
    inner: S,
    state: Arc<LayerState>,
}

fn bearer(req: &http::Request<Body>) -> Option<&str> {
    let v = req
        .headers()
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn request_id(req: &http::Request<Body>) -> String {
    req.headers()
        .get(talon_core::wire::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_string)
        .unwrap_or_else(|| crate::ids::new_id("req"))
}

/// The gRPC outcome of a response: a trailers-only error carries
/// `grpc-status` in its headers; anything else started as OK.
fn outcome(resp: &http::Response<Body>) -> Code {
    resp.headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map(Code::from_i32)
        .unwrap_or(Code::Ok)
}

impl<S> tower::Service<http::Request<Body>> for AccessService<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        // Take the service that was polled ready; leave a clone behind.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        Box::pin(async move {
            let method = req.uri().path().to_string();
            let started = std::time::Instant::now();
            let rid = request_id(&req);
            let span = tracing::info_span!("rpc", method = %method, request_id = %rid);
            let _enter = span.enter();
            drop(_enter);
            let rule = lookup(&method);
            // A method outside the table is counted under one name: its
            // path is the caller's, and a series per path would let anyone
            // add series without end.
            let label = if rule.is_some() {
                method.as_str()
            } else {
                "unknown"
            };
            let deny = |status: Status, state: &LayerState| {
                state.metrics.rpc(label, status.code(), started.elapsed());
                let mut resp = status.into_http::<Body>();
                if let Ok(v) = http::HeaderValue::from_str(&rid) {
                    resp.headers_mut()
                        .insert(talon_core::wire::REQUEST_ID_HEADER, v);
                }
                Ok(resp)
            };
            let Some(rule) = rule else {
                return deny(
                    Status::permission_denied("method is not in the access table"),
                    &state,
                );
            };
            // A token call carries no bearer credential: one that carries
            // both is a user's call (the token is ignored by the handler
            // only when a principal is there).
            let by_token = match rule.access {
                Access::RoleOrPreviewToken(_) => req.headers().contains_key(PREVIEW_TOKEN_HEADER),
                Access::RoleOrFileToken(_) => {
                    req.headers().contains_key(FILE_TOKEN_HEADER) && bearer(&req).is_none()
                }
                _ => false,
            };
            // The request's connection (listener.rs): it counts as
            // authenticated, and the body is let off its pace, once a
            // credential is taken (gRPC client streams are interactive).
            let request_conn = talon_core::listen::RequestConn::of(req.extensions()).cloned();
            let taken = || {
                if let Some(rc) = &request_conn {
                    rc.authenticated();
                    rc.unpace();
                }
            };
            let principal = if rule.access == Access::Public || by_token {
                None
            } else {
                let Some(token) = bearer(&req) else {
                    return deny(
                        Status::unauthenticated("missing `authorization: Bearer` credential"),
                        &state,
                    );
                };
                match state.auth.authenticate(token).await {
                    Ok(p) => Some(p),
                    Err(e) => return deny(Status::unauthenticated(e.to_string()), &state),
                }
            };
            if let Some(p) = &principal {
                if let Err(status) = authorize(rule, p) {
                    if rule.mutating {
                        state
                            .audit
                            .record(AuditRecord::new(p, &method, "", status.code(), &rid))
                            .await;
                    }
                    return deny(status, &state);
                }
                req.extensions_mut().insert(p.clone());
                taken();
            }
            req.extensions_mut().insert(RequestId(rid.clone()));
            let authed = started.elapsed();
            let mut resp = inner.call(req).await?;
            let handled = started.elapsed();
            let code = outcome(&resp);
            // A file or preview token is the handler's to check; a call it
            // started took it.
            if by_token && code == Code::Ok {
                taken();
            }
            state.metrics.rpc(&method, code, started.elapsed());
            if let (true, Some(p)) = (rule.mutating, &principal) {
                let resource = resp
                    .extensions()
                    .get::<AuditResource>()
                    .map(|r| r.0.clone())
                    .unwrap_or_default();
                state
                    .audit
                    .record(AuditRecord::new(p, &method, &resource, code, &rid))
                    .await;
            }
            // Where a call's time goes, for profiling (debug level).
            tracing::debug!(%method, ?authed, ?handled, total = ?started.elapsed(), "call timing");
            if let Ok(v) = http::HeaderValue::from_str(&rid) {
                resp.headers_mut()
                    .insert(talon_core::wire::REQUEST_ID_HEADER, v);
            }
            Ok(resp)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(role: Role, platform_admin: bool, credential: Credential) -> Principal {
        Principal {
            tenant_id: "ten_a".into(),
            user_id: "usr_a".into(),
            email: "a@example.com".into(),
            role,
            credential,
            platform_admin,
        }
    }

    #[test]
    fn table_has_no_duplicates() {
        let mut seen = std::collections::HashSet::new();
        for r in METHODS {
            assert!(seen.insert(r.method), "{} twice", r.method);
        }
    }

    /// Every RPC in the contract has a row, and every row names a real RPC.
    #[test]
    fn table_matches_the_contract() {
        let fds: prost_types::FileDescriptorSet =
            prost::Message::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut contract = std::collections::HashSet::new();
        for f in &fds.file {
            if !(f.package().starts_with("talon.v1")
                || f.package() == "talon.worker.v1"
                || f.package() == "talon.gateway.v1")
            {
                continue;
            }
            // Served by each worker on its data plane, never by the server:
            // it has no row, so the server refuses it like any unknown method.
            for s in f
                .service
                .iter()
                .filter(|s| !matches!(s.name(), "WorkerImageService" | "WorkerSandboxService"))
            {
                for m in &s.method {
                    contract.insert(format!("/{}.{}/{}", f.package(), s.name(), m.name()));
                }
            }
        }
        for m in &contract {
            assert!(lookup(m).is_some(), "{m} has no access rule");
        }
        for r in METHODS.iter().filter(|r| r.method.starts_with("/talon")) {
            assert!(
                contract.contains(r.method),
                "{} is not in the contract",
                r.method
            );
        }
    }

    /// The OpenAPI document marks the same RPCs as needing no credential.
    #[test]
    fn public_rows_match_the_openapi_document() {
        let mut ours: Vec<&str> = METHODS
            .iter()
            .filter(|r| r.access == Public && r.method.starts_with("/talon.v1."))
            .map(|r| r.method)
            .collect();
        ours.sort();
        let mut doc = talon_gateway::openapi::PUBLIC.to_vec();
        doc.sort();
        assert_eq!(ours, doc);
    }

    #[test]
    fn decisions() {
        let create = lookup("/talon.v1.SandboxService/CreateSandbox").unwrap();
        let admin = lookup("/talon.v1.AdminService/ListWorkers").unwrap();
        let session = lookup("/talon.worker.v1.WorkerControlService/Session").unwrap();
        let viewer = principal(Role::Viewer, false, Credential::AccessToken);
        let dev = principal(Role::Developer, false, Credential::AccessToken);
        let owner = principal(Role::Owner, false, Credential::AccessToken);
        let padmin = principal(Role::Owner, true, Credential::AccessToken);
        let worker = principal(Role::Viewer, false, Credential::Worker);
        assert!(authorize(create, &viewer).is_err());
        assert!(authorize(create, &dev).is_ok());
        assert!(authorize(admin, &owner).is_err());
        assert!(authorize(admin, &padmin).is_ok());
        assert!(authorize(session, &padmin).is_err());
        assert!(authorize(session, &worker).is_ok());
        // Only a peer server relays commands; a worker (which has the
        // workers' token) or an admin may not, and a peer is no user.
        let relay = lookup("/talon.worker.v1.WorkerControlService/RelayCommand").unwrap();
        let peer = principal(Role::Viewer, false, Credential::Peer);
        assert!(authorize(relay, &peer).is_ok());
        assert!(authorize(relay, &worker).is_err());
        assert!(authorize(relay, &padmin).is_err());
        assert!(authorize(session, &peer).is_err());
        assert!(authorize(create, &peer).is_err());
        assert!(authorize(create, &worker).is_err());
    }

    /// A sandbox token opens the data plane and nothing else: not the
    /// sandbox's lifecycle, not file URLs, not another tenant's anything.
    #[test]
    fn sandbox_tokens_reach_only_the_data_plane() {
        let token = principal(
            Role::Developer,
            false,
            Credential::SandboxToken {
                sandbox_id: "sbx_a".into(),
            },
        );
        for m in SANDBOX_TOKEN_METHODS {
            let rule = lookup(m).unwrap_or_else(|| panic!("{m} has no access rule"));
            assert!(authorize(rule, &token).is_ok(), "{m}");
        }
        for r in METHODS {
            if !SANDBOX_TOKEN_METHODS.contains(&r.method) {
                assert!(authorize(r, &token).is_err(), "{}", r.method);
            }
        }
        for m in [
            "/talon.v1.SandboxService/DeleteSandbox",
            "/talon.v1.SandboxService/CreateSandboxAccessToken",
            "/talon.v1.FilesystemService/CreateFileUrl",
            "/talon.v1.PreviewService/CreatePreviewToken",
        ] {
            assert!(authorize(lookup(m).unwrap(), &token).is_err(), "{m}");
        }
    }
}
