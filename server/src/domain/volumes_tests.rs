//! Volumes (`volumes.rs`) against the fake workers, for what reaches a
//! worker: a volume's files are removed by a worker on the shared
//! workspace backend before its record goes, so a volume is never
//! forgotten with its files left behind, and never removed while a
//! sandbox may still have it mounted. The path and mount checks are
//! `volumes.rs`'s own tests. No worker, no shared storage.

use super::volumes::*;
use crate::app::App;
use crate::db::entity::{sandbox, volume};
use crate::domain::tenants::TenantScope;
use crate::domain::test_support;
use crate::workers::fake::{self, FakeWorkers};
use sea_orm::{ActiveModelTrait, Set};
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

const TENANT: &str = "ten_v";

type Setup = (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir, TenantScope);

/// An app with a tenant, and `workers` connected on the local backend.
async fn setup(workers: &[&str]) -> Setup {
    let ws: Vec<_> = workers.iter().map(|w| (*w, (8000, 8192, 10))).collect();
    let (app, fake, dir) = test_support::app_with(TENANT, &ws).await;
    (app, fake, dir, TenantScope::of_stored(TENANT))
}

/// Registers a connected worker again, on the shared backend.
async fn make_shared(app: &App, id: &str) {
    crate::domain::workers::register(
        app,
        &crate::domain::workers::Registration {
            worker_id: id,
            hostname: id,
            capacity: crate::domain::scheduler::Amount {
                cpu_millis: 8000,
                memory_mib: 8192,
                sandboxes: 10,
            },
            runtimes: &["runc".to_string()],
            version: "test",
            data_address: &format!("{id}.test:7071"),
            workspace_backend: "shared",
        },
    )
    .await
    .unwrap();
}

/// A volume some sandbox mounted once (so a worker made its files), and
/// that no sandbox holds now.
async fn mounted_before(app: &App, scope: &TenantScope, name: &str) -> volume::Model {
    let v = create(app, scope, name, 0).await.unwrap();
    let mut am: volume::ActiveModel = v.into();
    am.mounted_at = Set(1);
    am.update(app.db()).await.unwrap()
}

/// The DeleteVolume commands sent, as (worker, volume id).
fn volume_deletes(fake: &FakeWorkers) -> Vec<(String, String)> {
    fake.sent(|a| match a {
        wpb::command::Action::DeleteVolume(d) => Some(d.volume_id.clone()),
        _ => None,
    })
}

/// A sandbox on a shared worker that mounts volume `name` at /data.
async fn sandbox_mounting(app: &Arc<App>, name: &str) -> sandbox::Model {
    let n = crate::domain::sandboxes::NewSandbox {
        cpu_millis: 500,
        memory_mib: 256,
        volume_mounts: vec![MountRequest {
            name: name.into(),
            path: "/data".into(),
            read_only: false,
        }],
        ..Default::default()
    };
    let row = crate::domain::sandboxes::create(app, &test_support::caller(TENANT), n)
        .await
        .unwrap();
    test_support::settled(app, &row.id, "running").await
}

