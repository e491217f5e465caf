//! What the failover tests share: the fast timings, the hosts and their
//! workers, and waits on what the control plane says.

use super::common::*;
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

/// Heartbeats every second, a 3 s lease, 1 s of grace: failover in ~5 s.
/// Sandboxes on the `local` backend move too, with an empty workspace
/// (`--failover-local move`; the default, `wait`, is tested apart).
pub(crate) const FAST: &[&str] = &[
    "--worker-heartbeat-secs",
    "1",
    "--worker-lease-secs",
    "3",
    "--failover-grace-secs",
    "1",
    "--failover-cooldown-secs",
    "120",
    "--failover-local",
    "move",
];

/// What a host losing power leaves: its worker and every process of its
/// sandboxes killed at once, its mounts gone; shared storage as it was.
pub(crate) fn power_off(s: &Server, w: &mut Worker, name: &str) {
    let _ = w.child.kill();
    let _ = w.child.wait();
    let dir = s.data_dir().join(name);
    // Its fence keeper is a process of that host too.
    if let Ok(pid) = std::fs::read_to_string(dir.join("fence-keeper.pid")) {
        signal(pid.trim().parse().unwrap(), "KILL");
    }
    remove_containers(&dir.join("runtime-state"));
    talon_worker::rootfs::unmount_under(&dir).unwrap();
}

/// A worker of `s` on this machine's network, with a cgroup parent of its
/// own (two workers of one machine must not share a sandbox's cgroup).
pub(crate) fn worker(s: &Server, name: &str, extra: &[&str]) -> Worker {
    let tag: String = s
        .data_dir()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .rev()
        .take(8)
        .collect();
    let cg = format!("talon-{tag}-{name}");
    let mut args = vec!["--cgroup-parent", cg.as_str()];
    args.extend_from_slice(extra);
    spawn_worker_with(s, &s.grpc, name, &args)
}

/// A server and two workers, `n` sandboxes with files on the first (A),
/// made before the second (B) connects.
pub(crate) struct TwoHosts {
    pub(crate) s: Server,
    pub(crate) admin: Clients,
    pub(crate) a: Worker,
    pub(crate) a_id: String,
    pub(crate) _b: Worker,
    pub(crate) b_id: String,
    pub(crate) sbxs: Vec<pb::Sandbox>,
}

pub(crate) async fn two_hosts(n: usize, extra: &[&str]) -> TwoHosts {
    two_hosts_on(FAST, n, extra).await
}

/// `two_hosts`, the server started with `flags`.
pub(crate) async fn two_hosts_on(flags: &[&str], n: usize, extra: &[&str]) -> TwoHosts {
    let s = Server::start_with(None, flags).await;
    let mut admin = s.admin().await;
    let a = worker(&s, "host-a", extra);
    let a_id = until_workers(&mut admin, 1).await.remove(0);
    let sbxs = sandboxes_with_files(&mut admin, n).await;
    let b = worker(&s, "host-b", extra);
    let b_id = until_workers(&mut admin, 2)
        .await
        .into_iter()
        .find(|w| *w != a_id)
        .unwrap();
    TwoHosts {
        s,
        admin,
        a,
        a_id,
        _b: b,
        b_id,
        sbxs,
    }
}

/// `cat /workspace/mine` through the SDK: it names the sandbox.
pub(crate) async fn sdk_cat(sdk: &talon_sdk::Client, id: &str) -> Result<(), String> {
    let sb = sdk.connect_sandbox(id).await.map_err(|e| e.to_string())?;
    let r = sb
        .commands()
        .run(
            &["cat".to_string(), "/workspace/mine".to_string()],
            Default::default(),
        )
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!((r.stdout.trim(), r.exit_code), (id, 0));
    Ok(())
}

