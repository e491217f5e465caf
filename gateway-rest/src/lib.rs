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
//! It also serves `/openapi.json`, generated from the same protos.

pub mod aliases;
pub mod codec;
pub mod error;
pub mod framing;
pub mod jsonseq;
pub mod openapi;
pub mod preview;
pub mod routes;
pub mod session;
pub mod transcode;
mod ws;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use codec::DynCodec;
use futures::StreamExt;
use prost_reflect::{
    DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value as PValue,
};
use routes::{BodyRule, Found, Route};
use serde_json::{Map, Value};
use std::sync::Arc;
use tonic::metadata::MetadataMap;
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
        }
    }
}

pub struct Gateway {
    pool: DescriptorPool,
    routes: Vec<Route>,
    channel: Channel,
    config: GatewayConfig,
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
        }))
    }

    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

/// Serves the gateway on `listener` until `shutdown` turns true, within
/// its connection limits: a connection over them is closed on accept, a
/// silent one after the first-byte time, and an HTTP/1 connection whose
/// headers (or next request, when idle) take longer than the header
/// timeout is closed too. Open connections finish after a shutdown.
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
        .keep_alive_interval(Some(std::time::Duration::from_secs(30)))
        .max_header_list_size(64 << 10)
        .enable_connect_protocol();
    let builder = Arc::new(builder);
    let header_timeout = gw.config.header_timeout;
    let app = axum::Router::new().fallback(handle).with_state(gw);
    loop {
        let (io, peer) = tokio::select! {
            r = admission.accept(&listener) => r?,
            _ = shutdown.wait_for(|s| *s) => return Ok(()),
        };
        let (app, builder) = (app.clone(), builder.clone());
        tokio::spawn(async move {
            let svc =
                hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                    req.extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    tower::ServiceExt::oneshot(app.clone(), req.map(Body::new))
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

/// Response metadata that names things travels back as headers.
pub(crate) fn copy_metadata(md: &MetadataMap, h: &mut http::HeaderMap) {
    for kv in md.iter() {
        if let tonic::metadata::KeyAndValueRef::Ascii(k, v) = kv {
            let name = k.as_str();
            if (name == talon_core::wire::REQUEST_ID_HEADER || name.starts_with("talon-"))
                && let (Ok(n), Ok(v)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    http::HeaderValue::from_bytes(v.as_encoded_bytes()),
                )
            {
                h.insert(n, v);
            }
        }
    }
}

/// The caller's credential and request id, as gRPC metadata: the
/// credential is an explicit one (a WebSocket's bearer subprotocol, the
/// Authorization header) or the browser session's cookie, which `handle`
/// has checked (see `session`).
fn request_metadata(h: &http::HeaderMap, bearer: Option<&str>) -> MetadataMap {
    let mut md = MetadataMap::new();
    let auth = bearer
        .map(|t| format!("Bearer {t}"))
        .or_else(|| {
            h.get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        })
        .or_else(|| session::credential(h).map(|t| format!("Bearer {t}")));
    if let Some(v) = auth.and_then(|a| a.parse().ok()) {
        md.insert("authorization", v);
    }
    if let Some(v) = h
        .get(talon_core::wire::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
    {
        md.insert(talon_core::wire::REQUEST_ID_HEADER, v);
    }
    md
}

fn with_metadata<T>(msg: T, md: &MetadataMap) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    *r.metadata_mut() = md.clone();
    r
}

fn grpc_path(route: &Route) -> http::uri::PathAndQuery {
    route.grpc_path().parse().expect("method paths are valid")
}

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
    let (mut parts, body) = req.into_parts();
    if let Some(cookie) = session::credential(&parts.headers)
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

fn is_json(parts: &http::request::Parts) -> bool {
    parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|t| t.starts_with("application/json") || t.contains("ndjson"))
}

async fn read_body(gw: &Gateway, body: Body) -> Result<Bytes, Status> {
    axum::body::to_bytes(body, gw.config.max_json_bytes)
        .await
        .map_err(|e| {
            Status::invalid_argument(format!(
                "request body (at most {} bytes of JSON): {e}",
                gw.config.max_json_bytes
            ))
        })
}

/// Path variables and query parameters as a JSON object for `desc`.
fn bindings(
    desc: &MessageDescriptor,
    vars: &[(String, String)],
    query: Option<&str>,
    header_fallback: bool,
) -> Result<Map<String, Value>, Status> {
    let mut obj = Map::new();
    transcode::bind_query(desc, &mut obj, query, header_fallback)?;
    // Path variables win over anything else that names the same field.
    for (field, raw) in vars {
        transcode::bind(desc, &mut obj, field, &transcode::decode(raw)?)?;
    }
    Ok(obj)
}

/// Merges `over` into `base`, objects recursively.
fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The request of a unary or server-streaming call.
async fn first_message(
    gw: &Gateway,
    route: &Route,
    vars: &[(String, String)],
    parts: &http::request::Parts,
    body: Body,
) -> Result<DynamicMessage, Status> {
    let desc = route.method.input();
    let mut obj = Map::new();
    if route.body != BodyRule::None {
        let raw = read_body(gw, body).await?;
        let v: Value = if raw.is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_slice(&raw)
                .map_err(|e| Status::invalid_argument(format!("request body is not JSON: {e}")))?
        };
        match (&route.body, v) {
            (BodyRule::All, Value::Object(o)) => obj = o,
            (BodyRule::All, _) => {
                return Err(Status::invalid_argument(
                    "the request body must be a JSON object",
                ));
            }
            (BodyRule::Field(_), Value::Null) => {
                // JSON's null would read as "unset": an empty object
                // where the caller sent none of one.
                return Err(Status::invalid_argument(
                    "the request body must not be null (send {} for an empty one)",
                ));
            }
            (BodyRule::Field(f), v) => {
                let key = desc
                    .get_field_by_name(f)
                    .map(|fd| fd.json_name().to_string())
                    .unwrap_or_else(|| f.clone());
                obj.insert(key, v);
            }
            (BodyRule::None, _) => unreachable!(),
        }
    }
    let query = if route.body == BodyRule::All {
        None
    } else {
        parts.uri.query()
    };
    merge(&mut obj, bindings(&desc, vars, query, false)?);
    transcode::from_json(desc, Value::Object(obj))
}

async fn grpc(gw: &Gateway) -> Result<tonic::client::Grpc<Channel>, Status> {
    let mut g = tonic::client::Grpc::new(gw.channel.clone())
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    g.ready()
        .await
        .map_err(|e| Status::unavailable(format!("control plane: {e}")))?;
    Ok(g)
}

fn json_response(
    status: http::StatusCode,
    v: &Value,
    md: &MetadataMap,
) -> Result<Response, Status> {
    let mut r = (status, axum::Json(v)).into_response();
    copy_metadata(md, r.headers_mut());
    Ok(r)
}

async fn unary(
    gw: &Gateway,
    route: &Route,
    parts: &http::request::Parts,
    msg: DynamicMessage,
) -> Result<Response, Status> {
    let md = request_metadata(&parts.headers, None);
    let codec = DynCodec {
        response: route.method.output(),
    };
    let resp = grpc(gw)
        .await?
        .unary(with_metadata(msg, &md), grpc_path(route), codec)
        .await?;
    let (md, msg, _) = resp.into_parts();
    message_response(route, &md, &msg)
}

/// A single response message as JSON; a session route's answer also sets
/// or clears the session cookie (see `session`).
fn message_response(
    route: &Route,
    md: &MetadataMap,
    msg: &DynamicMessage,
) -> Result<Response, Status> {
    let mut body = transcode::json_or_status(msg)?;
    let cookie = session::on_response(route.method.full_name(), &mut body);
    let mut r = json_response(http::StatusCode::OK, &body, md)?;
    if let Some(c) = cookie {
        r.headers_mut().insert(http::header::SET_COOKIE, c);
        r.headers_mut().insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        );
    }
    Ok(r)
}

