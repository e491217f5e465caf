//! E2B's sandbox data plane (envd) on the sandbox listener
//! (`E2B_SANDBOX_URL`): envd's Connect services and plain-HTTP routes onto
//! Talon's ProcessService and FilesystemService.
//!
//! A request names its sandbox by the `E2b-Sandbox-Id` and
//! `E2b-Sandbox-Port` headers or by a host name `{port}-{id}.{domain}`. Its
//! credential is the sandbox's access token (`X-Access-Token`, the
//! `envdAccessToken` create and connect return), passed on as the bearer
//! of every gRPC call: the server lets it reach that one sandbox's data
//! plane and nothing else. The facade keeps no credential of its own.
//!
//! - `connect`: the Connect protocol (JSON, envelopes);
//! - `process`, `filesystem`: the two services; `files`: `/files`;
//! - `code`: the code interpreter's port (49999), onto CodeService;
//! - `ports`: every other port, through the preview tunnel.

mod code;
mod connect;
mod files;
pub(crate) mod filesystem;
mod ports;
mod process;

use crate::E2b;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use connect::ConnectError;
use http::{HeaderMap, Method, StatusCode};
use std::sync::Arc;
use std::time::Duration;
use tonic::Code;

/// envd's generated types and descriptor set.
#[allow(clippy::all, clippy::pedantic)]
pub mod pb {
    pub mod process {
        include!(concat!(env!("OUT_DIR"), "/process.rs"));
    }
    pub mod filesystem {
        include!(concat!(env!("OUT_DIR"), "/filesystem.rs"));
    }
    pub const DESCRIPTOR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/envd_descriptor.bin"));
}

/// The port envd listens on in an E2B sandbox; the SDKs send it.
pub const ENVD_PORT: u16 = 49983;

/// What one data-plane request is for, and with whose credential.
pub struct Ctx {
    pub e: Arc<E2b>,
    /// Talon's id of the sandbox.
    pub sandbox_id: String,
    /// E2B's id, for messages.
    pub e2b_id: String,
    /// The sandbox access token.
    pub token: String,
    /// The user from `Authorization: Basic`, else E2B's default.
    pub user: String,
    /// `Connect-Timeout-Ms`: a process's deadline, a stream's lifetime.
    pub timeout: Option<Duration>,
    /// `Keepalive-Ping-Interval` (seconds) of streams.
    pub keepalive: Option<Duration>,
}

impl Ctx {
    /// A gRPC request carrying the sandbox's token.
    pub fn req<T>(&self, msg: T) -> Result<tonic::Request<T>, ConnectError> {
        let mut r = tonic::Request::new(msg);
        let v = crate::credential::bearer(&self.token)
            .ok_or_else(|| ConnectError::new(Code::Unauthenticated, "invalid X-Access-Token"))?;
        r.metadata_mut().insert("authorization", v);
        Ok(r)
    }

    /// The absolute path an E2B path names for this call's user.
    pub fn path(&self, p: &str) -> String {
        talon_core::e2b_files::resolve(p, &self.user)
    }

    pub fn channel(&self) -> tonic::transport::Channel {
        self.e.channel.clone()
    }
}

/// Where a request goes: the sandbox (E2B id) and the port in it.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    e2b_id: String,
    port: u16,
}

/// The sandbox and port a request names: the routing headers, or a host
/// name `{port}-{id}.{domain}` under the configured domain.
fn target(domain: Option<&str>, h: &HeaderMap) -> Option<Target> {
    let header = |n: &str| h.get(n).and_then(|v| v.to_str().ok());
    if let Some(id) = header("e2b-sandbox-id") {
        let port = header("e2b-sandbox-port")
            .map(|p| p.parse().ok())
            .unwrap_or(Some(ENVD_PORT))?;
        return Some(Target {
            e2b_id: id.to_string(),
            port,
        });
    }
    let host = header("host")?;
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let label = host
        .strip_suffix(crate::host_of(domain?))?
        .strip_suffix('.')?;
    let (port, id) = label.split_once('-')?;
    if label.contains('.') {
        return None;
    }
    Some(Target {
        e2b_id: id.to_string(),
        port: port.parse().ok()?,
    })
}

