//! The autopilot's decisions (`autopilot.rs`) against the fake workers: a
//! worker whose lease lapsed is marked lost (once, audited); its live
//! sandboxes move only after the grace period and only as far as its
//! reported fence scope covers them (what it stopped itself), to a live
//! worker at the next generation; a stopped sandbox, or one that waits
//! for its worker, stays; a worker back before moves began keeps its
//! sandboxes; with no room nothing moves and it is retried; moves per
//! tick are bounded; and the two registration-time paths, `restart_fenced`
//! and `recover_missing`. A mistake here runs a sandbox in two places or
//! loses it, so each test checks where every sandbox is afterwards and
//! what each worker was told. Time is moved by rewriting the workers'
//! rows (their lease, when they were found lost), never by sleeping.

use super::autopilot::{Autopilot, recover_missing, restart_fenced};
use super::fencing::FenceScope;
use crate::app::App;
use crate::db::entity::{audit_event, sandbox, worker};
use crate::domain::test_support;
use crate::workers::fake::{self, FakeWorkers};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;

const TENANT: &str = "ten_a";

/// An app with a tenant and `workers` connected, each with room for its
/// number of sandboxes; the first is attached first (session 1).
async fn setup(workers: &[(&str, i64)]) -> (Arc<App>, Arc<FakeWorkers>, tempfile::TempDir) {
    let ws: Vec<_> = workers
        .iter()
        .map(|(w, n)| (*w, (8000, 8192, *n)))
        .collect();
    test_support::app_with(TENANT, &ws).await
}

/// A sandbox row on `worker`, generation 1, that chose `loss` ("move",
/// "wait", or "" for the platform's default, which is wait).
async fn sandbox_on(
    app: &App,
    id: &str,
    worker: &str,
    state: &str,
    loss: &str,
    created_at: i64,
) -> sandbox::Model {
    let mut r = test_support::row(id, TENANT, worker, state);
    r.worker_loss = loss.into();
    r.created_at = created_at;
    r.updated_at = created_at;
    sandbox::ActiveModel::from(r)
        .insert(app.db())
        .await
        .unwrap()
}

async fn row(app: &App, id: &str) -> sandbox::Model {
    sandbox::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap()
}

async fn worker_row(app: &App, id: &str) -> worker::Model {
    worker::Entity::find_by_id(id.to_string())
        .one(app.db())
        .await
        .unwrap()
        .unwrap()
}

async fn edit_worker(app: &App, id: &str, f: impl FnOnce(&mut worker::ActiveModel)) {
    let mut am: worker::ActiveModel = worker_row(app, id).await.into();
    f(&mut am);
    am.update(app.db()).await.unwrap();
}

async fn db_now(app: &App) -> i64 {
    super::lease::db_now_ms(app.db()).await.unwrap()
}

/// Its lease lapsed a second ago; it fences at `scope`.
async fn lapse(app: &App, id: &str, scope: FenceScope) {
    let now = db_now(app).await;
    edit_worker(app, id, |w| {
        w.lease_expires_at = Set(now - 1000);
        w.fence_scope = Set(scope.number() as i64);
    })
    .await;
}

/// Lost (its lease lapsed) longer ago than the grace period.
async fn lost_past_grace(app: &App, id: &str, scope: FenceScope) {
    lapse(app, id, scope).await;
    let at = db_now(app).await - app.config().failover_grace.as_millis() as i64 - 1000;
    edit_worker(app, id, |w| {
        w.lost_at = Set(at);
        w.last_lost_at = Set(at);
    })
    .await;
}

/// Its lease renewed by a beat of its current session, reporting `scope`.
async fn renew(app: &App, id: &str, scope: FenceScope) -> crate::domain::workers::Renewal {
    let session_at = worker_row(app, id).await.session_at;
    crate::domain::workers::heartbeat(app, id, session_at, scope)
        .await
        .unwrap()
}

