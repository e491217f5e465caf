//! The image catalogue (`images.rs`) against the fake workers: what the
//! catalogue lists and finds (the built-in `host` always, imported rows by
//! name), which workers a prewarm asks and what its progress says, what a
//! delete tells the workers, and that an import no worker's data plane
//! takes leaves nothing recorded. The catalogue is what placement and the
//! API read, so a wrong answer here sends sandboxes to workers without
//! their image. No worker, no data plane.

use super::images::*;
use crate::app::App;
use crate::db::entity::image;
use crate::workers::fake::{self, Call, FakeWorkers};
use sea_orm::{ActiveModelTrait, EntityTrait, PaginatorTrait, Set};
use std::sync::Arc;
use std::time::Duration;
use talon_core::image::HOST_IMAGE;
use talon_proto::talon::worker::v1 as wpb;
use tokio::sync::mpsc;

/// An app with `workers` connected (none holds an imported image yet).
async fn setup(workers: &[&str]) -> (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir) {
    let (app, fake, dir) = App::with_fake_workers().await;
    for w in workers {
        fake.connect(&app, w, (8000, 8192, 10)).await;
    }
    (app, fake, dir)
}

/// An imported image as a finished import records it.
async fn insert_image(app: &App, name: &str) {
    image::ActiveModel {
        name: Set(name.into()),
        digest: Set(format!("sha256:{name}")),
        size_bytes: Set(1000),
        created_at: Set(7),
    }
    .insert(app.db())
    .await
    .unwrap();
}

async fn image_rows(app: &App) -> u64 {
    image::Entity::find().count(app.db()).await.unwrap()
}

/// Every progress message of a prewarm, until each worker's task is done
/// (the channel closes when the last one ends).
async fn drain(mut rx: mpsc::Receiver<PrewarmProgress>) -> Vec<PrewarmProgress> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(p) = rx.recv().await {
            out.push(p);
        }
    })
    .await
    .expect("the prewarm's channel never closed");
    out
}

/// One worker's phases, in the order they came.
fn phases(progress: &[PrewarmProgress], worker: &str) -> Vec<&'static str> {
    progress
        .iter()
        .filter(|p| p.worker_id == worker)
        .map(|p| p.phase)
        .collect()
}

fn last_of<'a>(progress: &'a [PrewarmProgress], worker: &str) -> &'a PrewarmProgress {
    progress
        .iter()
        .rev()
        .find(|p| p.worker_id == worker)
        .unwrap_or_else(|| panic!("no progress from {worker}"))
}

/// The prewarm commands sent, as (worker, command).
fn prewarms(fake: &FakeWorkers) -> Vec<(String, wpb::PrewarmCommand)> {
    let mut out = fake.sent(|a| match a {
        wpb::command::Action::Prewarm(p) => Some(p.clone()),
        _ => None,
    });
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn host_is_always_listed_first_and_imported_images_follow_by_name_across_pages() {
    let (app, _fake, _d) = setup(&[]).await;
    let (rows, next) = list(&app, 0, 10).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].name, HOST_IMAGE);
    assert!(rows[0].builtin);
    assert_eq!(next, "");
    for n in ["python:3", "alpine", "node"] {
        insert_image(&app, n).await;
    }
    // Two a page: host takes the first page's first row.
    let (rows, next) = list(&app, 0, 2).await.unwrap();
    let names: Vec<_> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, [HOST_IMAGE, "alpine"]);
    assert_eq!(next, crate::domain::encode_page_token(2));
    let (rows, next) = list(&app, 2, 2).await.unwrap();
    let names: Vec<_> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["node", "python:3"], "none skipped, none twice");
    assert_eq!(next, "", "the last page");
    assert!(!rows[0].builtin);
    assert_eq!(rows[0].digest, "sha256:node");
    assert_eq!(rows[0].size_bytes, 1000);
}

#[tokio::test]
async fn get_and_exists_know_host_and_the_imported_rows_and_nothing_else() {
    let (app, _fake, _d) = setup(&[]).await;
    insert_image(&app, "alpine").await;
    let host = get(&app, HOST_IMAGE).await.unwrap();
    assert!(host.builtin);
    let alpine = get(&app, "alpine").await.unwrap();
    assert!(!alpine.builtin);
    assert_eq!(alpine.digest, "sha256:alpine");
    assert_eq!(alpine.created_at, 7);
    let e = get(&app, "debian").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert!(e.to_string().contains("debian"), "{e}");
    assert!(exists(&app, HOST_IMAGE).await.unwrap());
    assert!(exists(&app, "alpine").await.unwrap());
    assert!(!exists(&app, "debian").await.unwrap());
}

#[tokio::test]
async fn a_prewarm_asks_each_worker_that_holds_the_image_for_the_pool_size_and_reports_done() {
    let (app, fake, _d) = setup(&["w1", "w2", "w3"]).await;
    insert_image(&app, "alpine").await;
    app.hub().set_image("w1", "alpine", true);
    app.hub().set_image("w2", "alpine", true);
    let progress = drain(prewarm(&app, "alpine", 3).await.unwrap()).await;
    let sent = prewarms(&fake);
    let workers: Vec<_> = sent.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(workers, ["w1", "w2"], "w3 does not hold the image");
    let defaults = app.config().default_resources;
    for (w, p) in &sent {
        assert_eq!(p.pool_size, 3, "{w}");
        let spec = p.spec.as_ref().unwrap();
        assert_eq!(spec.image, "alpine");
        let r = spec.resources.unwrap();
        assert_eq!(
            (r.cpu_millis, r.memory_mib),
            (defaults.cpu_millis, defaults.memory_mib),
            "the server's default resources"
        );
        let wait = p.wait.unwrap().seconds;
        assert!(
            wait > 0 && wait < app.config().worker_command_timeout.as_secs() as i64,
            "the worker answers before the command times out: {wait}"
        );
    }
    for w in ["w1", "w2"] {
        assert_eq!(phases(&progress, w), ["pooling", "done"], "{progress:?}");
        assert_eq!(last_of(&progress, w).pool_ready, 3);
    }
    assert!(phases(&progress, "w3").is_empty(), "{progress:?}");
}

