//! Tenants, users and API keys, with the rules that guard them: emails are
//! unique, roles never rise above the granter's, and a tenant always keeps
//! at least one active owner.

use crate::app::App;
use crate::auth::{Credential, Principal, Role, apikey, password, sha256_hex};
use crate::config::Quota;
use crate::db::entity::{api_key, refresh_token, tenant, user};
use crate::db::now_ms;
use crate::error::{Error, Result, is_unique_violation};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};

pub const PLATFORM_TENANT: &str = "platform";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every sandbox not deleted (what the quota counts).
    pub sandboxes: i64,
    /// Those that hold a worker's capacity (running, starting, paused…).
    pub live_sandboxes: i64,
    pub cpu_millis: i64,
    pub memory_mib: i64,
}

/// The tenant a call may act on, as `scope` decided it. Only this module
/// makes one, so a domain function that takes a scope can't be handed a
/// tenant id straight from a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantScope(String, Option<String>);

impl TenantScope {
    pub fn id(&self) -> &str {
        &self.0
    }

    /// The caller's own tenant; for a credential bound to one sandbox (a
    /// sandbox access token), only that sandbox of it.
    pub fn own(p: &Principal) -> TenantScope {
        TenantScope(p.tenant_id.clone(), p.sandbox_bound().map(String::from))
    }

    /// The tenant of a row the store returned (a sandbox's own tenant,
    /// say), never of a request.
    pub fn of_stored(tenant_id: &str) -> TenantScope {
        TenantScope(tenant_id.to_string(), None)
    }

    /// Whether the scope reaches this sandbox at all (a bound credential
    /// sees every other sandbox as missing).
    pub fn reaches(&self, sandbox_id: &str) -> bool {
        self.1.as_deref().is_none_or(|s| s == sandbox_id)
    }
}

/// The tenant a call acts on: "-" or empty is the caller's own; another
/// tenant only for platform admins, and NOT_FOUND otherwise.
pub async fn scope(app: &App, p: &Principal, tenant_id: &str) -> Result<TenantScope> {
    if tenant_id.is_empty() || tenant_id == "-" || tenant_id == p.tenant_id {
        return Ok(TenantScope::own(p));
    }
    if p.platform_admin
        && tenant::Entity::find_by_id(tenant_id.to_string())
            .one(app.db())
            .await?
            .is_some()
    {
        return Ok(TenantScope(tenant_id.to_string(), None));
    }
    Err(Error::NotFound(format!("tenant {tenant_id}")))
}

pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "name must be 1-63 of [a-z0-9-], not starting with '-'".into(),
        ))
    }
}

/// An email as stored: trimmed and lowercased, one `@` between a local
/// part and a domain of at least two labels, none of them empty.
pub fn normalize_email(email: &str) -> Result<String> {
    let e = email.trim().to_ascii_lowercase();
    let valid = e.len() <= 254
        && e.split_once('@').is_some_and(|(l, d)| {
            !l.is_empty()
                && !d.contains('@')
                && d.contains('.')
                && d.split('.').all(|label| !label.is_empty())
        })
        && !e.chars().any(|c| c.is_whitespace() || c.is_control());
    if valid {
        Ok(e)
    } else {
        Err(Error::InvalidArgument(format!("invalid email {email:?}")))
    }
}

pub fn validate_quota(q: &Quota) -> Result<()> {
    if q.max_sandboxes < 0 || q.max_cpu_millis < 0 || q.max_memory_mib < 0 {
        return Err(Error::InvalidArgument(
            "quota values must not be negative".into(),
        ));
    }
    Ok(())
}

/// What a tenant holds (see `sandboxes::holdings`, the one query).
pub async fn usage<C: ConnectionTrait>(db: &C, tenant_id: &str) -> Result<Usage> {
    Ok(crate::domain::sandboxes::holdings(db, Some(tenant_id))
        .await?
        .tenant)
}