async fn audited(app: &App, method: &str) -> Vec<audit_event::Model> {
    app.audit().flush().await;
    audit_event::Entity::find()
        .filter(audit_event::Column::Method.eq(method))
        .all(app.db())
        .await
        .unwrap()
}

/// A background create applied: the row running where it was sent.
async fn running(app: &App, id: &str) -> sandbox::Model {
    for _ in 0..1000 {
        let r = row(app, id).await;
        if r.state == "running" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("sandbox {id} never ran: {:?}", row(app, id).await);
}

/// The commands sent once `n` have been (background ones included),
/// sorted.
async fn commands(fake: &FakeWorkers, n: usize) -> Vec<(String, &'static str, String)> {
    for _ in 0..1000 {
        if fake.commands().len() >= n {
            tokio::time::sleep(Duration::from_millis(30)).await;
            let mut c = fake.commands();
            c.sort();
            return c;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {n} commands: {:?}", fake.commands());
}

/// The generation each create for `id` carried.
fn create_generations(fake: &FakeWorkers, id: &str) -> Vec<(String, i64)> {
    fake.calls()
        .into_iter()
        .filter_map(|c| match c {
            fake::Call::Command { worker, cmd }
                if cmd.sandbox_id == id
                    && matches!(cmd.action, Some(wpb::command::Action::Create(_))) =>
            {
                Some((worker, cmd.generation))
            }
            _ => None,
        })
        .collect()
}

fn c(worker: &str, action: &'static str, id: &str) -> (String, &'static str, String) {
    (worker.to_string(), action, id.to_string())
}

#[tokio::test]
async fn a_worker_whose_lease_lapsed_is_marked_lost_once_audited_and_keeps_its_sandboxes_through_the_grace_period()
 {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    sandbox_on(&app, "sbx_m", "w1", "running", "move", 1).await;
    app.hub().detach("w1", 1);
    lapse(&app, "w1", FenceScope::Movable).await;
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    let w1 = worker_row(&app, "w1").await;
    assert!(w1.lost_at > 0, "{w1:?}");
    assert_eq!(w1.last_lost_at, w1.lost_at);
    assert_eq!(w1.moving_since, 0, "no move began");
    assert_eq!(worker_row(&app, "w2").await.lost_at, 0, "its lease holds");
    assert_eq!(app.metrics().failover.workers_lost.get(), 1);
    let a = audited(&app, "autopilot.WorkerLost").await;
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        (a[0].resource_id.as_str(), a[0].outcome.as_str()),
        ("w1", "UNAVAILABLE")
    );
    assert!(a[0].actor_id.starts_with("autopilot:"), "{a:?}");
    // Within its grace period it may not have stopped its sandbox yet:
    // nothing moves, and it is not marked again.
    ap.tick(&app).await.unwrap();
    assert_eq!(worker_row(&app, "w1").await.lost_at, w1.lost_at);
    assert_eq!(app.metrics().failover.workers_lost.get(), 1);
    assert_eq!(audited(&app, "autopilot.WorkerLost").await.len(), 1);
    let m = row(&app, "sbx_m").await;
    assert_eq!((m.worker_id.as_deref(), m.generation), (Some("w1"), 1));
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn after_the_grace_period_what_its_fence_stopped_moves_to_a_live_worker_at_the_next_generation()
 {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    sandbox_on(&app, "sbx_run", "w1", "running", "move", 1).await;
    sandbox_on(&app, "sbx_pause", "w1", "paused", "move", 2).await;
    let stopped = sandbox_on(&app, "sbx_stop", "w1", "stopped", "move", 3).await;
    // Local disk and no choice made: it runs on there, waiting.
    let waits = sandbox_on(&app, "sbx_wait", "w1", "running", "", 4).await;
    app.hub().detach("w1", 1);
    lost_past_grace(&app, "w1", FenceScope::Movable).await;
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    for id in ["sbx_run", "sbx_pause"] {
        let r = running(&app, id).await;
        assert_eq!(
            (r.worker_id.as_deref(), r.generation),
            (Some("w2"), 2),
            "{r:?}"
        );
        assert!(r.state_message.contains("moved from worker w1"), "{r:?}");
        assert!(r.state_message.contains("empty one"), "local disk: {r:?}");
        assert_eq!(create_generations(&fake, id), [("w2".to_string(), 2)]);
    }
    assert_eq!(
        commands(&fake, 2).await,
        [c("w2", "create", "sbx_pause"), c("w2", "create", "sbx_run")],
        "nothing to the lost worker, nothing for the others"
    );
    assert_eq!(row(&app, "sbx_stop").await, stopped);
    assert_eq!(row(&app, "sbx_wait").await, waits);
    let w1 = worker_row(&app, "w1").await;
    assert!(w1.moving_since > 0 && w1.last_moved_at > 0, "{w1:?}");
    assert_eq!(app.metrics().failover.moved.get(), 2);
    assert_eq!(app.metrics().failover.waves.get(), 1);
    assert_eq!(audited(&app, "autopilot.MoveLostWorker").await.len(), 1);
    let moved = audited(&app, "autopilot.MoveSandbox").await;
    assert_eq!(moved.len(), 2);
    assert!(moved.iter().all(|a| a.tenant_id == TENANT), "{moved:?}");
    // The failover history holds both, from w1 to w2, newest first, and
    // pages by cursor.
    use crate::domain::sandboxes::history::{self, Cause};
    let (h, next) = crate::domain::paged_by(
        history::moves(&app, "", "w1", 0, 1).await.unwrap(),
        1,
        |l| crate::domain::encode_cursor(l.id),
    );
    let before = crate::domain::decode_cursor(&next).unwrap();
    assert_eq!(before, h[0].id);
    let rest = history::moves(&app, "", "w1", before, 10).await.unwrap();
    let all: Vec<_> = h.iter().chain(&rest).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all[0].id > all[1].id);
    for m in &all {
        assert_eq!(
            (m.from_worker.as_str(), m.to_worker.as_str(), m.generation),
            ("w1", "w2", 2),
            "{m:?}"
        );
        assert_eq!(Cause::parse(&m.cause).unwrap(), Cause::WorkerLost);
        assert!(!m.workspace_kept, "local disks: {m:?}");
        assert_eq!(m.tenant_id, TENANT);
    }
    let one = history::moves(&app, "sbx_run", "", 0, 10).await.unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].sandbox_id, "sbx_run");
    assert!(
        history::moves(&app, "", "w9", 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    for bad in ["o5", "c0", "c-1", "cx", "5"] {
        assert!(crate::domain::decode_cursor(bad).is_err(), "{bad}");
    }

    // Nothing more to move: the next tick sends nothing, and the worker
    // stays lost while its lease is lapsed.
    fake.clear();
    ap.tick(&app).await.unwrap();
    assert!(fake.calls().is_empty());
    assert_eq!(worker_row(&app, "w1").await.lost_at, w1.lost_at);
    assert_eq!(app.metrics().failover.waves.get(), 1);
    // Back: once moves began its renewals tell it to fence; with nothing
    // left to move its mark is cleared, its last loss kept (cooldown).
    assert!(renew(&app, "w1", FenceScope::Movable).await.fence);
    ap.tick(&app).await.unwrap();
    let back = worker_row(&app, "w1").await;
    assert_eq!((back.lost_at, back.moving_since), (0, 0), "{back:?}");
    assert_eq!(back.last_lost_at, w1.lost_at);
    assert!(!renew(&app, "w1", FenceScope::Movable).await.fence);
}

#[tokio::test]
async fn only_what_the_lost_workers_fence_scope_covers_is_moved() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    sandbox_on(&app, "sbx_m", "w1", "running", "move", 1).await;
    sandbox_on(&app, "sbx_w", "w1", "running", "wait", 2).await;
    app.hub().detach("w1", 1);
    // It fenced nothing (it was alone when its lease lapsed): everything
    // runs on there, nothing moves, no move begins.
    lost_past_grace(&app, "w1", FenceScope::None).await;
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    assert!(fake.calls().is_empty());
    assert_eq!(worker_row(&app, "w1").await.moving_since, 0);
    assert_eq!(row(&app, "sbx_m").await.worker_id.as_deref(), Some("w1"));
    // The shared scope on a local disk: what chose to move, moves; what
    // waits stays.
    lost_past_grace(&app, "w1", FenceScope::Shared).await;
    ap.tick(&app).await.unwrap();
    assert_eq!(
        running(&app, "sbx_m").await.worker_id.as_deref(),
        Some("w2")
    );
    assert_eq!(row(&app, "sbx_w").await.worker_id.as_deref(), Some("w1"));
    // Both on shared storage: the waiting one's files come along, so its
    // worker stopped it and it moves too, workspace and all.
    for w in ["w1", "w2"] {
        edit_worker(&app, w, |m| m.workspace_backend = Set("shared".into())).await;
    }
    ap.tick(&app).await.unwrap();
    let r = running(&app, "sbx_w").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w2"), 2));
    assert!(r.state_message.contains("shared storage"), "{r:?}");
    assert_eq!(
        commands(&fake, 2).await,
        [c("w2", "create", "sbx_m"), c("w2", "create", "sbx_w")]
    );
}

#[tokio::test]
async fn with_no_room_nothing_moves_it_is_audited_once_and_retried_every_tick() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 1)]).await;
    // w2's one slot is taken.
    sandbox_on(&app, "sbx_full", "w2", "running", "", 1).await;
    let m = sandbox_on(&app, "sbx_m", "w1", "running", "move", 2).await;
    app.hub().detach("w1", 1);
    lost_past_grace(&app, "w1", FenceScope::Movable).await;
    let mut ap = Autopilot::default();
    for _ in 0..3 {
        ap.tick(&app).await.unwrap();
        assert_eq!(row(&app, "sbx_m").await, m, "it waits where it was");
        assert_eq!(app.metrics().failover.waiting.get(), 1);
    }
    assert!(fake.calls().is_empty());
    assert_eq!(
        app.metrics().failover.no_capacity.get(),
        1,
        "once per episode"
    );
    assert_eq!(
        app.metrics().failover.move_failures.get(),
        0,
        "waiting, not failing"
    );
    let a = audited(&app, "autopilot.NoCapacity").await;
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].outcome, "UNAVAILABLE");
    // Room appears: the next tick moves it there.
    fake.connect(&app, "w3", (8000, 8192, 10)).await;
    ap.tick(&app).await.unwrap();
    let r = running(&app, "sbx_m").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w3"), 2));
    assert_eq!(app.metrics().failover.waiting.get(), 0);
    assert_eq!(commands(&fake, 1).await, [c("w3", "create", "sbx_m")]);
}

