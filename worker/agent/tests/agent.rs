//! talon-agent as a real process on a unix socket: processes, output with
//! sequence numbers, reattach, stdin, signals, timeouts, PTY, orphans,
//! files (including traversal and symlink escapes) and ports. Here the
//! agent runs on the host, not as PID 1 of a sandbox; it is a subreaper,
//! so orphans behave the same.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;
use talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient;
use talon_proto::v1 as pb;
use tonic::Code;
use tonic::transport::Channel;

struct Agent {
    child: Child,
    dir: tempfile::TempDir,
    client: SandboxAgentServiceClient<Channel>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Agent {
    async fn start() -> Agent {
        Self::start_with(&[]).await
    }

    async fn start_with(extra: &[&str]) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("agent.sock");
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_talon-agent"))
            .arg("--socket")
            .arg(&sock)
            .arg("--log-dir")
            .arg(dir.path().join("logs"))
            .arg("--workspace")
            .arg(dir.path().join("ws"))
            .args(extra)
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if sock.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let path = sock.clone();
        let channel = tonic::transport::Endpoint::from_static("http://agent")
            .connect_with_connector(tower::service_fn(move |_: http::Uri| {
                let path = path.clone();
                async move {
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                        tokio::net::UnixStream::connect(path).await?,
                    ))
                }
            }))
            .await
            .unwrap();
        Agent {
            child,
            dir,
            client: SandboxAgentServiceClient::new(channel),
        }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

