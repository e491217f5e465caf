//! Talon's E2B-compatible API: an edge beside the REST gateway that speaks
//! what E2B's SDKs speak, so code written against the unmodified `e2b`
//! SDKs runs on Talon by setting `E2B_API_URL` and `E2B_SANDBOX_URL`. Like the gateway it is a client of the
//! public gRPC contract and nothing else: the caller's API key is the
//! credential of every call, so authorization, quotas and audit are the
//! server's, with no back door around them.
//!
//! - `control`: E2B's control plane (`/sandboxes`, `/v2/sandboxes`, …);
//! - `credential`: the API key, and every credential's check before any
//!   body is read;
//! - `envd`: the sandbox data plane, authorized by each sandbox's access
//!   token instead of the API key (see envd/mod.rs);
//! - `model`: its JSON; `network`: its network options as egress policy;
//! - `ids`: E2B's DNS-label ids and Talon's; `error`: its error shape.

mod control;
mod credential;
mod envd;
pub use envd::filesystem::WatcherLimits;
mod error;
mod ids;
mod model;
mod network;
mod snapshots;
pub mod tls;

use axum::Router;
use axum::routing::{get, post, put};
use std::sync::Arc;
use std::time::Duration;
use talon_core::listen::framing;

pub use error::ApiError;

/// `clientID` in E2B's answers: the cluster that holds the sandbox.
const CLIENT_ID: &str = "talon";

/// The envd version the facade reports. E2B's SDKs gate features on it
/// (and refuse a sandbox below 0.1.0), so it is the highest version whose
/// features the facade really serves: recursive watch (0.1.4), commands
/// without stdin (0.3.0), the default user server-side (0.4.0),
/// CloseStdin (0.5.2) and octet-stream uploads (0.5.7). File metadata
/// (0.6.2, xattrs from `X-Metadata-*`) is not served, nor the entry in
/// watch events (0.6.3).
const ENVD_VERSION: &str = "0.5.7";

/// How the E2B API is served; `E2bConfig::new` has every default.
#[derive(Clone, Debug)]
pub struct E2bConfig {
    /// The control plane's gRPC address.
    pub server_url: String,
    /// The image `base` (E2B's default template) stands for.
    pub default_template: String,
    /// The domain reported to the SDKs (`domain`), and of host-name
    /// routing on the sandbox listener; it may end in `:port` (a default
    /// `talon up` reports `localhost:{sandbox listener's port}`), which
    /// routing ignores. None leaves it unset: the SDKs then fall back on
    /// `E2B_DOMAIN`, whose default is E2B's cloud.
    pub domain: Option<String>,
    /// A create's `timeout` when it sends none, in seconds (E2B's 300).
    pub default_timeout_secs: u64,
    /// How long a create waits for its sandbox to run.
    pub create_wait_secs: u64,
    /// The most `limit` of `GET /v2/sandboxes` may be, and its default.
    pub max_list_limit: i32,
    /// The most sandboxes `GET /sandboxes` (which has no paging) answers.
    pub max_v1_list: usize,
    /// Polling file watchers (sync Python's `watch_dir`): how many,
    /// what each keeps unread, how long an unpolled one is kept.
    pub watchers: envd::filesystem::WatcherLimits,
    /// TLS on both listeners (`tls::server_config`); None serves plain HTTP.
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
    /// Connections, header timeout and body pace, as on every listener.
    pub connections: talon_core::listen::Limits,
    pub header_timeout: Duration,
    pub bodies: talon_core::listen::BodyLimits,
}

impl E2bConfig {
    pub fn new(server_url: impl Into<String>) -> E2bConfig {
        E2bConfig {
            server_url: server_url.into(),
            default_template: talon_core::image::HOST_IMAGE.into(),
            domain: None,
            default_timeout_secs: 300,
            create_wait_secs: 60,
            max_list_limit: 100,
            max_v1_list: 10_000,
            tls: None,
            watchers: Default::default(),
            connections: talon_core::listen::Limits::default(),
            header_timeout: Duration::from_secs(30),
            bodies: Default::default(),
        }
    }
}

/// The E2B API's state: its configuration and one channel to the server.
pub struct E2b {
    config: E2bConfig,
    channel: tonic::transport::Channel,
    /// The data plane's polling file watchers.
    watchers: envd::filesystem::Watchers,
    /// Credentials the server took lately (see `credential`).
    checked: talon_core::listen::CheckedCredentials,
}

impl E2b {
    pub fn new(config: E2bConfig) -> anyhow::Result<Arc<E2b>> {
        let channel = tonic::transport::Endpoint::from_shared(config.server_url.clone())?
            .tcp_nodelay(true)
            .connect_lazy();
        let watchers = envd::filesystem::Watchers::new(config.watchers);
        Ok(Arc::new(E2b {
            config,
            channel,
            watchers,
            checked: Default::default(),
        }))
    }
}

/// The control plane's routes.
pub fn router(e: Arc<E2b>) -> Router {
    Router::new()
        .route("/sandboxes", post(control::create).get(control::list_v1))
        .route("/v2/sandboxes", post(control::create).get(control::list_v2))
        .route("/sandboxes/{id}", get(control::get).delete(control::kill))
        .route("/sandboxes/{id}/timeout", post(control::set_timeout))
        .route("/sandboxes/{id}/pause", post(control::pause))
        .route("/sandboxes/{id}/connect", post(control::connect))
        .route("/v2/sandboxes/{id}/connect", post(control::connect))
        .route("/sandboxes/{id}/resume", post(control::resume))
        .route("/sandboxes/{id}/metrics", get(control::metrics))
        .route("/sandboxes/{id}/network", put(control::update_network))
        .route(
            "/sandboxes/{id}/snapshots",
            post(snapshots::create_snapshot),
        )
        .route("/sandboxes/{id}/fork", post(snapshots::fork))
        .route("/snapshots", get(snapshots::list_snapshots))
        .route(
            "/templates/{id}",
            axum::routing::delete(snapshots::delete_template),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            e.clone(),
            credential::control,
        ))
        .fallback(control::unsupported)
        .with_state(e)
}