#[tokio::test]
async fn at_most_failover_rate_sandboxes_move_per_tick_the_oldest_first() {
    let (app, fake, _d) = setup(&[("w1", 100), ("w2", 100)]).await;
    let rate = app.config().failover_rate as usize;
    let ids: Vec<String> = (0..=rate).map(|i| format!("sbx_{i:03}")).collect();
    for (i, id) in ids.iter().enumerate() {
        // Created newest first, so the order is not the ids'.
        sandbox_on(&app, id, "w1", "running", "move", 1000 - i as i64).await;
    }
    app.hub().detach("w1", 1);
    lost_past_grace(&app, "w1", FenceScope::Movable).await;
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    assert_eq!(app.metrics().failover.moved.get(), rate as u64);
    assert_eq!(commands(&fake, rate).await.len(), rate);
    // The newest one waits for the next tick.
    let last = row(&app, &ids[0]).await;
    assert_eq!(
        (last.worker_id.as_deref(), last.generation),
        (Some("w1"), 1)
    );
    for id in &ids[1..] {
        assert_eq!(row(&app, id).await.worker_id.as_deref(), Some("w2"), "{id}");
    }
    ap.tick(&app).await.unwrap();
    assert_eq!(
        running(&app, &ids[0]).await.worker_id.as_deref(),
        Some("w2")
    );
    assert_eq!(app.metrics().failover.moved.get(), rate as u64 + 1);
    assert_eq!(
        app.metrics().failover.waves.get(),
        1,
        "one wave over two ticks"
    );
}

