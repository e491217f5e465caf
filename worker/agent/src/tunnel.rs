//! The preview proxy's last hop: a TCP connection from inside the sandbox
//! to a port on its own loopback, carried as a gRPC stream of bytes. Being
//! inside, it works under every egress policy (`deny` included) and
//! reaches servers bound to 127.0.0.1 or ::1 only.

use std::pin::Pin;
use talon_proto::talon::gateway::v1 as gpb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Status, Streaming};

pub type Out = Pin<Box<dyn Stream<Item = Result<gpb::OpenPreviewResponse, Status>> + Send>>;

/// Bytes per message toward the caller.
const CHUNK: usize = 64 << 10;

async fn connect(port: u16) -> Result<TcpStream, Status> {
    let mut last = None;
    for addr in [
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
    ] {
        match TcpStream::connect(addr).await {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => {
                last.get_or_insert(e);
            }
        }
    }
    Err(Status::unavailable(format!(
        "nothing listens on port {port} in the sandbox ({})",
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

/// Connects to the port the first message names and pipes both ways.
pub async fn open(mut inbound: Streaming<gpb::OpenPreviewRequest>) -> Result<Out, Status> {
    let first = inbound
        .message()
        .await?
        .ok_or_else(|| Status::invalid_argument("empty request stream"))?;
    let port = u16::try_from(first.port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| Status::invalid_argument("port must be 1-65535"))?;
    let stream = connect(port).await?;
    let (mut rd, mut wr) = stream.into_split();
    tokio::spawn(async move {
        let mut pending = Some(first);
        loop {
            let msg = match pending.take() {
                Some(m) => m,
                None => match inbound.next().await {
                    Some(Ok(m)) => m,
                    _ => break,
                },
            };
            if !msg.data.is_empty() {
                crate::activity::touch();
                if wr.write_all(&msg.data).await.is_err() {
                    return;
                }
            }
            if msg.close_write {
                break;
            }
        }
        let _ = wr.shutdown().await;
    });
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tokio::spawn(async move {
        loop {
            let mut buf = Vec::with_capacity(CHUNK);
            match rd.read_buf(&mut buf).await {
                Ok(0) => return,
                Ok(_) => {
                    crate::activity::touch();
                    if tx
                        .send(Ok(gpb::OpenPreviewResponse { data: buf }))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx
                        .send(Err(Status::unavailable(format!("connection: {e}"))))
                        .await;
                    return;
                }
            }
        }
    });
    Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
}