/// A domain without its `:port`, as host names are matched against it.
pub(crate) fn host_of(domain: &str) -> &str {
    match domain.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => domain,
    }
}

/// The sandbox listener's routes: envd's, for every sandbox, and, under a
/// configured domain, the control plane for the host `api.{domain}` (so
/// one listener on 443 serves an SDK given only `E2B_DOMAIN`).
pub fn sandbox_router(e: Arc<E2b>) -> Router {
    let control = router(e.clone());
    let api_host = e
        .config
        .domain
        .as_deref()
        .map(|d| format!("api.{}", host_of(d)));
    Router::new()
        .fallback(
            move |state: axum::extract::State<Arc<E2b>>, req: axum::extract::Request| {
                let (control, api_host) = (control.clone(), api_host.clone());
                async move {
                    let host = req
                        .headers()
                        .get(http::header::HOST)
                        .and_then(|v| v.to_str().ok())
                        .map(|h| h.rsplit_once(':').map_or(h, |(h, _)| h).to_string())
                        .or_else(|| req.uri().host().map(String::from));
                    if api_host.is_some() && host == api_host {
                        use axum::response::IntoResponse;
                        return match tower::ServiceExt::oneshot(control, req).await {
                            Ok(r) => r.into_response(),
                            Err(never) => match never {},
                        };
                    }
                    envd::dispatch(state, req).await
                }
            },
        )
        .with_state(e)
}

/// `app` with each request served in its span, its failures logged there
/// (`talon_core::listen::trace`).
fn traced(app: Router, edge: &'static str) -> Router {
    app.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            talon_core::listen::trace::traced(edge, req, |r| next.run(r))
        },
    ))
}

/// Serves the control plane on `listener` until `shutdown` turns true.
pub async fn serve(
    e: Arc<E2b>,
    listener: tokio::net::TcpListener,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let config = e.config.clone();
    serve_app(traced(router(e), "e2b"), &config, listener, shutdown).await
}

/// Serves the sandbox data plane (`E2B_SANDBOX_URL`) on `listener`.
pub async fn serve_sandbox(
    e: Arc<E2b>,
    listener: tokio::net::TcpListener,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let config = e.config.clone();
    serve_app(
        traced(sandbox_router(e), "e2b-sandbox"),
        &config,
        listener,
        shutdown,
    )
    .await
}

async fn serve_app(
    app: Router,
    config: &E2bConfig,
    listener: tokio::net::TcpListener,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    let admission = talon_core::listen::Admission::new(config.connections);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    // As on the REST gateway: HTTP/2 headers held to 64 KiB, and dead
    // peers found by pings. Bodies are axum's 2 MiB at most (JSON here),
    // and paced (`talon_core::listen::body`).
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(config.connections.keepalive_interval())
        .keep_alive_timeout(config.connections.keepalive_timeout)
        .max_header_list_size(64 << 10);
    let builder = Arc::new(builder);
    let tls = config.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let (header_timeout, bodies) = (config.header_timeout, config.bodies);
    loop {
        let (io, _peer) = tokio::select! {
            r = admission.accept(&listener) => r?,
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        };
        let (app, builder, tls) = (app.clone(), builder.clone(), tls.clone());
        let conn = io.conn();
        tokio::spawn(async move {
            // Each request is taken on its connection: paced, and in
            // flight until its response is done.
            let svc =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (app, conn) = (app.clone(), conn.clone());
                    async move {
                        if req.uri().path() == framing::REFUSED_PATH {
                            return Ok(two_framings());
                        }
                        let (req, in_flight) = talon_core::listen::track(&conn, bodies, req);
                        let resp =
                            tower::ServiceExt::oneshot(app, req.map(axum::body::Body::new)).await?;
                        if resp.status() == http::StatusCode::SWITCHING_PROTOCOLS {
                            conn.upgraded();
                        }
                        let tracked = talon_core::listen::Tracked::new;
                        Ok::<_, std::convert::Infallible>(
                            resp.map(|b| axum::body::Body::new(tracked(b, in_flight))),
                        )
                    }
                });
            // HTTP/1 requests are followed on the bytes, under TLS, to
            // refuse two framings (see `talon_core::listen::framing`).
            match tls {
                Some(acceptor) => {
                    // A handshake is held to the header timeout.
                    let Ok(Ok(io)) =
                        tokio::time::timeout(header_timeout, acceptor.accept(io)).await
                    else {
                        return;
                    };
                    let io = framing::Followed::new(io, header_timeout);
                    let _ = builder.serve_connection(TokioIo::new(io), svc).await;
                }
                None => {
                    let io = framing::Followed::new(io, header_timeout);
                    let _ = builder.serve_connection(TokioIo::new(io), svc).await;
                }
            }
        });
    }
}

/// The answer to a request with both `Transfer-Encoding` and
/// `Content-Length`, as the REST gateway gives it: a 400 (in E2B's error
/// shape); the request it was made into says `connection: close`.
fn two_framings() -> axum::response::Response {
    use axum::response::IntoResponse;
    ApiError::bad_request("a request may not carry both Transfer-Encoding and Content-Length")
        .into_response()
}
