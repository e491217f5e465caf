//! What an HTTP edge records of a request it serves: a span with the
//! request's id and a path that carries no credential, in which the
//! edge's own failures are logged (an unreachable sandbox server, a
//! browser's broken answer, a refused body), and the answer's status at
//! the end (a server error at warn, a refusal at debug). The REST gateway
//! and the E2B facade both use it, so that their logs read alike.

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use std::sync::atomic::{AtomicU64, Ordering};

/// The request's id: the client's `x-request-id` when it is short
/// visible text, else a new one. The edge puts a new one on the request,
/// so the server it calls logs the same id, and on the answer.
pub fn request_id(h: &mut HeaderMap) -> String {
    let theirs = h
        .get(crate::wire::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()));
    if let Some(id) = theirs {
        return id.to_string();
    }
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let id = format!(
        "{:x}{:04x}",
        now.as_micros(),
        NEXT.fetch_add(1, Ordering::Relaxed) & 0xffff
    );
    if let Ok(v) = HeaderValue::from_str(&id) {
        h.insert(crate::wire::REQUEST_ID_HEADER, v);
    }
    id
}

/// A path as it may be logged: no query (signed URLs and preview tokens
/// ride there) and no CDP token (`/cdp/{sandbox}/{token}/…`).
pub fn loggable_path(path: &str) -> String {
    let path = path.split('?').next().unwrap_or("");
    match path.strip_prefix("/cdp/") {
        Some(rest) => {
            let mut parts = rest.splitn(3, '/');
            let sandbox = parts.next().unwrap_or("");
            match (parts.next(), parts.next()) {
                (Some(_), Some(tail)) => format!("/cdp/{sandbox}/…/{tail}"),
                (Some(_), None) => format!("/cdp/{sandbox}/…"),
                _ => format!("/cdp/{sandbox}"),
            }
        }
        None => path.chars().take(512).collect(),
    }
}

/// The span one request is served in.
pub fn span(edge: &'static str, id: &str, method: &Method, path: &str) -> tracing::Span {
    tracing::info_span!("request", edge, request_id = %id, %method, path = %loggable_path(path))
}

/// Records the answer's status in the current span.
pub fn answered(status: StatusCode) {
    if status.is_server_error() {
        tracing::warn!(status = status.as_u16(), "answered with a server error");
    } else if status.is_client_error() {
        tracing::debug!(status = status.as_u16(), "refused");
    }
}

/// Serves `req` through `next` inside its span: the edge's middleware
/// (`axum::middleware::from_fn`) is this and one line. The answer carries
/// the request's id.
pub async fn traced<B, R, Fut>(
    edge: &'static str,
    mut req: http::Request<B>,
    next: impl FnOnce(http::Request<B>) -> Fut,
) -> http::Response<R>
where
    Fut: std::future::Future<Output = http::Response<R>>,
{
    use tracing::Instrument;
    let id = request_id(req.headers_mut());
    let span = span(edge, &id, req.method(), req.uri().path());
    let mut r = next(req).instrument(span.clone()).await;
    span.in_scope(|| answered(r.status()));
    if let Ok(v) = HeaderValue::from_str(&id) {
        r.headers_mut()
            .entry(crate::wire::REQUEST_ID_HEADER)
            .or_insert(v);
    }
    r
}

/// Logs a failure the edge answers with, in the request's span: one the
/// platform should look at (an internal error, an unreachable upstream, a
/// timeout) at warn, a caller's mistake at debug. `message` is the
/// answer's own text, which never holds a credential.
pub fn failed(status: StatusCode, message: &str) {
    if status.is_server_error() {
        tracing::warn!(status = status.as_u16(), message, "failed");
    } else {
        tracing::debug!(status = status.as_u16(), message, "refused");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_credential_reaches_a_logged_path() {
        assert_eq!(
            loggable_path("/cdp/sbx_a/s3cret-token/json/version?x=1"),
            "/cdp/sbx_a/…/json/version"
        );
        assert_eq!(loggable_path("/cdp/sbx_a/s3cret-token"), "/cdp/sbx_a/…");
        assert_eq!(loggable_path("/files?signature=abc&path=/x"), "/files");
        assert_eq!(
            loggable_path("/v1/sandboxes/sbx_a/files"),
            "/v1/sandboxes/sbx_a/files"
        );
    }

    #[test]
    fn a_request_id_is_the_clients_or_a_new_one_put_on_the_request() {
        let mut h = HeaderMap::new();
        h.insert(
            crate::wire::REQUEST_ID_HEADER,
            HeaderValue::from_static("abc-1"),
        );
        assert_eq!(request_id(&mut h), "abc-1");
        let mut h = HeaderMap::new();
        h.insert(
            crate::wire::REQUEST_ID_HEADER,
            HeaderValue::from_static("has space"),
        );
        let id = request_id(&mut h);
        assert_ne!(id, "has space");
        assert_eq!(h[crate::wire::REQUEST_ID_HEADER], id.as_str());
        let mut empty = HeaderMap::new();
        let (a, b) = (request_id(&mut empty), request_id(&mut HeaderMap::new()));
        assert_ne!(a, b);
        assert_eq!(empty[crate::wire::REQUEST_ID_HEADER], a.as_str());
    }
}