#[tokio::test]
async fn a_volume_never_mounted_is_deleted_without_asking_any_worker() {
    let (app, fake, _d, scope) = setup(&[]).await;
    let v = create(&app, &scope, "data", 0).await.unwrap();
    assert_eq!(v.size_mib, app.config().volume_default_mib);
    assert_eq!(v.mounted_at, 0);
    delete(&app, &scope, "data").await.unwrap();
    assert!(fake.calls().is_empty(), "no worker made its files");
    let e = get(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    let e = delete(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_mounted_volume_is_kept_until_its_sandbox_goes_then_a_shared_worker_removes_its_files() {
    let (app, fake, _d, scope) = setup(&["w1"]).await;
    make_shared(&app, "w1").await;
    let v = create(&app, &scope, "data", 64).await.unwrap();
    let sbx = sandbox_mounting(&app, "data").await;
    let held = get(&app, &scope, "data").await.unwrap();
    assert_eq!(held.sandbox_id, sbx.id);
    assert!(held.mounted_at > 0);
    let e = delete(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(e.to_string().contains(&sbx.id), "{e}");
    assert!(volume_deletes(&fake).is_empty());
    // The worker confirms the sandbox gone: the volume is free at once.
    crate::domain::sandboxes::delete(&app, sbx).await.unwrap();
    assert_eq!(get(&app, &scope, "data").await.unwrap().sandbox_id, "");
    delete(&app, &scope, "data").await.unwrap();
    assert_eq!(volume_deletes(&fake), [("w1".to_string(), v.id)]);
    let e = get(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
}

#[tokio::test]
async fn a_volume_whose_sandbox_delete_no_worker_confirmed_stays_held() {
    let (app, fake, _d, scope) = setup(&["w1"]).await;
    make_shared(&app, "w1").await;
    create(&app, &scope, "data", 0).await.unwrap();
    let sbx = sandbox_mounting(&app, "data").await;
    fake.script(|_, cmd| match cmd.action {
        Some(wpb::command::Action::Delete(_)) => Some(Ok(fake::refused(
            cmd,
            tonic::Code::Internal,
            "runtime hung",
        ))),
        _ => None,
    });
    let gone = crate::domain::sandboxes::delete(&app, sbx).await.unwrap();
    assert_eq!(gone.state, "deleted");
    let e = delete(&app, &scope, "data").await.unwrap_err();
    assert_eq!(
        e.code(),
        tonic::Code::FailedPrecondition,
        "the worker may still have it mounted: {e}"
    );
    assert!(volume_deletes(&fake).is_empty());
    assert!(get(&app, &scope, "data").await.is_ok());
}

#[tokio::test]
async fn a_workers_refusal_to_remove_the_files_keeps_its_meaning_and_the_volume() {
    let (app, fake, _d, scope) = setup(&["w1"]).await;
    make_shared(&app, "w1").await;
    let v = mounted_before(&app, &scope, "data").await;
    for code in [
        tonic::Code::Internal,
        tonic::Code::NotFound,
        tonic::Code::ResourceExhausted,
        tonic::Code::Unavailable,
    ] {
        fake.clear();
        fake.script(move |_, cmd| Some(Ok(fake::refused(cmd, code, "disk busy"))));
        let e = delete(&app, &scope, "data").await.unwrap_err();
        let want = crate::workers::calls::error("w1", code, "disk busy");
        assert_eq!(e.code(), want.code(), "{code:?}: {e}");
        assert_eq!(e.to_string(), want.to_string());
        assert_eq!(volume_deletes(&fake), [("w1".to_string(), v.id.clone())]);
        assert_eq!(get(&app, &scope, "data").await.unwrap(), v, "kept");
    }
    // A worker not reached: UNAVAILABLE, the volume kept.
    fake.script(|w, _| {
        Some(Err(crate::error::Error::Unavailable(format!(
            "worker {w} did not answer"
        ))))
    });
    let e = delete(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert_eq!(get(&app, &scope, "data").await.unwrap(), v);
}

#[tokio::test]
async fn with_no_shared_worker_connected_a_mounted_volume_is_unavailable_and_kept() {
    // w1 is local; w2 is shared but its session has gone.
    let (app, fake, _d, scope) = setup(&["w1", "w2"]).await;
    make_shared(&app, "w2").await;
    app.hub().detach("w2", 2);
    assert!(!app.hub().is_connected("w2"));
    let v = mounted_before(&app, &scope, "data").await;
    let e = delete(&app, &scope, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.to_string().contains("shared workspace backend"), "{e}");
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
    assert_eq!(get(&app, &scope, "data").await.unwrap(), v);
}

#[tokio::test]
async fn a_volume_is_sized_within_bounds_named_once_a_tenant_and_seen_only_by_it() {
    let (app, _fake, _d, scope) = setup(&[]).await;
    let max = app.config().volume_max_mib;
    for bad in [-1, 15, max + 1] {
        let e = create(&app, &scope, "data", bad).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{bad}: {e}");
    }
    let e = create(&app, &scope, "Data", 64).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert_eq!(
        create(&app, &scope, "data", max).await.unwrap().size_mib,
        max
    );
    let e = create(&app, &scope, "data", 16).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::AlreadyExists, "{e}");
    // Another tenant's scope neither sees nor deletes it.
    let other = TenantScope::of_stored("ten_other");
    let e = get(&app, &other, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    let e = delete(&app, &other, "data").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert!(list(&app, &other, 0, 10).await.unwrap().is_empty());
    assert_eq!(list(&app, &scope, 0, 10).await.unwrap().len(), 1);
}
