//! Browser sessions on the REST surface: the one place where a cookie may
//! stand for a credential, and the rules that come with it.
//!
//! - `CreateBrowserSession` answers with the session in a
//!   `__Host-talon-session` cookie (HttpOnly, Secure, SameSite=Lax, Path=/)
//!   and a blank `sessionToken` in the body: scripts never see it.
//! - A request with that cookie and no `Authorization` header is
//!   authenticated by it. If it changes state (any method but GET, HEAD
//!   and OPTIONS) it must carry `X-CSRF-Token` whose SHA-256 is the `csrf`
//!   claim signed into the session (a signed double submit: the server
//!   checks the signature of the very token whose claim was compared
//!   here). A state-changing request or a WebSocket upgrade with a foreign
//!   `Origin` is refused.
//! - `DeleteBrowserSession` clears the cookie.
//! - Signing in ignores a session cookie it carries, and signing out
//!   needs no CSRF token; both check `Origin` (see `sign_in`, `sign_out`).
//!
//! Credentials never come from a query string (the preview token on the
//! preview routes is the one exception, see `preview`).

use base64::Engine;
use http::{HeaderMap, HeaderValue, Method, header};
use sha2::Digest;
use tonic::Status;

pub const COOKIE: &str = talon_core::cookies::SESSION;
pub const CSRF_HEADER: &str = "x-csrf-token";
const CREATE: &str = "talon.v1.AuthService.CreateBrowserSession";
const DELETE: &str = "talon.v1.AuthService.DeleteBrowserSession";

/// A cookie's value from the Cookie headers.
pub fn cookie(h: &HeaderMap, name: &str) -> Option<String> {
    h.get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

/// The session the request is authenticated by: its cookie, unless it
/// brings an explicit credential.
pub fn credential(h: &HeaderMap) -> Option<String> {
    if h.contains_key(header::AUTHORIZATION) {
        return None;
    }
    cookie(h, COOKIE)
}

fn csrf_claim(session: &str) -> Option<String> {
    let payload = session.split('.').nth(1)?;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&raw).ok()?;
    v["csrf"].as_str().map(String::from)
}

fn hex_sha256(s: &str) -> String {
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The REST path of `CreateBrowserSession`, signing in.
pub const SIGN_IN_PATH: &str = "/v1/auth/browser-session";

/// Signing in (`POST` of `SIGN_IN_PATH`) is authenticated by the password
/// in its body. A session cookie it carries (another tab's, whose CSRF
/// token this tab never had, or an expired one) is no credential of it:
/// it is dropped, so it can neither refuse the sign-in for a missing token
/// nor reach the server as a stale bearer. The `Origin` is checked
/// whether a cookie came or not: a page elsewhere may not sign a visitor
/// in to an account of its choosing (login CSRF).
pub fn sign_in(allowed_origins: &[String], h: &mut HeaderMap) -> Result<(), Status> {
    same_origin(allowed_origins, h, "sign in here")?;
    h.remove(header::COOKIE);
    Ok(())
}

/// Signing out (`DELETE` of `SIGN_IN_PATH`) with the cookie needs our
/// `Origin` but not the CSRF token: a tab that never had the token (the
/// session was made in another tab) could otherwise not end its session,
/// and ending one is all a forged sign-out could do.
pub fn sign_out(allowed_origins: &[String], h: &HeaderMap) -> Result<(), Status> {
    same_origin(allowed_origins, h, "sign out here")
}

/// A foreign or opaque `Origin` (or, without one, a `Sec-Fetch-Site` of
/// another site) is refused.
fn same_origin(allowed_origins: &[String], h: &HeaderMap, what: &str) -> Result<(), Status> {
    match h.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("null")) {
        Some(o) if !allowed_origins.iter().any(|a| a == o) => Err(Status::permission_denied(
            format!("origin {o} may not {what}"),
        )),
        Some(_) => Ok(()),
        None => {
            let site = h.get("sec-fetch-site").and_then(|v| v.to_str().ok());
            if site.is_some_and(|s| s != "same-origin" && s != "none") {
                return Err(Status::permission_denied(format!(
                    "a page of another origin may not {what}"
                )));
            }
            Ok(())
        }
    }
}

/// Checks a request authenticated by the session cookie. Any method: a
/// request whose `Origin` is foreign or opaque (`null`: a sandboxed page,
/// such as a path-mode preview or anything the DevTools proxy serves), or
/// that the browser says came from another origin (`Sec-Fetch-Site`), is
/// refused, so a page elsewhere can neither change state nor read with
/// the session (a GET through an iframe of the same site reads as well as
/// a fetch). `Origin` is compared whole, so a page of the same site (a
/// subdomain preview, another port of the host) is foreign too, and a
/// WebSocket must name one. State changes also need the CSRF token.
pub fn check(
    allowed_origins: &[String],
    method: &Method,
    h: &HeaderMap,
    session: &str,
) -> Result<(), Status> {
    let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let origin = h.get(header::ORIGIN).map(|o| o.to_str().unwrap_or("null"));
    // A browser names the page of every WebSocket it opens (HTTP/1.1's
    // Upgrade, HTTP/2's extended CONNECT): one without is no page of ours.
    if origin.is_none() && (h.contains_key(header::UPGRADE) || *method == Method::CONNECT) {
        return Err(Status::permission_denied(
            "a WebSocket with the session cookie must come from a page of the gateway's origin (no Origin was sent)",
        ));
    }
    match origin {
        Some(o) if !allowed_origins.iter().any(|a| a == o) => {
            return Err(Status::permission_denied(format!(
                "origin {o} may not use this session"
            )));
        }
        Some(_) => {}
        None => {
            let site = h.get("sec-fetch-site").and_then(|v| v.to_str().ok());
            if site.is_some_and(|s| s != "same-origin" && s != "none") {
                return Err(Status::permission_denied(
                    "a request from another origin may not use this session",
                ));
            }
        }
    }
    if safe {
        return Ok(());
    }
    let Some(claim) = csrf_claim(session) else {
        return Err(Status::unauthenticated(
            "the session cookie is not a session",
        ));
    };
    let sent = h
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| Status::permission_denied("missing X-CSRF-Token"))?;
    let ours = hex_sha256(sent);
    let same = ours.len() == claim.len()
        && ours
            .bytes()
            .zip(claim.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
        Ok(())
    } else {
        Err(Status::permission_denied(
            "X-CSRF-Token does not match the session",
        ))
    }
}

