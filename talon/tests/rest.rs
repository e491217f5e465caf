//! The REST gateway of a real `talon up`: routes from the contract, JSON
//! in and out, the error table, NDJSON and SSE streams, raw uploads and
//! downloads (a broken upload leaves no file), and the PTY over a
//! WebSocket. Needs root for the sandbox (CI is root).

mod common;
use base64::Engine;
use common::*;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};

struct Rest {
    base: String,
    key: String,
    c: reqwest::Client,
}

impl Rest {
    fn req(&self, m: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.c
            .request(m, format!("{}{path}", self.base))
            .bearer_auth(&self.key)
    }
    async fn json(&self, m: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self.req(m, path);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap_or(""))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rest_gateway_end_to_end() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    let s = Server::up().await;
    let t = tenant(&s, "rest").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let api = Rest {
        base: s.http.clone(),
        key: t.developer.clone(),
        c: reqwest::Client::new(),
    };
    use reqwest::Method as M;

    // The document is served and is 3.1.
    let doc: Value = reqwest::get(format!("{}/openapi.json", s.http))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");

    // The error table.
    let anon = reqwest::get(format!("{}/v1/sandboxes", s.http))
        .await
        .unwrap();
    assert_eq!(anon.status().as_u16(), 401);
    let body: Value = anon.json().await.unwrap();
    assert_eq!(body["code"], 16, "{body}");
    assert!(body["message"].is_string() && body["details"].is_array());
    let (st, body) = api.json(M::GET, "/v1/sandboxes/sbx_nope", None).await;
    assert_eq!((st, body["code"].as_i64()), (404, Some(5)), "{body}");
    let (st, _) = api.json(M::GET, "/v1/no/such/route", None).await;
    assert_eq!(st, 404);
    let bad = api
        .req(M::POST, "/v1/sandboxes")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let (st, body) = api
        .json(M::POST, "/v1/sandboxes", Some(json!({"noSuchField": 1})))
        .await;
    assert_eq!(st, 400, "{body}");

