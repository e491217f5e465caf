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
    let Ok(admin_url) = std::env::var("TALON_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").is_err(),
            "CI must set TALON_TEST_POSTGRES_URL"
        );
        eprintln!("TALON_TEST_POSTGRES_URL is not set: PostgreSQL part not run here");
        return;
    };
    let name = format!("talon_test_{}", std::process::id());
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
    }
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}
