//! What a platform admin and a signed-in user manage of the platform
//! itself: forgetting a worker (never one that is connected or still holds
//! a sandbox or a snapshot, whose files would be stranded), the servers
//! and the counts by state (servers.rs), and changing one's own password
//! (sessions.rs), which must neither skip the sign-in throttle nor accept
//! a credential that has no password.

use super::servers;
use super::sessions;
use super::test_support::{app_with, row};
use super::workers;
use crate::auth::{Credential, Principal, Role};
use crate::db::entity::{refresh_token, snapshot, user};
use crate::domain::state::SandboxState;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
use tonic::Code;

const PASS: &str = "correct horse battery";

/// Lets a worker's lease lapse, as when it stopped renewing.
async fn lapse(app: &crate::app::App, id: &str) {
    let w = crate::db::entity::worker::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    let mut am: crate::db::entity::worker::ActiveModel = w.into();
    am.lease_expires_at = Set(0);
    am.update(app.db()).await.unwrap();
}

#[tokio::test]
async fn a_worker_is_forgotten_only_once_it_is_gone_and_holds_nothing() {
    let (app, _fake, _d) = app_with(
        "ten_a",
        &[("w1", (4000, 4096, 10)), ("w2", (4000, 4096, 10))],
    )
    .await;
    // Connected: refused, whatever it holds.
    let e = workers::forget(&app, "w2").await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.to_string().contains("connected"), "{e}");
    // Its session ends (the test support's sessions are numbered from 1),
    // but its lease holds: it may still be running, out of reach.
    app.hub().detach("w2", 2);
    let e = workers::forget(&app, "w2").await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.to_string().contains("lease holds"), "{e}");
    lapse(&app, "w2").await;
    // A stopped sandbox keeps its disk there: refused, naming the count.
    row("sbx_1", "ten_a", "w2", "stopped")
        .into_active_model()
        .insert(app.db())
        .await
        .unwrap();
    let e = workers::forget(&app, "w2").await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.to_string().contains("1 sandbox"), "{e}");
    // Deleted, it holds nothing; a snapshot it keeps still holds it.
    let mut s: crate::db::entity::sandbox::ActiveModel =
        crate::db::entity::sandbox::Entity::find_by_id("sbx_1")
            .one(app.db())
            .await
            .unwrap()
            .unwrap()
            .into();
    s.state = Set(SandboxState::Deleted.as_str().into());
    s.update(app.db()).await.unwrap();
    snapshot::Model {
        id: "snap_1".into(),
        tenant_id: "ten_a".into(),
        name: "s".into(),
        sandbox_id: "sbx_1".into(),
        image: String::new(),
        worker_id: "w2".into(),
        worker_image: String::new(),
        size_bytes: 1,
        frozen_ms: 0,
        created_at: 0,
        pending: false,
    }
    .into_active_model()
    .insert(app.db())
    .await
    .unwrap();
    let e = workers::forget(&app, "w2").await.unwrap_err();
    assert!(e.to_string().contains("1 snapshot"), "{e}");
    snapshot::Entity::delete_by_id("snap_1")
        .exec(app.db())
        .await
        .unwrap();
    workers::forget(&app, "w2").await.unwrap();
    let left: Vec<String> = workers::list(&app)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.worker.id)
        .collect();
    assert_eq!(left, ["w1"]);
    // Gone: not found, and the other worker untouched.
    let e = workers::forget(&app, "w2").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}

#[tokio::test]
async fn the_servers_list_has_this_one_and_the_counts_leave_out_the_deleted() {
    let (app, _fake, _d) = app_with("ten_a", &[("w1", (4000, 4096, 10))]).await;
    let list = servers::list(&app).await.unwrap();
    assert_eq!(list.len(), 1, "SQLite: this server alone");
    assert!(list[0].me && list[0].live);
    assert_eq!(list[0].id, app.config().server_id);
    for (id, state) in [
        ("sbx_1", "running"),
        ("sbx_2", "running"),
        ("sbx_3", "stopped"),
        ("sbx_4", "deleted"),
    ] {
        row(id, "ten_a", "w1", state)
            .into_active_model()
            .insert(app.db())
            .await
            .unwrap();
    }
    let mut counts = servers::sandboxes_by_state(&app).await.unwrap();
    counts.sort_by_key(|(s, _)| s.as_str());
    assert_eq!(
        counts,
        [(SandboxState::Running, 2), (SandboxState::Stopped, 1)]
    );
    // An unknown state is an error, not a count left out.
    row("sbx_5", "ten_a", "w1", "exploded")
        .into_active_model()
        .insert(app.db())
        .await
        .unwrap();
    assert!(servers::sandboxes_by_state(&app).await.is_err());
}

