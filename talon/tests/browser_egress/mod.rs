//! The browser under the sandbox's egress policy, against a "public" host
//! built beyond the worker from namespaces; and expired CDP URLs refused.

use super::{browsers, cdp, has_chromium};
use crate::common::*;
use futures::{SinkExt, StreamExt};
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio_tungstenite::tungstenite::Message;

/// A "public" host beyond the worker, as the internet is: a router
/// namespace on a link from the host (198.51.100.0/30, which becomes one
/// of the host's own networks, denied to sandboxes) and behind it a host
/// namespace at 203.0.113.2 (TEST-NET-3, outside every always-denied
/// range) serving HTTP; plus a server on the worker itself. This test's
/// namespaces, links, sandbox bridge and nft tables go on drop.
struct PublicHost {
    server: std::process::Child,
    host_server: std::process::Child,
}

const NS: &str = "tlbpub";
const ROUTER: &str = "tlbrt";
const EG_BRIDGE: &str = "tlbrw";

fn ip(args: &[&str]) {
    let ok = std::process::Command::new("ip")
        .args(args)
        .status()
        .unwrap();
    assert!(ok.success(), "ip {args:?}");
}

fn ip_in(ns: &str, args: &[&str]) {
    let mut a = vec!["netns", "exec", ns, "ip"];
    a.extend(args);
    ip(&a);
}

fn remove_links() {
    for (what, name) in [("netns", NS), ("netns", ROUTER), ("link", "tlbrth")] {
        let _ = std::process::Command::new("ip")
            .args([what, "del", name])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

impl PublicHost {
    fn up(dir: &std::path::Path, host_port: u16) -> PublicHost {
        remove_links();
        ip(&["netns", "add", ROUTER]);
        ip(&["netns", "add", NS]);
        // host tlbrth 198.51.100.1 <-> router tlbrtn 198.51.100.2
        ip(&[
            "link", "add", "tlbrth", "type", "veth", "peer", "name", "tlbrtn",
        ]);
        ip(&["link", "set", "tlbrtn", "netns", ROUTER]);
        ip(&["addr", "add", "198.51.100.1/30", "dev", "tlbrth"]);
        ip(&["link", "set", "tlbrth", "up"]);
        ip(&["route", "add", "203.0.113.0/30", "via", "198.51.100.2"]);
        ip_in(ROUTER, &["addr", "add", "198.51.100.2/30", "dev", "tlbrtn"]);
        ip_in(ROUTER, &["link", "set", "tlbrtn", "up"]);
        // router tlbpubr 203.0.113.1 <-> public tlbpubn 203.0.113.2
        ip_in(
            ROUTER,
            &[
                "link", "add", "tlbpubr", "type", "veth", "peer", "name", "tlbpubn",
            ],
        );
        ip_in(ROUTER, &["link", "set", "tlbpubn", "netns", NS]);
        ip_in(ROUTER, &["addr", "add", "203.0.113.1/30", "dev", "tlbpubr"]);
        ip_in(ROUTER, &["link", "set", "tlbpubr", "up"]);
        let fwd = std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                ROUTER,
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
            ])
            .status()
            .unwrap();
        assert!(fwd.success());
        ip_in(NS, &["addr", "add", "203.0.113.2/30", "dev", "tlbpubn"]);
        ip_in(NS, &["link", "set", "tlbpubn", "up"]);
        ip_in(NS, &["link", "set", "lo", "up"]);
        // Back to the host's link only: with a default route, http.server's
        // reverse lookup of its address would wait on DNS.
        ip_in(
            NS,
            &["route", "add", "198.51.100.0/30", "via", "203.0.113.1"],
        );
        std::fs::write(dir.join("index.html"), "<title>public</title>").unwrap();
        let serve = |netns: bool, bind: &str, port: u16| {
            let mut c = std::process::Command::new(if netns { "ip" } else { "/usr/bin/python3" });
            if netns {
                c.args(["netns", "exec", NS, "/usr/bin/python3"]);
            }
            c.args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                bind,
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
        };
        let h = PublicHost {
            server: serve(true, "203.0.113.2", 8000),
            // On the worker itself, every address: the gateway included.
            host_server: serve(false, "0.0.0.0", host_port),
        };
        // Both answer before the test goes on.
        for addr in [
            "203.0.113.2:8000".to_string(),
            format!("127.0.0.1:{host_port}"),
        ] {
            let up = (0..100).any(|_| {
                std::net::TcpStream::connect(&addr).is_ok() || {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    false
                }
            });
            assert!(up, "{addr} did not come up");
        }
        h
    }
}

