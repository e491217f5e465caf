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
    };
    let stranger = wpb::SandboxStatus {
        sandbox_id: "sbx_unknowntotheserver0000000".into(),
        generation: 1,
        state: pb::SandboxState::Running as i32,
        message: String::new(),
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