#[tokio::test]
async fn a_prewarm_of_host_goes_to_every_worker_and_a_refusal_is_failed_with_its_message() {
    let (app, fake, _d) = setup(&["w1", "w2"]).await;
    fake.script(|w, cmd| {
        (w == "w2").then(|| {
            Ok(fake::refused(
                cmd,
                tonic::Code::ResourceExhausted,
                "no room for a pool",
            ))
        })
    });
    let progress = drain(prewarm(&app, HOST_IMAGE, 0).await.unwrap()).await;
    assert_eq!(prewarms(&fake).len(), 2, "host is held by every worker");
    assert_eq!(phases(&progress, "w1"), ["pooling", "done"]);
    assert_eq!(phases(&progress, "w2"), ["pooling", "failed"]);
    assert_eq!(last_of(&progress, "w2").message, "no room for a pool");
    // A worker not reached fails too, with why.
    fake.script(|w, _| {
        Some(Err(crate::error::Error::Unavailable(format!(
            "worker {w} did not answer"
        ))))
    });
    let progress = drain(prewarm(&app, HOST_IMAGE, 1).await.unwrap()).await;
    for w in ["w1", "w2"] {
        let last = last_of(&progress, w);
        assert_eq!(last.phase, "failed");
        assert!(last.message.contains("did not answer"), "{last:?}");
    }
}

#[tokio::test]
async fn a_prewarm_with_bad_input_or_no_holder_is_refused_before_anything_is_sent() {
    let (app, fake, _d) = setup(&["w1"]).await;
    let max = app.config().max_prewarm_pool_size;
    for size in [-1, max + 1] {
        let e = prewarm(&app, HOST_IMAGE, size).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{size}: {e}");
        assert!(e.to_string().contains("pool_size"), "{e}");
    }
    let e = prewarm(&app, "debian", 1).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    // In the catalogue, but no connected worker holds it.
    insert_image(&app, "alpine").await;
    let e = prewarm(&app, "alpine", 1).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
    // The largest pool allowed is allowed.
    let progress = drain(prewarm(&app, HOST_IMAGE, max).await.unwrap()).await;
    assert_eq!(last_of(&progress, "w1").pool_ready, max);
}

#[tokio::test]
async fn the_builtin_image_cannot_be_deleted() {
    let (app, fake, _d) = setup(&["w1"]).await;
    let e = delete(&app, HOST_IMAGE).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(get(&app, HOST_IMAGE).await.is_ok());
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn a_delete_forgets_the_image_and_tells_every_connected_worker_once() {
    let (app, fake, _d) = setup(&["w1", "w2"]).await;
    insert_image(&app, "alpine").await;
    insert_image(&app, "node").await;
    app.hub().set_image("w1", "alpine", true);
    delete(&app, "alpine").await.unwrap();
    let e = get(&app, "alpine").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert!(exists(&app, "node").await.unwrap(), "only that one goes");
    assert!(
        !app.hub().has_image("w1", "alpine"),
        "no sandbox is placed on it by that image again"
    );
    let mut told: Vec<(String, String)> = fake
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::DeleteImage { addr, name } => Some((addr, name)),
            _ => None,
        })
        .collect();
    told.sort();
    assert_eq!(
        told,
        [
            ("w1.test:7071".to_string(), "alpine".to_string()),
            ("w2.test:7071".to_string(), "alpine".to_string()),
        ],
        "every worker's data plane, whether or not it was known to hold it"
    );
    // Twice: NOT_FOUND, and nobody is told again.
    fake.clear();
    let e = delete(&app, "alpine").await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn an_import_no_data_plane_takes_is_an_error_and_records_nothing() {
    let (app, fake, _d) = setup(&["w1"]).await;
    let data = futures::stream::iter(vec![Ok(b"not a tarball".to_vec())]);
    let e = import(&app, "alpine", "", data).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.to_string().contains("w1.test:7071"), "names where: {e}");
    assert_eq!(image_rows(&app).await, 0);
    assert!(!exists(&app, "alpine").await.unwrap());
    assert!(!app.hub().has_image("w1", "alpine"));
    assert!(
        fake.calls().is_empty(),
        "no worker took it, so none is told to forget it"
    );
}

#[tokio::test]
async fn an_import_with_no_worker_or_a_bad_name_or_path_is_refused() {
    let (app, _fake, _d) = setup(&[]).await;
    let none = || futures::stream::iter(Vec::<crate::error::Result<Vec<u8>>>::new());
    let e = import(&app, "alpine", "", none()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.to_string().contains("no connected worker"), "{e}");
    for (name, path) in [
        (HOST_IMAGE, ""),
        ("", ""),
        ("a b", ""),
        ("snapshot/sn_1", ""),
        ("alpine", "relative/alpine.tar"),
    ] {
        let e = import(&app, name, path, none()).await.unwrap_err();
        assert_eq!(
            e.code(),
            tonic::Code::InvalidArgument,
            "{name:?} {path:?}: {e}"
        );
    }
    assert_eq!(image_rows(&app).await, 0);
}
