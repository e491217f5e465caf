//! A worker's `kill -9` under a running sandbox, in a container and under
//! gVisor: processes outlive it and a client reattaches without loss.

use crate::common::*;
use std::time::Duration;
use talon_proto::v1 as pb;

/// Processes outlive a `kill -9` of the worker; the restarted worker
/// re-adopts the sandbox from its state on disk, and a client reattaches
/// and reads on without loss or duplication.
#[tokio::test]
async fn processes_survive_a_worker_kill_and_are_reattached() {
    survive_a_worker_kill(pb::Isolation::Container).await;
}

/// The same under gVisor: the sentry outlives the worker as a container
/// does, and the restarted worker finds the agent's socket through the
/// gofer's directory again.
#[tokio::test]
async fn a_gvisor_sandbox_survives_a_worker_kill_and_is_reattached() {
    survive_a_worker_kill(pb::Isolation::Gvisor).await;
}

async fn survive_a_worker_kill(isolation: pb::Isolation) {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::start().await;
    let t = tenant(&s, "survive").await;
    let mut admin = s.admin().await;
    let mut w = spawn_worker(&s);
    until_worker(&mut admin, true).await;
    let mut dev = s.as_(&t.developer).await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    let mut procs = procs_client(s.channel().await, b.clone());
    let req = pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            isolation: isolation as i32,
            ..Default::default()
        }),
        wait_until_running: true,
        ..Default::default()
    };
    let sb = dev
        .sandboxes
        .create_sandbox(req)
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let id = sb.sandbox_id.clone();
    assert_eq!(sb.isolation, isolation as i32);

    let start = pb::StartProcessRequest {
        sandbox_id: id.clone(),
        command: vec![
            "sh".into(),
            "-c".into(),
            "i=0; while [ $i -lt 30 ]; do echo $i; i=$((i+1)); sleep 0.05; done".into(),
        ],
        tag: "counter".into(),
        ..Default::default()
    };
    let mut stream = procs.start_process(start).await.unwrap().into_inner();
    let (mut got, mut last) = (Vec::new(), 0);
    while got.is_empty() {
        if let Some(pb::process_event::Event::Output(o)) = stream
            .message()
            .await
            .unwrap()
            .unwrap()
            .event
            .unwrap()
            .event
        {
            got.extend(o.data);
            last = o.seq;
        }
    }
    drop(stream);
    // kill -9 the worker while the process runs.
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    until_worker(&mut admin, false).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _w2 = spawn_worker(&s);
    until_worker(&mut admin, true).await;
    assert_eq!(
        get(&mut dev, &id).await.state,
        pb::SandboxState::Running as i32,
        "re-adopted, still running"
    );
    let c = procs
        .connect_process(pb::ConnectProcessRequest {
            sandbox_id: id.clone(),
            process: sel_tag("counter"),
            after_seq: last,
        })
        .await
        .unwrap()
        .into_inner();
    let mut c = c;
    let mut exit = None;
    while let Some(m) = tokio::time::timeout(Duration::from_secs(20), c.message())
        .await
        .unwrap()
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) => {
                assert_eq!(o.seq, last + 1, "no chunk lost or repeated");
                last = o.seq;
                got.extend(o.data);
            }
            pb::process_event::Event::Exited(e) => exit = Some(e.exit_code),
            pb::process_event::Event::Started(_) => {}
        }
    }
    let want: String = (0..30).map(|i| format!("{i}\n")).collect();
    assert_eq!(String::from_utf8_lossy(&got), want);
    assert_eq!(exit, Some(0));

    // 10,000 lines through server, worker and agent, complete and in order.
    let (out, _, code) = exec(&mut procs, &id, &["seq", "1", "10000"]).await;
    assert_eq!(code, 0);
    assert_eq!(
        out,
        (1..=10000).map(|i| format!("{i}\n")).collect::<String>()
    );

    // stdin and signals through the server.
    let mut cat = procs
        .start_process(pb::StartProcessRequest {
            sandbox_id: id.clone(),
            command: vec!["cat".into()],
            stdin: true,
            tag: "cat".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let _ = cat.message().await.unwrap();
    let input = pb::SendProcessInputRequest {
        sandbox_id: id.clone(),
        process: sel_tag("cat"),
        data: b"ping\n".to_vec(),
    };
    procs
        .send_process_input(tokio_stream::iter(vec![input]))
        .await
        .unwrap();
    procs
        .close_process_stdin(pb::CloseProcessStdinRequest {
            sandbox_id: id.clone(),
            process: sel_tag("cat"),
        })
        .await
        .unwrap();
    let mut echoed = Vec::new();
    while let Some(m) = cat.message().await.unwrap() {
        if let Some(pb::process_event::Event::Output(o)) = m.event.unwrap().event {
            echoed.extend(o.data);
        }
    }
    assert_eq!(echoed, b"ping\n");
    let mut sleeper = procs
        .start_process(pb::StartProcessRequest {
            sandbox_id: id.clone(),
            command: vec!["sleep".into(), "60".into()],
            tag: "sleeper".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let _ = sleeper.message().await.unwrap();
    procs
        .send_process_signal(pb::SendProcessSignalRequest {
            sandbox_id: id.clone(),
            process: sel_tag("sleeper"),
            signal: 9,
        })
        .await
        .unwrap();
    let mut sig = None;
    while let Some(m) = sleeper.message().await.unwrap() {
        if let Some(pb::process_event::Event::Exited(e)) = m.event.unwrap().event {
            sig = Some(e.signal);
        }
    }
    assert_eq!(sig, Some(9));

    // A PTY through the server: bash-like shell, arithmetic, resize.
    let mut pty = pb::pty_service_client::PtyServiceClient::with_interceptor(s.channel().await, b);
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    use pb::attach_request::Message as In;
    use pb::attach_response::Message as Out;
    let open = pb::PtyOpen {
        target: Some(pb::pty_open::Target::Command(pb::PtyCommand {
            command: vec!["sh".into()],
            ..Default::default()
        })),
        size: Some(pb::PtySize { rows: 24, cols: 80 }),
    };
    tx.send(pb::AttachRequest {
        sandbox_id: id.clone(),
        message: Some(In::Open(open)),
    })
    .await
    .unwrap();
    let mut out = pty
        .attach(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(b"echo $((6*7))\n".to_vec())),
    })
    .await
    .unwrap();
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Resize(pb::PtySize {
            rows: 40,
            cols: 100,
        })),
    })
    .await
    .unwrap();
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(b"stty size\n".to_vec())),
    })
    .await
    .unwrap();
    let mut screen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !(screen.contains("42\r\n") && screen.contains("40 100")) {
        let m = tokio::time::timeout_at(deadline, out.message())
            .await
            .expect("pty output")
            .unwrap()
            .unwrap();
        if let Some(Out::Output(d)) = m.message {
            screen.push_str(&String::from_utf8_lossy(&d));
        }
    }
    drop(tx);
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    assert!(!s.data_dir().join("w/sandboxes").join(&id).exists());
}
