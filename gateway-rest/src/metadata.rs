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
