//! The preview tunnel as a byte stream: the client side of
//! `PreviewTunnelService.OpenPreview` (gateway → server → worker → the
//! sandbox's agent, which connects on the sandbox's loopback), shared by
//! both HTTP edges of the contract (the REST gateway's previews and CDP,
//! the E2B facade's ports), which depend on the contract and not on each
//! other.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Status;

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
    let (tx, rx) = tokio::sync::mpsc::channel::<crate::talon::gateway::v1::OpenPreviewRequest>(16);
    tx.send(crate::talon::gateway::v1::OpenPreviewRequest {
        sandbox_id: sandbox.to_string(),
        port: port.into(),
        ..Default::default()
    })
    .await
    .map_err(|_| Status::internal("tunnel"))?;
    let mut req = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    req.metadata_mut().insert(key, value);
    let mut client =
        crate::talon::gateway::v1::preview_tunnel_service_client::PreviewTunnelServiceClient::new(
            channel,
        );
    let mut inbound = client.open_preview(req).await?.into_inner();
    let (ours, theirs) = tokio::io::duplex(256 << 10);
    let (mut rd, mut wr) = tokio::io::split(theirs);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = tx
                        .send(crate::talon::gateway::v1::OpenPreviewRequest {
                            close_write: true,
                            ..Default::default()
                        })
                        .await;
                    return;
                }
                Ok(n) => {
                    let m = crate::talon::gateway::v1::OpenPreviewRequest {
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
