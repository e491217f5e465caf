//! Real sandboxes through `talon up`: the embedded worker builds them with
//! libcontainer or runc, in user, pid, mount, network, ipc, uts and cgroup
//! namespaces, or under gVisor, and the agent inside runs processes, PTYs
//! and file operations, across a worker's `kill -9` too. Needs root, runc
//! and the pinned runsc (CI has them); without root the test says so and
//! fails.

mod common;
mod runtime_kill;
mod runtime_torn;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

#[tokio::test]
async fn a_real_sandbox_under_libcontainer() {
    real_sandbox("libcontainer", pb::Isolation::Container).await;
}

#[tokio::test]
async fn a_real_sandbox_under_runc() {
    real_sandbox("runc", pb::Isolation::Container).await;
}

/// The same life at the `gvisor` level (runsc beside libcontainer), where
/// gVisor's kernel, not our seccomp filter, answers the workload's
/// syscalls.
#[tokio::test]
async fn a_real_sandbox_under_gvisor() {
    real_sandbox("libcontainer", pb::Isolation::Gvisor).await;
}

/// The same sandbox life under each runtime adapter, picked by name, at
/// an isolation level.
async fn real_sandbox(runtime: &str, isolation: pb::Isolation) {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let gvisor = isolation == pb::Isolation::Gvisor;
    let runsc = talon_worker::testing::runsc()
        .to_string_lossy()
        .into_owned();
    let mut flags = vec!["--runtime", runtime];
    if gvisor {
        flags.extend(["--runsc", &runsc]);
    }
    let s = Server::up_with(&flags).await;
    let t = tenant(&s, "real").await;
    let mut admin = s.admin().await;
    let mut registered = vec![];
    for _ in 0..200 {
        registered = admin
            .admin
            .list_workers(pb::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        if registered.first().is_some_and(|w| !w.runtimes.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        registered[0].runtimes,
        vec![runtime.to_string()],
        "the worker runs the adapter asked for"
    );
    let mut dev = s.as_(&t.developer).await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    let mut procs = procs_client(s.channel().await, b.clone());
    let mut fs = files(s.channel().await, b);
    let req = pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            env: [("GREETING".to_string(), "hello".to_string())].into(),
            isolation: isolation as i32,
            resources: Some(pb::Resources {
                cpu_millis: 500,
                memory_mib: 256,
                max_pids: 128,
                ..Default::default()
            }),
            ..Default::default()
        }),
        wait_until_running: true,
        wait_timeout: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        ..Default::default()
    };
    let sb = dev
        .sandboxes
        .create_sandbox(req)
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    let id = sb.sandbox_id.clone();
    assert_eq!(sb.state, pb::SandboxState::Running as i32);
    assert_eq!(sb.isolation, isolation as i32);

    let (out, err, code) = exec(
        &mut procs,
        &id,
        &["sh", "-c", "echo hi; echo err >&2; exit 3"],
    )
    .await;
    assert_eq!((out.as_str(), err.as_str(), code), ("hi\n", "err\n", 3));
    let (out, _, _) = exec(
        &mut procs,
        &id,
        &[
            "sh",
            "-c",
            "echo $GREETING; id -u; cat /proc/self/uid_map; echo $$",
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "hello", "sandbox env reaches processes");
    assert_eq!(lines[1], "0", "root inside");
    if gvisor {
        // gVisor's kernel shows its own full map; the host side of the
        // question is the sentry's and the gofer's uid, checked below.
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["0", "0", "4294967295"]
        );
    } else {
        let map: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(map[0], "0");
        assert_ne!(map[1], "0", "sandbox root is not host root: {out}");
    }
    let (_, _, code) = exec(&mut procs, &id, &["sh", "-c", "touch /usr/x"]).await;
    assert_ne!(code, 0, "host /usr is read-only");
    let (out, _, _) = exec(
        &mut procs,
        &id,
        &["sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '"],
    )
    .await;
    assert!(
        out.starts_with("/.talon/agent"),
        "the agent is PID 1: {out}"
    );
    let (out, _, _) = exec(
        &mut procs,
        &id,
        &[
            "sh",
            "-c",
            "awk -F: 'NR > 2 { print $1 }' /proc/net/dev | tr -d ' '",
        ],
    )
    .await;
    assert_eq!(out.trim(), "lo", "a fresh network namespace");
    let (_, _, code) = exec(&mut procs, &id, &["mount", "-t", "tmpfs", "t", "/tmp"]).await;
    assert_ne!(code, 0, "mount must fail");
    if gvisor {
        // The workload's syscalls reach gVisor's kernel, never the host's;
        // on the host, the sandbox is the sentry, the gofer and systrap's
        // stubs, each an unprivileged uid under runsc's seccomp filter.
        let (out, _, _) = exec(&mut procs, &id, &["cat", "/proc/version"]).await;
        let host = std::fs::read_to_string("/proc/version").unwrap();
        assert_ne!(out.trim(), host.trim());
        let procs_on_host = ["pids/talon", "unified/talon"]
            .iter()
            .find_map(|c| {
                std::fs::read_to_string(format!("/sys/fs/cgroup/{c}/{id}/cgroup.procs")).ok()
            })
            .expect("the sandbox's cgroup");
        assert!(procs_on_host.lines().count() >= 2, "{procs_on_host}");
        for pid in procs_on_host.lines() {
            let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                continue;
            };
            let field = |k: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.split_whitespace().next().unwrap().to_string())
                    .unwrap()
            };
            assert_ne!(field("Uid:"), "0", "host root in the sandbox: {status}");
            assert_eq!(field("Seccomp:"), "2", "{status}");
        }
    } else {
        // Seccomp: no new namespaces, no mounts; ordinary programs still run.
        let (_, err, code) = exec(&mut procs, &id, &["unshare", "-U", "true"]).await;
        assert_ne!(code, 0, "unshare must fail: {err}");
        let (out, _, _) = exec(
            &mut procs,
            &id,
            &["sh", "-c", "grep Seccomp: /proc/self/status"],
        )
        .await;
        assert!(out.contains('2'), "filter mode: {out}");
    }
    let (out, err, code) = exec(&mut procs, &id, &["python3", "-c", "import threading,subprocess;t=threading.Thread(target=print,args=('thread',));t.start();t.join();print(subprocess.run(['echo','child'],capture_output=True).stdout.decode().strip())"]).await;
    assert_eq!(
        (out.as_str(), code),
        ("thread\nchild\n", 0),
        "threads and subprocesses work: {err}"
    );

    // Metrics, read from the sandbox's own cgroup and disk: a busy loop
    // shows as cpu in use (a share of the sandbox's half core), a file
    // written as disk in use.
    let metrics = |dev: &mut Clients| {
        let mut c = dev.sandboxes.clone();
        let id = id.clone();
        async move {
            c.get_sandbox_metrics(pb::GetSandboxMetricsRequest { sandbox_id: id })
                .await
                .unwrap()
                .into_inner()
                .metrics
                .unwrap()
        }
    };
    let m0 = metrics(&mut dev).await;
    assert_eq!((m0.cpu_count, m0.mem_total_bytes), (1, 256 << 20));
    assert!(
        m0.mem_used_bytes > 0 && m0.mem_used_bytes < 256 << 20,
        "{m0:?}"
    );
    assert!(m0.disk_used_bytes > 0 && m0.disk_total_bytes > m0.disk_used_bytes);
    exec(
        &mut procs,
        &id,
        &[
            "sh",
            "-c",
            "head -c 20000000 /dev/urandom > /workspace/blob; sync; (timeout 3 sh -c 'while :; do :; done' >/dev/null 2>&1 &)",
        ],
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    metrics(&mut dev).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let m2 = metrics(&mut dev).await;
    assert!(m2.cpu_used_pct > 50.0, "{m2:?}");
    assert!(
        m2.disk_used_bytes >= m0.disk_used_bytes + (15 << 20),
        "{m2:?}"
    );
    let t = |m: &pb::SandboxMetrics| {
        m.cpu_time.unwrap().seconds * 1_000_000_000 + m.cpu_time.unwrap().nanos as i64
    };
    assert!(t(&m2) > t(&m0));

    // Files through the API land in the workspace and survive stop/start.
    use pb::write_file_request::Message as W;
    let msgs = vec![
        pb::WriteFileRequest {
            sandbox_id: id.clone(),
            message: Some(W::Header(pb::WriteFileHeader {
                path: "notes/a.txt".into(),
                mode: 0,
                create_parents: true,
                no_overwrite: false,
                ..Default::default()
            })),
        },
        pb::WriteFileRequest {
            sandbox_id: id.clone(),
            message: Some(W::Data(b"kept".to_vec())),
        },
        pb::WriteFileRequest {
            sandbox_id: id.clone(),
            message: Some(W::Finish(pb::WriteFileFinish { size: 4 })),
        },
    ];
    fs.write_file(tokio_stream::iter(msgs)).await.unwrap();
    let (out, _, _) = exec(&mut procs, &id, &["cat", "/workspace/notes/a.txt"]).await;
    assert_eq!(out, "kept");
    let esc = fs
        .read_file(pb::ReadFileRequest {
            sandbox_id: id.clone(),
            path: "../../../../etc/shadow".into(),
            offset: 0,
            length: 0,
            ..Default::default()
        })
        .await;
    let esc = match esc {
        Ok(r) => r.into_inner().message().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(esc.unwrap_err().code(), Code::PermissionDenied);

    // File calls as a user: what they create is the user's, and they have
    // that user's permissions, not the agent's.
    let write_as = |path: &str, user: &str, mode: u32| {
        vec![
            pb::WriteFileRequest {
                sandbox_id: id.clone(),
                message: Some(W::Header(pb::WriteFileHeader {
                    path: path.into(),
                    mode,
                    create_parents: true,
                    user: user.into(),
                    ..Default::default()
                })),
            },
            pb::WriteFileRequest {
                sandbox_id: id.clone(),
                message: Some(W::Finish(pb::WriteFileFinish { size: 0 })),
            },
        ]
    };
    fs.write_file(tokio_stream::iter(write_as(
        "/home/user/mine/a.txt",
        "user",
        0,
    )))
    .await
    .unwrap();
    fs.write_file(tokio_stream::iter(write_as("private.txt", "", 0o600)))
        .await
        .unwrap();
    let (out, _, _) = exec(
        &mut procs,
        &id,
        &[
            "stat",
            "-c",
            "%u:%g",
            "/home/user/mine",
            "/home/user/mine/a.txt",
        ],
    )
    .await;
    assert_eq!(out, "1000:1000\n1000:1000\n");
    let denied = match fs
        .read_file(pb::ReadFileRequest {
            sandbox_id: id.clone(),
            path: "private.txt".into(),
            user: "user".into(),
            ..Default::default()
        })
        .await
    {
        Ok(r) => r.into_inner().message().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(denied.unwrap_err().code(), Code::PermissionDenied);
    let nobody = fs
        .stat(pb::StatRequest {
            sandbox_id: id.clone(),
            path: "private.txt".into(),
            user: "no-such-user".into(),
        })
        .await;
    assert_eq!(nobody.unwrap_err().code(), Code::InvalidArgument);

    // Pause freezes; process calls wait for resume. The call just before
    // leaves the sandbox's route cached: the pause must forget it, so the
    // server itself refuses (a stale route would reach the worker, which
    // refuses in its own words).
    procs
        .list_processes(pb::ListProcessesRequest {
            sandbox_id: id.clone(),
            include_exited: false,
        })
        .await
        .unwrap();
    dev.sandboxes
        .pause_sandbox(pb::PauseSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    let paused = procs
        .list_processes(pb::ListProcessesRequest {
            sandbox_id: id.clone(),
            include_exited: false,
        })
        .await
        .unwrap_err();
    assert_eq!(paused.code(), Code::FailedPrecondition);
    assert!(
        paused.message().contains("is paused, not running"),
        "{}",
        paused.message()
    );
    dev.sandboxes
        .resume_sandbox(pb::ResumeSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    dev.sandboxes
        .stop_sandbox(pb::StopSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    let started = dev
        .sandboxes
        .start_sandbox(pb::StartSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(started.state, pb::SandboxState::Running as i32);
    let (out, _, _) = exec(&mut procs, &id, &["cat", "/workspace/notes/a.txt"]).await;
    assert_eq!(out, "kept", "the workspace survives stop and start");

    // Another tenant cannot reach it.
    let other = tenant(&s, "intruder").await;
    let ob = Bearer(Some(format!("Bearer {}", other.developer).parse().unwrap()));
    let mut op = procs_client(s.channel().await, ob);
    let r = op
        .start_process(pb::StartProcessRequest {
            sandbox_id: id.clone(),
            command: vec!["true".into()],
            ..Default::default()
        })
        .await;
    assert_eq!(r.err().unwrap().code(), Code::NotFound);

    // Delete leaves nothing: no directory, no container, no cgroup.
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest {
            sandbox_id: id.clone(),
        })
        .await
        .unwrap();
    let dir = s.data_dir().join("worker/sandboxes").join(&id);
    assert!(!dir.exists(), "{} left behind", dir.display());
    for ctl in ["memory", "pids", "cpu", "freezer"] {
        let cg = std::path::Path::new("/sys/fs/cgroup")
            .join(ctl)
            .join("talon")
            .join(&id);
        assert!(!cg.exists(), "{} left behind", cg.display());
    }
    let cg2 = std::path::Path::new("/sys/fs/cgroup/unified/talon").join(&id);
    assert!(!cg2.exists(), "{} left behind", cg2.display());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&id), "a mount of {id} is left");
}

/// A sandbox whose init dies is reported FAILED; a sandbox past its
/// timeout is frozen by the cgroup freezer (pause is the default action).
#[tokio::test]
async fn dead_sandboxes_fail_and_timeouts_freeze() {
    assert_eq!(euid(), 0, "this test needs root (CI runs as root)");
    ensure_agent_built();
    let s = Server::up().await;
    let t = tenant(&s, "deaths").await;
    let mut dev = s.as_(&t.developer).await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    let mut procs = procs_client(s.channel().await, b);
    let mk = |secs: i64| pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            timeout: Some(prost_types::Duration {
                seconds: secs,
                nanos: 0,
            }),
            ..Default::default()
        }),
        wait_until_running: true,
        wait_timeout: Some(prost_types::Duration {
            seconds: 60,
            nanos: 0,
        }),
        ..Default::default()
    };
    let mut sb = None;
    for _ in 0..100 {
        match dev.sandboxes.create_sandbox(mk(600)).await {
            Ok(r) => {
                sb = r.into_inner().sandbox;
                break;
            }
            Err(e) if e.code() == Code::Unavailable => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let doomed = sb.expect("no worker came up").sandbox_id;
    // Kill the sandbox's init (the agent) from the host.
    let (out, _, _) = exec(&mut procs, &doomed, &["true"]).await;
    assert_eq!(out, "");
    let rt_root = s.data_dir().join("worker/runtime-state");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_talon"))
        .arg("oci")
        .arg("--root")
        .arg(&rt_root)
        .args(["kill", &doomed, "KILL"])
        .status()
        .unwrap();
    assert!(st.success());
    let failed = until_state_for(
        &mut dev,
        &doomed,
        pb::SandboxState::Failed,
        Duration::from_secs(15),
    )
    .await;
    assert!(
        failed.state_message.contains("init"),
        "{}",
        failed.state_message
    );

    let short = dev
        .sandboxes
        .create_sandbox(mk(2))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap()
        .sandbox_id;
    until_state_for(
        &mut dev,
        &short,
        pb::SandboxState::Paused,
        Duration::from_secs(15),
    )
    .await;
    let frozen = std::fs::read_to_string(format!(
        "/sys/fs/cgroup/freezer/talon/{short}/freezer.state"
    ))
    .or_else(|_| {
        std::fs::read_to_string(format!(
            "/sys/fs/cgroup/unified/talon/{short}/cgroup.freeze"
        ))
    })
    .unwrap();
    assert!(
        frozen.trim() == "FROZEN" || frozen.trim() == "1",
        "freezer says {frozen:?}"
    );
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: short })
        .await
        .unwrap();
    dev.sandboxes
        .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: doomed })
        .await
        .unwrap();
}

async fn until_state_for(
    c: &mut Clients,
    id: &str,
    state: pb::SandboxState,
    within: Duration,
) -> pb::Sandbox {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let s = get(c, id).await;
        if s.state == state as i32 {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{id} never became {state:?}; it is {:?}",
            s.state
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
