//! What workers' reports change (`control.rs`), against the fake workers:
//! the fence on a report (only the holding worker, at the generation the
//! server holds), what a (re)registering worker is told to let go of and
//! what it keeps, the periodic orphan sweep, what an operation answers
//! when the holding worker is away, and the push of a tenant's changed
//! secrets to the sandboxes that name them. These are the rules that keep
//! a sandbox from running in two places and a late report from rewriting
//! a moved sandbox; a regression here is silent in the happy path.

use super::*;
use crate::app::App;
use crate::auth::Principal;
use crate::domain::secrets::{self, Delivery};
use crate::domain::state::SandboxState;
use crate::domain::tenants::TenantScope;
use crate::domain::test_support::{app_with, caller, settled, small, tenant};
use crate::workers::fake::{self, FakeWorkers};
use sea_orm::ActiveModelTrait;
use std::sync::Arc;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1::SandboxState as P;
use wpb::command::Action;

type Setup = (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir, Principal);

/// An app with tenant `ten_o` and `workers` connected.
async fn setup(workers: &[&str]) -> Setup {
    let ws: Vec<_> = workers.iter().map(|w| (*w, (8000, 8192, 10))).collect();
    let (app, fake, dir) = app_with("ten_o", &ws).await;
    (app, fake, dir, caller("ten_o"))
}

/// A running sandbox of `ten_o` on w1 at generation 1, made by `create`.
async fn running(app: &Arc<App>, p: &Principal, n: NewSandbox) -> sandbox::Model {
    let row = create(app, p, n).await.unwrap();
    settled(app, &row.id, "running").await
}

/// A row of `ten_o` written directly: where it is, at which generation.
async fn put_row(
    app: &App,
    id: &str,
    worker: Option<&str>,
    generation: i64,
    state: &str,
) -> sandbox::Model {
    let mut r = super::record::tests::row();
    r.id = id.into();
    r.tenant_id = "ten_o".into();
    r.worker_id = worker.map(Into::into);
    r.generation = generation;
    r.state = state.into();
    sandbox::ActiveModel::from(r)
        .insert(app.db())
        .await
        .unwrap()
}

/// What a worker says it holds.
fn report(id: &str, generation: i64, state: P) -> wpb::SandboxStatus {
    wpb::SandboxStatus {
        sandbox_id: id.into(),
        generation,
        state: state as i32,
        message: String::new(),
        fenced: false,
        container_gone: false,
    }
}

/// The deletes among `cmds`: (sandbox, generation, keep_shared_disk), sorted.
fn deletes(cmds: &[wpb::Command]) -> Vec<(String, i64, bool)> {
    let mut out: Vec<_> = cmds
        .iter()
        .filter_map(|c| match &c.action {
            Some(Action::Delete(d)) => {
                Some((c.sandbox_id.clone(), c.generation, d.keep_shared_disk))
            }
            _ => None,
        })
        .collect();
    out.sort();
    out
}

