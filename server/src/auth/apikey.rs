//! API keys look like `tln_<8 chars>_<32 chars>`. The first part, up to the
//! second underscore, is the visible prefix: stored in clear, unique, and
//! shown in listings. The whole key is stored only as a SHA-256 hash.

use crate::ids::random_token;

pub const PREFIX: &str = "tln_";

/// A new key and its visible prefix.
pub fn generate() -> (String, String) {
    let visible = format!("{PREFIX}{}", &random_token(5)[..8]);
    let key = format!("{visible}_{}", random_token(20));
    (key, visible)
}

/// The visible prefix of a presented key, if it has the right shape.
pub fn prefix_of(key: &str) -> Option<&str> {
    let rest = key.strip_prefix(PREFIX)?;
    let (head, secret) = rest.split_once('_')?;
    (head.len() == 8 && secret.len() >= 32).then(|| &key[..PREFIX.len() + 8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_their_prefix() {
        let (key, visible) = generate();
        assert_eq!(prefix_of(&key), Some(visible.as_str()));
        assert!(prefix_of("tln_short_x").is_none());
        assert!(prefix_of("nope").is_none());
    }
}
