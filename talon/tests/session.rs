//! Browser sessions over REST on a real `talon up`: the session lives in a
//! `__Host-` cookie (HttpOnly, Secure, SameSite=Lax) that scripts never see;
//! a state-changing call with the cookie needs the CSRF token and a known
//! Origin; a WebSocket from a foreign origin, or naming none, is refused;
//! credentials in a query string are never taken. Needs root for the
//! embedded worker.

mod common;
use common::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn cookie_sessions_need_the_csrf_token_and_our_origin() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let s = Server::up().await;
    let t = tenant(&s, "cookie").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let c = reqwest::Client::new();
    let ours = s.http.clone();

    // A wrong password: 401 and no cookie.
    let r = c
        .post(format!("{}/v1/auth/browser-session", s.http))
        .json(&json!({"email": t.owner_email, "password": "wrong"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.headers().get("set-cookie").is_none());

    let r = c
        .post(format!("{}/v1/auth/browser-session", s.http))
        .json(&json!({"email": t.owner_email, "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set.starts_with("__Host-talon-session="), "{set}");
    for attr in ["Path=/", "Secure", "HttpOnly", "SameSite=Lax"] {
        assert!(set.contains(attr), "{set} lacks {attr}");
    }
    assert!(!set.contains("Domain="), "a __Host- cookie has no Domain");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["sessionToken"], "",
        "the session stays out of reach of scripts"
    );
    let csrf = body["csrfToken"].as_str().unwrap().to_string();
    assert!(csrf.len() >= 32);
    let cookie = set.split(';').next().unwrap().to_string();

    let send = |m: reqwest::Method,
                path: &str,
                headers: Vec<(&'static str, String)>,
                body: Option<Value>| {
        let mut r = c
            .request(m, format!("{}{path}", s.http))
            .header("cookie", cookie.clone());
        for (k, v) in headers {
            r = r.header(k, v);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        async move {
            let resp = r.send().await.unwrap();
            let st = resp.status().as_u16();
            (st, resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    use reqwest::Method as M;

    // Reads need no token.
    let (st, who) = send(M::GET, "/v1/auth/me", vec![], None).await;
    assert_eq!(st, 200, "{who}");
    let (st, _) = send(M::GET, "/v1/sandboxes", vec![], None).await;
    assert_eq!(st, 200);

    // A state change without the token, with a wrong one, or from another
    // origin is refused, and nothing is created.
    let create = json!({"resources": {"cpuMillis": 100, "memoryMib": 64}});
    for (case, headers) in [
        ("no token", vec![]),
        ("wrong token", vec![("x-csrf-token", "x".repeat(43))]),
        (
            "foreign origin",
            vec![
                ("x-csrf-token", csrf.clone()),
                ("origin", "https://evil.test".to_string()),
            ],
        ),
        (
            "null origin",
            vec![
                ("x-csrf-token", csrf.clone()),
                ("origin", "null".to_string()),
            ],
        ),
    ] {
        let (st, r) = send(M::POST, "/v1/sandboxes", headers, Some(create.clone())).await;
        assert_eq!(st, 403, "{case}: {r}");
    }
    let (_, list) = send(M::GET, "/v1/sandboxes", vec![], None).await;
    assert_eq!(
        list["sandboxes"].as_array().map_or(0, Vec::len),
        0,
        "{list}"
    );

    // With the token (and our origin, or none as non-browsers send) it works.
    let (st, r) = send(
        M::POST,
        "/v1/sandboxes",
        vec![("x-csrf-token", csrf.clone()), ("origin", ours.clone())],
        Some(create.clone()),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    let id = r["sandbox"]["sandboxId"].as_str().unwrap().to_string();
    let (st, r) = send(
        M::DELETE,
        &format!("/v1/sandboxes/{id}"),
        vec![("x-csrf-token", csrf.clone())],
        None,
    )
    .await;
    assert_eq!(st, 200, "{r}");

    // A WebSocket with the cookie from a foreign page is refused before
    // the upgrade.
    let r = c
        .get(format!("{}/v1/sandboxes/{id}/pty", s.http))
        .header("cookie", cookie.clone())
        .header("origin", "https://evil.test")
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    // Nor one that names no page: a browser always does, so it is not ours.
    let r = c
        .get(format!("{}/v1/sandboxes/{id}/pty", s.http))
        .header("cookie", cookie.clone())
        .header("sec-fetch-site", "same-origin")
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);

    // No credential is taken from a query string.
    for q in ["access_token", "token", "api_key", "authorization"] {
        let r = c
            .get(format!("{}/v1/sandboxes?{q}={}", s.http, t.owner))
            .send()
            .await
            .unwrap();
        // Refused as an unknown parameter (400) or for want of a
        // credential (401): never taken as one.
        let st = r.status().as_u16();
        assert!(st == 400 || st == 401, "?{q}=: {st}");
    }
    // An explicit credential is used as it is, with no CSRF token needed.
    let r = c
        .post(format!("{}/v1/sandboxes?wait_until_running=true", s.http))
        .bearer_auth(&t.developer)
        .header("cookie", cookie.clone())
        .json(&create)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);

    // Logout needs our origin (not the token: a tab that never had it
    // must be able to end its session), and clears the cookie.
    let (st, _) = send(
        M::DELETE,
        "/v1/auth/browser-session",
        vec![("origin", "https://evil.test".to_string())],
        None,
    )
    .await;
    assert_eq!(st, 403);
    let r = c
        .delete(format!("{}/v1/auth/browser-session", s.http))
        .header("cookie", cookie.clone())
        .header("x-csrf-token", csrf.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let cleared = r.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cleared.starts_with("__Host-talon-session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
}

/// Signing in again with a session cookie of another tab (no CSRF token
/// here) or an expired one works: the cookie is no credential of a
/// sign-in. Before, the gateway refused it 403 for a missing token, and a
/// tab that had lost its token could never sign in. A page of another
/// origin may not sign in, cookie or not (login CSRF).
#[tokio::test(flavor = "multi_thread")]
async fn signing_in_again_over_an_old_session_cookie() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let s = Server::up().await;
    let t = tenant(&s, "again").await;
    let c = reqwest::Client::new();
    let sign_in = |cookie: Option<String>, origin: Option<&str>| {
        let mut r = c
            .post(format!("{}/v1/auth/browser-session", s.http))
            .json(&json!({"email": t.owner_email, "password": PASSWORD}));
        if let Some(k) = cookie {
            r = r.header("cookie", k);
        }
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        async move { r.send().await.unwrap() }
    };
    let first = sign_in(None, None).await;
    assert_eq!(first.status().as_u16(), 200);
    let cookie = first.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let ours = s.http.as_str();

    // The same browser, another tab: the cookie, our origin, no token.
    let again = sign_in(Some(cookie.clone()), Some(ours)).await;
    assert_eq!(again.status().as_u16(), 200);
    assert!(again.headers().get("set-cookie").is_some());
    // A cookie that is no session at all (expired, tampered) is ignored too.
    let bad = sign_in(Some("__Host-talon-session=x.y.z".into()), Some(ours)).await;
    assert_eq!(bad.status().as_u16(), 200);
    // Another origin may not sign in, with a cookie or without.
    for cookie in [Some(cookie.clone()), None] {
        let r = sign_in(cookie, Some("https://evil.test")).await;
        assert_eq!(r.status().as_u16(), 403);
        assert!(r.headers().get("set-cookie").is_none());
    }
    // Other state changes with the cookie still need the token.
    let r = c
        .post(format!("{}/v1/sandboxes", s.http))
        .header("cookie", cookie.clone())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    // Signing out does not: a tab without the token ends its session.
    let r = c
        .delete(format!("{}/v1/auth/browser-session", s.http))
        .header("cookie", cookie)
        .header("origin", ours)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
}
