//! E2B's sandbox ids are lowercase alphanumeric DNS labels (a `-` parts
//! the port from the id in `{port}-{id}.{domain}`), so Talon's
//! `sbx_` + 26 base32 characters maps one-to-one onto the 26 characters.

/// The E2B id of a Talon sandbox id.
pub fn to_e2b(talon: &str) -> String {
    talon.strip_prefix("sbx_").unwrap_or(talon).to_string()
}

/// The Talon id of an E2B id; None for anything that is not one (which
/// answers 404, like an id that names no sandbox).
pub fn to_talon(e2b: &str) -> Option<String> {
    let label = !e2b.is_empty()
        && e2b.len() <= 64
        && e2b
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let id = format!("sbx_{e2b}");
    (label && talon_core::ids::valid_sandbox_id(&id)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_both_ways_and_nothing_else_does() {
        let t = "sbx_abcdefghijklmnopqrstuvwxyz";
        let e = to_e2b(t);
        assert_eq!(e, "abcdefghijklmnopqrstuvwxyz");
        assert!(
            e.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        assert_eq!(to_talon(&e).as_deref(), Some(t));
        for bad in [
            "",
            "sbx_abc",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "../etc",
            "abcdefghijklmnopqrstuvwxy-",
        ] {
            assert_eq!(to_talon(bad), None, "{bad}");
        }
    }
}
