//! Access tokens: HS256 only (the algorithm is pinned, so `alg=none` and
//! algorithm confusion are refused), `exp`, `iss` and `aud` required, with
//! 30 s of leeway. The key is 256 random bits kept in the data directory.

use crate::error::{Error, Result};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const ISSUER: &str = "talon";
pub const AUDIENCE: &str = "talon-api";
pub const LEEWAY_SECS: u64 = 30;

#[derive(Debug, Serialize, Deserialize)]
pub struct AccessClaims {
    pub sub: String,
    pub tid: String,
    pub role: String,
    pub iss: String,
    pub aud: String,
    pub exp: u64,
    pub iat: u64,
    pub jti: String,
    /// "access", or "session" for a browser session; keeps other token
    /// kinds signed with the same key from being accepted here.
    pub typ: String,
    /// A browser session's CSRF token, hashed (SHA-256, hex): the gateway
    /// holds the `X-CSRF-Token` header against it (signed double submit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csrf: Option<String>,
    /// The user's password as it was when the token was issued
    /// (`password::fingerprint`): a token from before a password change is
    /// refused. Tokens of servers before this claim lack it (accepted, so
    /// a rolling upgrade signs no one out; they expire on their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pwd: Option<String>,
}

#[derive(Clone)]
pub struct JwtKeys {
    encoding: Arc<EncodingKey>,
    decoding: Arc<DecodingKey>,
    pub access_ttl_secs: u64,
}

impl JwtKeys {
    pub fn new(secret: &[u8], access_ttl_secs: u64) -> Self {
        JwtKeys {
            encoding: Arc::new(EncodingKey::from_secret(secret)),
            decoding: Arc::new(DecodingKey::from_secret(secret)),
            access_ttl_secs,
        }
    }

    pub fn issue_access(
        &self,
        user_id: &str,
        tenant_id: &str,
        role: &str,
        pwd: String,
    ) -> Result<(String, u64)> {
        self.issue(user_id, tenant_id, role, self.access_ttl_secs, None, pwd)
    }

    /// A browser session: an access token of its own lifetime that carries
    /// the hash of its CSRF token.
    pub fn issue_session(
        &self,
        user_id: &str,
        tenant_id: &str,
        role: &str,
        ttl_secs: u64,
        csrf_hash: String,
        pwd: String,
    ) -> Result<(String, u64)> {
        self.issue(user_id, tenant_id, role, ttl_secs, Some(csrf_hash), pwd)
    }

    fn issue(
        &self,
        user_id: &str,
        tenant_id: &str,
        role: &str,
        ttl_secs: u64,
        csrf: Option<String>,
        pwd: String,
    ) -> Result<(String, u64)> {
        let now = unix_now();
        let exp = now + ttl_secs;
        let claims = AccessClaims {
            sub: user_id.into(),
            tid: tenant_id.into(),
            role: role.into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            exp,
            iat: now,
            jti: crate::ids::random_token(10),
            typ: if csrf.is_some() { "session" } else { "access" }.into(),
            csrf,
            pwd: Some(pwd),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(format!("jwt: {e}")))?;
        Ok((token, exp))
    }

    pub fn verify_access(&self, token: &str) -> Result<AccessClaims> {
        let mut v = Validation::new(Algorithm::HS256);
        v.leeway = LEEWAY_SECS;
        v.set_issuer(&[ISSUER]);
        v.set_audience(&[AUDIENCE]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.validate_exp = true;
        let data = jsonwebtoken::decode::<AccessClaims>(token, &self.decoding, &v)
            .map_err(|e| Error::Unauthenticated(format!("invalid token: {e}")))?;
        if data.claims.typ != "access" && data.claims.typ != "session" {
            return Err(Error::Unauthenticated(
                "invalid token: not an access token".into(),
            ));
        }
        Ok(data.claims)
    }
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> JwtKeys {
        JwtKeys::new(b"0123456789abcdef0123456789abcdef", 900)
    }

    #[test]
    fn round_trip() {
        let k = keys();
        let (t, _) = k
            .issue_access("usr_a", "ten_a", "owner", "fp".into())
            .unwrap();
        let c = k.verify_access(&t).unwrap();
        assert_eq!(c.sub, "usr_a");
        assert_eq!(c.tid, "ten_a");
    }

    #[test]
    fn refuses_alg_none_and_other_keys() {
        let k = keys();
        let (t, _) = k
            .issue_access("usr_a", "ten_a", "owner", "fp".into())
            .unwrap();
        let other = JwtKeys::new(b"another key another key another k", 900);
        assert!(other.verify_access(&t).is_err());
        // alg=none: header {"alg":"none","typ":"JWT"}, same payload, no signature.
        let payload = t.split('.').nth(1).unwrap();
        let none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.");
        assert!(k.verify_access(&none).is_err());
    }
}