/// How a server stream is framed for this client.
#[derive(Clone, Copy, PartialEq)]
enum Framing {
    Ndjson,
    Sse,
    Raw,
}

fn framing(parts: &http::request::Parts, output: &MessageDescriptor) -> Framing {
    let accept = parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("text/event-stream") {
        Framing::Sse
    } else if accept.contains("application/octet-stream")
        && output.get_field_by_name("data").is_some()
    {
        Framing::Raw
    } else {
        Framing::Ndjson
    }
}

fn frame(pool: &DescriptorPool, f: Framing, item: Result<DynamicMessage, Status>) -> Bytes {
    match (f, item) {
        (Framing::Raw, Ok(m)) => match m.get_field_by_name("data").as_deref() {
            Some(PValue::Bytes(b)) => b.clone(),
            _ => Bytes::new(),
        },
        (Framing::Raw, Err(_)) => Bytes::new(),
        (f, item) => {
            let (event, v) = match item.and_then(|m| transcode::json_or_status(&m)) {
                Ok(v) => ("", v),
                Err(s) => (
                    "error",
                    serde_json::json!({ "error": error::body(pool, &s) }),
                ),
            };
            let line = serde_json::to_string(&v).unwrap_or_default();
            Bytes::from(if f == Framing::Sse {
                if event.is_empty() {
                    format!("data: {line}\n\n")
                } else {
                    format!("event: {event}\ndata: {line}\n\n")
                }
            } else {
                format!("{line}\n")
            })
        }
    }
}

