//! gRPC services: thin shells that parse, take the principal the access
//! layer attached, call a domain function and convert the result.

pub mod admin;
pub mod agent_proxy;
pub mod auth;
pub mod browser;
pub mod code;
pub mod convert;
pub mod image;
pub mod preview;
pub mod sandbox;
pub mod secret;
pub mod tenant;
pub mod volume;
pub mod worker;

use crate::auth::Principal;
use tonic::{Request, Status};

/// The caller, as authenticated by the access layer.
pub fn principal<T>(req: &Request<T>) -> Result<Principal, Status> {
    req.extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::unauthenticated("no credential"))
}
