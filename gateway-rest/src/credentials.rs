//! A request's credential is checked before its body is read, so a client
//! with a bad one or none is answered at once instead of holding the
//! connection for as long as it takes to (not) send a body. The gateway
//! holds no keys: it asks the server (`WhoAmI`: any answer but
//! UNAUTHENTICATED means the server took the credential) and remembers a
//! good answer for a while (`talon_core::listen::checked`); the call
//! itself is still authorized by the server. A connection whose request
//! passes counts as authenticated (`talon_core::listen`).
//!
//! Not checked here: public routes (sign-in; their bodies are paced), a
//! signed file URL's token (the server checks it on the call's first
//! message, made from the path and query, before the body is read), and
//! WebSockets (no body; the bridge's call is the check).

use crate::Gateway;
use crate::routes::Route;
use talon_core::listen::RequestConn;
use talon_proto::v1 as pb;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::{Code, Status};

pub(crate) async fn check(
    gw: &Gateway,
    route: &Route,
    parts: &http::request::Parts,
) -> Result<(), Status> {
    let m = &route.method;
    if m.is_client_streaming() && m.is_server_streaming() {
        return Ok(());
    }
    if crate::openapi::PUBLIC.contains(&route.grpc_path().as_str()) {
        return Ok(());
    }
    let md = crate::request_metadata(&parts.headers, None);
    let Some(credential) = md.get("authorization").cloned() else {
        if md.contains_key(talon_core::wire::FILE_TOKEN_HEADER) {
            return Ok(());
        }
        return Err(Status::unauthenticated(
            "missing `authorization: Bearer` credential",
        ));
    };
    let text = credential.to_str().unwrap_or_default().to_string();
    gw.checked.check(&text, || ask(gw, credential)).await?;
    if let Some(rc) = RequestConn::of(&parts.extensions) {
        rc.authenticated();
    }
    Ok(())
}

/// Whether the server takes `credential`; its refusal (or its absence)
/// is the error.
async fn ask(gw: &Gateway, credential: MetadataValue<Ascii>) -> Result<bool, Status> {
    let mut req = tonic::Request::new(pb::WhoAmIRequest::default());
    req.metadata_mut().insert("authorization", credential);
    let mut c = pb::auth_service_client::AuthServiceClient::new(gw.channel.clone());
    match c.who_am_i(req).await {
        // Authenticated, though not a user (a sandbox's token, say).
        Ok(_) => Ok(true),
        Err(s) if s.code() == Code::PermissionDenied => Ok(true),
        Err(s) => Err(s),
    }
}
