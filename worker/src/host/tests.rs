//! The host's fencing, records, reaping and pool bookkeeping against the
//! recording fake runtime: no root, no container, no mount.

use super::prepare::write_private;
use super::*;
use crate::pool::Shape;
use crate::runtime::ContainerStatus;
use crate::runtime::fake::RecordingRuntime;

struct Fixture {
    host: SandboxHost,
    rt: Arc<RecordingRuntime>,
    dir: tempfile::TempDir,
}

fn fixture(rt: RecordingRuntime, pool_size: usize) -> Fixture {
    fixture_with(rt, pool_size, false)
}

/// `shared`: sandbox disks on shared storage (a directory of the test's).
fn fixture_with(rt: RecordingRuntime, pool_size: usize, shared: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("talon-agent");
    std::fs::write(&agent, b"not really an agent").unwrap();
    let rt = Arc::new(rt);
    let opts = HostOptions {
        pool: PoolOptions {
            size: pool_size,
            ..Default::default()
        },
        shared_disks: shared.then(|| dir.path().join("shared")),
        ..Default::default()
    };
    let host =
        SandboxHost::with_options(&dir.path().join("data"), rt.clone(), &agent, opts).unwrap();
    Fixture { host, rt, dir }
}

fn held(id: &str, generation: i64, state: SandboxPhase) -> Held {
    Held {
        format: STATE_FORMAT,
        sandbox_id: id.into(),
        generation,
        slot: 0,
        state,
        image: None,
        egress: Egress::Open,
        isolation: Default::default(),
        container: None,
        pooled: None,
        init: None,
        secrets_expire_at: None,
        env_unset: None,
        secrets_revision: 0,
        idle_timeout_ms: None,
        move_on_loss: false,
        container_gone: false,
    }
}

/// Writes a record (and its directory) as the host would have.
fn put(f: &Fixture, h: &Held) {
    std::fs::create_dir_all(f.host.layout(&h.sandbox_id).dir).unwrap();
    f.host.save(h).unwrap();
}

fn code(r: anyhow::Result<wpb::SandboxStatus>) -> tonic::Code {
    code_of(&r.expect_err("refused"))
}

fn shape() -> Shape {
    Shape::of(&wpb::SandboxSpec::default())
}

#[tokio::test]
async fn commands_are_fenced_in_both_modes() {
    let f = fixture(
        RecordingRuntime::with(&[("sbx_a", ContainerStatus::Running, 0)]),
        0,
    );
    put(&f, &held("sbx_a", 5, SandboxPhase::Running));
    // Exact: a command for the sandbox as it is names its generation.
    for g in [4, 6] {
        assert_eq!(code(f.host.pause("sbx_a", g).await), tonic::Code::Aborted);
    }
    assert!(f.rt.calls().is_empty(), "{:?}", f.rt.calls());
    let s = f.host.pause("sbx_a", 5).await.unwrap();
    assert_eq!(s.state, SandboxState::Paused as i32);
    assert_eq!(f.host.held("sbx_a").unwrap().state, SandboxPhase::Paused);
    // At least: a create or a delete of an older generation is refused...
    let spec = wpb::SandboxSpec::default();
    assert_eq!(
        code(f.host.create("sbx_a", 4, &spec).await),
        tonic::Code::Aborted
    );
    assert_eq!(code(f.host.delete("sbx_a", 4).await), tonic::Code::Aborted);
    assert_eq!(f.rt.calls(), ["pause sbx_a"]);
    // ...one of the same or a newer generation acts.
    f.host.delete("sbx_a", 5).await.unwrap();
    assert!(f.host.held("sbx_a").is_none());
    assert!(!f.host.layout("sbx_a").dir.exists());
    assert!(f.rt.calls().contains(&"delete sbx_a".to_string()));
    // A create that arrives after its delete builds nothing.
    assert_eq!(
        code(f.host.create("sbx_a", 5, &spec).await),
        tonic::Code::Aborted
    );
    assert!(!f.rt.calls().iter().any(|c| c.starts_with("run")));
    // Not here: NOT_FOUND, not a runtime failure.
    assert_eq!(code(f.host.pause("sbx_b", 1).await), tonic::Code::NotFound);
    assert_eq!(
        code(f.host.create("sbx_pool_x", 1, &spec).await),
        tonic::Code::InvalidArgument
    );
}

