//! argon2id password hashing with the crate's recommended parameters.

use crate::error::{Error, Result};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

pub const MIN_LEN: usize = 12;
pub const MAX_LEN: usize = 1024;

pub fn validate(password: &str) -> Result<()> {
    if password.chars().count() < MIN_LEN {
        return Err(Error::InvalidArgument(format!(
            "password must have at least {MIN_LEN} characters"
        )));
    }
    if password.len() > MAX_LEN {
        return Err(Error::InvalidArgument(format!(
            "password must have at most {MAX_LEN} bytes"
        )));
    }
    Ok(())
}

pub fn hash(password: &str) -> Result<String> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// What a token carries of the password it was issued under: enough of a
/// digest of the stored hash to tell a change, nothing to guess from.
pub fn fingerprint(hash: &str) -> String {
    super::sha256_hex(hash)[..16].to_string()
}

pub fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash of a random password, verified against when the email is unknown
/// so that login takes the same time either way.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash(&crate::ids::random_token(16)).expect("hash"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn hash_and_verify() {
        let h = super::hash("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(super::verify("correct horse battery", &h));
        assert!(!super::verify("wrong horse battery", &h));
        assert!(super::validate("short").is_err());
    }
}
