//! Preview tokens: short-lived HS256 JWTs that open one port of one
//! sandbox to whoever holds the link (a shared demo). They are signed with
//! their own key (DATA_DIR/keys/preview.key) and carry their own `iss` and
//! `aud`, so a preview token is never a user token and the reverse; the
//! preview proxy checks the sandbox and port they are bound to.

use crate::error::{Error, Result};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const ISSUER: &str = "talon-preview";
pub const AUDIENCE: &str = "talon-preview";
/// TTL when the request sets none, and the most it may ask for.
pub const DEFAULT_TTL_SECS: u64 = 3600;
pub const MAX_TTL_SECS: u64 = 86_400;
const EXPIRED: &str = "the preview token has expired";

/// The `outcome` label of a token check, for `sandbox_preview_token_total`.
pub fn outcome<T>(r: &Result<T>) -> &'static str {
    match r {
        Ok(_) => "verified",
        Err(Error::Unauthenticated(m)) if m == EXPIRED => "expired",
        Err(Error::PermissionDenied(_)) => "denied",
        Err(_) => "invalid",
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct PreviewClaims {
    /// The sandbox.
    pub sub: String,
    pub tid: String,
    pub port: u32,
    pub iss: String,
    pub aud: String,
    pub exp: u64,
    pub iat: u64,
    pub jti: String,
}

#[derive(Clone)]
pub struct PreviewKeys {
    pub(super) encoding: Arc<EncodingKey>,
    pub(super) decoding: Arc<DecodingKey>,
}

impl PreviewKeys {
    pub fn new(secret: &[u8]) -> Self {
        PreviewKeys {
            encoding: Arc::new(EncodingKey::from_secret(secret)),
            decoding: Arc::new(DecodingKey::from_secret(secret)),
        }
    }

    /// A token for `port` of `sandbox_id`, valid for `ttl_secs`.
    pub fn issue(
        &self,
        sandbox_id: &str,
        tenant_id: &str,
        port: u32,
        ttl_secs: u64,
    ) -> Result<(String, u64)> {
        let now = super::jwt::unix_now();
        let claims = PreviewClaims {
            sub: sandbox_id.into(),
            tid: tenant_id.into(),
            port,
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            exp: now + ttl_secs,
            iat: now,
            jti: crate::ids::random_token(10),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(format!("jwt: {e}")))?;
        Ok((token, claims.exp))
    }

    /// The claims of a valid token for exactly this sandbox and port.
    pub fn verify(&self, token: &str, sandbox_id: &str, port: u32) -> Result<PreviewClaims> {
        let mut v = Validation::new(Algorithm::HS256);
        v.leeway = super::jwt::LEEWAY_SECS;
        v.set_issuer(&[ISSUER]);
        v.set_audience(&[AUDIENCE]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let c = jsonwebtoken::decode::<PreviewClaims>(token, &self.decoding, &v)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    Error::Unauthenticated(EXPIRED.into())
                }
                _ => Error::Unauthenticated(format!("invalid preview token: {e}")),
            })?
            .claims;
        if c.sub != sandbox_id || c.port != port {
            return Err(Error::PermissionDenied(
                "the preview token is for another sandbox or port".into(),
            ));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::jwt::JwtKeys;

    const KEY: &[u8] = b"preview key preview key preview k";

    #[test]
    fn bound_to_one_sandbox_and_port() {
        let k = PreviewKeys::new(KEY);
        let (t, _) = k.issue("sbx_a", "ten_a", 3000, 60).unwrap();
        assert_eq!(k.verify(&t, "sbx_a", 3000).unwrap().tid, "ten_a");
        assert!(k.verify(&t, "sbx_b", 3000).is_err());
        assert!(k.verify(&t, "sbx_a", 3001).is_err());
        let mut tampered = t.clone();
        tampered.pop();
        tampered.push(if t.ends_with('A') { 'B' } else { 'A' });
        assert!(k.verify(&tampered, "sbx_a", 3000).is_err());
    }

    #[test]
    fn user_tokens_and_preview_tokens_do_not_cross() {
        let user = JwtKeys::new(KEY, 900);
        let preview = PreviewKeys::new(KEY);
        // Even with the same key, the issuer and audience keep them apart.
        let (access, _) = user.issue_access("usr_a", "ten_a", "owner").unwrap();
        assert!(preview.verify(&access, "usr_a", 0).is_err());
        let (p, _) = preview.issue("sbx_a", "ten_a", 3000, 60).unwrap();
        assert!(user.verify_access(&p).is_err());
    }

    #[test]
    fn expired_tokens_are_refused() {
        let k = PreviewKeys::new(KEY);
        let now = crate::auth::jwt::unix_now();
        let claims = PreviewClaims {
            sub: "sbx_a".into(),
            tid: "ten_a".into(),
            port: 80,
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            exp: now - 120,
            iat: now - 200,
            jti: "x".into(),
        };
        let t = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(KEY),
        )
        .unwrap();
        assert!(k.verify(&t, "sbx_a", 80).is_err());
    }
}
