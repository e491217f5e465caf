//! Bytes a sandbox chose, as the gateway hands them to a browser. The
//! gateway's own origin carries the visitor's session, so a page a sandbox
//! wrote must never run there with it: every answer that carries such
//! bytes (a preview's, the DevTools proxy's, a file download) passes
//! through `answer` with what it is, so a route added later can't serve
//! them bare. Every other answer of the gateway gets `nosniff` from
//! `every_answer`.
//!
//! - a path-mode preview is a web app on the gateway's origin: it runs in
//!   an opaque origin (`Content-Security-Policy: sandbox` without
//!   `allow-same-origin`), its cookies kept under its prefix;
//! - a subdomain preview is an origin of its own: its cookies are kept to
//!   its host;
//! - the DevTools proxy's answers are data: no script runs, nothing is
//!   taken for HTML, no cookie is set;
//! - a file's bytes are a download, never a page.
//!
//! No answer of a sandbox sets or reads the gateway's cookies:
//! `strip_credentials` keeps them from what a sandbox is sent.

use http::{HeaderMap, HeaderValue, StatusCode, header};
use tonic::Status;

/// What a sandbox's answer is, and so how far it may reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confinement<'a> {
    /// A path-mode preview under `prefix` (`/preview/{sandbox}/{port}`).
    PathPreview { prefix: &'a str },
    /// A subdomain preview: `{port}-{sandbox}.{domain}`.
    SubdomainPreview,
    /// Data no browser should run: the DevTools proxy's HTTP answers.
    Inert,
    /// A file's bytes (raw downloads): saved, never shown.
    Download,
}

/// The sandbox flags a path-mode preview document runs with: everything a
/// web app needs but `allow-same-origin` (so its origin is opaque, never
/// the gateway's) and top navigation.
pub const PATH_MODE_CSP: &str = "sandbox allow-scripts allow-forms allow-popups allow-modals \
     allow-downloads allow-pointer-lock allow-presentation allow-orientation-lock";

/// The policy of an answer no browser should run: an opaque origin with
/// nothing allowed (no script, form, popup or plugin) and no loads.
pub const INERT_CSP: &str = "sandbox; default-src 'none'";

/// Response headers by which a sandbox's answer could reach beyond
/// itself. Every `Content-Security-Policy` is enforced, so ours, added to
/// any of the sandbox's own, holds whatever the sandbox sends.
///
/// - Path mode: the documents get an opaque origin; the preview may
///   neither widen a service worker's scope, clear the origin's data (the
///   API session with it), nor set a cookie outside its own path.
/// - Subdomain mode: a cookie is kept to the preview's own host (no
///   `Domain`), so one preview can't set cookies for the others.
/// - Inert and Download: no cookie, no site data, no service worker, an
///   opaque origin where nothing runs, and a type no browser renders as a
///   page (`nosniff`, so it is not guessed either); a download is saved
///   (`Content-Disposition: attachment`).
pub fn answer(c: Confinement, status: StatusCode, h: &mut HeaderMap) {
    h.remove("service-worker-allowed");
    match c {
        Confinement::PathPreview { prefix } => {
            confine_cookies(h, prefix);
            h.remove("clear-site-data");
            h.append(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PATH_MODE_CSP),
            );
        }
        Confinement::SubdomainPreview => confine_cookies(h, ""),
        Confinement::Inert | Confinement::Download => {
            h.remove(header::SET_COOKIE);
            h.remove("clear-site-data");
            h.remove(header::REFRESH);
            if status == StatusCode::SWITCHING_PROTOCOLS {
                return;
            }
            h.remove(header::CONTENT_SECURITY_POLICY);
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(INERT_CSP),
            );
            h.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            if c == Confinement::Download {
                h.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/octet-stream"),
                );
                h.insert(
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_static("attachment"),
                );
            } else if !is_json(h) {
                h.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
            }
        }
    }
}

