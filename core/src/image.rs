//! Image names.

/// The built-in image: the host's /usr, read-only, with private writable
/// directories. Always present, never imported or deleted.
pub const HOST_IMAGE: &str = "host";

/// A name is what users type: `debian:bookworm`, `ghcr.io/a/b@sha256:…`;
/// never the built-in `host`.
pub fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 255
        && n != HOST_IMAGE
        && n.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-:/@+".contains(&b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert!(super::valid_name("debian:bookworm"));
        assert!(super::valid_name("ghcr.io/a/b@sha256:00"));
        for bad in ["", "host", "-x", "a b", "a;b", &"a".repeat(256)] {
            assert!(!super::valid_name(bad), "{bad}");
        }
    }
}
