//! Real sandboxes through `talon up`: the embedded worker builds them with
//! runc, in user, pid, mount, network, ipc, uts and cgroup namespaces, and
//! the agent inside runs processes and file operations. Needs root and
//! runc (CI has both); without root the test says so and fails.

mod common;
use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

type Procs = pb::process_service_client::ProcessServiceClient<Authed>;
type Fs = pb::filesystem_service_client::FilesystemServiceClient<Authed>;

fn procs_client(ch: tonic::transport::Channel, b: Bearer) -> Procs {
    pb::process_service_client::ProcessServiceClient::with_interceptor(ch, b)
}

fn files(ch: tonic::transport::Channel, b: Bearer) -> Fs {
    pb::filesystem_service_client::FilesystemServiceClient::with_interceptor(ch, b)
}

fn ensure_agent_built() {
    let talon = std::path::PathBuf::from(env!("CARGO_BIN_EXE_talon"));
    let agent = talon.with_file_name("talon-agent");
    if !agent.exists() {
        let ok = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "talon-agent"])
            .status()
            .unwrap()
            .success();
        assert!(ok, "could not build talon-agent");
    }
}

async fn exec(p: &mut Procs, id: &str, cmd: &[&str]) -> (String, String, i32) {
    let req = pb::StartProcessRequest {
        sandbox_id: id.into(),
        command: cmd.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut s = p.start_process(req).await.unwrap().into_inner();
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    while let Some(m) = tokio::time::timeout(Duration::from_secs(30), s.message())
        .await
        .unwrap()
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) if o.stream == pb::OutputStream::Stderr as i32 => {
                err.extend(o.data)
            }
            pb::process_event::Event::Output(o) => out.extend(o.data),
            pb::process_event::Event::Exited(e) => code = Some(e.exit_code),
            pb::process_event::Event::Started(_) => {}
        }
    }
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
        code.expect("no exit"),
    )
}

#[tokio::test]
async fn a_real_sandbox_runs_processes_and_files_and_leaves_nothing_behind() {
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root (CI runs as root)"
    );
    ensure_agent_built();
    let s = Server::up().await;
    let t = tenant(&s, "real").await;
    let mut admin = s.admin().await;
    for _ in 0..100 {
        let w = admin
            .admin
            .list_workers(pb::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        if w.first()
            .is_some_and(|w| w.runtimes.iter().any(|r| r.ends_with("runc")))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut dev = s.as_(&t.developer).await;
    let b = Bearer(Some(format!("Bearer {}", t.developer).parse().unwrap()));
    let mut procs = procs_client(s.channel().await, b.clone());
    let mut fs = files(s.channel().await, b);
    let req = pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            env: [("GREETING".to_string(), "hello".to_string())].into(),
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
    let map: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(map[0], "0");
    assert_ne!(map[1], "0", "sandbox root is not host root: {out}");
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
    let (out, _, _) = exec(&mut procs, &id, &["sh", "-c", "ls /sys/class/net"]).await;
    assert_eq!(out.trim(), "lo", "a fresh network namespace");
    // Seccomp: no new namespaces, no mounts; ordinary programs still run.
    let (_, err, code) = exec(&mut procs, &id, &["unshare", "-U", "true"]).await;
    assert_ne!(code, 0, "unshare must fail: {err}");
    let (_, _, code) = exec(&mut procs, &id, &["mount", "-t", "tmpfs", "t", "/tmp"]).await;
    assert_ne!(code, 0, "mount must fail");
    let (out, err, code) = exec(&mut procs, &id, &["python3", "-c", "import threading,subprocess;t=threading.Thread(target=print,args=('thread',));t.start();t.join();print(subprocess.run(['echo','child'],capture_output=True).stdout.decode().strip())"]).await;
    assert_eq!(
        (out.as_str(), code),
        ("thread\nchild\n", 0),
        "threads and subprocesses work under seccomp: {err}"
    );
    let (out, _, _) = exec(
        &mut procs,
        &id,
        &["sh", "-c", "grep Seccomp: /proc/self/status"],
    )
    .await;
    assert!(out.contains('2'), "filter mode: {out}");

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
            })),
        },
        pb::WriteFileRequest {
            sandbox_id: id.clone(),
            message: Some(W::Data(b"kept".to_vec())),
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
        })
        .await;
    let esc = match esc {
        Ok(r) => r.into_inner().message().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(esc.unwrap_err().code(), Code::PermissionDenied);

    // Pause freezes; process calls wait for resume.
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
        .await;
    assert_eq!(paused.unwrap_err().code(), Code::FailedPrecondition);
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
