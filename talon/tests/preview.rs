//! The preview proxy through a real `talon up`: a dev server in a sandbox
//! (tests/preview/devserver.py) reached in path mode and subdomain mode,
//! with a preview token or the owner's credentials, HTTP streaming and a
//! WebSocket echo passing through, `X-Forwarded-*` set and spoofed ones
//! dropped, and every refusal of the issue: a token for another sandbox or
//! port, an expired or tampered token, a user JWT where a preview token is
//! expected and the reverse, a WebSocket on the preview cookie from a page
//! not the sandbox's own, and the browser's DevTools port, which is never
//! a preview. Needs root (CI is root).

mod common;
use common::*;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};

const DEVSERVER: &str = include_str!("preview/devserver.py");
const PORT: u16 = 8123;

/// A running sandbox with the dev server listening on PORT.
async fn sandbox_with_devserver(c: &reqwest::Client, s: &Server, key: &str) -> String {
    let (st, created) = rest_json(
        c,
        key,
        reqwest::Method::POST,
        format!("{}/v1/sandboxes?wait_until_running=true", s.http),
        Some(json!({"resources": {"cpuMillis": 500, "memoryMib": 128}})),
    )
    .await;
    assert_eq!(st, 200, "{created}");
    let id = created["sandbox"]["sandboxId"]
        .as_str()
        .unwrap()
        .to_string();
    let script = format!(
        "cat > /workspace/dev.py <<'EOF'\n{DEVSERVER}\nEOF\nnohup python3 /workspace/dev.py {PORT} >/workspace/dev.log 2>&1 &\n\
         for i in $(seq 1 100); do grep -q ready /workspace/dev.log 2>/dev/null && exit 0; sleep 0.05; done; exit 1"
    );
    let out = rest_sh(c, key, &s.http, &id, &script).await;
    assert!(
        out.contains("\"exitCode\":0"),
        "the dev server did not start: {out}"
    );
    id
}

