//! The credential of an E2B request (the control plane's API key, the
//! data plane's sandbox token), and its check before any body is read: a
//! client with a bad credential or none is answered at once instead of
//! holding its connection for as long as it takes to (not) send a body.
//! The facade holds no keys: it asks the server (`WhoAmI`: any answer but
//! UNAUTHENTICATED means the server took the credential) and remembers a
//! good answer for a while (`talon_core::listen::checked`); every call
//! made with the credential is still the server's to authorize. A
//! connection whose request passes counts as authenticated
//! (`talon_core::listen`).

use crate::E2b;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use std::sync::Arc;
use talon_core::listen::RequestConn;
use talon_proto::v1 as pb;
use tonic::{Code, Status};

/// The caller's Talon API key: `X-API-KEY`, as the SDKs send it, or a
/// bearer token.
pub fn api_key(h: &HeaderMap) -> Result<String, ApiError> {
    let key = h
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| {
            h.get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::to_string)
        })
        .filter(|k| !k.is_empty());
    let key = key.ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "missing X-API-KEY"))?;
    Ok(from_e2b_form(&key).unwrap_or(key))
}

/// Older E2B SDKs (2.45 and before) refuse a key that is not `e2b_` and
/// lowercase hex before sending it. A Talon key written as `e2b_` + the
/// hex of its bytes passes that check and is read back here; any other
/// key is taken as it is.
fn from_e2b_form(key: &str) -> Option<String> {
    let hex = key.strip_prefix("e2b_")?;
    if hex.is_empty() || hex.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            let pair = hex.get(i..i + 2)?;
            pair.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                .then(|| u8::from_str_radix(pair, 16).ok())
                .flatten()
        })
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// A credential (an API key or a sandbox token) as the bearer of a call
/// to the server: the one place the E2B edge builds it. None when it is
/// not header text; the caller answers in its own protocol's shape.
pub fn bearer(credential: &str) -> Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>> {
    format!("Bearer {credential}").parse().ok()
}

/// Whether the server takes `credential` (an API key or a sandbox
/// token); the request's connection counts as authenticated if it does.
/// The refusal, or the server's absence, is the error.
pub async fn check(e: &E2b, credential: &str, extensions: &http::Extensions) -> Result<(), Status> {
    let bearer = bearer(credential)
        .ok_or_else(|| Status::unauthenticated("the credential is not valid header text"))?;
    e.checked
        .check(credential, || async {
            let mut req = tonic::Request::new(pb::WhoAmIRequest::default());
            req.metadata_mut().insert("authorization", bearer);
            let mut c = pb::auth_service_client::AuthServiceClient::new(e.channel.clone());
            match c.who_am_i(req).await {
                // Authenticated, though not a user (a sandbox's token).
                Ok(_) => Ok(true),
                Err(s) if s.code() == Code::PermissionDenied => Ok(true),
                Err(s) => Err(s),
            }
        })
        .await?;
    if let Some(rc) = RequestConn::of(extensions) {
        rc.authenticated();
    }
    Ok(())
}

/// The control plane's routes take nothing, not even a body, from a
/// caller whose API key the server does not take.
pub async fn control(State(e): State<Arc<E2b>>, req: Request, next: Next) -> Response {
    let refused = match api_key(req.headers()) {
        Err(no) => Some(no),
        Ok(key) => check(&e, &key, req.extensions())
            .await
            .err()
            .map(ApiError::from),
    };
    match refused {
        None => next.run(req).await,
        Some(no) => crate::envd::refuse(req.into_body(), no.into_response()).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_e2b_form_read_back() {
        let talon = "tln_abcd1234_efgh";
        let hex: String = talon.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(from_e2b_form(&format!("e2b_{hex}")).as_deref(), Some(talon));
        for other in ["e2b_", "e2b_abc", "e2b_zz", "e2b_ABCD", "tln_x"] {
            assert_eq!(from_e2b_form(other), None, "{other}");
        }
    }
}
