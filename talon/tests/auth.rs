//! Login, refresh, logout, API keys and refused tokens, against a real
//! server process.

mod common;
use common::*;
use talon_proto::v1 as pb;
use tonic::Code;

#[tokio::test]
async fn login_refresh_rotates_and_logout_revokes() {
    let s = Server::start().await;
    let pair = login(&s, &s.boot.email, &s.boot.password).await;
    let mut me = s.as_(&pair.access_token).await;
    let who = me
        .auth
        .who_am_i(pb::WhoAmIRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(who.email, "admin@talon.local");
    assert_eq!(who.role, pb::Role::Owner as i32);
    assert_eq!(who.credential_kind, pb::CredentialKind::AccessToken as i32);
    assert!(who.platform_admin);

    let mut anon = s.as_("").await;
    let bad = anon
        .auth
        .login(pb::LoginRequest {
            email: s.boot.email.clone(),
            password: "wrong password!".into(),
        })
        .await;
    assert_eq!(code(bad), Code::Unauthenticated);

    let next = anon
        .auth
        .refresh(pb::RefreshRequest {
            refresh_token: pair.refresh_token.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .tokens
        .unwrap();
    assert_ne!(next.refresh_token, pair.refresh_token);
    // The old refresh token was rotated away.
    let reuse = anon
        .auth
        .refresh(pb::RefreshRequest {
            refresh_token: pair.refresh_token.clone(),
        })
        .await;
    assert_eq!(code(reuse), Code::Unauthenticated);
    // The new access token works.
    let mut me2 = s.as_(&next.access_token).await;
    me2.auth.who_am_i(pb::WhoAmIRequest {}).await.unwrap();
    // Logout revokes the refresh token.
    me2.auth
        .logout(pb::LogoutRequest {
            refresh_token: next.refresh_token.clone(),
            all_sessions: false,
        })
        .await
        .unwrap();
    let after = anon
        .auth
        .refresh(pb::RefreshRequest {
            refresh_token: next.refresh_token,
        })
        .await;
    assert_eq!(code(after), Code::Unauthenticated);
}

#[tokio::test]
async fn api_keys_authenticate_and_are_stored_hashed() {
    let s = Server::start().await;
    let mut c = s.admin().await;
    let who = c
        .auth
        .who_am_i(pb::WhoAmIRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(who.credential_kind, pb::CredentialKind::ApiKey as i32);
    assert!(who.api_key_id.starts_with("key_"));
    let keys = c
        .tenants
        .list_api_keys(pb::ListApiKeysRequest {
            tenant_id: "-".into(),
            page_size: 0,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let k = keys
        .api_keys
        .iter()
        .find(|k| k.api_key_id == who.api_key_id)
        .unwrap();
    assert!(s.boot.api_key.starts_with(&k.prefix));
    // The database holds the prefix, never the key.
    let db = std::fs::read(s.data_dir().join("talon.db")).unwrap();
    let wal = std::fs::read(s.data_dir().join("talon.db-wal")).unwrap_or_default();
    let secret = s.boot.api_key.as_bytes();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret),
            "API key stored in clear"
        );
    }
    // A revoked key stops working.
    let made = c
        .tenants
        .create_api_key(pb::CreateApiKeyRequest {
            tenant_id: "-".into(),
            name: "tmp".into(),
            role: 0,
            expire_time: None,
        })
        .await
        .unwrap()
        .into_inner();
    let mut tmp = s.as_(&made.secret).await;
    tmp.auth.who_am_i(pb::WhoAmIRequest {}).await.unwrap();
    c.tenants
        .delete_api_key(pb::DeleteApiKeyRequest {
            tenant_id: "-".into(),
            api_key_id: made.api_key.unwrap().api_key_id,
        })
        .await
        .unwrap();
    assert_eq!(
        code(tmp.auth.who_am_i(pb::WhoAmIRequest {}).await),
        Code::Unauthenticated
    );
    // A tampered key is refused.
    let mut tampered = s.boot.api_key.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'a' { 'b' } else { 'a' });
    let mut t = s.as_(&tampered).await;
    assert_eq!(
        code(t.auth.who_am_i(pb::WhoAmIRequest {}).await),
        Code::Unauthenticated
    );
}

#[derive(serde::Serialize)]
struct Claims<'a> {
    sub: &'a str,
    tid: &'a str,
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    iat: u64,
    jti: &'a str,
    typ: &'a str,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn forged_expired_none_and_misaddressed_tokens_are_unauthenticated() {
    use base64::Engine;
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    let s = Server::start().await;
    let key = EncodingKey::from_secret(&s.jwt_key());
    let (uid, tid) = (s.boot.user_id.as_str(), s.boot.tenant_id.as_str());
    let good = Claims {
        sub: uid,
        tid,
        role: "owner",
        iss: Some("talon"),
        aud: Some("talon-api"),
        exp: Some(now() + 600),
        iat: now(),
        jti: "j",
        typ: "access",
    };
    let sign = |c: &Claims, k: &EncodingKey| encode(&Header::new(Algorithm::HS256), c, k).unwrap();

    // The control: a correctly made token is accepted.
    let mut ok = s.as_(&sign(&good, &key)).await;
    ok.auth.who_am_i(pb::WhoAmIRequest {}).await.unwrap();

    let forged = sign(
        &good,
        &EncodingKey::from_secret(b"not the server's key, 32 bytes!!"),
    );
    let expired = sign(
        &Claims {
            exp: Some(now() - 120),
            ..good_clone(&good)
        },
        &key,
    );
    let wrong_aud = sign(
        &Claims {
            aud: Some("preview"),
            ..good_clone(&good)
        },
        &key,
    );
    let wrong_iss = sign(
        &Claims {
            iss: Some("preview"),
            ..good_clone(&good)
        },
        &key,
    );
    let no_exp = sign(
        &Claims {
            exp: None,
            ..good_clone(&good)
        },
        &key,
    );
    let not_access = sign(
        &Claims {
            typ: "refresh",
            ..good_clone(&good)
        },
        &key,
    );
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = b64.encode(serde_json::to_vec(&good).unwrap());
    let none = format!(
        "{}.{payload}.",
        b64.encode(br#"{"alg":"none","typ":"JWT"}"#)
    );
    let hs512 = encode(&Header::new(Algorithm::HS512), &good, &key).unwrap();
    for (what, tok) in [
        ("forged", forged),
        ("expired", expired),
        ("wrong audience", wrong_aud),
        ("wrong issuer", wrong_iss),
        ("no exp", no_exp),
        ("not an access token", not_access),
        ("alg=none", none),
        ("other algorithm", hs512),
        ("garbage", "not-a-token".to_string()),
    ] {
        let mut c = s.as_(&tok).await;
        assert_eq!(
            code(c.auth.who_am_i(pb::WhoAmIRequest {}).await),
            Code::Unauthenticated,
            "{what}"
        );
    }
    let mut none_at_all = s.as_("").await;
    assert_eq!(
        code(none_at_all.auth.who_am_i(pb::WhoAmIRequest {}).await),
        Code::Unauthenticated
    );
}

fn good_clone<'a>(c: &Claims<'a>) -> Claims<'a> {
    Claims {
        sub: c.sub,
        tid: c.tid,
        role: c.role,
        iss: c.iss,
        aud: c.aud,
        exp: c.exp,
        iat: c.iat,
        jti: c.jti,
        typ: c.typ,
    }
}