fn start(cmd: &[&str]) -> pb::StartProcessRequest {
    pb::StartProcessRequest {
        command: cmd.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[derive(Default, Debug)]
struct Run {
    pid: u32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    seqs: Vec<u64>,
    exit: Option<pb::ProcessExited>,
}

async fn collect<S>(mut s: S) -> Run
where
    S: tokio_stream::Stream<Item = Result<pb::ProcessEvent, tonic::Status>> + Unpin,
{
    use pb::process_event::Event;
    use tokio_stream::StreamExt;
    let mut r = Run::default();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(20), s.next())
        .await
        .expect("stream stalled")
    {
        match ev.unwrap().event.unwrap() {
            Event::Started(s) => r.pid = s.pid,
            Event::Output(o) => {
                r.seqs.push(o.seq);
                if o.stream == pb::OutputStream::Stderr as i32 {
                    r.stderr.extend(o.data)
                } else {
                    r.stdout.extend(o.data)
                }
            }
            Event::Exited(e) => r.exit = Some(e),
        }
    }
    r
}

async fn run(a: &mut Agent, req: pb::StartProcessRequest) -> Run {
    use tokio_stream::StreamExt;
    let s = a.client.start_process(req).await.unwrap().into_inner();
    collect(s.map(|r| r.map(|x| x.event.unwrap()))).await
}

#[tokio::test]
async fn exit_code_stdout_and_stderr() {
    let mut a = Agent::start().await;
    let r = run(
        &mut a,
        start(&["sh", "-c", "echo hi; echo err >&2; exit 3"]),
    )
    .await;
    assert_eq!(String::from_utf8_lossy(&r.stdout), "hi\n");
    assert_eq!(String::from_utf8_lossy(&r.stderr), "err\n");
    assert_eq!(r.exit.unwrap().exit_code, 3);
    assert!(r.pid > 0);
    let nf = a
        .client
        .start_process(start(&["no-such-command-xyz"]))
        .await;
    assert_eq!(nf.err().unwrap().code(), Code::InvalidArgument);
}

#[tokio::test]
async fn ten_thousand_lines_complete_and_in_order() {
    let mut a = Agent::start().await;
    let r = run(&mut a, start(&["seq", "1", "10000"])).await;
    let want: String = (1..=10000).map(|i| format!("{i}\n")).collect();
    assert_eq!(String::from_utf8_lossy(&r.stdout), want);
    for w in r.seqs.windows(2) {
        assert_eq!(w[0] + 1, w[1], "sequence numbers are contiguous");
    }
}

#[tokio::test]
async fn env_cwd_and_stdin() {
    let mut a = Agent::start().await;
    let mut req = start(&["sh", "-c", "echo $GREETING; pwd"]);
    req.env.insert("GREETING".into(), "héllo wörld".into());
    let r = run(&mut a, req).await;
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        format!("héllo wörld\n{}\n", a.ws().display())
    );

    let mut req = start(&["cat"]);
    req.stdin = true;
    let mut s = a.client.start_process(req).await.unwrap().into_inner();
    let first = s.message().await.unwrap().unwrap().event.unwrap();
    let Some(pb::process_event::Event::Started(st)) = first.event else {
        panic!()
    };
    let sel = Some(pb::ProcessSelector {
        selector: Some(pb::process_selector::Selector::Pid(st.pid)),
    });
    let input = pb::SendProcessInputRequest {
        sandbox_id: String::new(),
        process: sel.clone(),
        data: b"hello\n".to_vec(),
    };
    let n = a
        .client
        .send_process_input(tokio_stream::iter(vec![input]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(n.bytes_written, 6);
    a.client
        .close_process_stdin(pb::CloseProcessStdinRequest {
            sandbox_id: String::new(),
            process: sel,
        })
        .await
        .unwrap();
    use tokio_stream::StreamExt;
    let r = collect(s.map(|r| r.map(|x| x.event.unwrap()))).await;
    assert_eq!(String::from_utf8_lossy(&r.stdout), "hello\n");
    assert_eq!(r.exit.unwrap().exit_code, 0);
}

#[tokio::test]
async fn signals_and_timeouts() {
    let mut a = Agent::start().await;
    let mut s = a
        .client
        .start_process(start(&["sleep", "100"]))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::process_event::Event::Started(st)) =
        s.message().await.unwrap().unwrap().event.unwrap().event
    else {
        panic!()
    };
    let sel = Some(pb::ProcessSelector {
        selector: Some(pb::process_selector::Selector::Pid(st.pid)),
    });
    a.client
        .send_process_signal(pb::SendProcessSignalRequest {
            sandbox_id: String::new(),
            process: sel,
            signal: 15,
        })
        .await
        .unwrap();
    use tokio_stream::StreamExt;
    let r = collect(s.map(|r| r.map(|x| x.event.unwrap()))).await;
    let e = r.exit.unwrap();
    assert_eq!((e.exit_code, e.signal, e.timed_out), (-1, 15, false));

    let mut req = start(&["sleep", "10"]);
    req.timeout = Some(prost_types::Duration {
        seconds: 0,
        nanos: 300_000_000,
    });
    let t0 = std::time::Instant::now();
    let r = run(&mut a, req).await;
    let e = r.exit.unwrap();
    assert!(e.timed_out && e.signal == 9, "{e:?}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn background_process_is_reattached_by_tag_without_loss_or_duplication() {
    let mut a = Agent::start().await;
    let mut req = start(&[
        "sh",
        "-c",
        "for i in 1 2 3 4 5; do echo $i; sleep 0.2; done",
    ]);
    req.tag = "bg".into();
    let mut s = a
        .client
        .start_process(req.clone())
        .await
        .unwrap()
        .into_inner();
    // Read the start and the first line, then disconnect.
    let mut got = Vec::new();
    let mut last = 0;
    while got.is_empty() {
        if let Some(pb::process_event::Event::Output(o)) =
            s.message().await.unwrap().unwrap().event.unwrap().event
        {
            got.extend(o.data);
            last = o.seq;
        }
    }
    drop(s);
    // A second process with the same tag is refused while it runs.
    assert_eq!(
        a.client.start_process(req).await.err().unwrap().code(),
        Code::AlreadyExists
    );
    let sel = Some(pb::ProcessSelector {
        selector: Some(pb::process_selector::Selector::Tag("bg".into())),
    });
    let s = a
        .client
        .connect_process(pb::ConnectProcessRequest {
            sandbox_id: String::new(),
            process: sel.clone(),
            after_seq: last,
        })
        .await
        .unwrap()
        .into_inner();
    use tokio_stream::StreamExt;
    let r = collect(s.map(|r| r.map(|x| x.event.unwrap()))).await;
    got.extend(r.stdout);
    assert_eq!(String::from_utf8_lossy(&got), "1\n2\n3\n4\n5\n");
    assert_eq!(r.exit.unwrap().exit_code, 0);
    // The kept log pages back the same bytes.
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let page = a
            .client
            .get_process_logs(pb::GetProcessLogsRequest {
                sandbox_id: String::new(),
                process: sel.clone(),
                after_seq: after,
                page_size: 2,
                stream: 0,
            })
            .await
            .unwrap()
            .into_inner();
        for e in &page.entries {
            all.extend(&e.data);
        }
        after = page.next_after_seq;
        if !page.has_more {
            break;
        }
    }
    assert_eq!(String::from_utf8_lossy(&all), "1\n2\n3\n4\n5\n");
    let list = a
        .client
        .list_processes(pb::ListProcessesRequest {
            sandbox_id: String::new(),
            include_exited: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(list.processes.iter().any(|p| p.tag == "bg" && !p.running));
}

async fn read_until(
    screen: &mut String,
    out: &mut tonic::Streaming<pb::AttachResponse>,
    needle: &str,
) {
    use pb::attach_response::Message as Out;
    let fut = async {
        while !screen.contains(needle) {
            match out.message().await.unwrap().unwrap().message {
                Some(Out::Output(d)) => screen.push_str(&String::from_utf8_lossy(&d)),
                other => panic!("{other:?}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .unwrap_or_else(|_| panic!("{needle:?} never appeared in {screen:?}"));
}

#[tokio::test]
async fn pty_runs_a_shell_and_resizes() {
    use pb::attach_request::Message as In;
    use pb::attach_response::Message as Out;
    let mut a = Agent::start().await;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let open = pb::PtyOpen {
        target: Some(pb::pty_open::Target::Command(pb::PtyCommand {
            command: vec!["sh".into()],
            ..Default::default()
        })),
        size: Some(pb::PtySize { rows: 24, cols: 80 }),
    };
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Open(open)),
    })
    .await
    .unwrap();
    let mut out = a
        .client
        .attach(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let Some(Out::Pid(_)) = out.message().await.unwrap().unwrap().message else {
        panic!()
    };
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(b"echo $((6*7))\n".to_vec())),
    })
    .await
    .unwrap();
    let mut screen = String::new();
    read_until(&mut screen, &mut out, "42\r\n").await;
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Resize(pb::PtySize {
            rows: 50,
            cols: 120,
        })),
    })
    .await
    .unwrap();
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(b"stty size\n".to_vec())),
    })
    .await
    .unwrap();
    let mut screen = String::new();
    read_until(&mut screen, &mut out, "50 120").await;
    tx.send(pb::AttachRequest {
        sandbox_id: String::new(),
        message: Some(In::Input(b"exit 7\n".to_vec())),
    })
    .await
    .unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), out.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
            .message
        {
            Some(Out::Exited(e)) => {
                assert_eq!(e.exit_code, 7);
                break;
            }
            Some(Out::Output(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn orphans_are_reaped() {
    let mut a = Agent::start().await;
    let r = run(
        &mut a,
        start(&["sh", "-c", "sleep 0.2 >/dev/null 2>&1 & exit 0"]),
    )
    .await;
    assert_eq!(r.exit.unwrap().exit_code, 0);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let me = a.child.id();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(stat) = std::fs::read_to_string(p.path().join("stat")) {
            let rest = stat.rsplit_once(") ").map(|x| x.1).unwrap_or("");
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() > 1 && f[1] == me.to_string() {
                assert_ne!(
                    f[0],
                    "Z",
                    "zombie child {} of the agent",
                    p.file_name().to_string_lossy()
                );
            }
        }
    }
}

async fn write(
    a: &mut Agent,
    path: &str,
    data: &[u8],
    parents: bool,
) -> Result<pb::FileInfo, tonic::Status> {
    use pb::write_file_request::Message as W;
    let mut msgs = vec![pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: path.into(),
            mode: 0,
            create_parents: parents,
            no_overwrite: false,
        })),
    }];
    for c in data.chunks(100_000) {
        msgs.push(pb::WriteFileRequest {
            sandbox_id: String::new(),
            message: Some(W::Data(c.to_vec())),
        });
    }
    msgs.push(pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Finish(pb::WriteFileFinish {
            size: data.len() as i64,
        })),
    });
    a.client
        .write_file(tokio_stream::iter(msgs))
        .await
        .map(|r| r.into_inner().info.unwrap())
}

