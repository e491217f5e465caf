//! Object ids: a type prefix and 26 lowercase base32 characters of 128
//! random bits, e.g. `sbx_k3…`. Prefixes make logs and support readable.

use rand::RngCore;

pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    base32::encode(base32::Alphabet::Rfc4648Lower { padding: false }, &buf)
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", random_token(16))
}

pub use talon_core::ids::valid_id;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_are_unique() {
        let a = new_id("sbx");
        let b = new_id("sbx");
        assert!(a.starts_with("sbx_") && a.len() == 30, "{a}");
        assert_ne!(a, b);
        assert!(valid_id("sbx", &a));
        assert!(!valid_id("usr", &a));
        assert!(!valid_id("sbx", "sbx_../../etc"));
        assert!(!valid_id("sbx", "sbx_"));
    }
}
