//! Tenant secrets, encrypted at rest with XChaCha20-Poly1305 under a key in
//! the data directory. The associated data is `tenant_id/name`, so a
//! ciphertext copied to another row or tenant does not decrypt. Values
//! leave the server only inside a sandbox spec sent to a worker.

use crate::app::App;
use crate::db::entity::secret;
use crate::db::now_ms;
use crate::domain::sandboxes;
use crate::domain::tenants::TenantScope;
use crate::error::{Error, Result};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const MAX_VALUE: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    Env,
    File,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Env => "env",
            Delivery::File => "file",
        }
    }
    pub fn parse(s: &str) -> Self {
        if s == "file" {
            Delivery::File
        } else {
            Delivery::Env
        }
    }
}

/// What a sandbox gets from its named secrets.
#[derive(Debug, Default)]
pub struct Resolved {
    pub env: BTreeMap<String, String>,
    pub files: BTreeMap<String, Vec<u8>>,
    /// When those that have a lifetime expire (ms since the epoch).
    pub expires: BTreeMap<String, i64>,
}

/// What a resolve does with a name that is not (or no longer) in the
/// store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Refuses it: a new sandbox never starts without a secret it names.
    Fail,
    /// Leaves it out: a running sandbox loses a secret that expired or was
    /// deleted.
    Skip,
}

pub fn validate_name(name: &str) -> Result<()> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_uppercase() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "secret name {name:?} must match [A-Z_][A-Z0-9_]{{0,127}}"
        )))
    }
}

fn cipher(key: &[u8; 32]) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(key.into())
}

fn aad(tenant_id: &str, name: &str) -> String {
    format!("{tenant_id}/{name}")
}

fn b32(bytes: &[u8]) -> String {
    base32::encode(base32::Alphabet::Rfc4648Lower { padding: false }, bytes)
}

fn unb32(s: &str) -> Result<Vec<u8>> {
    base32::decode(base32::Alphabet::Rfc4648Lower { padding: false }, s)
        .ok_or_else(|| Error::Internal("corrupt secret encoding".into()))
}

pub async fn put(
    app: &Arc<App>,
    scope: &TenantScope,
    name: &str,
    value: &str,
    delivery: Delivery,
    expires_at: Option<i64>,
) -> Result<secret::Model> {
    let tenant_id = scope.id();
    validate_name(name)?;
    if value.len() > MAX_VALUE {
        return Err(Error::InvalidArgument(format!(
            "a secret value is at most {MAX_VALUE} bytes"
        )));
    }
    let now = now_ms();
    if expires_at.is_some_and(|e| e <= now) {
        return Err(Error::InvalidArgument(
            "expire_time must be in the future".into(),
        ));
    }
    let mut nonce = [0u8; 24];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let ct = cipher(app.secrets_key())
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: value.as_bytes(),
                aad: aad(tenant_id, name).as_bytes(),
            },
        )
        .map_err(|_| Error::Internal("secret encryption failed".into()))?;
    let row = secret::ActiveModel {
        id: Set(crate::ids::new_id("sec")),
        tenant_id: Set(tenant_id.to_string()),
        name: Set(name.to_string()),
        delivery: Set(delivery.as_str().into()),
        ciphertext: Set(b32(&ct)),
        nonce: Set(b32(&nonce)),
        created_at: Set(now),
        updated_at: Set(now),
        expires_at: Set(expires_at),
    };
    secret::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([secret::Column::TenantId, secret::Column::Name])
                .update_columns([
                    secret::Column::Delivery,
                    secret::Column::Ciphertext,
                    secret::Column::Nonce,
                    secret::Column::UpdatedAt,
                    secret::Column::ExpiresAt,
                ])
                .to_owned(),
        )
        .exec(app.db())
        .await?;
    let row = find(app, tenant_id, name)
        .await?
        .ok_or_else(|| Error::Internal("secret vanished after write".into()))?;
    sandboxes::secrets_changed(app, tenant_id, &[name.to_string()]).await;
    Ok(row)
}

fn live(now: i64) -> Condition {
    Condition::any()
        .add(secret::Column::ExpiresAt.is_null())
        .add(secret::Column::ExpiresAt.gt(now))
}

async fn find(app: &App, tenant_id: &str, name: &str) -> Result<Option<secret::Model>> {
    Ok(secret::Entity::find()
        .filter(secret::Column::TenantId.eq(tenant_id))
        .filter(secret::Column::Name.eq(name))
        .filter(live(now_ms()))
        .one(app.db())
        .await?)
}

pub async fn list(
    app: &App,
    scope: &TenantScope,
    offset: u64,
    limit: u64,
) -> Result<Vec<secret::Model>> {
    let tenant_id = scope.id();
    Ok(secret::Entity::find()
        .filter(secret::Column::TenantId.eq(tenant_id))
        .filter(live(now_ms()))
        .order_by_asc(secret::Column::Name)
        .offset(offset)
        .limit(limit)
        .all(app.db())
        .await?)
}

