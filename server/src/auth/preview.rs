//! Preview tokens: short-lived HS256 JWTs that open one port of one
//! sandbox to whoever holds the link (a shared demo). They are signed with
//! their own key (DATA_DIR/keys/preview.key) and carry their own `iss` and
//! `aud`, so a preview token is never a user token and the reverse; the
//! preview proxy checks the sandbox and port they are bound to.
//!
//! The sandbox browser's DevTools port is no preview: whoever reaches it
//! drives the browser, and what answers there is whatever the workload
//! runs. BrowserService's URLs carry a token of their own audience
//! (`talon-cdp`) for that port alone; a preview token never opens it, and
//! none is issued for it.

use crate::error::{Error, Result};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const ISSUER: &str = "talon-preview";
pub const AUDIENCE: &str = "talon-preview";
/// The audience of a DevTools token (BrowserService's URLs), bound to the
/// browser's port.
pub const CDP_AUDIENCE: &str = "talon-cdp";
/// The port of the sandbox browser's DevTools.
pub const CDP_PORT: u32 = talon_proto::BROWSER_CDP_PORT as u32;
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

    /// A preview token for `port` of `sandbox_id`, valid for `ttl_secs`;
    /// never for the browser's DevTools port.
    pub fn issue(
        &self,
        sandbox_id: &str,
        tenant_id: &str,
        port: u32,
        ttl_secs: u64,
    ) -> Result<(String, u64)> {
        if port == CDP_PORT {
            return Err(Error::InvalidArgument(devtools_port_message()));
        }
        self.sign(sandbox_id, tenant_id, port, AUDIENCE, ttl_secs)
    }

    /// A DevTools token: the browser's port of `sandbox_id`, for
    /// BrowserService's URLs.
    pub fn issue_cdp(
        &self,
        sandbox_id: &str,
        tenant_id: &str,
        ttl_secs: u64,
    ) -> Result<(String, u64)> {
        self.sign(sandbox_id, tenant_id, CDP_PORT, CDP_AUDIENCE, ttl_secs)
    }

    fn sign(
        &self,
        sandbox_id: &str,
        tenant_id: &str,
        port: u32,
        audience: &str,
        ttl_secs: u64,
    ) -> Result<(String, u64)> {
        let now = super::jwt::unix_now();
        let claims = PreviewClaims {
            sub: sandbox_id.into(),
            tid: tenant_id.into(),
            port,
            iss: ISSUER.into(),
            aud: audience.into(),
            exp: now + ttl_secs,
            iat: now,
            jti: crate::ids::random_token(10),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(format!("jwt: {e}")))?;
        Ok((token, claims.exp))
    }

    /// The claims of a valid token for exactly this sandbox and port: a
    /// DevTools token for the browser's port, a preview token for any
    /// other.
    pub fn verify(&self, token: &str, sandbox_id: &str, port: u32) -> Result<PreviewClaims> {
        let mut v = Validation::new(Algorithm::HS256);
        v.leeway = super::jwt::LEEWAY_SECS;
        v.set_issuer(&[ISSUER]);
        v.set_audience(&[AUDIENCE, CDP_AUDIENCE]);
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
        if (c.aud == CDP_AUDIENCE) != (port == CDP_PORT) {
            return Err(Error::PermissionDenied(devtools_port_message()));
        }
        Ok(c)
    }
}

fn devtools_port_message() -> String {
    format!(
        "port {CDP_PORT} is the sandbox browser's DevTools port: no preview token opens it; \
         BrowserService's URLs carry their own"
    )
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
    fn no_preview_token_opens_the_devtools_port() {
        let k = PreviewKeys::new(KEY);
        // None is issued...
        assert!(matches!(
            k.issue("sbx_a", "ten_a", CDP_PORT, 60),
            Err(Error::InvalidArgument(_))
        ));
        // ...and one signed before the rule (or by hand) is refused.
        let (old, _) = k.sign("sbx_a", "ten_a", CDP_PORT, AUDIENCE, 60).unwrap();
        assert!(matches!(
            k.verify(&old, "sbx_a", CDP_PORT),
            Err(Error::PermissionDenied(_))
        ));
        // A DevTools token opens the browser's port of its sandbox alone.
        let (cdp, _) = k.issue_cdp("sbx_a", "ten_a", 60).unwrap();
        assert_eq!(k.verify(&cdp, "sbx_a", CDP_PORT).unwrap().aud, CDP_AUDIENCE);
        assert!(k.verify(&cdp, "sbx_b", CDP_PORT).is_err());
        assert!(k.verify(&cdp, "sbx_a", 3000).is_err());
        // A DevTools audience on another port's claims opens nothing.
        let (odd, _) = k.sign("sbx_a", "ten_a", 3000, CDP_AUDIENCE, 60).unwrap();
        assert!(matches!(
            k.verify(&odd, "sbx_a", 3000),
            Err(Error::PermissionDenied(_))
        ));
    }

    #[test]
    fn user_tokens_and_preview_tokens_do_not_cross() {
        let user = JwtKeys::new(KEY, 900);
        let preview = PreviewKeys::new(KEY);
        // Even with the same key, the issuer and audience keep them apart.
        let (access, _) = user
            .issue_access("usr_a", "ten_a", "owner", "fp".into())
            .unwrap();
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