#[tokio::test]
async fn dead_sandboxes_are_reaped_and_reported() {
    let f = fixture(
        RecordingRuntime::with(&[("sbx_live", ContainerStatus::Running, 0)]),
        2,
    );
    put(&f, &held("sbx_live", 1, SandboxPhase::Running));
    put(&f, &held("sbx_dead", 3, SandboxPhase::Running));
    put(&f, &held("sbx_stopped", 1, SandboxPhase::Stopped));
    let mut pooled = held("sbx_pool_1", 0, SandboxPhase::Pooled);
    pooled.pooled = Some(shape());
    put(&f, &pooled);

    // What a restarted worker reports: the runtime's word over the record.
    let mut inv = f.host.inventory().await;
    inv.sort_by(|a, b| a.sandbox_id.cmp(&b.sandbox_id));
    let seen: Vec<_> = inv
        .iter()
        .map(|s| (s.sandbox_id.as_str(), s.state, s.message.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("sbx_dead", SandboxState::Failed as i32, "container is gone"),
            ("sbx_live", SandboxState::Running as i32, ""),
            ("sbx_stopped", SandboxState::Stopped as i32, ""),
        ]
    );

    let reaped = f.host.reap_dead().await;
    assert_eq!(reaped.len(), 1, "{reaped:?}");
    assert_eq!(
        (
            reaped[0].sandbox_id.as_str(),
            reaped[0].generation,
            reaped[0].state
        ),
        ("sbx_dead", 3, SandboxState::Failed as i32)
    );
    assert_eq!(f.host.held("sbx_dead").unwrap().state, SandboxPhase::Failed);
    // A dead pooled sandbox is nobody's: it goes, record and directory.
    assert!(f.host.held("sbx_pool_1").is_none());
    assert!(!f.host.layout("sbx_pool_1").dir.exists());
    assert_eq!(
        f.host.held("sbx_live").unwrap().state,
        SandboxPhase::Running
    );
    // Reaping again finds nothing new.
    assert!(f.host.reap_dead().await.is_empty());
    // The periodic reconcile's view leaves pooled sandboxes out.
    assert_eq!(f.host.held_records().len(), 3);
}

/// Fail closed: a record whose state this worker doesn't know is refused
/// every command (never taken for failed or running), and can be deleted.
#[tokio::test]
async fn a_corrupt_record_is_refused_not_guessed() {
    let f = fixture(RecordingRuntime::default(), 0);
    let dir = f.dir.path().join("data/sandboxes/sbx_bad");
    std::fs::create_dir_all(&dir).unwrap();
    let mut json = serde_json::to_value(held("sbx_bad", 2, SandboxPhase::Running)).unwrap();
    json["state"] = "zombie".into();
    std::fs::write(dir.join("state.json"), json.to_string()).unwrap();
    // As a restarted worker reads it.
    let agent = f.dir.path().join("talon-agent");
    let host = SandboxHost::with_options(
        &f.dir.path().join("data"),
        f.rt.clone(),
        &agent,
        HostOptions::default(),
    )
    .unwrap();
    assert!(host.held("sbx_bad").is_none());
    let e = host.pause("sbx_bad", 2).await.unwrap_err();
    assert_eq!(code_of(&e), tonic::Code::Internal, "{e:#}");
    assert!(format!("{e:#}").contains("does not read"), "{e:#}");
    assert_eq!(
        code(
            host.create("sbx_bad", 3, &wpb::SandboxSpec::default())
                .await
        ),
        tonic::Code::Internal
    );
    host.delete("sbx_bad", 3).await.unwrap();
    assert!(!dir.exists());
    assert_eq!(code(host.pause("sbx_bad", 2).await), tonic::Code::NotFound);
}

