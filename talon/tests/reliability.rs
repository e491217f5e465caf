//! Reliability: `kill -9` of a worker holding 20 running sandboxes. The
//! sandboxes and their processes live on; the restarted worker re-adopts
//! all of them from its state on disk; a client reattaches to each and
//! reads on with no sequence gap; and exits that happened while the worker
//! was down are reported with their exit codes. Needs root (CI is root).

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;

type Procs = pb::process_service_client::ProcessServiceClient<Authed>;

const SANDBOXES: usize = 20;

async fn first_output(p: &mut Procs, id: &str, tag: &str, script: &str) -> (String, u64) {
    let mut s = p
        .start_process(pb::StartProcessRequest {
            sandbox_id: id.into(),
            command: vec!["sh".into(), "-c".into(), script.into()],
            tag: tag.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    loop {
        let m = tokio::time::timeout(Duration::from_secs(20), s.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Some(pb::process_event::Event::Output(o)) = m.event.unwrap().event {
            return (String::from_utf8_lossy(&o.data).into_owned(), o.seq);
        }
    }
}

async fn pid_of(p: &mut Procs, id: &str, tag: &str) -> pb::ProcessInfo {
    p.list_processes(pb::ListProcessesRequest {
        sandbox_id: id.into(),
        include_exited: true,
    })
    .await
    .unwrap()
    .into_inner()
    .processes
    .into_iter()
    .find(|x| x.tag == tag)
    .unwrap_or_else(|| panic!("{id}: no process tagged {tag}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_sandboxes_survive_a_worker_kill_and_are_readopted() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::start().await;
    let t = tenant(&s, "reliable").await;
    let mut admin = s.admin().await;
    let mut w = spawn_worker(&s);
    until_worker(&mut admin, true).await;
    let dev = s.as_(&t.developer).await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    let procs =
        pb::process_service_client::ProcessServiceClient::with_interceptor(s.channel().await, b);

    // 20 sandboxes, each with a ticker that never ends and a process
    // that exits with a code of its own while the worker is down.
    let mut tasks = Vec::new();
    for i in 0..SANDBOXES {
        let (mut dev, mut procs) = (dev.sandboxes.clone(), procs.clone());
        tasks.push(tokio::spawn(async move {
            let sb = dev
                .create_sandbox(pb::CreateSandboxRequest {
                    sandbox: Some(pb::Sandbox {
                        resources: Some(pb::Resources {
                            cpu_millis: 50,
                            memory_mib: 64,
                            max_pids: 64,
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    wait_until_running: true,
                    wait_timeout: Some(prost_types::Duration {
                        seconds: 120,
                        nanos: 0,
                    }),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .sandbox
                .unwrap();
            let id = sb.sandbox_id;
            let (text, seq) = first_output(
                &mut procs,
                &id,
                "ticker",
                "i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done",
            )
            .await;
            first_output(
                &mut procs,
                &id,
                "quick",
                &format!("echo started; sleep 2; exit {}", 10 + i),
            )
            .await;
            let pid = pid_of(&mut procs, &id, "ticker").await.pid;
            (id, text, seq, pid, 10 + i as i32)
        }));
    }
    let mut held = Vec::new();
    for t in tasks {
        held.push(t.await.unwrap());
    }

    w.child.kill().unwrap();
    w.child.wait().unwrap();
    until_worker(&mut admin, false).await;
    // Long enough for every `quick` to exit while nobody watches.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let _w2 = spawn_worker(&s);
    until_worker(&mut admin, true).await;

    let mut dev = dev;
    for (id, mut text, mut last, pid, code) in held {
        let sb = get(&mut dev, &id).await;
        assert_eq!(
            sb.state,
            pb::SandboxState::Running as i32,
            "{id} re-adopted"
        );
        let mut procs = procs.clone();
        assert_eq!(
            pid_of(&mut procs, &id, "ticker").await.pid,
            pid,
            "{id}: the ticker is the same process"
        );
        // Reattach: every chunk after `last`, in order, then live ones.
        let mut c = procs
            .connect_process(pb::ConnectProcessRequest {
                sandbox_id: id.clone(),
                process: sel_tag("ticker"),
                after_seq: last,
            })
            .await
            .unwrap()
            .into_inner();
        while text.lines().count() < 60 {
            let m = tokio::time::timeout(Duration::from_secs(20), c.message())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if let Some(pb::process_event::Event::Output(o)) = m.event.unwrap().event {
                assert_eq!(o.seq, last + 1, "{id}: a sequence gap");
                last = o.seq;
                text.push_str(&String::from_utf8_lossy(&o.data));
            }
        }
        let numbers: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
        let want: Vec<u64> = (0..numbers.len() as u64).collect();
        assert_eq!(numbers, want, "{id}: the ticker's output has a hole");
        // The exit that happened while the worker was down.
        let q = pid_of(&mut procs, &id, "quick").await;
        assert!(!q.running, "{id}: {q:?}");
        assert_eq!(q.exit_code, code, "{id}: {q:?}");
        let mut c = procs
            .connect_process(pb::ConnectProcessRequest {
                sandbox_id: id.clone(),
                process: sel_tag("quick"),
                after_seq: 0,
            })
            .await
            .unwrap()
            .into_inner();
        let mut exit = None;
        while let Some(m) = tokio::time::timeout(Duration::from_secs(20), c.message())
            .await
            .unwrap()
            .unwrap()
        {
            if let Some(pb::process_event::Event::Exited(e)) = m.event.unwrap().event {
                exit = Some(e.exit_code);
            }
        }
        assert_eq!(exit, Some(code), "{id}");
        dev.sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: id })
            .await
            .unwrap();
    }
}
