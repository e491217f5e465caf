//! Durability (issue 29): `talon up` on its defaults (SQLite, the embedded
//! worker, the `local` workspace backend) stopped for a minute, three
//! times its worker lease, by SIGTERM and by `kill -9`, and started
//! again: every sandbox (built cold, claimed from the prewarm pool, under
//! gVisor) is RUNNING with the same processes, its files and its PTY, a
//! snapshot of it holds its files, and a create right after succeeds. A
//! simulated reboot (every process of the host killed, every mount gone)
//! brings each sandbox back as its restart policy says, with its files.
//! Needs root and runsc (scripts/install-runsc.sh); CI is both.

mod common;
use common::*;
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;

type Pty = pb::pty_service_client::PtyServiceClient<Authed>;

fn pty_client(c: &Clients) -> Pty {
    pb::pty_service_client::PtyServiceClient::with_interceptor(c.channel.clone(), bearer(&c.token))
}

/// How long the platform stays down: three times the default lease.
const DOWN: Duration = Duration::from_secs(60);

/// One sandbox of the test, and what it must still have.
struct Kept {
    id: String,
    kind: &'static str,
    /// The ticker's pid (in the sandbox).
    pid: u32,
}

fn platform_flags(runsc: &str) -> Vec<String> {
    // One shape pooled at a time, five of it: the shapes of the cold
    // creates below are each the first of their kind (built cold), and
    // the last shape's pool fills for the claims.
    [
        "--runsc",
        runsc,
        "--prewarm-pool-size",
        "5",
        "--prewarm-max-pools",
        "1",
    ]
    .map(String::from)
    .to_vec()
}

async fn up() -> Server {
    ensure_agent_built();
    let runsc = talon_worker::testing::runsc();
    let flags = platform_flags(&runsc.to_string_lossy());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let s = Server::up_with(&flags).await;
    until_worker(&mut s.admin().await, true).await;
    s
}

