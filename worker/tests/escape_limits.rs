//! Escape tests, limits and races: cgroups against fork bombs and memory
//! hogs, an agent that answers at the pids limit, disk and inode fill of
//! every writable path, concurrent creates, and a create that arrives
//! after its delete. Root is required; CI is root.

mod common;

use common::sandbox;
use std::path::Path;
use std::time::Duration;
use talon_proto::v1 as pb;

#[tokio::test(flavor = "multi_thread")]
async fn escape_fork_bomb_and_memory_hog_stay_in_their_cgroup() {
    bomb_and_hog(sandbox((1000, 64, 64)).await).await;
}

/// Under gVisor the limits hold the sandbox as a whole: gVisor's kernel,
/// its threads and the host process standing for each of the sandbox's
/// processes share the cgroup, so a fork bomb or a memory hog that reaches
/// a limit ends the whole sandbox (the worker reports it failed), where a
/// container loses only the culprit. Nothing outside is touched.
#[tokio::test(flavor = "multi_thread")]
async fn escape_fork_bomb_and_memory_hog_end_only_their_gvisor_sandbox() {
    let env = common::TestHost::with_gvisor(Default::default());
    let mut spec = common::spec("host", (1000, 256, 64));
    spec.isolation = talon_proto::v1::Isolation::Gvisor as i32;
    let bystander = common::create(&env, &spec).await.unwrap();
    for attack in [
        "import os, time\nfor _ in range(500):\n    if os.fork() == 0:\n        time.sleep(5); os._exit(0)\nprint(\"unbounded\")",
        "b = bytearray(1024*1024*1024); print(\"unbounded\")",
    ] {
        let mut s = common::create(&env, &spec).await.unwrap();
        let req = pb::StartProcessRequest {
            command: vec!["python3".into(), "-c".into(), attack.into()],
            ..Default::default()
        };
        let mut out = Vec::new();
        if let Ok(r) = s.agent.start_process(req).await {
            let mut st = r.into_inner();
            while let Ok(Some(m)) = st.message().await {
                if let Some(pb::process_event::Event::Output(o)) = m.event.and_then(|e| e.event) {
                    out.extend(o.data);
                }
            }
        }
        let out = String::from_utf8_lossy(&out);
        assert!(!out.contains("unbounded"), "{attack}: {out}");
        // gVisor's kernel goes down with it, and the reaper sees it.
        let mut failed = false;
        for _ in 0..40 {
            let gone = env.host.reap_dead().await;
            if gone
                .iter()
                .any(|g| g.sandbox_id == s.id && g.state == pb::SandboxState::Failed as i32)
            {
                failed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert!(failed, "{attack}: the sandbox was not reported failed");
        drop(s);
    }
    let mut b = bystander;
    let (out, _, _) = b.sh("echo alive").await;
    assert_eq!(out, "alive\n");
}

async fn bomb_and_hog(mut s: common::Sandbox) {
    fork_bomb(&mut s).await;
    let (_, _, code) = s
        .sh("python3 -c 'b=bytearray(512*1024*1024); print(len(b))'")
        .await;
    assert_ne!(
        code, 0,
        "a 512 MiB allocation succeeded under a 64 MiB limit"
    );
    // The sandbox, its agent and this process all live on.
    let (out, _, code) = s.sh("echo alive").await;
    assert_eq!((out.as_str(), code), ("alive\n", 0));
}

async fn fork_bomb(s: &mut common::Sandbox) {
    let bomb = r#"
import os, errno
n = 0
try:
    while n < 500:
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(3)
            os._exit(0)
        n += 1
    print("unbounded", n)
except OSError as e:
    print("stopped", n, e.errno)
"#;
    let (out, err, _) = s.sh(&format!("python3 -c '{bomb}'")).await;
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        f.first(),
        Some(&"stopped"),
        "the fork bomb was not stopped: {out} {err}"
    );
    let n: usize = f[1].parse().unwrap();
    assert!(n < 64, "{n} forks under pids.max 64");
    assert_eq!(f[2], libc::EAGAIN.to_string());
    tokio::time::sleep(Duration::from_secs(4)).await;
}

/// While a workload holds every pid of its sandbox, the agent (whose
/// threads count against the same limit) still answers every call: a new
/// process is refused with RESOURCE_EXHAUSTED, file and port calls work
/// or are refused the same way, nothing panics or hangs, and all is well
/// once the pids are free again.
#[tokio::test(flavor = "multi_thread")]
async fn escape_pid_exhaustion_leaves_the_agent_answering() {
    let mut s = sandbox((1000, 256, 48)).await;
    let hold = r#"
import os, time, sys
n = 0
try:
    while n < 500:
        if os.fork() == 0:
            time.sleep(22)
            os._exit(0)
        n += 1
except OSError as e:
    print("full", n, e.errno, flush=True)
time.sleep(22)
"#;
    let (mut bomb, line) = holding(&mut s, hold, Duration::from_secs(20)).await;
    assert!(line.starts_with("full"), "{line}");
    // Past tokio's keep-alive, so the agent has no spare blocking thread.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let ok_or_exhausted = |what: &str, r: Result<(), tonic::Status>| match r {
        Ok(()) => {}
        Err(e) => assert_eq!(
            e.code(),
            tonic::Code::ResourceExhausted,
            "{what} under pid exhaustion: {e:?}"
        ),
    };
    let e = s
        .agent
        .start_process(pb::StartProcessRequest {
            command: vec!["true".into()],
            ..Default::default()
        })
        .await
        .map(|_| ())
        .expect_err("a process started with every pid taken");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("pids"), "{e:?}");
    let r = s
        .agent
        .list_dir(pb::ListDirRequest {
            path: "/".into(),
            ..Default::default()
        })
        .await
        .map(|_| ());
    ok_or_exhausted("ListDir", r);
    let r = match s
        .agent
        .read_file(pb::ReadFileRequest {
            sandbox_id: String::new(),
            path: "/etc/hostname".into(),
            offset: 0,
            length: 0,
            ..Default::default()
        })
        .await
    {
        Ok(st) => {
            let mut st = st.into_inner();
            let mut r = Ok(());
            loop {
                match st.message().await {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
            }
            r
        }
        Err(e) => Err(e),
    };
    ok_or_exhausted("ReadFile", r);
    let r = s
        .agent
        .list_ports(pb::ListPortsRequest::default())
        .await
        .map(|_| ());
    ok_or_exhausted("ListPorts", r);
    // The holder's stream still follows it; then everything works again.
    while let Some(m) = tokio::time::timeout(Duration::from_secs(40), bomb.message())
        .await
        .expect("the holder's stream hung")
        .unwrap()
    {
        let _ = m;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (out, _, code) = s.sh("echo alive").await;
    assert_eq!((out.as_str(), code), ("alive\n", 0));
    s.agent
        .list_dir(pb::ListDirRequest {
            path: "/".into(),
            ..Default::default()
        })
        .await
        .expect("ListDir once the pids are free");
}

/// Sandboxes created at the same moment never share a slot: a slot is a
/// host uid range (files of one would be another's) and an address.
/// Found when 20 concurrent creates on a networked worker collided on
/// their address.
#[tokio::test(flavor = "multi_thread")]
async fn escape_concurrent_creates_never_share_a_uid_range() {
    let env = common::TestHost::new(talon_worker::host::HostOptions::default());
    let creates = (0..8).map(|_| {
        let env = env.clone();
        tokio::spawn(async move {
            common::create(&env, &common::spec("host", (100, 64, 32)))
                .await
                .unwrap()
        })
    });
    let sandboxes: Vec<common::Sandbox> = futures::future::join_all(creates)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let slots: std::collections::HashSet<u32> = sandboxes
        .iter()
        .map(|s| env.host.held(&s.id).unwrap().slot)
        .collect();
    assert_eq!(slots.len(), sandboxes.len(), "slots shared: {slots:?}");
    // And their roots are different host users.
    let owners: std::collections::HashSet<u32> = sandboxes
        .iter()
        .map(|s| {
            std::os::unix::fs::MetadataExt::uid(
                &std::fs::metadata(s.dir().join("disk/workspace")).unwrap(),
            )
        })
        .collect();
    assert_eq!(owners.len(), sandboxes.len(), "workspaces share an owner");
}

/// Free bytes of the filesystem holding `p`.
/// The bytes the host's filesystem holds for everything under `p` (its
/// allocated blocks), not crossing into mounts: what a sandbox's
/// directory costs the host. (Free space of the whole filesystem moves
/// with the other tests running beside this one.)
fn allocated_bytes(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(root) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    let mut total = root.blocks() * 512;
    if root.is_dir() {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            let q = e.path();
            match std::fs::symlink_metadata(&q) {
                Ok(m) if m.is_dir() && m.dev() != root.dev() => {}
                Ok(m) if m.is_dir() => total += allocated_bytes(&q),
                Ok(m) => total += m.blocks() * 512,
                Err(_) => {}
            }
        }
    }
    total
}

