//! The CDP proxy: a sandbox's browser's DevTools endpoint (HTTP `/json/*`
//! and the WebSocket), through the preview tunnel to the browser's port,
//! under `/cdp/{sandbox}/{token}/…`. The token is a preview token for that
//! sandbox and the browser's port (BrowserService hands it out inside the
//! URLs); it sits in the path because Playwright's `connect_over_cdp`
//! appends `/json/version/` to the URL it is given and keeps no query.
//! (Puppeteer's `browserURL` asks for `/json/version` at the host's root,
//! dropping any path: Puppeteer connects by `browserWSEndpoint`, the
//! `websocket_debugger_url` BrowserService gives.) The server checks the
//! token, as for any preview.
//!
//! Chromium answers only requests whose `Host` is an address or localhost,
//! and refuses a WebSocket with an `Origin` unless told otherwise: both are
//! set here. The JSON answers name WebSockets on the sandbox's
//! `127.0.0.1`; they are rewritten to point back through this proxy, so a
//! client never sees (or tries) the sandbox's own address.
//!
//! `/cdp/{sandbox}/{token}/live` is the live view: a page that shows the
//! first page target's screen from CDP screencast frames.
//!
//! What answers on the port is whatever the sandbox runs there (its
//! workload may replace Chromium), and these URLs are on the gateway's
//! own origin, where a visitor's session lives. So the proxy serves only
//! what DevTools clients use (`/json…` over HTTP, `/devtools/…` as a
//! WebSocket) and hands every answer over as inert data (see `confine`):
//! nothing the port sends runs as a page there. The live view is our own
//! page, but it acts on what the port says, so it runs in an opaque
//! origin too: it holds no session, and the `/json` answers it reads are
//! open to any origin (whoever has the URL has its token anyway).

use crate::Gateway;
use crate::confine::Confinement;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use http_body_util::BodyExt;
use tonic::Status;

/// The most a DevTools JSON answer may be.
const MAX_JSON: usize = 4 << 20;

/// A request for the CDP proxy.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub sandbox: String,
    pub token: String,
    /// The path after the token, from `/`.
    pub path: String,
}

/// The target of a request, if it is a CDP request at all: Some(Err) for
/// one under `/cdp/` that names none.
pub fn target(path: &str) -> Option<Result<Target, Status>> {
    let rest = path.strip_prefix("/cdp/")?;
    let mut parts = rest.splitn(3, '/');
    let (sandbox, token) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let tail = parts.next().unwrap_or("");
    let id_ok = (1..=128).contains(&sandbox.len())
        && sandbox
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let token_ok = (1..=4096).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    Some(if id_ok && token_ok {
        Ok(Target {
            sandbox: sandbox.to_string(),
            token: token.to_string(),
            path: format!("/{tail}"),
        })
    } else {
        Err(Status::not_found(
            "a CDP path is /cdp/{sandbox}/{token}/…, as BrowserService gives it",
        ))
    })
}

/// Serves one CDP request.
pub async fn handle(gw: &Gateway, t: Target, mut req: http::Request<Body>) -> Response {
    if t.path == "/live" || t.path == "/live/" {
        return live_view();
    }
    let json = is_json(&t.path);
    if !served(&t.path, req.headers().contains_key(header::UPGRADE)) {
        return crate::error::response(
            &gw.pool,
            &Status::not_found(
                "the CDP proxy serves /json/…, the DevTools WebSockets (/devtools/…) and /live",
            ),
        );
    }
    let get = req.method() == http::Method::GET;
    let value = match t.token.parse() {
        Ok(v) => v,
        Err(_) => {
            return crate::error::response(&gw.pool, &Status::unauthenticated("malformed token"));
        }
    };
    let io = match crate::tunnel::open_tunnel(
        gw.channel.clone(),
        &t.sandbox,
        talon_proto::BROWSER_CDP_PORT,
        talon_core::wire::PREVIEW_TOKEN_HEADER,
        value,
    )
    .await
    {
        Ok(io) => io,
        Err(s) => return crate::error::response(&gw.pool, &s),
    };
    if let Some(rc) = talon_core::listen::RequestConn::of(req.extensions()) {
        rc.authenticated();
    }
    // Where the client reached us, for the rewritten WebSocket URLs.
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
        .unwrap_or_default();
    let ws_scheme = if gw.config.public_https { "wss" } else { "ws" };
    let prefix = format!("{host}/cdp/{}/{}", t.sandbox, t.token);
    let h = req.headers_mut();
    crate::confine::strip_credentials(h);
    h.remove(header::AUTHORIZATION);
    h.remove(header::ORIGIN);
    for name in [
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-host",
        "x-real-ip",
    ] {
        h.remove(name);
    }
    h.insert(
        header::HOST,
        HeaderValue::from_str(&format!("127.0.0.1:{}", talon_proto::BROWSER_CDP_PORT))
            .expect("host"),
    );
    let mut pq = t.path.clone();
    if let Some(q) = req.uri().query() {
        pq.push('?');
        pq.push_str(q);
    }
    match pq.parse() {
        Ok(uri) => *req.uri_mut() = uri,
        Err(_) => {
            return crate::error::response(&gw.pool, &Status::invalid_argument("bad CDP path"));
        }
    }
    let mut resp = match crate::tunnel::forward(io, req, Confinement::Inert).await {
        Ok(r) => r,
        Err(s) => return crate::error::response(&gw.pool, &s),
    };
    if json && get {
        // For the live view, whose origin is opaque.
        resp.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    if !json || resp.status() != StatusCode::OK {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = match http_body_util::Limited::new(body, MAX_JSON).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return crate::error::response(
                &gw.pool,
                &Status::unavailable(format!("the browser's answer: {e}")),
            );
        }
    };
    let out = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut v) => {
            rewrite(&mut v, ws_scheme, &prefix);
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            bytes::Bytes::from(serde_json::to_vec_pretty(&v).unwrap_or_default())
        }
        // Anything else is passed as it is, as inert as `forward` made it.
        Err(_) => bytes,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::TRANSFER_ENCODING);
    http::Response::from_parts(parts, Body::from(out))
}

