//! Durability through a database outage (issue 29): two `talon server`s on
//! one PostgreSQL, two `talon worker`s on the `local` backend and twenty
//! sandboxes, the database taken away for a minute (twenty leases): no
//! lease is renewed, and still no sandbox stops, since none could be
//! started elsewhere with its files. Once it is back, every sandbox is RUNNING with the same
//! processes and its files. The one sandbox that chose to move on worker
//! loss (`WORKER_LOSS_ACTION_MOVE`) was stopped by its worker's fence and
//! runs again, with an empty workspace as it asked. Needs root and
//! TALON_TEST_POSTGRES_URL (CI sets both).

mod common;
use common::proxy::Proxy;
use common::*;
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

/// Heartbeats every second, a 3 s lease, 1 s of grace.
const FAST: &[&str] = &[
    "--worker-heartbeat-secs",
    "1",
    "--worker-lease-secs",
    "3",
    "--failover-grace-secs",
    "1",
];

const OUTAGE: Duration = Duration::from_secs(60);

async fn workers(admin: &mut Clients) -> Vec<pb::Worker> {
    admin
        .admin
        .list_workers(pb::ListWorkersRequest {})
        .await
        .unwrap()
        .into_inner()
        .workers
}

/// Waits until `n` workers are ACTIVE, each applying `scope`.
async fn until_workers(admin: &mut Clients, n: usize, scope: pb::FailoverScope) {
    for _ in 0..600 {
        let w = workers(admin).await;
        let ok = w
            .iter()
            .filter(|w| {
                w.state == pb::WorkerState::Active as i32 && w.failover_scope == scope as i32
            })
            .count();
        if ok == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "never {n} workers active at {scope:?}: {:?}",
        workers(admin).await
    );
}

async fn ticker_pid(p: &mut Procs, id: &str) -> Option<u32> {
    p.list_processes(pb::ListProcessesRequest {
        sandbox_id: id.into(),
        include_exited: false,
    })
    .await
    .ok()?
    .into_inner()
    .processes
    .into_iter()
    .find(|x| x.tag == "ticker" && x.running)
    .map(|x| x.pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandboxes_run_through_a_minute_long_database_outage() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    ensure_agent_built();
    let Some((url, _admin_db, _name)) = pg_database("outage").await else {
        return;
    };
    // The servers reach the database through a proxy the test can cut.
    let (head, tail) = url.split_once('@').unwrap();
    let (hostport, db) = tail.split_once('/').unwrap();
    let target: std::net::SocketAddr = tokio::net::lookup_host(hostport)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = Proxy::start(target).await;
    let via = format!("{head}@{}/{db}", proxy.addr);
    let a = Server::start_with(Some(&via), FAST).await;
    let b = Server::join(&a, &via, FAST).await;
    let both = format!("{},{}", a.grpc, b.grpc);
    let mut admin = a.admin().await;
    let tag: String = a
        .data_dir()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .rev()
        .take(8)
        .collect();
    let cg1 = format!("talon-{tag}-1");
    let cg2 = format!("talon-{tag}-2");
    let _w1 = spawn_worker_with(&a, &both, "w1", &["--cgroup-parent", &cg1]);
    let _w2 = spawn_worker_with(&a, &both, "w2", &["--cgroup-parent", &cg2]);
    // Another worker is there, none on shared storage: only what chose to
    // move is fenced.
    until_workers(&mut admin, 2, pb::FailoverScope::Movable).await;

    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    let mut kept = Vec::new();
    for i in 0..20 {
        let sb = create_running_as(
            &mut admin,
            pb::Sandbox {
                resources: Some(pb::Resources {
                    cpu_millis: 100,
                    memory_mib: 64,
                    ..Default::default()
                }),
                worker_loss_action: if i == 0 {
                    pb::WorkerLossAction::Move as i32
                } else {
                    pb::WorkerLossAction::Unspecified as i32
                },
                ..Default::default()
            },
        )
        .await;
        let id = sb.sandbox_id.clone();
        let (o, code) = proc_sh(
            &mut procs,
            &id,
            &format!("echo {id} > /workspace/keep.txt && sync"),
        )
        .await;
        assert_eq!(code, 0, "{o}");
        let mut st = procs
            .start_process(pb::StartProcessRequest {
                sandbox_id: id.clone(),
                command: vec!["sh".into(), "-c".into(), "while :; do sleep 1; done".into()],
                tag: "ticker".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let _ = tokio::time::timeout(Duration::from_secs(20), st.message()).await;
        let pid = ticker_pid(&mut procs, &id).await.expect("a ticker");
        kept.push((sb, pid));
    }
    let on: std::collections::HashSet<_> = kept.iter().map(|(s, _)| s.worker_id.clone()).collect();
    println!("sandboxes on {} workers", on.len());

    proxy.cut();
    let t0 = Instant::now();
    tokio::time::sleep(OUTAGE).await;
    proxy.restore();
    println!("database back after {:.0} s", t0.elapsed().as_secs_f64());
    until_workers(&mut admin, 2, pb::FailoverScope::Movable).await;

    for (i, (sb, pid)) in kept.iter().enumerate() {
        let id = &sb.sandbox_id;
        let mut now = get(&mut admin, id).await;
        for _ in 0..600 {
            if now.state == pb::SandboxState::Running as i32
                && (i > 0 || now.generation > sb.generation)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            now = get(&mut admin, id).await;
        }
        assert_eq!(now.state, pb::SandboxState::Running as i32, "{now:?}");
        if i == 0 {
            assert!(now.generation > sb.generation, "not moved: {now:?}");
        }
        let (o, _) = proc_sh(&mut procs, id, "cat /workspace/keep.txt 2>&1").await;
        if i == 0 {
            // It chose to move: its worker stopped it when its lease
            // lapsed, and it runs again with an empty workspace.
            assert!(now.generation > sb.generation, "{now:?}");
            assert!(now.state_message.contains("empty"), "{now:?}");
            assert!(o.contains("No such file"), "{o}");
        } else {
            // The others never stopped.
            assert_eq!(now.generation, sb.generation, "{now:?}");
            assert_eq!(
                ticker_pid(&mut procs, id).await,
                Some(*pid),
                "{id}: the ticker"
            );
            assert_eq!(o.trim(), id.as_str());
        }
    }
    // And the platform takes new work.
    let fresh = create_running(&mut admin).await;
    assert_eq!(fresh.state, pb::SandboxState::Running as i32);
    drop(b);
}