#[tokio::test]
async fn pool_claims_refuse_what_is_gone_and_reclaim_sorts_the_leftovers() {
    let f = fixture(
        RecordingRuntime::with(&[("sbx_pool_alive", ContainerStatus::Running, 0)]),
        2,
    );
    let pooled = |id: &str| {
        let mut h = held(id, 0, SandboxPhase::Pooled);
        h.pooled = Some(shape());
        h
    };
    // Alive, of this agent: kept. Dead: removed.
    for id in ["sbx_pool_alive", "sbx_pool_dead"] {
        put(&f, &pooled(id));
        let bundle = f.host.layout(id).bundle();
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::write(
            bundle.join("config.json"),
            format!(
                "{{\"process\":{{\"args\":[\"{}\"]}}}}",
                f.host.agent.display()
            ),
        )
        .unwrap();
    }
    // Caught mid-claim: its directory is named apart from the sandbox it
    // records (the server never learnt of it).
    let mut mid = pooled("sbx_pool_mid");
    mid.sandbox_id = "sbx_claimed".into();
    mid.state = SandboxPhase::Claiming;
    std::fs::create_dir_all(f.host.layout("sbx_pool_mid").dir).unwrap();
    write_private(
        &f.host.layout("sbx_pool_mid").dir.join("state.json"),
        &serde_json::to_vec(&mid).unwrap(),
    )
    .unwrap();
    f.host
        .records
        .lock()
        .unwrap()
        .insert("sbx_pool_mid".into(), Ok(mid));

    // A claim of a pooled sandbox whose container is gone fails, and
    // leaves it where it was.
    let e = f
        .host
        .claim("sbx_new", 1, &wpb::SandboxSpec::default(), "sbx_pool_dead")
        .await
        .unwrap_err();
    assert!(format!("{e:#}").contains("gone"), "{e:#}");
    assert!(f.host.layout("sbx_pool_dead").dir.exists());
    assert!(!f.host.layout("sbx_new").dir.exists());
    assert!(f.host.held("sbx_new").is_none());
    // A claim of what is not pooled at all fails the same way.
    assert!(
        f.host
            .claim("sbx_new", 1, &wpb::SandboxSpec::default(), "sbx_pool_none")
            .await
            .is_err()
    );

    f.host.reclaim_pool().await;
    assert_eq!(f.host.pool.ready_of(&shape()), 1);
    assert!(f.host.held("sbx_pool_alive").is_some());
    for gone in ["sbx_pool_dead", "sbx_pool_mid"] {
        assert!(!f.host.layout(gone).dir.exists(), "{gone}");
        assert!(f.host.record(gone).is_err(), "{gone}");
    }
    // The kept one is what the next create of its shape takes.
    assert_eq!(
        f.host.pool.take(&shape()).as_deref(),
        Some("sbx_pool_alive")
    );
}

