//! Agent runs (AgentService) in a real sandbox: a scripted agent reads
//! the prompt, prints, writes two files and ends; the events come in
//! order with their sequence numbers, a dropped client reattaches and
//! misses nothing, a cancel stops the process tree, and a secret's value
//! reaches the agent but no event and no audit record.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio_stream::StreamExt;

const SECRET: &str = "s3cr3t-value-42";

fn agent_client(
    channel: tonic::transport::Channel,
    token: &str,
) -> pb::agent_service_client::AgentServiceClient<Authed> {
    let b = Bearer(Some(format!("Bearer {token}").parse().unwrap()));
    pb::agent_service_client::AgentServiceClient::with_interceptor(channel, b)
}

fn kind(e: &pb::RunAgentResponse) -> &'static str {
    use pb::run_agent_response::Event;
    match &e.event {
        Some(Event::Started(_)) => "started",
        Some(Event::Output(_)) => "output",
        Some(Event::FileChange(_)) => "file_change",
        Some(Event::Completed(_)) => "completed",
        None => "none",
    }
}

#[tokio::test]
async fn agent_runs_stream_reattach_cancel_and_keep_secrets() {
    use pb::run_agent_response::Event;
    ensure_agent_built();
    let s = Server::up().await;
    let t = tenant(&s, "agents").await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    pb::secret_service_client::SecretServiceClient::with_interceptor(s.channel().await, b)
        .put_secret(pb::PutSecretRequest {
            name: "API_TOKEN".into(),
            value: SECRET.into(),
            delivery: pb::SecretDelivery::Env as i32,
            expire_time: None,
        })
        .await
        .unwrap();
    let mut dev = s.as_(&t.developer).await;
    let sb = dev
        .sandboxes
        .create_sandbox(pb::CreateSandboxRequest {
            sandbox: Some(pb::Sandbox::default()),
            wait_until_running: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let mut agents = agent_client(s.channel().await, &t.developer);
    // The value also split across two writes: the log is redacted as it
    // is written, so it must be found across reads.
    let script = "read prompt; echo \"task: $prompt\"; echo \"token $API_TOKEN\" >&2; \
                  printf '%s' \"${API_TOKEN%value-42}\" >&2; sleep 0.2; printf 'value-42 split\\n' >&2; \
                  echo one > /workspace/a.txt; sleep 0.4; echo two > /workspace/b.txt; \
                  sleep 0.3; printf 'no newline'";
    let req = pb::RunAgentRequest {
        sandbox_id: sb.sandbox_id.clone(),
        command: vec!["/bin/sh".into(), "-c".into(), script.into()],
        prompt: "fix the bug\n".into(),
        secret_names: vec!["API_TOKEN".into()],
        ..Default::default()
    };
    let mut stream = agents.run_agent(req.clone()).await.unwrap().into_inner();
    // Drop the client after the first two events, then reattach.
    let mut seen = vec![];
    while seen.len() < 2 {
        seen.push(stream.next().await.unwrap().unwrap());
    }
    drop(stream);
    let Some(Event::Started(started)) = &seen[0].event else {
        panic!("{:?}", seen[0])
    };
    let run_id = started.run_id.clone();
    let after = seen.last().unwrap().seq;
    let mut again = agents
        .connect_agent_run(pb::ConnectAgentRunRequest {
            sandbox_id: sb.sandbox_id.clone(),
            run_id: run_id.clone(),
            after_seq: after,
        })
        .await
        .unwrap()
        .into_inner();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(30), again.next())
        .await
        .expect("the run completes")
    {
        seen.push(e.unwrap().event.unwrap());
    }
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=seen.len() as u64).collect::<Vec<_>>(),
        "none lost, none twice"
    );
    let kinds: Vec<&str> = seen.iter().map(kind).collect();
    assert_eq!(kinds.first(), Some(&"started"));
    assert_eq!(kinds.last(), Some(&"completed"));
    let texts: Vec<(i32, String)> = seen
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::Output(o)) => Some((o.stream, o.text.clone())),
            _ => None,
        })
        .collect();
    assert!(
        texts.contains(&(pb::OutputStream::Stdout as i32, "task: fix the bug".into())),
        "{texts:?}"
    );
    assert!(
        texts.contains(&(pb::OutputStream::Stderr as i32, "token ***".into())),
        "{texts:?}"
    );
    assert!(
        texts.contains(&(pb::OutputStream::Stdout as i32, "no newline".into())),
        "{texts:?}"
    );
    assert!(
        texts.contains(&(pb::OutputStream::Stderr as i32, "*** split".into())),
        "{texts:?}"
    );
    let changes: Vec<&str> = seen
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::FileChange(c)) => Some(c.path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        ["/workspace/a.txt", "/workspace/b.txt"],
        "{kinds:?}"
    );
    let Some(Event::Completed(done)) = &seen.last().unwrap().event else {
        unreachable!()
    };
    assert_eq!((done.exit_code, done.timed_out), (0, false));
    assert!(
        format!("{seen:?}").find(SECRET).is_none(),
        "the secret is in no event"
    );
    // Nor in the run's log on the sandbox's disk, which a viewer reads.
    let vb = Bearer(Some(format!("Bearer {}", t.viewer).parse().unwrap()));
    let mut fs = files(s.channel().await, vb);
    let logs = fs
        .list_dir(pb::ListDirRequest {
            sandbox_id: sb.sandbox_id.clone(),
            path: "/var/log/talon".into(),
            depth: 2,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .entries;
    let mut read = 0;
    for e in logs
        .iter()
        .filter(|e| e.r#type == pb::FileType::File as i32)
    {
        let mut r = fs
            .read_file(pb::ReadFileRequest {
                sandbox_id: sb.sandbox_id.clone(),
                path: e.path.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut bytes = Vec::new();
        while let Some(m) = r.message().await.unwrap() {
            bytes.extend(m.data);
        }
        let text = String::from_utf8_lossy(&bytes);
        read += usize::from(text.contains("token ***"));
        assert!(!text.contains(SECRET), "{}: {text}", e.path);
    }
    assert_eq!(read, 1, "the run's log was read: {logs:?}");

    // A reattach from 0 replays the whole run.
    let all: Vec<_> = agents
        .connect_agent_run(pb::ConnectAgentRunRequest {
            sandbox_id: sb.sandbox_id.clone(),
            run_id: run_id.clone(),
            after_seq: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .collect()
        .await;
    assert_eq!(all.len(), seen.len());

    // Cancel stops a run that would sleep for a minute.
    let long = pb::RunAgentRequest {
        command: vec!["/bin/sh".into(), "-c".into(), "sleep 60 & sleep 60".into()],
        secret_names: vec![],
        ..req.clone()
    };
    let mut stream = agents.run_agent(long).await.unwrap().into_inner();
    let first = stream.next().await.unwrap().unwrap();
    let Some(Event::Started(st)) = first.event else {
        panic!("{first:?}")
    };
    let t0 = std::time::Instant::now();
    agents
        .cancel_agent_run(pb::CancelAgentRunRequest {
            sandbox_id: sb.sandbox_id.clone(),
            run_id: st.run_id,
        })
        .await
        .unwrap();
    let mut last = None;
    while let Some(e) = stream.next().await {
        last = Some(e.unwrap());
    }
    assert!(t0.elapsed() < Duration::from_secs(10));
    let Some(Event::Completed(c)) = last.and_then(|e| e.event) else {
        panic!("a cancelled run completes")
    };
    assert_ne!(c.exit_code, 0);

    // Another tenant's run id is not found; a viewer may not run.
    let other = tenant(&s, "agents-b").await;
    let r = agent_client(s.channel().await, &other.developer)
        .connect_agent_run(pb::ConnectAgentRunRequest {
            sandbox_id: sb.sandbox_id.clone(),
            run_id: run_id.clone(),
            after_seq: 0,
        })
        .await;
    assert_eq!(code(r), tonic::Code::NotFound);
    let r = agent_client(s.channel().await, &t.viewer)
        .run_agent(req.clone())
        .await;
    assert_eq!(code(r), tonic::Code::PermissionDenied);

    // The audit records the run, not the secret.
    let mut owner = s.as_(&t.owner).await;
    let ev = owner
        .admin
        .list_audit_events(pb::ListAuditEventsRequest {
            page_size: 500,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .audit_events;
    assert!(
        ev.iter()
            .any(|e| e.method == "/talon.v1.AgentService/RunAgent" && e.outcome == "OK")
    );
    assert!(format!("{ev:?}").find(SECRET).is_none());
}
