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
use crate::confine::{Confinement, strip_credentials};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use std::net::SocketAddr;
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
    format!(
        "{}{}-{}",
        talon_core::cookies::PREVIEW_PREFIX,
        t.sandbox,
        t.port
    )
}

/// Its plain-HTTP twin: a client other than a browser never sends a
/// `Secure` cookie back over http, so a gateway whose public URL is not
/// https sets this one too (browsers keep both on loopback, which they
/// count as secure; path mode's opaque-origin pages need the `Secure`,
/// `SameSite=None` one). Bound to one sandbox and port like the other.
pub fn plain_cookie_name(t: &Target) -> String {
    format!(
        "{}{}-{}",
        talon_core::cookies::PLAIN_PREVIEW_PREFIX,
        t.sandbox,
        t.port
    )
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
    // The browser's DevTools port drives the browser: only BrowserService's
    // CDP URLs open it, through the CDP proxy, with a token of their own.
    if target.port == talon_proto::BROWSER_CDP_PORT {
        return crate::error::response(
            &gw.pool,
            &Status::permission_denied(format!(
                "port {} is the sandbox browser's DevTools port: it is reached at BrowserService's cdp_url, never as a preview",
                target.port
            )),
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
        if let Err(s) = cookie_upgrade(gw.config.preview_domain.as_deref(), &target, req.headers())
        {
            return crate::error::response(&gw.pool, &s);
        }
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

    let confinement = if target.prefix.is_empty() {
        Confinement::SubdomainPreview
    } else {
        Confinement::PathPreview {
            prefix: &target.prefix,
        }
    };
    match crate::tunnel::forward(io, req, confinement).await {
        Ok(r) => r,
        Err(s) => crate::error::response(&gw.pool, &s),
    }
}

/// A WebSocket (or other upgrade) that only the preview cookie vouches
/// for must come from a page of the same sandbox, as the browser names it
/// in `Origin`: a path-mode page's opaque origin (`null`), or any of the
/// sandbox's subdomain previews. The cookie goes along with a WebSocket
/// from any page of the same site (in subdomain mode, every other
/// sandbox's previews), and a WebSocket is never held to CORS. A request
/// with no `Origin` never came from a browser's page: it brings the token.
fn cookie_upgrade(domain: Option<&str>, target: &Target, h: &HeaderMap) -> Result<(), Status> {
    if !h.contains_key(header::UPGRADE) {
        return Ok(());
    }
    let origin = h.get(header::ORIGIN).map(|o| o.to_str().unwrap_or(""));
    let ours = match origin {
        None => false,
        Some("null") => !target.prefix.is_empty(),
        Some(o) => o
            .strip_prefix("https://")
            .or_else(|| o.strip_prefix("http://"))
            .and_then(|host| target_of_host(domain, host))
            .is_some_and(|t| t.sandbox.eq_ignore_ascii_case(&target.sandbox)),
    };
    if ours {
        Ok(())
    } else {
        Err(Status::permission_denied(format!(
            "a WebSocket with the preview cookie from origin {} may not open this preview: only the sandbox's own pages may",
            origin.unwrap_or("(none)")
        )))
    }
}

/// The subdomain preview a host (`host[:port]`) names, if it is one.
fn target_of_host(domain: Option<&str>, host: &str) -> Option<Target> {
    target(Some(domain?), Some(host), "/")?.ok()
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
    crate::tunnel::open_tunnel(gw.channel.clone(), &target.sandbox, target.port, key, value).await
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
    fn a_websocket_on_the_preview_cookie_comes_from_the_sandboxs_own_pages() {
        let ws = |origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            if let Some(o) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
            }
            h
        };
        let d = Some("localhost");
        let path = target(d, Some("127.0.0.1:8080"), "/preview/sbx_A/3000/ws")
            .unwrap()
            .unwrap();
        let sub = target(d, Some("3000-sbx_a.localhost:8080"), "/ws")
            .unwrap()
            .unwrap();
        for t in [&path, &sub] {
            // Any page of the same sandbox, any port.
            for o in [
                "http://3000-sbx_a.localhost:8080",
                "https://5173-SBX_A.localhost",
            ] {
                assert!(cookie_upgrade(d, t, &ws(Some(o))).is_ok(), "{o}");
            }
            // Another sandbox's preview on the same site, the API's own
            // origin, another site, or no page at all.
            for o in [
                Some("http://3000-sbx_b.localhost:8080"),
                Some("http://localhost:8080"),
                Some("http://127.0.0.1:8080"),
                Some("https://evil.test"),
                Some("http://3000-sbx_a.localhost.evil.test"),
                None,
            ] {
                assert!(cookie_upgrade(d, t, &ws(o)).is_err(), "{o:?}");
            }
            // A plain request is no WebSocket.
            assert!(cookie_upgrade(d, t, &HeaderMap::new()).is_ok());
        }
        // A path-mode page's origin is opaque; a subdomain page's never is.
        assert!(cookie_upgrade(d, &path, &ws(Some("null"))).is_ok());
        assert!(cookie_upgrade(d, &sub, &ws(Some("null"))).is_err());
        // Without a preview domain only the opaque origin is a preview's.
        assert!(cookie_upgrade(None, &path, &ws(Some("null"))).is_ok());
        assert!(cookie_upgrade(None, &path, &ws(Some("http://3000-sbx_a.localhost"))).is_err());
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
}