async fn insert_user<C: ConnectionTrait>(
    db: &C,
    tenant_id: &str,
    email: &str,
    pass: &str,
    role: Role,
) -> Result<user::Model> {
    let email = normalize_email(email)?;
    password::validate(pass)?;
    let row = user::ActiveModel {
        id: Set(crate::ids::new_id("usr")),
        tenant_id: Set(tenant_id.to_string()),
        email: Set(email.clone()),
        password_hash: Set(password::hash(pass)?),
        role: Set(role.as_str().to_string()),
        disabled: Set(false),
        created_at: Set(now_ms()),
    };
    row.insert(db).await.map_err(|e| {
        if is_unique_violation(&e) {
            Error::AlreadyExists(format!("a user with email {email} already exists"))
        } else {
            e.into()
        }
    })
}

pub async fn create_tenant(
    app: &App,
    name: &str,
    quota: Option<Quota>,
    owner_email: &str,
    owner_password: &str,
    platform: bool,
) -> Result<(tenant::Model, user::Model)> {
    validate_name(name)?;
    let quota = quota.unwrap_or(app.config().default_quota);
    validate_quota(&quota)?;
    let txn = crate::db::begin_write(app.db()).await?;
    let t = tenant::ActiveModel {
        id: Set(crate::ids::new_id("ten")),
        name: Set(name.to_string()),
        platform: Set(platform),
        max_sandboxes: Set(quota.max_sandboxes),
        max_cpu_millis: Set(quota.max_cpu_millis),
        max_memory_mib: Set(quota.max_memory_mib),
        created_at: Set(now_ms()),
    }
    .insert(&txn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            Error::AlreadyExists(format!("tenant {name} already exists"))
        } else {
            e.into()
        }
    })?;
    let owner = insert_user(&txn, &t.id, owner_email, owner_password, Role::Owner).await?;
    txn.commit().await?;
    Ok((t, owner))
}

pub async fn get_tenant(app: &App, scope: &TenantScope) -> Result<(tenant::Model, Usage)> {
    let tenant_id = scope.id();
    let t = tenant::Entity::find_by_id(tenant_id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("tenant {tenant_id}")))?;
    let u = usage(app.db(), tenant_id).await?;
    Ok((t, u))
}

