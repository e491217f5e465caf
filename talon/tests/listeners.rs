//! Stalled bodies and floods on every listener a client reaches (gRPC,
//! REST, E2B's control plane and its envd data plane, ops), against a real
//! `talon up` with short limits. The probe filled each listener's 4,096
//! connections from 17 loopback addresses with connections that sent
//! their headers (or an HTTP/2 preface) and then nothing, and every
//! legitimate call failed for the whole minute it lasted; a bad
//! credential held its connection for as long as its body did not come;
//! and E2B's listeners took a request with two framings. (Issue 30,
//! items 2 and 8.) No sandbox is needed: the data plane's token is minted
//! with the platform's key for a sandbox that does not exist, which the
//! server answers for as such.

mod common;
use common::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The body timeout and the idle time of unauthenticated connections.
const DEADLINE: Duration = Duration::from_secs(3);

/// `talon up` with small connection limits and short deadlines; the new
/// settings go by environment, so a build without them still starts.
async fn up() -> Server {
    Server::up_with(&[
        "--runtime",
        "none",
        "--grpc-max-connections",
        "300",
        "--grpc-max-connections-per-ip",
        "24",
        "--http-max-connections",
        "300",
        "--http-max-connections-per-ip",
        "24",
        "TALON_GRPC_MAX_UNAUTHENTICATED_CONNECTIONS=64",
        "TALON_HTTP_MAX_UNAUTHENTICATED_CONNECTIONS=64",
        "TALON_CONNECTION_IDLE_SECS=3",
        "TALON_REQUEST_BODY_TIMEOUT_SECS=3",
    ])
    .await
}

fn addr(url: &str) -> SocketAddr {
    url.trim_start_matches("http://").parse().unwrap()
}

/// A sandbox's E2B id and access token, minted with the platform's key
/// (the token is self-contained; the sandbox does not exist).
fn sandbox_token(s: &Server) -> (&'static str, String) {
    let key = std::fs::read_to_string(s.data_dir().join("keys/preview.key")).unwrap();
    let keys = talon_server::auth::preview::PreviewKeys::new(key.trim().as_bytes());
    let id = "abcdefghijklmnopqrstuvwxyz";
    let token = keys
        .sandbox_token(&format!("sbx_{id}"), &s.boot.tenant_id)
        .unwrap();
    (id, token)
}

/// A request head that announces a body of 100 bytes, which never comes.
fn stalled(line: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut h = format!("{line} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n");
    if !headers.iter().any(|(k, _)| *k == "content-type") {
        h.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// HTTP/2's preface and an empty SETTINGS frame, and nothing after.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// 17 addresses × 24 connections to `to`, each sending one of `firsts`
/// in turn: more than the listener's 300, as the probe's were more than
/// its 4,096.
async fn flood(to: SocketAddr, firsts: Vec<Vec<u8>>) -> Vec<TcpStream> {
    let firsts = std::sync::Arc::new(firsts);
    let per_address = (2..=18u8).map(|n| {
        let firsts = firsts.clone();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for i in 0..24 {
                let sock = tokio::net::TcpSocket::new_v4().unwrap();
                sock.bind(SocketAddr::from(([127, 0, 0, n], 0))).unwrap();
                if let Ok(mut c) = sock.connect(to).await {
                    let _ = c.write_all(&firsts[i % firsts.len()]).await;
                    out.push(c);
                }
            }
            out
        })
    });
    let mut out = Vec::new();
    for conns in futures::future::join_all(per_address).await {
        out.extend(conns.unwrap());
    }
    out
}

/// How many of `conns` the server still holds open (a closed one reads
/// to its end, after whatever answer it got).
async fn still_open(conns: &mut [TcpStream]) -> usize {
    let mut open = 0;
    for c in conns {
        let mut b = [0u8; 4096];
        loop {
            match tokio::time::timeout(Duration::from_millis(50), c.read(&mut b)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(_)) => continue,
                Err(_) => {
                    open += 1;
                    break;
                }
            }
        }
    }
    open
}

/// Once the embedded worker's session is up: a connection that has not
/// authenticated yet when a flood comes may be closed to make room, the
/// worker's too (it would reconnect; the test waits rather than log it).
async fn worker_registered(s: &Server) {
    let mut admin = s.admin().await;
    for _ in 0..200 {
        let workers = admin
            .admin
            .list_workers(talon_proto::v1::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        if workers
            .iter()
            .any(|w| w.state == talon_proto::v1::WorkerState::Active as i32)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the embedded worker never registered");
}

/// One call with a valid credential through each edge, so the REST
/// gateway's and the E2B edge's own connections to the server are
/// authenticated before a flood comes: otherwise one of them may be the
/// connection closed to make room, and the call that was riding on it
/// fails once (499 "operation was canceled") while it reconnects.
async fn edges_authenticated(s: &Server) {
    let key = s.boot.api_key.clone();
    let c = reqwest::Client::new();
    let me = c
        .get(format!("{}/v1/auth/me", s.http))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status().as_u16(), 200, "REST before the flood");
    let list = c
        .get(format!("{}/v2/sandboxes", s.e2b))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(list.status().as_u16(), 200, "E2B before the flood");
}

/// A call that must be answered promptly.
async fn prompt<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 5 s under the flood"))
}

