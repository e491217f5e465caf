//! Domain logic, apart from transport: plain Rust over the repository layer.
//! Every query that touches tenant data takes the tenant id from the
//! `Principal`, never from the request.

pub mod audit_events;
pub mod autopilot;
#[cfg(test)]
mod autopilot_tests;
pub mod browser;
pub mod fencing;
pub mod images;
#[cfg(test)]
mod images_tests;
pub mod isolation;
pub mod lease;
#[cfg(test)]
mod platform_tests;
pub mod policy;
pub mod preview;
pub mod sandboxes;
pub mod scheduler;
pub mod secrets;
pub mod servers;
pub mod sessions;
pub mod snapshots;
pub mod state;
pub mod tenants;
#[cfg(test)]
mod tenants_tests;
#[cfg(test)]
pub(crate) mod test_support;
pub mod volumes;
#[cfg(test)]
mod volumes_tests;
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

/// Page size when a list request sets none, and the most one page holds.
pub const DEFAULT_PAGE_SIZE: u64 = 50;
pub const MAX_PAGE_SIZE: u64 = 500;

/// The offset and limit of a list request's page. A negative size is
/// refused (0 is the default).
pub fn page(token: &str, size: i32) -> crate::error::Result<(u64, u64)> {
    if size < 0 {
        return Err(crate::error::Error::InvalidArgument(
            "page_size must not be negative".into(),
        ));
    }
    Ok((
        decode_page_token(token)?,
        page_size(size, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    ))
}

/// Trims rows fetched with `limit + 1` to one page, and gives the token of
/// the next page (empty on the last).
pub fn paged<T>(mut rows: Vec<T>, offset: u64, limit: u64) -> (Vec<T>, String) {
    let more = rows.len() as u64 > limit;
    rows.truncate(limit as usize);
    let next = if more {
        encode_page_token(offset + limit)
    } else {
        String::new()
    };
    (rows, next)
}
