//! Hostile clients against a real `talon up`: what one request may hold
//! in memory, floods of idle and slow connections, and request smuggling.
//! Each was a finding of the independent probe. Needs root (sandboxes).

mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn sandbox(s: &Server, key: &str) -> String {
    sandbox_with(s, key, json!({})).await
}

/// A running sandbox of `body`, once the embedded worker is up.
async fn sandbox_with(s: &Server, key: &str, body: Value) -> String {
    rest_create(s, key, body)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"))
}

/// A JSON client stream is decoded one message at a time, with a cap on
/// messages: a 15 MiB `files:write` array of 1.15 M tiny messages raised
/// talon's memory from 304 MiB to 1.1 GiB (four at once: 1.7 GiB, and it
/// stayed there).
#[tokio::test(flavor = "multi_thread")]
async fn json_client_streams_hold_one_message_at_a_time() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up().await;
    let key = s.boot.api_key.clone();
    let id = sandbox(&s, &key).await;
    let c = reqwest::Client::new();
    let url = |path: &str| format!("{}/v1/sandboxes/{id}/files:write?path={path}", s.http);

    // Just over the cap: refused with a clear 400, no file written.
    let mut over = vec![json!({"header": {"path": "over.bin"}})];
    over.extend((0..10_000).map(|_| json!({"data": "eA=="})));
    let r = c
        .post(format!("{}/v1/sandboxes/{id}/files:write", s.http))
        .bearer_auth(&key)
        .json(&over)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("at most 10000 messages"),
        "{body}"
    );
    // Under it: every message arrives, in order.
    let mut under = vec![json!({"header": {"path": "under.bin"}})];
    under.extend((0..9_000).map(|_| json!({"data": "eA=="})));
    let (st, body) = rest_json(
        &c,
        &key,
        reqwest::Method::POST,
        format!("{}/v1/sandboxes/{id}/files:write", s.http),
        Some(Value::Array(under)),
    )
    .await;
    assert_eq!((st, &body["info"]["size"]), (200, &json!("9000")), "{body}");
    // Malformed halfway: refused, nothing written (the call is cancelled,
    // never ended cleanly).
    let r = c
        .post(url("half.bin"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body("[{\"data\":\"eA==\"},{\"data\":\"eA==\"},{\"data\":")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let (st, _) = rest_json(
        &c,
        &key,
        reqwest::Method::GET,
        format!("{}/v1/sandboxes/{id}/files:stat?path=half.bin", s.http),
        None,
    )
    .await;
    assert_eq!(st, 404, "a malformed upload left a file");

    // The probe's body, four at once.
    let mut hostile = String::from("[{\"header\":{\"path\":\"h.bin\"}}");
    while hostile.len() < 15 << 20 {
        hostile.push_str(",{\"data\":\"eA==\"}");
    }
    hostile.push(']');
    let before = rss_kib(s.pid());
    let sends = (0..4).map(|_| {
        let (c, key, body, url) = (c.clone(), key.clone(), hostile.clone(), url("h.bin"));
        async move {
            c.post(url)
                .bearer_auth(key)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    });
    for r in futures::future::join_all(sends).await {
        // Refused early: a 400, or the connection closed on the rest.
        assert!(r.as_ref().map_or(true, |st| *st == 400), "{r:?}");
    }
    let after = rss_kib(s.pid());
    assert!(
        after < before + 100 * 1024,
        "talon grew from {before} KiB to {after} KiB on four hostile bodies"
    );
}

/// Floods of idle and slow connections: the probe's 20k idle
/// unauthenticated connections to the gateway took every fd of the one
/// process and the platform stopped answering. Here a flood from other
/// addresses fills the gateway's connection limit; the control plane
/// still answers over gRPC, the gateway's fds stay bounded, silent and
/// slow connections are closed, and then the gateway answers again.
#[tokio::test(flavor = "multi_thread")]
async fn connection_floods_leave_the_platform_answering() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up_with(&[
        "--http-max-connections",
        "600",
        "--http-max-connections-per-ip",
        "100",
        "--connection-first-byte-secs",
        "3",
        "--http-header-timeout-secs",
        "3",
    ])
    .await;
    let http: std::net::SocketAddr = s.http.trim_start_matches("http://").parse().unwrap();
    let fds_before = open_fds(s.pid());
    // 20 addresses × 150 connections, idle.
    let mut flood = Vec::new();
    for n in 2..22u8 {
        for _ in 0..150 {
            let sock = tokio::net::TcpSocket::new_v4().unwrap();
            sock.bind(std::net::SocketAddr::from(([127, 0, 0, n], 0)))
                .unwrap();
            if let Ok(c) = sock.connect(http).await {
                flood.push(c);
            }
        }
    }
    assert!(flood.len() >= 2000, "{} connections made", flood.len());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fds = open_fds(s.pid());
    assert!(
        fds < fds_before + 700,
        "talon holds {fds} fds under the flood ({fds_before} before)"
    );
    // The control plane answers over gRPC meanwhile.
    let mut admin = s.admin().await;
    let me = admin
        .auth
        .who_am_i(talon_proto::v1::WhoAmIRequest::default())
        .await
        .expect("gRPC under a REST flood");
    assert!(!me.into_inner().tenant_id.is_empty());
    // The silent ones are closed after the first-byte time.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut b = [0u8; 64];
    let mut still_open = 0;
    for c in &mut flood {
        // Closed: EOF or a reset; open: the read waits.
        if tokio::time::timeout(Duration::from_millis(5), c.read(&mut b))
            .await
            .is_err()
        {
            still_open += 1;
        }
    }
    assert_eq!(still_open, 0, "silent connections were kept");
    // A slow client, headers a byte at a time and never finished, is
    // closed after the header timeout.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind(std::net::SocketAddr::from(([127, 0, 0, 30], 0)))
        .unwrap();
    let mut slow = sock.connect(http).await.unwrap();
    let started = std::time::Instant::now();
    let mut trickle = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\nX-Slow: "
        .iter()
        .cycle();
    while started.elapsed() < Duration::from_secs(10) {
        if slow.write_all(&[*trickle.next().unwrap()]).await.is_err() {
            break;
        }
        match tokio::time::timeout(Duration::from_millis(200), slow.read(&mut b)).await {
            Err(_) => {}
            Ok(_) => break,
        }
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "the slow client was closed after {took:?} (header timeout 3 s)"
    );
    drop(flood);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = reqwest::get(format!("{}/openapi.json", s.http))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(open_fds(s.pid()) < fds_before + 50);
}

/// A request with both Transfer-Encoding and Content-Length (how requests
/// are smuggled past a proxy that reads the other framing) is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_with_two_framings_is_refused() {
    let s = Server::up_with(&["--runtime", "none"]).await;
    let http = s.http.trim_start_matches("http://").to_string();
    // In either order, after a well-framed request on the same connection.
    for framing in [
        "Content-Length: 4\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 4",
    ] {
        let mut c = tokio::net::TcpStream::connect(&http).await.unwrap();
        let req = format!(
            "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n\
             POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             {framing}\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n"
        );
        c.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut out)).await;
        let out = String::from_utf8_lossy(&out);
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        let second = &out[out.rfind("HTTP/1.1 ").unwrap()..];
        assert!(second.starts_with("HTTP/1.1 400"), "{framing}: {second}");
        assert!(
            second.contains("Transfer-Encoding and Content-Length"),
            "{second}"
        );
    }
}

