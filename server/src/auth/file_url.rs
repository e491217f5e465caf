//! Signed file URLs: short-lived HS256 JWTs that open one file of one
//! sandbox for reading or for writing to whoever holds the URL. They are
//! signed with the preview key but carry their own `iss` and `aud`, so a
//! file token is never a preview token or a user token, nor the reverse;
//! ReadFile and WriteFile check the sandbox, the path and the operation.

use super::preview::PreviewKeys;
use crate::error::{Error, Result};
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

pub const ISSUER: &str = "talon-file";
pub const AUDIENCE: &str = "talon-file";
/// TTL when the request sets none, and the most it may ask for.
pub const DEFAULT_TTL_SECS: u64 = 3600;
pub const MAX_TTL_SECS: u64 = 86_400;

/// What a token opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileOp {
    Read,
    Write,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct FileClaims {
    /// The sandbox.
    pub sub: String,
    pub tid: String,
    /// Who signed it (for the audit).
    pub act: String,
    pub path: String,
    pub op: FileOp,
    pub iss: String,
    pub aud: String,
    pub exp: u64,
    pub iat: u64,
    pub jti: String,
}

/// The grant a token carries, as the caller asked for it.
pub struct FileGrant<'a> {
    pub sandbox_id: &'a str,
    pub tenant_id: &'a str,
    pub actor_id: &'a str,
    pub path: &'a str,
    pub op: FileOp,
}

impl PreviewKeys {
    /// A token for one file operation, valid for `ttl_secs`.
    pub fn issue_file(&self, g: &FileGrant<'_>, ttl_secs: u64) -> Result<(String, u64)> {
        let now = super::jwt::unix_now();
        let claims = FileClaims {
            sub: g.sandbox_id.into(),
            tid: g.tenant_id.into(),
            act: g.actor_id.into(),
            path: g.path.into(),
            op: g.op,
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

    /// The claims of a valid token for exactly this sandbox, path and
    /// operation.
    pub fn verify_file(
        &self,
        token: &str,
        sandbox_id: &str,
        path: &str,
        op: FileOp,
    ) -> Result<FileClaims> {
        let mut v = Validation::new(Algorithm::HS256);
        v.leeway = super::jwt::LEEWAY_SECS;
        v.set_issuer(&[ISSUER]);
        v.set_audience(&[AUDIENCE]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let c = jsonwebtoken::decode::<FileClaims>(token, &self.decoding, &v)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    Error::Unauthenticated("the file URL has expired".into())
                }
                _ => Error::Unauthenticated(format!("invalid file token: {e}")),
            })?
            .claims;
        if c.sub != sandbox_id || c.path != path || c.op != op {
            return Err(Error::PermissionDenied(
                "the file token is for another sandbox, path or operation".into(),
            ));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"preview key preview key preview k";

    fn grant(op: FileOp) -> FileGrant<'static> {
        FileGrant {
            sandbox_id: "sbx_a",
            tenant_id: "ten_a",
            actor_id: "key_a",
            path: "out/report.csv",
            op,
        }
    }

    #[test]
    fn bound_to_one_sandbox_path_and_operation() {
        let k = PreviewKeys::new(KEY);
        let (t, _) = k.issue_file(&grant(FileOp::Read), 60).unwrap();
        let c = k
            .verify_file(&t, "sbx_a", "out/report.csv", FileOp::Read)
            .unwrap();
        assert_eq!((c.tid.as_str(), c.act.as_str()), ("ten_a", "key_a"));
        for (sbx, path, op) in [
            ("sbx_b", "out/report.csv", FileOp::Read),
            ("sbx_a", "out/report.csv2", FileOp::Read),
            ("sbx_a", "/workspace/out/report.csv", FileOp::Read),
            ("sbx_a", "out/report.csv", FileOp::Write),
        ] {
            assert!(
                k.verify_file(&t, sbx, path, op).is_err(),
                "{sbx} {path} {op:?}"
            );
        }
        // Another key's token, and a preview token, are refused.
        let other = PreviewKeys::new(b"another key another key another k");
        assert!(
            other
                .verify_file(&t, "sbx_a", "out/report.csv", FileOp::Read)
                .is_err()
        );
        let (preview, _) = k.issue("sbx_a", "ten_a", 3000, 60).unwrap();
        assert!(
            k.verify_file(&preview, "sbx_a", "out/report.csv", FileOp::Read)
                .is_err()
        );
        assert!(k.verify(&t, "sbx_a", 3000).is_err());
    }

    #[test]
    fn expired_tokens_are_refused() {
        let k = PreviewKeys::new(KEY);
        let mut c = FileClaims {
            sub: "sbx_a".into(),
            tid: "ten_a".into(),
            act: "key_a".into(),
            path: "f".into(),
            op: FileOp::Write,
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            exp: 1,
            iat: 0,
            jti: "x".into(),
        };
        let t = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &c, &k.encoding).unwrap();
        assert!(matches!(
            k.verify_file(&t, "sbx_a", "f", FileOp::Write),
            Err(Error::Unauthenticated(_))
        ));
        c.exp = super::super::jwt::unix_now() + 60;
        let t = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &c, &k.encoding).unwrap();
        assert!(k.verify_file(&t, "sbx_a", "f", FileOp::Write).is_ok());
    }
}