#[tokio::test]
async fn a_worker_back_before_moves_began_keeps_its_sandboxes() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    let m = sandbox_on(&app, "sbx_m", "w1", "running", "move", 1).await;
    lost_past_grace(&app, "w1", FenceScope::Movable).await;
    // Its beats came through again before the autopilot's tick.
    assert!(!renew(&app, "w1", FenceScope::Movable).await.fence);
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    let w1 = worker_row(&app, "w1").await;
    assert_eq!((w1.lost_at, w1.moving_since), (0, 0), "{w1:?}");
    assert_eq!(row(&app, "sbx_m").await, m);
    assert!(fake.calls().is_empty());
    let a = audited(&app, "autopilot.WorkerBack").await;
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].resource_id, "w1");
    assert!(audited(&app, "autopilot.MoveLostWorker").await.is_empty());
}

#[tokio::test]
async fn a_fenced_sandbox_starts_again_on_another_worker_else_in_place() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    let a = sandbox_on(&app, "sbx_a", "w1", "running", "move", 1).await;
    restart_fenced(&app, a).await.unwrap();
    let r = running(&app, "sbx_a").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w2"), 2));
    // The old worker is told to let go of the generation it holds.
    assert_eq!(
        commands(&fake, 2).await,
        [c("w1", "delete", "sbx_a"), c("w2", "create", "sbx_a")]
    );
    assert_eq!(create_generations(&fake, "sbx_a"), [("w2".to_string(), 2)]);
    assert_eq!(audited(&app, "autopilot.RestartFenced").await.len(), 1);
    let h = crate::domain::sandboxes::history::moves(&app, "sbx_a", "", 0, 10)
        .await
        .unwrap();
    assert_eq!(
        (
            h.len(),
            h[0].from_worker.as_str(),
            h[0].to_worker.as_str(),
            h[0].cause.as_str()
        ),
        (1, "w1", "w2", "fenced"),
        "{h:?}"
    );
    // No other worker: started again where it is, at the next generation,
    // its state message saying what became of its workspace.
    app.hub().detach("w2", 2);
    fake.clear();
    let b = sandbox_on(&app, "sbx_b", "w1", "running", "move", 2).await;
    restart_fenced(&app, b).await.unwrap();
    let r = running(&app, "sbx_b").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w1"), 2));
    assert!(r.state_message.contains("empty workspace"), "{r:?}");
    assert!(r.state_message.contains("lease lapsed"), "{r:?}");
    assert_eq!(commands(&fake, 1).await, [c("w1", "create", "sbx_b")]);
    assert_eq!(create_generations(&fake, "sbx_b"), [("w1".to_string(), 2)]);
    assert_eq!(app.metrics().failover.moved.get(), 2);
}

