//! The REST/JSON edge of Talon. Every route comes from a `google.api.http`
//! rule in the descriptor set (see `routes`); a request becomes one gRPC
//! call to the control plane, with the caller's credential passed on, so
//! the gateway holds no policy. What it adds is framing:
//!
//! - unary calls: JSON in, JSON out;
//! - server streams: NDJSON (`application/x-ndjson`), SSE when the client
//!   sends `Accept: text/event-stream`, or the raw `data` bytes with
//!   `Accept: application/octet-stream` (file downloads);
//! - client streams: a JSON object, array or NDJSON of messages, or a raw
//!   `application/octet-stream` body cut into `data` chunks after a first
//!   message made from the path and query (file uploads, process input);
//! - bidirectional streams (the PTY): a WebSocket, text frames carrying
//!   JSON messages and binary frames the raw bytes;
//! - errors: the standard gRPC → HTTP table, `{"code","message","details"}`.
//!
//! It also serves `/openapi.json`, generated from the same protos, and
//! the web console's files at `/console/` (see `console`).

#![forbid(unsafe_code)]

pub mod aliases;
mod calls;
pub mod cdp;
pub mod codec;
pub mod confine;
pub mod console;
mod credentials;
pub mod error;
pub mod jsonseq;
mod metadata;
pub mod openapi;
pub mod preview;
pub mod routes;
pub mod session;
mod streams;
pub mod transcode;
mod tunnel;
mod ws;

use calls::*;
use metadata::*;
use streams::*;
use talon_core::listen::framing;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use prost_reflect::DescriptorPool;
use routes::{Found, Route};
use std::sync::Arc;
use tonic::transport::Channel;
use tonic::{Code, Status};

/// The OpenAPI 3.1 document, as generated (scripts/gen-openapi.sh).
pub const OPENAPI: &str = include_str!("../openapi/openapi.json");

#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// The control plane's gRPC URL, e.g. `http://127.0.0.1:7070`.
    pub server_url: String,
    /// Most bytes of a JSON request body.
    pub max_json_bytes: usize,
    /// Most messages in one JSON client-stream request.
    pub max_stream_messages: usize,
    /// Size of the `data` chunks a raw upload is cut into.
    pub chunk_bytes: usize,
    /// How long a server stream's first message is waited for before the
    /// response starts: an error in that time is an HTTP error; after it,
    /// the stream is under way (a watch may send nothing for minutes).
    pub first_message_wait: std::time::Duration,
    /// Subdomain previews: `{port}-{sandbox}.{preview_domain}`; None
    /// serves path-prefix previews only.
    pub preview_domain: Option<String>,
    /// Users reach the gateway over HTTPS (through a proxy that ends TLS):
    /// what `X-Forwarded-Proto` says to previews.
    pub public_https: bool,
    /// Origins (`scheme://host[:port]`) whose pages may use a browser
    /// session for state-changing calls and WebSockets.
    pub browser_origins: Vec<String>,
    /// Connections: how many at once, from one address, and how long a new
    /// one may stay silent (see `talon_core::listen`).
    pub connections: talon_core::listen::Limits,
    /// How long a request's headers may take to arrive, and how long an
    /// idle keep-alive connection is kept (HTTP/1).
    pub header_timeout: std::time::Duration,
    /// How fast a request body must arrive (see `talon_core::listen::body`).
    pub bodies: talon_core::listen::BodyLimits,
    /// The web console's built files, served at `/console/` (see
    /// `console`); None serves none.
    pub console_dir: Option<std::path::PathBuf>,
}

impl GatewayConfig {
    pub fn new(server_url: impl Into<String>) -> Self {
        GatewayConfig {
            server_url: server_url.into(),
            max_json_bytes: 16 << 20,
            max_stream_messages: 10_000,
            chunk_bytes: 1 << 20,
            first_message_wait: std::time::Duration::from_millis(250),
            preview_domain: None,
            public_https: false,
            browser_origins: Vec::new(),
            connections: Default::default(),
            header_timeout: std::time::Duration::from_secs(30),
            bodies: Default::default(),
            console_dir: None,
        }
    }
}