/// Host file modes: every file the platform writes under its data
/// directory is its owner's alone. The probe read every tenant's secrets
/// as another local user: `talon.db` and its WAL were 0644, each
/// sandbox's `bundle/config.json` (decrypted secrets and env) 0644, and
/// `worker/runtime-state/` listable. Walks the whole data directory (not
/// into a sandbox's own filesystems: its disk, secrets tmpfs and root are
/// mounts) after a sandbox with an env and a file secret starts, and
/// after it is stopped and started again.
#[tokio::test(flavor = "multi_thread")]
async fn files_under_the_data_directory_are_their_owners_alone() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up().await;
    let key = s.boot.api_key.clone();
    let c = reqwest::Client::new();
    for (name, delivery) in [
        ("TOKEN", "SECRET_DELIVERY_ENV"),
        ("CERT", "SECRET_DELIVERY_FILE"),
    ] {
        let (st, body) = rest_json(
            &c,
            &key,
            reqwest::Method::PUT,
            format!("{}/v1/secrets/{name}", s.http),
            Some(json!({"value": "s3cret-value", "delivery": delivery})),
        )
        .await;
        assert_eq!(st, 200, "{body}");
    }
    let id = sandbox_with(
        &s,
        &key,
        json!({"secretNames": ["TOKEN", "CERT"], "env": {"PLAIN": "x"}}),
    )
    .await;
    let out = rest_sh(
        &c,
        &key,
        &s.http,
        &id,
        "echo hi > /workspace/f; cat /run/secrets/CERT",
    )
    .await;
    assert!(out.contains("\"exitCode\":0"), "{out}");

    // Directories other users may pass through (a sandbox's mapped root
    // must reach its bundle), never list; the sealed agent they may run.
    let check = |phase: &str| {
        let root = s.data_dir();
        let dev = std::fs::metadata(&root).unwrap().dev();
        let mut bad = Vec::new();
        // (directory, whether other users can reach it)
        let mut stack = vec![(root.clone(), true)];
        while let Some((dir, reachable)) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                let mode = m.permissions().mode() & 0o7777;
                let rel = p.strip_prefix(&root).unwrap().display().to_string();
                // A secret in clear is root's alone: the spec a worker
                // keeps to start the sandbox again, and config.json,
                // which the runtime reads, are 0600 in a bundle others
                // can't list.
                if m.is_file()
                    && (reachable && mode & 0o044 != 0 || mode & 0o077 != 0)
                    && m.len() < 64 << 20
                    && std::fs::read(&p).is_ok_and(|b| b.windows(12).any(|w| w == b"s3cret-value"))
                {
                    bad.push(format!("{rel} {mode:o} holds a secret in clear"));
                }
                if m.file_type().is_symlink() || !reachable {
                    if m.is_dir() && m.dev() == dev && !rel.ends_with("/rootfs") {
                        stack.push((p, false));
                    }
                    continue;
                }
                if m.is_dir() {
                    // A mount (the sandbox's disk, secrets, root) is the
                    // sandbox's own filesystem; others may not list its
                    // mount point.
                    if m.dev() != dev || rel.ends_with("/rootfs") {
                        if mode & 0o044 != 0 && !rel.ends_with("/rootfs") {
                            bad.push(format!("{rel} {mode:o} (a mount point others may list)"));
                        }
                        continue;
                    }
                    if mode & 0o066 != 0 {
                        bad.push(format!("{rel} {mode:o}"));
                    }
                    stack.push((p, mode & 0o011 != 0));
                } else if m.is_file() {
                    // Others may run the sealed agent (a sandbox does).
                    let agent = rel.starts_with("worker/agent/talon-agent");
                    if mode & 0o066 != 0 && !(agent && mode & 0o022 == 0) {
                        bad.push(format!("{rel} {mode:o}"));
                    }
                } else if !(m.file_type().is_socket() || m.file_type().is_fifo()) {
                    bad.push(format!("{rel}: unexpected file type"));
                }
            }
        }
        assert!(bad.is_empty(), "{phase}: readable by others: {bad:#?}");
    };
    check("running");
    for verb in ["stop", "start"] {
        let (st, body) = rest_json(
            &c,
            &key,
            reqwest::Method::POST,
            format!("{}/v1/sandboxes/{id}:{verb}", s.http),
            Some(json!({})),
        )
        .await;
        assert_eq!(st, 200, "{verb}: {body}");
        let want = if verb == "stop" {
            "SANDBOX_STATE_STOPPED"
        } else {
            "SANDBOX_STATE_RUNNING"
        };
        let mut last = Value::Null;
        for _ in 0..300 {
            let (_, b) = rest_json(
                &c,
                &key,
                reqwest::Method::GET,
                format!("{}/v1/sandboxes/{id}", s.http),
                None,
            )
            .await;
            last = b["sandbox"].clone();
            if last["state"] == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(last["state"], want, "{verb}: {last}");
        // Stopped, its mount points are bare directories: root's alone.
        check(if verb == "stop" {
            "stopped"
        } else {
            "after stop and start"
        });
    }
}

