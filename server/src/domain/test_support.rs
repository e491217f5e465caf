//! What the domain's unit tests share: a caller, a tenant, an app with
//! fake workers connected, a small create request, a sandbox row, and a
//! wait for what a background command left.

use crate::app::App;
use crate::auth::{Credential, Principal, Role};
use crate::db::entity::{sandbox, tenant};
use crate::domain::sandboxes::NewSandbox;
use crate::workers::fake::FakeWorkers;
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use std::sync::Arc;

/// A developer of `tenant`, signed in.
pub(crate) fn caller(tenant: &str) -> Principal {
    Principal {
        tenant_id: tenant.into(),
        user_id: "usr_t".into(),
        email: "t@example.com".into(),
        role: Role::Developer,
        credential: Credential::AccessToken,
        platform_admin: false,
    }
}

/// Stores tenant `id` (the platform's when `platform`), room for
/// `max_sandboxes` and plenty of cpu and memory.
pub(crate) async fn tenant(
    db: &impl sea_orm::ConnectionTrait,
    id: &str,
    platform: bool,
    max_sandboxes: i64,
) {
    tenant::ActiveModel {
        id: Set(id.into()),
        name: Set(id.into()),
        platform: Set(platform),
        max_sandboxes: Set(max_sandboxes),
        max_cpu_millis: Set(64_000),
        max_memory_mib: Set(65_536),
        created_at: Set(0),
    }
    .insert(db)
    .await
    .unwrap();
}

/// An app on fake workers with tenant `tenant_id` (room for 100
/// sandboxes) and `workers` connected in order (the first is session 1),
/// each of its (cpu millis, MiB, sandboxes) capacity.
pub(crate) async fn app_with(
    tenant_id: &str,
    workers: &[(&str, (i64, i64, i64))],
) -> (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir) {
    let (app, fake, dir) = App::with_fake_workers().await;
    tenant(app.db(), tenant_id, false, 100).await;
    for (w, capacity) in workers {
        fake.connect(&app, w, *capacity).await;
    }
    (app, fake, dir)
}

/// A create of a small sandbox (500 millis, 256 MiB) of the host image.
pub(crate) fn small() -> NewSandbox {
    NewSandbox {
        cpu_millis: 500,
        memory_mib: 256,
        ..Default::default()
    }
}

/// A sandbox row of `tenant_id` on `worker` in `state`, generation 1.
pub(crate) fn row(id: &str, tenant_id: &str, worker: &str, state: &str) -> sandbox::Model {
    sandbox::Model {
        id: id.into(),
        tenant_id: tenant_id.into(),
        owner_id: "usr_t".into(),
        image: talon_core::image::HOST_IMAGE.into(),
        state: state.into(),
        state_message: String::new(),
        generation: 1,
        worker_id: Some(worker.into()),
        cpu_millis: 500,
        memory_mib: 256,
        disk_mib: 1024,
        max_pids: 100,
        labels: "{}".into(),
        env: "{}".into(),
        secret_names: "[]".into(),
        network_policy: r#"{"mode":"sealed"}"#.into(),
        timeout_ms: 600_000,
        timeout_action: "pause".into(),
        created_at: 0,
        updated_at: 0,
        expires_at: None,
        metadata: "{}".into(),
        idempotency_key: None,
        idle_timeout_ms: 0,
        auto_resume: false,
        snapshot_id: String::new(),
        isolation: "container".into(),
        volume_mounts: "[]".into(),
        restart_policy: "always".into(),
        worker_loss: String::new(),
        request_hash: String::new(),
    }
}

/// Waits (up to 10 s) until sandbox `id` is in `state` (stored lowercase:
/// "running"), as a background command's answer leaves it.
pub(crate) async fn settled(app: &App, id: &str, state: &str) -> sandbox::Model {
    let read = || async {
        sandbox::Entity::find_by_id(id.to_string())
            .one(app.db())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no sandbox {id}"))
    };
    for _ in 0..1000 {
        let row = read().await;
        if row.state == state {
            return row;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("sandbox {id} never became {state}: {:?}", read().await);
}