pub struct Gateway {
    pool: DescriptorPool,
    routes: Vec<Route>,
    channel: Channel,
    config: GatewayConfig,
    /// Credentials the server took lately (see `credentials`).
    checked: talon_core::listen::CheckedCredentials,
}

impl Gateway {
    pub fn new(config: GatewayConfig) -> anyhow::Result<Arc<Gateway>> {
        let pool = DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET)?;
        let routes = routes::table(&pool)?;
        let channel = tonic::transport::Endpoint::from_shared(config.server_url.clone())?
            .tcp_nodelay(true)
            .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
            .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
            .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
            .connect_lazy();
        Ok(Arc::new(Gateway {
            pool,
            routes,
            channel,
            config,
            checked: Default::default(),
        }))
    }

    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

/// Serves the gateway on `listener` until `shutdown` turns true, within
/// its connection limits (`talon_core::listen`): a connection over them
/// is closed on accept, a silent one after the first-byte time, an
/// unauthenticated idle one after the idle time, and an HTTP/1 connection
/// whose headers (or next request, when idle) take longer than the header
/// timeout is closed too; request bodies are paced. Open connections
/// finish after a shutdown.
pub async fn serve(
    gw: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    let admission = talon_core::listen::Admission::new(gw.config.connections);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(gw.config.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(gw.config.connections.keepalive_interval())
        .keep_alive_timeout(gw.config.connections.keepalive_timeout)
        .max_header_list_size(64 << 10)
        .enable_connect_protocol();
    let builder = Arc::new(builder);
    let (header_timeout, bodies) = (gw.config.header_timeout, gw.config.bodies);
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(gw)
        .layer(axum::middleware::from_fn(
            |req: axum::extract::Request, next: axum::middleware::Next| {
                talon_core::listen::trace::traced("rest", req, |r| next.run(r))
            },
        ));
    loop {
        let (io, peer) = tokio::select! {
            r = admission.accept(&listener) => r?,
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        };
        let (app, builder, conn) = (app.clone(), builder.clone(), io.conn());
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                    req.extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    let (req, in_flight) = talon_core::listen::track(&conn, bodies, req);
                    let (app, conn) = (app.clone(), conn.clone());
                    async move {
                        let resp = tower::ServiceExt::oneshot(app, req.map(Body::new)).await?;
                        if resp.status() == http::StatusCode::SWITCHING_PROTOCOLS {
                            conn.upgraded();
                        }
                        let tracked = talon_core::listen::Tracked::new;
                        Ok::<_, std::convert::Infallible>(
                            resp.map(|b| Body::new(tracked(b, in_flight))),
                        )
                    }
                });
            let _ = builder
                .serve_connection_with_upgrades(
                    TokioIo::new(framing::Followed::new(io, header_timeout)),
                    svc,
                )
                .await;
        });
    }
}

/// An answer given before the request's body was read: what of the body
/// keeps coming is read for a moment first, so a client still writing a
/// small one reads the answer rather than a reset (see
/// `talon_core::listen::body::drain`); a stalled one is answered at once.
async fn refuse(gw: &Gateway, s: &Status, mut body: Body) -> Response {
    use std::time::Duration;
    let ended = talon_core::listen::body::drain(
        &mut body,
        1 << 20,
        Duration::from_millis(200),
        Duration::from_secs(2),
    )
    .await;
    let mut r = error::response(&gw.pool, s);
    if !ended {
        r.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    r
}

fn grpc_path(route: &Route) -> http::uri::PathAndQuery {
    route.grpc_path().parse().expect("method paths are valid")
}

/// Every request: a preview's answer is the sandbox's, confined as
/// `preview` says; every other answer is the gateway's or inert data, and
/// no browser guesses its type.
async fn handle(
    axum::extract::State(gw): axum::extract::State<Arc<Gateway>>,
    req: http::Request<Body>,
) -> Response {
    // What `framing` made of a request with two framings.
    if req.uri().path() == framing::REFUSED_PATH {
        let mut r = error::response(
            &gw.pool,
            &Status::invalid_argument(
                "a request may not carry both Transfer-Encoding and Content-Length",
            ),
        );
        *r.status_mut() = http::StatusCode::BAD_REQUEST;
        confine::every_answer(r.headers_mut());
        return r;
    }

    let host = req
        .headers()
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(t) = preview::target(
        gw.config.preview_domain.as_deref(),
        host.as_deref(),
        req.uri().path(),
    ) {
        let client = req
            .extensions()
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0);
        return match t {
            Ok(t) => preview::handle(&gw, t, client, req).await,
            Err(s) => error::response(&gw.pool, &s),
        };
    }
    if console::target(req.uri().path()) {
        let mut r = console::handle(
            gw.config.console_dir.as_deref(),
            req.method(),
            req.uri().path(),
        )
        .await;
        confine::every_answer(r.headers_mut());
        return r;
    }
    let mut r = if let Some(t) = cdp::target(req.uri().path()) {
        match t {
            Ok(t) => cdp::handle(&gw, t, req).await,
            Err(s) => error::response(&gw.pool, &s),
        }
    } else {
        api(gw, req).await
    };
    confine::every_answer(r.headers_mut());
    r
}

