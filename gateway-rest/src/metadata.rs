//! What travels beside the messages: the caller's credential and request
//! id as gRPC metadata, and response metadata back as headers.

use super::*;
use tonic::metadata::MetadataMap;

/// Response metadata that names things travels back as headers.
pub(crate) fn copy_metadata(md: &MetadataMap, h: &mut http::HeaderMap) {
    for kv in md.iter() {
        if let tonic::metadata::KeyAndValueRef::Ascii(k, v) = kv {
            let name = k.as_str();
            if (name == talon_core::wire::REQUEST_ID_HEADER || name.starts_with("talon-"))
                && let (Ok(n), Ok(v)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    http::HeaderValue::from_bytes(v.as_encoded_bytes()),
                )
            {
                h.insert(n, v);
            }
        }
    }
}

/// The caller's credential and request id, as gRPC metadata: the
/// credential is an explicit one (a WebSocket's bearer subprotocol, the
/// Authorization header) or the browser session's cookie, which `handle`
/// has checked (see `session`).
pub(crate) fn request_metadata(h: &http::HeaderMap, bearer: Option<&str>) -> MetadataMap {
    let mut md = MetadataMap::new();
    let auth = bearer
        .map(|t| format!("Bearer {t}"))
        .or_else(|| {
            h.get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        })
        .or_else(|| session::credential(h).map(|t| format!("Bearer {t}")));
    if let Some(v) = auth.and_then(|a| a.parse().ok()) {
        md.insert("authorization", v);
    }
    if let Some(v) = h
        .get(talon_core::wire::FILE_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
    {
        md.insert(talon_core::wire::FILE_TOKEN_HEADER, v);
    }
    if let Some(v) = h
        .get(talon_core::wire::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
    {
        md.insert(talon_core::wire::REQUEST_ID_HEADER, v);
    }
    md
}

pub(crate) fn with_metadata<T>(msg: T, md: &MetadataMap) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    *r.metadata_mut() = md.clone();
    r
}

/// A signed file URL (`files:read` or `files:write` with `?token=`): the
/// token leaves the query (it is no field of the request) for the
/// `talon-file-token` metadata, which the server checks against the
/// sandbox, path and operation; a read answers raw bytes unless the caller
/// asked for a stream format, so a browser or curl gets the file itself.
pub(crate) fn take_file_token(method: &str, parts: &mut http::request::Parts) {
    if !matches!(
        method,
        "talon.v1.FilesystemService.ReadFile" | "talon.v1.FilesystemService.WriteFile"
    ) {
        return;
    }
    let Some(query) = parts.uri.query() else {
        return;
    };
    let mut token = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| match p.strip_prefix("token=") {
            Some(t) => {
                token = Some(t.to_string());
                false
            }
            None => true,
        })
        .collect();
    let Some(token) = token.and_then(|t| http::HeaderValue::from_str(&t).ok()) else {
        return;
    };
    let path = parts.uri.path().to_string();
    let pq = if kept.is_empty() {
        path
    } else {
        format!("{path}?{}", kept.join("&"))
    };
    let mut uri = http::uri::Parts::from(parts.uri.clone());
    uri.path_and_query = pq.parse().ok();
    if let Ok(u) = http::Uri::from_parts(uri) {
        parts.uri = u;
    }
    parts
        .headers
        .insert(talon_core::wire::FILE_TOKEN_HEADER, token);
    let wants_stream = parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("ndjson") || a.contains("event-stream"));
    if method.ends_with("ReadFile") && !wants_stream {
        parts.headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/octet-stream"),
        );
    }
}