/// The user `Authorization: Basic base64("user:")` names; E2B's default
/// when there is none.
fn basic_user(h: &HeaderMap) -> Result<String, ConnectError> {
    use base64::Engine;
    let Some(v) = h.get(http::header::AUTHORIZATION) else {
        return Ok(talon_core::e2b_files::DEFAULT_USER.into());
    };
    let bad = || ConnectError::new(Code::Unauthenticated, "invalid Authorization header");
    let b64 = v
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Basic "))
        .ok_or_else(bad)?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|_| bad())?;
    let text = String::from_utf8(raw).map_err(|_| bad())?;
    let user = text.split_once(':').map_or(text.as_str(), |(u, _)| u);
    Ok(if user.is_empty() {
        talon_core::e2b_files::DEFAULT_USER.into()
    } else {
        user.to_string()
    })
}

/// A plain (non-Connect) error as envd and E2B's proxy write it:
/// `{"code": status, "message": …}`.
pub(crate) fn plain(status: StatusCode, message: impl Into<String>) -> Response {
    let message = message.into();
    talon_core::listen::trace::failed(status, &message);
    let body = serde_json::json!({"code": status.as_u16(), "message": message});
    (status, axum::Json(body)).into_response()
}

/// E2B's proxy answer for a sandbox that is not there: the SDKs read
/// "was not found" in a 502 as "the sandbox is not running".
pub fn sandbox_not_found(e2b_id: &str) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        axum::Json(serde_json::json!({
            "sandboxId": e2b_id,
            "message": "The sandbox was not found",
            "code": 502,
        })),
    )
        .into_response()
}

/// Every request of the sandbox listener.
pub async fn dispatch(State(e): State<Arc<E2b>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let t = match target(e.config.domain.as_deref(), &parts.headers) {
        Some(t) => t,
        // A signed file URL names no sandbox when E2B_SANDBOX_URL serves
        // every sandbox at one address (the SDKs' download_url and
        // upload_url): its signature, made with one sandbox's token,
        // names it, and the server finds which.
        None if parts.uri.path() == "/files" && files::signed(parts.uri.query()) => Target {
            e2b_id: String::new(),
            port: ENVD_PORT,
        },
        None => {
            return refuse(
                body,
                ConnectError::invalid(
                    "name the sandbox with the E2b-Sandbox-Id header or a {port}-{id} host name",
                )
                .into_response(),
            )
            .await;
        }
    };
    let sandbox_id = if t.e2b_id.is_empty() {
        String::new()
    } else {
        match crate::ids::to_talon(&t.e2b_id) {
            Some(id) => id,
            None => return refuse(body, sandbox_not_found(&t.e2b_id)).await,
        }
    };
    let header = |n: &str| parts.headers.get(n).and_then(|v| v.to_str().ok());
    // On another port, `Authorization` is the application's own.
    let user = if t.port == ENVD_PORT {
        match basic_user(&parts.headers) {
            Ok(u) => u,
            Err(err) => return refuse(body, err.into_response()).await,
        }
    } else {
        String::new()
    };
    let ms = |n: &str| {
        header(n)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|v| *v > 0)
    };
    let mut ctx = Ctx {
        e: e.clone(),
        sandbox_id,
        e2b_id: t.e2b_id.clone(),
        token: header("x-access-token").unwrap_or_default().to_string(),
        user,
        timeout: ms("connect-timeout-ms").map(Duration::from_millis),
        keepalive: ms("keepalive-ping-interval").map(Duration::from_secs),
    };
    // Every port but envd's also takes E2B's traffic token.
    if t.port != ENVD_PORT && ctx.token.is_empty() {
        ctx.token = header("e2b-traffic-access-token")
            .unwrap_or_default()
            .to_string();
    }
    // The token is checked before anything reads the body (a request
    // without one is refused below, or `/files` takes a signature, which
    // the server checks before the upload's data is read).
    if !ctx.token.is_empty()
        && let Err(st) = crate::credential::check(&e, &ctx.token, &parts.extensions).await
    {
        let no = if t.port == ENVD_PORT && parts.uri.path() != "/files" {
            ConnectError::from(st).into_response()
        } else {
            plain(crate::error::status_of(st.code()), st.message())
        };
        return refuse(body, no).await;
    }
    if t.port == code::CODE_PORT {
        let path = parts.uri.path().to_string();
        return code::call(ctx, parts.method, &path, body).await;
    }
    if t.port != ENVD_PORT {
        return ports::forward(ctx, t.port, Request::from_parts(parts, body)).await;
    }
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or_default().to_string();
    // `/files` may be opened by a signature instead of the token.
    if path == "/files" {
        return match parts.method {
            Method::GET => files::download(ctx, parts.headers, query).await,
            Method::POST => files::upload(ctx, parts.headers, query, body).await,
            _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        };
    }
    if ctx.token.is_empty() {
        let no = ConnectError::new(Code::Unauthenticated, "missing X-Access-Token");
        return refuse(body, no.into_response()).await;
    }
    if path == "/health" {
        return files::health(ctx).await;
    }
    if parts.method != Method::POST {
        return refuse(body, StatusCode::METHOD_NOT_ALLOWED.into_response()).await;
    }
    let stream = header("content-type").is_some_and(|c| c.starts_with("application/connect+"));
    // A process's input stream is interactive: with its token taken, its
    // body is let off the pace (`talon_core::listen::body`).
    if path == "/process.Process/StreamInput"
        && let Some(rc) = talon_core::listen::RequestConn::of(&parts.extensions)
    {
        rc.unpace();
    }
    if let Some(m) = path.strip_prefix("/process.Process/") {
        return process::call(ctx, m, stream, body).await;
    }
    if let Some(m) = path.strip_prefix("/filesystem.Filesystem/") {
        return filesystem::call(ctx, m, stream, body).await;
    }
    let no = ConnectError::new(
        Code::Unimplemented,
        format!("{path} is not an envd procedure"),
    );
    refuse(body, no.into_response()).await
}

