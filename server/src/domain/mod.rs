//! Domain logic, apart from transport: plain Rust over the repository layer.
//! Every query that touches tenant data takes the tenant id from the
//! `Principal`, never from the request.

pub mod policy;
pub mod sandboxes;
pub mod scheduler;
pub mod secrets;
pub mod sessions;
pub mod state;
pub mod tenants;
pub mod workers;

/// Page sizes: `page_size` 0 means the default, and anything over the max
/// is clamped to it.
pub fn page_size(requested: i32, default: u64, max: u64) -> u64 {
    match requested {
        n if n <= 0 => default,
        n => (n as u64).min(max),
    }
}

/// Opaque page tokens carry an offset. They are not secrets, only cursors.
pub fn decode_page_token(token: &str) -> crate::error::Result<u64> {
    if token.is_empty() {
        return Ok(0);
    }
    token
        .strip_prefix("o")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| crate::error::Error::InvalidArgument("invalid page_token".into()))
}

pub fn encode_page_token(offset: u64) -> String {
    format!("o{offset}")
}
