//! The worker's data plane: the server's calls for one sandbox's agent
//! (processes, PTY, files, ports) arrive here as gRPC over HTTP/2 and are
//! forwarded, frames and trailers as they are, to that sandbox's agent
//! socket. The worker adds no logic of its own: it checks the worker token
//! and the generation (a stale server view of the sandbox is refused) and
//! picks the socket, whose listener must be that sandbox's init (see
//! `agent_socket`). The worker's own WorkerImageService is served here
//! too, behind the same token, and so is WorkerSandboxService (what the
//! worker reads of a sandbox itself, such as its usage).
//!
//! Its connections are held to `talon_core::listen`'s limits: a server's
//! connection authenticates with its first call; one that never presents
//! the token (a flood, or a preface and nothing else) is closed once idle,
//! or to make room, and HTTP/2 pings find dead peers.

use crate::host::{Held, SandboxHost};
use bytes::Bytes;
use http::{HeaderValue, Request, Response};
use http_body_util::{BodyExt, Empty, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub use talon_core::wire::{GENERATION_HEADER, SANDBOX_HEADER};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Body = UnsyncBoxBody<Bytes, BoxError>;
type ImageServer =
    talon_proto::talon::worker::v1::worker_image_service_server::WorkerImageServiceServer<
        crate::image_api::ImageApi,
    >;
const IMAGE_SERVICE: &str = "/talon.worker.v1.WorkerImageService/";
type SandboxServer =
    talon_proto::talon::worker::v1::worker_sandbox_service_server::WorkerSandboxServiceServer<
        crate::sandbox_api::SandboxApi,
    >;
const SANDBOX_SERVICE: &str = "/talon.worker.v1.WorkerSandboxService/";

/// The worker's own services, answered here rather than by an agent.
#[derive(Clone)]
struct Own {
    images: ImageServer,
    sandboxes: SandboxServer,
}

fn grpc_error(code: tonic::Code, msg: &str) -> Response<Body> {
    let mut r = Response::new(Empty::new().map_err(|never| match never {}).boxed_unsync());
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/grpc"));
    h.insert("grpc-status", HeaderValue::from(code as i32));
    if let Ok(v) = HeaderValue::from_str(&msg.replace(['\r', '\n'], " ")) {
        h.insert("grpc-message", v);
    }
    r
}

type Sender = hyper::client::conn::http2::SendRequest<Incoming>;

/// One HTTP/2 connection per agent socket, reused by every call (a call
/// used to pay a connect and a handshake). A closed one (the sandbox
/// stopped, its agent went) is replaced on the next call, after the new
/// listener's credentials are checked.
#[derive(Default)]
pub struct AgentConnections(std::sync::Mutex<HashMap<PathBuf, Sender>>);

impl AgentConnections {
    async fn get(&self, host: &SandboxHost, held: &Held) -> Result<Sender, String> {
        let (socket, peer) = host
            .agent_endpoint(held)
            .await
            .map_err(|e| format!("agent unreachable: {e:#}"))?;
        let cached = self.0.lock().expect("conns").get(&socket).cloned();
        if let Some(mut s) = cached
            && s.ready().await.is_ok()
        {
            return Ok(s);
        }
        let stream = crate::agent_socket::connect(&socket, peer)
            .await
            .map_err(|e| format!("agent unreachable: {e}"))?;
        let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .initial_stream_window_size(talon_proto::h2::STREAM_WINDOW)
            .initial_connection_window_size(talon_proto::h2::CONNECTION_WINDOW)
            .max_frame_size(talon_proto::h2::MAX_FRAME)
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("agent handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut map = self.0.lock().expect("conns");
        map.retain(|_, s| !s.is_closed());
        map.insert(socket, sender.clone());
        Ok(sender)
    }
}

/// A response body whose data frames wait for `bucket` (see
/// `output_budget`); trailers pass at once.
fn paced(body: Incoming, bucket: Arc<crate::output_budget::Bucket>) -> Body {
    use futures::StreamExt;
    let frames = http_body_util::BodyStream::new(body).then(move |frame| {
        let bucket = bucket.clone();
        async move {
            if let Ok(f) = &frame
                && let Some(d) = f.data_ref()
            {
                let wait = bucket.take(d.len(), std::time::Instant::now());
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            frame.map_err(BoxError::from)
        }
    });
    http_body_util::StreamBody::new(frames).boxed_unsync()
}

async fn forward(
    host: Arc<SandboxHost>,
    token: Arc<String>,
    own: Own,
    conns: Arc<AgentConnections>,
    budgets: Arc<crate::output_budget::OutputBudgets>,
    mut req: Request<Incoming>,
) -> Result<Response<Body>, std::convert::Infallible> {
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| constant_eq(t.as_bytes(), token.as_bytes()));
    if !authorized {
        return Ok(grpc_error(
            tonic::Code::Unauthenticated,
            "worker data plane: bad credential",
        ));
    }
    if let Some(c) = req.extensions().get::<talon_core::listen::Conn>() {
        c.authenticated();
    }
    if req.uri().path().starts_with(IMAGE_SERVICE) {
        use tower::Service;
        let mut svc = own.images;
        return Ok(match svc.call(req).await {
            Ok(r) => r.map(|b| b.map_err(BoxError::from).boxed_unsync()),
            Err(never) => match never {},
        });
    }
    if req.uri().path().starts_with(SANDBOX_SERVICE) {
        use tower::Service;
        let mut svc = own.sandboxes;
        return Ok(match svc.call(req).await {
            Ok(r) => r.map(|b| b.map_err(BoxError::from).boxed_unsync()),
            Err(never) => match never {},
        });
    }
    let id = req
        .headers()
        .get(SANDBOX_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let generation: Option<i64> = req
        .headers()
        .get(GENERATION_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let held = match host.fenced_for_call(&id, generation.unwrap_or(-1)) {
        Ok(h) => h,
        Err(e) => return Ok(grpc_error(e.code(), &e.to_string())),
    };
    if held.state != crate::host::SandboxPhase::Running {
        return Ok(grpc_error(
            tonic::Code::FailedPrecondition,
            &format!("sandbox is {:?}", held.state),
        ));
    }
    // A call reaching the sandbox is activity (see host::idle); one that
    // comes while it is being paused for idleness is turned away.
    if !host.admit(&id) {
        return Ok(grpc_error(
            tonic::Code::Unavailable,
            "sandbox was paused for being idle; retry (with auto_resume, a call resumes it)",
        ));
    }
    let mut sender = match conns.get(&host, &held).await {
        Ok(s) => s,
        Err(e) => return Ok(grpc_error(tonic::Code::Unavailable, &e)),
    };
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let budget = crate::output_budget::is_output(&path)
        .then(|| budgets.of(&id))
        .flatten();
    *req.uri_mut() = format!("http://agent{path}").parse().expect("uri");
    req.headers_mut().remove("authorization");
    match sender.send_request(req).await {
        Ok(resp) => Ok(match budget {
            Some(bucket) => resp.map(|b| paced(b, bucket)),
            None => resp.map(|b| b.map_err(BoxError::from).boxed_unsync()),
        }),
        Err(e) => Ok(grpc_error(tonic::Code::Unavailable, &format!("agent: {e}"))),
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serves the data plane until the listener fails, within `limits`; each
/// sandbox's process output leaves at most at `output_rate` bytes a second
/// (0: no limit).
pub async fn serve(
    listener: tokio::net::TcpListener,
    host: Arc<SandboxHost>,
    token: String,
    output_rate: u64,
    limits: talon_core::listen::Limits,
) {
    let token = Arc::new(token);
    let conns = Arc::new(AgentConnections::default());
    // A burst of a quarter second's worth, at least 1 MiB.
    let budgets = Arc::new(crate::output_budget::OutputBudgets::new(
        output_rate,
        (output_rate / 4).max(1 << 20),
    ));
    let own = Own {
        images: ImageServer::new(crate::image_api::ImageApi(host.clone()))
            .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES),
        sandboxes: SandboxServer::new(crate::sandbox_api::SandboxApi::new(host.clone())),
    };
    let admission = talon_core::listen::Admission::new(limits);
    loop {
        let Ok((stream, _)) = admission.accept(&listener).await else {
            continue;
        };
        let conn = stream.conn();
        let (host, token, own, conns, budgets) = (
            host.clone(),
            token.clone(),
            own.clone(),
            conns.clone(),
            budgets.clone(),
        );
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(conn.clone());
                forward(
                    host.clone(),
                    token.clone(),
                    own.clone(),
                    conns.clone(),
                    budgets.clone(),
                    req,
                )
            });
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .timer(hyper_util::rt::TokioTimer::new())
                .keep_alive_interval(limits.keepalive_interval())
                .keep_alive_timeout(limits.keepalive_timeout)
                .initial_stream_window_size(talon_proto::h2::STREAM_WINDOW)
                .initial_connection_window_size(talon_proto::h2::CONNECTION_WINDOW)
                .max_frame_size(talon_proto::h2::MAX_FRAME)
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
