//! No output is lost: a process writes 50 MiB of random bytes and a client
//! that sleeps between reads receives them byte for byte (its sha256 is
//! the one the sandbox computes), through gRPC, REST (NDJSON) and the E2B
//! facade (envd's Connect protocol, as E2B's SDKs speak it), while the
//! process's log rotates fifty times under it. The agent holds the process
//! back for the slow reader, and says so in its log.
//!
//! Before, a reader more than two log files behind lost what rotated
//! away, silently: REST received 30.9 of 38.9 MB with no error.

mod common;
use base64::Engine;
use common::*;
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

const SIZE: u64 = 50 << 20;
/// The reader's pace: below the worker's default output budget (16 MiB/s),
/// so the client, not the platform, is the slow one.
const READ_BYTES_PER_SEC: f64 = 10.0 * 1024.0 * 1024.0;

/// A reader that sleeps between reads, to keep to `READ_BYTES_PER_SEC`.
#[derive(Default)]
struct Slow {
    owed: Duration,
}

impl Slow {
    async fn read(&mut self, n: usize) {
        self.owed += Duration::from_secs_f64(n as f64 / READ_BYTES_PER_SEC);
        if self.owed >= Duration::from_millis(10) {
            tokio::time::sleep(self.owed).await;
            self.owed = Duration::ZERO;
        }
    }
}

/// What a reader got: the output's sha256 and length, the exit code, the
/// process's pid, and gaps in the output's sequence numbers (gRPC).
#[derive(Debug, Default)]
struct Got {
    sha256: String,
    bytes: u64,
    exit: Option<i32>,
    pid: u32,
    seq_gaps: u64,
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

async fn by_grpc(p: &mut Procs, id: &str) -> Got {
    let req = pb::StartProcessRequest {
        sandbox_id: id.into(),
        command: vec!["cat".into(), "/tmp/out.bin".into()],
        ..Default::default()
    };
    let mut s = p.start_process(req).await.unwrap().into_inner();
    let (mut h, mut got, mut slow) = (Sha256::new(), Got::default(), Slow::default());
    let mut last_seq = 0;
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), s.message())
        .await
        .expect("stream stalled")
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Started(st) => got.pid = st.pid,
            pb::process_event::Event::Output(o) => {
                assert_eq!(o.stream, pb::OutputStream::Stdout as i32);
                got.seq_gaps += u64::from(o.seq != last_seq + 1);
                last_seq = o.seq;
                h.update(&o.data);
                got.bytes += o.data.len() as u64;
                slow.read(o.data.len()).await;
            }
            pb::process_event::Event::Exited(e) => got.exit = Some(e.exit_code),
        }
    }
    got.sha256 = hex(&h.finalize());
    got
}

