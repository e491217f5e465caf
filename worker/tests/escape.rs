//! Escape tests: one per class of attack, each asserting that it fails.
//! They drive the worker's sandbox host directly (libcontainer through
//! `talon-oci`, the default adapter) and talk to the agent on the
//! sandbox's socket, as the worker does (see `common`). Root is required;
//! CI is root.

mod common;

use common::{agent_binary, sandbox};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;
use talon_proto::v1 as pb;

fn sha(path: &Path) -> String {
    hex(&Sha256::digest(std::fs::read(path).unwrap()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_init_binary_cannot_be_overwritten() {
    let mut s = sandbox((1000, 256, 256)).await;
    let sealed: Vec<PathBuf> = std::fs::read_dir(s.data.join("agent"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let before: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
    let agent_before = sha(&agent_binary());
    let (_, _, code) = s
        .sh("echo x > /proc/self/exe || true; echo x > /proc/1/exe; echo x > /.talon/agent")
        .await;
    assert_ne!(code, 0);
    let (_, _, code) = s.sh("cp /bin/true /.talon/agent").await;
    assert_ne!(code, 0, "the init binary is read-only");
    let after: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
    assert_eq!(before, after, "the sealed agent changed");
    assert_eq!(
        agent_before,
        sha(&agent_binary()),
        "the host agent binary changed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_no_inherited_fds() {
    let mut s = sandbox((1000, 256, 256)).await;
    // The listing opens one fd of its own (the directory); skip it.
    let (out, _, _) = s
        .sh("ls -l /proc/self/fd | awk 'NR>1 {print $9, $11}'")
        .await;
    let fds: Vec<&str> = out
        .lines()
        .filter(|l| !l.contains("/proc/"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(fds, vec!["0", "1", "2"], "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_masked_and_read_only_paths() {
    let mut s = sandbox((1000, 256, 256)).await;
    for p in [
        "/proc/kcore",
        "/proc/keys",
        "/proc/timer_list",
        "/proc/sched_debug",
        "/proc/acpi",
        "/proc/scsi",
        "/sys/firmware",
    ] {
        let (out, _, _) = s
            .sh(&format!(
                "if [ -d {p} ]; then ls -A {p}; else head -c 64 {p} 2>/dev/null; fi"
            ))
            .await;
        assert!(out.trim().is_empty(), "{p} is not masked: {out:?}");
    }
    for p in [
        "/proc/sys/kernel/hostname",
        "/proc/sysrq-trigger",
        "/proc/sys/vm/drop_caches",
    ] {
        let (_, _, code) = s.sh(&format!("echo 1 > {p}")).await;
        assert_ne!(code, 0, "{p} is writable");
    }
    let (_, _, code) = s.sh("touch /usr/bin/planted").await;
    assert_ne!(code, 0, "host /usr is writable");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_privileged_syscalls_fail() {
    let mut s = sandbox((1000, 256, 256)).await;
    let (_, _, code) = s.sh("mount -t tmpfs x /tmp").await;
    assert_ne!(code, 0, "mount");
    let (_, _, code) = s.sh("unshare -U true").await;
    assert_ne!(code, 0, "unshare -U");
    // keyctl(KEYCTL_GET_KEYRING_ID), bpf(BPF_PROG_LOAD), ptrace(PTRACE_ATTACH, 1), via libc.
    let py = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
fails = []
for name, nr, args in [("keyctl", 250, (0, -1, 0)), ("bpf", 321, (5, 0, 0)), ("ptrace", 101, (16, 1, 0))]:
    r = libc.syscall(nr, *args)
    fails.append(f"{name}={r}:{ctypes.get_errno()}")
print(" ".join(fails))
"#;
    let (out, err, code) = s
        .sh(&format!("python3 -c '{}'", py.replace('\'', "\"")))
        .await;
    assert_eq!(code, 0, "{err}");
    for part in out.split_whitespace() {
        let (name, rest) = part.split_once('=').unwrap();
        assert!(rest.starts_with("-1:"), "{name} succeeded: {out}");
        let errno: i32 = rest[3..].parse().unwrap();
        assert!(
            errno == libc::EPERM || errno == libc::ENOSYS,
            "{name} errno {errno}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_capabilities_and_no_new_privs() {
    let mut s = sandbox((1000, 256, 256)).await;
    let (out, _, _) = s
        .sh("grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp):' /proc/self/status")
        .await;
    let field = |k: &str| {
        out.lines()
            .find(|l| l.starts_with(k))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let bnd = u64::from_str_radix(&field("CapBnd:"), 16).unwrap();
    // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE NET_RAW SYS_CHROOT MKNOD AUDIT_WRITE SETFCAP
    let default: u64 = [0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31]
        .iter()
        .map(|b| 1u64 << b)
        .sum();
    assert_eq!(
        bnd & !default,
        0,
        "capabilities beyond the default set: {bnd:x}"
    );
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(field("Seccomp:"), "2");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_fork_bomb_and_memory_hog_stay_in_their_cgroup() {
    let mut s = sandbox((1000, 64, 64)).await;
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
    let mut bomb = s
        .agent
        .start_process(pb::StartProcessRequest {
            command: vec!["python3".into(), "-c".into(), hold.into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while !String::from_utf8_lossy(&out).contains('\n') {
        let m = tokio::time::timeout(Duration::from_secs(20), bomb.message())
            .await
            .expect("the holder never filled the pids")
            .unwrap()
            .expect("the holder's stream ended");
        if let Some(pb::process_event::Event::Output(o)) = m.event.unwrap().event {
            out.extend(o.data);
        }
    }
    let line = String::from_utf8_lossy(&out).into_owned();
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

#[tokio::test(flavor = "multi_thread")]
async fn escape_fs_api_stays_inside() {
    let mut s = sandbox((1000, 256, 256)).await;
    let ws = s.data.join("sandboxes").join(&s.id).join("disk/workspace");
    let canary = s.data.join("canary");
    std::fs::write(&canary, b"canary").unwrap();
    // Prepared inside the sandbox by its own root: links to the outside.
    s.sh("ln -s / /workspace/root; ln -s /etc/passwd /workspace/pw; mkfifo /workspace/fifo")
        .await;
    let read = |path: &str| pb::ReadFileRequest {
        sandbox_id: String::new(),
        path: path.into(),
        offset: 0,
        length: 0,
    };
    for path in ["../../etc/passwd", "root/etc/passwd", "pw", "fifo", "root"] {
        let r = s.agent.read_file(read(path)).await;
        let r = match r {
            Ok(resp) => resp.into_inner().message().await.map(|_| ()),
            Err(e) => Err(e),
        };
        assert!(r.is_err(), "{path} was readable");
    }
    // A hardlink to a file outside cannot even be made from inside.
    let (_, _, code) = s.sh("ln /.talon/agent /workspace/hl").await;
    assert_ne!(code, 0);
    // A symlink swapped in a loop while the API writes: nothing lands outside.
    let swapper = tokio::spawn({
        let mut agent = s.agent.clone();
        async move {
            let req = pb::StartProcessRequest {
                command: vec!["sh".into(), "-c".into(), "mkdir -p /workspace/d; i=0; while [ $i -lt 3000 ]; do rm -rf /workspace/d; ln -s / /workspace/d; rm -f /workspace/d; mkdir /workspace/d; i=$((i+1)); done".into()],
                ..Default::default()
            };
            let mut st = agent.start_process(req).await.unwrap().into_inner();
            while st.message().await.unwrap().is_some() {}
        }
    });
    use pb::write_file_request::Message as W;
    for i in 0..1000 {
        let msgs = vec![
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Header(pb::WriteFileHeader {
                    path: format!("d/tmp/x{i}"),
                    mode: 0,
                    create_parents: true,
                    no_overwrite: false,
                })),
            },
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Data(b"x".to_vec())),
            },
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Finish(pb::WriteFileFinish { size: 1 })),
            },
        ];
        let _ = s.agent.write_file(tokio_stream::iter(msgs)).await;
    }
    swapper.await.unwrap();
    assert_eq!(std::fs::read(&canary).unwrap(), b"canary");
    let root_tmp = s.data.join("sandboxes").join(&s.id).join("disk/tmp");
    let leaked: Vec<_> = std::fs::read_dir(&root_tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('x'))
        .collect();
    assert!(
        leaked.is_empty(),
        "writes escaped through the swapped symlink into the sandbox's /tmp"
    );
    assert!(
        !Path::new("/tmp/x0").exists(),
        "a write reached the host's /tmp"
    );
    assert!(ws.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn files_100_mib_round_trip_with_the_same_sha256() {
    let mut s = sandbox((2000, 512, 256)).await;
    let data: Vec<u8> = (0..100u32 * 1024 * 1024)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let want = hex(&Sha256::digest(&data));
    use pb::write_file_request::Message as W;
    let mut msgs = vec![pb::WriteFileRequest {
        sandbox_id: String::new(),
        message: Some(W::Header(pb::WriteFileHeader {
            path: "big.bin".into(),
            mode: 0,
            create_parents: false,
            no_overwrite: false,
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
    let info = s
        .agent
        .write_file(tokio_stream::iter(msgs))
        .await
        .unwrap()
        .into_inner()
        .info
        .unwrap();
    assert_eq!(info.size, data.len() as i64);
    let mut r = s
        .agent
        .read_file(pb::ReadFileRequest {
            sandbox_id: String::new(),
            path: "big.bin".into(),
            offset: 0,
            length: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut h = Sha256::new();
    while let Some(c) = r.message().await.unwrap() {
        h.update(&c.data);
    }
    assert_eq!(hex(&h.finalize()), want);
    let (out, _, _) = s.sh("sha256sum /workspace/big.bin").await;
    assert!(out.starts_with(&want), "inside the sandbox: {out}");
}

/// An image whose /proc is a symlink (to `/`, here) would have the runtime
/// mount procfs over a path the image chose; it must not start.
#[tokio::test(flavor = "multi_thread")]
async fn escape_an_image_with_a_symlinked_proc_refuses_to_start() {
    let env = common::TestHost::new(talon_worker::host::HostOptions::default());
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::os::unix::fs::symlink("/", root.join("proc")).unwrap();
    let archive = d.path().join("evil.tar");
    talon_worker::image::pack::pack(
        &root,
        &archive,
        talon_worker::image::pack::Format::Oci,
        &Default::default(),
    )
    .unwrap();
    env.host.images().import("evil", &archive).unwrap();
    let e = common::create(&env, &common::spec("evil", (1000, 256, 64)))
        .await
        .err()
        .expect("a symlinked /proc started");
    assert!(e.to_string().contains("symlink"), "{e:#}");
    // Nothing of it stays mounted.
    assert!(talon_worker::rootfs::mounts_under(&env.data().join("sandboxes")).is_empty());
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

/// No namespace can be made or entered from a sandbox, by any raw
/// syscall with any namespace flag, under any runtime adapter: clone with
/// each flag (libcontainer 0.7 once read the clone rule's mask as 0 and
/// let `clone(CLONE_NEWUSER|CLONE_NEWNET)` through), clone3, unshare and
/// setns; and no vsock socket (the VM's host channel). A plain clone and
/// a unix socket still work.
#[tokio::test(flavor = "multi_thread")]
async fn escape_namespace_creation_by_raw_syscall_under_every_adapter() {
    let probe = std::fs::read(common::static_probe("nsprobe")).unwrap();
    for rt in common::adapters() {
        let env = common::TestHost::with_runtime(talon_worker::host::HostOptions::default(), rt);
        let mut s = common::create(&env, &common::spec("host", (1000, 256, 256)))
            .await
            .unwrap_or_else(|e| panic!("{rt}: {e:#}"));
        s.put("nsprobe", &probe, 0o755).await;
        let (out, err, code) = s.sh("/workspace/nsprobe").await;
        assert_eq!(code, 0, "{rt}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines.len(),
            36,
            "{rt}: the probe did not finish:\n{out}{err}"
        );
        for l in &lines {
            let controls = ["clone plain ", "socket AF_UNIX "];
            if controls.iter().any(|c| l.starts_with(c)) {
                assert!(l.ends_with(" ok"), "{rt}: control failed: {l}");
                continue;
            }
            let errno: i32 = l
                .rsplit_once("errno=")
                .unwrap_or_else(|| panic!("{rt}: allowed: {l}\n{out}"))
                .1
                .parse()
                .unwrap();
            assert!(
                [libc::EPERM, libc::ENOSYS].contains(&errno),
                "{rt}: {l} (EPERM or ENOSYS expected)"
            );
        }
    }
}

/// Nothing a sandbox can write on the host is dialled, opened or followed
/// by the worker, across a worker restart and a stop/start: the probe's
/// symlink at /run/talon/agent.sock (then a writable bind of the host
/// directory the worker dialled by path) sent sandbox A's calls to tenant
/// B's agent after a restart. Here A plants links to B's socket and to a
/// host file under every name in every directory it can write; the
/// restarted worker, its data plane and a stopped-and-started A still
/// reach A's agent only, and a socket that is not A's init's is refused.
#[tokio::test(flavor = "multi_thread")]
async fn escape_sandbox_writable_paths_are_not_followed_across_a_restart() {
    use talon_worker::host::HostOptions;
    let env = common::TestHost::new(HostOptions::default());
    let spec = common::spec("host", (500, 128, 64));
    let mut a = common::create(&env, &spec).await.unwrap();
    let mut b = common::create(&env, &spec).await.unwrap();
    b.sh("echo tenant-b > /workspace/secret").await;
    a.sh("echo tenant-a > /workspace/mine").await;
    let sandboxes = env.data().join("sandboxes");
    let b_sock = sandboxes.join(&b.id).join("agent.sock");
    let canary = env.data().join("canary");
    std::fs::write(&canary, b"canary").unwrap();
    let names = "agent.sock agent.log runtime.log config.json state.json secret resolv.conf hosts hostname canary";
    let (out, _, _) = a
        .sh(&format!(
            "for d in /workspace /tmp /root /var /var/log/talon /etc /run/talon /run/secrets; do \
               mkdir -p $d 2>/dev/null; for n in {names}; do rm -rf $d/$n 2>/dev/null; \
               ln -sfn {b} $d/$n 2>/dev/null && echo planted $d/$n; done; \
               ln -sfn {c} $d/canary 2>/dev/null; done; ls {dir} 2>&1",
            b = b_sock.display(),
            c = canary.display(),
            dir = sandboxes.join(&a.id).display()
        ))
        .await;
    assert!(out.contains("planted /workspace/agent.sock"), "{out}");
    assert!(
        out.contains("No such file"),
        "the sandbox sees its host directory: {out}"
    );
    let (out, _, _) = a.sh("ls -A /run/talon 2>&1; ls -A /run 2>&1").await;
    assert!(
        !out.contains("agent.sock"),
        "an agent socket is visible inside: {out}"
    );

    // The worker restarts: a new host on the same data directory.
    let host = env.reopen(HostOptions::default());
    let cat = "cat /workspace/mine /workspace/secret 2>&1";
    let mut agent = host.agent(&a.id).await.unwrap();
    let (out, _, _) = common::sh(&mut agent, cat).await;
    assert!(
        out.starts_with("tenant-a\n") && !out.contains("tenant-b"),
        "{out}"
    );

    // Its data plane, as the server reaches it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(talon_worker::dataplane::serve(
        listener,
        host.clone(),
        "tok".into(),
        0,
    ));
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let id = a.id.clone();
    let mut via_plane = talon_proto::talon::agent::v1::sandbox_agent_service_client::SandboxAgentServiceClient::with_interceptor(
        channel,
        move |mut r: tonic::Request<()>| {
            let md = r.metadata_mut();
            md.insert("authorization", "Bearer tok".parse().unwrap());
            md.insert(talon_worker::dataplane::SANDBOX_HEADER, id.parse().unwrap());
            md.insert(talon_worker::dataplane::GENERATION_HEADER, "1".parse().unwrap());
            Ok(r)
        },
    );
    let mut st = via_plane
        .start_process(pb::StartProcessRequest {
            command: vec!["sh".into(), "-c".into(), cat.into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(m) = st.message().await.unwrap() {
        if let Some(pb::process_event::Event::Output(o)) = m.event.and_then(|e| e.event) {
            out.extend(o.data);
        }
    }
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.starts_with("tenant-a\n") && !out.contains("tenant-b"),
        "data plane: {out}"
    );

    // Stopped and started again by the restarted worker.
    host.stop(&a.id, 1).await.unwrap();
    host.start(&a.id, 1, None).await.unwrap();

    let mut agent = host.agent(&a.id).await.unwrap();
    let (out, _, _) = common::sh(&mut agent, cat).await;
    assert!(
        out.starts_with("tenant-a\n") && !out.contains("tenant-b"),
        "{out}"
    );

    // Even a socket at A's own path is refused unless A's init listens.
    let a_sock = sandboxes.join(&a.id).join("agent.sock");
    std::fs::remove_file(&a_sock).unwrap();
    let impostor = std::os::unix::net::UnixListener::bind(&a_sock).unwrap();
    let e = host
        .agent(&a.id)
        .await
        .expect_err("an impostor was trusted");
    assert!(
        format!("{e:#}").contains("not by the sandbox's init"),
        "{e:#}"
    );
    drop(impostor);
    std::fs::remove_file(&a_sock).unwrap();
    std::os::unix::fs::symlink(&b_sock, &a_sock).unwrap();
    assert!(
        host.agent(&a.id).await.is_err(),
        "a symlink to B's socket was followed"
    );

    assert_eq!(std::fs::read(&canary).unwrap(), b"canary");
    let mut bagent = host.agent(&b.id).await.unwrap();
    let (out, _, _) = common::sh(&mut bagent, "cat /workspace/secret").await;
    assert_eq!(out, "tenant-b\n");
}

/// The agent (PID 1) is out of the workload's reach: not dumpable, so
/// /proc/1/mem, /proc/1/environ and its fds are closed to it; and its
/// stdio is /dev/null, never a host file (the probe read the bundle's
/// runtime.log through /proc/1/fd/1: the CVE-2024-21626 family). Under
/// every adapter.
#[tokio::test(flavor = "multi_thread")]
async fn escape_proc_1_is_closed_to_the_workload() {
    for rt in common::adapters() {
        let env = common::TestHost::with_runtime(talon_worker::host::HostOptions::default(), rt);
        let mut s = common::create(&env, &common::spec("host", (500, 128, 64)))
            .await
            .unwrap_or_else(|e| panic!("{rt}: {e:#}"));
        let (out, _, _) = s
            .sh("for f in mem environ; do if head -c1 /proc/1/$f >/dev/null 2>&1; then echo $f readable; fi; \
                 if ( : > /proc/1/$f ) 2>/dev/null; then echo $f writable; fi; done; \
                 ls -l /proc/1/fd/ 2>/dev/null | grep -- '->' ; \
                 for n in 0 1 2 3; do head -c1 /proc/1/fd/$n >/dev/null 2>&1 && echo fd$n readable; done; \
                 grep -E '^(TracerPid)' /proc/1/status; true")
            .await;
        for bad in [
            "mem readable",
            "mem writable",
            "environ readable",
            "->",
            "fd1 readable",
            "fd2 readable",
        ] {
            assert!(
                !out.contains(bad),
                "{rt}: /proc/1 is open to the workload ({bad}):\n{out}"
            );
        }
        // The host side of the same question: what the init holds open.
        let pid = env.host.held(&s.id).unwrap().init.unwrap().0;
        let bundle = s.dir().join("bundle");
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
        {
            let target = std::fs::read_link(fd.path()).unwrap();
            assert!(
                !target.starts_with(&bundle),
                "{rt}: the agent holds a host file open: {} -> {}",
                fd.path().display(),
                target.display()
            );
        }
        let stdio: Vec<_> = (0..2)
            .map(|n| std::fs::read_link(format!("/proc/{pid}/fd/{n}")).unwrap())
            .collect();
        assert!(
            stdio.iter().all(|t| t == Path::new("/dev/null")),
            "{rt}: {stdio:?}"
        );
    }
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
    use talon_worker::host::HostOptions;
    let fill = std::fs::read(common::static_probe("fill")).unwrap();
    let env = common::TestHost::new(HostOptions::default());
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
    let mut neighbour = common::create(&env, &common::spec("host", (500, 64, 64)))
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
        let mut spec = common::spec(image, (500, 128, 64));
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
