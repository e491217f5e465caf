//! talon-agent as a real process on a unix socket: processes, output with
//! sequence numbers, reattach, stdin, signals, timeouts, PTY, orphans,
//! ports and logs. Here the agent runs on the host, not as PID 1 of a
//! sandbox; it is a subreaper, so orphans behave the same.

mod common;

use common::*;
use std::time::Duration;
use talon_proto::v1 as pb;
use tonic::Code;

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

/// Output the process wrote before it exited reaches the stream even when
/// the agent's output thread reads it late (a sandbox throttled at its
/// cpu limit). The stream once ended 250 ms after the exit whatever was
/// left unread: a PTY's `stty size` answer was lost that way in CI.
#[tokio::test]
async fn output_read_late_after_the_exit_is_not_lost() {
    let mut a = Agent::start_env(&[], &[("TALON_AGENT_TEST_OUTPUT_DELAY_MS", "900")]).await;
    let r = run(&mut a, start(&["sh", "-c", "echo piped"])).await;
    assert_eq!(String::from_utf8_lossy(&r.stdout), "piped\n");
    assert_eq!(r.exit.unwrap().exit_code, 0);
    let mut req = start(&["sh", "-c", "stty size"]);
    req.pty = Some(pb::PtySize {
        rows: 40,
        cols: 100,
    });
    let r = run(&mut a, req).await;
    assert_eq!(String::from_utf8_lossy(&r.stdout), "40 100\r\n");
}

/// The exit and the streams' ends race: the reaper may see the exit
/// before the output thread reads the ends and publish it after. The
/// stream once never ended that way (the count was read outside the
/// lock that publishes the exit): CI's `echo up` waited 60 s.
#[tokio::test]
async fn an_exit_published_after_the_streams_end_still_ends_the_stream() {
    let mut a = Agent::start_env(&[], &[("TALON_AGENT_TEST_EXIT_DELAY_MS", "300")]).await;
    for _ in 0..3 {
        let r = tokio::time::timeout(
            Duration::from_secs(10),
            run(&mut a, start(&["sh", "-c", "echo up"])),
        )
        .await
        .expect("the stream ends after the exit");
        assert_eq!(String::from_utf8_lossy(&r.stdout), "up\n");
        assert_eq!(r.exit.unwrap().exit_code, 0);
    }
}

