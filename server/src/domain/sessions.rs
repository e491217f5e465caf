//! Password sessions: login, refresh with rotation, logout.

use crate::app::App;
use crate::auth::{Principal, digest_eq, password, sha256_hex};
use crate::db::entity::{refresh_token, user};
use crate::db::now_ms;
use crate::error::{Error, Result};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

pub struct Tokens {
    pub access_token: String,
    pub access_expires_s: u64,
    pub refresh_token: String,
    pub refresh_expires_ms: i64,
}

const BAD_LOGIN: &str = "invalid email or password";

pub async fn login(app: &App, email: &str, pass: &str) -> Result<Tokens> {
    let u = check_password(app, email, pass).await?;
    issue(app, &u).await
}

/// A browser session: (session token, CSRF token, expiry in unix seconds).
pub async fn browser_session(app: &App, email: &str, pass: &str) -> Result<(String, String, u64)> {
    let u = check_password(app, email, pass).await?;
    let csrf = crate::ids::random_token(32);
    let (token, exp) = app.jwt().issue_session(
        &u.id,
        &u.tenant_id,
        &u.role,
        app.config().browser_session_ttl.as_secs(),
        sha256_hex(&csrf),
        password::fingerprint(&u.password_hash),
    )?;
    Ok((token, csrf, exp))
}

async fn check_password(app: &App, email: &str, pass: &str) -> Result<user::Model> {
    let email = email.trim().to_ascii_lowercase();
    if let Err(wait) = app.logins().check(&email, std::time::Instant::now()) {
        app.metrics().logins.with_label_values(&["throttled"]).inc();
        return Err(Error::ResourceExhausted(format!(
            "too many failed sign-ins for this email; try again in {} s",
            wait.as_secs().max(1)
        )));
    }
    let found = user::Entity::find()
        .filter(user::Column::Email.eq(&email))
        .one(app.db())
        .await?;
    let ok = match &found {
        Some(u) => password::verify(pass, &u.password_hash) && !u.disabled,
        None => {
            // Same work as a real check, so timing does not tell who exists.
            password::verify(pass, password::dummy_hash());
            false
        }
    };
    match found {
        Some(u) if ok => {
            app.logins().succeeded(&email);
            app.metrics().logins.with_label_values(&["ok"]).inc();
            Ok(u)
        }
        _ => {
            app.logins().failed(&email, std::time::Instant::now());
            app.metrics().logins.with_label_values(&["failed"]).inc();
            Err(Error::Unauthenticated(BAD_LOGIN.into()))
        }
    }
}

async fn issue(app: &App, u: &user::Model) -> Result<Tokens> {
    let (access_token, access_expires_s) = app.jwt().issue_access(
        &u.id,
        &u.tenant_id,
        &u.role,
        password::fingerprint(&u.password_hash),
    )?;
    let id = crate::ids::new_id("rt");
    let refresh = format!("{id}.{}", crate::ids::random_token(32));
    let now = now_ms();
    let expires = now + app.config().refresh_token_ttl.as_millis() as i64;
    refresh_token::ActiveModel {
        id: Set(id),
        tenant_id: Set(u.tenant_id.clone()),
        user_id: Set(u.id.clone()),
        secret_hash: Set(sha256_hex(&refresh)),
        created_at: Set(now),
        expires_at: Set(expires),
        revoked_at: Set(None),
        password_fp: Set(password::fingerprint(&u.password_hash)),
    }
    .insert(app.db())
    .await?;
    Ok(Tokens {
        access_token,
        access_expires_s,
        refresh_token: refresh,
        refresh_expires_ms: expires,
    })
}

async fn find_live(app: &App, token: &str) -> Result<refresh_token::Model> {
    let bad = || Error::Unauthenticated("invalid refresh token".into());
    let id = token.split_once('.').map(|(id, _)| id).ok_or_else(bad)?;
    let row = refresh_token::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await?
        .ok_or_else(bad)?;
    if !digest_eq(&sha256_hex(token), &row.secret_hash) {
        return Err(bad());
    }
    if row.revoked_at.is_some() || row.expires_at <= now_ms() {
        return Err(bad());
    }
    Ok(row)
}

/// Rotates a refresh token: the presented one is revoked (atomically, so
/// two concurrent refreshes cannot both succeed) and a new pair issued.
pub async fn refresh(app: &App, token: &str) -> Result<Tokens> {
    let row = find_live(app, token).await?;
    let revoked = refresh_token::Entity::update_many()
        .col_expr(refresh_token::Column::RevokedAt, Expr::value(now_ms()))
        .filter(refresh_token::Column::Id.eq(&row.id))
        .filter(refresh_token::Column::RevokedAt.is_null())
        .exec(app.db())
        .await?;
    if revoked.rows_affected != 1 {
        return Err(Error::Unauthenticated("invalid refresh token".into()));
    }
    let u = user::Entity::find_by_id(row.user_id)
        .one(app.db())
        .await?
        .filter(|u| !u.disabled)
        // Issued under another password (it raced a change): refused.
        .filter(|u| {
            row.password_fp.is_empty()
                || digest_eq(&row.password_fp, &password::fingerprint(&u.password_hash))
        })
        .ok_or_else(|| Error::Unauthenticated("invalid refresh token".into()))?;
    issue(app, &u).await
}

pub async fn logout(app: &App, p: &Principal, token: &str, all: bool) -> Result<()> {
    let mut q = refresh_token::Entity::update_many()
        .col_expr(refresh_token::Column::RevokedAt, Expr::value(now_ms()))
        .filter(refresh_token::Column::UserId.eq(&p.user_id))
        .filter(refresh_token::Column::RevokedAt.is_null());
    if !all {
        if token.is_empty() {
            return Err(Error::InvalidArgument(
                "refresh_token or all_sessions is required".into(),
            ));
        }
        let row = find_live(app, token).await?;
        if row.user_id != p.user_id {
            return Err(Error::NotFound("refresh token".into()));
        }
        q = q.filter(refresh_token::Column::Id.eq(row.id));
    }
    q.exec(app.db()).await?;
    Ok(())
}

/// Changes the caller's own password, given the current one. Only a
/// signed-in user has one to give (an API key or any other credential is
/// refused). A wrong current password is a failed sign-in for the
/// throttle, so this is no way around it. Every session of the user ends:
/// its refresh tokens are revoked, and its access tokens and browser
/// sessions carry the old password's fingerprint, which no longer matches.
pub async fn change_password(app: &App, p: &Principal, current: &str, new: &str) -> Result<()> {
    if p.credential != crate::auth::Credential::AccessToken {
        return Err(Error::FailedPrecondition(
            "only a signed-in user changes a password: sign in with the email and password".into(),
        ));
    }
    password::validate(new)?;
    let u = check_password(app, &p.email, current)
        .await
        .map_err(|e| match e {
            Error::Unauthenticated(_) => {
                Error::PermissionDenied("the current password is wrong".into())
            }
            other => other,
        })?;
    if u.id != p.user_id {
        return Err(Error::PermissionDenied(
            "the current password is wrong".into(),
        ));
    }
    let txn = crate::db::begin_write(app.db()).await?;
    let mut am: user::ActiveModel = u.into();
    am.password_hash = Set(password::hash(new)?);
    am.update(&txn).await?;
    crate::domain::tenants::revoke_sessions(&txn, &p.user_id).await?;
    txn.commit().await?;
    app.forget_principals();
    Ok(())
}