#[tokio::test]
async fn a_fenced_sandbox_is_left_to_a_wave_under_way_and_a_stopped_one_stays() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    let stopped = sandbox_on(&app, "sbx_s", "w1", "stopped", "move", 1).await;
    restart_fenced(&app, stopped.clone()).await.unwrap();
    assert_eq!(row(&app, "sbx_s").await, stopped);
    let live = sandbox_on(&app, "sbx_l", "w1", "running", "move", 2).await;
    edit_worker(&app, "w1", |w| w.moving_since = Set(1)).await;
    restart_fenced(&app, live.clone()).await.unwrap();
    assert_eq!(row(&app, "sbx_l").await, live);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(fake.calls().is_empty());
    assert_eq!(app.metrics().failover.moved.get(), 0);
}

#[tokio::test]
async fn a_registering_worker_missing_a_live_sandbox_has_it_started_again() {
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    let held = sandbox_on(&app, "sbx_held", "w1", "running", "", 1).await;
    sandbox_on(&app, "sbx_lost", "w1", "running", "", 2).await;
    let stopped = sandbox_on(&app, "sbx_stop", "w1", "stopped", "", 3).await;
    // Placed after the registration began: not the worker's to know yet.
    let recent = sandbox_on(&app, "sbx_new", "w1", "starting", "", 9000).await;
    recover_missing(&app, "w1", &["sbx_held".to_string()], 5000)
        .await
        .unwrap();
    let r = running(&app, "sbx_lost").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w2"), 2));
    assert_eq!(
        commands(&fake, 2).await,
        [c("w1", "delete", "sbx_lost"), c("w2", "create", "sbx_lost")]
    );
    assert_eq!(row(&app, "sbx_held").await, held);
    assert_eq!(row(&app, "sbx_stop").await, stopped);
    assert_eq!(row(&app, "sbx_new").await, recent);
    assert_eq!(audited(&app, "autopilot.MoveSandbox").await.len(), 1);
    // No other worker: built again on the one that lost it.
    app.hub().detach("w2", 2);
    fake.clear();
    sandbox_on(&app, "sbx_again", "w1", "running", "", 4).await;
    recover_missing(&app, "w1", &["sbx_held".to_string()], 5000)
        .await
        .unwrap();
    let r = running(&app, "sbx_again").await;
    assert_eq!((r.worker_id.as_deref(), r.generation), (Some("w1"), 2));
    assert!(r.state_message.contains("no longer held it"), "{r:?}");
    assert_eq!(
        create_generations(&fake, "sbx_again"),
        [("w1".to_string(), 2)]
    );
}

