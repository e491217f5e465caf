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

/// A cursor page token ("c" and the last id a page held), for lists read
/// by descending id; empty is the first page. Anything else is refused.
pub fn decode_cursor(token: &str) -> crate::error::Result<i64> {
    if token.is_empty() {
        return Ok(0);
    }
    token
        .strip_prefix("c")
        .and_then(|n| {
            n.parse()
                .ok()
                .filter(|v: &i64| *v > 0 && v.to_string() == n)
        })
        .ok_or_else(|| crate::error::Error::InvalidArgument("invalid page_token".into()))
}

pub fn encode_cursor(last_id: i64) -> String {
    format!("c{last_id}")
}

/// A keyset page token ("k", then the creation time and id of the last
/// row a page held), for lists read newest first by (created_at, id);
/// empty is the first page. Anything else is refused.
pub fn decode_keyset(token: &str) -> crate::error::Result<Option<(i64, String)>> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .strip_prefix("k")
        .and_then(|t| t.split_once('.'))
        .and_then(|(at, id)| Some((at.parse().ok()?, id)))
        .filter(|(_, id)| !id.is_empty())
        .map(|(at, id)| Some((at, id.to_string())))
        .ok_or_else(|| crate::error::Error::InvalidArgument("invalid page_token".into()))
}

pub fn encode_keyset(created_at: i64, id: &str) -> String {
    format!("k{created_at}.{id}")
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

/// `paged` for lists read by cursor: the page of `limit + 1` rows cut to
/// `limit`, and the token of its last row (`token`) when more follow.
pub fn paged_by<T>(mut rows: Vec<T>, limit: u64, token: impl Fn(&T) -> String) -> (Vec<T>, String) {
    let more = rows.len() as u64 > limit;
    rows.truncate(limit as usize);
    let next = match rows.last() {
        Some(last) if more => token(last),
        _ => String::new(),
    };
    (rows, next)
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