/// A tenant's owner, stored with PASS, as its access token makes it.
async fn signed_in(app: &crate::app::App) -> Principal {
    let (_t, u) = super::tenants::create_tenant(app, "acme", None, "owner@acme.test", PASS, false)
        .await
        .unwrap();
    Principal {
        tenant_id: u.tenant_id,
        user_id: u.id,
        email: u.email,
        role: Role::Owner,
        credential: Credential::AccessToken,
        platform_admin: false,
    }
}

#[tokio::test]
async fn a_user_changes_their_password_with_the_current_one_and_their_sessions_end() {
    let (app, _fake, _d) = app_with("ten_a", &[]).await;
    let p = signed_in(&app).await;
    let session = sessions::login(&app, &p.email, PASS).await.unwrap();
    // The wrong current password: refused, and nothing changed.
    let e = sessions::change_password(&app, &p, "not the password", "a brand new password")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    // Too short a new one: refused before the current one is checked.
    let e = sessions::change_password(&app, &p, PASS, "short")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    sessions::login(&app, &p.email, PASS).await.unwrap();
    // Right: the new password signs in, the old does not, and the
    // sessions made with the old one are over.
    sessions::change_password(&app, &p, PASS, "a brand new password")
        .await
        .unwrap();
    assert!(sessions::login(&app, &p.email, PASS).await.is_err());
    sessions::login(&app, &p.email, "a brand new password")
        .await
        .unwrap();
    let e = sessions::refresh(&app, &session.refresh_token)
        .await
        .err()
        .expect("refreshed");
    assert_eq!(e.code(), Code::Unauthenticated);
    let (id, _) = session.refresh_token.split_once('.').unwrap();
    let rt = refresh_token::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert!(rt.revoked_at.is_some());
}

#[tokio::test]
async fn a_password_change_is_throttled_like_a_sign_in_and_needs_a_signed_in_user() {
    let (app, _fake, _d) = app_with("ten_a", &[]).await;
    let p = signed_in(&app).await;
    // An API key of the same user has no password to give.
    let key = Principal {
        credential: Credential::ApiKey {
            key_id: "key_1".into(),
        },
        ..p.clone()
    };
    let e = sessions::change_password(&app, &key, PASS, "a brand new password")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    // Guessing the current password runs into the sign-in throttle: even
    // the right one is refused once it is on.
    let mut throttled = false;
    for _ in 0..50 {
        let e = sessions::change_password(&app, &p, "a wrong guess!", "a brand new password")
            .await
            .unwrap_err();
        if e.code() == Code::ResourceExhausted {
            throttled = true;
            break;
        }
    }
    assert!(throttled, "fifty wrong guesses were never throttled");
    let e = sessions::change_password(&app, &p, PASS, "a brand new password")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    let u = user::Entity::find_by_id(p.user_id.clone())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert!(
        crate::auth::password::verify(PASS, &u.password_hash),
        "the password changed"
    );
}

