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
use talon_proto::talon::gateway::v1 as gpb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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

/// Opens the server's preview tunnel to `port` of `sandbox` with one
/// credential (`key` is `authorization` or the preview-token metadata):
/// bytes written to the returned stream reach the port, bytes read come
/// from it. Fails with the server's verdict (401, 403, 404, 503) before
/// any byte moves. The E2B facade's port proxy uses it too.
pub async fn open_tunnel(
    channel: tonic::transport::Channel,
    sandbox: &str,
    port: u16,
    key: &'static str,
    value: tonic::metadata::MetadataValue<tonic::metadata::Ascii>,
) -> Result<tokio::io::DuplexStream, Status> {
    let (tx, rx) = tokio::sync::mpsc::channel::<gpb::OpenPreviewRequest>(16);
    tx.send(gpb::OpenPreviewRequest {
        sandbox_id: sandbox.to_string(),
        port: port.into(),
        ..Default::default()
    })
    .await
    .map_err(|_| Status::internal("tunnel"))?;
    let mut req = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    req.metadata_mut().insert(key, value);
    let mut client = gpb::preview_tunnel_service_client::PreviewTunnelServiceClient::new(channel);
    let mut inbound = client.open_preview(req).await?.into_inner();
    let (ours, theirs) = tokio::io::duplex(256 << 10);
    let (mut rd, mut wr) = tokio::io::split(theirs);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = tx
                        .send(gpb::OpenPreviewRequest {
                            close_write: true,
                            ..Default::default()
                        })
                        .await;
                    return;
                }
                Ok(n) => {
                    let m = gpb::OpenPreviewRequest {
                        data: buf[..n].to_vec(),
                        ..Default::default()
                    };
                    if tx.send(m).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    tokio::spawn(async move {
        while let Ok(Some(m)) = inbound.message().await {
            if wr.write_all(&m.data).await.is_err() {
                return;
            }
        }
        let _ = wr.shutdown().await;
    });
    Ok(ours)
}