async fn read(a: &mut Agent, path: &str) -> Result<Vec<u8>, tonic::Status> {
    let mut s = a
        .client
        .read_file(pb::ReadFileRequest {
            sandbox_id: String::new(),
            path: path.into(),
            offset: 0,
            length: 0,
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(c) = s.message().await? {
        out.extend(c.data);
    }
    Ok(out)
}

#[tokio::test]
async fn files_round_trip_atomically() {
    let mut a = Agent::start().await;
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let info = write(&mut a, "dir/sub/blob.bin", &data, true)
        .await
        .unwrap();
    assert_eq!(info.size, data.len() as i64);
    assert_eq!(read(&mut a, "dir/sub/blob.bin").await.unwrap(), data);
    let abs = format!("{}/dir/sub/blob.bin", a.ws().display());
    assert_eq!(
        read(&mut a, &abs).await.unwrap(),
        data,
        "absolute paths work too"
    );
    // No temp file is left beside it.
    let names: Vec<_> = std::fs::read_dir(a.ws().join("dir/sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let st = a
        .client
        .stat(pb::StatRequest {
            sandbox_id: String::new(),
            path: "dir/sub".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .info
        .unwrap();
    assert_eq!(st.r#type, pb::FileType::Directory as i32);
    a.client
        .make_dir(pb::MakeDirRequest {
            sandbox_id: String::new(),
            path: "a/b/c".into(),
            parents: true,
            mode: 0,
        })
        .await
        .unwrap();
    let ls = a
        .client
        .list_dir(pb::ListDirRequest {
            sandbox_id: String::new(),
            path: String::new(),
            depth: 3,
        })
        .await
        .unwrap()
        .into_inner()
        .entries;
    let paths: Vec<String> = ls
        .iter()
        .map(|e| {
            e.path
                .trim_start_matches(&a.ws().display().to_string())
                .to_string()
        })
        .collect();
    assert_eq!(
        paths,
        vec![
            "/a",
            "/a/b",
            "/a/b/c",
            "/dir",
            "/dir/sub",
            "/dir/sub/blob.bin"
        ]
    );
    // "." and "dir/." name the directory itself; ".." as the last
    // component is still refused.
    for (path, want) in [(".", 2), ("./", 2), ("a/.", 1), ("a/b/./.", 1)] {
        let n = a
            .client
            .list_dir(pb::ListDirRequest {
                sandbox_id: String::new(),
                path: path.into(),
                depth: 1,
            })
            .await
            .unwrap()
            .into_inner()
            .entries
            .len();
        assert_eq!(n, want, "{path}");
    }
    let up = a
        .client
        .list_dir(pb::ListDirRequest {
            sandbox_id: String::new(),
            path: "a/..".into(),
            depth: 1,
        })
        .await
        .unwrap_err();
    assert_eq!(up.code(), Code::InvalidArgument);
    a.client
        .move_path(pb::MovePathRequest {
            sandbox_id: String::new(),
            source_path: "dir/sub/blob.bin".into(),
            destination_path: "a/moved.bin".into(),
            overwrite: false,
        })
        .await
        .unwrap();
    assert_eq!(read(&mut a, "a/moved.bin").await.unwrap().len(), data.len());
    assert_eq!(
        read(&mut a, "dir/sub/blob.bin").await.unwrap_err().code(),
        Code::NotFound
    );
    let rm = a
        .client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "a".into(),
            recursive: false,
        })
        .await;
    assert_eq!(
        rm.unwrap_err().code(),
        Code::FailedPrecondition,
        "a non-empty directory needs recursive"
    );
    a.client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "a".into(),
            recursive: true,
        })
        .await
        .unwrap();
    assert!(!a.ws().join("a").exists());
    let empty = write(&mut a, "empty", b"", false).await.unwrap();
    assert_eq!(empty.size, 0);
    assert_eq!(read(&mut a, "empty").await.unwrap(), b"");
}

/// Regression guard for the seed's P0: a symlink in an intermediate
/// component, or `..`, must not let the workspace API reach outside.
#[tokio::test]
async fn traversal_and_symlink_escapes_are_refused() {
    let mut a = Agent::start().await;
    let outside = a.dir.path().join("outside.txt");
    std::fs::write(&outside, b"host secret").unwrap();
    std::os::unix::fs::symlink(a.dir.path(), a.ws().join("up")).unwrap();
    std::os::unix::fs::symlink(&outside, a.ws().join("leaf")).unwrap();
    for path in [
        "../outside.txt",
        "up/outside.txt",
        "leaf",
        "x/../../outside.txt",
    ] {
        let e = read(&mut a, path).await.unwrap_err();
        assert!(
            matches!(e.code(), Code::PermissionDenied | Code::NotFound),
            "{path}: {e:?}"
        );
        assert_ne!(e.code(), Code::Ok);
    }
    assert_eq!(
        read(&mut a, "up/outside.txt").await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert_eq!(
        read(&mut a, "../outside.txt").await.unwrap_err().code(),
        Code::PermissionDenied
    );
    // Writes through the symlinked directory are refused, and nothing lands outside.
    assert_eq!(
        write(&mut a, "up/planted.txt", b"x", false)
            .await
            .unwrap_err()
            .code(),
        Code::PermissionDenied
    );
    assert_eq!(
        write(&mut a, "up/deeper/planted.txt", b"x", true)
            .await
            .unwrap_err()
            .code(),
        Code::PermissionDenied
    );
    assert!(!a.dir.path().join("planted.txt").exists());
    // A FIFO is refused at once instead of blocking the reader forever.
    let fifo = std::ffi::CString::new(a.ws().join("fifo").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let e = tokio::time::timeout(Duration::from_secs(5), read(&mut a, "fifo"))
        .await
        .expect("ReadFile on a FIFO hung")
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    // Removing the symlink removes the link, never its target.
    a.client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "leaf".into(),
            recursive: true,
        })
        .await
        .unwrap();
    assert_eq!(std::fs::read(&outside).unwrap(), b"host secret");
    let e = a
        .client
        .remove_path(pb::RemovePathRequest {
            sandbox_id: String::new(),
            path: "up/outside.txt".into(),
            recursive: false,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(outside.exists());
}

/// An upload that ends without its finish (or whose finish disagrees with
/// what arrived) writes nothing, and leaves the old file as it was.
#[tokio::test]
async fn only_a_finished_upload_is_written() {
    use pb::write_file_request::Message as W;
    let mut a = Agent::start().await;
    write(&mut a, "kept.txt", b"original", false).await.unwrap();
    let header = || pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: "kept.txt".into(),
            mode: 0,
            create_parents: false,
            no_overwrite: false,
        })),
    };
    let data = || pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Data(b"short".to_vec())),
    };
    let finish = |size| pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Finish(pb::WriteFileFinish { size })),
    };
    for (msgs, want) in [
        (vec![header(), data()], Code::Aborted),
        (vec![header()], Code::Aborted),
        (vec![header(), data(), finish(99)], Code::InvalidArgument),
        (
            vec![header(), data(), finish(5), data()],
            Code::InvalidArgument,
        ),
    ] {
        let e = a
            .client
            .write_file(tokio_stream::iter(msgs))
            .await
            .unwrap_err();
        assert_eq!(e.code(), want, "{e:?}");
        assert_eq!(std::fs::read(a.ws().join("kept.txt")).unwrap(), b"original");
    }
    let leftovers: Vec<_> = std::fs::read_dir(a.ws())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".talon-write-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[tokio::test]