#[tokio::test]
async fn a_workers_sandboxes_are_listed_across_tenants_without_the_deleted() {
    let (app, _fake, _d) = app_with(
        "ten_a",
        &[("w1", (4000, 4096, 10)), ("w2", (4000, 4096, 10))],
    )
    .await;
    super::test_support::tenant(app.db(), "ten_b", false, 10).await;
    for (i, (id, tenant, worker, state)) in [
        ("sbx_a1", "ten_a", "w1", "running"),
        ("sbx_b1", "ten_b", "w1", "stopped"),
        ("sbx_a2", "ten_a", "w1", "deleted"),
        ("sbx_b2", "ten_b", "w2", "running"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = row(id, tenant, worker, state);
        r.created_at = i as i64;
        r.into_active_model().insert(app.db()).await.unwrap();
    }
    let ids = |rows: Vec<crate::db::entity::sandbox::Model>| {
        rows.into_iter().map(|r| r.id).collect::<Vec<_>>()
    };
    use crate::domain::sandboxes::on_worker;
    // Newest first, both tenants, the deleted and the other worker's left out.
    assert_eq!(
        ids(on_worker(&app, "w1", None, 50).await.unwrap()),
        ["sbx_b1", "sbx_a1"]
    );
    // limit + 1 rows, for the page token.
    assert_eq!(
        ids(on_worker(&app, "w1", None, 0).await.unwrap()),
        ["sbx_b1"]
    );
    // The next page starts after the last row seen, whatever was made
    // meanwhile: a newer sandbox on w1 shifts nothing (by offset, it
    // would have shown sbx_b1 again).
    let mut r = row("sbx_new", "ten_a", "w1", "running");
    r.created_at = 10;
    r.into_active_model().insert(app.db()).await.unwrap();
    assert_eq!(
        ids(on_worker(&app, "w1", Some((1, "sbx_b1".into())), 1)
            .await
            .unwrap()),
        ["sbx_a1"]
    );
    // Equal times fall back on the id.
    let mut r = row("sbx_a0", "ten_a", "w1", "running");
    r.created_at = 0;
    r.into_active_model().insert(app.db()).await.unwrap();
    assert_eq!(
        ids(on_worker(&app, "w1", Some((0, "sbx_a1".into())), 5)
            .await
            .unwrap()),
        ["sbx_a0"]
    );
    // The page token carries both, and a bad one is refused.
    let t = crate::domain::encode_keyset(1, "sbx_b1");
    assert_eq!(
        crate::domain::decode_keyset(&t).unwrap(),
        Some((1, "sbx_b1".to_string()))
    );
    assert_eq!(crate::domain::decode_keyset("").unwrap(), None);
    for bad in ["o50", "k1", "k.sbx", "kx.sbx", "k1."] {
        assert_eq!(
            crate::domain::decode_keyset(bad).unwrap_err().code(),
            Code::InvalidArgument,
            "{bad}"
        );
    }
    let e = on_worker(&app, "w9", None, 50).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}

#[tokio::test]
async fn a_refresh_token_issued_under_an_old_password_is_refused_even_if_the_revoke_missed_it() {
    let (app, _fake, _d) = app_with("ten_a", &[]).await;
    let p = signed_in(&app).await;
    // A sign-in that raced a change: its row was written after the
    // change's revoke read the table, so nothing revoked it; only the
    // password it records tells.
    let session = sessions::login(&app, &p.email, PASS).await.unwrap();
    let u = user::Entity::find_by_id(p.user_id.clone())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    let mut am: user::ActiveModel = u.into();
    am.password_hash = Set(crate::auth::password::hash("a brand new password").unwrap());
    am.update(app.db()).await.unwrap();
    let e = sessions::refresh(&app, &session.refresh_token)
        .await
        .err()
        .expect("refreshed under the new password");
    assert_eq!(e.code(), Code::Unauthenticated);
    // A token of the current password refreshes as ever.
    let fresh = sessions::login(&app, &p.email, "a brand new password")
        .await
        .unwrap();
    sessions::refresh(&app, &fresh.refresh_token).await.unwrap();
}

#[tokio::test]
async fn an_owner_setting_a_users_password_ends_that_users_refresh_tokens() {
    let (app, _fake, _d) = app_with("ten_a", &[]).await;
    let p = signed_in(&app).await;
    let session = sessions::login(&app, &p.email, PASS).await.unwrap();
    let scope = super::tenants::TenantScope::of_stored(&p.tenant_id);
    super::tenants::update_user(
        &app,
        &scope,
        &p.user_id,
        super::tenants::UserChange {
            role: None,
            disabled: None,
            password: Some("set by the owner!".into()),
        },
    )
    .await
    .unwrap();
    let e = sessions::refresh(&app, &session.refresh_token)
        .await
        .err()
        .expect("refreshed after a reset");
    assert_eq!(e.code(), Code::Unauthenticated);
    let (id, _) = session.refresh_token.split_once('.').unwrap();
    let rt = refresh_token::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap();
    assert!(rt.revoked_at.is_some(), "the reset did not revoke it");
}
