//! Tenants, users and API keys (`tenants.rs`) on a fresh database: the
//! rules the module's doc promises (emails normalized and unique, a key
//! never above its creator's role, a tenant always keeping an active
//! owner), who sees and deletes which keys, the first start's bootstrap,
//! and that a `TenantScope` keeps each call inside one tenant. These are
//! the checks between a caller and another tenant's users and keys, so
//! each test names a way one could be crossed.

use super::tenants::*;
use crate::app::App;
use crate::auth::{Credential, Principal, Role, sha256_hex};
use crate::config::Quota;
use crate::db::entity::{api_key, refresh_token, tenant, user};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use std::sync::Arc;

const PASS: &str = "correct horse battery";

/// The caller a user's access token makes.
fn as_user(u: &user::Model, role: Role) -> Principal {
    Principal {
        tenant_id: u.tenant_id.clone(),
        user_id: u.id.clone(),
        email: u.email.clone(),
        role,
        credential: Credential::AccessToken,
        platform_admin: false,
    }
}

/// A tenant named `name` with its owner (`owner@NAME.test`).
async fn tenant_with_owner(app: &App, name: &str) -> (tenant::Model, user::Model, TenantScope) {
    let (t, owner) = create_tenant(app, name, None, &format!("owner@{name}.test"), PASS, false)
        .await
        .unwrap();
    let scope = TenantScope::of_stored(&t.id);
    (t, owner, scope)
}