#[tokio::test]
async fn a_claimed_record_moves_under_the_slot_lock() {
    let f = fixture(RecordingRuntime::default(), 0);
    let mut h = held("pool_x", 0, SandboxPhase::Pooled);
    h.slot = 3;
    put(&f, &h);
    let host = Arc::new(f.host);
    // A create picking a slot holds this lock: while it does, the move
    // waits, and the slot stays recorded as taken.
    let slots = host.slots.lock().await;
    h.sandbox_id = "sbx_claimed".into();
    let mover = tokio::spawn({
        let (host, h) = (host.clone(), h.clone());
        async move { host.move_record("pool_x", &h).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !mover.is_finished(),
        "the record moved outside the slot lock"
    );
    assert_ne!(host.free_slot(), 3);
    drop(slots);
    mover.await.unwrap().unwrap();
    assert_eq!(host.held("sbx_claimed").unwrap().slot, 3);
    assert!(host.held("pool_x").is_none());
    assert_ne!(host.free_slot(), 3);
}

/// The worker drops expired secrets on its own clock, without the
/// control plane: from the spec a stopped sandbox starts again with (a
/// running one's tmpfs the integration test covers), and only once due.
#[tokio::test]
async fn expired_secrets_leave_the_kept_spec_on_the_workers_clock() {
    let f = fixture(RecordingRuntime::with(&[]), 0);
    let now = talon_core::time::now_ms();
    let at = talon_core::time::ms_to_timestamp;
    let mut spec = wpb::SandboxSpec::default();
    spec.env.insert("OLD_ENV".into(), "x".into());
    spec.secret_files.insert("OLD_FILE".into(), b"a".to_vec());
    spec.secret_files.insert("LATER".into(), b"b".to_vec());
    spec.secret_expire_times
        .insert("OLD_ENV".into(), at(now - 10));
    spec.secret_expire_times
        .insert("OLD_FILE".into(), at(now - 10));
    spec.secret_expire_times
        .insert("LATER".into(), at(now + 60_000));
    let mut h = held("sbx_s", 1, SandboxPhase::Stopped);
    h.secrets_expire_at = first_expiry(&spec);
    put(&f, &h);
    keep_spec(&f.host.layout("sbx_s"), &spec).unwrap();
    // Not due: untouched.
    let mut idle = held("sbx_t", 1, SandboxPhase::Stopped);
    idle.secrets_expire_at = Some(now + 60_000);
    put(&f, &idle);
    keep_spec(&f.host.layout("sbx_t"), &spec).unwrap();

    f.host.expire_secrets().await;
    let kept = read_spec(&f.host.layout("sbx_s")).unwrap();
    assert!(kept.env.is_empty(), "{:?}", kept.env);
    assert_eq!(kept.secret_files.keys().collect::<Vec<_>>(), ["LATER"]);
    assert_eq!(
        f.host.held("sbx_s").unwrap().secrets_expire_at,
        Some(now + 60_000)
    );
    assert_eq!(read_spec(&f.host.layout("sbx_t")).unwrap(), spec);
    assert!(f.rt.calls().is_empty(), "{:?}", f.rt.calls());
}

/// Two updates of one sandbox's secrets may arrive out of order: the
/// older revision is ignored, never applied over the newer.
#[tokio::test]
async fn an_older_secrets_update_is_ignored() {
    let f = fixture(RecordingRuntime::with(&[]), 0);
    put(&f, &held("sbx_r", 1, SandboxPhase::Stopped));
    keep_spec(&f.host.layout("sbx_r"), &wpb::SandboxSpec::default()).unwrap();
    let update = |value: &str, revision| wpb::UpdateSecretsCommand {
        secret_files: [("CERT".to_string(), value.as_bytes().to_vec())].into(),
        revision,
        ..Default::default()
    };
    let value = || read_spec(&f.host.layout("sbx_r")).unwrap().secret_files["CERT"].clone();
    f.host
        .update_secrets("sbx_r", 1, &update("new", 20))
        .await
        .unwrap();
    f.host
        .update_secrets("sbx_r", 1, &update("old", 10))
        .await
        .unwrap();
    assert_eq!(value(), b"new");
    f.host
        .update_secrets("sbx_r", 1, &update("newer", 30))
        .await
        .unwrap();
    assert_eq!(value(), b"newer");
    // Fenced like every command.
    assert!(
        f.host
            .update_secrets("sbx_r", 2, &update("x", 40))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn calls_are_turned_away_from_an_idle_pause_until_the_thaw() {
    let f = fixture(RecordingRuntime::default(), 0);
    let id = "sbx_idle";
    f.host.touch(id);
    assert!(
        !f.host.begin_pause(id, Duration::from_secs(60)),
        "not idle yet"
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(f.host.admit(id), "a call resets the idle time");
    assert!(!f.host.begin_pause(id, Duration::from_millis(20)));
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(f.host.begin_pause(id, Duration::from_millis(20)));
    assert!(!f.host.admit(id), "turned away while it pauses and after");
    assert!(!f.host.admit(id));
    f.host.touch(id);
    assert!(f.host.admit(id), "the thaw lets calls in again");
}

/// What a restarted worker finds (after a reboot, or a crash mid-create)
/// is set right: a sandbox whose container vanished is stopped with its
/// workspace and says so; one whose recorded init is another process now
/// (a pid reused after a reboot) too, whatever the runtime's stale state
/// says; a create cut short is removed; a live one is left alone.
#[tokio::test]
async fn a_restarted_worker_stops_what_vanished_and_keeps_what_lives() {
    let f = fixture(
        RecordingRuntime::with(&[
            ("sbx_live", ContainerStatus::Running, 0),
            ("sbx_reused", ContainerStatus::Running, 1),
            ("sbx_old", ContainerStatus::Running, 0),
        ]),
        0,
    );
    put(&f, &held("sbx_live", 1, SandboxPhase::Running));
    std::fs::write(f.host.layout("sbx_live").agent_socket(), b"").unwrap();
    // Alive, but started by a worker older than the agent socket's move:
    // no socket in its directory, so never reachable as it is.
    let mut old = held("sbx_old", 1, SandboxPhase::Running);
    old.format = 1;
    put(&f, &old);
    put(&f, &held("sbx_gone", 2, SandboxPhase::Running));
    put(&f, &held("sbx_frozen", 1, SandboxPhase::Paused));
    put(&f, &held("sbx_building", 1, SandboxPhase::Starting));
    put(&f, &held("sbx_stopped", 1, SandboxPhase::Stopped));
    // Its init was pid 1 with another start time: not the process now.
    let mut reused = held("sbx_reused", 1, SandboxPhase::Running);
    reused.init = Some((1, u64::MAX));
    put(&f, &reused);
    let disk = f.host.layout("sbx_gone").disk_image();
    std::fs::write(&disk, b"the workspace").unwrap();

    let settled = f.host.settle().await;
    assert_eq!(
        settled,
        Settled {
            adopted: 1,
            stopped: 4,
            removed: 1
        }
    );
    for id in ["sbx_gone", "sbx_frozen", "sbx_reused", "sbx_old"] {
        let h = f.host.held(id).unwrap();
        assert_eq!(
            (h.state, h.container_gone, h.init),
            (SandboxPhase::Stopped, true, None),
            "{id}"
        );
    }
    assert_eq!(std::fs::read(&disk).unwrap(), b"the workspace");
    assert_eq!(
        f.host.held("sbx_live").unwrap().state,
        SandboxPhase::Running
    );
    assert!(f.host.held("sbx_building").is_none());
    assert!(!f.host.layout("sbx_building").dir.exists());
    // The stale container of the reused pid is removed, never adopted.
    assert!(f.rt.calls().contains(&"delete sbx_reused".to_string()));
    assert!(!f.rt.calls().iter().any(|c| c.ends_with(" sbx_live")));

    // Reported stopped and gone, so the control plane restarts it per its
    // policy; never failed.
    let inv = f.host.inventory().await;
    let of = |id: &str| inv.iter().find(|s| s.sandbox_id == id).unwrap().clone();
    let gone = of("sbx_gone");
    assert_eq!(
        (gone.state, gone.container_gone, gone.generation),
        (SandboxState::Stopped as i32, true, 2)
    );
    assert!(!of("sbx_stopped").container_gone);
    assert_eq!(of("sbx_live").state, SandboxState::Running as i32);
    // Settling again finds nothing more to do.
    let again = f.host.settle().await;
    assert_eq!((again.stopped, again.removed), (0, 0));
}

/// Only what another worker could start is fenced: nothing while no peer
/// is live; with one, the sandboxes that move even with an empty
/// workspace; with a peer on shared storage, every sandbox of a shared
/// worker. The others run on, untouched.
#[tokio::test]
async fn only_what_another_worker_could_start_is_fenced() {
    use wpb::FenceScope::{Movable, None, Shared};
    for shared in [false, true] {
        let f = fixture_with(
            RecordingRuntime::with(&[
                ("sbx_stay", ContainerStatus::Running, 0),
                ("sbx_pool_c", ContainerStatus::Running, 0),
            ]),
            0,
            shared,
        );
        put(&f, &held("sbx_stay", 1, SandboxPhase::Running));
        // Claimed from the pool: its container keeps the pooled name.
        let mut mover = held("sbx_move", 1, SandboxPhase::Running);
        mover.move_on_loss = true;
        mover.container = Some("sbx_pool_c".into());
        put(&f, &mover);
        let names = |scope| -> Vec<(String, String)> {
            f.host
                .fence_targets(scope)
                .into_iter()
                .map(|t| (t.sandbox, t.container))
                .collect()
        };
        assert!(names(None).is_empty(), "shared={shared}");
        assert!(f.host.fence_all(None).await.is_empty());
        let moving = ("sbx_move".to_string(), "sbx_pool_c".to_string());
        assert_eq!(
            names(Movable),
            std::slice::from_ref(&moving),
            "shared={shared}"
        );
        let want: Vec<_> = if shared {
            vec![moving.clone(), ("sbx_stay".into(), "sbx_stay".into())]
        } else {
            vec![moving.clone()]
        };
        assert_eq!(names(Shared), want, "shared={shared}");
        let fenced = f.host.fence_all(Movable).await;
        assert_eq!(fenced.len(), 1);
        assert!(fenced[0].fenced && fenced[0].sandbox_id == "sbx_move");
        // The fence killed the claimed sandbox's own container.
        assert!(f.rt.calls().contains(&"kill-KILL sbx_pool_c".to_string()));
        assert_eq!(
            f.host.held("sbx_stay").unwrap().state,
            SandboxPhase::Running
        );
        assert!(!f.rt.calls().iter().any(|c| c.ends_with(" sbx_stay")));
    }
}

/// Every state file an earlier worker wrote reads, with what it said
/// and the defaults of what it could not say; written again, it is of
/// this format and reads the same. A newer format is refused.
#[test]
fn every_earlier_state_format_reads() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures: [(&str, &str); 8] = [
        ("01-first.json", include_str!("fixtures/01-first.json")),
        ("02-images.json", include_str!("fixtures/02-images.json")),
        ("03-egress.json", include_str!("fixtures/03-egress.json")),
        ("04-pool.json", include_str!("fixtures/04-pool.json")),
        ("05-init.json", include_str!("fixtures/05-init.json")),
        ("06-secrets.json", include_str!("fixtures/06-secrets.json")),
        ("07-idle.json", include_str!("fixtures/07-idle.json")),
        (
            "08-isolation.json",
            include_str!("fixtures/08-isolation.json"),
        ),
    ];
    for (name, text) in fixtures {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let id = v["sandbox_id"].as_str().unwrap();
        std::fs::create_dir_all(dir.path().join(id)).unwrap();
        std::fs::write(dir.path().join(id).join("state.json"), text).unwrap();
        let _ = name;
    }
    let records = load_records(dir.path());
    let get = |id: &str| -> Held {
        records[id]
            .clone()
            .unwrap_or_else(|e| panic!("{id} does not read: {e}"))
    };
    let f1 = get("sbx_f1");
    assert_eq!(
        (f1.format, f1.generation, f1.slot, f1.state),
        (1, 3, 2, SandboxPhase::Running)
    );
    assert_eq!(f1.egress, Egress::Open, "open before egress policies");
    assert_eq!(f1.isolation, crate::runtime::Isolation::Container);
    assert!(!f1.move_on_loss && !f1.container_gone && f1.init.is_none());
    let f2 = get("sbx_f2");
    let img = f2.image.unwrap();
    assert_eq!(
        (img.name.as_str(), img.config.user.as_str()),
        ("alpine", "1000")
    );
    assert_eq!(img.mode, crate::rootfs::RootfsMode::Overlay);
    let f3 = get("sbx_f3");
    assert!(
        matches!(f3.egress, Egress::Allowlist { .. }),
        "{:?}",
        f3.egress
    );
    assert_eq!(f3.state, SandboxPhase::Paused);
    let f4 = get("sbx_pool_f4");
    assert_eq!(f4.state, SandboxPhase::Pooled);
    let shape = f4.pooled.unwrap();
    assert_eq!(
        (shape.memory_mib, shape.isolation),
        (512, crate::runtime::Isolation::Container)
    );
    let f5 = get("sbx_f5");
    assert_eq!((f5.init, f5.cid()), (Some((4242, 123456)), "sbx_pool_0c1d"));
    let f6 = get("sbx_f6");
    assert_eq!(
        (
            f6.secrets_expire_at,
            f6.env_unset.clone(),
            f6.secrets_revision
        ),
        (
            Some(1790000000000),
            Some(vec!["OLD_TOKEN".to_string()]),
            1765000000000000
        )
    );
    assert_eq!(get("sbx_f7").idle_timeout_ms, Some(30000));
    let f8 = get("sbx_f8");
    assert_eq!(
        (f8.isolation, f8.state),
        (crate::runtime::Isolation::Gvisor, SandboxPhase::Failed)
    );

    // Written again by this worker: this format, the same record.
    let f = fixture(RecordingRuntime::default(), 0);
    let mut h = get("sbx_f6");
    std::fs::create_dir_all(f.host.layout("sbx_f6").dir).unwrap();
    f.host.save(&h).unwrap();
    let again = load_records(&f.dir.path().join("data/sandboxes"));
    let back = again["sbx_f6"].clone().unwrap();
    h.format = STATE_FORMAT;
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&h).unwrap()
    );

    // A newer worker's file is refused, not guessed at.
    let newer = dir.path().join("sbx_new");
    std::fs::create_dir_all(&newer).unwrap();
    let mut v = serde_json::to_value(&h).unwrap();
    v["sandbox_id"] = "sbx_new".into();
    v["format"] = (STATE_FORMAT + 1).into();
    std::fs::write(newer.join("state.json"), v.to_string()).unwrap();
    let e = load_records(dir.path())["sbx_new"].clone().unwrap_err();
    assert!(e.contains("newer worker"), "{e}");
}
