//! The sandbox state machine, placement, quotas, tenancy and fencing,
//! against a real server, with a test worker on the real worker session.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

#[tokio::test]
async fn lifecycle_through_a_worker() {
    let s = Server::start().await;
    let t = tenant(&s, "life").await;
    let mut dev = s.as_(&t.developer).await;
    // No worker yet: nothing can be placed, and nothing is created.
    assert_eq!(
        code(dev.sandboxes.create_sandbox(create_req(false, 1)).await),
        Code::Unavailable
    );
    let _w = TestWorker::connect(&s, "wrk_a", Behaviour::Obey).await;
    let sb = dev
        .sandboxes
        .create_sandbox(create_req(true, 10))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(sb.state, pb::SandboxState::Running as i32);
    assert_eq!((sb.generation, sb.worker_id.as_str()), (1, "wrk_a"));
    assert_eq!(sb.tenant_id, t.tenant_id);
    let id = sb.sandbox_id.clone();
    dev.sandboxes
        .pause_sandbox(pb::PauseSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Paused as i32
    );
    // Pausing twice is a precondition failure, not a silent success.
    assert_eq!(
        code(
            dev.sandboxes
                .pause_sandbox(pb::PauseSandboxRequest {
                    sandbox_id: id.clone()
                })
                .await
        ),
        Code::FailedPrecondition
    );
    dev.sandboxes
        .resume_sandbox(pb::ResumeSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Running as i32
    );
    dev.sandboxes
        .stop_sandbox(pb::StopSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Stopped as i32
    );
    dev.sandboxes
        .start_sandbox(pb::StartSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Running as i32
    );
    let set = dev
        .sandboxes
        .set_sandbox_timeout(pb::SetSandboxTimeoutRequest {
            sandbox_id: id.clone(),
            timeout: Some(prost_types::Duration {
                seconds: 3600,
                nanos: 0,
            }),
            timeout_action: pb::TimeoutAction::Delete as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(set.timeout_action, pb::TimeoutAction::Delete as i32);
    let pol = pb::NetworkPolicy {
        mode: pb::EgressMode::Allowlist as i32,
        allow_cidrs: vec!["1.1.1.0/24".into()],
        allow_domains: vec!["pypi.org".into()],
    };
    let upd = dev
        .sandboxes
        .update_network_policy(pb::UpdateNetworkPolicyRequest {
            sandbox_id: id.clone(),
            network_policy: Some(pol.clone()),
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(upd.network_policy.unwrap(), pol);
    let bad = pb::NetworkPolicy {
        mode: pb::EgressMode::Allowlist as i32,
        allow_cidrs: vec!["300.1.1.0/24".into()],
        allow_domains: vec![],
    };
    assert_eq!(
        code(
            dev.sandboxes
                .update_network_policy(pb::UpdateNetworkPolicyRequest {
                    sandbox_id: id.clone(),
                    network_policy: Some(bad)
                })
                .await
        ),
        Code::InvalidArgument
    );
    // Listing with a label selector.
    let list = dev
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest {
            label_selector: "team=a".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.sandboxes.len(), 1);
    let none = dev
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest {
            label_selector: "team=b".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(none.sandboxes.is_empty());
    // Delete from running; deleting again is a no-op.
    let d = dev
        .sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(d.state, pb::SandboxState::Deleted as i32);
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    let gone = dev
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        gone.sandboxes.is_empty(),
        "deleted sandboxes are not listed by default"
    );
}

#[tokio::test]
async fn wait_timeout_returns_deadline_exceeded_with_the_state() {
    let s = Server::start().await;
    let t = tenant(&s, "slow").await;
    let _w = TestWorker::connect(&s, "wrk_silent", Behaviour::Silent).await;
    let mut dev = s.as_(&t.developer).await;
    let started = std::time::Instant::now();
    let err = dev
        .sandboxes
        .create_sandbox(create_req(true, 1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded);
    assert!(err.message().contains("starting"), "{}", err.message());
    assert!(started.elapsed() >= Duration::from_millis(900));
    let id = err
        .metadata()
        .get("talon-sandbox-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Starting as i32
    );
    assert!(
        !err.details().is_empty(),
        "DEADLINE_EXCEEDED carries the sandbox as a detail"
    );
    // Above the maximum wait is refused up front.
    assert_eq!(
        code(dev.sandboxes.create_sandbox(create_req(true, 301)).await),
        Code::InvalidArgument
    );
}

#[tokio::test]
async fn server_owned_fields_in_the_body_are_ignored() {
    let s = Server::start().await;
    let t = tenant(&s, "owned").await;
    let other = tenant(&s, "other").await;
    let _w = TestWorker::connect(&s, "wrk_o", Behaviour::Silent).await;
    let mut dev = s.as_(&t.developer).await;
    let mut req = create_req(false, 1);
    let sb = req.sandbox.as_mut().unwrap();
    sb.sandbox_id = "sbx_chosenbytheclient0000000".into();
    sb.tenant_id = other.tenant_id.clone();
    sb.owner_id = "usr_someoneelse".into();
    sb.state = pb::SandboxState::Running as i32;
    sb.generation = 99;
    sb.worker_id = "wrk_elsewhere".into();
    sb.env = [("SECRET".to_string(), "hunter2".to_string())].into();
    let got = dev
        .sandboxes
        .create_sandbox(req)
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_ne!(got.sandbox_id, "sbx_chosenbytheclient0000000");
    assert_eq!(got.tenant_id, t.tenant_id);
    assert!(got.owner_id.starts_with("key_"));
    assert_eq!(got.state, pb::SandboxState::Starting as i32);
    assert_eq!(got.generation, 1);
    assert_eq!(got.worker_id, "wrk_o");
    assert!(got.env.is_empty(), "env is input-only");
}

#[tokio::test]
async fn other_tenants_objects_are_not_found() {
    let s = Server::start().await;
    let a = tenant(&s, "alpha").await;
    let b = tenant(&s, "beta").await;
    let _w = TestWorker::connect(&s, "wrk_x", Behaviour::Obey).await;
    let mut ca = s.as_(&a.owner).await;
    let mut cb = s.as_(&b.owner).await;
    let sb = ca
        .sandboxes
        .create_sandbox(create_req(true, 10))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let id = sb.sandbox_id.clone();
    assert_eq!(
        code(
            cb.sandboxes
                .get_sandbox(pb::GetSandboxRequest {
                    sandbox_id: id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.sandboxes
                .delete_sandbox(pb::DeleteSandboxRequest {
                    sandbox_id: id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.sandboxes
                .pause_sandbox(pb::PauseSandboxRequest {
                    sandbox_id: id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.sandboxes
                .watch_sandbox_events(pb::WatchSandboxEventsRequest {
                    sandbox_id: id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    // Same answer as a sandbox that does not exist at all.
    assert_eq!(
        code(
            cb.sandboxes
                .get_sandbox(pb::GetSandboxRequest {
                    sandbox_id: "sbx_doesnotexist0000000000000".into()
                })
                .await
        ),
        Code::NotFound
    );
    assert!(
        cb.sandboxes
            .list_sandboxes(pb::ListSandboxesRequest::default())
            .await
            .unwrap()
            .into_inner()
            .sandboxes
            .is_empty()
    );
    // Users, keys and the tenant itself.
    let users = ca
        .tenants
        .list_users(pb::ListUsersRequest {
            tenant_id: "-".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .users;
    let uid = users[0].user_id.clone();
    assert_eq!(
        code(
            cb.tenants
                .get_user(pb::GetUserRequest {
                    tenant_id: "-".into(),
                    user_id: uid.clone()
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.tenants
                .get_user(pb::GetUserRequest {
                    tenant_id: a.tenant_id.clone(),
                    user_id: uid.clone()
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.tenants
                .delete_user(pb::DeleteUserRequest {
                    tenant_id: "-".into(),
                    user_id: uid
                })
                .await
        ),
        Code::NotFound
    );
    assert_eq!(
        code(
            cb.tenants
                .get_tenant(pb::GetTenantRequest {
                    tenant_id: a.tenant_id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    let keys = ca
        .tenants
        .list_api_keys(pb::ListApiKeysRequest {
            tenant_id: "-".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .api_keys;
    assert_eq!(
        code(
            cb.tenants
                .delete_api_key(pb::DeleteApiKeyRequest {
                    tenant_id: "-".into(),
                    api_key_id: keys[0].api_key_id.clone()
                })
                .await
        ),
        Code::NotFound
    );
    // A's sandbox is untouched.
    assert_eq!(
        get(&mut ca, &id).await.state,
        pb::SandboxState::Running as i32
    );
}

#[tokio::test]
async fn stale_generation_reports_are_refused() {
    let s = Server::start().await;
    let t = tenant(&s, "fence").await;
    let w1 = TestWorker::connect(&s, "wrk_1", Behaviour::Obey).await;
    let mut dev = s.as_(&t.developer).await;
    let sb = dev
        .sandboxes
        .create_sandbox(create_req(true, 10))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let id = sb.sandbox_id.clone();
    let _w2 = TestWorker::connect(&s, "wrk_2", Behaviour::Obey).await;
    let mut admin = s.admin().await;
    let r = admin
        .admin
        .reassign_sandbox(pb::ReassignSandboxRequest {
            sandbox_id: id.clone(),
            worker_id: "wrk_2".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((r.worker_id.as_str(), r.generation), ("wrk_2", 2));
    let now = until_state(&mut dev, &id, pb::SandboxState::Running).await;
    assert_eq!(now.generation, 2);
    // The old worker, at generation 1, reports the sandbox failed: refused.
    w1.report(&id, 1, pb::SandboxState::Failed).await;
    // A report at the right generation but from the wrong worker: refused.
    w1.report(&id, 2, pb::SandboxState::Failed).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = get(&mut dev, &id).await;
    assert_eq!(
        (after.state, after.generation, after.worker_id.as_str()),
        (pb::SandboxState::Running as i32, 2, "wrk_2")
    );
    let metrics = reqwest_get(&format!("{}/metrics", s.ops)).await;
    assert!(
        metrics.contains("talon_worker_stale_events_total 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn last_owner_is_protected() {
    let s = Server::start().await;
    let t = tenant(&s, "owners").await;
    let mut owner = s.as_(&t.owner).await;
    let me = owner
        .auth
        .who_am_i(pb::WhoAmIRequest {})
        .await
        .unwrap()
        .into_inner();
    let demote = pb::UpdateUserRequest {
        tenant_id: "-".into(),
        user_id: me.user_id.clone(),
        role: pb::Role::Developer as i32,
        disabled: None,
        password: String::new(),
    };
    assert_eq!(
        code(owner.tenants.update_user(demote.clone()).await),
        Code::FailedPrecondition
    );
    let disable = pb::UpdateUserRequest {
        tenant_id: "-".into(),
        user_id: me.user_id.clone(),
        role: 0,
        disabled: Some(true),
        password: String::new(),
    };
    assert_eq!(
        code(owner.tenants.update_user(disable).await),
        Code::FailedPrecondition
    );
    assert_eq!(
        code(
            owner
                .tenants
                .delete_user(pb::DeleteUserRequest {
                    tenant_id: "-".into(),
                    user_id: me.user_id.clone()
                })
                .await
        ),
        Code::FailedPrecondition
    );
    // With a second owner, the first may step down.
    let users = owner
        .tenants
        .list_users(pb::ListUsersRequest {
            tenant_id: "-".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .users;
    let dev = users
        .iter()
        .find(|u| u.role == pb::Role::Developer as i32)
        .unwrap();
    owner
        .tenants
        .update_user(pb::UpdateUserRequest {
            tenant_id: "-".into(),
            user_id: dev.user_id.clone(),
            role: pb::Role::Owner as i32,
            disabled: None,
            password: String::new(),
        })
        .await
        .unwrap();
    owner.tenants.update_user(demote).await.unwrap();
    // Now a developer, the former owner may no longer manage users.
    assert_eq!(
        code(
            owner
                .tenants
                .create_user(pb::CreateUserRequest {
                    tenant_id: "-".into(),
                    email: "x@owners.test".into(),
                    password: PASSWORD.into(),
                    role: 0
                })
                .await
        ),
        Code::PermissionDenied
    );
}

async fn reqwest_get(url: &str) -> String {
    let url: http::Uri = url.parse().unwrap();
    let addr = format!("{}:{}", url.host().unwrap(), url.port_u16().unwrap());
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let req = format!("GET {} HTTP/1.0\r\nHost: x\r\n\r\n", url.path());
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

/// Metadata is kept and filtered on; an idempotency key makes a retried
/// create (even several at once) return the first one's sandbox, within
/// one tenant only.
#[tokio::test]
async fn metadata_and_idempotent_creates() {
    let s = Server::start().await;
    let t = tenant(&s, "meta").await;
    let other = tenant(&s, "meta2").await;
    let _w = TestWorker::connect(&s, "wrk_m", Behaviour::Obey).await;
    let dev = s.as_(&t.developer).await;
    let with = |meta: &[(&str, &str)], key: &str| {
        let mut r = create_req(false, 1);
        r.sandbox.as_mut().unwrap().metadata = meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        r.idempotency_key = key.into();
        r
    };
    let create = |c: &Clients, r: pb::CreateSandboxRequest| {
        let mut c = c.sandboxes.clone();
        async move {
            c.create_sandbox(r)
                .await
                .map(|r| r.into_inner().sandbox.unwrap())
        }
    };
    let a = create(&dev, with(&[("user", "ann b=c, d"), ("run", "1")], ""))
        .await
        .unwrap();
    assert_eq!(a.metadata["user"], "ann b=c, d", "values hold any text");
    create(&dev, with(&[("user", "bob")], "")).await.unwrap();
    let list = |c: &Clients, meta: &[(&str, &str)]| {
        let mut c = c.sandboxes.clone();
        let metadata = meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        async move {
            c.list_sandboxes(pb::ListSandboxesRequest {
                metadata,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner().sandboxes)
        }
    };
    let got = list(&dev, &[("user", "ann b=c, d")]).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].sandbox_id, a.sandbox_id);
    assert_eq!(
        list(&dev, &[("user", "ann b=c, d"), ("run", "2")])
            .await
            .unwrap()
            .len(),
        0
    );
    assert_eq!(list(&dev, &[]).await.unwrap().len(), 2);
    assert_eq!(
        code(list(&dev, &[("bad\nkey", "x")]).await),
        Code::InvalidArgument
    );
    assert_eq!(
        code(create(&dev, with(&[("k", &"v".repeat(5000))], "")).await),
        Code::InvalidArgument
    );
    // Five creates with one key at once make one sandbox.
    let firsts =
        futures::future::join_all((0..5).map(|_| create(&dev, with(&[("try", "x")], "job-42"))))
            .await;
    let ids: std::collections::BTreeSet<String> =
        firsts.into_iter().map(|r| r.unwrap().sandbox_id).collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let retry = create(&dev, with(&[("try", "x")], "job-42")).await.unwrap();
    assert_eq!(Some(&retry.sandbox_id), ids.first());
    // The key with another request is refused (409), never answered with
    // the sandbox the first request made (issue 29).
    assert_eq!(
        code(create(&dev, with(&[], "job-42")).await),
        Code::AlreadyExists
    );
    assert_eq!(list(&dev, &[("try", "x")]).await.unwrap().len(), 1);
    // The key is the tenant's own: another tenant's create makes its own.
    let dev2 = s.as_(&other.developer).await;
    let theirs = create(&dev2, with(&[], "job-42")).await.unwrap();
    assert!(!ids.contains(&theirs.sandbox_id));
    assert_eq!(
        code(create(&dev, with(&[], "has space")).await),
        Code::InvalidArgument
    );
}