pub async fn delete(app: &Arc<App>, scope: &TenantScope, name: &str) -> Result<()> {
    let tenant_id = scope.id();
    let res = secret::Entity::delete_many()
        .filter(secret::Column::TenantId.eq(tenant_id))
        .filter(secret::Column::Name.eq(name))
        .exec(app.db())
        .await?;
    if res.rows_affected == 0 {
        return Err(Error::NotFound(format!("secret {name}")));
    }
    sandboxes::secrets_changed(app, tenant_id, &[name.to_string()]).await;
    Ok(())
}

/// Deletes expired secrets, and has the sandboxes that named them let
/// them go (their workers remove them on their own clocks too); run from
/// the server's background loop, every second.
pub async fn purge_expired(app: &Arc<App>) -> Result<u64> {
    let now = now_ms();
    let expired = secret::Entity::find()
        .filter(secret::Column::ExpiresAt.lte(now))
        .all(app.db())
        .await?;
    if expired.is_empty() {
        return Ok(0);
    }
    let n = secret::Entity::delete_many()
        .filter(secret::Column::ExpiresAt.lte(now))
        .exec(app.db())
        .await?
        .rows_affected;
    let mut by_tenant: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in expired {
        by_tenant.entry(s.tenant_id).or_default().push(s.name);
    }
    for (tenant_id, names) in by_tenant {
        sandboxes::secrets_changed(app, &tenant_id, &names).await;
    }
    Ok(n)
}

/// A name given both as an environment variable and as a secret.
pub fn set_twice(name: &str) -> Error {
    Error::InvalidArgument(format!(
        "{name} is both an environment variable and a secret"
    ))
}

/// The named secrets of an agent run, as variables: each delivered as an
/// environment variable (a file secret is refused), none also in `env`.
pub async fn for_run(
    app: &App,
    scope: &TenantScope,
    names: &[String],
    env: &std::collections::HashMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let resolved = resolve(app, scope, names, Missing::Fail).await?;
    if let Some(name) = resolved.files.keys().next() {
        return Err(Error::FailedPrecondition(format!(
            "secret {name} is delivered as a file; an agent run takes secrets as environment variables"
        )));
    }
    if let Some(k) = resolved.env.keys().find(|k| env.contains_key(*k)) {
        return Err(set_twice(k));
    }
    Ok(resolved.env)
}

/// Decrypts the named secrets of a tenant for a sandbox spec. A name that
/// does not exist (or has expired) is a precondition failure or left
/// out, as `missing` says.
pub async fn resolve(
    app: &App,
    scope: &TenantScope,
    names: &[String],
    missing: Missing,
) -> Result<Resolved> {
    let tenant_id = scope.id();
    let mut out = Resolved::default();
    for name in names {
        validate_name(name)?;
        let Some(row) = find(app, tenant_id, name).await? else {
            match missing {
                Missing::Fail => {
                    return Err(Error::FailedPrecondition(format!(
                        "secret {name} does not exist"
                    )));
                }
                Missing::Skip => continue,
            }
        };
        if let Some(at) = row.expires_at {
            out.expires.insert(name.clone(), at);
        }
        let nonce = unb32(&row.nonce)?;
        let ct = unb32(&row.ciphertext)?;
        let value = cipher(app.secrets_key())
            .decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &ct,
                    aad: aad(tenant_id, name).as_bytes(),
                },
            )
            .map_err(|_| {
                Error::Internal(format!(
                    "secret {name} does not decrypt with this server's key"
                ))
            })?;
        match Delivery::parse(&row.delivery) {
            Delivery::Env => {
                let v = String::from_utf8(value)
                    .map_err(|_| Error::Internal("secret is not UTF-8".into()))?;
                out.env.insert(name.clone(), v);
            }
            Delivery::File => {
                out.files.insert(name.clone(), value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("OPENAI_API_KEY").is_ok());
        assert!(validate_name("_X1").is_ok());
        assert!(validate_name("lower").is_err());
        assert!(validate_name("1ABC").is_err());
        assert!(validate_name("A-B").is_err());
        assert!(validate_name("").is_err());
    }

    #[test]
    fn ciphertext_is_bound_to_its_row() {
        let key = [7u8; 32];
        let nonce = [1u8; 24];
        let c = cipher(&key);
        let ct = c
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: b"v",
                    aad: aad("ten_a", "X").as_bytes(),
                },
            )
            .unwrap();
        assert!(
            c.decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &ct,
                    aad: aad("ten_a", "X").as_bytes()
                }
            )
            .is_ok()
        );
        assert!(
            c.decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &ct,
                    aad: aad("ten_b", "X").as_bytes()
                }
            )
            .is_err()
        );
        assert!(
            c.decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &ct,
                    aad: aad("ten_a", "Y").as_bytes()
                }
            )
            .is_err()
        );
    }
}
