//! Authentication: who is calling. Passwords are argon2id; access tokens are
//! HS256 JWTs with a pinned algorithm and required `exp`, `iss` and `aud`;
//! refresh tokens and API keys are random secrets stored only as SHA-256
//! hashes (they carry 160+ bits of entropy, so a slow hash adds nothing).

pub mod apikey;
pub mod file_url;
pub mod jwt;
pub mod password;
pub mod preview;
pub mod sandbox_token;
pub mod throttle;

use crate::db::entity::{api_key, user};
use crate::db::now_ms;
use crate::error::{Error, Result};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A tenant role. Ordered from most to least privileged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Owner,
    Developer,
    Viewer,
}

impl Role {
    fn rank(self) -> u8 {
        match self {
            Role::Owner => 3,
            Role::Developer => 2,
            Role::Viewer => 1,
        }
    }
    /// True when this role may do what `required` may.
    pub fn at_least(self, required: Role) -> bool {
        self.rank() >= required.rank()
    }
    pub fn min(self, other: Role) -> Role {
        if self.rank() <= other.rank() {
            self
        } else {
            other
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Developer => "developer",
            Role::Viewer => "viewer",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "owner" => Ok(Role::Owner),
            "developer" => Ok(Role::Developer),
            "viewer" => Ok(Role::Viewer),
            other => Err(Error::Internal(format!(
                "unknown role {other:?} in database"
            ))),
        }
    }
}

/// How the caller proved who they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    AccessToken,
    ApiKey {
        key_id: String,
    },
    Worker,
    /// Another server on the same database (peers.rs), with the peer
    /// token derived from the platform's JWT key, which workers never hold.
    Peer,
    /// A sandbox access token: the data plane of this one sandbox only.
    SandboxToken {
        sandbox_id: String,
    },
}

/// The authenticated caller, put into every request's extensions by the
/// access layer.
#[derive(Clone, Debug)]
pub struct Principal {
    pub tenant_id: String,
    pub user_id: String,
    pub email: String,
    pub role: Role,
    pub credential: Credential,
    /// An owner of the platform tenant.
    pub platform_admin: bool,
}

impl Principal {
    /// Whether this caller sees and deletes every API key of its tenant
    /// (an owner, or a platform admin), not only its own.
    pub fn sees_every_key(&self) -> bool {
        self.role == Role::Owner || self.platform_admin
    }

    /// The one sandbox this caller may touch, when its credential is
    /// bound to one.
    pub fn sandbox_bound(&self) -> Option<&str> {
        match &self.credential {
            Credential::SandboxToken { sandbox_id } => Some(sandbox_id),
            _ => None,
        }
    }

    /// The id written to audit records and `owner_id` fields.
    pub fn actor_id(&self) -> &str {
        match &self.credential {
            Credential::ApiKey { key_id } => key_id,
            _ => &self.user_id,
        }
    }
}

pub fn sha256_hex(data: &str) -> String {
    hex::encode(Sha256::digest(data.as_bytes()))
}

/// Constant-time comparison of two hex digests.
pub fn digest_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Resolves a bearer credential (JWT or API key) to a principal.
#[derive(Clone)]
pub struct Authenticator {
    pub db: DatabaseConnection,
    pub jwt: jwt::JwtKeys,
    /// The shared secret workers present.
    pub worker_token_hash: String,
    /// The secret servers present to each other ([`peer_token`]).
    pub peer_token_hash: String,
    pub platform_tenant_id: std::sync::Arc<std::sync::RwLock<String>>,
    /// Principals resolved in the last moments (the `App`'s, which clears
    /// it when a user or key changes).
    pub cache: std::sync::Arc<crate::cache::ShortCache<Principal>>,
    /// Verifies sandbox access tokens.
    pub preview: preview::PreviewKeys,
}

impl Credential {
    /// A platform component (a worker or a peer server), not a user: no
    /// role, no tenant, only the calls made for it.
    pub fn is_component(&self) -> bool {
        matches!(self, Credential::Worker | Credential::Peer)
    }
}

/// The bearer servers on one database present to each other: derived
/// from the JWT key they share, so a worker (which has only the workers'
/// token) cannot relay commands to other workers.
pub fn peer_token(jwt_secret: &str) -> String {
    sha256_hex(&format!("talon peer relay v1:{jwt_secret}"))
}

