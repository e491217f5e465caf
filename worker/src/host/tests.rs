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
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("talon-agent");
    std::fs::write(&agent, b"not really an agent").unwrap();
    let rt = Arc::new(rt);
    let opts = HostOptions {
        pool: PoolOptions {
            size: pool_size,
            ..Default::default()
        },
        ..Default::default()
    };
    let host =
        SandboxHost::with_options(&dir.path().join("data"), rt.clone(), &agent, opts).unwrap();
    Fixture { host, rt, dir }
}

fn held(id: &str, generation: i64, state: SandboxPhase) -> Held {
    Held {
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