fn small(isolation: pb::Isolation, memory_mib: i64) -> pb::Sandbox {
    pb::Sandbox {
        isolation: isolation as i32,
        resources: Some(pb::Resources {
            cpu_millis: 100,
            memory_mib,
            max_pids: 128,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A PTY session: opened (`open`) or reattached by tag, `input` typed,
/// read until `want` shows.
async fn pty_says(pty: &mut Pty, id: &str, open: pb::pty_open::Target, input: &str, want: &str) {
    use pb::attach_request::Message as In;
    use pb::attach_response::Message as Out;
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tx.send(pb::AttachRequest {
        sandbox_id: id.into(),
        message: Some(In::Open(pb::PtyOpen {
            target: Some(open),
            size: Some(pb::PtySize { rows: 24, cols: 80 }),
        })),
    })
    .await
    .unwrap();
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(input.as_bytes().to_vec())),
    })
    .await
    .unwrap();
    let mut out = pty
        .attach(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap_or_else(|e| panic!("{id}: attach: {e}"))
        .into_inner();
    let mut screen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !screen.contains(want) {
        assert!(Instant::now() < deadline, "{id}: the PTY said {screen:?}");
        match tokio::time::timeout(Duration::from_secs(20), out.message()).await {
            Ok(Ok(Some(m))) => {
                if let Some(Out::Output(o)) = m.message {
                    screen.push_str(&String::from_utf8_lossy(&o));
                }
            }
            other => panic!("{id}: the PTY ended: {other:?}; it said {screen:?}"),
        }
    }
}

/// The running process tagged `tag`.
async fn process(procs: &mut Procs, id: &str, tag: &str) -> pb::ProcessInfo {
    procs
        .list_processes(pb::ListProcessesRequest {
            sandbox_id: id.into(),
            include_exited: true,
        })
        .await
        .unwrap_or_else(|e| panic!("{id}: list processes: {e}"))
        .into_inner()
        .processes
        .into_iter()
        .find(|p| p.tag == tag)
        .unwrap_or_else(|| panic!("{id}: no process tagged {tag}"))
}

/// Makes a sandbox ready for the test: a file, a ticker that never ends,
/// and a shell under a PTY.
async fn furnish(c: &Clients, id: &str, kind: &'static str) -> Kept {
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    let (o, code) = proc_sh(
        &mut procs,
        id,
        &format!("echo {id} > /workspace/keep.txt && sync"),
    )
    .await;
    assert_eq!(code, 0, "{id}: {o}");
    let mut st = procs
        .start_process(pb::StartProcessRequest {
            sandbox_id: id.into(),
            command: vec![
                "sh".into(),
                "-c".into(),
                "while :; do echo tick; sleep 1; done".into(),
            ],
            tag: "ticker".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Started once it says so.
    let _ = tokio::time::timeout(Duration::from_secs(20), st.message()).await;
    let pid = process(&mut procs, id, "ticker").await.pid;
    let mut pty = pty_client(c);
    let shell = pb::pty_open::Target::Command(pb::PtyCommand {
        command: vec!["sh".into()],
        tag: "term".into(),
        ..Default::default()
    });
    pty_says(&mut pty, id, shell, "echo first-$((6*7))\n", "first-42").await;
    Kept {
        id: id.into(),
        kind,
        pid,
    }
}

/// 20 sandboxes: 10 built cold, 5 claimed from the prewarm pool, 5 under
/// gVisor, each furnished.
async fn twenty(s: &Server, c: &mut Clients) -> Vec<Kept> {
    let mut out = Vec::new();
    let mut made = Vec::new();
    for i in 0..10 {
        let sb = create_running_as(c, small(pb::Isolation::Container, 96 + i)).await;
        made.push((sb.sandbox_id, "cold"));
    }
    for i in 0..5 {
        let sb = create_running_as(c, small(pb::Isolation::Gvisor, 128 + i)).await;
        made.push((sb.sandbox_id, "gvisor"));
    }
    // The first of the pooled shape is built cold and makes the pool keep
    // five of it; the next five are claims (each checked: its container
    // keeps the pooled name).
    let first = create_running_as(c, small(pb::Isolation::Container, 64)).await;
    made.push((first.sandbox_id, "cold"));
    for _ in 0..600 {
        if metric(s, "sandbox_prewarm_pool_ready").await.unwrap_or(0.0) >= 5.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for _ in 0..5 {
        let sb = create_running_as(c, small(pb::Isolation::Container, 64)).await;
        let state = std::fs::read_to_string(
            s.data_dir()
                .join("worker/sandboxes")
                .join(&sb.sandbox_id)
                .join("state.json"),
        )
        .unwrap();
        assert!(state.contains("sbx_pool_"), "not a claim: {state}");
        made.push((sb.sandbox_id, "pool"));
    }
    for (id, kind) in made {
        out.push(furnish(c, &id, kind).await);
    }
    out
}

/// Everything each sandbox had: RUNNING, the same ticker still running,
/// its file, its PTY (reattached by tag), and a snapshot that holds its
/// file.
async fn all_there(c: &mut Clients, kept: &[Kept], when: &str) {
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    let mut pty = pty_client(c);
    for k in kept {
        let sb = get(c, &k.id).await;
        assert_eq!(
            sb.state,
            pb::SandboxState::Running as i32,
            "{when}: {} ({}) is not running: {sb:?}",
            k.id,
            k.kind
        );
        let t = process(&mut procs, &k.id, "ticker").await;
        assert!(
            t.running && t.pid == k.pid,
            "{when}: {} ({}): the ticker is not the same process: {t:?}, was pid {}",
            k.id,
            k.kind,
            k.pid
        );
        let (o, code) = proc_sh(&mut procs, &k.id, "cat /workspace/keep.txt").await;
        assert_eq!((o.trim(), code), (k.id.as_str(), 0), "{when}: {}", k.kind);
        pty_says(
            &mut pty,
            &k.id,
            pb::pty_open::Target::Process(pb::ProcessSelector {
                selector: Some(pb::process_selector::Selector::Tag("term".into())),
            }),
            "echo again-$((6*7))\n",
            "again-42",
        )
        .await;
        let snap = c
            .sandboxes
            .create_snapshot(pb::CreateSnapshotRequest {
                sandbox_id: k.id.clone(),
                name: String::new(),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{when}: snapshot of {} ({}): {e}", k.id, k.kind))
            .into_inner()
            .snapshot
            .unwrap();
        assert!(
            snap.size_bytes >= k.id.len() as i64,
            "{when}: the snapshot of {} ({}) holds {} bytes",
            k.id,
            k.kind,
            snap.size_bytes
        );
        c.sandboxes
            .delete_snapshot(pb::DeleteSnapshotRequest {
                snapshot_id: snap.snapshot_id,
            })
            .await
            .unwrap();
    }
}

async fn survives(stop: impl FnOnce(&mut Server)) {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let mut s = up().await;
    let mut admin = s.admin().await;
    let kept = twenty(&s, &mut admin).await;
    assert_eq!(kept.len(), 21);
    for kind in ["cold", "pool", "gvisor"] {
        assert!(
            kept.iter().filter(|k| k.kind == kind).count() >= 5,
            "too few {kind} sandboxes"
        );
    }
    all_there(&mut admin, &kept, "before").await;

    stop(&mut s);
    tokio::time::sleep(DOWN).await;
    let t0 = Instant::now();
    s.start_again().await;
    let mut admin = s.admin().await;
    // A create right after the start waits for the worker to be back (no
    // cooldown, no lost worker in the way).
    let fresh = create_running_as(&mut admin, small(pb::Isolation::Container, 64)).await;
    assert_eq!(fresh.state, pb::SandboxState::Running as i32);
    // Re-adopted: each reached through its worker again.
    let mut procs = procs_client(admin.channel.clone(), bearer(&admin.token));
    for k in &kept {
        for _ in 0..300 {
            let r = procs
                .list_processes(pb::ListProcessesRequest {
                    sandbox_id: k.id.clone(),
                    include_exited: false,
                })
                .await;
            if r.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    println!(
        "{} sandboxes reachable again {:.1} s after the start",
        kept.len(),
        t0.elapsed().as_secs_f64()
    );
    all_there(&mut admin, &kept, "after").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandboxes_outlive_a_minute_long_sigterm_stop() {
    survives(|s| s.terminate()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sandboxes_outlive_a_minute_long_kill_9() {
    survives(|s| s.kill9()).await;
}

/// What a power cycle leaves of the host: `talon up`, its fence keeper and
/// every process of every sandbox killed at once, every mount under the
/// data directory gone; the files on disk (and the runtimes' stale state
/// files) as they were.
fn power_cycle(s: &mut Server) {
    s.kill9();
    let worker = s.data_dir().join("worker");
    if let Ok(pid) = std::fs::read_to_string(worker.join("fence-keeper.pid")) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    }
    for e in std::fs::read_dir(worker.join("sandboxes"))
        .unwrap()
        .flatten()
    {
        let state = std::fs::read_to_string(e.path().join("state.json")).unwrap_or_default();
        let held: serde_json::Value = serde_json::from_str(&state).unwrap_or_default();
        let cid = held["container"]
            .as_str()
            .or(held["sandbox_id"].as_str())
            .unwrap_or_default()
            .to_string();
        if !cid.is_empty() {
            talon_worker::keeper::kill_sandbox("talon", &cid);
        }
    }
    // gVisor's sandbox and gofer processes name their state directory.
    let root = worker.join("runsc-state");
    let root = root.to_string_lossy();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(&*root) {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    talon_worker::rootfs::unmount_under(&s.data_dir()).unwrap();
}

/// A simulated reboot: every sandbox comes back as its restart policy
/// says, with its files, and nothing is FAILED. A running one (built
/// cold, from the pool, under gVisor) with `always` (the default) runs
/// again, its state message saying its processes ended with the host;
/// one with `never`, and a paused one, are STOPPED and start on request.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reboot_brings_every_sandbox_back_as_its_policy_says() {
    assert_eq!(euid(), 0, "needs root (CI is root)");
    let mut s = up().await;
    let mut c = s.admin().await;
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    let mut made = Vec::new();
    for (kind, isolation, mib, policy) in [
        (
            "always",
            pb::Isolation::Container,
            70,
            pb::RestartPolicy::Unspecified,
        ),
        (
            "gvisor",
            pb::Isolation::Gvisor,
            128,
            pb::RestartPolicy::Always,
        ),
        (
            "never",
            pb::Isolation::Container,
            71,
            pb::RestartPolicy::Never,
        ),
        (
            "paused",
            pb::Isolation::Container,
            72,
            pb::RestartPolicy::Always,
        ),
    ] {
        let mut want = small(isolation, mib);
        want.restart_policy = policy as i32;
        let sb = create_running_as(&mut c, want).await;
        let expected = match policy {
            pb::RestartPolicy::Never => pb::RestartPolicy::Never,
            _ => pb::RestartPolicy::Always,
        };
        assert_eq!(sb.restart_policy, expected as i32, "{sb:?}");
        let id = sb.sandbox_id;
        let (o, code) = proc_sh(
            &mut procs,
            &id,
            &format!("echo {id} > /workspace/keep.txt && sync"),
        )
        .await;
        assert_eq!(code, 0, "{o}");
        made.push((kind, id));
    }
    // A claim from the pool too.
    for _ in 0..600 {
        if metric(&s, "sandbox_prewarm_pool_ready")
            .await
            .unwrap_or(0.0)
            >= 1.0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sb = create_running_as(&mut c, small(pb::Isolation::Container, 72)).await;
    let id = sb.sandbox_id;
    let (o, code) = proc_sh(
        &mut procs,
        &id,
        &format!("echo {id} > /workspace/keep.txt && sync"),
    )
    .await;
    assert_eq!(code, 0, "{o}");
    made.push(("always", id));
    let paused = made.iter().find(|(k, _)| *k == "paused").unwrap().1.clone();
    c.sandboxes
        .pause_sandbox(pb::PauseSandboxRequest {
            sandbox_id: paused.clone(),
        })
        .await
        .unwrap();

    // A disk mount removed under a running sandbox (what the fence keeper
    // did to pool-claimed sandboxes): its snapshot and metrics are refused,
    // never read from the host's filesystem beneath.
    let (_, first) = &made[0];
    let disk = s
        .data_dir()
        .join("worker/sandboxes")
        .join(first)
        .join("disk");
    let umount = std::process::Command::new("umount")
        .arg("-l")
        .arg(&disk)
        .status()
        .unwrap();
    assert!(umount.success());
    let e = c
        .sandboxes
        .create_snapshot(pb::CreateSnapshotRequest {
            sandbox_id: first.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("not mounted"), "{e}");
    let e = c
        .sandboxes
        .get_sandbox_metrics(pb::GetSandboxMetricsRequest {
            sandbox_id: first.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");

    power_cycle(&mut s);
    s.start_again().await;
    let mut c = s.admin().await;
    let mut procs = procs_client(c.channel.clone(), bearer(&c.token));
    for (kind, id) in &made {
        let want = match *kind {
            "always" | "gvisor" => pb::SandboxState::Running,
            _ => pb::SandboxState::Stopped,
        };
        let mut sb = get(&mut c, id).await;
        for _ in 0..300 {
            if sb.state == want as i32 && sb.state_message.contains("host restarted") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            sb = get(&mut c, id).await;
        }
        assert_eq!(sb.state, want as i32, "{kind} {id}: {sb:?}");
        assert!(
            sb.state_message.contains("host restarted"),
            "{kind}: {sb:?}"
        );
        if want == pb::SandboxState::Stopped {
            // Never a dead end: it starts on request, with its files.
            c.sandboxes
                .start_sandbox(pb::StartSandboxRequest {
                    sandbox_id: id.clone(),
                })
                .await
                .unwrap_or_else(|e| panic!("{kind}: start: {e}"));
            until_state(&mut c, id, pb::SandboxState::Running).await;
        }
        let (o, code) = proc_sh(&mut procs, id, "cat /workspace/keep.txt").await;
        assert_eq!((o.trim(), code), (id.as_str(), 0), "{kind}");
    }
    // The platform takes new work at once.
    let fresh = create_running_as(&mut c, small(pb::Isolation::Container, 64)).await;
    assert_eq!(fresh.state, pb::SandboxState::Running as i32);
}
