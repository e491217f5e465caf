//! The migrations and the control plane on PostgreSQL, and the migrations
//! on SQLite. `.ci/run` starts a PostgreSQL server and sets
//! TALON_TEST_POSTGRES_URL to a role that may create databases; each run
//! here gets a database of its own. Outside CI, without that variable, the
//! PostgreSQL half says so and returns; under CI it fails instead.

mod common;
use common::*;
use sea_orm::{ConnectionTrait, Database};
use talon_proto::v1 as pb;

fn migrate(url: &str) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_talon"))
        .args(["migrate", "--database-url", url])
        .env("TALON_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "migrate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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
async fn pg_database(tag: &str) -> Option<(String, sea_orm::DatabaseConnection, String)> {
    let Ok(admin_url) = std::env::var("TALON_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").is_err(),
            "CI must set TALON_TEST_POSTGRES_URL"
        );
        eprintln!("TALON_TEST_POSTGRES_URL is not set: PostgreSQL part not run here");
        return None;
    };
    let name = format!("talon_{tag}_{}", std::process::id());
    let admin = Database::connect(&admin_url).await.unwrap();
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
        .await
        .unwrap();
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let url = format!("{base}/{name}");
    migrate(&url);
    Some((url, admin, name))
}

/// `talon_duties_leader` of a server: 1 while it runs the duties.
async fn leads(s: &Server) -> Option<bool> {
    metric(s, "talon_duties_leader").await.map(|v| v == 1.0)
}

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
        let sb = dev
            .sandboxes
            .create_sandbox(pb::CreateSandboxRequest {
                sandbox: Some(pb::Sandbox {
                    timeout: Some(prost_types::Duration {
                        seconds: 1,
                        nanos: 0,
                    }),
                    ..Default::default()
                }),
                wait_until_running: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .sandbox
            .unwrap();
        until_state(&mut dev, &sb.sandbox_id, pb::SandboxState::Paused).await;
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}