/// Authenticated principals are cached for a moment (auth::cache); a change
/// to a user must still apply to the very next call: a disabled user's
/// token and key stop, a demoted user loses the role, a deleted user's key
/// stops. Each credential is used just before the change, so it is cached.
#[tokio::test]
async fn user_changes_apply_at_once_despite_the_principal_cache() {
    let s = Server::start().await;
    let t = tenant(&s, "cachecheck").await;
    let mut owner = s.as_(&t.owner).await;
    let users = owner
        .tenants
        .list_users(pb::ListUsersRequest {
            tenant_id: "-".into(),
            page_size: 0,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .users;
    let dev = users
        .iter()
        .find(|u| u.role == pb::Role::Developer as i32)
        .unwrap()
        .clone();
    let dev_token = login(&s, &dev.email, PASSWORD).await.access_token;
    let mut by_token = s.as_(&dev_token).await;
    let mut by_key = s.as_(&t.developer).await;
    let update = |role: pb::Role, disabled: Option<bool>| pb::UpdateUserRequest {
        tenant_id: "-".into(),
        user_id: dev.user_id.clone(),
        role: role as i32,
        disabled,
        password: String::new(),
    };
    let who = |c: &mut Clients| {
        let mut a = c.auth.clone();
        async move {
            a.who_am_i(pb::WhoAmIRequest {})
                .await
                .map(|r| r.into_inner())
        }
    };

    // Demoted: the very next call sees the viewer role.
    assert_eq!(
        who(&mut by_key).await.unwrap().role,
        pb::Role::Developer as i32
    );
    assert_eq!(
        who(&mut by_token).await.unwrap().role,
        pb::Role::Developer as i32
    );
    owner
        .tenants
        .update_user(update(pb::Role::Viewer, None))
        .await
        .unwrap();
    assert_eq!(
        who(&mut by_key).await.unwrap().role,
        pb::Role::Viewer as i32
    );
    assert_eq!(
        who(&mut by_token).await.unwrap().role,
        pb::Role::Viewer as i32
    );

    // Disabled: both stop at once.
    owner
        .tenants
        .update_user(update(pb::Role::Unspecified, Some(true)))
        .await
        .unwrap();
    assert_eq!(code(who(&mut by_key).await), Code::Unauthenticated);
    assert_eq!(code(who(&mut by_token).await), Code::Unauthenticated);

    // Deleted: the key stays refused (and was not cached back meanwhile).
    owner
        .tenants
        .update_user(update(pb::Role::Unspecified, Some(false)))
        .await
        .unwrap();
    who(&mut by_key).await.unwrap();
    owner
        .tenants
        .delete_user(pb::DeleteUserRequest {
            tenant_id: "-".into(),
            user_id: dev.user_id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(code(who(&mut by_key).await), Code::Unauthenticated);
    assert_eq!(code(who(&mut by_token).await), Code::Unauthenticated);
}

/// Sign-in throttling: the probe tried 20 wrong passwords in half a
/// second, then the right one worked. Now five wrong ones lock the email
/// (the right password too is refused, RESOURCE_EXHAUSTED), an unknown
/// email locks the same way (no oracle), the browser-session sign-in is
/// held to the same count, other emails are untouched, and once the
/// lockout has passed the right password works.
#[tokio::test]
async fn failed_sign_ins_lock_the_email_for_a_while() {
    let s = Server::start_with(None, &["--login-lockout-secs", "2"]).await;
    let t = tenant(&s, "throttle").await;
    let mut anon = s.as_("").await;
    let try_login = |email: &str, password: &str| pb::LoginRequest {
        email: email.into(),
        password: password.into(),
    };
    for _ in 0..5 {
        let r = anon
            .auth
            .login(try_login(&t.owner_email, "wrong password!"))
            .await;
        assert_eq!(code(r), Code::Unauthenticated);
    }
    let locked = anon
        .auth
        .login(try_login(&t.owner_email, PASSWORD))
        .await
        .unwrap_err();
    assert_eq!(locked.code(), Code::ResourceExhausted, "{locked:?}");
    assert!(
        locked.message().contains("try again in"),
        "{}",
        locked.message()
    );
    // The same email, typed differently, and through a browser session.
    let r = anon
        .auth
        .create_browser_session(pb::CreateBrowserSessionRequest {
            email: t.owner_email.to_uppercase(),
            password: PASSWORD.into(),
        })
        .await;
    assert_eq!(code(r), Code::ResourceExhausted);
    // An email no one has locks the same way.
    for _ in 0..5 {
        let r = anon
            .auth
            .login(try_login("nobody@nowhere.test", "wrong password!"))
            .await;
        assert_eq!(code(r), Code::Unauthenticated);
    }
    let r = anon.auth.login(try_login("nobody@nowhere.test", "x")).await;
    assert_eq!(code(r), Code::ResourceExhausted);
    // Others sign in.
    login(&s, &s.boot.email, &s.boot.password).await;
    // After the lockout, the right password works (and clears the count).
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    login(&s, &t.owner_email, PASSWORD).await;
    let r = anon
        .auth
        .login(try_login(&t.owner_email, "wrong password!"))
        .await;
    assert_eq!(code(r), Code::Unauthenticated, "the count started again");
}

/// Changing one's own password (ChangePassword) ends every session made
/// with the old one at once, including the access token that made the
/// change: its refresh token is revoked and the token itself carries the
/// old password's fingerprint. An API key has no password to change.
#[tokio::test]
async fn a_password_change_ends_the_sessions_of_the_old_password() {
    let s = Server::start().await;
    let t = tenant(&s, "pwchange").await;
    let mut owner = s.as_(&t.owner).await;
    let dev = owner
        .tenants
        .list_users(pb::ListUsersRequest {
            tenant_id: "-".into(),
            page_size: 0,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .users
        .into_iter()
        .find(|u| u.role == pb::Role::Developer as i32)
        .unwrap();
    let first = login(&s, &dev.email, PASSWORD).await;
    let second = login(&s, &dev.email, PASSWORD).await;
    let mut me = s.as_(&first.access_token).await;
    let change = |current: &str| pb::ChangePasswordRequest {
        current_password: current.into(),
        new_password: "a completely new password".into(),
    };
    // The wrong current password, and an API key: refused.
    assert_eq!(
        code(me.auth.change_password(change("not the password")).await),
        Code::PermissionDenied
    );
    let mut by_key = s.as_(&t.developer).await;
    assert_eq!(
        code(by_key.auth.change_password(change(PASSWORD)).await),
        Code::FailedPrecondition
    );
    me.auth.change_password(change(PASSWORD)).await.unwrap();
    // Every token of the old password is refused: both access tokens and
    // both refresh tokens.
    let who = |c: &mut Clients| {
        let mut a = c.auth.clone();
        async move { a.who_am_i(pb::WhoAmIRequest {}).await }
    };
    assert_eq!(code(who(&mut me).await), Code::Unauthenticated);
    let mut other = s.as_(&second.access_token).await;
    assert_eq!(code(who(&mut other).await), Code::Unauthenticated);
    let mut anon = s.as_("").await;
    for pair in [&first, &second] {
        let r = anon
            .auth
            .refresh(pb::RefreshRequest {
                refresh_token: pair.refresh_token.clone(),
            })
            .await;
        assert_eq!(code(r), Code::Unauthenticated);
    }
    // The new password signs in; the old does not; the key still works.
    let fresh = login(&s, &dev.email, "a completely new password").await;
    who(&mut s.as_(&fresh.access_token).await).await.unwrap();
    let old = anon
        .auth
        .login(pb::LoginRequest {
            email: dev.email.clone(),
            password: PASSWORD.into(),
        })
        .await;
    assert_eq!(code(old), Code::Unauthenticated);
    who(&mut by_key).await.unwrap();
}
