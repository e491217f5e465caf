//! The prewarm pool on a real host: a claimed sandbox is the sandbox that
//! was asked for (its id as hostname, its env, its secrets, its network
//! policy, its directory) and survives stop/start; concurrent creates
//! never share a pooled sandbox; a restarted worker keeps the pooled
//! sandboxes it can use and removes the rest, counting both. Root is
//! required.

mod common;

use common::{TestHost, spec, unique_id};
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1 as pb;
use talon_worker::host::HostOptions;
use talon_worker::net::{Egress, NetOptions};
use talon_worker::pool::PoolOptions;

fn opts(size: usize, net: Option<NetOptions>) -> HostOptions {
    HostOptions {
        network: net,
        pool: PoolOptions {
            size,
            refill_interval: Duration::from_millis(10),
            ..Default::default()
        },
        ..Default::default()
    }
}

async fn until_ready(env: &TestHost, n: i64) {
    for _ in 0..600 {
        if env.host.pool().stats().ready >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the pool never held {n}: {:?}", env.host.pool().stats());
}

fn pooled_dirs(env: &TestHost) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(env.data().join("sandboxes"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(talon_worker::host::POOL_PREFIX))
        .collect();
    v.sort();
    v
}

async fn sh(env: &TestHost, id: &str, script: &str) -> (String, String, i32) {
    let mut agent = env.host.agent(id).await.unwrap();
    common::sh(&mut agent, script).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claimed_sandbox_is_the_one_asked_for() {
    let net = NetOptions {
        bridge: "tlpool".into(),
        cidr: "10.81.0.0/24".parse().unwrap(),
        dns_upstream: Some("127.0.0.1:53".parse().unwrap()),
        ..Default::default()
    };
    let env = TestHost::new(opts(2, None));
    let network = env.host.enable_network(net).await.unwrap();
    let refill = tokio::spawn(env.host.clone().refill());
    let shape = spec("host", (500, 128, 64));
    // The first create of a shape is cold and makes the pool want it.
    let first = unique_id("p");
    env.host.create(&first, 1, &shape).await.unwrap();
    assert_eq!(env.host.pool().stats().misses, 1);
    until_ready(&env, 2).await;
    let pooled = pooled_dirs(&env);
    assert_eq!(pooled.len(), 2);

    let mut s = shape.clone();
    s.env.insert("FOO".into(), "bar baz".into());
    s.secret_files.insert("token".into(), b"s3cret".to_vec());
    s.network_policy = Some(pb::NetworkPolicy {
        mode: pb::EgressMode::Sealed as i32,
        ..Default::default()
    });
    let id = unique_id("p");
    let st = env.host.create(&id, 1, &s).await.unwrap();
    assert_eq!(st.state, pb::SandboxState::Running as i32);
    let stats = env.host.pool().stats();
    assert_eq!((stats.hits, stats.misses), (1, 1), "{stats:?}");
    let held = env.host.held(&id).unwrap();
    let container = held
        .container
        .clone()
        .expect("a claimed sandbox keeps its container");
    assert!(pooled.contains(&container), "{container} was not pooled");
    assert!(held.pooled.is_none());
    assert!(
        !pooled_dirs(&env).contains(&container),
        "its directory was renamed"
    );
    assert!(
        env.data()
            .join("sandboxes")
            .join(&id)
            .join("state.json")
            .exists()
    );

    let (out, err, code) = sh(
        &env,
        &id,
        "hostname; echo \"$FOO\"; echo $TALON_SANDBOX_ID; cat /run/secrets/token; echo; stat -c %u /run/secrets/token; ip -4 -o addr show eth0 | wc -l",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        vec![&id[..], "bar baz", &id[..], "s3cret", "0", "1"],
        "{out}"
    );
    let addr = network
        .tables()
        .sandbox_chains()
        .await
        .into_iter()
        .find(|c| *c == container);
    assert!(addr.is_some(), "the network is the pooled container's");
    let policy = (1..=254)
        .filter_map(|i| network.policy_of(format!("10.81.0.{i}").parse().unwrap()))
        .find(|(c, _)| *c == container)
        .map(|(_, e)| e);
    assert_eq!(
        policy,
        Some(Egress::Sealed),
        "pooled under the default policy (open), the claim applies the sandbox's"
    );

    // A pooled sandbox's id is not a sandbox id a create may use.
    let other = pooled_dirs(&env).pop();
    if let Some(p) = other {
        assert!(env.host.create(&p, 1, &shape).await.is_err());
    }

    // Stop and start: a new container, named by the sandbox, same env.
    env.host.stop(&id, 1).await.unwrap();
    env.host.start(&id, 1, None).await.unwrap();
    assert_eq!(env.host.held(&id).unwrap().container, None);
    let (out, _, _) = sh(&env, &id, "hostname; echo \"$FOO\"; cat /run/secrets/token").await;
    assert_eq!(out, format!("{id}\nbar baz\ns3cret"));

    refill.abort();
    for x in [&first, &id] {
        env.host.delete(x, 1).await.unwrap();
    }
    for p in pooled_dirs(&env) {
        env.host.delete(&p, 0).await.ok();
    }
    network.remove().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_creates_never_share_a_pooled_sandbox() {
    let env = TestHost::new(opts(3, None));
    let refill = tokio::spawn(env.host.clone().refill());
    let shape = spec("host", (500, 128, 64));
    let warm = unique_id("c");
    env.host.create(&warm, 1, &shape).await.unwrap();
    until_ready(&env, 3).await;
    let ids: Vec<String> = (0..5).map(|_| unique_id("c")).collect();
    let made = futures::future::join_all(ids.iter().map(|id| {
        let (env, s) = (env.clone(), shape.clone());
        async move { env.host.create(id, 1, &s).await }
    }))
    .await;
    assert!(made.iter().all(|r| r.is_ok()), "{made:?}");
    let mut containers = Vec::new();
    for id in &ids {
        let (out, _, _) = sh(&env, id, "hostname").await;
        assert_eq!(out.trim(), id);
        containers.push(env.host.held(id).unwrap().cid().to_string());
    }
    let mut uniq = containers.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 5, "{containers:?}");
    // Nor a slot (its uid range and address): a claim moves its record
    // while cold creates pick free slots, and two once took the same.
    let mut slots: Vec<u32> = ids
        .iter()
        .chain([&warm])
        .map(|id| env.host.held(id).unwrap().slot)
        .chain(
            pooled_dirs(&env)
                .iter()
                .filter_map(|p| env.host.held(p))
                .map(|h| h.slot),
        )
        .collect();
    let n = slots.len();
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), n, "two sandboxes share a slot: {slots:?}");
    let s = env.host.pool().stats();
    assert_eq!(s.hits + s.misses, 6, "{s:?}");
    assert!(s.hits >= 1 && s.hits <= 3, "{s:?}");
    refill.abort();
    for id in ids.iter().chain([&warm]) {
        env.host.delete(id, 1).await.unwrap();
    }
    for p in pooled_dirs(&env) {
        env.host.delete(&p, 0).await.ok();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_worker_reclaims_its_pool() {
    let env = TestHost::new(opts(2, None));
    let refill = tokio::spawn(env.host.clone().refill());
    let shape = spec("host", (500, 128, 64));
    let warm = unique_id("r");
    env.host.create(&warm, 1, &shape).await.unwrap();
    until_ready(&env, 2).await;
    refill.abort();
    let pooled = pooled_dirs(&env);
    // One pooled sandbox dies while the worker is away.
    let pid: i32 = std::fs::read_to_string(
        env.data()
            .join("runtime-state")
            .join(&pooled[0])
            .join("state.json"),
    )
    .ok()
    .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
    .and_then(|v| v["pid"].as_i64())
    .expect("the pooled container's pid") as i32;
    // SAFETY: a signal to a pid; no memory is involved.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A new worker on the same directory.
    let again = env.reopen(opts(2, None));
    again.reclaim_pool().await;
    let s = again.pool().stats();
    assert_eq!(s.reclaimed.get("kept"), Some(&1), "{s:?}");
    assert_eq!(s.reclaimed.get("removed"), Some(&1), "{s:?}");
    assert_eq!(s.ready, 1);
    assert_eq!(pooled_dirs(&env), vec![pooled[1].clone()]);
    // Inventory never reports pooled sandboxes: the server never knew them.
    let inv: Vec<wpb::SandboxStatus> = again.inventory().await;
    assert_eq!(
        inv.iter().map(|s| s.sandbox_id.clone()).collect::<Vec<_>>(),
        vec![warm.clone()]
    );
    // A worker with the pool off removes them all.
    drop(again);
    let off = env.reopen(opts(0, None));
    off.reclaim_pool().await;
    assert_eq!(off.pool().stats().reclaimed.get("removed"), Some(&1));
    assert!(pooled_dirs(&env).is_empty());
    off.delete(&warm, 1).await.unwrap();
}

/// A tiny image: the directories a sandbox mounts over, and a marker.
fn tiny_image(dir: &std::path::Path, marker: &str) -> std::path::PathBuf {
    let root = dir.join(format!("root-{marker}"));
    for d in ["proc", "dev", "sys", "tmp", "etc", "workspace"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("marker"), marker).unwrap();
    let archive = dir.join(format!("tiny-{marker}.tar"));
    let opts = talon_worker::image::pack::PackOptions {
        reference: "tiny:latest".into(),
        env: vec![],
        working_dir: String::new(),
    };
    talon_worker::image::pack::pack(
        &root,
        &archive,
        talon_worker::image::pack::Format::Oci,
        &opts,
    )
    .unwrap();
    archive
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_pooled_from_an_older_import_is_never_claimed() {
    let env = TestHost::new(opts(1, None));
    let refill = tokio::spawn(env.host.clone().refill());
    let work = tempfile::tempdir().unwrap();
    env.host
        .images()
        .import("tiny", &tiny_image(work.path(), "v1"))
        .unwrap();
    let shape = spec("tiny", (500, 128, 64));
    let first = unique_id("i");
    env.host.create(&first, 1, &shape).await.unwrap();
    until_ready(&env, 1).await;
    // The same name imported again, other content.
    env.host
        .images()
        .import("tiny", &tiny_image(work.path(), "v2"))
        .unwrap();
    let id = unique_id("i");
    env.host.create(&id, 1, &shape).await.unwrap();
    let mut agent = env.host.agent(&id).await.unwrap();
    let mut s = agent
        .read_file(pb::ReadFileRequest {
            path: "/marker".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut got = Vec::new();
    while let Some(m) = s.message().await.unwrap() {
        got.extend(m.data);
    }
    assert_eq!(
        String::from_utf8_lossy(&got),
        "v2",
        "the old import was claimed"
    );
    let stats = env.host.pool().stats();
    assert_eq!((stats.hits, stats.misses), (0, 2), "{stats:?}");
    refill.abort();
    for x in [&first, &id] {
        env.host.delete(x, 1).await.unwrap();
    }
    for p in pooled_dirs(&env) {
        env.host.delete(&p, 0).await.ok();
    }
}