/// The commands sent in the background once `n` match `f` (2 s at most).
async fn sent(
    fake: &FakeWorkers,
    n: usize,
    f: impl Fn(&str, &wpb::Command) -> bool,
) -> Vec<(String, wpb::Command)> {
    for _ in 0..1000 {
        let got: Vec<_> = fake
            .calls()
            .into_iter()
            .filter_map(|c| match c {
                fake::Call::Command { worker, cmd } if f(&worker, &cmd) => Some((worker, cmd)),
                _ => None,
            })
            .collect();
        if got.len() >= n {
            // Anything else spawned with them has run by now.
            tokio::time::sleep(Duration::from_millis(30)).await;
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "fewer than {n} such commands were sent: {:?}",
        fake.commands()
    );
}

fn is_secrets(_: &str, c: &wpb::Command) -> bool {
    matches!(c.action, Some(Action::UpdateSecrets(_)))
}

fn secrets_of(c: &wpb::Command) -> &wpb::UpdateSecretsCommand {
    match &c.action {
        Some(Action::UpdateSecrets(u)) => u,
        other => panic!("not a secrets update: {other:?}"),
    }
}

#[tokio::test]
async fn a_report_from_the_holding_worker_at_its_generation_is_applied() {
    let (app, _fake, _d, p) = setup(&["w1"]).await;
    let row = running(&app, &p, small()).await;
    let mut s = report(&row.id, 1, P::Paused);
    s.message = "idle".into();
    let now = apply_status(&app, "w1", &s).await.unwrap();
    assert_eq!(
        (now.state.as_str(), now.state_message.as_str()),
        ("paused", "idle")
    );
    assert_eq!(super::reload(&app, &row.id).await.unwrap(), now);
    // The state it already has: nothing to write.
    let again = apply_status(&app, "w1", &s).await.unwrap();
    assert_eq!(again, now);
    // An edge the machine lacks is refused even from the holder.
    let e = apply_status(&app, "w1", &report(&row.id, 1, P::Pending))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert_eq!(super::reload(&app, &row.id).await.unwrap().state, "paused");
    assert_eq!(app.metrics().stale_events.get(), 0);
}

#[tokio::test]
async fn a_report_from_another_worker_or_another_generation_is_refused_and_counted() {
    let (app, _fake, _d, p) = setup(&["w1", "w2"]).await;
    let row = running(&app, &p, small()).await;
    let holder = row.worker_id.clone().unwrap();
    let other = if holder == "w1" { "w2" } else { "w1" };
    let cases = [(other, 1), (holder.as_str(), 0), (holder.as_str(), 2)];
    for (i, (w, generation)) in cases.into_iter().enumerate() {
        let e = apply_status(&app, w, &report(&row.id, generation, P::Stopped))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Aborted, "{w} {generation}: {e}");
        assert!(e.to_string().contains("stale report"), "{e}");
        assert_eq!(app.metrics().stale_events.get(), i as u64 + 1);
        assert_eq!(
            super::reload(&app, &row.id).await.unwrap(),
            row,
            "{w} at {generation} changed the row"
        );
    }
    // Not a stale report, and not counted as one: an unknown state, an
    // unknown sandbox.
    let mut bad = report(&row.id, 1, P::Stopped);
    bad.state = 99;
    let e = apply_status(&app, &holder, &bad).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    let e = apply_status(&app, &holder, &report("sbx_nope", 1, P::Stopped))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    assert_eq!(app.metrics().stale_events.get(), 3);
}

#[tokio::test]
async fn a_create_answer_the_fence_refuses_has_the_worker_delete_its_copy() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    // The worker built it at a generation the server does not hold.
    fake.script(|_, cmd| match cmd.action {
        Some(Action::Create(_)) => {
            let mut r = fake::healthy(cmd);
            r.status.as_mut().unwrap().generation = cmd.generation + 1;
            Some(Ok(r))
        }
        _ => None,
    });
    let row = create(&app, &p, small()).await.unwrap();
    let got = sent(&fake, 1, |_, c| matches!(c.action, Some(Action::Delete(_)))).await;
    assert_eq!(got[0].0, "w1");
    let cmds: Vec<_> = got.into_iter().map(|(_, c)| c).collect();
    assert_eq!(deletes(&cmds), [(row.id.clone(), 2, true)]);
    assert_eq!(app.metrics().stale_events.get(), 1);
    assert_eq!(app.metrics().orphans_removed.get(), 1);
    let now = super::reload(&app, &row.id).await.unwrap();
    assert_eq!((now.state.as_str(), now.generation), ("starting", 1));
}

