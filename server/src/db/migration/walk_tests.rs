//! Every migration walked forwards from the first, with data in every
//! table as it was when the table came: rows written by the oldest
//! schema read back through today's entities, with the defaults their
//! later columns got. On SQLite always; on PostgreSQL too where
//! TALON_TEST_POSTGRES_URL names a server (CI sets it).

use super::Migrator;
use crate::db::entity::*;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, EntityTrait};
use sea_orm_migration::MigratorTrait;

/// Rows to write once migration `n` (1-based) has run: the tables it made,
/// in the columns they had then.
fn rows_after(n: usize) -> &'static [&'static str] {
    match n {
        1 => &[
            "INSERT INTO tenants (id, name, platform, max_sandboxes, max_cpu_millis, max_memory_mib, created_at) VALUES ('ten_w', 'walk', FALSE, 20, 16000, 32768, 1)",
            "INSERT INTO users (id, tenant_id, email, password_hash, role, disabled, created_at) VALUES ('usr_w', 'ten_w', 'w@walk.test', 'h', 'owner', FALSE, 1)",
            "INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, secret_hash, role, created_at, expires_at, last_used_at) VALUES ('key_w', 'ten_w', 'usr_w', 'k', 'tk_w', 'h', 'developer', 1, NULL, NULL)",
            "INSERT INTO refresh_tokens (id, tenant_id, user_id, secret_hash, created_at, expires_at, revoked_at) VALUES ('rt_w', 'ten_w', 'usr_w', 'h', 1, 2, NULL)",
            "INSERT INTO workers (id, hostname, draining, cpu_millis, memory_mib, max_sandboxes, runtimes, version, registered_at, last_heartbeat_at) VALUES ('wrk_w', 'host', FALSE, 2000, 1024, 10, 'runc', '0.1.0', 1, 1)",
            "INSERT INTO sandboxes (id, tenant_id, owner_id, image, state, state_message, generation, worker_id, cpu_millis, memory_mib, disk_mib, max_pids, labels, env, secret_names, network_policy, timeout_ms, timeout_action, created_at, updated_at, expires_at) VALUES ('sbx_w', 'ten_w', 'usr_w', 'host', 'running', '', 1, 'wrk_w', 1000, 512, 2048, 1024, '{\"a\":\"1\"}', '{}', '[]', '{\"mode\":\"open\"}', 60000, 'pause', 1, 1, NULL)",
            "INSERT INTO audit_events (created_at, tenant_id, actor_id, method, resource_id, outcome, request_id) VALUES (1, 'ten_w', 'usr_w', 'CreateSandbox', 'sbx_w', 'OK', 'req_w')",
        ],
        2 => &[
            "INSERT INTO secrets (id, tenant_id, name, delivery, ciphertext, nonce, created_at, updated_at, expires_at) VALUES ('sec_w', 'ten_w', 'TOKEN', 'env', 'c', 'n', 1, 1, NULL)",
        ],
        3 => &[
            "INSERT INTO images (name, digest, size_bytes, created_at) VALUES ('alpine', 'sha256:00', 10, 1)",
        ],
        6 => &[
            "INSERT INTO leases (name, holder, expires_at, epoch) VALUES ('duties', 'srv_w', 5, 1)",
        ],
        7 => &[
            "INSERT INTO snapshots (id, tenant_id, name, sandbox_id, image, worker_id, worker_image, size_bytes, frozen_ms, created_at) VALUES ('snp_w', 'ten_w', 's', 'sbx_w', 'host', 'wrk_w', 'snap:w', 3, 1, 1)",
        ],
        10 => &[
            "INSERT INTO servers (id, address, heartbeat_at) VALUES ('srv_w', 'http://a:7070', 1)",
        ],
        13 => &[
            "INSERT INTO volumes (id, tenant_id, name, size_mib, created_at, sandbox_id, mounted_at) VALUES ('vol_w', 'ten_w', 'data', 64, 1, '', 0)",
        ],
        17 => &[
            "INSERT INTO sandbox_moves (moved_at, sandbox_id, tenant_id, from_worker, to_worker, cause, generation, workspace_kept) VALUES (1, 'sbx_w', 'ten_w', 'wrk_v', 'wrk_w', 'worker_lost', 2, FALSE)",
        ],
        _ => &[],
    }
}

