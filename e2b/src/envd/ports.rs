//! Every port but envd's: HTTP (WebSocket upgrades included) proxied to
//! that port inside the sandbox through the server's preview tunnel, so
//! `get_host(port)` reaches a dev server. E2B serves ports publicly by
//! default; Talon serves none without a credential, so the request must
//! carry the sandbox's access token (`X-Access-Token`, or E2B's
//! `e2b-traffic-access-token`). Neither reaches the sandbox's server, nor
//! do the REST gateway's cookies.

use super::{Ctx, plain};
use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use hyper_util::rt::TokioIo;

/// Headers of the facade's own that the sandbox's server never sees.
const OURS: &[&str] = &[
    "x-access-token",
    "e2b-traffic-access-token",
    "e2b-sandbox-id",
    "e2b-sandbox-port",
];

pub async fn forward(ctx: Ctx, port: u16, mut req: http::Request<Body>) -> Response {
    let token = Some(ctx.token.clone())
        .filter(|t| !t.is_empty())
        .or_else(|| {
            req.headers()
                .get("e2b-traffic-access-token")
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        })
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        let no = plain(
            StatusCode::UNAUTHORIZED,
            "a sandbox port needs the sandbox's access token (X-Access-Token)",
        );
        return super::refuse(req.into_body(), no).await;
    };
    let Some(bearer) = crate::credential::bearer(&token) else {
        let no = plain(StatusCode::UNAUTHORIZED, "invalid access token");
        return super::refuse(req.into_body(), no).await;
    };
    let io = match talon_proto::tunnel::open_tunnel(
        ctx.channel(),
        &ctx.sandbox_id,
        port,
        "authorization",
        bearer,
    )
    .await
    {
        Ok(io) => io,
        Err(s) => {
            let c = super::connect::ConnectError::from(s);
            let status = match c.code {
                tonic::Code::Unauthenticated => StatusCode::UNAUTHORIZED,
                tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
                tonic::Code::NotFound => return super::sandbox_not_found(&ctx.e2b_id),
                _ => StatusCode::BAD_GATEWAY,
            };
            return plain(status, c.message);
        }
    };
    let h = req.headers_mut();
    for name in OURS {
        h.remove(*name);
    }
    // Browsers send a host's cookies to every port of it: a visitor's
    // Talon session (or preview tokens) from the REST gateway on the same
    // host would come along, and they are no sandbox's to read.
    talon_core::cookies::strip_credentials(h);
    if let Ok(v) = HeaderValue::from_str(&format!("localhost:{port}")) {
        h.insert(header::HOST, v);
    }
    let upgrade = req.headers().contains_key(header::UPGRADE);
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(io)).await {
        Ok(x) => x,
        Err(e) => return plain(StatusCode::BAD_GATEWAY, format!("port {port}: {e}")),
    };
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    let mut resp = match sender.send_request(req).await {
        Ok(r) => r,
        // E2B's words: the SDKs read "port is not open" as unreachable.
        Err(e) => {
            return plain(
                StatusCode::BAD_GATEWAY,
                format!("The sandbox is running but port is not open ({port}): {e}"),
            );
        }
    };
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
    resp.map(Body::new)
}