#[tokio::test]
async fn a_registering_worker_lets_go_of_what_the_server_does_not_keep_and_keeps_the_rest() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let kept = running(&app, &p, small()).await;
    put_row(&app, "sbx_gone", Some("w1"), 1, "deleted").await;
    let elsewhere = put_row(&app, "sbx_else", Some("w2"), 1, "running").await;
    let newer = put_row(&app, "sbx_newer", Some("w1"), 2, "running").await;
    fake.clear();
    let held = [
        report(&kept.id, 1, P::Paused),
        report("sbx_unknown", 3, P::Running),
        report("sbx_gone", 1, P::Running),
        report("sbx_else", 1, P::Running),
        report("sbx_newer", 1, P::Running),
    ];
    let out = reconcile(&app, "w1", &held).await;
    // A copy of a sandbox that lives on (moved, or a later generation)
    // leaves its shared disk to the holder; one nobody keeps does not.
    assert_eq!(
        deletes(&out),
        [
            ("sbx_else".to_string(), 1, true),
            ("sbx_gone".to_string(), 1, false),
            ("sbx_newer".to_string(), 1, true),
            ("sbx_unknown".to_string(), 3, false),
        ]
    );
    assert_eq!(out.len(), 4, "nothing else is sent: {out:?}");
    // The kept one takes the state its worker reports.
    assert_eq!(super::reload(&app, &kept.id).await.unwrap().state, "paused");
    // The others are as they were: a registration moves nothing it does
    // not hold.
    assert_eq!(super::reload(&app, "sbx_else").await.unwrap(), elsewhere);
    assert_eq!(super::reload(&app, "sbx_newer").await.unwrap(), newer);
    assert_eq!(
        super::reload(&app, "sbx_gone").await.unwrap().state,
        "deleted"
    );
    assert!(
        fake.calls().is_empty(),
        "the deletes are the caller's to send"
    );
}

#[tokio::test]
async fn a_registration_sets_right_a_restarted_host_and_a_stop_cut_short() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    // Its host restarted under it (restart policy always): stopped, then
    // started again on the same worker.
    let restarted = running(&app, &p, small()).await;
    // A stop the server asked and the worker never did.
    let stopping = running(&app, &p, small()).await;
    let stopping = super::control::transition(
        &app,
        &stopping,
        super::lifecycle::Edge::To(SandboxState::Stopping, ""),
    )
    .await
    .unwrap();
    fake.clear();
    let mut gone = report(&restarted.id, 1, P::Stopped);
    gone.container_gone = true;
    let out = reconcile(&app, "w1", &[gone, report(&stopping.id, 1, P::Running)]).await;
    assert!(out.is_empty(), "nothing to let go of: {out:?}");
    let row = settled(&app, &restarted.id, "running").await;
    assert!(row.state_message.contains("host restarted"), "{row:?}");
    settled(&app, &stopping.id, "stopped").await;
    let mut sent = fake.commands();
    sent.sort();
    assert_eq!(
        sent,
        [
            ("w1".to_string(), "start", restarted.id.clone()),
            ("w1".to_string(), "stop", stopping.id.clone()),
        ]
    );
}

#[tokio::test]
async fn the_orphan_sweep_deletes_what_is_not_kept_and_applies_no_state() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let kept = running(&app, &p, small()).await;
    put_row(&app, "sbx_gone", Some("w1"), 1, "deleted").await;
    put_row(&app, "sbx_else", Some("w2"), 1, "running").await;
    fake.clear();
    let held = [
        report(&kept.id, 1, P::Paused),
        report("sbx_unknown", 1, P::Running),
        report("sbx_gone", 1, P::Running),
        report("sbx_else", 1, P::Running),
    ];
    let out = orphans(&app, "w1", &held).await;
    assert_eq!(
        deletes(&out),
        [
            ("sbx_else".to_string(), 1, true),
            ("sbx_gone".to_string(), 1, false),
            ("sbx_unknown".to_string(), 1, false),
        ]
    );
    assert_eq!(out.len(), 3);
    assert_eq!(app.metrics().orphans_removed.get(), 3);
    // A worker's records lag the server's transitions: the sweep leaves
    // the kept one's state alone.
    assert_eq!(super::reload(&app, &kept.id).await.unwrap(), kept);
    assert!(orphans(&app, "w1", &[]).await.is_empty());
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn an_unplaced_sandbox_or_an_absent_worker_is_refused_before_anything_is_sent() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let row = running(&app, &p, small()).await;
    assert_eq!(require_worker(&app, &row).await.unwrap(), "w1");
    let unplaced = put_row(&app, "sbx_unplaced", None, 1, "running").await;
    let e = require_worker(&app, &unplaced).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(e.to_string().contains("not placed"), "{e}");
    app.hub().detach("w1", 1);
    let e = require_worker(&app, &row).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.to_string().contains("w1"), "{e}");
    // An operation on it answers so, and sends nothing.
    fake.clear();
    let e = pause(&app, row.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(fake.calls().is_empty());
    assert_eq!(super::reload(&app, &row.id).await.unwrap(), row);
}