/// A sandbox runs on without a secret deleted from the store
/// (`secrets_changed`), and so does a moved one: its spec is built again
/// without it. It used to be built with every named secret required,
/// after the row was reassigned, so the failure left it STARTING on the
/// new worker at the next generation with no create ever sent, off the
/// lost worker, where no tick retried it.
#[tokio::test]
async fn a_sandbox_whose_secret_was_deleted_is_not_left_starting_where_no_create_went() {
    use crate::domain::secrets::{self, Delivery};
    use crate::domain::tenants::TenantScope;
    let (app, fake, _d) = setup(&[("w1", 10), ("w2", 10)]).await;
    let scope = TenantScope::of_stored(TENANT);
    secrets::put(&app, &scope, "TOKEN", "v", Delivery::Env, None)
        .await
        .unwrap();
    sandbox_on(&app, "sbx_m", "w1", "running", "move", 1).await;
    sandbox::Entity::update_many()
        .col_expr(
            sandbox::Column::SecretNames,
            sea_orm::sea_query::Expr::value(r#"["TOKEN"]"#),
        )
        .filter(sandbox::Column::Id.eq("sbx_m"))
        .exec(app.db())
        .await
        .unwrap();
    secrets::delete(&app, &scope, "TOKEN").await.unwrap();
    app.hub().detach("w1", 1);
    lost_past_grace(&app, "w1", FenceScope::Movable).await;
    let mut ap = Autopilot::default();
    ap.tick(&app).await.unwrap();
    ap.tick(&app).await.unwrap();
    let r = running(&app, "sbx_m").await;
    assert_eq!(
        (r.worker_id.as_deref(), r.generation),
        (Some("w2"), 2),
        "{r:?}"
    );
    assert!(
        fake.commands().contains(&c("w2", "create", "sbx_m")),
        "the moved sandbox was sent to its new worker: {r:?}"
    );
    let spec = fake
        .calls()
        .into_iter()
        .find_map(|call| match call {
            crate::workers::fake::Call::Command { worker, cmd } if worker == "w2" => {
                match cmd.action {
                    Some(wpb::command::Action::Create(c)) => c.spec,
                    _ => None,
                }
            }
            _ => None,
        })
        .expect("a create with its spec");
    assert!(
        !spec.env.contains_key("TOKEN"),
        "the deleted secret stays gone"
    );
}