async fn walk(db: &DatabaseConnection) {
    let all = Migrator::migrations().len();
    for n in 1..=all {
        Migrator::up(db, Some(1)).await.unwrap();
        for sql in rows_after(n) {
            db.execute_unprepared(sql)
                .await
                .unwrap_or_else(|e| panic!("after migration {n}: {sql}: {e}"));
        }
    }
    assert!(
        Migrator::get_pending_migrations(db)
            .await
            .unwrap()
            .is_empty()
    );

    // Every table's rows read through today's entities.
    assert_eq!(tenant::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(user::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(api_key::Entity::find().all(db).await.unwrap().len(), 1);
    let tokens = refresh_token::Entity::find().all(db).await.unwrap();
    assert_eq!((tokens.len(), tokens[0].password_fp.as_str()), (1, ""));
    assert_eq!(audit_event::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(secret::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(image::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(lease::Entity::find().all(db).await.unwrap().len(), 1);
    let snaps = snapshot::Entity::find().all(db).await.unwrap();
    assert_eq!((snaps.len(), snaps[0].pending), (1, false));
    assert_eq!(server::Entity::find().all(db).await.unwrap().len(), 1);
    assert_eq!(volume::Entity::find().all(db).await.unwrap().len(), 1);
    let moves = sandbox_move::Entity::find().all(db).await.unwrap();
    assert_eq!(
        (
            moves.len(),
            moves[0].cause.as_str(),
            moves[0].workspace_kept
        ),
        (1, "worker_lost", false)
    );
    // The oldest rows, with their later columns' defaults, read as such.
    let w = worker::Entity::find_by_id("wrk_w")
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            w.workspace_backend.as_str(),
            w.lost_at,
            w.fence_scope,
            w.last_moved_at,
            w.server_id.as_str()
        ),
        ("local", 0, 0, 0, "")
    );
    let s = sandbox::Entity::find_by_id("sbx_w")
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            s.metadata.as_str(),
            s.isolation.as_str(),
            s.volume_mounts.as_str(),
            s.restart_policy.as_str(),
            s.worker_loss.as_str(),
            s.request_hash.as_str()
        ),
        ("{}", "container", "[]", "always", "", "")
    );
    assert!(s.idempotency_key.is_none() && !s.auto_resume && s.idle_timeout_ms == 0);
    // And the domain reads them: a row from the first schema is a
    // sandbox like any other.
    use crate::domain::sandboxes as d;
    assert_eq!(d::labels_of(&s).unwrap()["a"], "1");
    assert_eq!(d::restart_policy_of(&s).unwrap(), d::RestartPolicy::Always);
    assert_eq!(
        d::state_of(&s).unwrap(),
        crate::domain::state::SandboxState::Running
    );
}

#[tokio::test]
async fn every_migration_walks_forwards_with_data_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/walk.db?mode=rwc", dir.path().display());
    let db = Database::connect(&url).await.unwrap();
    walk(&db).await;
}

#[tokio::test]
async fn every_migration_walks_forwards_with_data_on_postgres() {
    let Ok(admin_url) = std::env::var("TALON_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").is_err(),
            "CI must set TALON_TEST_POSTGRES_URL"
        );
        eprintln!("TALON_TEST_POSTGRES_URL is not set: the PostgreSQL walk did not run");
        return;
    };
    let admin = Database::connect(&admin_url).await.unwrap();
    let name = format!("talon_walk_{}", std::process::id());
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
        .await
        .unwrap();
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let db = Database::connect(format!("{base}/{name}")).await.unwrap();
    walk(&db).await;
    db.close().await.unwrap();
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}