/// A flood of stalled and idle connections from 17 addresses on every
/// listener at once: legitimate calls are still answered, and every
/// flooding connection is closed within the deadline.
#[tokio::test(flavor = "multi_thread")]
async fn floods_of_stalled_connections_leave_every_listener_answering() {
    talon_core::listen::raise_fd_limit();
    let s = up().await;
    worker_registered(&s).await;
    edges_authenticated(&s).await;
    let (sbx, token) = sandbox_token(&s);
    let forged_key = [("authorization", "Bearer tln_forged0_xxxxxxxxxxxxxxxx")];
    let envd = |line: &str, ctype: &'static str| {
        stalled(
            line,
            &[
                ("x-access-token", "tsb_forged"),
                ("e2b-sandbox-id", sbx),
                ("content-type", ctype),
            ],
        )
    };
    let (rest, grpc, control, data, ops) = tokio::join!(
        flood(
            addr(&s.http),
            vec![
                stalled("POST /v1/sandboxes", &forged_key),
                stalled("POST /v1/auth/login", &[]),
            ],
        ),
        flood(addr(&s.grpc), vec![H2_PREFACE.to_vec()]),
        flood(
            addr(&s.e2b),
            vec![stalled("POST /sandboxes", &[("x-api-key", "tln_forged")])],
        ),
        flood(
            addr(&s.e2b_sandbox),
            vec![
                envd("POST /process.Process/Start", "application/json"),
                envd(
                    "POST /process.Process/StreamInput",
                    "application/connect+json",
                ),
            ],
        ),
        // Headers begun and never finished.
        flood(
            addr(&s.ops),
            vec![b"GET /healthz HTTP/1.1\r\nHost: x\r\n".to_vec()]
        ),
    );
    // From here the newest stalled connections stand until the deadline.
    let flooded = Instant::now();
    let mut floods = [
        ("REST", rest),
        ("gRPC", grpc),
        ("E2B control", control),
        ("E2B envd", data),
        ("ops", ops),
    ];
    for (what, conns) in &floods {
        assert!(
            conns.len() > 300,
            "{what}: only {} connections made",
            conns.len()
        );
    }

    // Legitimate calls, each on a new connection, meanwhile.
    let key = s.boot.api_key.clone();
    let channel = prompt("gRPC connect", async {
        tonic::transport::Channel::from_shared(s.grpc.clone())
            .unwrap()
            .connect()
            .await
            .expect("gRPC connect under the flood")
    })
    .await;
    let mut auth = talon_proto::v1::auth_service_client::AuthServiceClient::with_interceptor(
        channel,
        bearer(&key),
    );
    let me = prompt(
        "gRPC WhoAmI",
        auth.who_am_i(talon_proto::v1::WhoAmIRequest {}),
    )
    .await
    .expect("gRPC WhoAmI under the flood");
    assert_eq!(me.into_inner().tenant_id, s.boot.tenant_id);
    let get = |url: String, headers: Vec<(&'static str, String)>| async move {
        let mut r = reqwest::Client::new().get(&url);
        for (k, v) in headers {
            r = r.header(k, v);
        }
        let resp = prompt(&url, r.send())
            .await
            .unwrap_or_else(|e| panic!("{url} under the flood: {e}"));
        let st = resp.status().as_u16();
        (st, resp.text().await.unwrap_or_default())
    };
    let (st, body) = get(
        format!("{}/v1/auth/me", s.http),
        vec![("authorization", format!("Bearer {key}"))],
    )
    .await;
    assert_eq!(st, 200, "REST: {body}");
    let (st, body) = get(
        format!("{}/v2/sandboxes", s.e2b),
        vec![("x-api-key", key.clone())],
    )
    .await;
    assert_eq!(st, 200, "E2B control: {body}");
    // The server's answer for a sandbox that is not there.
    let (st, body) = get(
        format!("{}/health", s.e2b_sandbox),
        vec![
            ("x-access-token", token.clone()),
            ("e2b-sandbox-id", sbx.to_string()),
        ],
    )
    .await;
    assert!(
        st == 502 && body.contains("was not found"),
        "E2B envd: {st} {body}"
    );
    let (st, body) = get(format!("{}/healthz", s.ops), vec![]).await;
    assert_eq!(st, 200, "ops: {body}");
    let answered = flooded.elapsed();
    assert!(
        answered < DEADLINE,
        "the calls took {answered:?}, past the deadline: the test can't tell budget from deadline"
    );

    // Every flooding connection is closed within the deadline.
    let closed_by = flooded + DEADLINE + Duration::from_secs(2);
    tokio::time::sleep(closed_by.saturating_duration_since(Instant::now())).await;
    for (what, conns) in &mut floods {
        let open = still_open(conns).await;
        assert_eq!(open, 0, "{what}: {open} stalled connections still open");
    }
}