async fn watch_reports_changes() {
    let mut a = Agent::start().await;
    let mut w = a
        .client
        .watch_dir(pb::WatchDirRequest {
            sandbox_id: String::new(),
            path: String::new(),
            recursive: true,
        })
        .await
        .unwrap()
        .into_inner();
    tokio::time::sleep(Duration::from_millis(100)).await;
    std::fs::write(a.ws().join("new.txt"), b"x").unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(5), w.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(ev.path.ends_with("/new.txt"), "{ev:?}");
    assert_eq!(ev.r#type, pb::FileEventType::Create as i32);
    // An atomic write through the API shows as a write of its target,
    // never as its temp file.
    let header = pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(pb::write_file_request::Message::Header(
            pb::WriteFileHeader {
                path: "api.txt".into(),
                mode: 0,
                create_parents: false,
                no_overwrite: false,
            },
        )),
    };
    let data = pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(pb::write_file_request::Message::Data(b"y".to_vec())),
    };
    a.client
        .write_file(tokio_stream::iter(vec![
            header,
            data,
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(pb::write_file_request::Message::Finish(
                    pb::WriteFileFinish { size: 1 },
                )),
            },
        ]))
        .await
        .unwrap();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), w.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(!ev.path.contains(".talon-write-"), "{ev:?}");
        if ev.path.ends_with("/api.txt") {
            assert_eq!(ev.r#type, pb::FileEventType::Write as i32, "{ev:?}");
            break;
        }
    }
}

