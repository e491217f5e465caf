//! Sandbox operations (`ops.rs`) against the fake workers: placement, the
//! commands each operation sends, what the worker's answers do to the
//! record, and what a missing worker answers. No worker, no root.

use super::*;
use crate::app::App;
use crate::auth::Principal;
use crate::domain::test_support::{app_with, caller, settled, small, tenant};
use crate::workers::fake::{self, FakeWorkers};
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;

type Setup = (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir, Principal);

/// An app with tenant `ten_o` and `workers` of `capacity` connected.
async fn setup_with(workers: &[&str], capacity: (i64, i64, i64)) -> Setup {
    let ws: Vec<_> = workers.iter().map(|w| (*w, capacity)).collect();
    let (app, fake, dir) = app_with("ten_o", &ws).await;
    (app, fake, dir, caller("ten_o"))
}

async fn setup(workers: &[&str]) -> Setup {
    setup_with(workers, (8000, 8192, 10)).await
}

#[tokio::test]
async fn a_create_is_placed_on_a_connected_worker_and_runs_when_it_answers() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = create(&app, &p, small()).await.unwrap();
    assert_eq!(row.state, "starting");
    assert_eq!(row.worker_id.as_deref(), Some("w1"));
    assert_eq!(row.generation, 1);
    let row = settled(&app, &row.id, "running").await;
    assert_eq!(row.worker_id.as_deref(), Some("w1"));
    let sent = fake.commands();
    assert_eq!(sent, vec![("w1".to_string(), "create", row.id.clone())]);
    // The spec the worker got is the sandbox's.
    let fake::Call::Command { cmd, .. } = &fake.calls()[0] else {
        panic!("not a command");
    };
    let Some(wpb::command::Action::Create(c)) = &cmd.action else {
        panic!("not a create");
    };
    let spec = c.spec.as_ref().unwrap();
    assert_eq!(spec.image, talon_core::image::HOST_IMAGE);
    assert_eq!(spec.resources.unwrap().cpu_millis, 500);
    assert_eq!(cmd.generation, 1);
    assert!(spec.network_policy.is_some(), "a create names its policy");
}

#[tokio::test]
async fn a_create_the_worker_fails_is_failed_with_its_message() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    fake.script(|_, cmd| {
        Some(Ok(fake::refused(
            cmd,
            tonic::Code::FailedPrecondition,
            "the runtime broke",
        )))
    });
    let row = create(&app, &p, small()).await.unwrap();
    let row = settled(&app, &row.id, "failed").await;
    assert!(row.state_message.contains("the runtime broke"), "{row:?}");
}

#[tokio::test]
async fn with_no_worker_a_create_is_unavailable_and_nothing_is_kept() {
    let (app, fake, _d, p) = setup(&[]).await;
    let e = create(&app, &p, small()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.to_string().contains("no worker is connected"), "{e}");
    assert!(fake.calls().is_empty());
    let held = crate::domain::sandboxes::holdings(app.db(), Some("ten_o"))
        .await
        .unwrap();
    assert_eq!(held.tenant.sandboxes, 0, "the reservation went with it");
}