/// User errors are 4xx with a reason, never a 500, and invalid values
/// are refused, not stored: each case is one the probe found answered
/// with a 500 or accepted.
#[tokio::test(flavor = "multi_thread")]
async fn user_errors_are_4xx_with_a_reason_and_invalid_values_are_refused() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up().await;
    let key = s.boot.api_key.clone();
    let id = sandbox(&s, &key).await;
    let c = reqwest::Client::new();
    let out = rest_sh(&c, &key, &s.http, &id, "mkdir -p /workspace/sub/deep").await;
    assert!(out.contains("\"exitCode\":0"), "{out}");
    let sbx = format!("{}/v1/sandboxes/{id}", s.http);
    let big = "a".repeat(1 << 20);
    use reqwest::Method as M;
    // (what, method, url, JSON body, raw body)
    type Case<'a> = (&'a str, M, String, Option<Value>, Option<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "a 1 MiB argument (E2BIG)",
            M::POST,
            format!("{sbx}/processes"),
            Some(json!({"command": ["echo", big]})),
            None,
        ),
        (
            "a write over a bind-mounted file (EBUSY)",
            M::POST,
            format!("{sbx}/files:write?path=/etc/ld.so.cache"),
            None,
            Some("x"),
        ),
        (
            "a write over /dev/null (EBUSY)",
            M::POST,
            format!("{sbx}/files:write?path=/dev/null"),
            None,
            Some("x"),
        ),
        (
            "a write over /dev/full (EBUSY)",
            M::POST,
            format!("{sbx}/files:write?path=/dev/full"),
            None,
            Some("x"),
        ),
        (
            "a read of /dev/tty (ENXIO)",
            M::GET,
            format!("{sbx}/files:read?path=/dev/tty"),
            None,
            None,
        ),
        (
            "a move into itself (EINVAL)",
            M::POST,
            format!("{sbx}/files:move"),
            Some(json!({"sourcePath": "sub", "destinationPath": "sub/deep/sub"})),
            None,
        ),
        (
            "a null body",
            M::POST,
            format!("{}/v1/sandboxes", s.http),
            Some(Value::Null),
            None,
        ),
        (
            "NUL in a label value",
            M::POST,
            format!("{}/v1/sandboxes", s.http),
            Some(json!({"labels": {"a": "x\u{0}y"}})),
            None,
        ),
        (
            "an IPv6 CIDR in an allowlist",
            M::POST,
            format!("{}/v1/sandboxes", s.http),
            Some(
                json!({"networkPolicy": {"mode": "EGRESS_MODE_ALLOWLIST", "allowCidrs": ["::/0"]}}),
            ),
            None,
        ),
        (
            "NUL in a process tag",
            M::POST,
            format!("{sbx}/processes"),
            Some(json!({"command": ["true"], "tag": "a\u{0}b"})),
            None,
        ),
        (
            "a 10,000-character tag",
            M::POST,
            format!("{sbx}/processes"),
            Some(json!({"command": ["true"], "tag": "t".repeat(10_000)})),
            None,
        ),
        (
            "a negative process timeout",
            M::POST,
            format!("{sbx}/processes"),
            Some(json!({"command": ["true"], "timeout": "-1s"})),
            None,
        ),
        (
            "a negative sandbox timeout",
            M::POST,
            format!("{}/v1/sandboxes", s.http),
            Some(json!({"timeout": "-1s"})),
            None,
        ),
        (
            "pageSize=-1",
            M::GET,
            format!("{}/v1/sandboxes?pageSize=-1", s.http),
            None,
            None,
        ),
        (
            "depth=-1",
            M::GET,
            format!("{sbx}/files:list?path=.&depth=-1"),
            None,
            None,
        ),
    ];
    for (what, method, url, body, raw) in cases {
        let mut r = c.request(method, &url).bearer_auth(&key);
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        if let Some(b) = raw {
            r = r.header("content-type", "application/octet-stream").body(b);
        }
        let r = r.send().await.unwrap();
        let st = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert!((400..500).contains(&st), "{what}: {st} {text}");
        let msg: Value = serde_json::from_str(&text).unwrap_or(json!({}));
        assert!(
            msg["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: no reason: {text}"
        );
    }
    // Newcomers' cases: a body over the JSON limit is 413 and says the
    // limit; a label error says the rule it broke; an environment too
    // large for exec is a 400 with the reason.
    let big_body = format!("{{\"labels\": {{\"a\": \"{}\"}}}}", "x".repeat(17 << 20));
    let r = c
        .post(format!("{}/v1/sandboxes", s.http))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(big_body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    // The unread rest of the body ends the connection: the answer says
    // so, or the client's next request may go out on it as it closes.
    assert_eq!(r.headers()["connection"], "close");
    assert!(r.text().await.unwrap().contains("16777216 bytes"));
    let (st, body) = rest_json(
        &c,
        &key,
        M::POST,
        format!("{}/v1/sandboxes", s.http),
        Some(json!({"labels": {"bad key": "v"}})),
    )
    .await;
    assert_eq!(st, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("a key is 1 to 63"),
        "{body}"
    );
    let env: serde_json::Map<String, Value> = (0..40)
        .map(|i| (format!("BIG{i}"), json!("e".repeat(100_000))))
        .collect();
    let (st, body) = rest_json(
        &c,
        &key,
        M::POST,
        format!("{sbx}/processes"),
        Some(json!({"command": ["true"], "env": env})),
    )
    .await;
    assert_eq!(st, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("too long"),
        "{body}"
    );
    // Nothing was created by the refused creates.
    let (_, list) = rest_json(&c, &key, M::GET, format!("{}/v1/sandboxes", s.http), None).await;
    assert_eq!(list["sandboxes"].as_array().unwrap().len(), 1, "{list}");
}

/// The cpu seconds (user + system) a process has used.
/// Follows `yes` for `secs` through REST: (response bytes, talon's cpu
/// seconds meanwhile).
async fn follow_a_flood(s: &Server, secs: f64) -> (usize, f64) {
    let key = s.boot.api_key.clone();
    let id = sandbox(s, &key).await;
    let c = reqwest::Client::new();
    let mut r = c
        .post(format!("{}/v1/sandboxes/{id}/processes", s.http))
        .bearer_auth(&key)
        .json(&json!({"command": ["yes", "an output flood"], "tag": "flood"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // Past the burst and the start-up.
    let warm = std::time::Instant::now();
    while warm.elapsed() < Duration::from_millis(500) {
        r.chunk().await.unwrap();
    }
    let cpu0 = cpu_secs(s.pid());
    let t0 = std::time::Instant::now();
    let mut bytes = 0;
    while t0.elapsed().as_secs_f64() < secs {
        bytes += r.chunk().await.unwrap().map_or(0, |c| c.len());
    }
    let cpu = cpu_secs(s.pid()) - cpu0;
    drop(r);
    let _ = rest_json(
        &c,
        &key,
        reqwest::Method::DELETE,
        format!("{}/v1/sandboxes/{id}", s.http),
        None,
    )
    .await;
    (bytes, cpu)
}

/// An output flood: `yes` followed by a client slowed another tenant's cpu
/// work 1.9× from outside the sandbox's cgroup, as the worker, server and
/// gateway (one talon process) copied every byte. Output now leaves the
/// data plane at most at --sandbox-output-bytes-per-sec per sandbox: the
/// bytes a client gets and the cpu talon spends stay bounded; without the
/// limit (0) both are many times more, so the test sees a regression.
#[tokio::test(flavor = "multi_thread")]
async fn an_output_flood_costs_the_host_a_bounded_share() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    const RATE: usize = 2 << 20;
    let secs = 3.0;
    let paced = Server::up_with(&["--sandbox-output-bytes-per-sec", &RATE.to_string()]).await;
    let (bytes, cpu) = follow_a_flood(&paced, secs).await;
    drop(paced);
    // NDJSON carries output base64-encoded (4/3) in small JSON records.
    let bound = (RATE as f64 * secs * 4.0 / 3.0 * 1.3) as usize;
    assert!(bytes <= bound, "{bytes} bytes in {secs} s, over {bound}");
    assert!(
        bytes > bound / 4,
        "only {bytes} bytes in {secs} s: output stalled"
    );
    let free = Server::up_with(&["--sandbox-output-bytes-per-sec", "0"]).await;
    let (free_bytes, free_cpu) = follow_a_flood(&free, secs).await;
    eprintln!(
        "paced: {bytes} B, talon cpu {cpu:.2} s; unlimited: {free_bytes} B, talon cpu {free_cpu:.2} s"
    );
    assert!(
        free_bytes > bytes * 3,
        "without the limit only {free_bytes} B (paced {bytes} B): the test can't tell"
    );
    assert!(
        cpu * 2.0 < free_cpu,
        "talon spent {cpu:.2} cpu-s paced, {free_cpu:.2} unlimited"
    );
}