/// A new PTY command's first output (a shell's prompt) reaches the
/// client even when the stream's task runs late: it was followed from
/// "now", so a prompt printed before that was never sent, and the web
/// console's terminal stayed blank about one open in ten.
#[tokio::test]
async fn a_new_ptys_first_output_is_never_skipped() {
    use pb::attach_request::Message as In;
    use pb::attach_response::Message as Out;
    let mut a = Agent::start_env(&[], &[("TALON_AGENT_TEST_STREAM_DELAY_MS", "300")]).await;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let open = pb::PtyOpen {
        target: Some(pb::pty_open::Target::Command(pb::PtyCommand {
            command: vec![
                "sh".into(),
                "-c".into(),
                "echo first-words; exec cat".into(),
            ],
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
    let mut screen = String::new();
    read_until(&mut screen, &mut out, "first-words").await;
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

/// Bytes of process logs in the agent's log directory (not the reserve
/// kept for a full disk).
fn logs_on_disk(a: &Agent) -> u64 {
    std::fs::read_dir(a.dir.path().join("logs"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != ".reserve")
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum()
}

/// The bytes `seq 1 n` prints.
fn seq_output(n: u32) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

/// The same output when the stream's task runs late (a loaded host: CI
/// once read 1,092,287 of its 1,288,895 bytes, the first three 64 KiB
/// segments rotated away before the stream held the log). The stream's
/// follower is made with the process, so the writer waits for it from the
/// first byte.
#[tokio::test]
async fn a_stream_that_starts_late_still_gets_every_byte() {
    const MAX: u64 = 64 << 10;
    let mut a = Agent::start_env(
        &[
            "--max-log-bytes",
            &MAX.to_string(),
            "--max-spill-bytes",
            "0",
        ],
        &[("TALON_AGENT_TEST_STREAM_DELAY_MS", "500")],
    )
    .await;
    let r = run(&mut a, start(&["seq", "1", "200000"])).await;
    assert!(
        r.stdout == seq_output(200000),
        "a late stream lost output ({} of {} bytes came)",
        r.stdout.len(),
        seq_output(200000).len()
    );
    assert_eq!(r.exit.unwrap().exit_code, 0);
}

/// 1.3 MB of output through logs of 64 KiB, with nothing spilled: the
/// files rotate many times, and the live stream (which reads the log
/// behind the writer) still carries every byte, because the process waits
/// for it. Once it ends, two files at most are kept. (A live reader more
/// than two files behind once lost what rotated away; this test had been
/// loosened to 256 KiB files for it.)
#[tokio::test]
async fn logs_rotate_by_size() {
    const MAX: u64 = 64 << 10;
    let mut a = Agent::start_with(&[
        "--max-log-bytes",
        &MAX.to_string(),
        "--max-spill-bytes",
        "0",
    ])
    .await;
    let mut req = start(&["seq", "1", "200000"]);
    req.tag = "big".into();
    let r = run(&mut a, req).await;
    assert!(
        r.stdout == seq_output(200000),
        "the live stream carries every byte, in order ({} bytes came)",
        r.stdout.len()
    );
    assert_eq!(r.exit.unwrap().exit_code, 0);
    for w in r.seqs.windows(2) {
        assert_eq!(w[0] + 1, w[1], "sequence numbers are contiguous");
    }
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
    assert_eq!(page.entries.first().unwrap().seq, page.first_kept_seq);
    assert_eq!(page.entries.last().unwrap().seq, *r.seqs.last().unwrap());
    // Two files, each at most a record (32 KiB) past the size.
    let kept = logs_on_disk(&a);
    assert!(
        kept <= 2 * (MAX + (32 << 10) + 21),
        "{kept} bytes of logs kept"
    );
}

/// A live reader that sleeps between messages gets 7 MB of output (a
/// hundred log files) byte for byte, while the files on disk stay within
/// two files and the spill allowed.
#[tokio::test]
async fn a_slow_live_reader_gets_every_byte_and_the_disk_stays_bounded() {
    const MAX: u64 = 64 << 10;
    const SPILL: u64 = 128 << 10;
    let mut a = Agent::start_with(&[
        "--max-log-bytes",
        &MAX.to_string(),
        "--max-spill-bytes",
        &SPILL.to_string(),
    ])
    .await;
    let n = 1_000_000;
    let mut s = a
        .client
        .start_process(start(&["seq", "1", &n.to_string()]))
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    let (mut last, mut most, mut messages) = (0, 0, 0);
    let mut exit = None;
    let t0 = std::time::Instant::now();
    while let Some(m) = tokio::time::timeout(Duration::from_secs(20), s.message())
        .await
        .expect("stream stalled")
        .unwrap()
    {
        match m.event.unwrap().event.unwrap() {
            pb::process_event::Event::Output(o) => {
                assert_eq!(o.seq, last + 1, "sequence numbers are contiguous");
                last = o.seq;
                out.extend(o.data);
                messages += 1;
                if messages % 8 == 0 {
                    most = most.max(logs_on_disk(&a));
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            pb::process_event::Event::Exited(e) => exit = Some(e),
            pb::process_event::Event::Started(_) => {}
        }
    }
    let want = seq_output(n);
    assert!(out.len() as u64 > 50 * MAX);
    assert_eq!(out.len(), want.len(), "every byte came");
    assert!(out == want, "in order");
    assert_eq!(exit.unwrap().exit_code, 0);
    let bound = SPILL + 2 * (MAX + (32 << 10) + 21);
    assert!(
        most <= bound,
        "{most} bytes of logs on disk (at most {bound})"
    );
    eprintln!(
        "{} bytes in {messages} messages in {:?}; at most {most} bytes of logs on disk",
        out.len(),
        t0.elapsed()
    );
}

/// A live reader that stops reading holds the process at its next write
/// (as a pipe would); when it goes, the process runs on to its end.
#[tokio::test]
async fn a_reader_that_stops_holds_the_process_until_it_goes() {
    let mut a = Agent::start_with(&["--max-log-bytes", "65536", "--max-spill-bytes", "0"]).await;
    let mut req = start(&["seq", "1", "3000000"]);
    req.tag = "held".into();
    let mut s = a.client.start_process(req).await.unwrap().into_inner();
    s.message().await.unwrap().unwrap();
    let running = |a: &mut Agent| {
        let mut c = a.client.clone();
        async move {
            c.list_processes(pb::ListProcessesRequest {
                sandbox_id: String::new(),
                include_exited: true,
            })
            .await
            .unwrap()
            .into_inner()
            .processes
            .iter()
            .any(|p| p.tag == "held" && p.running)
        }
    };
    // 20 MB, written in well under a second when nothing holds it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        running(&mut a).await,
        "the process ran on past a reader that reads nothing"
    );
    let held = logs_on_disk(&a);
    assert!(held < 4 << 20, "{held} bytes of logs while held");
    drop(s);
    let t0 = std::time::Instant::now();
    while running(&mut a).await {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the process never ran on"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