/// What a session route's answer does to the cookie: the session moves
/// from the body into it, or it is cleared. None for other routes.
pub fn on_response(method_full_name: &str, body: &mut serde_json::Value) -> Option<HeaderValue> {
    let attrs = "Path=/; Secure; HttpOnly; SameSite=Lax";
    let v = match method_full_name {
        CREATE => {
            let token = body
                .get_mut("sessionToken")
                .map(std::mem::take)
                .and_then(|t| t.as_str().map(String::from))?;
            body["sessionToken"] = serde_json::Value::String(String::new());
            format!("{COOKIE}={token}; {attrs}")
        }
        DELETE => format!("{COOKIE}=; {attrs}; Max-Age=0"),
        _ => return None,
    };
    HeaderValue::from_str(&v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(csrf: &str) -> String {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::json!({"csrf": hex_sha256(csrf)}).to_string());
        format!("h.{payload}.sig")
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn state_changes_need_the_token_and_a_known_origin() {
        let s = session("tok");
        let ok = vec!["https://talon.test".to_string()];
        assert!(check(&ok, &Method::GET, &headers(&[]), &s).is_ok());
        assert!(check(&ok, &Method::POST, &headers(&[]), &s).is_err());
        assert!(
            check(
                &ok,
                &Method::POST,
                &headers(&[("x-csrf-token", "nope")]),
                &s
            )
            .is_err()
        );
        assert!(check(&ok, &Method::POST, &headers(&[("x-csrf-token", "tok")]), &s).is_ok());
        let foreign = headers(&[("x-csrf-token", "tok"), ("origin", "https://evil.test")]);
        assert!(check(&ok, &Method::DELETE, &foreign, &s).is_err());
        let ours = headers(&[("x-csrf-token", "tok"), ("origin", "https://talon.test")]);
        assert!(check(&ok, &Method::PATCH, &ours, &s).is_ok());
        let ws = headers(&[("upgrade", "websocket"), ("origin", "https://evil.test")]);
        assert!(check(&ok, &Method::GET, &ws, &s).is_err());
    }

    #[test]
    fn reads_from_another_or_an_opaque_origin_are_refused() {
        let s = session("tok");
        let ok = vec!["https://talon.test".to_string()];
        for h in [
            headers(&[("origin", "null")]),
            headers(&[("origin", "https://evil.test")]),
            headers(&[("sec-fetch-site", "cross-site")]),
            headers(&[("sec-fetch-site", "same-site")]),
            headers(&[("upgrade", "websocket"), ("origin", "null")]),
            // A WebSocket names its page; one that doesn't is no page of ours.
            headers(&[("upgrade", "websocket")]),
            headers(&[("upgrade", "websocket"), ("sec-fetch-site", "same-origin")]),
            // The same site is another origin.
            headers(&[
                ("upgrade", "websocket"),
                ("origin", "https://talon.test:8443"),
            ]),
            headers(&[
                ("upgrade", "websocket"),
                ("origin", "https://3000-sbx_a.talon.test"),
            ]),
        ] {
            assert!(check(&ok, &Method::GET, &h, &s).is_err(), "{h:?}");
        }
        for h in [
            headers(&[]),
            headers(&[("sec-fetch-site", "same-origin")]),
            headers(&[("sec-fetch-site", "none")]),
            headers(&[
                ("origin", "https://talon.test"),
                ("sec-fetch-site", "same-site"),
            ]),
            headers(&[("upgrade", "websocket"), ("origin", "https://talon.test")]),
        ] {
            assert!(check(&ok, &Method::GET, &h, &s).is_ok(), "{h:?}");
        }
    }

    #[test]
    fn an_explicit_credential_wins_over_the_cookie() {
        let h = headers(&[
            ("cookie", "a=1; __Host-talon-session=s"),
            ("authorization", "Bearer k"),
        ]);
        assert_eq!(credential(&h), None);
        let h = headers(&[("cookie", "a=1; __Host-talon-session=s")]);
        assert_eq!(credential(&h).as_deref(), Some("s"));
    }

    #[test]
    fn the_session_leaves_the_body_for_the_cookie() {
        let mut body = serde_json::json!({"sessionToken": "jwt", "csrfToken": "c"});
        let c = on_response(CREATE, &mut body).unwrap();
        assert_eq!(body["sessionToken"], "");
        let c = c.to_str().unwrap();
        assert!(c.starts_with("__Host-talon-session=jwt;"));
        for a in ["Path=/", "Secure", "HttpOnly", "SameSite=Lax"] {
            assert!(c.contains(a));
        }
        assert!(
            on_response(DELETE, &mut serde_json::json!({}))
                .unwrap()
                .to_str()
                .unwrap()
                .contains("Max-Age=0")
        );
        assert!(on_response("talon.v1.AuthService.Login", &mut body).is_none());
    }
}