#[tokio::test]
async fn ports_and_ping() {
    let mut a = Agent::start().await;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port() as u32;
    let ports = a
        .client
        .list_ports(pb::ListPortsRequest {
            sandbox_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .ports;
    let mine = ports
        .iter()
        .find(|p| p.port == port)
        .expect("listener not reported");
    assert_eq!(mine.pid, std::process::id());
    let ping = a
        .client
        .ping(talon_proto::talon::agent::v1::PingRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ping.version, env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn logs_rotate_by_size() {
    let mut a = Agent::start_with(&["--max-log-bytes", "65536"]).await;
    let mut req = start(&["seq", "1", "200000"]);
    req.tag = "big".into();
    let r = run(&mut a, req).await;
    assert!(
        r.stdout.len() > 1_000_000,
        "the live stream still carries everything"
    );
    let sel = Some(pb::ProcessSelector {
        selector: Some(pb::process_selector::Selector::Tag("big".into())),
    });
    let page = a
        .client
        .get_process_logs(pb::GetProcessLogsRequest {
            sandbox_id: String::new(),
            process: sel,
            after_seq: 0,
            page_size: 5000,
            stream: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(page.first_kept_seq > 1, "old chunks were rotated away");
    // Process logs only: not the reserve kept for a full disk.
    let kept: u64 = std::fs::read_dir(a.dir.path().join("logs"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != ".reserve")
        .map(|e| e.metadata().unwrap().len())
        .sum();

    assert!(kept < 3 * 65536 + 65536, "{kept} bytes of logs kept");
}

/// A path that ends in `/` or `/.` names a directory, as in POSIX: on a
/// file or a symlink it is ENOTDIR (FAILED_PRECONDITION), and nothing is
/// changed. The probe's `write lnroot/.` replaced the symlink `lnroot`
/// with a file.
#[tokio::test]
async fn a_trailing_slash_names_a_directory() {
    let mut a = Agent::start().await;
    write(&mut a, "f", b"kept", false).await.unwrap();
    std::os::unix::fs::symlink("f", a.ws().join("ln")).unwrap();
    std::fs::create_dir(a.ws().join("d")).unwrap();
    let fp = |st: tonic::Status| {
        assert_eq!(st.code(), Code::FailedPrecondition, "{st:?}");
        st.message().to_string()
    };
    for p in ["f/", "f/.", "ln/", "ln/.", "f//"] {
        let m = fp(write(&mut a, p, b"replaced", false).await.unwrap_err());
        assert!(m.contains("not a directory"), "{p}: {m}");
        fp(read(&mut a, p).await.unwrap_err());
        fp(a.client
            .stat(pb::StatRequest {
                path: p.into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
        fp(a.client
            .remove_path(pb::RemovePathRequest {
                path: p.into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
        fp(a.client
            .move_path(pb::MovePathRequest {
                source_path: p.into(),
                destination_path: "moved".into(),
                ..Default::default()
            })
            .await
            .unwrap_err());
    }
    // Nothing changed.
    assert_eq!(std::fs::read(a.ws().join("f")).unwrap(), b"kept");
    assert!(
        std::fs::symlink_metadata(a.ws().join("ln"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!a.ws().join("moved").exists());
    // A file at a directory's path: refused as a directory.
    let m = fp(write(&mut a, "d/.", b"x", false).await.unwrap_err());
    assert!(m.contains("is a directory"), "{m}");
    let m = fp(write(&mut a, "new/", b"x", false).await.unwrap_err());
    assert!(m.contains("is a directory"), "{m}");
    assert!(!a.ws().join("new").exists());
    // On directories the slash is fine.
    a.client
        .stat(pb::StatRequest {
            path: "d/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    a.client
        .make_dir(pb::MakeDirRequest {
            path: "e/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    a.client
        .move_path(pb::MovePathRequest {
            source_path: "d/".into(),
            destination_path: "d2/".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(a.ws().join("d2").is_dir() && a.ws().join("e").is_dir());
    // Moving a directory into itself is the caller's error, not ours.
    std::fs::create_dir_all(a.ws().join("sub/deep")).unwrap();
    let st = a
        .client
        .move_path(pb::MovePathRequest {
            source_path: "sub".into(),
            destination_path: "sub/deep/sub".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
}
