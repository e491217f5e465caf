//! The E2B-compatible control plane against a real `talon up`: E2B's
//! routes, JSON and statuses, onto real sandboxes, with the caller's key
//! deciding tenant and role like on every other surface.

mod common;
use common::*;
use serde_json::{Value, json};

struct E2bApi {
    base: String,
    key: String,
    c: reqwest::Client,
}

impl E2bApi {
    async fn call(&self, m: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call_with(m, path, body, &[]).await
    }

    async fn call_with(
        &self,
        m: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut r = self
            .c
            .request(m, format!("{}{path}", self.base))
            .header("x-api-key", &self.key);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    fn with_key(&self, key: &str) -> E2bApi {
        E2bApi {
            base: self.base.clone(),
            key: key.into(),
            c: self.c.clone(),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_e2b_control_plane() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    let s = Server::up().await;
    let t = tenant(&s, "e2b").await;
    let other = tenant(&s, "e2b-other").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let api = E2bApi {
        base: s.e2b.clone(),
        key: t.developer.clone(),
        c: reqwest::Client::new(),
    };
    use reqwest::Method as M;

    // No key, and a bad key: 401 in E2B's shape.
    let anon = reqwest::get(format!("{}/v2/sandboxes", s.e2b))
        .await
        .unwrap();
    assert_eq!(anon.status().as_u16(), 401);
    let body: Value = anon.json().await.unwrap();
    assert_eq!(body["code"], 401);
    assert!(body["message"].is_string());
    let (st, _) = api
        .with_key("tln_invalid0_xxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .call(M::GET, "/v2/sandboxes", None)
        .await;
    assert_eq!(st, 401);

    // Create: 201 once it runs, with an idempotency key honoured.
    let new = json!({"templateID": "base", "timeout": 120, "metadata": {"run": "r1"},
                     "envVars": {"GREETING": "hi"}, "allow_internet_access": true});
    let (st, a) = api
        .call_with(
            M::POST,
            "/v2/sandboxes",
            Some(new.clone()),
            &[("idempotency-key", "e2b-1")],
        )
        .await;
    assert_eq!(st, 201, "{a}");
    let id = a["sandboxID"].as_str().unwrap().to_string();
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        "{id}"
    );
    assert_eq!(
        (a["templateID"].as_str(), a["clientID"].as_str()),
        (Some("base"), Some("talon"))
    );
    assert!(a["envdVersion"].is_string());
    let (st, again) = api
        .call_with(
            M::POST,
            "/sandboxes",
            Some(new),
            &[("idempotency-key", "e2b-1")],
        )
        .await;
    assert_eq!((st, &again["sandboxID"]), (201, &json!(id)));
    let (st, b) = api
        .call(
            M::POST,
            "/sandboxes",
            Some(json!({"metadata": {"run": "r1"}, "autoPause": true, "autoResume": {"enabled": true}})),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    let bid = b["sandboxID"].as_str().unwrap().to_string();
    let (_, bd) = api.call(M::GET, &format!("/sandboxes/{bid}"), None).await;
    assert_eq!(
        bd["lifecycle"],
        json!({"autoResume": true, "onTimeout": "pause"})
    );
    let (st, _) = api
        .call(M::POST, "/sandboxes", Some(json!({"autoResume": true})))
        .await;
    assert_eq!(st, 400, "autoResume is an object");

    // Get: E2B's detail.
    let (st, d) = api.call(M::GET, &format!("/sandboxes/{id}"), None).await;
    assert_eq!(st, 200, "{d}");
    assert_eq!(d["state"], "running");
    assert_eq!(
        d["lifecycle"],
        json!({"autoResume": false, "onTimeout": "kill"})
    );
    assert_eq!(d["metadata"], json!({"run": "r1"}));
    assert!(d["cpuCount"].as_i64().unwrap() >= 1 && d["memoryMB"].as_i64().unwrap() > 0);
    let end = d["endAt"].as_str().unwrap().to_string();
    assert!(d["startedAt"].as_str().unwrap() < end.as_str());

    // List: the metadata filter (one URL-encoded parameter, as the SDK
    // sends it), states, limit and x-next-token paging.
    let r = api
        .c
        .get(format!("{}/v2/sandboxes?metadata=run%3Dr1&limit=1", s.e2b))
        .header("x-api-key", &t.developer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let next = r.headers()["x-next-token"].to_str().unwrap().to_string();
    let first: Value = r.json().await.unwrap();
    assert_eq!(first.as_array().unwrap().len(), 1);
    let (_, second) = api
        .call(
            M::GET,
            &format!("/v2/sandboxes?metadata=run%3Dr1&limit=1&nextToken={next}"),
            None,
        )
        .await;
    let mut both = vec![
        first[0]["sandboxID"].clone(),
        second[0]["sandboxID"].clone(),
    ];
    both.sort_by_key(|v| v.to_string());
    let mut want = vec![json!(id), json!(bid)];
    want.sort_by_key(|v| v.to_string());
    assert_eq!(both, want);
    let (_, v1) = api.call(M::GET, "/sandboxes?metadata=run%3Dr1", None).await;
    assert_eq!(v1.as_array().unwrap().len(), 2);
    let (st, _) = api.call(M::GET, "/v2/sandboxes?state=sleeping", None).await;
    assert_eq!(st, 400);
    let (st, _) = api.call(M::GET, "/v2/sandboxes?order=asc", None).await;
    assert_eq!(st, 501);

    // Timeout, pause (twice: 409), the paused filter, connect (201 when it
    // resumed, 200 when it was running) and metrics.
    let (st, _) = api
        .call(
            M::POST,
            &format!("/sandboxes/{id}/timeout"),
            Some(json!({"timeout": 600})),
        )
        .await;
    assert_eq!(st, 204);
    let (_, d) = api.call(M::GET, &format!("/sandboxes/{id}"), None).await;
    assert!(d["endAt"].as_str().unwrap() > end.as_str());
    assert_eq!(
        api.call(M::POST, &format!("/sandboxes/{id}/pause"), None)
            .await
            .0,
        204
    );
    let (st, e) = api
        .call(M::POST, &format!("/sandboxes/{id}/pause"), None)
        .await;
    assert_eq!((st, e["code"].as_i64()), (409, Some(409)));
    let (_, paused) = api
        .call(M::GET, "/v2/sandboxes?metadata=run%3Dr1&state=paused", None)
        .await;
    assert_eq!(paused[0]["sandboxID"], json!(id));
    assert_eq!(paused.as_array().unwrap().len(), 1);
    let (st, c) = api
        .call(
            M::POST,
            &format!("/v2/sandboxes/{id}/connect"),
            Some(json!({"timeout": 300})),
        )
        .await;
    assert_eq!((st, &c["sandboxID"]), (201, &json!(id)), "{c}");
    let (_, d) = api.call(M::GET, &format!("/sandboxes/{id}"), None).await;
    assert_eq!(d["state"], "running");
    let (st, _) = api
        .call(
            M::POST,
            &format!("/sandboxes/{id}/connect"),
            Some(json!({"timeout": 10})),
        )
        .await;
    assert_eq!(st, 200);
    let (_, d2) = api.call(M::GET, &format!("/sandboxes/{id}"), None).await;
    assert!(
        d2["endAt"].as_str() >= d["endAt"].as_str(),
        "a connect never shortens"
    );
    let (st, r) = api
        .call(M::POST, &format!("/sandboxes/{id}/resume"), Some(json!({})))
        .await;
    assert_eq!(st, 409, "{r}");
    let (st, m) = api
        .call(M::GET, &format!("/sandboxes/{id}/metrics"), None)
        .await;
    assert_eq!(st, 200, "{m}");
    assert!(m[0]["memTotal"].as_i64().unwrap() > 0 && m[0]["timestampUnix"].as_i64().unwrap() > 0);
    // This server runs with `--network none`: a policy reaches the
    // server, which refuses it there (FAILED_PRECONDITION → 409).
    let (st, e) = api
        .call(
            M::PUT,
            &format!("/sandboxes/{id}/network"),
            Some(json!({"allowOut": ["1.1.1.1"], "denyOut": ["0.0.0.0/0"]})),
        )
        .await;
    assert_eq!(st, 409, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("--network none"),
        "{e}"
    );
    let (st, e) = api
        .call(
            M::PUT,
            &format!("/sandboxes/{id}/network"),
            Some(json!({"denyOut": ["8.8.8.8"]})),
        )
        .await;
    assert_eq!(st, 400, "{e}");

    // Another tenant's key: nothing there (404), through every route.
    let theirs = api.with_key(&other.developer);
    for (m, p) in [
        (M::GET, format!("/sandboxes/{id}")),
        (M::DELETE, format!("/sandboxes/{id}")),
        (M::POST, format!("/sandboxes/{id}/pause")),
        (M::POST, format!("/sandboxes/{id}/connect")),
        (M::GET, format!("/sandboxes/{id}/metrics")),
    ] {
        assert_eq!(theirs.call(m.clone(), &p, None).await.0, 404, "{m} {p}");
    }
    let (_, none) = theirs
        .call(M::GET, "/v2/sandboxes?metadata=run%3Dr1", None)
        .await;
    assert_eq!(none, json!([]));
    // A viewer may look, not create (403).
    let viewer = api.with_key(&t.viewer);
    assert_eq!(
        viewer
            .call(M::GET, &format!("/sandboxes/{id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        viewer
            .call(M::POST, "/v2/sandboxes", Some(json!({})))
            .await
            .0,
        403
    );

    // Volumes are Talon's (VolumeService), on shared workers only: this
    // platform has none (FAILED_PRECONDITION, E2B's 409); a malformed
    // mount is a 400.
    let (st, e) = api
        .call(
            M::POST,
            "/v2/sandboxes",
            Some(json!({"volumeMounts": [{"name": "v", "path": "/v"}]})),
        )
        .await;
    assert_eq!(st, 409, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("shared workspace backend"),
        "{e}"
    );
    let (st, e) = api
        .call(
            M::POST,
            "/v2/sandboxes",
            Some(json!({"volumeMounts": [{"name": "v"}]})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    // What Talon does not have: 501 with a message; nonsense: 400/404.
    let (st, e) = api.call(M::GET, "/snapshots?name=x", None).await;
    assert_eq!(st, 501);
    assert!(
        e["message"].as_str().unwrap().contains("name filter"),
        "{e}"
    );
    assert_eq!(api.call(M::DELETE, "/templates/base", None).await.0, 501);
    // A memory snapshot (E2B's mode="full"): refused, saying why.
    let (st, e) = api
        .call(
            M::POST,
            &format!("/sandboxes/{id}/snapshots"),
            Some(json!({"memory": true})),
        )
        .await;
    assert_eq!(st, 409);
    assert!(e["message"].as_str().unwrap().contains("CRIU"), "{e}");
    assert_eq!(api.call(M::GET, "/sandboxes/NOT-AN-ID", None).await.0, 404);
    assert_eq!(
        api.call(M::POST, "/v2/sandboxes", Some(json!({"timeout": "x"})))
            .await
            .0,
        400
    );
    let (st, _) = api
        .call(
            M::POST,
            "/v2/sandboxes",
            Some(json!({"templateID": "no-such-image"})),
        )
        .await;
    assert_eq!(st, 404);

    // Kill: 204, then 404.
    assert_eq!(
        api.call(M::DELETE, &format!("/sandboxes/{id}"), None)
            .await
            .0,
        204
    );
    assert_eq!(
        api.call(M::DELETE, &format!("/sandboxes/{id}"), None)
            .await
            .0,
        404
    );
    assert_eq!(
        api.call(M::GET, &format!("/sandboxes/{id}"), None).await.0,
        404
    );
    assert_eq!(
        api.call(M::POST, &format!("/sandboxes/{id}/connect"), None)
            .await
            .0,
        404
    );
    assert_eq!(
        api.call(M::DELETE, &format!("/sandboxes/{bid}"), None)
            .await
            .0,
        204
    );
}