impl Drop for PublicHost {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.host_server.kill();
        remove_links();
        let _ = std::process::Command::new("ip")
            .args(["link", "del", EG_BRIDGE])
            .status();
        for family in ["inet", "bridge"] {
            let _ = std::process::Command::new("nft")
                .args(["delete", "table", family, EG_BRIDGE])
                .status();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_browser_obeys_the_egress_policy_and_expired_urls_are_refused() {
    if !has_chromium() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs Debian's chromium"
        );
        eprintln!("skipped: no /usr/lib/chromium/chromium on this host");
        return;
    }
    assert_eq!(euid(), 0, "needs root (CI is root)");
    ensure_agent_built();
    let dir = tempfile::tempdir().unwrap();
    let host_port = free_port();
    let _public = PublicHost::up(dir.path(), host_port);
    let s = Server::up_with(&[
        "--network",
        "bridge",
        "--bridge",
        EG_BRIDGE,
        "--sandbox-cidr",
        "10.89.0.0/24",
        "--dns-upstream",
        "127.0.0.1:9",
    ])
    .await;
    let t = tenant(&s, "browser-egress").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let mut dev = s.as_(&t.developer).await;
    let id = dev
        .sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox {
                resources: Some(pb::Resources {
                    memory_mib: 1024,
                    ..Default::default()
                }),
                ..Default::default()
            }),
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
    let b = br
        .start_browser(pb::StartBrowserRequest {
            sandbox_id: id.clone(),
            window_size: String::new(),
            url_ttl: Some(prost_types::Duration {
                seconds: 1,
                nanos: 0,
            }),
        })
        .await
        .unwrap()
        .into_inner()
        .browser
        .unwrap();
    let (mut ws, _) = tokio_tungstenite::connect_async(b.websocket_debugger_url.as_str())
        .await
        .unwrap();
    let minted = std::time::Instant::now();
    let page = cdp(
        &mut ws,
        1,
        "Target.createTarget",
        serde_json::json!({"url": "about:blank"}),
    )
    .await;
    let session = cdp(
        &mut ws,
        2,
        "Target.attachToTarget",
        serde_json::json!({"targetId": page["targetId"], "flatten": true}),
    )
    .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Page calls go through the browser connection with the session id.
    let mut next = 10;
    let public = "http://203.0.113.2:8000/";
    let gateway = format!("http://10.89.0.1:{host_port}/");
    // Open: the public host answers; the worker itself never does.
    next += 1;
    let got = reach(&mut ws, &session, next, public).await;
    assert_eq!(got, "reached");
    next += 1;
    assert_ne!(reach(&mut ws, &session, next, &gateway).await, "reached");
    // Deny: the sandbox loses its interface, and the browser its network.
    for (mode, want) in [
        (pb::EgressMode::Deny, false),
        (pb::EgressMode::Open, true),
        (pb::EgressMode::Sealed, false),
    ] {
        dev.sandboxes
            .update_network_policy(pb::UpdateNetworkPolicyRequest {
                sandbox_id: id.clone(),
                network_policy: Some(pb::NetworkPolicy {
                    mode: mode as i32,
                    ..Default::default()
                }),
            })
            .await
            .unwrap();
        next += 1;
        let got = reach(&mut ws, &session, next, &format!("{public}?{next}")).await;
        assert_eq!(got == "reached", want, "{mode:?}: {got}");
    }
    // The URLs expire: once the token's second and the verifier's 30 s of
    // clock leeway have passed, the gateway refuses them (the WebSocket
    // opened before stays).
    tokio::time::sleep(Duration::from_secs(33).saturating_sub(minted.elapsed())).await;
    let r = reqwest::get(format!("{}/json/version", b.cdp_url))
        .await
        .unwrap();
    assert!(
        matches!(r.status().as_u16(), 401 | 403),
        "an expired CDP URL: {}",
        r.status()
    );
    drop(s);
}

/// Whether the page of `session` can load `url`: a navigation answers
/// with an `errorText` (net::ERR_…) when the network refuses it, and one
/// that gets no answer in 10 s did not reach it either (under `sealed`
/// Chromium keeps waiting where curl is refused at once).
async fn reach<S>(ws: &mut S, session: &str, id: u64, url: &str) -> String
where
    S: futures::Sink<Message>
        + futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + Unpin,
    <S as futures::Sink<Message>>::Error: std::fmt::Debug,
{
    let m = serde_json::json!({"id": id, "sessionId": session, "method": "Page.navigate",
                               "params": {"url": url}});
    ws.send(Message::text(m.to_string())).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let Ok(msg) = tokio::time::timeout_at(deadline, ws.next()).await else {
            return "no answer in 10 s".into();
        };
        if let Message::Text(t) = msg.expect("open").unwrap() {
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{v}");
                return match v["result"]["errorText"].as_str() {
                    Some(e) if !e.is_empty() => format!("refused: {e}"),
                    _ => "reached".into(),
                };
            }
        }
    }
}