async fn server_stream(
    gw: &Gateway,
    route: &Route,
    parts: &http::request::Parts,
    msg: DynamicMessage,
) -> Result<Response, Status> {
    let md = request_metadata(&parts.headers, None);
    let output = route.method.output();
    let f = framing(parts, &output);
    let codec = DynCodec { response: output };
    let resp = grpc(gw)
        .await?
        .server_streaming(with_metadata(msg, &md), grpc_path(route), codec)
        .await?;
    let (md, mut stream, _) = resp.into_parts();
    // An error before any output is an HTTP error, not a 200 with an
    // error line; but a stream that is quiet at first (a watch) starts
    // anyway. (Streaming::message is cancel-safe: nothing is lost.)
    let first = match tokio::time::timeout(gw.config.first_message_wait, stream.message()).await {
        Ok(r) => r?,
        Err(_) => None,
    };
    let pool = gw.pool.clone();
    let head = futures::stream::iter(first.map(Ok));
    let rest = futures::stream::unfold(Some(stream), |s| async move {
        let mut s = s?;
        match s.message().await {
            Ok(Some(m)) => Some((Ok(m), Some(s))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    });
    let body = head
        .chain(rest)
        .map(move |item| Ok::<_, std::convert::Infallible>(frame(&pool, f, item)));
    let content_type = match f {
        Framing::Ndjson => "application/x-ndjson",
        Framing::Sse => "text/event-stream",
        Framing::Raw => "application/octet-stream",
    };
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    copy_metadata(&md, r.headers_mut());
    Ok(r)
}

/// The messages of a client stream: JSON (an object, an array, or NDJSON)
/// or a raw body after a first message from the path and query.
async fn client_stream(
    gw: &Gateway,
    route: &Route,
    vars: &[(String, String)],
    parts: &http::request::Parts,
    body: Body,
) -> Result<Response, Status> {
    let desc = route.method.input();
    let md = request_metadata(&parts.headers, None);
    let codec = DynCodec {
        response: route.method.output(),
    };
    let raw =
        if is_json(parts) {
            None
        } else {
            Some(transcode::raw_field(&desc).ok_or_else(|| {
                Status::invalid_argument("this call takes JSON (application/json)")
            })?)
        };
    let Some((data_field, has_header)) = raw else {
        let binds = bindings(&desc, vars, parts.uri.query(), false)?;
        let limits = (gw.config.max_json_bytes, gw.config.max_stream_messages);
        let (tx, rx) = tokio::sync::mpsc::channel::<DynamicMessage>(4);
        let (failed_tx, mut failed_rx) = tokio::sync::oneshot::channel::<Status>();
        let feeder = tokio::spawn(feed_json(body, desc, binds, limits, tx, failed_tx));
        let call = async {
            grpc(gw)
                .await?
                .client_streaming(
                    with_metadata(tokio_stream::wrappers::ReceiverStream::new(rx), &md),
                    grpc_path(route),
                    codec,
                )
                .await
        };
        // A body that turns out malformed fails the request (and its call
        // is dropped, so the server sees a cancel, never a clean end).
        let resp = tokio::select! {
            biased;
            Ok(st) = &mut failed_rx => return Err(st),
            r = call => r,
        };
        feeder.abort();
        if let Ok(st) = failed_rx.try_recv() {
            return Err(st);
        }
        let (md, msg, _) = resp?.into_parts();
        return json_response(http::StatusCode::OK, &transcode::json_or_status(&msg)?, &md);
    };

    // Raw: the path and query make the first message (with the header);
    // the body follows in `data` chunks. Without a header, each chunk
    // carries the bindings too (they name the process, say).
    let binds = bindings(&desc, vars, parts.uri.query(), has_header)?;
    let first = transcode::from_json(desc.clone(), Value::Object(binds))?;
    let chunk = gw.config.chunk_bytes;
    let (tx, rx) = tokio::sync::mpsc::channel::<DynamicMessage>(4);
    let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<String>();
    let feeder = tokio::spawn(feed(
        body, first, data_field, has_header, chunk, tx, failed_tx,
    ));
    let call = async {
        grpc(gw)
            .await?
            .client_streaming(
                with_metadata(tokio_stream::wrappers::ReceiverStream::new(rx), &md),
                grpc_path(route),
                codec,
            )
            .await
    };
    // A body that breaks off must not become a short file: it gets no
    // finish message (the agent writes nothing without one), and the call
    // is answered at once.
    let resp = tokio::select! {
        r = call => r?,
        Ok(why) = failed_rx => {
            return Err(Status::cancelled(format!("the request body broke off: {why}")));
        }
    };
    feeder.abort();
    let (md, msg, _) = resp.into_parts();
    message_response(route, &md, &msg)
}

/// Reads a JSON client stream's body (one object, an array, or NDJSON)
/// into the request stream one message at a time (see `jsonseq`): at most
/// `limits.0` bytes and `limits.1` messages. The path and query bind into
/// the first message (or make one, for an empty body); an upload gets its
/// finish message unless it brought one. A body that fails says so on
/// `failed`, and the stream is then held open until the call is dropped.
async fn feed_json(
    body: Body,
    desc: MessageDescriptor,
    binds: Map<String, Value>,
    limits: (usize, usize),
    tx: tokio::sync::mpsc::Sender<DynamicMessage>,
    failed: tokio::sync::oneshot::Sender<Status>,
) {
    let (max_bytes, max_messages) = limits;
    let raw = transcode::raw_field(&desc).map(|(f, _)| f);
    let fin = desc.get_field_by_name("finish");
    let mut binds = Some(binds);
    let (mut bytes, mut count, mut raw_size, mut has_finish) = (0usize, 0usize, 0u64, false);
    let mut split = jsonseq::Splitter::default();
    let mut stream = body.into_data_stream();
    let result: Result<(), Status> = async {
        loop {
            let chunk = match stream.next().await {
                Some(Ok(c)) => c,
                Some(Err(e)) => {
                    return Err(Status::cancelled(format!(
                        "the request body broke off: {e}"
                    )));
                }
                None => break,
            };
            bytes += chunk.len();
            if bytes > max_bytes {
                return Err(Status::invalid_argument(format!(
                    "request body: at most {max_bytes} bytes of JSON (send large data as application/octet-stream)"
                )));
            }
            let objects = split
                .push(&chunk)
                .map_err(|m| Status::invalid_argument(format!("request body: {}", m.0)))?;
            for obj in objects {
                count += 1;
                if count > max_messages {
                    return Err(Status::invalid_argument(format!(
                        "request body: at most {max_messages} messages in one request"
                    )));
                }
                let mut o: Map<String, Value> = serde_json::from_slice(&obj)
                    .map_err(|e| Status::invalid_argument(format!("request body: {e}")))?;
                if let Some(b) = binds.take() {
                    merge(&mut o, b);
                }
                let m = transcode::from_json(desc.clone(), Value::Object(o))?;
                if let Some(r) = &raw {
                    raw_size += transcode::raw_len(&m, r);
                }
                has_finish |= fin.as_ref().is_some_and(|f| m.has_field(f));
                if tx.send(m).await.is_err() {
                    return Ok(());
                }
            }
        }
        split
            .finish()
            .map_err(|m| Status::invalid_argument(format!("request body: {}", m.0)))?;
        if let Some(b) = binds.take() {
            let _ = tx
                .send(transcode::from_json(desc.clone(), Value::Object(b))?)
                .await;
        }
        // An upload given as JSON gets its finish too, unless it has one.
        if raw.is_some() && !has_finish
            && let Some(m) = transcode::finish_message(&desc, raw_size)
        {
            let _ = tx.send(m).await;
        }
        Ok(())
    }
    .await;
    if let Err(st) = result {
        let _ = failed.send(st);
        tx.closed().await;
    }
}

/// Reads a raw body into the request stream. With a header, the first
/// message goes alone; without one, it rides with the first chunk and
/// every chunk repeats its bindings. A whole body ends with the request's
/// finish message, when it has one; a body that fails says so on `failed`
/// and sends no finish.
async fn feed(
    body: Body,
    first: DynamicMessage,
    data_field: prost_reflect::FieldDescriptor,
    has_header: bool,
    chunk: usize,
    tx: tokio::sync::mpsc::Sender<DynamicMessage>,
    failed: tokio::sync::oneshot::Sender<String>,
) {
    let mut body = body.into_data_stream();
    let template = if has_header {
        DynamicMessage::new(first.descriptor())
    } else {
        first.clone()
    };
    let mut pending = Some(first);
    if has_header
        && let Some(p) = pending.take()
        && tx.send(p).await.is_err()
    {
        return;
    }
    let mut buf = bytes::BytesMut::new();
    let mut ended = false;
    let mut total = 0u64;
    while !ended {
        match body.next().await {
            Some(Ok(b)) => {
                total += b.len() as u64;
                buf.extend_from_slice(&b);
            }
            Some(Err(e)) => {
                let _ = failed.send(e.to_string());
                return;
            }
            None => ended = true,
        }
        while buf.len() >= chunk || (ended && (!buf.is_empty() || pending.is_some())) {
            let n = buf.len().min(chunk);
            let mut m = pending.take().unwrap_or_else(|| template.clone());
            m.set_field(&data_field, PValue::Bytes(buf.split_to(n).freeze()));
            if tx.send(m).await.is_err() {
                return;
            }
        }
    }
    // The body arrived whole: say so (uploads commit only on this).
    if let Some(fin) = transcode::finish_message(&template.descriptor(), total) {
        let _ = tx.send(fin).await;
    }
}
