//! The preview proxy: HTTP/1.1 (WebSocket upgrades and streaming bodies
//! included) to a port inside a sandbox, over the server's preview tunnel
//! (gateway → server → worker → the sandbox's agent, which connects on the
//! sandbox's loopback). Two ways to name the target:
//!
//! - path-prefix mode: `/preview/{sandbox}/{port}/…` (the prefix is
//!   removed before forwarding and sent as `X-Forwarded-Prefix`);
//! - subdomain mode: `Host: {port}-{sandbox}.{preview-domain}`, when a
//!   preview domain is configured; the whole path is forwarded.
//!
//! Credentials: a preview token (`?token=`, taken out of the URL before
//! anything is forwarded, and then kept in a `__Host-` cookie for the
//! page's further requests) or the caller's own `Authorization` header.
//! The server decides; neither credential reaches the sandbox. Incoming
//! `Forwarded`/`X-Forwarded-*`/`X-Real-IP` headers are dropped and ours set.

use crate::Gateway;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use talon_proto::talon::gateway::v1 as gpb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Status;

/// Where a preview request goes.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub sandbox: String,
    pub port: u16,
    /// The path prefix that named it (path mode), without a trailing `/`.
    pub prefix: String,
    /// The path to forward, from `/`.
    pub path: String,
}

/// A sandbox id as the preview routes accept it.
fn valid_sandbox(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn parse_port(s: &str) -> Option<u16> {
    if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|p| *p != 0)
}

