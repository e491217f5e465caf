//! The migrations and the control plane on PostgreSQL, and the migrations
//! on SQLite. `.ci/run` starts a PostgreSQL server and sets
//! TALON_TEST_POSTGRES_URL to a role that may create databases; each run
//! here gets a database of its own. Outside CI, without that variable, the
//! PostgreSQL half says so and returns; under CI it fails instead.

mod common;
use common::*;
use sea_orm::ConnectionTrait;
use talon_proto::v1 as pb;

#[test]
fn migrations_run_on_sqlite_twice() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("m.db").display());
    migrate(&url);
    migrate(&url);
}

#[tokio::test]
async fn control_plane_on_postgres() {
    let Some((url, admin, name)) = pg_database("test").await else {
        return;
    };
    migrate(&url);
    {
        let s = Server::start_with(Some(&url), &[]).await;
        let t = tenant(&s, "pg").await;
        let _w = TestWorker::connect(&s, "wrk_pg", Behaviour::Obey).await;
        let mut dev = s.as_(&t.developer).await;
        let req = pb::CreateSandboxRequest {
            wait_until_running: true,
            ..Default::default()
        };
        let sb = dev
            .sandboxes
            .create_sandbox(req)
            .await
            .unwrap()
            .into_inner()
            .sandbox
            .unwrap();
        assert_eq!(sb.state, pb::SandboxState::Running as i32);
        let mut admin_c = s.admin().await;
        admin_c
            .tenants
            .update_tenant_quota(pb::UpdateTenantQuotaRequest {
                tenant_id: t.tenant_id.clone(),
                quota: Some(pb::Quota {
                    max_sandboxes: 1,
                    max_cpu_millis: 64_000,
                    max_memory_mib: 65_536,
                }),
            })
            .await
            .unwrap();
        let again = dev
            .sandboxes
            .create_sandbox(pb::CreateSandboxRequest::default())
            .await;
        assert_eq!(code(again), tonic::Code::ResourceExhausted);
        let audit = admin_c
            .admin
            .list_audit_events(pb::ListAuditEventsRequest {
                page_size: 100,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(
            audit
                .audit_events
                .iter()
                .any(|e| e.method.ends_with("/CreateSandbox") && e.outcome == "OK")
        );
        // The snapshot quota's sum: PostgreSQL sums a BIGINT as a NUMERIC.
        let list = dev
            .sandboxes
            .list_snapshots(pb::ListSnapshotsRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert!(list.snapshots.is_empty());
        let db = talon_server::db::connect(&url).await.unwrap();
        for bytes in [5_i64 << 30, 7] {
            db.execute_unprepared(&format!(
                "INSERT INTO snapshots VALUES ('snp_{bytes}', '{}', 'n{bytes}', 'sbx_x', 'host', 'wrk_x', 'snapshot/x', {bytes}, 0, 0)",
                t.tenant_id
            ))
            .await
            .unwrap();
        }
        assert_eq!(
            talon_server::domain::snapshots::used_bytes(&db, &t.tenant_id)
                .await
                .unwrap(),
            (5 << 30) + 7
        );
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}

/// A database of its own on the CI's PostgreSQL, migrated; None outside
/// CI without TALON_TEST_POSTGRES_URL.

#[tokio::test]
async fn the_duties_lease_moves_to_another_server_when_its_holder_dies() {
    let Some((url, admin, name)) = pg_database("lease").await else {
        return;
    };
    let flags = ["--duty-lease-secs", "3"];
    {
        let mut a = Server::start_with(Some(&url), &flags).await;
        let mut b = Server::join(&a, &url, &flags).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let a_leads = loop {
            let (la, lb) = (leads(&a).await, leads(&b).await);
            if let (Some(la), Some(lb)) = (la, lb)
                && la != lb
            {
                break la;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "never exactly one leader: {la:?} {lb:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        // Kill the holder outright: no release, its lease must expire.
        let (dead, other) = if a_leads { (&mut a, &b) } else { (&mut b, &a) };
        dead.kill9();
        let t0 = std::time::Instant::now();
        while leads(other).await != Some(true) {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(8),
                "the other server never took the duties"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        println!(
            "duties lease moved {:.1} s after its holder was killed (lease 3 s, renewed every 1 s)",
            t0.elapsed().as_secs_f64()
        );
        // The duties run there: a timeout fires.
        let t = tenant(other, "lease").await;
        let _w = TestWorker::connect(other, "wrk_lease", Behaviour::Obey).await;
        let mut dev = other.as_(&t.developer).await;
        let sb = create_with_timeout(&mut dev, 1).await;
        until_state(&mut dev, &sb.sandbox_id, pb::SandboxState::Paused).await;
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}

/// Two servers on one PostgreSQL, each caching principals and sandbox rows
/// for a minute: a change made through A is served by B at once, because A
/// tells B (peers.rs), not because B's cache expired; and B's watchers
/// get the sandbox events of changes made through A.
#[tokio::test]
async fn a_change_through_one_server_is_served_by_another_at_once() {
    let Some((url, admin, name)) = pg_database("peers").await else {
        return;
    };
    let flags = ["--auth-cache-ms", "60000", "--sandbox-cache-ms", "60000"];
    {
        let a = Server::start_with(Some(&url), &flags).await;
        let b = Server::join(&a, &url, &flags).await;
        let t = tenant(&a, "peers").await;
        let mut owner = a.as_(&t.owner).await;
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
        let mut on_b = b.as_(&t.developer).await;
        let role_on_b = |c: &mut Clients| {
            let mut a = c.auth.clone();
            async move {
                a.who_am_i(pb::WhoAmIRequest {})
                    .await
                    .unwrap()
                    .into_inner()
                    .role
            }
        };
        // B has the developer cached.
        assert_eq!(role_on_b(&mut on_b).await, pb::Role::Developer as i32);
        owner
            .tenants
            .update_user(pb::UpdateUserRequest {
                tenant_id: "-".into(),
                user_id: dev.user_id.clone(),
                role: pb::Role::Viewer as i32,
                disabled: None,
                password: String::new(),
            })
            .await
            .unwrap();
        let t0 = std::time::Instant::now();
        while role_on_b(&mut on_b).await != pb::Role::Viewer as i32 {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(1),
                "B still serves the role A changed (its cache lives 60 s)"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let role_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let e = on_b
            .sandboxes
            .create_sandbox(pb::CreateSandboxRequest::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");

        // A running sandbox's row, cached on B, paused through A.
        let _w = TestWorker::connect(&a, "wrk_peers", Behaviour::Obey).await;
        let sb = create_running(&mut owner).await;
        let mut owner_b = b.as_(&t.owner).await;
        assert_eq!(
            get(&mut owner_b, &sb.sandbox_id).await.state,
            pb::SandboxState::Running as i32
        );
        // B's watchers hear of it too.
        let mut watch_b = owner_b
            .sandboxes
            .watch_sandbox_events(pb::WatchSandboxEventsRequest {
                sandbox_id: sb.sandbox_id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        owner
            .sandboxes
            .pause_sandbox(pb::PauseSandboxRequest {
                sandbox_id: sb.sandbox_id.clone(),
            })
            .await
            .unwrap();
        let t0 = std::time::Instant::now();
        while get(&mut owner_b, &sb.sandbox_id).await.state != pb::SandboxState::Paused as i32 {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(1),
                "B still serves the sandbox as running"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        println!(
            "a change through server A served by server B after: role {role_ms:.1} ms, sandbox state {:.1} ms (caches 60 s)",
            t0.elapsed().as_secs_f64() * 1000.0
        );
        loop {
            let ev = tokio::time::timeout(std::time::Duration::from_secs(5), watch_b.message())
                .await
                .expect("B's watcher heard nothing of a pause made through A")
                .unwrap()
                .unwrap();
            if ev.sandbox.unwrap().state == pb::SandboxState::Paused as i32 {
                break;
            }
        }
        assert!(metric(&b, "talon_cache_invalidations_received_total").await >= Some(2.0));
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}

/// Servers on one PostgreSQL share the platform's keys; a sandbox on a
/// worker whose session server A holds is reached through server B, which
/// finds the worker's data plane in the database (processes through B act
/// on the same sandbox as through A) and relays its lifecycle commands
/// through A (pause, resume and delete through B reach the worker); B
/// places a create on A's worker though it holds no worker's session.
#[tokio::test]
async fn a_sandbox_on_a_worker_of_one_server_is_reached_through_another() {
    let Some((url, admin, name)) = pg_database("reach").await else {
        return;
    };
    ensure_agent_built();
    {
        let a = Server::start_with(Some(&url), &[]).await;
        let b = Server::join(&a, &url, &[]).await;
        let t = tenant(&a, "reach").await;
        let mut admin_a = a.admin().await;
        let _w = spawn_worker(&a);
        until_worker(&mut admin_a, true).await;
        let mut dev_a = a.as_(&t.developer).await;
        let sb = create_running(&mut dev_a).await;
        let id = sb.sandbox_id;
        let mut procs_b = procs_client(b.channel().await, bearer(&t.developer));
        let (out, code) = proc_sh(
            &mut procs_b,
            &id,
            "echo through-b > /workspace/b.txt; cat /workspace/b.txt",
        )
        .await;
        assert_eq!((out.as_str(), code), ("through-b\n", 0));
        let mut procs_a = procs_client(a.channel().await, bearer(&t.developer));
        let (out, code) = proc_sh(&mut procs_a, &id, "cat /workspace/b.txt").await;
        assert_eq!(
            (out.as_str(), code),
            ("through-b\n", 0),
            "not the same sandbox"
        );
        // A token A issued is good on B (the keys are shared).
        let tok = login(&a, &t.owner_email, PASSWORD).await.access_token;
        let mut owner_b = b.as_(&tok).await;
        assert_eq!(
            get(&mut owner_b, &id).await.state,
            pb::SandboxState::Running as i32
        );
        // A create through B, which holds no worker's session: placed on
        // A's worker from its recorded inventory, its command relayed.
        let mut dev_b = b.as_(&t.developer).await;
        let on_b = create_running(&mut dev_b).await;
        assert_eq!(on_b.worker_id, sb.worker_id);
        let (out, code) = proc_sh(&mut procs_b, &on_b.sandbox_id, "echo made-through-b").await;
        assert_eq!((out.as_str(), code), ("made-through-b\n", 0));
        dev_b
            .sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: on_b.sandbox_id.clone(),
            })
            .await
            .unwrap();

        // Relaying is for servers only: the workers' token (which every
        // worker holds) may not drive another worker's sandboxes.
        let worker_token = std::fs::read_to_string(a.data_dir().join("keys/worker.token")).unwrap();
        let mut relay =
            talon_proto::talon::worker::v1::worker_control_service_client::WorkerControlServiceClient::with_interceptor(
                a.channel().await,
                bearer(worker_token.trim()),
            );
        let denied = relay
            .relay_command(talon_proto::talon::worker::v1::RelayCommandRequest {
                worker_id: "any".into(),
                command: Some(Default::default()),
                timeout_ms: 1000,
            })
            .await
            .unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied, "{denied}");

        // Lifecycle calls through B: relayed to A, which holds the
        // worker's session.
        let paused = dev_b
            .sandboxes
            .pause_sandbox(pb::PauseSandboxRequest {
                sandbox_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .sandbox
            .unwrap();
        assert_eq!(paused.state, pb::SandboxState::Paused as i32);
        let frozen =
            std::fs::read_to_string(format!("/sys/fs/cgroup/freezer/talon/{id}/freezer.state"))
                .or_else(|_| {
                    std::fs::read_to_string(format!(
                        "/sys/fs/cgroup/unified/talon/{id}/cgroup.freeze"
                    ))
                })
                .unwrap();
        assert!(
            ["FROZEN", "1"].contains(&frozen.trim()),
            "the worker did not freeze it: {frozen}"
        );
        dev_b
            .sandboxes
            .resume_sandbox(pb::ResumeSandboxRequest {
                sandbox_id: id.clone(),
            })
            .await
            .unwrap();
        let (out, code) = proc_sh(&mut procs_b, &id, "cat /workspace/b.txt").await;
        assert_eq!((out.as_str(), code), ("through-b\n", 0));
        dev_b
            .sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: id.clone(),
            })
            .await
            .unwrap();
        assert!(
            !a.data_dir().join("w/sandboxes").join(&id).exists(),
            "the worker kept a sandbox deleted through B"
        );
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}

/// A worker given both servers' URLs keeps one session; when its server
/// is killed it opens one with the other, and its sandboxes keep running
/// and answer through the survivor, their files intact.
#[tokio::test]
async fn a_worker_moves_to_the_other_server_when_its_server_dies() {
    let Some((url, admin, name)) = pg_database("moves").await else {
        return;
    };
    ensure_agent_built();
    {
        let mut a = Server::start_with(Some(&url), &[]).await;
        let b = Server::join(&a, &url, &[]).await;
        let t = tenant(&a, "moves").await;
        let mut admin_a = a.admin().await;
        let _w = spawn_worker_to(&a, &format!("{},{}", a.grpc, b.grpc));
        until_worker(&mut admin_a, true).await;
        let mut dev_b = b.as_(&t.developer).await;
        let sb = create_running(&mut dev_b).await;
        let id = sb.sandbox_id;
        let mut procs_b = procs_client(b.channel().await, bearer(&t.developer));
        let (out, code) = proc_sh(
            &mut procs_b,
            &id,
            "echo kept > /workspace/f; cat /workspace/f",
        )
        .await;
        assert_eq!((out.as_str(), code), ("kept\n", 0));

        a.kill9();
        let t0 = std::time::Instant::now();
        // B can pause it only once the worker's session is B's own.
        loop {
            match dev_b
                .sandboxes
                .pause_sandbox(pb::PauseSandboxRequest {
                    sandbox_id: id.clone(),
                })
                .await
            {
                Ok(_) => break,
                Err(e) if e.code() == tonic::Code::Unavailable => {
                    assert!(
                        t0.elapsed() < std::time::Duration::from_secs(20),
                        "the worker never moved to server B: {e}"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
        println!(
            "the worker's session moved to the surviving server {:.1} s after its server was killed",
            t0.elapsed().as_secs_f64()
        );
        dev_b
            .sandboxes
            .resume_sandbox(pb::ResumeSandboxRequest {
                sandbox_id: id.clone(),
            })
            .await
            .unwrap();
        let (out, code) = proc_sh(&mut procs_b, &id, "cat /workspace/f").await;
        assert_eq!((out.as_str(), code), ("kept\n", 0), "not the same sandbox");
        dev_b
            .sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: id })
            .await
            .unwrap();
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}