pub async fn list_tenants(app: &App, offset: u64, limit: u64) -> Result<Vec<tenant::Model>> {
    Ok(tenant::Entity::find()
        .order_by_asc(tenant::Column::CreatedAt)
        .order_by_asc(tenant::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(app.db())
        .await?)
}

pub async fn update_quota(
    app: &App,
    scope: &TenantScope,
    q: Quota,
) -> Result<(tenant::Model, Usage)> {
    let tenant_id = scope.id();
    validate_quota(&q)?;
    let t = tenant::Entity::find_by_id(tenant_id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(|| Error::NotFound(format!("tenant {tenant_id}")))?;
    let mut am: tenant::ActiveModel = t.into();
    am.max_sandboxes = Set(q.max_sandboxes);
    am.max_cpu_millis = Set(q.max_cpu_millis);
    am.max_memory_mib = Set(q.max_memory_mib);
    am.update(app.db()).await?;
    get_tenant(app, scope).await
}

pub async fn create_user(
    app: &App,
    scope: &TenantScope,
    email: &str,
    pass: &str,
    role: Role,
) -> Result<user::Model> {
    let tenant_id = scope.id();
    insert_user(app.db(), tenant_id, email, pass, role).await
}

pub async fn list_users(
    app: &App,
    scope: &TenantScope,
    offset: u64,
    limit: u64,
) -> Result<Vec<user::Model>> {
    let tenant_id = scope.id();
    Ok(user::Entity::find()
        .filter(user::Column::TenantId.eq(tenant_id))
        .order_by_asc(user::Column::CreatedAt)
        .order_by_asc(user::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(app.db())
        .await?)
}

async fn find_user<C: ConnectionTrait>(
    db: &C,
    tenant_id: &str,
    user_id: &str,
) -> Result<user::Model> {
    user::Entity::find_by_id(user_id.to_string())
        .filter(user::Column::TenantId.eq(tenant_id))
        .one(db)
        .await?
        .ok_or_else(|| Error::NotFound(format!("user {user_id}")))
}

pub async fn get_user(app: &App, scope: &TenantScope, user_id: &str) -> Result<user::Model> {
    let tenant_id = scope.id();
    find_user(app.db(), tenant_id, user_id).await
}

/// Active owners other than `except`.
async fn other_owners<C: ConnectionTrait>(db: &C, tenant_id: &str, except: &str) -> Result<u64> {
    Ok(user::Entity::find()
        .filter(user::Column::TenantId.eq(tenant_id))
        .filter(user::Column::Role.eq(Role::Owner.as_str()))
        .filter(user::Column::Disabled.eq(false))
        .filter(user::Column::Id.ne(except))
        .count(db)
        .await?)
}

fn last_owner() -> Error {
    Error::FailedPrecondition("a tenant must keep at least one active owner".into())
}

pub struct UserChange {
    pub role: Option<Role>,
    pub disabled: Option<bool>,
    pub password: Option<String>,
}

pub async fn update_user(
    app: &App,
    scope: &TenantScope,
    user_id: &str,
    change: UserChange,
) -> Result<user::Model> {
    let tenant_id = scope.id();
    let lock = app.tenant_lock(tenant_id);
    let _guard = lock.lock().await;
    let txn = crate::db::begin_write(app.db()).await?;
    let u = find_user(&txn, tenant_id, user_id).await?;
    let was_active_owner = u.role == Role::Owner.as_str() && !u.disabled;
    let demoted = change.role.is_some_and(|r| r != Role::Owner);
    let disabled = change.disabled == Some(true);
    if was_active_owner
        && (demoted || disabled)
        && other_owners(&txn, tenant_id, user_id).await? == 0
    {
        return Err(last_owner());
    }
    let mut am: user::ActiveModel = u.into();
    if let Some(r) = change.role {
        am.role = Set(r.as_str().to_string());
    }
    if let Some(d) = change.disabled {
        am.disabled = Set(d);
    }
    let reset = change.password.is_some();
    if let Some(p) = change.password {
        password::validate(&p)?;
        am.password_hash = Set(password::hash(&p)?);
    }
    let u = am.update(&txn).await?;
    if disabled || change.role.is_some() || reset {
        // A changed user starts over: refresh tokens issued before are
        // void (a new password also voids every access token and browser
        // session of the old one: they carry its fingerprint).
        revoke_sessions(&txn, user_id).await?;
    }
    txn.commit().await?;
    // Its role or state may have changed: cached principals are stale.
    app.forget_principals();
    Ok(u)
}

/// Revokes every live refresh token of a user.
pub(crate) async fn revoke_sessions<C: ConnectionTrait>(db: &C, user_id: &str) -> Result<()> {
    refresh_token::Entity::update_many()
        .col_expr(refresh_token::Column::RevokedAt, Expr::value(now_ms()))
        .filter(refresh_token::Column::UserId.eq(user_id))
        .filter(refresh_token::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}

pub async fn delete_user(app: &App, scope: &TenantScope, user_id: &str) -> Result<()> {
    let tenant_id = scope.id();
    let lock = app.tenant_lock(tenant_id);
    let _guard = lock.lock().await;
    let txn = crate::db::begin_write(app.db()).await?;
    let u = find_user(&txn, tenant_id, user_id).await?;
    if u.role == Role::Owner.as_str()
        && !u.disabled
        && other_owners(&txn, tenant_id, user_id).await? == 0
    {
        return Err(last_owner());
    }
    api_key::Entity::delete_many()
        .filter(api_key::Column::UserId.eq(user_id))
        .exec(&txn)
        .await?;
    refresh_token::Entity::delete_many()
        .filter(refresh_token::Column::UserId.eq(user_id))
        .exec(&txn)
        .await?;
    user::Entity::delete_by_id(user_id.to_string())
        .exec(&txn)
        .await?;
    txn.commit().await?;
    app.forget_principals();
    Ok(())
}

pub async fn create_api_key(
    app: &App,
    p: &Principal,
    scope: &TenantScope,
    name: &str,
    role: Option<Role>,
    expires_at: Option<i64>,
) -> Result<(api_key::Model, String)> {
    let tenant_id = scope.id();
    if name.trim().is_empty() || name.len() > 128 {
        return Err(Error::InvalidArgument(
            "name must be 1-128 characters".into(),
        ));
    }
    if p.credential.is_component() {
        return Err(Error::PermissionDenied(
            "workers and servers have no keys".into(),
        ));
    }
    if tenant_id != p.tenant_id {
        // Keys act for a user of their tenant; a platform admin cannot mint
        // keys inside another tenant.
        return Err(Error::NotFound(format!("tenant {tenant_id}")));
    }
    let role = role.unwrap_or(p.role);
    if !p.role.at_least(role) {
        return Err(Error::PermissionDenied(format!(
            "a {} may not create a {} key",
            p.role, role
        )));
    }
    if expires_at.is_some_and(|e| e <= now_ms()) {
        return Err(Error::InvalidArgument(
            "expire_time must be in the future".into(),
        ));
    }
    let (secret, prefix) = apikey::generate();
    let row = api_key::ActiveModel {
        id: Set(crate::ids::new_id("key")),
        tenant_id: Set(tenant_id.to_string()),
        user_id: Set(p.user_id.clone()),
        name: Set(name.trim().to_string()),
        prefix: Set(prefix),
        secret_hash: Set(sha256_hex(&secret)),
        role: Set(role.as_str().to_string()),
        created_at: Set(now_ms()),
        expires_at: Set(expires_at),
        last_used_at: Set(None),
    }
    .insert(app.db())
    .await?;
    Ok((row, secret))
}

/// Owners see every key of the tenant; others only their own.
pub async fn list_api_keys(
    app: &App,
    p: &Principal,
    scope: &TenantScope,
    offset: u64,
    limit: u64,
) -> Result<Vec<api_key::Model>> {
    let tenant_id = scope.id();
    let mut q = api_key::Entity::find().filter(api_key::Column::TenantId.eq(tenant_id));
    if !p.sees_every_key() {
        q = q.filter(api_key::Column::UserId.eq(&p.user_id));
    }
    Ok(q.order_by_asc(api_key::Column::CreatedAt)
        .order_by_asc(api_key::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(app.db())
        .await?)
}

pub async fn delete_api_key(
    app: &App,
    p: &Principal,
    scope: &TenantScope,
    key_id: &str,
) -> Result<()> {
    let tenant_id = scope.id();
    let mut q = api_key::Entity::delete_many()
        .filter(api_key::Column::Id.eq(key_id))
        .filter(api_key::Column::TenantId.eq(tenant_id));
    if !p.sees_every_key() {
        q = q.filter(api_key::Column::UserId.eq(&p.user_id));
    }
    if q.exec(app.db()).await?.rows_affected == 0 {
        return Err(Error::NotFound(format!("API key {key_id}")));
    }
    app.forget_principals();
    Ok(())
}

/// What the first start prints once and writes to
/// `DATA_DIR/bootstrap-credentials.json`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct BootstrapCredentials {
    pub tenant_id: String,
    pub user_id: String,
    pub email: String,
    pub password: String,
    pub api_key: String,
}

/// Creates the platform tenant and its owner on first start; on later
/// starts, only finds the platform tenant.
pub async fn bootstrap(app: &App) -> Result<Option<BootstrapCredentials>> {
    if let Some(t) = tenant::Entity::find()
        .filter(tenant::Column::Platform.eq(true))
        .one(app.db())
        .await?
    {
        *app.platform_tenant_id().write().expect("lock") = t.id;
        return Ok(None);
    }
    let pass = crate::ids::random_token(15);
    let email = "admin@talon.local";
    let quota = Some(app.config().platform_quota);
    let (t, owner) = create_tenant(app, PLATFORM_TENANT, quota, email, &pass, true).await?;
    *app.platform_tenant_id().write().expect("lock") = t.id.clone();
    let p = Principal {
        tenant_id: t.id.clone(),
        user_id: owner.id.clone(),
        email: owner.email.clone(),
        role: Role::Owner,
        credential: Credential::AccessToken,
        platform_admin: true,
    };
    let (_, secret) = create_api_key(
        app,
        &p,
        &TenantScope(t.id.clone(), None),
        "bootstrap",
        Some(Role::Owner),
        None,
    )
    .await?;
    Ok(Some(BootstrapCredentials {
        tenant_id: t.id,
        user_id: owner.id,
        email: owner.email,
        password: pass,
        api_key: secret,
    }))
}
