//! E2B's signed file requests (envd's `signature` and
//! `signature_expiration` query), as the E2B facade hands them to the
//! server in `talon-file-token`, and the one rule both sides use for the
//! path a signature names: E2B resolves a relative path against the
//! user's home, Talon's file calls against /workspace, so the facade
//! resolves it and the server checks that it did so the same way.

/// The default user of E2B's SDKs (envd ≥ 0.4.0 applies it server-side).
pub const DEFAULT_USER: &str = "user";
/// What marks a presented signature in `talon-file-token`.
const MARK: &str = "e2bsig.";

/// The user a signed request is for: the one it signed (`username`),
/// else E2B's default. A signed URL carries its user; the caller's other
/// credentials (Basic auth) do not change whom it acts as.
pub fn signed_user(username: &str) -> &str {
    if username.is_empty() {
        DEFAULT_USER
    } else {
        username
    }
}

/// E2B's file signature: `v1_` and the unpadded base64 of
/// sha256("{path}:{op}:{user}:{token}[:{expiration}]"), where `op` is
/// `read` or `write`, `token` the sandbox's access token and `path` and
/// `user` exactly as signed. The SDKs make it; the server checks it.
pub fn sign(path: &str, op: &str, user: &str, token: &str, expiration: Option<u64>) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut text = format!("{path}:{op}:{user}:{token}");
    if let Some(exp) = expiration {
        text.push_str(&format!(":{exp}"));
    }
    format!(
        "v1_{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(sha2::Sha256::digest(text))
    )
}

/// The home directory E2B's images give a user.
pub fn home_of(user: &str) -> String {
    match user {
        "root" => "/root".into(),
        "" => format!("/home/{DEFAULT_USER}"),
        u => format!("/home/{u}"),
    }
}

/// The absolute path an E2B path names for `user`.
pub fn resolve(path: &str, user: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{}", home_of(user), path)
    }
}

/// A signature as the client presented it, with what it says it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    /// `v1_…`.
    pub signature: String,
    pub expiration: Option<u64>,
    /// The path exactly as signed (maybe relative).
    pub path: String,
    /// The user exactly as signed (maybe empty).
    pub user: String,
}

impl Presented {
    /// The metadata value: visible ASCII only.
    pub fn encode(&self) -> String {
        let exp = self.expiration.map(|e| e.to_string()).unwrap_or_default();
        format!(
            "{MARK}{}.{exp}.{}.{}",
            self.signature,
            hex(self.path.as_bytes()),
            hex(self.user.as_bytes())
        )
    }

    /// None when `value` is not a presented signature.
    pub fn decode(value: &str) -> Option<Presented> {
        let mut it = value.strip_prefix(MARK)?.split('.');
        let signature = it.next()?.to_string();
        let exp = it.next()?;
        let path = String::from_utf8(unhex(it.next()?)?).ok()?;
        let user = String::from_utf8(unhex(it.next()?)?).ok()?;
        if it.next().is_some() || !signature.starts_with("v1_") {
            return None;
        }
        let expiration = if exp.is_empty() {
            None
        } else {
            Some(exp.parse().ok()?)
        };
        Some(Presented {
            signature,
            expiration,
            path,
            user,
        })
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let p = Presented {
            signature: "v1_abc+/x".into(),
            expiration: Some(12),
            path: "dir/ä b.txt".into(),
            user: String::new(),
        };
        assert_eq!(Presented::decode(&p.encode()), Some(p.clone()));
        let none = Presented {
            expiration: None,
            ..p
        };
        assert_eq!(Presented::decode(&none.encode()), Some(none));
        for bad in [
            "",
            "e2bsig.",
            "e2bsig.x1_a..00.",
            "e2bsig.v1_a.x.00.",
            "e2bsig.v1_a..0.",
            "jwt",
        ] {
            assert_eq!(Presented::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn signatures_are_e2bs() {
        // Vectors from Python's hashlib and base64 (as E2B's SDK signs).
        assert_eq!(
            sign("/home/user/a.txt", "read", "user", "tok", Some(2000)),
            "v1_/ySlUWAAtpSz2pC7WxNS05/r5B7gnUHC4HWGCJSHtb8"
        );
        assert_eq!(
            sign("a.txt", "write", "root", "tok", None),
            "v1_zTW5ewssuLRKZWMxCDnCIW4bIY2xVSWveC/tRMmSWYc"
        );
        assert_eq!(signed_user(""), "user");
        assert_eq!(signed_user("root"), "root");
    }

    #[test]
    fn paths_resolve_against_the_users_home() {
        assert_eq!(resolve("a.txt", ""), "/home/user/a.txt");
        assert_eq!(resolve("a.txt", "root"), "/root/a.txt");
        assert_eq!(resolve("a/b", "alice"), "/home/alice/a/b");
        assert_eq!(resolve("/etc/x", "alice"), "/etc/x");
    }
}
