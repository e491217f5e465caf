//! The sandbox's browser (BrowserService) in a real sandbox with the host's
//! Chromium: DevTools through the gateway with every WebSocket URL
//! rewritten to point back through it, a page driven over that WebSocket,
//! a screenshot, the live view, crash reporting, the profile surviving a
//! stop and start of the sandbox, the token bound to its sandbox and port
//! (a regression test of the proxy's authorization) and refused once it
//! expires, and the browser held to the sandbox's egress policy (a public
//! host behind a router namespace, the worker's own address never).

mod browser_egress;
mod common;
use common::*;
use futures::{SinkExt, StreamExt};
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio_tungstenite::tungstenite::Message;

type Browsers = pb::browser_service_client::BrowserServiceClient<Authed>;

fn browsers(channel: tonic::transport::Channel, token: &str) -> Browsers {
    let b = Bearer(Some(format!("Bearer {token}").parse().unwrap()));
    pb::browser_service_client::BrowserServiceClient::with_interceptor(channel, b)
}

/// One CDP call over a WebSocket; events before its answer are skipped.
async fn cdp<S>(ws: &mut S, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value
where
    S: futures::Sink<Message>
        + futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + Unpin,
    <S as futures::Sink<Message>>::Error: std::fmt::Debug,
{
    let m = serde_json::json!({"id": id, "method": method, "params": params});
    ws.send(Message::text(m.to_string())).await.unwrap();
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("a CDP answer within 30 s")
            .expect("open")
            .unwrap();
        if let Message::Text(t) = msg {
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
}

fn has_chromium() -> bool {
    std::path::Path::new("/usr/lib/chromium/chromium").exists()
}

#[tokio::test]
async fn browser_through_the_gateway_screenshot_crash_profile_and_token_scope() {
    if !has_chromium() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs Debian's chromium; this test must run there"
        );
        eprintln!("skipped: no /usr/lib/chromium/chromium on this host");
        return;
    }
    ensure_agent_built();
    let s = Server::up().await;
    let t = tenant(&s, "browsers").await;
    let mut dev = s.as_(&t.developer).await;
    let id = dev
        .sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox::default()),
            wait_until_running: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
        .sandbox_id;
    let mut br = browsers(s.channel().await, &t.developer);

    // Before a start: stopped, and a screenshot says why it can't.
    let b = br
        .get_browser(pb::GetBrowserRequest {
            sandbox_id: id.clone(),
            url_ttl: None,
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    assert_eq!(b.state, pb::BrowserState::Stopped as i32);
    let e = br
        .take_screenshot(pb::TakeScreenshotRequest {
            sandbox_id: id.clone(),
            full_page: false,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let bad = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            window_size: "99999,1".into(),
            url_ttl: None,
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);

    let b = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            window_size: "1024,768".into(),
            url_ttl: None,
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    assert_eq!(b.state, pb::BrowserState::Running as i32, "{b:?}");
    assert_eq!(b.window_size, "1024,768");
    let prefix = format!("{}/cdp/{id}/", s.http);
    assert!(b.cdp_url.starts_with(&prefix), "{}", b.cdp_url);
    assert_eq!(b.live_view_url, format!("{}/live", b.cdp_url));
    let ws_prefix = prefix.replacen("http://", "ws://", 1);
    assert!(
        b.websocket_debugger_url.starts_with(&ws_prefix)
            && b.websocket_debugger_url.contains("/devtools/browser/"),
        "{}",
        b.websocket_debugger_url
    );
    // A second start returns the running browser.
    let again = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    assert_eq!(again.pid, b.pid);

    // /json/version and /json/list name WebSockets through the gateway.
    let http = reqwest::Client::new();
    for path in ["/json/version", "/json/list", "/json/version/"] {
        let r = http
            .get(format!("{}{path}", b.cdp_url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let text = r.text().await.unwrap();
        assert!(!text.contains("127.0.0.1:9222"), "{path}: {text}");
        assert!(text.contains(&ws_prefix), "{path}: {text}");
    }
    let list: serde_json::Value = http
        .get(format!("{}/json/list", b.cdp_url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let page = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .expect("a page target")
        .clone();

    // Drive the page over its rewritten WebSocket: navigate, read back.
    let (mut ws, _) =
        tokio_tungstenite::connect_async(page["webSocketDebuggerUrl"].as_str().unwrap())
            .await
            .unwrap();
    cdp(&mut ws, 1, "Page.enable", serde_json::json!({})).await;
    let html = "<title>Talon test page</title><h1 style='font-size:80px'>hello</h1>";
    cdp(
        &mut ws,
        2,
        "Page.navigate",
        serde_json::json!({"url": format!("data:text/html,{html}")}),
    )
    .await;
    let mut title = String::new();
    for i in 0..50 {
        let r = cdp(
            &mut ws,
            10 + i,
            "Runtime.evaluate",
            serde_json::json!({"expression": "document.title", "returnByValue": true}),
        )
        .await;
        title = r["result"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if title == "Talon test page" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(title, "Talon test page");
    // The browser-level endpoint answers too.
    let (mut bws, _) = tokio_tungstenite::connect_async(b.websocket_debugger_url.as_str())
        .await
        .unwrap();
    let v = cdp(&mut bws, 1, "Browser.getVersion", serde_json::json!({})).await;
    assert!(v["product"].as_str().unwrap().contains("Chrome"), "{v}");

    // The screenshot: a PNG of the page, with its title.
    let shot = br
        .take_screenshot(pb::TakeScreenshotRequest {
            sandbox_id: id.clone(),
            full_page: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(shot.png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(shot.png.len() > 1000);
    assert_eq!(shot.title, "Talon test page");
    let full = br
        .take_screenshot(pb::TakeScreenshotRequest {
            sandbox_id: id.clone(),
            full_page: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(full.png.starts_with(b"\x89PNG"));

    // The live view page is served, without caching or a Referer.
    let r = http.get(&b.live_view_url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["referrer-policy"], "no-referrer");
    assert!(r.text().await.unwrap().contains("Page.startScreencast"));
    // ... and what it does works: screencast frames come over the proxy.
    cdp(
        &mut ws,
        100,
        "Page.startScreencast",
        serde_json::json!({"format": "jpeg", "quality": 50}),
    )
    .await;
    let frame = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(Ok(Message::Text(t))) = ws.next().await {
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                if v["method"] == "Page.screencastFrame" {
                    return v;
                }
            }
        }
    })
    .await
    .expect("a screencast frame");
    assert!(!frame["params"]["data"].as_str().unwrap().is_empty());
    drop(ws);
    drop(bws);

    // The token opens this sandbox's browser port and nothing else.
    let token = b.cdp_url.rsplit('/').next().unwrap().to_string();
    let other = dev
        .sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox::default()),
            wait_until_running: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
        .sandbox_id;
    let r = http
        .get(format!("{}/cdp/{other}/{token}/json/version", s.http))
        .send()
        .await
        .unwrap();
    assert!(
        matches!(r.status().as_u16(), 401 | 403 | 404),
        "another sandbox: {}",
        r.status()
    );
    let mut forged = token.clone();
    forged.pop();
    forged.push(if token.ends_with('A') { 'B' } else { 'A' });
    let r = http
        .get(format!("{}/cdp/{id}/{forged}/json/version", s.http))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "a forged token");
    // A preview token for another port of the same sandbox is no CDP token.
    let mut previews = pb::preview_service_client::PreviewServiceClient::with_interceptor(
        s.channel().await,
        Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap())),
    );
    let port_token = previews
        .create_preview_token(pb::CreatePreviewTokenRequest {
            sandbox_id: id.clone(),
            port: 8080,
            ttl: None,
        })
        .await
        .unwrap()
        .into_inner()
        .token;
    let r = http
        .get(format!("{}/cdp/{id}/{port_token}/json/version", s.http))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "a token for port 8080");
    // A viewer sees the state but no URL, and may not start or stop it.
    let mut viewer = browsers(s.channel().await, &t.viewer);
    let seen = viewer
        .get_browser(pb::GetBrowserRequest {
            sandbox_id: id.clone(),
            url_ttl: None,
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    assert_eq!(seen.state, pb::BrowserState::Running as i32);
    assert!(
        seen.cdp_url.is_empty()
            && seen.websocket_debugger_url.is_empty()
            && seen.live_view_url.is_empty()
    );
    let e = viewer
        .stop_browser(pb::StopBrowserRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
    // Another tenant does not find the sandbox.
    let intruder = tenant(&s, "browser-intruder").await;
    let e = browsers(s.channel().await, &intruder.developer)
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);

    // A crash (the workload kills the browser) is reported, with how, in
    // GetBrowser and in the sandbox's events.
    let mut events = dev
        .sandboxes
        .watch_sandbox_events(pb::WatchSandboxEventsRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let first = events.message().await.unwrap().unwrap();
    assert_eq!(first.kind, pb::SandboxEventKind::StateChanged as i32);
    let ch = s.channel().await;
    let mut procs = procs_client(
        ch,
        Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap())),
    );
    let pid = b.pid.to_string();
    let (_, _, code) = exec(&mut procs, &id, &["kill", "-9", &pid]).await;
    assert_eq!(code, 0);
    let mut crashed = None;
    for _ in 0..100 {
        let g = br
            .get_browser(pb::GetBrowserRequest {
                sandbox_id: id.clone(),
                url_ttl: None,
            })
            .await
            .unwrap()
            .into_inner()
            .browser
            .unwrap();
        if g.state == pb::BrowserState::Crashed as i32 {
            crashed = Some(g);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let crashed = crashed.expect("the browser is reported crashed");
    assert!(crashed.error.contains("signal 9"), "{}", crashed.error);
    assert!(crashed.cdp_url.is_empty());
    let ev = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let e = events.message().await.unwrap().unwrap();
            if e.kind == pb::SandboxEventKind::BrowserCrashed as i32 {
                return e;
            }
        }
    })
    .await
    .expect("a browser-crashed event");
    assert!(ev.message.contains("signal 9"), "{}", ev.message);
    assert_eq!(ev.sandbox.unwrap().sandbox_id, id);

    // The profile lives in the workspace: a persistent cookie set before a
    // clean stop is there after the sandbox stops and starts again.
    let b = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    let (mut bws, _) = tokio_tungstenite::connect_async(b.websocket_debugger_url.as_str())
        .await
        .unwrap();
    let expires = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 86_400;
    cdp(
        &mut bws,
        1,
        "Storage.setCookies",
        serde_json::json!({"cookies": [{
            "name": "session", "value": "kept-42", "domain": "example.test",
            "path": "/", "expires": expires
        }]}),
    )
    .await;
    drop(bws);
    let stopped = br
        .stop_browser(pb::StopBrowserRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    assert_eq!(stopped.state, pb::BrowserState::Stopped as i32);
    // A stop is no crash: no event for it.
    let quiet = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            let e = events.message().await.unwrap().unwrap();
            if e.kind == pb::SandboxEventKind::BrowserCrashed as i32 {
                return e;
            }
        }
    })
    .await;
    assert!(
        quiet.is_err(),
        "a stopped browser is not reported crashed: {quiet:?}"
    );
    let r = http
        .get(format!("{}/json/version", b.cdp_url))
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_server_error(),
        "a stopped browser: {}",
        r.status()
    );
    dev.sandboxes
        .stop_sandbox(pb::StopSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    dev.sandboxes
        .start_sandbox(pb::StartSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    let b = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    let (mut bws, _) = tokio_tungstenite::connect_async(b.websocket_debugger_url.as_str())
        .await
        .unwrap();
    let cookies = cdp(&mut bws, 1, "Storage.getCookies", serde_json::json!({})).await;
    assert!(
        cookies["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "session" && c["value"] == "kept-42"),
        "{cookies}"
    );
}