/// POST /v1/sandboxes/{id}/processes: NDJSON, one event a line.
async fn by_rest(s: &Server, key: &str, id: &str) -> Got {
    let mut resp = reqwest::Client::new()
        .post(format!("{}/v1/sandboxes/{id}/processes", s.http))
        .bearer_auth(key)
        .json(&serde_json::json!({"command": ["cat", "/tmp/out.bin"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let (mut h, mut got, mut slow) = (Sha256::new(), Got::default(), Slow::default());
    let mut buf: Vec<u8> = Vec::new();
    let b64 = base64::engine::general_purpose::STANDARD;
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(30), resp.chunk())
        .await
        .expect("stream stalled")
        .unwrap()
    {
        buf.extend_from_slice(&chunk);
        while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
            assert!(v.get("error").is_none(), "{v}");
            let ev = &v["event"];
            if let Some(d) = ev["output"]["data"].as_str() {
                assert_ne!(ev["output"]["stream"], "OUTPUT_STREAM_STDERR");
                let data = b64.decode(d).unwrap();
                h.update(&data);
                got.bytes += data.len() as u64;
                slow.read(data.len()).await;
            } else if let Some(pid) = ev["started"]["pid"].as_u64() {
                got.pid = pid as u32;
            } else if ev.get("exited").is_some() {
                got.exit = Some(ev["exited"]["exitCode"].as_i64().unwrap_or(0) as i32);
            }
        }
    }
    assert!(buf.is_empty(), "a partial line at the end");
    got.sha256 = hex(&h.finalize());
    got
}

/// envd's `process.Process/Start` over the Connect protocol: enveloped
/// JSON, as E2B's SDKs send it to `E2B_SANDBOX_URL`.
async fn by_e2b(s: &Server, token: &str, id: &str) -> Got {
    let e2b_id = id.strip_prefix("sbx_").unwrap();
    let msg = serde_json::json!({"process": {"cmd": "cat", "args": ["/tmp/out.bin"]}});
    let json = serde_json::to_vec(&msg).unwrap();
    let mut body = vec![0u8];
    body.extend_from_slice(&(json.len() as u32).to_be_bytes());
    body.extend_from_slice(&json);
    let mut resp = reqwest::Client::new()
        .post(format!("{}/process.Process/Start", s.e2b_sandbox))
        .header("content-type", "application/connect+json")
        .header("connect-protocol-version", "1")
        .header("e2b-sandbox-id", e2b_id)
        .header("x-access-token", token)
        // root: (the file is root's; envd's default user is `user`)
        .header("authorization", "Basic cm9vdDo=")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let (mut h, mut got, mut slow) = (Sha256::new(), Got::default(), Slow::default());
    let mut buf: Vec<u8> = Vec::new();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut ended = false;
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(30), resp.chunk())
        .await
        .expect("stream stalled")
        .unwrap()
    {
        buf.extend_from_slice(&chunk);
        while buf.len() >= 5 {
            let len = u32::from_be_bytes(buf[1..5].try_into().unwrap()) as usize;
            if buf.len() < 5 + len {
                break;
            }
            let flags = buf[0];
            let env: Vec<u8> = buf.drain(..5 + len).collect();
            let v: serde_json::Value = serde_json::from_slice(&env[5..]).unwrap();
            if flags & 0x02 != 0 {
                assert!(v.get("error").is_none(), "the stream ended with {v}");
                ended = true;
                continue;
            }
            let ev = &v["event"];
            if let Some(d) = ev["data"]["stdout"].as_str() {
                let data = b64.decode(d).unwrap();
                h.update(&data);
                got.bytes += data.len() as u64;
                slow.read(data.len()).await;
            } else if ev["data"]["stderr"].is_string() {
                panic!("stderr: {v}");
            } else if let Some(pid) = ev["start"]["pid"].as_u64() {
                got.pid = pid as u32;
            } else if ev.get("end").is_some() {
                got.exit = Some(ev["end"]["exitCode"].as_i64().unwrap_or(0) as i32);
            }
        }
    }
    assert!(ended && buf.is_empty(), "the stream ended cleanly");
    got.sha256 = hex(&h.finalize());
    got
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_reader_gets_every_byte_through_grpc_rest_and_e2b() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    // 1 MiB log files and 2 MiB of spill: 50 MiB rotates them fifty times,
    // and a reader a few MiB behind is held for.
    let s = Server::up_with(&[
        "--process-log-bytes",
        "1048576",
        "--process-spill-bytes",
        "2097152",
    ])
    .await;
    let t = tenant(&s, "output").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let mut c = s.as_(&t.developer).await;
    let id = create_running(&mut c).await.sandbox_id;

    let mut p = procs_client(c.channel.clone(), bearer(&t.developer));
    let (sum, code) = proc_sh(
        &mut p,
        &id,
        &format!("head -c {SIZE} /dev/urandom > /tmp/out.bin && sha256sum /tmp/out.bin"),
    )
    .await;
    assert_eq!(code, 0, "{sum}");

    let want = sum.split_whitespace().next().unwrap().to_string();
    let token = c
        .sandboxes
        .create_sandbox_access_token(pb::CreateSandboxAccessTokenRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .token;

    let mut all = Vec::new();
    for way in ["gRPC", "REST", "E2B"] {
        let t0 = Instant::now();
        let got = match way {
            "gRPC" => by_grpc(&mut p, &id).await,
            "REST" => by_rest(&s, &t.developer, &id).await,
            _ => by_e2b(&s, &token, &id).await,
        };
        eprintln!(
            "{way}: {} of {SIZE} bytes in {:.1} s, exit {:?}, sha256 {}",
            got.bytes,
            t0.elapsed().as_secs_f64(),
            got.exit,
            if got.sha256 == want {
                "equal"
            } else {
                "differs"
            },
        );
        all.push((way, got));
    }
    let mut pids = Vec::new();
    for (way, got) in all {
        assert_eq!(got.bytes, SIZE, "{way}: every byte");
        assert_eq!(got.sha256, want, "{way}: the same bytes, in order");
        assert_eq!(got.seq_gaps, 0, "{way}: sequence numbers are contiguous");
        assert_eq!(got.exit, Some(0), "{way}");
        assert!(got.pid > 0, "{way}");
        pids.push(got.pid);
    }
    // Each reader fell far enough behind that the process waited for it:
    // the agent says so once per process, in its log in the sandbox.
    let (log, _) = proc_sh(&mut p, &id, "cat /var/log/talon/agent.log").await;
    for pid in pids {
        assert!(
            log.contains(&format!("output of pid {pid} is held back")),
            "pid {pid} was never held for its reader: {log}"
        );
    }
}