/// Polls a sandbox until `done` holds, for up to 30 s.
pub(crate) async fn until(
    admin: &mut Clients,
    id: &str,
    done: impl Fn(&pb::Sandbox) -> bool,
) -> pb::Sandbox {
    for _ in 0..300 {
        let x = get(admin, id).await;
        if done(&x) {
            return x;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("sandbox {id}: {:?}", get(admin, id).await);
}

/// Every worker, as ListWorkers shows it.
pub(crate) async fn workers(admin: &mut Clients) -> Vec<pb::Worker> {
    admin
        .admin
        .list_workers(pb::ListWorkersRequest {})
        .await
        .unwrap()
        .into_inner()
        .workers
}

/// The ids of the connected workers.
pub(crate) async fn active_workers(admin: &mut Clients) -> Vec<String> {
    workers(admin)
        .await
        .into_iter()
        .filter(|w| w.state == pb::WorkerState::Active as i32)
        .map(|w| w.worker_id)
        .collect()
}

/// Waits until `n` workers are ACTIVE, and (with two or more) each applies
/// the fence scope its peers allow: what it would stop, and so what would
/// move, were it lost now.
pub(crate) async fn until_workers(admin: &mut Clients, n: usize) -> Vec<String> {
    for _ in 0..400 {
        let all = workers(admin).await;
        let armed = all.iter().all(|w| {
            w.state != pb::WorkerState::Active as i32
                || n < 2
                || w.failover_scope > pb::FailoverScope::None as i32
        });
        let w = active_workers(admin).await;
        if w.len() == n && armed {
            return w;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never {n} workers connected: {:?}", workers(admin).await);
}

/// Creates `n` running sandboxes, each with a file naming it in its
/// workspace.
pub(crate) async fn sandboxes_with_files(c: &mut Clients, n: usize) -> Vec<pb::Sandbox> {
    let mut out = Vec::new();
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    for _ in 0..n {
        let s = create_running(c).await;
        let (o, code) = proc_sh(
            &mut procs,
            &s.sandbox_id,
            &format!("echo {} > /workspace/mine && sync", s.sandbox_id),
        )
        .await;
        assert_eq!(code, 0, "{o}");
        out.push(s);
    }
    out
}

/// Waits until every sandbox is RUNNING on another worker than `from`;
/// returns when each came back, from `t0`.
pub(crate) async fn until_moved(
    c: &mut Clients,
    sbxs: &[pb::Sandbox],
    from: &str,
    t0: Instant,
) -> Vec<f64> {
    let mut back = vec![None; sbxs.len()];
    let deadline = t0 + Duration::from_secs(60);
    while back.iter().any(Option::is_none) {
        assert!(
            Instant::now() < deadline,
            "not every sandbox came back in 60 s: {back:?}"
        );
        for (i, s) in sbxs.iter().enumerate() {
            if back[i].is_some() {
                continue;
            }
            let now = get(c, &s.sandbox_id).await;
            if now.state == pb::SandboxState::Running as i32 && now.worker_id != from {
                back[i] = Some(t0.elapsed().as_secs_f64());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    back.into_iter().flatten().collect()
}

pub(crate) fn p50_max(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[v.len() - 1])
}

pub(crate) async fn audited(admin: &mut Clients, method: &str) -> Vec<pb::AuditEvent> {
    admin
        .admin
        .list_audit_events(pb::ListAuditEventsRequest {
            page_size: 500,
            method: method.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .audit_events
}

/// How a worker is split from the control plane.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Split {
    /// Its host's link down.
    Partition,
    /// Its process stopped (SIGSTOP): its sandboxes would run on but for
    /// the fence keeper.
    Pause,
}

/// Starts a marker in a sandbox: it appends `label` and the time (ns) to
/// /workspace/marker every 50 ms, detached from the exec that started it.
pub(crate) async fn marker(procs: &mut Procs, id: &str, label: &str) {
    let script = format!(
        "setsid sh -c 'while :; do echo \"{label} $(date +%s%N)\" >> /workspace/marker; sleep 0.05; done' </dev/null >/dev/null 2>&1 &"
    );
    let (o, code) = proc_sh(procs, id, &script).await;
    assert_eq!(code, 0, "{o}");
}

pub(crate) fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// A worker on a test host, on shared storage, with a cgroup of its own.
pub(crate) fn host_worker(h: &hosts::Host, s: &Server, name: &str, shared: &str) -> Worker {
    let cg = format!("talon-{}", h.netns);
    spawn_worker_on(
        h,
        s,
        &s.grpc,
        name,
        &["--shared-workspaces", shared, "--cgroup-parent", &cg],
    )
}

/// The sandbox ids under a worker's data directory (its records).
pub(crate) fn held_on(s: &Server, name: &str) -> Vec<String> {
    std::fs::read_dir(s.data_dir().join(name).join("sandboxes"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("sbx_"))
                .collect()
        })
        .unwrap_or_default()
}

/// Two hosts (network namespaces) with a worker each on shared storage;
/// three sandboxes with markers on host A; A split from the control
/// plane until its sandboxes run on B, then joined again. What must hold:
/// A stopped them itself before B started them (the markers' times never
/// overlap), its late reports are refused as stale and change nothing,
/// and it rejoins holding nothing.
pub(crate) async fn split_a_worker(split: Split) {
    let mut lan = hosts::Lan::new();
    let s = Server::start_on(&lan.gateway(), None, FAST).await;
    let shared = s.data_dir().join("shared");
    let shared = shared.to_str().unwrap();
    let mut admin = s.admin().await;
    let ha = lan.host();
    let a = host_worker(&ha, &s, "host-a", shared);
    let a_id = until_workers(&mut admin, 1).await.remove(0);
    let sbxs = sandboxes_with_files(&mut admin, 3).await;
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    for x in &sbxs {
        marker(&mut procs, &x.sandbox_id, "A").await;
    }
    let hb = lan.host();
    let _b = host_worker(&hb, &s, "host-b", shared);
    until_workers(&mut admin, 2).await;
    let stale_before = metric(&s, "talon_worker_stale_events_total")
        .await
        .unwrap_or(0.0);

    match split {
        Split::Partition => ha.cut(),
        Split::Pause => {
            signal(a.child.id(), "STOP");
        }
    }
    let t0 = Instant::now();
    let back = until_moved(&mut admin, &sbxs, &a_id, t0).await;
    let (p50, max) = p50_max(back);
    println!(
        "{split:?}: 3 sandboxes RUNNING on the other host, p50 {p50:.1} s, max {max:.1} s after the split"
    );
    // Nothing of them runs on A: no process left in their cgroups there.
    for x in &sbxs {
        let pids = std::path::Path::new("/sys/fs/cgroup/pids")
            .join(format!("talon-{}", ha.netns))
            .join(&x.sandbox_id)
            .join("cgroup.procs");
        let left = std::fs::read_to_string(&pids).unwrap_or_default();
        assert!(
            left.trim().is_empty(),
            "{} still runs on A: {left}",
            x.sandbox_id
        );
    }
    for x in &sbxs {
        marker(&mut procs, &x.sandbox_id, "B").await;
    }

    match split {
        Split::Partition => ha.heal(),
        Split::Pause => {
            signal(a.child.id(), "CONT");
        }
    }
    // A's word on its fenced sandboxes arrives late: every one refused.
    let mut refused = 0.0;
    for _ in 0..600 {
        refused = metric(&s, "talon_worker_stale_events_total")
            .await
            .unwrap_or(0.0)
            - stale_before;
        if refused >= sbxs.len() as f64 && held_on(&s, "host-a").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("{split:?}: {refused} late reports of the old worker refused as stale");
    assert!(
        refused >= sbxs.len() as f64,
        "A's late reports: {refused} refused"
    );
    assert!(
        held_on(&s, "host-a").is_empty(),
        "A rejoins holding nothing"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    for x in &sbxs {
        let now = get(&mut admin, &x.sandbox_id).await;
        assert_eq!(
            (now.state, now.generation, now.worker_id != a_id),
            (pb::SandboxState::Running as i32, 2, true),
            "nothing A said was applied"
        );
        // Never in two places: every line A's marker wrote is older than
        // every line B's, and the file A's sandbox wrote is there.
        let (o, code) = proc_sh(
            &mut procs,
            &x.sandbox_id,
            "cat /workspace/marker; cat /workspace/mine",
        )
        .await;
        assert_eq!(code, 0, "{o}");
        assert!(o.contains(&x.sandbox_id));
        let times = |label: &str| -> Vec<u128> {
            o.lines()
                .filter_map(|l| l.strip_prefix(label)?.trim().parse().ok())
                .collect()
        };
        let (ta, tb) = (times("A "), times("B "));
        assert!(!ta.is_empty() && !tb.is_empty(), "{o}");
        let gap = (*tb.iter().min().unwrap() - *ta.iter().max().unwrap()) as f64 / 1e9;
        assert!(tb.iter().min() > ta.iter().max(), "ran in two places");
        println!(
            "{split:?}: {}: last mark on A {gap:.1} s before the first on B",
            x.sandbox_id
        );
    }
    // The old worker is back, empty, and in its cooldown (LOST until the
    // autopilot's next pass settles it).
    until_workers(&mut admin, 2).await;
    drop(a);
}