#[tokio::test]
async fn placement_spreads_a_tenant_keeps_its_fair_share_and_full_workers_are_exhausted() {
    let (app, fake, _d, p) = setup_with(&["w1", "w2"], (8000, 8192, 2)).await;
    let a = create(&app, &p, small()).await.unwrap();
    let b = create(&app, &p, small()).await.unwrap();
    assert_ne!(
        a.worker_id, b.worker_id,
        "the second goes to the emptier worker"
    );
    // Half the platform's 4 sandboxes is this tenant's share.
    let e = create(&app, &p, small()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    assert!(e.to_string().contains("fair share"), "{e}");
    // The platform's tenant has no share to keep: it fills the workers,
    // and then there is no room.
    tenant(app.db(), "ten_p", true, 100).await;
    let admin = caller("ten_p");
    let c = create(&app, &admin, small()).await.unwrap();
    let d = create(&app, &admin, small()).await.unwrap();
    let e = create(&app, &admin, small()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    assert!(e.to_string().contains("no worker has capacity"), "{e}");
    // Creates are sent in the background: once the placed ones run, they
    // were sent, and nothing else was.
    for row in [a, b, c, d] {
        settled(&app, &row.id, "running").await;
    }
    assert_eq!(fake.commands().len(), 4, "only the placed ones were sent");
}

#[tokio::test]
async fn stop_start_pause_resume_send_their_commands_and_apply_the_answers() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = create(&app, &p, small()).await.unwrap();
    let row = settled(&app, &row.id, "running").await;
    let row = pause(&app, row).await.unwrap();
    assert_eq!(row.state, "paused");
    let row = resume(&app, row).await.unwrap();
    assert_eq!(row.state, "running");
    let row = stop(&app, row).await.unwrap();
    assert_eq!(row.state, "stopped");
    let row = start(&app, &p, row).await.unwrap();
    assert_eq!(row.state, "running");
    let actions: Vec<&str> = fake.commands().iter().map(|c| c.1).collect();
    assert_eq!(actions, ["create", "pause", "resume", "stop", "start"]);
    // A pause of a stopped sandbox is refused here, never sent.
    let row = stop(&app, row).await.unwrap();
    fake.clear();
    let e = pause(&app, row).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn a_refusal_changes_nothing_and_keeps_its_meaning() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = create(&app, &p, small()).await.unwrap();
    let row = settled(&app, &row.id, "running").await;
    fake.script(|_, cmd| match cmd.action {
        Some(wpb::command::Action::Pause(_)) => Some(Ok(fake::refused(
            cmd,
            tonic::Code::Aborted,
            "stale generation",
        ))),
        _ => None,
    });
    let e = pause(&app, row.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Aborted, "{e}");
    assert_eq!(super::reload(&app, &row.id).await.unwrap().state, "running");
    // A worker that cannot be reached: UNAVAILABLE, the row as it was.
    fake.script(|w, _| {
        Some(Err(crate::error::Error::Unavailable(format!(
            "worker {w} did not answer"
        ))))
    });
    let e = pause(&app, row.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert_eq!(super::reload(&app, &row.id).await.unwrap().state, "running");
}

#[tokio::test]
async fn a_delete_frees_the_quota_at_once_and_tells_the_worker() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = create(&app, &p, small()).await.unwrap();
    let row = settled(&app, &row.id, "running").await;
    let gone = delete(&app, row.clone()).await.unwrap();
    assert_eq!(gone.state, "deleted");
    assert_eq!(
        fake.commands().last().unwrap(),
        &("w1".to_string(), "delete", row.id.clone())
    );
    let held = crate::domain::sandboxes::holdings(app.db(), Some("ten_o"))
        .await
        .unwrap();
    assert_eq!(held.tenant.sandboxes, 0);
    // Twice is fine, and sends nothing more.
    fake.clear();
    delete(&app, gone).await.unwrap();
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn a_delete_while_the_worker_is_away_still_deletes_the_record() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = create(&app, &p, small()).await.unwrap();
    let row = settled(&app, &row.id, "running").await;
    app.hub().detach("w1", 1);
    fake.clear();
    let gone = delete(&app, row).await.unwrap();
    assert_eq!(gone.state, "deleted");
    assert!(
        fake.calls().is_empty(),
        "nothing sent to a worker that is away; it is told when it registers"
    );
}

/// `talon up`: a create made before the embedded worker has connected
/// waits for it (the server was just started) instead of answering that
/// no worker is connected; a server that expects none answers at once.
#[tokio::test]
async fn a_create_waits_for_the_embedded_worker_of_a_server_just_started() {
    let fake = FakeWorkers::new();
    let (app, _d) = App::for_tests_configured(fake.clone(), |c| c.expects_worker = true).await;
    tenant(app.db(), "ten_o", false, 10).await;
    let (a, f) = (app.clone(), fake.clone());
    let late = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        f.connect(&a, "w1", (8000, 8192, 10)).await;
    });
    let row = create(&app, &caller("ten_o"), small()).await.unwrap();
    assert_eq!(row.worker_id.as_deref(), Some("w1"));
    late.await.unwrap();

    let (app, _fake, _d, p) = setup(&[]).await;
    let t0 = std::time::Instant::now();
    let e = create(&app, &p, small()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "it did not wait"
    );
}