/// A DevTools JSON path: `/json` and what is under it.
fn is_json(path: &str) -> bool {
    path == "/json" || path.starts_with("/json/")
}

/// What the proxy passes to the port: what DevTools clients use, the JSON
/// endpoints over HTTP and the targets' WebSockets; nothing else the
/// port might serve (Chromium's own DevTools front end included, which
/// would run on the gateway's origin).
fn served(path: &str, upgrade: bool) -> bool {
    if upgrade {
        path.starts_with("/devtools/")
    } else {
        is_json(path)
    }
}

/// Points the WebSocket URLs of a DevTools JSON answer (one target or a
/// list) at `{scheme}://{prefix}` instead of the sandbox's loopback.
pub fn rewrite(v: &mut serde_json::Value, scheme: &str, prefix: &str) {
    let items: Vec<&mut serde_json::Value> = match v {
        serde_json::Value::Array(a) => a.iter_mut().collect(),
        o => vec![o],
    };
    for item in items {
        let Some(o) = item.as_object_mut() else {
            continue;
        };
        if let Some(serde_json::Value::String(ws)) = o.get_mut("webSocketDebuggerUrl") {
            *ws = match path_of(ws) {
                Some(p) => format!("{scheme}://{prefix}{p}"),
                None => String::new(),
            };
        }
        if let Some(serde_json::Value::String(f)) = o.get_mut("devtoolsFrontendUrl") {
            // `…inspector.html?ws=127.0.0.1:9222/devtools/page/ID`
            if let Some((front, rest)) = f.split_once("?ws=").or_else(|| f.split_once("?wss=")) {
                let path = rest.find('/').map_or("", |i| &rest[i..]);
                *f = format!("{front}?{scheme}={prefix}{path}");
            }
        }
    }
}

/// The path of a `ws://host:port/path` URL.
fn path_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    rest.find('/').map(|i| &rest[i..])
}

/// The live view's policy: an opaque origin (`sandbox allow-scripts`, no
/// `allow-same-origin`), its own inline script and style, frames as
/// `data:` images, and connections to the gateway alone.
pub const LIVE_VIEW_CSP: &str = "sandbox allow-scripts; default-src 'none'; img-src data:; \
     style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self' ws: wss:";

fn live_view() -> Response {
    let mut r = (StatusCode::OK, LIVE_VIEW).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The URL carries the token: no Referer, no caching.
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LIVE_VIEW_CSP),
    );
    r
}