/// Sends a request head that announces a body which never comes: the
/// status of its answer (None: none within 3 s) and how long it took.
async fn answer_to_stalled(to: SocketAddr, head: &[u8]) -> (Option<u16>, Duration) {
    let t0 = Instant::now();
    let mut c = TcpStream::connect(to).await.unwrap();
    c.write_all(head).await.unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(3), async {
        while !got.windows(2).any(|w| w == b"\r\n") {
            match c.read(&mut b).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&b[..n]),
            }
        }
    })
    .await;
    let status = read.ok().and_then(|_| {
        std::str::from_utf8(&got)
            .ok()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    });
    (status, t0.elapsed())
}

/// A bad credential is answered before any body is read, on every
/// listener: before, the REST gateway, E2B's create and envd's calls and
/// `/files` (with a forged token or signature) read the body first and
/// held the connection for as long as it did not come.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_credential_is_answered_before_the_body() {
    let s = up().await;
    let (sbx, _) = sandbox_token(&s);
    let forged = [("x-access-token", "tsb_forged"), ("e2b-sandbox-id", sbx)];
    let octets = ("content-type", "application/octet-stream");
    let cases = [
        (
            "REST create",
            addr(&s.http),
            stalled(
                "POST /v1/sandboxes",
                &[("authorization", "Bearer tln_forged0_xxxxxxxxxxxxxxxx")],
            ),
            Some(401),
        ),
        (
            "REST, no credential",
            addr(&s.http),
            stalled("POST /v1/sandboxes", &[]),
            Some(401),
        ),
        (
            "E2B create",
            addr(&s.e2b),
            stalled("POST /sandboxes", &[("x-api-key", "tln_forged")]),
            Some(401),
        ),
        (
            "envd Start",
            addr(&s.e2b_sandbox),
            stalled("POST /process.Process/Start", &forged),
            Some(401),
        ),
        (
            "envd StreamInput",
            addr(&s.e2b_sandbox),
            stalled(
                "POST /process.Process/StreamInput",
                &[
                    forged[0],
                    forged[1],
                    ("content-type", "application/connect+json"),
                ],
            ),
            Some(401),
        ),
        (
            "envd upload, forged token",
            addr(&s.e2b_sandbox),
            stalled("POST /files?path=a.txt", &[forged[0], forged[1], octets]),
            Some(401),
        ),
        // A signature is the server's to check (against a sandbox it
        // does not know here): any refusal, at once.
        (
            "envd upload, forged signature",
            addr(&s.e2b_sandbox),
            stalled(
                "POST /files?path=a.txt&username=user&signature=v1_forged",
                &[("e2b-sandbox-id", sbx), octets],
            ),
            None,
        ),
    ];
    for (what, to, head, want) in cases {
        let (status, took) = answer_to_stalled(to, &head).await;
        let st = status.unwrap_or_else(|| panic!("{what}: no answer in {took:?}"));
        match want {
            Some(w) => assert_eq!(st, w, "{what}"),
            None => assert!(st >= 400, "{what}: {st}"),
        }
        assert!(
            took < Duration::from_secs(1),
            "{what}: answered after {took:?}"
        );
    }

    // gRPC: a client stream with a forged token, whose messages never
    // come, is refused on its headers.
    let channel = s.channel().await;
    let mut procs = talon_proto::v1::process_service_client::ProcessServiceClient::with_interceptor(
        channel,
        bearer("tln_forged0_xxxxxxxxxxxxxxxx"),
    );
    let never = futures::stream::pending::<talon_proto::v1::SendProcessInputRequest>();
    let r = tokio::time::timeout(Duration::from_secs(1), procs.send_process_input(never))
        .await
        .expect("gRPC: no answer within 1 s");
    assert_eq!(code(r), tonic::Code::Unauthenticated);
}

/// E2B's listeners refuse a request with both `Transfer-Encoding` and
/// `Content-Length`, as the REST gateway does: the control listener
/// created a sandbox from one.
#[tokio::test(flavor = "multi_thread")]
async fn e2b_listeners_refuse_two_framings() {
    let s = up().await;
    let (sbx, token) = sandbox_token(&s);
    let key = s.boot.api_key.clone();
    let cases = [
        (
            addr(&s.e2b),
            format!("POST /sandboxes HTTP/1.1\r\nHost: x\r\nX-API-Key: {key}\r\n"),
        ),
        (
            addr(&s.e2b_sandbox),
            format!(
                "POST /process.Process/List HTTP/1.1\r\nHost: x\r\nX-Access-Token: {token}\r\nE2b-Sandbox-Id: {sbx}\r\n"
            ),
        ),
    ];
    for (to, head) in cases {
        for framing in [
            "Content-Length: 4\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: chunked\r\nContent-Length: 4",
        ] {
            let mut c = TcpStream::connect(to).await.unwrap();
            let req = format!(
                "{head}Content-Type: application/json\r\n{framing}\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n"
            );
            c.write_all(req.as_bytes()).await.unwrap();
            let mut out = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut out)).await;
            let out = String::from_utf8_lossy(&out);
            assert!(out.starts_with("HTTP/1.1 400"), "{to} {framing}: {out}");
            assert!(
                out.contains("Transfer-Encoding and Content-Length"),
                "{to}: {out}"
            );
        }
    }
}
