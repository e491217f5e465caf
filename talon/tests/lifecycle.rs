//! Events, timeouts, draining, reconcile after a worker restart, and
//! `talon up` with its embedded worker.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use tonic::Code;

fn req(timeout_secs: i64, action: pb::TimeoutAction, wait: bool) -> pb::CreateSandboxRequest {
    pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            timeout: Some(prost_types::Duration {
                seconds: timeout_secs,
                nanos: 0,
            }),
            timeout_action: action as i32,
            ..Default::default()
        }),
        wait_until_running: wait,
        wait_timeout: None,
        ..Default::default()
    }
}

#[tokio::test]
async fn watch_streams_state_changes_of_the_tenant_only() {
    let s = Server::start().await;
    let a = tenant(&s, "watcher").await;
    let b = tenant(&s, "noisy").await;
    let _w = TestWorker::connect(&s, "wrk_w", Behaviour::Obey).await;
    let mut ca = s.as_(&a.developer).await;
    let mut cb = s.as_(&b.developer).await;
    let mut events = ca
        .sandboxes
        .watch_sandbox_events(pb::WatchSandboxEventsRequest {
            sandbox_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    cb.sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap();
    let mine = ca
        .sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let mut seen = vec![];
    while seen.last() != Some(&(pb::SandboxState::Running as i32)) {
        let ev = tokio::time::timeout(Duration::from_secs(5), events.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let sb = ev.sandbox.unwrap();
        assert_eq!(
            sb.sandbox_id, mine.sandbox_id,
            "another tenant's event leaked"
        );
        seen.push(sb.state);
    }
    assert_eq!(
        seen,
        vec![
            pb::SandboxState::Starting as i32,
            pb::SandboxState::Running as i32
        ]
    );
    // Watching one sandbox starts with its current state.
    let mut one = ca
        .sandboxes
        .watch_sandbox_events(pb::WatchSandboxEventsRequest {
            sandbox_id: mine.sandbox_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let first = one.message().await.unwrap().unwrap().sandbox.unwrap();
    assert_eq!(first.state, pb::SandboxState::Running as i32);
}

#[tokio::test]
async fn timeouts_pause_or_delete() {
    let s = Server::start().await;
    let t = tenant(&s, "timeouts").await;
    let _w = TestWorker::connect(&s, "wrk_t", Behaviour::Obey).await;
    let mut dev = s.as_(&t.developer).await;
    let p = dev
        .sandboxes
        .create_sandbox(req(1, pb::TimeoutAction::Unspecified, true))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let d = dev
        .sandboxes
        .create_sandbox(req(1, pb::TimeoutAction::Delete, true))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(
        p.timeout_action,
        pb::TimeoutAction::Pause as i32,
        "pause is the default"
    );
    until_state(&mut dev, &p.sandbox_id, pb::SandboxState::Paused).await;
    until_state(&mut dev, &d.sandbox_id, pb::SandboxState::Deleted).await;
    // A resumed sandbox gets its whole timeout again.
    dev.sandboxes
        .set_sandbox_timeout(pb::SetSandboxTimeoutRequest {
            sandbox_id: p.sandbox_id.clone(),
            timeout: Some(prost_types::Duration {
                seconds: 3600,
                nanos: 0,
            }),
            timeout_action: 0,
        })
        .await
        .unwrap();
    dev.sandboxes
        .resume_sandbox(pb::ResumeSandboxRequest {
            sandbox_id: p.sandbox_id.clone(),
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        get(&mut dev, &p.sandbox_id).await.state,
        pb::SandboxState::Running as i32
    );
    let bad = dev
        .sandboxes
        .create_sandbox(req(0, pb::TimeoutAction::Pause, false))
        .await;
    assert_eq!(
        code(bad),
        Code::InvalidArgument,
        "an explicit zero timeout is refused; unset means the default"
    );
    let too_long = dev
        .sandboxes
        .create_sandbox(req(90_000, pb::TimeoutAction::Pause, false))
        .await;
    assert_eq!(code(too_long), Code::InvalidArgument);
}

#[tokio::test]
async fn drained_workers_take_no_new_sandboxes() {
    let s = Server::start().await;
    let t = tenant(&s, "drain").await;
    let _w = TestWorker::connect(&s, "wrk_d", Behaviour::Obey).await;
    let mut admin = s.admin().await;
    let w = admin
        .admin
        .drain_worker(pb::DrainWorkerRequest {
            worker_id: "wrk_d".into(),
            undrain: false,
        })
        .await
        .unwrap()
        .into_inner()
        .worker
        .unwrap();
    assert_eq!(w.state, pb::WorkerState::Draining as i32);
    let mut dev = s.as_(&t.developer).await;
    let err = dev
        .sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, false))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unavailable);
    admin
        .admin
        .drain_worker(pb::DrainWorkerRequest {
            worker_id: "wrk_d".into(),
            undrain: true,
        })
        .await
        .unwrap();
    dev.sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap();
    let ws = admin
        .admin
        .list_workers(pb::ListWorkersRequest {})
        .await
        .unwrap()
        .into_inner()
        .workers;
    let w = ws.iter().find(|w| w.worker_id == "wrk_d").unwrap();
    assert_eq!(w.allocated.as_ref().unwrap().sandboxes, 1);
    assert_eq!(w.state, pb::WorkerState::Active as i32);
}

#[tokio::test]
async fn a_restarted_worker_is_told_to_drop_what_the_server_deleted() {
    let s = Server::start().await;
    let t = tenant(&s, "recon").await;
    let w = TestWorker::connect(&s, "wrk_r", Behaviour::Obey).await;
    let mut dev = s.as_(&t.developer).await;
    let keep = dev
        .sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let gone = dev
        .sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    drop(w);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Deleted while the worker is away: the record goes at once.
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: gone.sandbox_id.clone(),
        })
        .await
        .unwrap();
    let status = |sb: &pb::Sandbox| wpb::SandboxStatus {
        sandbox_id: sb.sandbox_id.clone(),
        generation: 1,
        state: pb::SandboxState::Running as i32,
        message: String::new(),
        fenced: false,
        container_gone: false,
    };
    let stranger = wpb::SandboxStatus {
        sandbox_id: "sbx_unknowntotheserver0000000".into(),
        generation: 1,
        state: pb::SandboxState::Running as i32,
        message: String::new(),
        fenced: false,
        container_gone: false,
    };
    let mut w = TestWorker::connect_holding(
        &s,
        "wrk_r",
        Behaviour::Obey,
        vec![status(&keep), status(&gone), stranger],
    )
    .await;
    let mut deletes = vec![];
    while let Ok(Some(cmd)) = tokio::time::timeout(Duration::from_secs(2), w.commands.recv()).await
    {
        if matches!(cmd.action, Some(wpb::command::Action::Delete(_))) {
            deletes.push(cmd.sandbox_id);
        }
    }
    deletes.sort();
    let mut want = vec![
        gone.sandbox_id.clone(),
        "sbx_unknowntotheserver0000000".to_string(),
    ];
    want.sort();
    assert_eq!(deletes, want);
    assert_eq!(
        get(&mut dev, &keep.sandbox_id).await.state,
        pb::SandboxState::Running as i32
    );
}

#[tokio::test]
async fn a_worker_without_a_runtime_says_so_instead_of_faking_it() {
    let s = Server::up_with(&["--runtime", "none"]).await;
    let mut admin = s.admin().await;
    let mut workers = vec![];
    for _ in 0..100 {
        workers = admin
            .admin
            .list_workers(pb::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        if !workers.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(workers.len(), 1);
    let w = &workers[0];
    assert_eq!(w.state, pb::WorkerState::Active as i32);
    assert!(w.capacity.as_ref().unwrap().memory_mib > 0);
    // Without a runtime the sandbox fails, and says why; nothing is faked.
    let err = admin
        .sandboxes
        .create_sandbox(req(600, pb::TimeoutAction::Pause, true))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message().contains("no sandbox runtime"),
        "{}",
        err.message()
    );
}

/// Polls until the sandbox reaches `state`, for up to `secs`.
async fn within(c: &mut Clients, id: &str, state: pb::SandboxState, secs: u64) -> pb::Sandbox {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let s = get(c, id).await;
        if s.state == state as i32 {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "sandbox {id} never became {state:?} in {secs} s; it is {:?}",
            s.state
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A counter's value in the server's /metrics.
async fn counter(s: &Server, name: &str) -> f64 {
    metric(s, name)
        .await
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sandboxes_pause_and_calls_wake_them() {
    ensure_agent_built();
    let s = Server::up_with(&[
        "--min-idle-timeout-secs",
        "1",
        "--preview-domain",
        "preview.test",
    ])
    .await;
    let key = s.boot.api_key.clone();
    let mut c = s.as_(&key).await;
    until_worker(&mut c, true).await;
    let b = Bearer(Some(format!("Bearer {key}").parse().unwrap()));
    let mut p = procs_client(s.channel().await, b);
    let idle_secs = 2;
    let idle = |auto_resume: bool, idle: prost_types::Duration| {
        let mut r = create_req(true, 60);
        let sb = r.sandbox.as_mut().unwrap();
        sb.idle_timeout = Some(idle);
        sb.auto_resume = auto_resume;
        r
    };
    let secs = |seconds: i64| prost_types::Duration { seconds, nanos: 0 };
    let half = prost_types::Duration {
        seconds: 0,
        nanos: 500_000_000,
    };
    assert_eq!(
        code(c.sandboxes.create_sandbox(idle(true, half)).await),
        Code::InvalidArgument,
        "an idle timeout under the server's minimum is refused"
    );
    let mut made = vec![];
    for auto in [true, false, false] {
        let sb = c
            .sandboxes
            .create_sandbox(idle(auto, secs(idle_secs)))
            .await
            .unwrap()
            .into_inner()
            .sandbox
            .unwrap();
        assert_eq!(sb.idle_timeout, Some(secs(idle_secs)));
        assert_eq!(sb.auto_resume, auto);
        made.push(sb.sandbox_id);
    }
    let (wake, sleepy, chatty) = (made[0].clone(), made[1].clone(), made[2].clone());
    let mut events = c
        .sandboxes
        .watch_sandbox_events(pb::WatchSandboxEventsRequest {
            sandbox_id: wake.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    // Output keeps a sandbox awake: a process printing twice a second.
    let mut ticking = p
        .start_process(pb::StartProcessRequest {
            sandbox_id: chatty.clone(),
            command: ["sh", "-c", "while true; do echo tick; sleep 0.5; done"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // A web server for the preview, quiet until asked.
    let (_, _, rc) = exec(
        &mut p,
        &wake,
        &[
            "sh",
            "-c",
            "nohup python3 -m http.server 8124 --bind 127.0.0.1 >/dev/null 2>&1 & sleep 1",
        ],
    )
    .await;
    assert_eq!(rc, 0);
    let t0 = std::time::Instant::now();
    let paused = within(&mut c, &wake, pb::SandboxState::Paused, 15).await;
    let took = t0.elapsed();
    println!(
        "idle pause: {:.1} s after the last call (idle_timeout {idle_secs} s, checked every 2 s)",
        took.as_secs_f64()
    );
    assert!(
        took >= Duration::from_millis(idle_secs as u64 * 1000 - 200),
        "paused before its idle timeout: {took:?}"
    );
    assert!(
        paused.state_message.contains("without activity"),
        "{}",
        paused.state_message
    );
    within(&mut c, &sleepy, pb::SandboxState::Paused, 15).await;
    assert_eq!(
        get(&mut c, &chatty).await.state,
        pb::SandboxState::Running as i32,
        "a sandbox whose process prints is not idle"
    );

    // Without auto-resume a call is refused, saying why.
    let refused = p
        .start_process(pb::StartProcessRequest {
            sandbox_id: sleepy.clone(),
            command: vec!["true".into()],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("paused") && refused.message().contains("auto_resume"),
        "{}",
        refused.message()
    );
    // With it, the call resumes the sandbox and runs.
    let (out, _, rc) = exec(&mut p, &wake, &["echo", "awake"]).await;
    assert_eq!((out.trim(), rc), ("awake", 0));
    assert_eq!(
        get(&mut c, &wake).await.state,
        pb::SandboxState::Running as i32
    );
    let mut kinds = vec![];
    while !kinds.contains(&pb::SandboxEventKind::AutoResumed) {
        let ev = tokio::time::timeout(Duration::from_secs(5), events.message())
            .await
            .expect("events")
            .unwrap()
            .unwrap();
        kinds.push(ev.kind());
        if ev.kind() == pb::SandboxEventKind::AutoResumed {
            assert_eq!(ev.message, "start_process");
        }
    }
    assert!(
        kinds.contains(&pb::SandboxEventKind::IdlePaused),
        "{kinds:?}"
    );

    // Idle again, then a preview request wakes it.
    within(&mut c, &wake, pb::SandboxState::Paused, 15).await;
    let r = reqwest::Client::new()
        .get(format!("{}/", s.http))
        .header("host", format!("8124-{wake}.preview.test"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        200,
        "the preview through a paused sandbox"
    );
    assert!(r.text().await.unwrap().contains("Directory listing"));
    assert_eq!(
        get(&mut c, &wake).await.state,
        pb::SandboxState::Running as i32
    );
    assert!(counter(&s, "talon_sandbox_idle_pauses_total").await >= 3.0);
    assert!(counter(&s, "talon_sandbox_auto_resumes_total").await >= 2.0);
    assert_eq!(
        get(&mut c, &chatty).await.state,
        pb::SandboxState::Running as i32,
        "still printing, still running"
    );
    assert!(ticking.message().await.unwrap().is_some());
}
