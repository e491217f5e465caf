//! Sandbox access tokens: a bearer credential that opens the data plane of
//! one sandbox and nothing else. The E2B-compatible API hands one out as
//! `envdAccessToken`, because E2B's SDKs send only that token (never the
//! API key) with every process and file call.
//!
//! A token is `tsb_` + an HS256 JWT over the sandbox and its tenant,
//! signed with the preview key under its own `iss`/`aud`. It has no
//! expiry and no nonce, so every mint for one sandbox gives the same
//! token: E2B's SDKs sign file URLs with it client-side, and the server
//! must be able to recompute what they signed. It lives as long as the
//! sandbox (ids are never reused) and dies with the preview key.
//!
//! What it may call is [`crate::rbac::SANDBOX_TOKEN_METHODS`]; which
//! sandbox it may touch is checked where the data plane finds its route.

use super::preview::PreviewKeys;
use crate::error::{Error, Result};
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

pub const PREFIX: &str = "tsb_";
pub const ISSUER: &str = "talon-sandbox";
pub const AUDIENCE: &str = "talon-sandbox";

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct SandboxClaims {
    /// The sandbox.
    pub sub: String,
    pub tid: String,
    pub iss: String,
    pub aud: String,
}

impl PreviewKeys {
    /// The access token of one sandbox (the same on every call).
    pub fn sandbox_token(&self, sandbox_id: &str, tenant_id: &str) -> Result<String> {
        let claims = SandboxClaims {
            sub: sandbox_id.into(),
            tid: tenant_id.into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
        };
        let jwt = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(format!("jwt: {e}")))?;
        Ok(format!("{PREFIX}{jwt}"))
    }

    /// The sandbox and tenant a presented token opens.
    pub fn verify_sandbox_token(&self, token: &str) -> Result<SandboxClaims> {
        let bad = |why: String| Error::Unauthenticated(format!("invalid sandbox token: {why}"));
        let jwt = token
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("no prefix".into()))?;
        let mut v = Validation::new(Algorithm::HS256);
        v.validate_exp = false;
        v.set_issuer(&[ISSUER]);
        v.set_audience(&[AUDIENCE]);
        v.set_required_spec_claims(&["iss", "aud", "sub"]);
        let c = jsonwebtoken::decode::<SandboxClaims>(jwt, &self.decoding, &v)
            .map_err(|e| bad(e.to_string()))?
            .claims;
        if c.sub.is_empty() || c.tid.is_empty() {
            return Err(bad("empty claims".into()));
        }
        Ok(c)
    }

    /// Checks an E2B-style file signature (`talon_core::e2b_files::sign`)
    /// made with this sandbox's token. `now` is unix seconds.
    pub fn verify_file_signature(&self, s: &FileSignature<'_>, now: u64) -> Result<()> {
        if s.expiration.is_some_and(|exp| exp < now) {
            return Err(Error::Unauthenticated(
                "the signed file URL has expired".into(),
            ));
        }
        let token = self.sandbox_token(s.sandbox_id, s.tenant_id)?;
        let want = talon_core::e2b_files::sign(s.path, s.op, s.user, &token, s.expiration);
        if super::digest_eq(&want, s.signature) {
            Ok(())
        } else {
            Err(Error::PermissionDenied(
                "the file signature does not match this sandbox, path, operation and user".into(),
            ))
        }
    }
}

/// A file signature as presented, with what it claims to cover.
pub struct FileSignature<'a> {
    pub sandbox_id: &'a str,
    pub tenant_id: &'a str,
    /// The path exactly as it was signed.
    pub path: &'a str,
    /// `read` or `write`.
    pub op: &'a str,
    pub user: &'a str,
    pub expiration: Option<u64>,
    pub signature: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"preview key preview key preview k";

    #[test]
    fn one_token_per_sandbox_bound_to_it() {
        let k = PreviewKeys::new(KEY);
        let a = k.sandbox_token("sbx_a", "ten_a").unwrap();
        assert_eq!(a, k.sandbox_token("sbx_a", "ten_a").unwrap());
        assert_ne!(a, k.sandbox_token("sbx_b", "ten_a").unwrap());
        let c = k.verify_sandbox_token(&a).unwrap();
        assert_eq!((c.sub.as_str(), c.tid.as_str()), ("sbx_a", "ten_a"));
        // Another key, a tampered token, a bare JWT and a preview token are
        // all refused.
        assert!(
            PreviewKeys::new(b"another key another key another k")
                .verify_sandbox_token(&a)
                .is_err()
        );
        let mut t = a.clone();
        t.pop();
        t.push(if a.ends_with('A') { 'B' } else { 'A' });
        assert!(k.verify_sandbox_token(&t).is_err());
        assert!(k.verify_sandbox_token(&a[PREFIX.len()..]).is_err());
        let (preview, _) = k.issue("sbx_a", "ten_a", 3000, 60).unwrap();
        assert!(
            k.verify_sandbox_token(&format!("{PREFIX}{preview}"))
                .is_err()
        );
        // And the sandbox token is not a preview token.
        assert!(k.verify(&a[PREFIX.len()..], "sbx_a", 3000).is_err());
    }

    #[test]
    fn file_signatures_cover_path_operation_user_and_expiry() {
        let k = PreviewKeys::new(KEY);
        let token = k.sandbox_token("sbx_a", "ten_a").unwrap();
        let sign = |path: &str, op: &str, user: &str, exp: Option<u64>| {
            talon_core::e2b_files::sign(path, op, user, &token, exp)
        };
        let sig = sign("/home/user/a.txt", "read", "user", Some(2000));
        let base = FileSignature {
            sandbox_id: "sbx_a",
            tenant_id: "ten_a",
            path: "/home/user/a.txt",
            op: "read",
            user: "user",
            expiration: Some(2000),
            signature: &sig,
        };
        assert!(k.verify_file_signature(&base, 1000).is_ok());
        assert!(k.verify_file_signature(&base, 3000).is_err(), "expired");
        for s in [
            FileSignature {
                path: "/home/user/b.txt",
                ..base
            },
            FileSignature {
                op: "write",
                ..base
            },
            FileSignature {
                user: "root",
                ..base
            },
            FileSignature {
                sandbox_id: "sbx_b",
                ..base
            },
            FileSignature {
                expiration: Some(9999),
                ..base
            },
            FileSignature {
                expiration: None,
                ..base
            },
        ] {
            assert!(k.verify_file_signature(&s, 1000).is_err());
        }
        let forever = sign("a.txt", "write", "", None);
        let s = FileSignature {
            path: "a.txt",
            op: "write",
            user: "",
            expiration: None,
            signature: &forever,
            ..base
        };
        assert!(k.verify_file_signature(&s, u64::MAX / 2).is_ok());
    }
}