/// The live view: the first page target's screencast, drawn as it comes;
/// it reconnects when the page or the browser goes away.
const LIVE_VIEW: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Talon browser: live view</title>
<style>
html,body{margin:0;height:100%;background:#16181d;color:#c9ced8;font:13px system-ui,sans-serif}
#bar{padding:6px 10px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#screen{display:block;max-width:100%;max-height:calc(100% - 30px);margin:0 auto}
</style></head>
<body><div id="bar">connecting…</div><img id="screen" alt=""></body>
<script>
"use strict";
const base = location.pathname.replace(/\/live\/?$/, "");
const wsBase = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + base;
const bar = document.getElementById("bar");
const screen = document.getElementById("screen");
let frames = 0;
function again(msg) { bar.textContent = msg; setTimeout(connect, 1000); }
async function connect() {
  let page;
  try {
    const list = await (await fetch(base + "/json/list", {cache: "no-store"})).json();
    // A target's id goes into a URL: only Chromium's form (hex) is taken.
    page = list.find(t => t.type === "page" && /^[0-9A-Fa-f]{1,64}$/.test(t.id));
  } catch (e) { return again("the browser is not answering; retrying…"); }
  if (!page) return again("no open page; retrying…");
  const ws = new WebSocket(wsBase + "/devtools/page/" + page.id);
  let id = 0;
  const send = (method, params) => ws.send(JSON.stringify({id: ++id, method, params: params || {}}));
  ws.onopen = () => {
    bar.textContent = page.url;
    send("Page.enable");
    send("Page.startScreencast", {format: "jpeg", quality: 70, everyNthFrame: 1});
  };
  ws.onmessage = ev => {
    const m = JSON.parse(ev.data);
    if (m.method === "Page.screencastFrame") {
      screen.src = "data:image/jpeg;base64," + m.params.data;
      document.body.dataset.frames = String(++frames);
      send("Page.screencastFrameAck", {sessionId: m.params.sessionId});
    } else if (m.method === "Page.frameNavigated" && !m.params.frame.parentId) {
      bar.textContent = m.params.frame.url;
    }
  };
  ws.onclose = () => again("disconnected; reconnecting…");
}
connect();
</script></html>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_sandbox_and_a_token() {
        let t = target("/cdp/sbx_1/abc.def-_g/json/version")
            .unwrap()
            .unwrap();
        assert_eq!(
            t,
            Target {
                sandbox: "sbx_1".into(),
                token: "abc.def-_g".into(),
                path: "/json/version".into()
            }
        );
        assert_eq!(target("/cdp/sbx_1/tok").unwrap().unwrap().path, "/");
        assert!(target("/v1/sandboxes").is_none());
        for bad in [
            "/cdp/",
            "/cdp/sbx_1",
            "/cdp/sbx_1/",
            "/cdp/a%2f/t/x",
            "/cdp/s/t%20x/y",
        ] {
            assert!(target(bad).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_what_devtools_clients_use_is_served() {
        for (path, upgrade) in [
            ("/json", false),
            ("/json/version", false),
            ("/json/version/", false),
            ("/json/list", false),
            ("/json/protocol", false),
            ("/devtools/browser/B1", true),
            ("/devtools/page/P1", true),
        ] {
            assert!(served(path, upgrade), "{path} {upgrade}");
        }
        for (path, upgrade) in [
            ("/", false),
            ("/index.html", false),
            ("/jsonx", false),
            ("/devtools/inspector.html", false),
            ("/devtools/page/P1", false),
            ("/json/version", true),
            ("/v1/sandboxes", true),
        ] {
            assert!(!served(path, upgrade), "{path} {upgrade}");
        }
    }

    #[test]
    fn the_live_view_runs_in_an_opaque_origin() {
        let r = live_view();
        let csp = r.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(csp.starts_with("sandbox allow-scripts;"), "{csp}");
        assert!(!csp.contains("allow-same-origin"), "{csp}");
        assert_eq!(r.headers()[header::REFERRER_POLICY], "no-referrer");
    }

    #[test]
    fn websocket_urls_point_back_through_the_proxy() {
        let mut v = serde_json::json!({
            "Browser": "Chrome/1",
            "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/browser/B1"
        });
        rewrite(&mut v, "wss", "gw.example:443/cdp/s/t");
        assert_eq!(
            v["webSocketDebuggerUrl"],
            "wss://gw.example:443/cdp/s/t/devtools/browser/B1"
        );
        let mut l = serde_json::json!([{
            "id": "P1",
            "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/page/P1",
            "devtoolsFrontendUrl": "https://x/inspector.html?ws=127.0.0.1:9222/devtools/page/P1"
        }]);
        rewrite(&mut l, "ws", "h:8080/cdp/s/t");
        assert_eq!(
            l[0]["webSocketDebuggerUrl"],
            "ws://h:8080/cdp/s/t/devtools/page/P1"
        );
        assert_eq!(
            l[0]["devtoolsFrontendUrl"],
            "https://x/inspector.html?ws=h:8080/cdp/s/t/devtools/page/P1"
        );
        assert!(!l.to_string().contains("127.0.0.1"));
    }
}
