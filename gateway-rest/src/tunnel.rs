//! The preview tunnel, as the gateway uses it: a byte stream to a port
//! inside a sandbox (gateway → server → worker → the sandbox's agent,
//! which connects on the sandbox's loopback), and one HTTP/1.1 exchange
//! over it. Every answer that comes back is a sandbox's: `forward` hands
//! it over only as `confine` makes it, so no route serves one bare.

use crate::confine::{self, Confinement};
use axum::body::Body;
use axum::response::Response;
use http::{StatusCode, header};
use hyper_util::rt::TokioIo;
use tonic::Status;

/// Sends one request over a tunnel as HTTP/1.1 and gives the answer,
/// confined as `c` says; a WebSocket (or other) upgrade the server
/// accepts is spliced to the client's connection.
pub(crate) async fn forward(
    io: tokio::io::DuplexStream,
    mut req: http::Request<Body>,
    c: Confinement<'_>,
) -> Result<Response, Status> {
    confine::refuse(c, req.headers())?;
    let upgrade = req.headers().contains_key(header::UPGRADE);
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| Status::unavailable(format!("preview: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    let mut resp = sender.send_request(req).await.map_err(|e| {
        if talon_core::listen::body::too_slow(&e) {
            return crate::error::broken_body(&e);
        }
        Status::unavailable(format!("the sandbox's server: {e}"))
    })?;
    if resp.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client_upgrade) = client_upgrade
    {
        let upstream = hyper::upgrade::on(&mut resp);
        tokio::spawn(async move {
            if let (Ok(c), Ok(u)) = (client_upgrade.await, upstream.await) {
                let _ =
                    tokio::io::copy_bidirectional(&mut TokioIo::new(c), &mut TokioIo::new(u)).await;
            }
        });
    }
    let status = resp.status();
    confine::answer(c, status, resp.headers_mut());
    Ok(resp.map(Body::new))
}

pub(crate) use talon_proto::tunnel::open_tunnel;