impl Authenticator {
    pub async fn authenticate(&self, bearer: &str) -> Result<Principal> {
        let digest = sha256_hex(bearer);
        if digest_eq(&digest, &self.worker_token_hash) {
            return Ok(Principal {
                tenant_id: String::new(),
                user_id: "worker".into(),
                email: String::new(),
                role: Role::Viewer,
                credential: Credential::Worker,
                platform_admin: false,
            });
        }
        if digest_eq(&digest, &self.peer_token_hash) {
            return Ok(Principal {
                tenant_id: String::new(),
                user_id: "peer".into(),
                email: String::new(),
                role: Role::Viewer,
                credential: Credential::Peer,
                platform_admin: false,
            });
        }
        if let Some(p) = self.cache.get(&digest) {
            return Ok(p);
        }
        if bearer.starts_with(sandbox_token::PREFIX) {
            // Self-contained: whether the sandbox still exists is the
            // data plane's question, asked on every call.
            let c = self.preview.verify_sandbox_token(bearer)?;
            return Ok(Principal {
                user_id: format!("sandbox-token:{}", c.sub),
                tenant_id: c.tid,
                email: String::new(),
                role: Role::Developer,
                credential: Credential::SandboxToken { sandbox_id: c.sub },
                platform_admin: false,
            });
        }
        let generation = self.cache.generation();
        let (p, expires_ms) = if bearer.starts_with(apikey::PREFIX) {
            self.api_key(bearer, &digest).await?
        } else {
            let claims = self.jwt.verify_access(bearer)?;
            let user = self.active_user(&claims.sub).await?;
            if user.tenant_id != claims.tid {
                return Err(Error::Unauthenticated("invalid token".into()));
            }
            if claims
                .pwd
                .as_ref()
                .is_some_and(|f| !digest_eq(f, &password::fingerprint(&user.password_hash)))
            {
                return Err(Error::Unauthenticated(
                    "the password changed since this token was issued: sign in again".into(),
                ));
            }
            let role: Role = user.role.parse()?;
            let p = self.principal(user, role, Credential::AccessToken);
            let exp_ms = i64::try_from(claims.exp)
                .unwrap_or(i64::MAX)
                .saturating_mul(1000);
            (p, Some(exp_ms))
        };
        self.cache.put(digest, generation, &p, expires_ms);
        Ok(p)
    }

    /// The principal of an API key, and when the key expires (ms).
    async fn api_key(&self, key: &str, digest: &str) -> Result<(Principal, Option<i64>)> {
        let bad = || Error::Unauthenticated("invalid API key".into());
        let prefix = apikey::prefix_of(key).ok_or_else(bad)?;
        let row = api_key::Entity::find()
            .filter(api_key::Column::Prefix.eq(prefix))
            .one(&self.db)
            .await?
            .ok_or_else(bad)?;
        if !digest_eq(digest, &row.secret_hash) {
            return Err(bad());
        }
        let now = now_ms();
        if row.expires_at.is_some_and(|e| e <= now) {
            return Err(Error::Unauthenticated("API key expired".into()));
        }
        let expires = row.expires_at;
        let user = self.active_user(&row.user_id).await?;
        // A key never acts above its user's current role.
        let role = row.role.parse::<Role>()?.min(user.role.parse()?);
        // Record use at most once a minute to keep auth read-mostly.
        if row.last_used_at.is_none_or(|t| now - t > 60_000) {
            let id = row.id.clone();
            let mut am: api_key::ActiveModel = row.into();
            am.last_used_at = Set(Some(now));
            if let Err(e) = am.update(&self.db).await {
                tracing::warn!(error = %e, key = %id, "could not record API key use");
            }
            let key_id = id;
            return Ok((
                self.principal(user, role, Credential::ApiKey { key_id }),
                expires,
            ));
        }
        let key_id = row.id;
        Ok((
            self.principal(user, role, Credential::ApiKey { key_id }),
            expires,
        ))
    }

    async fn active_user(&self, user_id: &str) -> Result<user::Model> {
        let user = user::Entity::find_by_id(user_id.to_string())
            .one(&self.db)
            .await?
            .ok_or_else(|| Error::Unauthenticated("invalid credential".into()))?;
        if user.disabled {
            return Err(Error::Unauthenticated("user is disabled".into()));
        }
        Ok(user)
    }

    fn principal(&self, user: user::Model, role: Role, credential: Credential) -> Principal {
        let platform = *self.platform_tenant_id.read().expect("lock") == user.tenant_id;
        Principal {
            platform_admin: platform && role == Role::Owner,
            tenant_id: user.tenant_id,
            user_id: user.id,
            email: user.email,
            role,
            credential,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_order() {
        assert!(Role::Owner.at_least(Role::Developer));
        assert!(Role::Developer.at_least(Role::Viewer));
        assert!(!Role::Viewer.at_least(Role::Developer));
        assert!(!Role::Developer.at_least(Role::Owner));
        assert_eq!(Role::Owner.min(Role::Viewer), Role::Viewer);
    }

    #[test]
    fn digest_compare() {
        assert!(digest_eq(&sha256_hex("a"), &sha256_hex("a")));
        assert!(!digest_eq(&sha256_hex("a"), &sha256_hex("b")));
        assert!(!digest_eq("ab", "abc"));
    }
}