/// A call of the public API.
async fn api(gw: Arc<Gateway>, req: http::Request<Body>) -> Response {
    let (mut parts, body) = req.into_parts();
    let session_path = parts.uri.path() == session::SIGN_IN_PATH;
    let signing_out = session_path && parts.method == http::Method::DELETE;
    if session_path && parts.method == http::Method::POST {
        if let Err(st) = session::sign_in(&gw.config.browser_origins, &mut parts.headers) {
            return refuse(&gw, &st, body).await;
        }
    } else if signing_out
        && session::credential(&parts.headers).is_some()
        && let Err(st) = session::sign_out(&gw.config.browser_origins, &parts.headers)
    {
        return refuse(&gw, &st, body).await;
    }
    if let Some(cookie) = session::credential(&parts.headers).filter(|_| !signing_out)
        && let Err(st) = session::check(
            &gw.config.browser_origins,
            &parts.method,
            &parts.headers,
            &cookie,
        )
    {
        return error::response(&gw.pool, &st);
    }
    let path = parts.uri.path().to_string();
    if path == "/openapi.json" && parts.method == http::Method::GET {
        return ([(http::header::CONTENT_TYPE, "application/json")], OPENAPI).into_response();
    }
    let (route, vars) = match routes::find(&gw.routes, &parts.method, &path) {
        Found::Route(r, v) => (r.clone(), v),
        Found::WrongVerb(allowed) => {
            let allow = allowed
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let mut r = error::response(
                &gw.pool,
                &Status::new(
                    Code::Unimplemented,
                    format!("{} is not allowed here", parts.method),
                ),
            );
            *r.status_mut() = http::StatusCode::METHOD_NOT_ALLOWED;
            if let Ok(v) = allow.parse() {
                r.headers_mut().insert(http::header::ALLOW, v);
            }
            return r;
        }
        Found::None => {
            return error::response(
                &gw.pool,
                &Status::not_found(format!("no route for {} {path}", parts.method)),
            );
        }
    };
    let m = route.method.clone();
    metadata::take_file_token(m.full_name(), &mut parts);
    if let Err(s) = credentials::check(&gw, &route, &parts).await {
        return refuse(&gw, &s, body).await;
    }
    let result = match (m.is_client_streaming(), m.is_server_streaming()) {
        (true, true) => {
            use axum::extract::FromRequestParts;
            match axum::extract::ws::WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
                Ok(upgrade) => return ws::bridge(gw, route, vars, parts, upgrade).await,
                Err(_) => Err(Status::invalid_argument(
                    "this is a bidirectional stream: open it as a WebSocket",
                )),
            }
        }
        (false, server_streaming) => match first_message(&gw, &route, &vars, &parts, body).await {
            Ok(msg) if server_streaming => server_stream(&gw, &route, &parts, msg).await,
            Ok(msg) => unary(&gw, &route, &parts, msg).await,
            Err(e) => Err(e),
        },
        (true, false) => client_stream(&gw, &route, &vars, &parts, body).await,
    };
    match result {
        Ok(r) => r,
        Err(s) => error::response(&gw.pool, &s),
    }
}