    // Create and wait, with the query parameters of the contract.
    let (st, created) = api
        .json(
            M::POST,
            "/v1/sandboxes?wait_until_running=true&waitTimeout=60s",
            Some(json!({"resources": {"cpuMillis": 500, "memoryMib": 256}})),
        )
        .await;
    assert_eq!(st, 200, "{created}");
    let sb = &created["sandbox"];
    assert_eq!(sb["state"], "SANDBOX_STATE_RUNNING", "{sb}");
    let id = sb["sandboxId"].as_str().unwrap().to_string();
    let (st, got) = api.json(M::GET, &format!("/v1/sandboxes/{id}"), None).await;
    assert_eq!((st, &got["sandbox"]["sandboxId"]), (200, &json!(id)));
    let wrong = api
        .req(M::PUT, &format!("/v1/sandboxes/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 405);
    assert!(wrong.headers().contains_key("allow"));

    // Idempotency-Key, metadata filters (deepObject or dotted) and metrics.
    let keyed = |key: &str, body: Value| {
        api.req(M::POST, "/v1/sandboxes")
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let body =
        json!({"metadata": {"user": "ann"}, "resources": {"cpuMillis": 100, "memoryMib": 64}});
    let first: Value = keyed("rest-1", body.clone())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let again: Value = keyed("rest-1", body).await.unwrap().json().await.unwrap();
    let kid = first["sandbox"]["sandboxId"].as_str().unwrap().to_string();
    assert_eq!(again["sandbox"]["sandboxId"], json!(kid));
    let (st, body) = api
        .json(M::POST, "/v1/sandboxes?idempotencyKey=rest-2", None)
        .await;
    assert_eq!(st, 200, "{body}");
    let clash = keyed("rest-3", json!({})).await.unwrap();
    assert_eq!(clash.status().as_u16(), 200);
    let differ = api
        .req(M::POST, "/v1/sandboxes?idempotencyKey=a")
        .header("idempotency-key", "b")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(differ.status().as_u16(), 400);
    for q in ["metadata%5Buser%5D=ann", "metadata.user=ann"] {
        let (st, list) = api.json(M::GET, &format!("/v1/sandboxes?{q}"), None).await;
        assert_eq!(st, 200, "{list}");
        let ids: Vec<&str> = list["sandboxes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sandboxId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, vec![kid.as_str()], "{q}");
    }
    signed_file_urls(&api, &t.owner, &id, &kid).await;
    let (st, m) = api
        .json(M::GET, &format!("/v1/sandboxes/{id}/metrics"), None)
        .await;
    assert_eq!(st, 200, "{m}");
    assert_eq!(
        m["metrics"]["memTotalBytes"],
        json!((256u64 << 20).to_string())
    );
    let (list_st, all) = api.json(M::GET, "/v1/sandboxes", None).await;
    assert_eq!(list_st, 200);
    for sb in all["sandboxes"].as_array().unwrap() {
        let other = sb["sandboxId"].as_str().unwrap();
        if other != id {
            let (st, _) = api
                .json(M::DELETE, &format!("/v1/sandboxes/{other}"), None)
                .await;
            assert_eq!(st, 200);
        }
    }

    // A process as NDJSON: started, output, exited with its code.
    let resp = api
        .req(M::POST, &format!("/v1/sandboxes/{id}/processes"))
        .json(&json!({"command": ["sh", "-c", "echo hi; echo err >&2; exit 3"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-type"], "application/x-ndjson");
    let text = resp.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    for e in &events {
        let e = &e["event"];
        if e["output"].is_object() {
            let data = b64(&e["output"]["data"]);
            if e["output"]["stream"] == "OUTPUT_STREAM_STDERR" {
                err.extend(data);
            } else {
                out.extend(data);
            }
        }
        if e["exited"].is_object() {
            code = e["exited"]["exitCode"].as_i64();
        }
    }
    assert_eq!(
        (out.as_slice(), err.as_slice(), code),
        (&b"hi\n"[..], &b"err\n"[..], Some(3)),
        "{text}"
    );

    // The same as SSE.
    let sse = api
        .req(M::POST, &format!("/v1/sandboxes/{id}/processes"))
        .header("accept", "text/event-stream")
        .json(&json!({"command": ["echo", "sse"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(sse.headers()["content-type"], "text/event-stream");
    let text = sse.text().await.unwrap();
    assert!(
        text.starts_with("data: {") && text.contains("\n\n"),
        "{text}"
    );

    // A raw upload in several chunks, and a raw download.
    let blob: Vec<u8> = (0..2_500_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let (st, info) = {
        let r = api
            .req(
                M::POST,
                &format!("/v1/sandboxes/{id}/files:write?path=blob.bin&create_parents=true"),
            )
            .header("content-type", "application/octet-stream")
            .body(blob.clone())
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(st, 200, "{info}");
    assert_eq!(info["info"]["size"], "2500000", "{info}");
    let down = api
        .req(
            M::GET,
            &format!("/v1/sandboxes/{id}/files:read?path=blob.bin"),
        )
        .header("accept", "application/octet-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(down.headers()["content-type"], "application/octet-stream");
    assert_eq!(down.bytes().await.unwrap().as_ref(), blob.as_slice());
    // As JSON, the same bytes in base64 lines.
    let lines = api
        .req(
            M::GET,
            &format!("/v1/sandboxes/{id}/files:read?path=blob.bin"),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let joined: Vec<u8> = lines
        .lines()
        .flat_map(|l| b64(&serde_json::from_str::<Value>(l).unwrap()["data"]))
        .collect();
    assert_eq!(joined, blob);
    // A client stream as a JSON array of messages; the gateway adds the
    // upload's finish.
    let (st, body) = api
        .json(
            M::POST,
            &format!("/v1/sandboxes/{id}/files:write"),
            Some(json!([{"header": {"path": "j.txt"}}, {"data": "aGk="}])),
        )
        .await;
    assert_eq!((st, &body["info"]["size"]), (200, &json!("2")), "{body}");
    // A download of nothing is a 404, not a 200 with an error line.
    let (st, body) = api
        .json(
            M::GET,
            &format!("/v1/sandboxes/{id}/files:read?path=nope"),
            None,
        )
        .await;
    assert_eq!(st, 404, "{body}");

    // An upload that breaks off leaves no file (and no short one).
    let chunks = futures::stream::iter(vec![
        Ok::<_, std::io::Error>(vec![b'x'; 1 << 20]),
        Ok(vec![b'y'; 1 << 20]),
        Err(std::io::Error::other("client went away")),
    ]);
    let broken = api
        .req(
            M::POST,
            &format!("/v1/sandboxes/{id}/files:write?path=broken.bin"),
        )
        .header("content-type", "application/octet-stream")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await;
    assert!(broken.is_err() || !broken.unwrap().status().is_success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (st, body) = api
        .json(
            M::GET,
            &format!("/v1/sandboxes/{id}/files:stat?path=broken.bin"),
            None,
        )
        .await;
    assert_eq!(st, 404, "a broken upload left a file: {body}");

    // The PTY over a WebSocket, with the credential as a header.
    let ws_url = format!(
        "{}/v1/sandboxes/{id}/pty",
        s.http.replace("http://", "ws://")
    );
    let mut req = ws_url.clone().into_client_request().unwrap();
    req.headers_mut().insert(
        "authorization",
        format!("Bearer {}", t.developer).parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    pty_session(&mut ws).await;
    // And as a subprotocol, as a browser sends it.
    let mut req = ws_url.into_client_request().unwrap();
    req.headers_mut().insert(
        "sec-websocket-protocol",
        format!("talon.v1, bearer.{}", t.developer).parse().unwrap(),
    );
    let (mut ws, resp) = tokio_tungstenite::connect_async(req).await.unwrap();
    assert_eq!(resp.headers()["sec-websocket-protocol"], "talon.v1");
    pty_session(&mut ws).await;
    // Without the upgrade, a bidirectional stream is refused.
    let (st, _) = api
        .json(M::GET, &format!("/v1/sandboxes/{id}/pty"), None)
        .await;
    assert_eq!(st, 400);

    let (st, _) = api
        .json(M::DELETE, &format!("/v1/sandboxes/{id}"), None)
        .await;
    assert_eq!(st, 200);
}

async fn pty_session(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) {
    use tungstenite::Message;
    ws.send(Message::Text(
        json!({"open": {"command": {"command": ["sh"]}, "size": {"rows": 24, "cols": 80}}})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    ws.send(Message::Binary(
        b"echo $((6*7)); stty size\n".to_vec().into(),
    ))
    .await
    .unwrap();
    ws.send(Message::Text(
        json!({"resize": {"rows": 40, "cols": 100}})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    ws.send(Message::Binary(b"stty size\n".to_vec().into()))
        .await
        .unwrap();
    let mut screen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !(screen.contains("42\r\n") && screen.contains("40 100")) {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .unwrap_or_else(|_| panic!("no 42 / 40 100 on the PTY: {screen:?}"))
            .unwrap()
            .unwrap();
        if let Message::Binary(b) = m {
            screen.push_str(&String::from_utf8_lossy(&b));
        }
    }
    ws.send(Message::Binary(b"exit\n".to_vec().into()))
        .await
        .unwrap();
    let _ = ws.close(None).await;
}

/// Signed file URLs: no other credential needed, and each opens one
/// sandbox, one path and one operation only; writes are audited in the
/// signer's name.
async fn signed_file_urls(api: &Rest, owner: &str, id: &str, other_id: &str) {
    use reqwest::Method as M;
    let sign = |sbx: &str, path: &str, op: &str| {
        let body = json!({"path": path, "operation": op, "ttl": "60s"});
        let sbx = sbx.to_string();
        async move {
            let (st, v) = api
                .json(
                    M::POST,
                    &format!("/v1/sandboxes/{sbx}/file-urls"),
                    Some(body),
                )
                .await;
            assert_eq!(st, 200, "{v}");
            v["url"].as_str().unwrap().to_string()
        }
    };
    let anon = reqwest::Client::new();
    let up = sign(id, "up/signed.bin", "FILE_URL_OPERATION_WRITE").await;
    assert!(up.starts_with(&api.base), "{up}");
    let data: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let r = anon
        .post(&up)
        .header("content-type", "application/octet-stream")
        .body(data.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap());
    let down = sign(id, "up/signed.bin", "FILE_URL_OPERATION_READ").await;
    let r = anon.get(&down).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.bytes().await.unwrap().to_vec(),
        data,
        "raw bytes by default"
    );
    // The read URL does not write, nor read another path or sandbox.
    let as_write = down.replace("files:read", "files:write");
    let r = anon
        .post(&as_write)
        .body("x")
        .header("content-type", "application/octet-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let other_path = down.replace("path=up/signed.bin", "path=/etc/shadow");
    assert_ne!(other_path, down);
    assert_eq!(
        anon.get(&other_path)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        403
    );
    let other_sbx = down.replace(id, other_id);
    assert_eq!(
        anon.get(&other_sbx).send().await.unwrap().status().as_u16(),
        403
    );
    // A forged or missing token, and an unknown operation.
    let forged = format!("{}x", &down[..down.len() - 1]);
    assert_eq!(
        anon.get(&forged).send().await.unwrap().status().as_u16(),
        401
    );
    let bare = down.split("&token=").next().unwrap().to_string();
    assert_eq!(anon.get(&bare).send().await.unwrap().status().as_u16(), 401);
    let (st, _) = api
        .json(
            M::POST,
            &format!("/v1/sandboxes/{id}/file-urls"),
            Some(json!({"path": "f"})),
        )
        .await;
    assert_eq!(st, 400);
    // A token does not open any other call, even on its own sandbox.
    let token = down.split("&token=").nth(1).unwrap();
    let r = anon
        .get(format!("{}/v1/sandboxes/{id}/files:list?path=.", api.base))
        .header("talon-file-token", token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // The upload is in the audit log, in the signer's name.
    let owner = Rest {
        base: api.base.clone(),
        key: owner.to_string(),
        c: api.c.clone(),
    };
    // (The audit log is written behind the call: wait for it a little.)
    let mut audit = Value::Null;
    for _ in 0..40 {
        let (st, a) = owner
            .json(M::GET, "/v1/admin/audit-events?pageSize=200", None)
            .await;
        assert_eq!(st, 200, "{a}");
        audit = a;
        let found = audit["auditEvents"].as_array().unwrap().iter().any(|e| {
            e["method"] == json!("/talon.v1.FilesystemService/WriteFile")
                && e["resourceId"] == json!(id)
                && e["actorId"].as_str().is_some_and(|a| a.starts_with("key_"))
        });
        if found {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no audited signed write: {audit}");
}