async fn key_ids(app: &App, p: &Principal, scope: &TenantScope) -> Vec<String> {
    let mut ids: Vec<String> = list_api_keys(app, p, scope, 0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn demote() -> UserChange {
    UserChange {
        role: Some(Role::Developer),
        disabled: None,
        password: None,
    }
}

fn disable() -> UserChange {
    UserChange {
        role: None,
        disabled: Some(true),
        password: None,
    }
}

async fn revoked_at(app: &App, token: &str) -> Option<i64> {
    refresh_token::Entity::find_by_id(token.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap()
        .revoked_at
}

async fn fresh() -> (Arc<App>, tempfile::TempDir) {
    let (app, _fake, dir) = App::with_fake_workers().await;
    (app, dir)
}

#[tokio::test]
async fn a_new_tenant_gets_the_default_quota_and_an_owner_with_a_normalized_email() {
    let (app, fake, _d) = App::with_fake_workers().await;
    let (t, owner) = create_tenant(&app, "acme", None, "  Ann@Acme.TEST ", PASS, false)
        .await
        .unwrap();
    let q = app.config().default_quota;
    assert_eq!(
        (t.max_sandboxes, t.max_cpu_millis, t.max_memory_mib),
        (q.max_sandboxes, q.max_cpu_millis, q.max_memory_mib)
    );
    assert!(!t.platform);
    assert_eq!(owner.tenant_id, t.id);
    assert_eq!(owner.email, "ann@acme.test");
    assert_eq!(owner.role, "owner");
    assert!(crate::auth::password::verify(PASS, &owner.password_hash));
    let scope = TenantScope::of_stored(&t.id);
    let (got, usage) = get_tenant(&app, &scope).await.unwrap();
    assert_eq!(got, t);
    assert_eq!(usage, Usage::default());
    // What the tenant's sandboxes hold is its usage.
    fake.connect(&app, "w1", (8000, 8192, 10)).await;
    let n = crate::domain::sandboxes::NewSandbox {
        cpu_millis: 500,
        memory_mib: 256,
        ..Default::default()
    };
    crate::domain::sandboxes::create(&app, &as_user(&owner, Role::Owner), n)
        .await
        .unwrap();
    let (_, usage) = get_tenant(&app, &scope).await.unwrap();
    assert_eq!(
        (usage.sandboxes, usage.cpu_millis, usage.memory_mib),
        (1, 500, 256)
    );
}

#[tokio::test]
async fn a_tenant_is_created_whole_or_not_at_all() {
    let (app, _d) = fresh().await;
    tenant_with_owner(&app, "acme").await;
    let bad_quota = Quota {
        max_sandboxes: -1,
        max_cpu_millis: 1000,
        max_memory_mib: 1024,
    };
    let cases = [
        ("Acme", None, "a@b.test", tonic::Code::InvalidArgument),
        ("-acme", None, "a@b.test", tonic::Code::InvalidArgument),
        (
            "beta",
            Some(bad_quota),
            "a@b.test",
            tonic::Code::InvalidArgument,
        ),
        ("acme", None, "a@b.test", tonic::Code::AlreadyExists),
        // The tenant row goes in first; the owner's taken email undoes it.
        ("beta", None, "OWNER@acme.test", tonic::Code::AlreadyExists),
        ("beta", None, "not-an-email", tonic::Code::InvalidArgument),
    ];
    for (name, quota, email, code) in cases {
        let e = create_tenant(&app, name, quota, email, PASS, false)
            .await
            .unwrap_err();
        assert_eq!(e.code(), code, "{name} {email}: {e}");
    }
    let names: Vec<_> = list_tenants(&app, 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["acme"], "no tenant left without its owner");
    assert_eq!(user::Entity::find().count(app.db()).await.unwrap(), 1);
}

#[tokio::test]
async fn a_quota_update_stores_zero_or_more_and_refuses_a_negative_value() {
    let (app, _d) = fresh().await;
    let (_, _, scope) = tenant_with_owner(&app, "acme").await;
    let q = |s, c, m| Quota {
        max_sandboxes: s,
        max_cpu_millis: c,
        max_memory_mib: m,
    };
    let (t, _) = update_quota(&app, &scope, q(3, 0, 4096)).await.unwrap();
    assert_eq!(
        (t.max_sandboxes, t.max_cpu_millis, t.max_memory_mib),
        (3, 0, 4096)
    );
    for bad in [q(-1, 0, 0), q(0, -1, 0), q(0, 0, -1)] {
        let e = update_quota(&app, &scope, bad).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{bad:?}: {e}");
    }
    let (t, _) = get_tenant(&app, &scope).await.unwrap();
    assert_eq!(
        (t.max_sandboxes, t.max_cpu_millis, t.max_memory_mib),
        (3, 0, 4096),
        "a refused update changes nothing"
    );
    let gone = TenantScope::of_stored("ten_gone");
    let e = update_quota(&app, &gone, q(1, 1, 1)).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_users_email_is_normalized_and_unique_across_every_tenant() {
    let (app, _d) = fresh().await;
    let (_, _, acme) = tenant_with_owner(&app, "acme").await;
    let (_, _, beta) = tenant_with_owner(&app, "beta").await;
    let dev = create_user(&app, &acme, " Dev@Acme.Test", PASS, Role::Developer)
        .await
        .unwrap();
    assert_eq!(dev.email, "dev@acme.test");
    assert_eq!(dev.role, "developer");
    assert!(!dev.disabled);
    for scope in [&acme, &beta] {
        let e = create_user(&app, scope, "DEV@acme.test", PASS, Role::Viewer)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::AlreadyExists, "{e}");
    }
    let e = create_user(&app, &acme, "nobody", PASS, Role::Viewer)
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    let e = create_user(&app, &acme, "short@acme.test", "short", Role::Viewer)
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert_eq!(list_users(&app, &acme, 0, 10).await.unwrap().len(), 2);
    assert_eq!(list_users(&app, &beta, 0, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_last_active_owner_can_be_neither_demoted_disabled_nor_deleted() {
    let (app, _d) = fresh().await;
    let (_, owner, scope) = tenant_with_owner(&app, "acme").await;
    for change in [demote(), disable()] {
        let e = update_user(&app, &scope, &owner.id, change)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    }
    let e = delete_user(&app, &scope, &owner.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert_eq!(get_user(&app, &scope, &owner.id).await.unwrap(), owner);
    // With a second owner, the first may step down; then the second is
    // the last.
    let second = create_user(&app, &scope, "two@acme.test", PASS, Role::Owner)
        .await
        .unwrap();
    let first = update_user(&app, &scope, &owner.id, demote())
        .await
        .unwrap();
    assert_eq!(first.role, "developer");
    let e = delete_user(&app, &scope, &second.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    // A developer goes freely.
    delete_user(&app, &scope, &owner.id).await.unwrap();
    let e = get_user(&app, &scope, &owner.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_disabled_owner_does_not_count_as_another_owner() {
    let (app, _d) = fresh().await;
    let (_, owner, scope) = tenant_with_owner(&app, "acme").await;
    let second = create_user(&app, &scope, "two@acme.test", PASS, Role::Owner)
        .await
        .unwrap();
    let second = update_user(&app, &scope, &second.id, disable())
        .await
        .unwrap();
    assert!(second.disabled);
    let e = update_user(&app, &scope, &owner.id, demote())
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    let e = delete_user(&app, &scope, &owner.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    // The disabled one itself may go: it keeps nobody out.
    delete_user(&app, &scope, &second.id).await.unwrap();
}

#[tokio::test]
async fn a_role_change_or_disable_voids_the_users_refresh_tokens_and_a_password_is_checked() {
    let (app, _d) = fresh().await;
    let (t, _, scope) = tenant_with_owner(&app, "acme").await;
    let dev = create_user(&app, &scope, "dev@acme.test", PASS, Role::Developer)
        .await
        .unwrap();
    refresh_token::ActiveModel {
        id: Set("rt_1".into()),
        tenant_id: Set(t.id.clone()),
        user_id: Set(dev.id.clone()),
        secret_hash: Set("x".into()),
        created_at: Set(1),
        expires_at: Set(i64::MAX),
        revoked_at: Set(None),
        password_fp: Set(String::new()),
    }
    .insert(app.db())
    .await
    .unwrap();
    let bad = UserChange {
        role: None,
        disabled: None,
        password: Some("short".into()),
    };
    let e = update_user(&app, &scope, &dev.id, bad).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert_eq!(revoked_at(&app, "rt_1").await, None, "nothing changed");
    let viewer = UserChange {
        role: Some(Role::Viewer),
        disabled: None,
        password: None,
    };
    let dev = update_user(&app, &scope, &dev.id, viewer).await.unwrap();
    assert_eq!(dev.role, "viewer");
    assert!(
        revoked_at(&app, "rt_1").await.is_some(),
        "a changed user starts over"
    );
}

#[tokio::test]
async fn deleting_a_user_deletes_their_api_keys() {
    let (app, _d) = fresh().await;
    let (_, owner, scope) = tenant_with_owner(&app, "acme").await;
    let dev = create_user(&app, &scope, "dev@acme.test", PASS, Role::Developer)
        .await
        .unwrap();
    let (kd, _) = create_api_key(
        &app,
        &as_user(&dev, Role::Developer),
        &scope,
        "ci",
        None,
        None,
    )
    .await
    .unwrap();
    let o = as_user(&owner, Role::Owner);
    assert_eq!(key_ids(&app, &o, &scope).await, [kd.id]);
    delete_user(&app, &scope, &dev.id).await.unwrap();
    assert!(key_ids(&app, &o, &scope).await.is_empty());
}

#[tokio::test]
async fn a_developer_sees_and_deletes_only_their_own_keys_and_an_owner_every_key() {
    let (app, _d) = fresh().await;
    let (_, owner, scope) = tenant_with_owner(&app, "acme").await;
    let dev = create_user(&app, &scope, "dev@acme.test", PASS, Role::Developer)
        .await
        .unwrap();
    let (o, d) = (as_user(&owner, Role::Owner), as_user(&dev, Role::Developer));
    let (kd, secret) = create_api_key(&app, &d, &scope, " ci ", None, None)
        .await
        .unwrap();
    assert_eq!(kd.name, "ci");
    assert_eq!(kd.role, "developer", "the creator's role by default");
    assert_eq!(kd.user_id, dev.id);
    assert_eq!(kd.secret_hash, sha256_hex(&secret), "only a hash is kept");
    assert_eq!(
        crate::auth::apikey::prefix_of(&secret),
        Some(kd.prefix.as_str())
    );
    let (ko, _) = create_api_key(&app, &o, &scope, "ops", None, None)
        .await
        .unwrap();
    assert_eq!(key_ids(&app, &d, &scope).await, [kd.id.as_str()]);
    assert_eq!(
        key_ids(&app, &o, &scope).await,
        sorted(vec![kd.id.clone(), ko.id.clone()])
    );
    let e = delete_api_key(&app, &d, &scope, &ko.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert_eq!(key_ids(&app, &o, &scope).await.len(), 2, "the key stays");
    delete_api_key(&app, &o, &scope, &kd.id).await.unwrap();
    assert_eq!(key_ids(&app, &o, &scope).await, [ko.id.as_str()]);
    let e = delete_api_key(&app, &o, &scope, &kd.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_key_is_refused_above_its_creators_role_to_components_expired_or_unnamed() {
    let (app, _d) = fresh().await;
    let (_, owner, scope) = tenant_with_owner(&app, "acme").await;
    let mut d = as_user(&owner, Role::Developer);
    let e = create_api_key(&app, &d, &scope, "k", Some(Role::Owner), None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");
    let (k, _) = create_api_key(&app, &d, &scope, "k", Some(Role::Viewer), None)
        .await
        .unwrap();
    assert_eq!(k.role, "viewer", "a lower role may be asked for");
    let past = crate::db::now_ms() - 1;
    let e = create_api_key(&app, &d, &scope, "k", None, Some(past))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    for name in ["", "   ", &"n".repeat(129)] {
        let e = create_api_key(&app, &d, &scope, name, None, None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{name:?}: {e}");
    }
    for credential in [Credential::Worker, Credential::Peer] {
        d.credential = credential;
        let e = create_api_key(&app, &d, &scope, "k", None, None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");
    }
    let o = as_user(&owner, Role::Owner);
    assert_eq!(key_ids(&app, &o, &scope).await, [k.id]);
}

#[tokio::test]
async fn bootstrap_makes_the_platform_tenant_once_and_then_only_finds_it() {
    let (app, _d) = fresh().await;
    let creds = bootstrap(&app).await.unwrap().expect("the first start");
    let t = tenant::Entity::find_by_id(creds.tenant_id.clone())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert!(t.platform);
    assert_eq!(t.name, PLATFORM_TENANT);
    assert_eq!(t.max_sandboxes, app.config().platform_quota.max_sandboxes);
    assert_eq!(*app.platform_tenant_id().read().unwrap(), t.id);
    let owner = user::Entity::find_by_id(creds.user_id.clone())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (owner.role.as_str(), owner.tenant_id.as_str()),
        ("owner", t.id.as_str())
    );
    assert_eq!(owner.email, creds.email);
    assert!(crate::auth::password::verify(
        &creds.password,
        &owner.password_hash
    ));
    let key = api_key::Entity::find()
        .filter(api_key::Column::SecretHash.eq(sha256_hex(&creds.api_key)))
        .one(app.db())
        .await
        .unwrap()
        .expect("the printed key is a stored one");
    assert_eq!(
        (key.role.as_str(), key.user_id.as_str()),
        ("owner", owner.id.as_str())
    );
    // A later start: nothing new, and the platform tenant found again.
    *app.platform_tenant_id().write().unwrap() = String::new();
    assert!(bootstrap(&app).await.unwrap().is_none());
    assert_eq!(*app.platform_tenant_id().read().unwrap(), t.id);
    assert_eq!(tenant::Entity::find().count(app.db()).await.unwrap(), 1);
    assert_eq!(user::Entity::find().count(app.db()).await.unwrap(), 1);
    assert_eq!(api_key::Entity::find().count(app.db()).await.unwrap(), 1);
    let again = user::Entity::find_by_id(creds.user_id)
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again, owner, "the owner's password is not reset");
}

#[tokio::test]
async fn a_scope_keeps_a_tenant_from_another_tenants_users_and_keys() {
    let (app, _d) = fresh().await;
    let (_, a_owner, a) = tenant_with_owner(&app, "acme").await;
    let (b_t, b_owner, b) = tenant_with_owner(&app, "beta").await;
    let (pa, pb) = (
        as_user(&a_owner, Role::Owner),
        as_user(&b_owner, Role::Owner),
    );
    // Only one's own tenant, by "-", "" or its id; another is NOT_FOUND
    // whether or not it exists.
    for own in ["-", "", a.id()] {
        assert_eq!(scope(&app, &pa, own).await.unwrap(), a);
    }
    for other in [b.id(), "ten_gone"] {
        let e = scope(&app, &pa, other).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::NotFound, "{other}: {e}");
    }
    let e = get_user(&app, &a, &b_owner.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    let e = update_user(&app, &a, &b_owner.id, disable())
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    let e = delete_user(&app, &a, &b_owner.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert_eq!(get_user(&app, &b, &b_owner.id).await.unwrap(), b_owner);
    let users: Vec<_> = list_users(&app, &a, 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(users, [a_owner.id.as_str()]);
    let (kb, _) = create_api_key(&app, &pb, &b, "b", None, None)
        .await
        .unwrap();
    assert!(key_ids(&app, &pa, &a).await.is_empty());
    let e = delete_api_key(&app, &pa, &a, &kb.id).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert_eq!(key_ids(&app, &pb, &b).await, [kb.id.as_str()]);
    // A key is minted only in the caller's own tenant.
    let e = create_api_key(&app, &pa, &TenantScope::of_stored(&b_t.id), "x", None, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_platform_admin_reaches_another_tenants_keys_but_mints_none_there() {
    let (app, _d) = fresh().await;
    let creds = bootstrap(&app).await.unwrap().unwrap();
    let (_, owner, acme) = tenant_with_owner(&app, "acme").await;
    let admin = Principal {
        tenant_id: creds.tenant_id,
        user_id: creds.user_id,
        email: creds.email,
        role: Role::Owner,
        credential: Credential::AccessToken,
        platform_admin: true,
    };
    let scoped = scope(&app, &admin, acme.id()).await.unwrap();
    assert_eq!(scoped, acme);
    let (k, _) = create_api_key(&app, &as_user(&owner, Role::Owner), &acme, "k", None, None)
        .await
        .unwrap();
    assert_eq!(key_ids(&app, &admin, &scoped).await, [k.id.as_str()]);
    let e = create_api_key(&app, &admin, &scoped, "mine", None, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    delete_api_key(&app, &admin, &scoped, &k.id).await.unwrap();
    assert!(key_ids(&app, &admin, &scoped).await.is_empty());
    let e = scope(&app, &admin, "ten_gone").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

/// `normalize_email` split at the first `@` and only asked the rest for a
/// `.`, so these were stored as emails.
#[tokio::test]
async fn an_email_with_two_ats_or_a_trailing_dot_is_refused() {
    let (app, _d) = fresh().await;
    let (_, _, scope) = tenant_with_owner(&app, "acme").await;
    for bad in [
        "a@@acme.test",
        "a@acme.",
        "a@b@acme.test",
        "a@acme..test",
        "a@.acme.test",
    ] {
        let r = create_user(&app, &scope, bad, PASS, Role::Viewer).await;
        let e = r.err().unwrap_or_else(|| panic!("{bad:?} was accepted"));
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{bad:?}: {e}");
    }
}