/// An answer given before the request's body was read: what of the body
/// keeps coming is read for a moment first (up to a message's size), so
/// the client is not still writing it when the connection closes under it
/// (it would see a broken pipe, not the answer); a body that stalls is
/// answered at once, and the connection closed.
pub(crate) async fn refuse(mut body: Body, mut answer: Response) -> Response {
    let drained = talon_core::listen::body::drain(
        &mut body,
        connect::MAX_MESSAGE,
        Duration::from_millis(200),
        Duration::from_secs(2),
    )
    .await;
    if !drained {
        answer.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    answer
}

/// A unary call's body, held to the message limit.
pub async fn unary_body(body: Body) -> Result<bytes::Bytes, ConnectError> {
    axum::body::to_bytes(body, connect::MAX_MESSAGE)
        .await
        .map_err(|e| ConnectError::invalid(format!("request body: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn targets_by_header_and_by_host() {
        let t = target(None, &headers(&[("e2b-sandbox-id", "abc")])).unwrap();
        assert_eq!((t.e2b_id.as_str(), t.port), ("abc", ENVD_PORT));
        let t = target(
            None,
            &headers(&[("e2b-sandbox-id", "abc"), ("e2b-sandbox-port", "3000")]),
        )
        .unwrap();
        assert_eq!(t.port, 3000);
        assert!(
            target(
                None,
                &headers(&[("e2b-sandbox-id", "abc"), ("e2b-sandbox-port", "x")])
            )
            .is_none()
        );
        let h = headers(&[("host", "3000-abc.sbx.example.com:443")]);
        let t = target(Some("sbx.example.com"), &h).unwrap();
        assert_eq!((t.e2b_id.as_str(), t.port), ("abc", 3000));
        // No domain configured, another domain, or a deeper name: none.
        assert!(target(None, &h).is_none());
        assert!(target(Some("example.org"), &h).is_none());
        let deep = headers(&[("host", "3000-abc.x.sbx.example.com")]);
        assert!(target(Some("sbx.example.com"), &deep).is_none());
        // A domain reported with its port routes by the host alone.
        let local = headers(&[("host", "8000-abc.localhost:8082")]);
        let t = target(Some("localhost:8082"), &local).unwrap();
        assert_eq!((t.e2b_id.as_str(), t.port), ("abc", 8000));
        assert!(target(Some("localhost:8082"), &h).is_none());
    }

    #[test]
    fn users_from_basic_auth() {
        assert_eq!(basic_user(&headers(&[])).unwrap(), "user");
        // "root:" and ":".
        assert_eq!(
            basic_user(&headers(&[("authorization", "Basic cm9vdDo=")])).unwrap(),
            "root"
        );
        assert_eq!(
            basic_user(&headers(&[("authorization", "Basic Og==")])).unwrap(),
            "user"
        );
        assert!(basic_user(&headers(&[("authorization", "Bearer x")])).is_err());
    }
}