/// A sandbox's disk bounds every path it can write, bytes and inodes: the
/// probe wrote 2.8 GB and 118k files into the host's root filesystem from
/// a sandbox with `diskMib: 256`. Here a 64 MiB sandbox fills each of its
/// writable paths (the `host` image's workspace, /tmp, /root, /var, /etc
/// and logs; an imported image's whole overlay root) until ENOSPC, floods
/// one with empty files until its inodes run out, and uploads 100 MiB
/// through the file API (RESOURCE_EXHAUSTED); the host's filesystem loses
/// at most the disk's size, and a neighbour still writes.
#[tokio::test(flavor = "multi_thread")]
async fn escape_disk_and_inode_fill_of_every_writable_path() {
    disk_and_inode_fill(common::Level::Container("libcontainer")).await;
}

/// The same fills under gVisor: its writes reach the same size-limited
/// disk through runsc's file access, and stop at the same limits. (An
/// overlay root's /tmp was runsc's own tmpfs, in the sentry's memory:
/// filling it ended with the sentry killed by its memory cgroup.)
#[tokio::test(flavor = "multi_thread")]
async fn escape_disk_and_inode_fill_of_every_writable_path_under_gvisor() {
    disk_and_inode_fill(common::Level::Gvisor).await;
}

async fn disk_and_inode_fill(level: common::Level) {
    use talon_worker::host::HostOptions;
    let fill = std::fs::read(common::static_probe("fill")).unwrap();
    let env = level.host(HostOptions::default());
    // An imported image whose whole root is writable (overlay).
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("fill"), &fill).unwrap();
    std::fs::set_permissions(
        root.join("fill"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let archive = d.path().join("fill.tar");
    talon_worker::image::pack::pack(
        &root,
        &archive,
        talon_worker::image::pack::Format::Oci,
        &Default::default(),
    )
    .unwrap();
    env.host.images().import("fill", &archive).unwrap();

    let disk_mib = 64u64;
    let limit = disk_mib << 20;
    let mut neighbour = common::create(&env, &level.spec("host", (500, 64, 64)))
        .await
        .unwrap();
    for (image, bin, dirs) in [
        (
            "host",
            "/workspace/fill",
            "/workspace /tmp /root /var /etc /var/log/talon",
        ),
        ("fill", "/fill", "/ /tmp /workspace /var/log/talon"),
    ] {
        let mut spec = level.spec(image, (500, 128, 64));
        spec.resources.as_mut().unwrap().disk_mib = disk_mib as i64;
        let mut s = common::create(&env, &spec).await.unwrap();
        if image == "host" {
            s.put("fill", &fill, 0o755).await;
        }
        let before = allocated_bytes(&s.dir());
        let out = run(&mut s, &format!("{bin} bytes {dirs}")).await;
        let mut total = 0u64;
        for l in out.lines() {
            let (dir, rest) = l.split_once(" bytes=").unwrap();
            let (n, errno) = rest.split_once(" errno=").unwrap();
            assert_eq!(
                errno,
                libc::ENOSPC.to_string(),
                "{image}: {dir} stopped otherwise: {l}"
            );
            total += n.parse::<u64>().unwrap();
        }
        assert_eq!(
            out.lines().count(),
            dirs.split(' ').count(),
            "{image}: {out}"
        );
        assert!(
            total <= limit,
            "{image}: {total} bytes written under a {disk_mib} MiB disk"
        );
        let lost = allocated_bytes(&s.dir()).saturating_sub(before);
        assert!(
            lost <= limit + (8 << 20),
            "{image}: the host's filesystem lost {lost} bytes to a {disk_mib} MiB sandbox"
        );
        // The upload stops at the limit with a clear error.
        let data = vec![b'u'; 100 << 20];
        let e = upload(&mut s, "big.bin", &data)
            .await
            .expect_err("a 100 MiB upload fit");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{image}: {e:?}");
        assert!(e.message().contains("no space"), "{image}: {e:?}");
        // Free the bytes, then run out of inodes instead.
        run(&mut s, &format!("{bin} clean {dirs}")).await;

        let out = run(&mut s, &format!("{bin} inodes /tmp")).await;
        let rest = out
            .trim()
            .split_once(" inodes=")
            .unwrap_or_else(|| panic!("{image}: {out:?}"))
            .1;
        let (n, errno) = rest.split_once(" errno=").unwrap();
        let n: u64 = n.parse().unwrap();
        assert_eq!(errno, libc::ENOSPC.to_string(), "{image}: {out}");
        assert!(
            n <= (disk_mib << 20) / 16384,
            "{image}: {n} files on a {disk_mib} MiB disk"
        );
        // The neighbour is untouched.
        let (o, _, code) = neighbour
            .sh("head -c 1048576 /dev/zero > /workspace/n && echo ok")
            .await;
        assert_eq!((o.as_str(), code), ("ok\n", 0), "{image}");
        let dir = s.dir();
        env.host.delete(&s.id, 1).await.unwrap();
        assert!(!dir.exists());
    }
}

/// Runs a command line (words, no shell: the image may have none) in a
/// sandbox; its stdout.
async fn run(s: &mut common::Sandbox, line: &str) -> String {
    let mut st = s
        .agent
        .start_process(pb::StartProcessRequest {
            command: line.split(' ').map(String::from).collect(),

            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(m) = tokio::time::timeout(Duration::from_secs(120), st.message())
        .await
        .unwrap()
        .unwrap()
    {
        if let Some(pb::process_event::Event::Output(o)) = m.event.and_then(|e| e.event)
            && o.stream != 2
        {
            out.extend(o.data);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn upload(s: &mut common::Sandbox, path: &str, data: &[u8]) -> Result<(), tonic::Status> {
    use pb::write_file_request::Message as W;
    let mut msgs = vec![pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: path.into(),
            mode: 0,
            create_parents: false,
            no_overwrite: false,
            ..Default::default()
        })),
    }];
    for c in data.chunks(1 << 20) {
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
    s.agent.write_file(tokio_stream::iter(msgs)).await.map(drop)
}

/// A create that reaches the worker after the delete of the same sandbox
/// (commands run concurrently) is refused, not built: a sandbox nobody
/// knows would run on with its address and egress. A later generation
/// (the sandbox placed here again) is built.
#[tokio::test(flavor = "multi_thread")]
async fn escape_a_create_after_its_delete_builds_nothing() {
    let env = common::TestHost::new(talon_worker::host::HostOptions::default());
    let id = common::unique_id("r");
    let spec = common::spec("host", (100, 64, 32));
    env.host.delete(&id, 1).await.unwrap();
    let e = env.host.create(&id, 1, &spec).await.unwrap_err();
    assert!(e.to_string().contains("was deleted"), "{e:#}");
    assert!(env.host.held(&id).is_none());
    assert!(!env.data().join("sandboxes").join(&id).exists());
    assert!(env.host.held_records().is_empty());
    env.host.create(&id, 2, &spec).await.unwrap();
    assert_eq!(env.host.held_records().len(), 1);
    env.host.delete(&id, 2).await.unwrap();
}

/// Per-user kernel counters (inotify instances, POSIX message queue
/// bytes) are charged up the user-namespace tree to each namespace's
/// owner. A sandbox whose namespace host root owns shares root's budget
/// with every root process and every other such sandbox: one that fills
/// it left host root's `inotify_init1` and `mq_open` failing and a
/// neighbour's file watch refused. Each sandbox fills its own here, under
/// every level, and the host and a neighbour still get theirs.
#[tokio::test(flavor = "multi_thread")]
async fn escape_host_wide_kernel_counters_are_per_sandbox() {
    for level in common::levels() {
        let env = level.host(Default::default());
        let spec = level.spec("host", (1000, 256, 64));
        let mut hog = common::create(&env, &spec).await.unwrap();
        let mut neighbour = common::create(&env, &spec).await.unwrap();
        let fill = r#"
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 4096 and libc.inotify_init1(0) >= 0:
    n += 1
e = ctypes.get_errno()
q = 0
while q < 4096 and libc.mq_open(("/hog%d" % q).encode(), os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
    q += 1
print("full", n, e, q, ctypes.get_errno(), flush=True)
time.sleep(60)
"#;
        let (st, line) = holding(&mut hog, fill, Duration::from_secs(30)).await;
        assert!(line.starts_with("full"), "{level}: {line}");
        // Host root.
        // SAFETY: plain system calls on fds and names of our own.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_CLOEXEC);
            assert!(
                fd >= 0,
                "{level}: host root's inotify_init1 after the hog ({line}): {}",
                std::io::Error::last_os_error()
            );
            libc::close(fd);
            let name = c"/talon-escape-counters";
            let q = libc::mq_open(
                name.as_ptr(),
                libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                0o600,
                std::ptr::null_mut::<libc::mq_attr>(),
            );
            assert!(
                q >= 0,
                "{level}: host root's mq_open after the hog ({line}): {}",
                std::io::Error::last_os_error()
            );
            libc::mq_close(q);
            libc::mq_unlink(name.as_ptr());
        }
        // A neighbour: its own processes and the file API's watch.
        let (o, err, code) = neighbour
            .sh("python3 -c 'import ctypes, os; l = ctypes.CDLL(None, use_errno=True); print(l.inotify_init1(0) >= 0, l.mq_open(b\"/n\", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0 or ctypes.get_errno() == 38)'")
            .await;
        assert_eq!((o.as_str(), code), ("True True\n", 0), "{level}: {err}");
        // The open-file limit reaches the sandbox however the runtime
        // sets it (a container inherits it from the runtime's process).
        let (o, _, _) = neighbour
            .sh("python3 -c 'import resource; print(*resource.getrlimit(resource.RLIMIT_NOFILE))'")
            .await;
        let n = talon_worker::bundle::nofile_limit();
        assert_eq!(o, format!("{n} {n}\n"), "{level}");
        let mut w = neighbour
            .agent
            .watch_dir(pb::WatchDirRequest {
                path: "/workspace".into(),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{level}: a neighbour's watch: {e:?}"))
            .into_inner();
        tokio::time::sleep(Duration::from_millis(200)).await;
        neighbour.sh("echo x > /workspace/seen").await;
        let ev = tokio::time::timeout(Duration::from_secs(10), w.message())
            .await
            .unwrap_or_else(|_| panic!("{level}: a neighbour's watch saw nothing"))
            .unwrap_or_else(|e| panic!("{level}: a neighbour's watch: {e:?}"))
            .unwrap();
        assert_eq!(ev.path, "/workspace/seen", "{level}");
        drop(st);
    }
}

/// Starts a Python script that takes something and holds it, and waits
/// for the first line it prints (what it took); the process's stream, to
/// keep it running, and that line.
async fn holding(
    s: &mut common::Sandbox,
    script: &str,
    within: Duration,
) -> (tonic::Streaming<pb::StartProcessResponse>, String) {
    let mut st = s
        .agent
        .start_process(pb::StartProcessRequest {
            command: vec!["python3".into(), "-c".into(), script.into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while !String::from_utf8_lossy(&out).contains('\n') {
        let m = tokio::time::timeout(within, st.message())
            .await
            .unwrap_or_else(|_| panic!("{}: nothing printed: {out:?}", s.id))
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the holder ended: {out:?}", s.id));
        if let Some(pb::process_event::Event::Output(o)) = m.event.and_then(|e| e.event) {
            out.extend(o.data);
        }
    }
    (st, String::from_utf8_lossy(&out).into_owned())
}
