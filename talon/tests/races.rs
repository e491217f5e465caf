//! Create/delete and create/pause/delete races against a real `talon up`:
//! a deleted sandbox is torn down on every path. Needs root (CI is root).

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

/// A deleted sandbox is torn down on every path, even when its create (or
/// a pause) is still under way on the worker: the probe's 18 create (no
/// wait) + immediate delete pairs, 6 at a time, left 6 containers running
/// that the API no longer showed, with their address and `open` egress,
/// until a worker restart. Here, on a worker with a prewarm pool as
/// shipped, 36 create/delete and 12 create/pause/delete races, 6 at a
/// time (13 stayed before the fix), then nothing of them may stay on the worker (no container, no
/// sandbox directory), while a sandbox that was not deleted keeps running.
#[tokio::test(flavor = "multi_thread")]
async fn create_delete_races_leave_nothing_running() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up_with(&["--reconcile-secs", "2", "--prewarm-pool-size", "2"]).await;
    let t = tenant(&s, "races").await;
    let mut dev = s.as_(&t.developer).await;
    let req = |wait: bool| pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            resources: Some(pb::Resources {
                cpu_millis: 100,
                memory_mib: 64,
                disk_mib: 64,
                max_pids: 64,
            }),
            ..Default::default()
        }),
        wait_until_running: wait,
        wait_timeout: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        ..Default::default()
    };
    let mut keeper = None;
    for _ in 0..200 {
        match dev.sandboxes.create_sandbox(req(true)).await {
            Ok(r) => {
                keeper = r.into_inner().sandbox;
                break;
            }
            Err(e) if e.code() == Code::Unavailable => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let keeper = keeper.expect("no worker came up").sandbox_id;
    let round = |pause: bool| {
        let mut c = dev.sandboxes.clone();
        async move {
            let id = c
                .create_sandbox(req(false))
                .await
                .unwrap()
                .into_inner()
                .sandbox
                .unwrap()
                .sandbox_id;
            if pause {
                let _ = c
                    .pause_sandbox(pb::PauseSandboxRequest {
                        sandbox_id: id.clone(),
                    })
                    .await;
            }
            c.delete_sandbox(pb::DeleteSandboxRequest {
                sandbox_id: id.clone(),
            })
            .await
            .unwrap();
            id
        }
    };
    let mut gone = Vec::new();
    for batch in 0..8 {
        let pause = batch % 4 == 3;
        let ids = futures::future::join_all((0..6).map(|_| round(pause))).await;
        gone.extend(ids);
    }
    let worker = s.data_dir().join("worker");
    let leftovers = || -> Vec<String> {
        let mut v = Vec::new();
        for d in ["runtime-state", "sandboxes"] {
            for e in std::fs::read_dir(worker.join(d))
                .into_iter()
                .flatten()
                .flatten()
            {
                let n = e.file_name().to_string_lossy().into_owned();
                if gone.contains(&n) {
                    v.push(format!("{d}/{n}"));
                }
            }
        }
        v
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !leftovers().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        leftovers(),
        Vec::<String>::new(),
        "deleted sandboxes stayed on the worker"
    );
    // No process of theirs either; the keeper runs on.
    let mut procs = procs_client(
        s.channel().await,
        Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap())),
    );
    let (out, _, code) = exec(&mut procs, &keeper, &["echo", "alive"]).await;
    assert_eq!((out.as_str(), code), ("alive\n", 0));
    let listed = dev
        .sandboxes
        .list_sandboxes(pb::ListSandboxesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .sandboxes;
    assert_eq!(
        listed
            .iter()
            .filter(|x| x.state() != pb::SandboxState::Deleted)
            .count(),
        1
    );
}