async fn token(c: &reqwest::Client, s: &Server, key: &str, id: &str, port: u16) -> String {
    let (st, r) = rest_json(
        c,
        key,
        reqwest::Method::POST,
        format!("{}/v1/sandboxes/{id}/preview-tokens", s.http),
        Some(json!({"port": port})),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    r["token"].as_str().unwrap().to_string()
}

/// A preview token signed with the server's key, with any claims.
fn forged(s: &Server, id: &str, tid: &str, port: u16, exp: u64) -> String {
    let key = std::fs::read_to_string(s.data_dir().join("keys/preview.key")).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": id, "tid": tid, "port": port, "iss": "talon-preview", "aud": "talon-preview",
                "exp": exp, "iat": now - 7200, "jti": "x"}),
        &jsonwebtoken::EncodingKey::from_secret(key.trim().as_bytes()),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_preview_proxy_end_to_end() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let s = Server::up_with(&["--preview-domain", "preview.test"]).await;
    let t = tenant(&s, "pv").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    // Redirects are looked at, not followed.
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let a = sandbox_with_devserver(&c, &s, &t.developer).await;
    let b = sandbox_with_devserver(&c, &s, &t.developer).await;
    let ta = token(&c, &s, &t.developer, &a, PORT).await;
    let base = format!("{}/preview/{a}/{PORT}", s.http);

    // Path mode with ?token=, from a browser: traded for a __Host- cookie
    // (and a plain twin: this gateway is plain http), URL cleaned.
    let r = c
        .get(format!("{base}/hello?x=1&token={ta}"))
        .header("sec-fetch-dest", "document")
        .send()
        .await
        .unwrap();
    if r.status().as_u16() != 303 {
        panic!("{}: {}", r.status(), r.text().await.unwrap());
    }
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(location, format!("/preview/{a}/{PORT}/hello?x=1"));
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with(&format!("__Host-talon-preview-{a}-{PORT}={ta};")),
        "{cookie}"
    );
    for attr in ["Path=/", "Secure", "HttpOnly", "SameSite=None"] {
        assert!(cookie.contains(attr), "{cookie} lacks {attr}");
    }
    let plain: Vec<&str> = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| v.starts_with(&format!("talon-preview-{a}-{PORT}={ta};")))
        .collect();
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert!(
        !plain[0].contains("Secure") && plain[0].contains("HttpOnly"),
        "{plain:?}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    // Any other client is served at once, the token kept from the app.
    let r = c
        .get(format!("{base}/hello?x=2&token={ta}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let seen: Value = r.json().await.unwrap();
    assert_eq!(seen["query"], "x=2");
    // The plain cookie opens the preview as the other does.
    let r = c
        .get(format!("{base}/hello"))
        .header("cookie", plain[0].split(';').next().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = c
        .get(format!("{}{location}", s.http))
        .header(
            "cookie",
            // Another preview's cookies (Path=/ on this host) go along
            // from a browser; their tokens must not reach this sandbox.
            format!(
                "theirs=1; {pair}; __Host-talon-session=s; \
                 __Host-talon-preview-{b}-{PORT}=other; talon-preview-{b}-{PORT}=other"
            ),
        )
        .header("x-forwarded-for", "6.6.6.6")
        .header("x-forwarded-host", "evil.test")
        .header("forwarded", "for=6.6.6.6")
        .header("x-real-ip", "6.6.6.6")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // A path-mode page runs in an opaque origin, never the gateway's.
    let csp = r.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("sandbox ") && !csp.contains("allow-same-origin"),
        "{csp}"
    );
    let seen: Value = r.json().await.unwrap();
    assert_eq!(seen["path"], "/hello");
    assert_eq!(seen["query"], "x=1");
    let h = &seen["headers"];
    assert_eq!(h["x-forwarded-for"], "127.0.0.1", "{h}");
    assert_eq!(h["x-forwarded-prefix"], format!("/preview/{a}/{PORT}"));
    assert_eq!(h["x-forwarded-proto"], "http");
    assert_ne!(h["x-forwarded-host"], "evil.test");
    assert!(
        h.get("forwarded").is_none() && h.get("x-real-ip").is_none(),
        "{h}"
    );
    assert_eq!(h["cookie"], "theirs=1", "the preview cookie stays here");
    assert!(h.get("authorization").is_none());

    // Subdomain mode, with the owner's own credentials.
    let host = format!("{PORT}-{a}.preview.test");
    let r = c
        .get(format!("{}/sub/path", s.http))
        .header("host", &host)
        .bearer_auth(&t.developer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // A subdomain preview is an origin of its own, unsandboxed.
    assert!(r.headers().get("content-security-policy").is_none());
    let seen: Value = r.json().await.unwrap();
    assert_eq!(seen["path"], "/sub/path");
    assert!(
        seen["headers"].get("authorization").is_none(),
        "the credential stays here"
    );
    assert_eq!(seen["headers"]["x-forwarded-host"], host);
    // A bad sandbox id in the Host is refused.
    let r = c
        .get(format!("{}/", s.http))
        .header("host", format!("{PORT}-sbx%20x.preview.test"))
        .bearer_auth(&t.developer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);

    // HTTP streaming passes through as it comes.
    let r = c
        .get(format!("{base}/stream"))
        .header("cookie", pair.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let mut body = r.bytes_stream();
    let started = std::time::Instant::now();
    let first = body.next().await.unwrap().unwrap();
    assert!(first.starts_with(b"chunk0"), "{first:?}");
    assert!(
        started.elapsed() < Duration::from_millis(350),
        "the first chunk waited for the rest"
    );
    let mut all = first.to_vec();
    while let Some(b) = body.next().await {
        all.extend(b.unwrap());
    }
    assert_eq!(all, b"chunk0\nchunk1\nchunk2\n");

    // A WebSocket echo through the preview, on the cookie, from the
    // preview's own (opaque-origin) page.
    let ws_url = format!(
        "{}/preview/{a}/{PORT}/ws",
        s.http.replace("http://", "ws://")
    );
    let with_cookie = |origin: Option<&str>| {
        let mut req = ws_url.as_str().into_client_request().unwrap();
        req.headers_mut().insert("cookie", pair.parse().unwrap());
        if let Some(o) = origin {
            req.headers_mut().insert("origin", o.parse().unwrap());
        }
        req
    };
    let (mut ws, resp) = tokio_tungstenite::connect_async(with_cookie(Some("null")))
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 101);
    ws.send(tungstenite::Message::text("hi")).await.unwrap();
    let m = ws.next().await.unwrap().unwrap();
    assert_eq!(m.into_text().unwrap().as_str(), "echo:hi");
    let _ = ws.close(None).await;
    // The cookie goes along with a WebSocket from any page of the site (no
    // CORS holds a WebSocket): from another sandbox's preview, another
    // site, or with no page named, it opens nothing.
    for origin in [
        Some(format!("http://{PORT}-{b}.preview.test")),
        Some("https://evil.test".to_string()),
        None,
    ] {
        match tokio_tungstenite::connect_async(with_cookie(origin.as_deref())).await {
            Err(tungstenite::Error::Http(r)) => {
                assert_eq!(r.status().as_u16(), 403, "{origin:?}")
            }
            other => panic!("{origin:?}: {:?}", other.map(|(_, r)| r.status())),
        }
    }
    // The token itself opens it from anywhere: it is no ambient credential.
    let mut req = format!("{ws_url}?token={ta}")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("origin", "https://elsewhere.test".parse().unwrap());
    let (ws, resp) = tokio_tungstenite::connect_async(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 101);
    drop(ws);

    // The browser's DevTools port is never a preview: no token is issued
    // for it, and none opens it, in either mode (it drives the browser, and
    // the workload may have put anything there).
    let (st, r) = rest_json(
        &c,
        &t.developer,
        reqwest::Method::POST,
        format!("{}/v1/sandboxes/{a}/preview-tokens", s.http),
        Some(json!({"port": 9222})),
    )
    .await;
    assert_eq!(st, 400, "{r}");
    assert!(r["message"].as_str().unwrap().contains("DevTools"), "{r}");
    let devtools = forged(&s, &a, &t.tenant_id, 9222, u64::MAX / 2);
    for (url, host) in [
        (
            format!("{}/preview/{a}/9222/json/version?token={devtools}", s.http),
            None,
        ),
        (
            format!("{}/json/version?token={devtools}", s.http),
            Some(format!("9222-{a}.preview.test")),
        ),
    ] {
        let mut r = c.get(&url).bearer_auth(&t.developer);
        if let Some(h) = host {
            r = r.header("host", h);
        }
        assert_eq!(r.send().await.unwrap().status().as_u16(), 403, "{url}");
    }
    // Nor does the CDP proxy take one (it did: a preview token for the
    // port served the workload's page on the gateway's origin).
    let r = c
        .get(format!("{}/cdp/{a}/{devtools}/json/version", s.http))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);

    // Refusals.
    let status = |url: String, h: Vec<(&'static str, String)>| {
        let c = c.clone();
        async move {
            let mut r = c.get(url);
            for (k, v) in h {
                r = r.header(k, v);
            }
            r.send().await.unwrap().status().as_u16()
        }
    };
    // No credential.
    assert_eq!(status(format!("{base}/"), vec![]).await, 401);
    // A token for A on B, and on another port of A.
    assert_eq!(
        status(format!("{}/preview/{b}/{PORT}/?token={ta}", s.http), vec![]).await,
        403
    );
    assert_eq!(
        status(
            format!("{}/preview/{a}/{}/?token={ta}", s.http, PORT + 1),
            vec![]
        )
        .await,
        403
    );
    // Expired (beyond the 30 s leeway) and tampered.
    let expired = forged(&s, &a, &t.tenant_id, PORT, 1_000_000);
    assert_eq!(
        status(format!("{base}/?token={expired}"), vec![]).await,
        401
    );
    let mut tampered = ta.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(
        status(format!("{base}/?token={tampered}"), vec![]).await,
        401
    );
    // Forged for another tenant's sandbox id under this tenant's claim.
    let other = forged(&s, &a, "ten_someoneelse", PORT, u64::MAX / 2);
    assert_eq!(status(format!("{base}/?token={other}"), vec![]).await, 404);
    // A user JWT where a preview token is expected...
    let jwt = login(&s, &t.owner_email, PASSWORD).await.access_token;
    assert_eq!(status(format!("{base}/?token={jwt}"), vec![]).await, 401);
    // ...and a preview token where a user credential is expected.
    assert_eq!(
        status(
            format!("{}/v1/sandboxes", s.http),
            vec![("authorization", format!("Bearer {ta}"))]
        )
        .await,
        401
    );
    assert_eq!(
        status(
            format!("{base}/"),
            vec![("authorization", format!("Bearer {ta}"))]
        )
        .await,
        401
    );
    // A viewer's own credentials are not enough (previews reach a live
    // server as its developer would).
    assert_eq!(
        status(
            format!("{base}/"),
            vec![("authorization", format!("Bearer {}", t.viewer))]
        )
        .await,
        403
    );
    // Nothing listens on the port: 503, not a hang.
    let t2 = token(&c, &s, &t.developer, &a, 9).await;
    let r = c
        .get(format!("{}/preview/{a}/9/", s.http))
        .header("cookie", format!("__Host-talon-preview-{a}-9={t2}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);

    // Every check is counted by outcome.
    let metrics = reqwest::get(format!("{}/metrics", s.ops))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let count = |outcome: &str| -> u64 {
        metrics
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "sandbox_preview_token_total{{outcome=\"{outcome}\"}}"
                ))
            })
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(count("signed"), 2, "{metrics}");
    assert_eq!(count("expired"), 1);
    assert_eq!(
        count("denied"),
        3,
        "two ports, and a preview token on the CDP proxy"
    );
    assert!(count("invalid") >= 2, "tampered, and the user JWT");
    assert!(count("verified") >= 3);
    drop(s);
}