/// The target of a request, if it is a preview request at all: Some(Err)
/// for one that is, but names no valid target.
pub fn target(
    preview_domain: Option<&str>,
    host: Option<&str>,
    path: &str,
) -> Option<Result<Target, Status>> {
    if let (Some(domain), Some(host)) = (preview_domain, host) {
        let host = host.rsplit_once(':').map_or(host, |(h, p)| {
            if p.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        if let Some(label) = host
            .to_ascii_lowercase()
            .strip_suffix(&format!(".{}", domain.to_ascii_lowercase()))
            .map(String::from)
        {
            // The label keeps the id's case from the original Host.
            let label = &host[..label.len()];
            let Some((port, sandbox)) = label.split_once('-') else {
                return Some(Err(Status::not_found(format!("no preview at {host}"))));
            };
            return Some(match (parse_port(port), valid_sandbox(sandbox)) {
                (Some(port), true) => Ok(Target {
                    sandbox: sandbox.to_string(),
                    port,
                    prefix: String::new(),
                    path: path.to_string(),
                }),
                _ => Err(Status::not_found(format!("no preview at {host}"))),
            });
        }
    }
    let rest = path.strip_prefix("/preview/")?;
    let mut parts = rest.splitn(3, '/');
    let (sandbox, port) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let tail = parts.next();
    Some(match (valid_sandbox(sandbox), parse_port(port)) {
        (true, Some(p)) => Ok(Target {
            sandbox: sandbox.to_string(),
            port: p,
            prefix: format!("/preview/{sandbox}/{p}"),
            path: format!("/{}", tail.unwrap_or("")),
        }),
        _ => Err(Status::not_found(
            "a preview path is /preview/{sandbox}/{port}/…",
        )),
    })
}

/// The cookie that keeps a preview token for one sandbox and port.
pub fn cookie_name(t: &Target) -> String {
    format!("__Host-talon-preview-{}-{}", t.sandbox, t.port)
}

/// Its plain-HTTP twin: a client other than a browser never sends a
/// `Secure` cookie back over http, so a gateway whose public URL is not
/// https sets this one too (browsers keep both on loopback, which they
/// count as secure; path mode's opaque-origin pages need the `Secure`,
/// `SameSite=None` one). Bound to one sandbox and port like the other.
pub fn plain_cookie_name(t: &Target) -> String {
    format!("talon-preview-{}-{}", t.sandbox, t.port)
}

/// The query without its `token` parameter, and that token.
fn take_token(query: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(q) = query else { return (None, None) };
    let mut token = None;
    let kept: Vec<&str> = q
        .split('&')
        .filter(|kv| match kv.split_once('=') {
            Some(("token", v)) => {
                token = Some(crate::transcode::decode(v).unwrap_or_default());
                false
            }
            _ => *kv != "token",
        })
        .collect();
    let rest = (!kept.is_empty()).then(|| kept.join("&"));
    (rest, token)
}

enum Credential {
    PreviewToken(String),
    Bearer(HeaderValue),
}

/// Headers the client may not set for the sandbox's server.
const SPOOFABLE: &[&str] = &[
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-forwarded-port",
    "x-forwarded-prefix",
    "x-real-ip",
];

/// Serves one preview request.
pub async fn handle(
    gw: &Gateway,
    target: Target,
    client: Option<SocketAddr>,
    mut req: http::Request<Body>,
) -> Response {
    // A service worker registered from a path-mode preview would sit on
    // the gateway's origin (the page's opaque origin already stops it;
    // this holds even for a request that isn't from a preview page).
    if !target.prefix.is_empty() && req.headers().contains_key("service-worker") {
        return crate::error::response(
            &gw.pool,
            &Status::permission_denied(
                "a path-mode preview may not serve a service worker; use subdomain previews",
            ),
        );
    }
    let (query, query_token) = take_token(req.uri().query());
    let cookie = cookie_name(&target);
    let plain_cookie = plain_cookie_name(&target);
    let from_cookie = crate::session::cookie(req.headers(), &cookie).or_else(|| {
        (!gw.config.public_https)
            .then(|| crate::session::cookie(req.headers(), &plain_cookie))
            .flatten()
    });
    let credential = if let Some(t) = &query_token {
        Credential::PreviewToken(t.clone())
    } else if let Some(t) = from_cookie {
        Credential::PreviewToken(t)
    } else if let Some(v) = req.headers().get(header::AUTHORIZATION) {
        Credential::Bearer(v.clone())
    } else {
        return crate::error::response(
            &gw.pool,
            &Status::unauthenticated("a preview needs ?token= or an Authorization header"),
        );
    };

    // A browser's token in the URL is traded for a cookie and the URL
    // cleaned, so it stays out of the page's history, logs and Referer
    // headers. Browsers say so (`Sec-Fetch-Dest`, sent by every current
    // one; Node's fetch sends `Sec-Fetch-Mode` alone); any other client
    // (curl, an HTTP library, which may keep no cookies across a
    // redirect) is served at once with the token.
    let browser = req.headers().contains_key("sec-fetch-dest");
    if query_token.is_some() && req.method() == http::Method::GET && browser {
        let mut location = format!("{}{}", target.prefix, target.path);
        if let Some(q) = &query {
            location.push('?');
            location.push_str(q);
        }
        if let Credential::PreviewToken(t) = &credential {
            // Checked before the cookie is set: a bad token is refused here.
            if let Err(s) = open(gw, &target, &credential).await.map(drop) {
                return crate::error::response(&gw.pool, &s);
            }
            // A path-mode page has an opaque origin, so its requests for
            // its own resources are cross-site: a Lax cookie would not go
            // with them. The cookie names one sandbox and port and opens
            // nothing but that preview.
            let same_site = if target.prefix.is_empty() {
                "Lax"
            } else {
                "None"
            };
            let set = format!("{cookie}={t}; Path=/; Secure; HttpOnly; SameSite={same_site}");
            let mut r = StatusCode::SEE_OTHER.into_response();
            let h = r.headers_mut();
            if let (Ok(l), Ok(c)) = (
                HeaderValue::from_str(&location),
                HeaderValue::from_str(&set),
            ) {
                h.insert(header::LOCATION, l);
                h.insert(header::SET_COOKIE, c);
                if !gw.config.public_https
                    && let Ok(p) = HeaderValue::from_str(&format!(
                        "{plain_cookie}={t}; Path=/; HttpOnly; SameSite=Lax"
                    ))
                {
                    h.append(header::SET_COOKIE, p);
                }
                h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                return r;
            }
        }
    }

    let io = match open(gw, &target, &credential).await {
        Ok(io) => io,
        Err(s) => return crate::error::response(&gw.pool, &s),
    };
    // The server took the token: the connection counts as authenticated.
    if let Some(rc) = talon_core::listen::RequestConn::of(req.extensions()) {
        rc.authenticated();
    }

    // What the sandbox's server sees.
    let original_host = req
        .headers()
        .get(header::HOST)
        .cloned()
        .or_else(|| req.uri().authority().and_then(|a| a.as_str().parse().ok()));
    let h = req.headers_mut();
    for name in SPOOFABLE {
        h.remove(*name);
    }
    if matches!(credential, Credential::Bearer(_)) {
        h.remove(header::AUTHORIZATION);
    }
    strip_credentials(h);
    if let Some(c) = client
        && let Ok(v) = HeaderValue::from_str(&c.ip().to_string())
    {
        h.insert("x-forwarded-for", v);
    }
    h.insert(
        "x-forwarded-proto",
        HeaderValue::from_static(if gw.config.public_https {
            "https"
        } else {
            "http"
        }),
    );
    if let Some(v) = original_host {
        h.insert("x-forwarded-host", v);
    }
    if !target.prefix.is_empty()
        && let Ok(v) = HeaderValue::from_str(&target.prefix)
    {
        h.insert("x-forwarded-prefix", v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("localhost:{}", target.port)) {
        h.insert(header::HOST, v);
    }
    let mut pq = target.path.clone();
    if let Some(q) = &query {
        pq.push('?');
        pq.push_str(q);
    }
    match pq.parse() {
        Ok(uri) => *req.uri_mut() = uri,
        Err(_) => {
            return crate::error::response(&gw.pool, &Status::invalid_argument("bad preview path"));
        }
    }

    let mut resp = match forward(io, req).await {
        Ok(r) => r,
        Err(s) => return crate::error::response(&gw.pool, &s),
    };
    confine_response(&target, resp.headers_mut());
    resp.map(Body::new)
}

/// Sends one request over a tunnel as HTTP/1.1 and gives the answer; a
/// WebSocket (or other) upgrade the server accepts is spliced to the
/// client's connection.
pub(crate) async fn forward(
    io: tokio::io::DuplexStream,
    mut req: http::Request<Body>,
) -> Result<http::Response<hyper::body::Incoming>, Status> {
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
    Ok(resp)
}

/// The sandbox flags a path-mode preview document runs with: everything a
/// web app needs but `allow-same-origin` (so its origin is opaque, never
/// the gateway's) and top navigation.
pub const PATH_MODE_CSP: &str = "sandbox allow-scripts allow-forms allow-popups allow-modals \
     allow-downloads allow-pointer-lock allow-presentation allow-orientation-lock";

/// Response headers by which a preview could reach beyond itself. In path
/// mode a preview is served from the gateway's own origin, so its
/// documents get an opaque origin (`Content-Security-Policy: sandbox`,
/// added to any policy of its own: every policy is enforced), and it may
/// neither widen a service worker's scope, clear the origin's data (the
/// API session with it), nor set a cookie outside its own path. In both
/// modes a cookie is kept to the preview's own host (no `Domain`), so one
/// preview can't set cookies for the others.
pub fn confine_response(target: &Target, h: &mut HeaderMap) {
    h.remove("service-worker-allowed");
    let cookies: Vec<HeaderValue> = h.get_all(header::SET_COOKIE).iter().cloned().collect();
    h.remove(header::SET_COOKIE);
    for c in cookies {
        if let Some(v) = c
            .to_str()
            .ok()
            .and_then(|c| confine_cookie(c, &target.prefix))
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            h.append(header::SET_COOKIE, v);
        }
    }
    if !target.prefix.is_empty() {
        h.remove("clear-site-data");
        h.append(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PATH_MODE_CSP),
        );
    }
}

/// A `Set-Cookie` value kept to the preview: no `Domain`, and in path mode
/// a `Path` under the preview's prefix. A cookie with a `__Host-` name
/// needs `Path=/`, which a path-mode preview may not have: dropped (None).
fn confine_cookie(value: &str, prefix: &str) -> Option<String> {
    let mut parts = value.split(';');
    let pair = parts.next()?.trim();
    let name = pair.split_once('=').map_or(pair, |(n, _)| n).trim();
    if name.is_empty() || (!prefix.is_empty() && name.starts_with("__Host-")) {
        return None;
    }
    let mut out = vec![pair.to_string()];
    let mut path = None;
    for attr in parts.map(str::trim).filter(|a| !a.is_empty()) {
        let key = attr.split_once('=').map_or(attr, |(k, _)| k).trim();
        if key.eq_ignore_ascii_case("domain") {
            continue;
        }
        if key.eq_ignore_ascii_case("path") {
            path = Some(
                attr.split_once('=')
                    .map_or("", |(_, v)| v)
                    .trim()
                    .to_string(),
            );
            continue;
        }
        out.push(attr.to_string());
    }
    if prefix.is_empty() {
        if let Some(p) = path {
            out.push(format!("Path={p}"));
        }
    } else {
        // A path of its own goes under the prefix; none means the
        // preview's root (the browser's default would be the request's
        // directory, still under the prefix, but say it plainly).
        let p = path
            .filter(|p| p.starts_with('/'))
            .unwrap_or_else(|| "/".into());
        out.push(format!("Path={prefix}{p}"));
    }
    Some(out.join("; "))
}

/// Removes the gateway's own cookies from what a preview's server is
/// sent: every preview cookie, not only this preview's (on the gateway's
/// host, path-mode previews' cookies all have Path=/ and go with a visit
/// to any of them: another sandbox's server would read their tokens), and
/// the browser session, which is for the API only.
pub(crate) fn strip_credentials(h: &mut HeaderMap) {
    strip_cookies(h, |k| {
        k == crate::session::COOKIE
            || k.starts_with("__Host-talon-preview-")
            || k.starts_with("talon-preview-")
    });
}

/// Removes the cookies `drop` names from the Cookie headers, keeping the
/// others.
fn strip_cookies(h: &mut HeaderMap, drop: impl Fn(&str) -> bool) {
    let kept: Vec<String> = h
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|kv| !kv.is_empty() && kv.split_once('=').is_none_or(|(k, _)| !drop(k.trim())))
        .map(String::from)
        .collect();
    h.remove(header::COOKIE);
    if !kept.is_empty()
        && let Ok(v) = HeaderValue::from_str(&kept.join("; "))
    {
        h.insert(header::COOKIE, v);
    }
}

