//! Object ids: a type prefix and lowercase base32 characters, e.g.
//! `sbx_k3…`. The shape is checked before an id given by a client reaches
//! a query, a path or a container name.

/// The prefix of sandbox ids.
pub const SANDBOX: &str = "sbx";
/// Sandboxes a worker builds ahead of demand are named `sbx_pool_…` until
/// claimed.
pub const POOL_PREFIX: &str = "sbx_pool_";

/// Whether `id` is `{prefix}_` and 1 to 64 ASCII letters and digits (and
/// `_`, which pooled sandboxes' names hold).
pub fn valid_id(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('_'))
        .is_some_and(|r| {
            !r.is_empty()
                && r.len() <= 64
                && r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// A sandbox id (a pooled sandbox's name included).
pub fn valid_sandbox_id(id: &str) -> bool {
    valid_id(SANDBOX, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(valid_sandbox_id("sbx_k3abc"));
        assert!(valid_sandbox_id("sbx_pool_0123abcd"));
        for bad in [
            "sbx_",
            "sbx",
            "sbx_../../etc",
            "sbx_a b",
            "ten_abc",
            "sbx_a/b",
        ] {
            assert!(!valid_sandbox_id(bad), "{bad}");
        }
        assert!(!valid_sandbox_id(&format!("sbx_{}", "a".repeat(65))));
        assert!(valid_id("ten", "ten_x"));
    }
}