#[tokio::test]
async fn a_changed_secret_is_pushed_to_the_sandboxes_that_name_it_and_only_those() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let scope = TenantScope::of_stored("ten_o");
    secrets::put(&app, &scope, "API_KEY", "v1", Delivery::Env, None)
        .await
        .unwrap();
    // `_` in a LIKE pattern matches any character: this name is not it.
    secrets::put(&app, &scope, "APIXKEY", "x", Delivery::Env, None)
        .await
        .unwrap();
    let names = |n: &str| NewSandbox {
        secret_names: vec![n.to_string()],
        ..small()
    };
    let named = running(&app, &p, names("API_KEY")).await;
    let lookalike = running(&app, &p, names("APIXKEY")).await;
    let plain = running(&app, &p, small()).await;
    let deleted = running(&app, &p, names("API_KEY")).await;
    delete(&app, deleted).await.unwrap();
    // Another tenant's sandbox naming a secret of the same name.
    tenant(app.db(), "ten_b", false, 10).await;
    let b = TenantScope::of_stored("ten_b");
    secrets::put(&app, &b, "API_KEY", "b1", Delivery::Env, None)
        .await
        .unwrap();
    running(&app, &caller("ten_b"), names("API_KEY")).await;
    fake.clear();

    secrets::put(&app, &scope, "API_KEY", "v2", Delivery::Env, None)
        .await
        .unwrap();
    let got = sent(&fake, 1, is_secrets).await;
    assert_eq!(got.len(), 1, "only the one that names it: {got:?}");
    let (worker, cmd) = &got[0];
    assert_eq!(
        (worker.as_str(), cmd.sandbox_id.as_str()),
        ("w1", named.id.as_str())
    );
    assert_eq!(cmd.generation, named.generation);
    let first = secrets_of(cmd);
    assert_eq!(first.env.get("API_KEY").map(String::as_str), Some("v2"));
    assert!(first.revision > 0);
    assert_ne!(named.id, lookalike.id);
    assert_ne!(named.id, plain.id);

    // Deleted from the store: the sandbox runs on without it, and the
    // later update carries a later revision.
    fake.clear();
    secrets::delete(&app, &scope, "API_KEY").await.unwrap();
    let got = sent(&fake, 1, is_secrets).await;
    assert_eq!(got.len(), 1, "{got:?}");
    let second = secrets_of(&got[0].1);
    assert_eq!(got[0].1.sandbox_id, named.id);
    assert!(!second.env.contains_key("API_KEY"), "{second:?}");
    assert!(second.revision > first.revision);
    // The record keeps the name; nothing else changed.
    assert_eq!(
        super::reload(&app, &named.id).await.unwrap().state,
        "running"
    );
}

#[tokio::test]
async fn a_worker_away_when_a_secret_changed_gets_it_when_it_registers() {
    let (app, fake, _d, p) = setup(&["w1"]).await;
    let scope = TenantScope::of_stored("ten_o");
    secrets::put(&app, &scope, "TOKEN", "old", Delivery::Env, None)
        .await
        .unwrap();
    let row = running(
        &app,
        &p,
        NewSandbox {
            secret_names: vec!["TOKEN".into()],
            ..small()
        },
    )
    .await;
    app.hub().detach("w1", 1);
    secrets::put(&app, &scope, "TOKEN", "new", Delivery::Env, None)
        .await
        .unwrap();
    // Tried and not delivered: the fake records it, the worker never got it.
    sent(&fake, 1, is_secrets).await;
    fake.clear();
    fake.connect(&app, "w1", (8000, 8192, 10)).await;
    let out = reconcile(&app, "w1", &[report(&row.id, 1, P::Running)]).await;
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        (out[0].sandbox_id.as_str(), out[0].generation),
        (row.id.as_str(), 1)
    );
    assert_eq!(
        secrets_of(&out[0]).env.get("TOKEN").map(String::as_str),
        Some("new")
    );
    // A failed sandbox gets none.
    let failed = super::control::transition(
        &app,
        &row,
        super::lifecycle::Edge::To(SandboxState::Failed, "broke"),
    )
    .await
    .unwrap();
    let out = reconcile(&app, "w1", &[report(&failed.id, 1, P::Failed)]).await;
    assert!(out.is_empty(), "{out:?}");
}
