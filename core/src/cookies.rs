//! The platform's own cookies, named in one place: the browser session
//! (the API's alone) and the preview tokens (one per sandbox and port).
//! Both HTTP edges (the REST gateway and the E2B facade) forward requests
//! to servers inside sandboxes and strip these first: no sandbox reads a
//! visitor's credentials.

use http::{HeaderMap, HeaderValue, header};

/// The browser session's cookie (`__Host-`: Secure, Path=/, no Domain).
pub const SESSION: &str = "__Host-talon-session";
/// A preview token's cookie, `PREFIX{sandbox}-{port}`.
pub const PREVIEW_PREFIX: &str = "__Host-talon-preview-";
/// Its plain-HTTP twin, for a gateway whose public URL is not https.
pub const PLAIN_PREVIEW_PREFIX: &str = "talon-preview-";

/// Removes the gateway's own cookies from what a sandbox's server is
/// sent: every preview cookie, not only this preview's (on the gateway's
/// host, path-mode previews' cookies all have Path=/ and go with a visit
/// to any of them: another sandbox's server would read their tokens), and
/// the browser session, which is for the API only.
pub fn strip_credentials(h: &mut HeaderMap) {
    strip_cookies(h, |k| {
        k == SESSION || k.starts_with(PREVIEW_PREFIX) || k.starts_with(PLAIN_PREVIEW_PREFIX)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_preview_token_or_session_reaches_a_sandbox() {
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
            HeaderValue::from_str(&format!("{}=sess; b=2", SESSION)).unwrap(),
        );
        strip_credentials(&mut h);
        assert_eq!(h[header::COOKIE], "a=1; b=2");
        assert_eq!(h.get_all(header::COOKIE).iter().count(), 1);
    }
}