/// Opens the tunnel with the gateway's credential of this request.
async fn open(
    gw: &Gateway,
    target: &Target,
    credential: &Credential,
) -> Result<tokio::io::DuplexStream, Status> {
    let (key, value) = match credential {
        Credential::PreviewToken(t) => (
            talon_core::wire::PREVIEW_TOKEN_HEADER,
            t.parse()
                .map_err(|_| Status::unauthenticated("malformed preview token"))?,
        ),
        Credential::Bearer(v) => (
            "authorization",
            v.to_str()
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Status::unauthenticated("malformed Authorization header"))?,
        ),
    };
    open_tunnel(gw.channel.clone(), &target.sandbox, target.port, key, value).await
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_modes_name_a_target() {
        let t = target(None, Some("x"), "/preview/sbx_ab/3000/app/x.js")
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                t.sandbox.as_str(),
                t.port,
                t.prefix.as_str(),
                t.path.as_str()
            ),
            ("sbx_ab", 3000, "/preview/sbx_ab/3000", "/app/x.js")
        );
        let t = target(None, None, "/preview/sbx_ab/3000").unwrap().unwrap();
        assert_eq!(t.path, "/");
        let t = target(
            Some("preview.test"),
            Some("8080-sbx_Ab.preview.test:443"),
            "/a?b",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (t.sandbox.as_str(), t.port, t.path.as_str()),
            ("sbx_Ab", 8080, "/a?b")
        );
        assert!(target(Some("preview.test"), Some("api.other.test"), "/v1/x").is_none());
        assert!(target(None, None, "/v1/sandboxes").is_none());
    }

    #[test]
    fn bad_targets_are_refused() {
        for (host, path) in [
            (None, "/preview/sbx a/80/"),
            (None, "/preview/sbx_a/0/"),
            (None, "/preview/sbx_a/65536/"),
            (None, "/preview/sbx_a/http/"),
            (None, "/preview//80/"),
            (Some("80-sbx.a.preview.test"), "/"),
            (Some("x-sbx.preview.test"), "/"),
            (Some("80.preview.test"), "/"),
        ] {
            assert!(
                matches!(target(Some("preview.test"), host, path), Some(Err(_))),
                "{host:?} {path}"
            );
        }
        let long = format!("/preview/{}/80/", "a".repeat(129));
        assert!(matches!(target(None, None, &long), Some(Err(_))));
    }

    #[test]
    fn the_token_leaves_the_query() {
        assert_eq!(
            take_token(Some("a=1&token=abc%2Ed&b=2")),
            (Some("a=1&b=2".into()), Some("abc.d".into()))
        );
        assert_eq!(take_token(Some("token=x")), (None, Some("x".into())));
        assert_eq!(take_token(Some("q=token")), (Some("q=token".into()), None));
    }

    #[test]
    fn a_path_mode_preview_is_confined_to_an_opaque_origin_and_its_path() {
        let t = target(None, None, "/preview/sbx_b/8080/x")
            .unwrap()
            .unwrap();
        let mut h = HeaderMap::new();
        for c in [
            "__Host-talon-session=planted; Path=/; Secure; HttpOnly",
            "app=1; Path=/; Domain=127.0.0.1; HttpOnly",
            "deep=2; path=/api; SameSite=Lax",
            "bare=3",
        ] {
            h.append(header::SET_COOKIE, HeaderValue::from_str(c).unwrap());
        }
        h.insert("service-worker-allowed", HeaderValue::from_static("/"));
        h.insert("clear-site-data", HeaderValue::from_static("\"cookies\""));
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'self'"),
        );
        confine_response(&t, &mut h);
        let cookies: Vec<_> = h
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(
            cookies,
            [
                "app=1; HttpOnly; Path=/preview/sbx_b/8080/",
                "deep=2; SameSite=Lax; Path=/preview/sbx_b/8080/api",
                "bare=3; Path=/preview/sbx_b/8080/",
            ]
        );
        assert!(!h.contains_key("service-worker-allowed"));
        assert!(!h.contains_key("clear-site-data"));
        let csp: Vec<_> = h.get_all(header::CONTENT_SECURITY_POLICY).iter().collect();
        assert_eq!(csp, ["default-src 'self'", PATH_MODE_CSP]);
        assert!(!PATH_MODE_CSP.contains("allow-same-origin"));
        assert!(!PATH_MODE_CSP.contains("allow-top-navigation"));
    }

    #[test]
    fn a_subdomain_preview_keeps_its_cookies_to_its_host() {
        let t = target(Some("p.test"), Some("80-sbx_b.p.test"), "/")
            .unwrap()
            .unwrap();
        let mut h = HeaderMap::new();
        h.append(
            header::SET_COOKIE,
            HeaderValue::from_static("__Host-x=1; Path=/; Secure"),
        );
        h.append(
            header::SET_COOKIE,
            HeaderValue::from_static("s=1; Domain=p.test; Path=/app"),
        );
        confine_response(&t, &mut h);
        let cookies: Vec<_> = h.get_all(header::SET_COOKIE).iter().collect();
        assert_eq!(cookies, ["__Host-x=1; Secure; Path=/", "s=1; Path=/app"]);
        assert!(!h.contains_key(header::CONTENT_SECURITY_POLICY));
    }

    #[test]
    fn no_preview_token_or_session_reaches_a_preview() {
        // A visitor who opened another sandbox's path preview carries its
        // cookie (Path=/ on the gateway's host) to this one: it used to be
        // forwarded, and that sandbox's server could use the token.
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static(
                "a=1; __Host-talon-preview-sbx_a-80=tok; talon-preview-sbx_a-80=tok; \
                 __Host-talon-preview-sbx_victim-3000=theirs; talon-preview-sbx_victim-3000=theirs",
            ),
        );
        h.append(
            header::COOKIE,
            HeaderValue::from_str(&format!("{}=sess; b=2", crate::session::COOKIE)).unwrap(),
        );
        strip_credentials(&mut h);
        assert_eq!(h[header::COOKIE], "a=1; b=2");
        assert_eq!(h.get_all(header::COOKIE).iter().count(), 1);
    }
}
