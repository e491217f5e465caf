//! Egress policies through a real `talon up` with a sandbox network: the
//! REST surface's policy names (the seed's aliases included) reach the
//! worker, which gives or takes the sandbox's interface and rules at run
//! time. The worker-level egress truth table is in
//! worker/tests/network.rs. Needs root and nft (CI has both).

mod common;
use common::*;
use serde_json::json;

const BRIDGE: &str = "tlsrv";

struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        // The worker keeps its bridge and tables across restarts on
        // purpose; this test's are removed once its server is gone.
        let _ = std::process::Command::new("ip")
            .args(["link", "del", BRIDGE])
            .status();
        for family in ["inet", "bridge"] {
            let _ = std::process::Command::new("nft")
                .args(["delete", "table", family, BRIDGE])
                .status();
        }
    }
}

/// Runs a shell command in the sandbox through REST; its stdout.
async fn sh(c: &reqwest::Client, key: &str, base: &str, id: &str, script: &str) -> String {
    ndjson_stdout(&rest_sh(c, key, base, id, script).await)
}

#[tokio::test(flavor = "multi_thread")]
async fn policies_by_name_reach_the_sandbox_at_run_time() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let _cleanup = Cleanup;
    let s = Server::up_with(&[
        "--network",
        "bridge",
        "--bridge",
        BRIDGE,
        "--sandbox-cidr",
        "10.84.0.0/24",
        "--dns-upstream",
        "127.0.0.1:9",
    ])
    .await;
    let t = tenant(&s, "net").await;
    let mut admin = s.admin().await;
    until_worker(&mut admin, true).await;
    let c = reqwest::Client::new();
    let key = t.developer.clone();
    use reqwest::Method as M;

    // The seed's short form: `network: sealed`.
    let (st, created) = rest_json(
        &c,
        &key,
        M::POST,
        format!("{}/v1/sandboxes?wait_until_running=true", s.http),
        Some(json!({"network": "sealed", "resources": {"cpuMillis": 500, "memoryMib": 128}})),
    )
    .await;
    assert_eq!(st, 200, "{created}");
    assert_eq!(
        created["sandbox"]["networkPolicy"]["mode"],
        "EGRESS_MODE_SEALED"
    );
    let id = created["sandbox"]["sandboxId"]
        .as_str()
        .unwrap()
        .to_string();
    let links = sh(&c, &key, &s.http, &id, "ls /sys/class/net").await;
    assert_eq!(links.split_whitespace().collect::<Vec<_>>(), ["eth0", "lo"]);
    let resolv = sh(&c, &key, &s.http, &id, "cat /etc/resolv.conf").await;
    assert!(resolv.contains("nameserver 10.84.0.1"), "{resolv}");

    let policy = format!("{}/v1/sandboxes/{id}/network-policy", s.http);
    // A bare mode as the body: deny takes the interface away.
    let (st, r) = rest_json(&c, &key, M::PATCH, policy.clone(), Some(json!("deny"))).await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["sandbox"]["networkPolicy"]["mode"], "EGRESS_MODE_DENY");
    let links = sh(&c, &key, &s.http, &id, "ls /sys/class/net").await;
    assert_eq!(links.split_whitespace().collect::<Vec<_>>(), ["lo"]);

    // The older name, with CIDRs: the interface is back.
    let (st, r) = rest_json(
        &c,
        &key,
        M::PATCH,
        policy.clone(),
        Some(json!({"mode": "restricted-egress", "allowCidrs": ["198.51.100.0/24"], "allowDomains": ["example.com"]})),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(
        r["sandbox"]["networkPolicy"]["mode"],
        "EGRESS_MODE_ALLOWLIST"
    );
    assert_eq!(
        r["sandbox"]["networkPolicy"]["allowCidrs"],
        json!(["198.51.100.0/24"])
    );
    let links = sh(&c, &key, &s.http, &id, "ls /sys/class/net").await;
    assert_eq!(links.split_whitespace().collect::<Vec<_>>(), ["eth0", "lo"]);

    // Bad input is refused and changes nothing.
    for bad in [
        json!({"mode": "wide-open"}),
        json!({"mode": "allowlist", "allowCidrs": ["10.0.0.0/33"]}),
        json!({"mode": "allowlist", "allowDomains": ["-bad-.example"]}),
    ] {
        let (st, r) = rest_json(&c, &key, M::PATCH, policy.clone(), Some(bad.clone())).await;
        assert_eq!(st, 400, "{bad}: {r}");
    }
    let (_, got) = rest_json(
        &c,
        &key,
        M::GET,
        format!("{}/v1/sandboxes/{id}", s.http),
        None,
    )
    .await;
    assert_eq!(
        got["sandbox"]["networkPolicy"]["mode"],
        "EGRESS_MODE_ALLOWLIST"
    );

    // Changed while stopped, it is in force when the sandbox starts.
    let (st, r) = rest_json(
        &c,
        &key,
        M::POST,
        format!("{}/v1/sandboxes/{id}:stop", s.http),
        Some(json!({})),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    let (st, r) = rest_json(&c, &key, M::PATCH, policy.clone(), Some(json!("deny"))).await;
    assert_eq!(st, 200, "{r}");
    let (st, r) = rest_json(
        &c,
        &key,
        M::POST,
        format!("{}/v1/sandboxes/{id}:start", s.http),
        Some(json!({})),
    )
    .await;
    assert_eq!(st, 200, "{r}");
    for _ in 0..100 {
        let (_, got) = rest_json(
            &c,
            &key,
            M::GET,
            format!("{}/v1/sandboxes/{id}", s.http),
            None,
        )
        .await;
        if got["sandbox"]["state"] == "SANDBOX_STATE_RUNNING" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let links = sh(&c, &key, &s.http, &id, "ls /sys/class/net").await;
    assert_eq!(links.split_whitespace().collect::<Vec<_>>(), ["lo"]);

    // A viewer may not change it.
    let (st, _) = rest_json(&c, &t.viewer, M::PATCH, policy, Some(json!("open"))).await;
    assert_eq!(st, 403);

    let (st, _) = rest_json(
        &c,
        &key,
        M::DELETE,
        format!("{}/v1/sandboxes/{id}", s.http),
        None,
    )
    .await;
    assert_eq!(st, 200);
    drop(s);
}