/// Whether an answer says it is JSON (and no HTML under another name).
fn is_json(h: &HeaderMap) -> bool {
    h.get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// A request a sandbox's server may not answer at all: a service worker
/// script, which would sit on the gateway's origin (path mode, DevTools,
/// downloads; a subdomain preview's would sit on its own origin, as any
/// site's may).
pub fn refuse(c: Confinement, h: &HeaderMap) -> Result<(), Status> {
    if c != Confinement::SubdomainPreview && h.contains_key("service-worker") {
        return Err(Status::permission_denied(
            "no service worker is served from the gateway's origin; use subdomain previews",
        ));
    }
    Ok(())
}

/// What every answer of the gateway not a preview's carries: no browser
/// guesses a type it was not given (an error that quotes a sandbox's
/// words stays JSON).
pub fn every_answer(h: &mut HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// The sandbox's `Set-Cookie`s, each kept to the preview (see
/// `confine_cookie`); `prefix` is empty in subdomain mode.
fn confine_cookies(h: &mut HeaderMap, prefix: &str) {
    let cookies: Vec<HeaderValue> = h.get_all(header::SET_COOKIE).iter().cloned().collect();
    h.remove(header::SET_COOKIE);
    for c in cookies {
        if let Some(v) = c
            .to_str()
            .ok()
            .and_then(|c| confine_cookie(c, prefix))
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            h.append(header::SET_COOKIE, v);
        }
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

pub use talon_core::cookies::strip_credentials;

#[cfg(test)]
mod tests {
    use super::*;

    const OK: StatusCode = StatusCode::OK;

    #[test]
    fn a_path_mode_preview_is_confined_to_an_opaque_origin_and_its_path() {
        let prefix = "/preview/sbx_b/8080";
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
        answer(Confinement::PathPreview { prefix }, OK, &mut h);
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
        let mut h = HeaderMap::new();
        h.append(
            header::SET_COOKIE,
            HeaderValue::from_static("__Host-x=1; Path=/; Secure"),
        );
        h.append(
            header::SET_COOKIE,
            HeaderValue::from_static("s=1; Domain=p.test; Path=/app"),
        );
        answer(Confinement::SubdomainPreview, OK, &mut h);
        let cookies: Vec<_> = h.get_all(header::SET_COOKIE).iter().collect();
        assert_eq!(cookies, ["__Host-x=1; Secure; Path=/", "s=1; Path=/app"]);
        assert!(!h.contains_key(header::CONTENT_SECURITY_POLICY));
    }

    /// What a sandbox that replaced its browser would answer the DevTools
    /// proxy with: a page of its own, cookies for the API, a policy that
    /// allows everything.
    fn hostile() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
        h.insert(
            header::SET_COOKIE,
            HeaderValue::from_static("__Host-talon-session=planted; Path=/"),
        );
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("script-src *"),
        );
        h.insert("clear-site-data", HeaderValue::from_static("\"*\""));
        h.insert(header::REFRESH, HeaderValue::from_static("0; url=/x"));
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("sniff-away"),
        );
        h
    }

    #[test]
    fn devtools_answers_are_inert_data() {
        let mut h = hostile();
        answer(Confinement::Inert, StatusCode::NOT_FOUND, &mut h);
        assert_eq!(h[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        let csp: Vec<_> = h.get_all(header::CONTENT_SECURITY_POLICY).iter().collect();
        assert_eq!(csp, [INERT_CSP]);
        assert!(INERT_CSP.starts_with("sandbox;"));
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        for gone in ["set-cookie", "clear-site-data", "refresh"] {
            assert!(!h.contains_key(gone), "{gone}");
        }
        // JSON stays JSON.
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("Application/JSON; charset=UTF-8"),
        );
        answer(Confinement::Inert, OK, &mut h);
        assert_eq!(h[header::CONTENT_TYPE], "Application/JSON; charset=UTF-8");
        for fake in ["application/json+html", "text/html; application/json"] {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(fake));
            answer(Confinement::Inert, OK, &mut h);
            assert_eq!(
                h[header::CONTENT_TYPE],
                "text/plain; charset=utf-8",
                "{fake}"
            );
        }
        // A WebSocket's upgrade keeps its headers, but sets no cookie.
        let mut h = hostile();
        answer(Confinement::Inert, StatusCode::SWITCHING_PROTOCOLS, &mut h);
        assert!(!h.contains_key(header::SET_COOKIE));
    }

    #[test]
    fn downloads_are_saved_never_shown() {
        let mut h = hostile();
        answer(Confinement::Download, OK, &mut h);
        assert_eq!(h[header::CONTENT_TYPE], "application/octet-stream");
        assert_eq!(h[header::CONTENT_DISPOSITION], "attachment");
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], INERT_CSP);
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(!h.contains_key(header::SET_COOKIE));
    }

    #[test]
    fn service_workers_are_refused_on_the_gateways_origin() {
        let mut sw = HeaderMap::new();
        sw.insert("service-worker", HeaderValue::from_static("script"));
        for c in [
            Confinement::PathPreview {
                prefix: "/preview/s/1",
            },
            Confinement::Inert,
            Confinement::Download,
        ] {
            assert!(refuse(c, &sw).is_err(), "{c:?}");
            assert!(refuse(c, &HeaderMap::new()).is_ok(), "{c:?}");
        }
        assert!(refuse(Confinement::SubdomainPreview, &sw).is_ok());
    }

    #[test]
    fn every_answer_is_nosniff() {
        let mut h = HeaderMap::new();
        every_answer(&mut h);
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}
