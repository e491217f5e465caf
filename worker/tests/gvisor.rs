//! Sandboxes at the `gvisor` isolation level: runsc (systrap) runs the
//! same bundle, the agent binds its socket through runsc's gofer, and
//! processes, files (as a user too), pause and delete work as they do
//! in a container.

mod common;
use common::*;
use talon_proto::v1 as pb;

fn gvisor_spec() -> talon_proto::talon::worker::v1::SandboxSpec {
    let mut s = spec("host", (500, 256, 64));
    s.isolation = pb::Isolation::Gvisor as i32;
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gvisor_sandbox_runs_processes_and_files_under_its_own_kernel() {
    let env = TestHost::with_gvisor(Default::default());
    let mut s = create(&env, &gvisor_spec()).await.unwrap();
    // gVisor's kernel answers, not the host's.
    let (out, _, code) = s
        .sh("cat /proc/version; id -u; ls -l / >/dev/null && echo listed")
        .await;
    assert_eq!(code, 0, "{out}");
    let host = std::fs::read_to_string("/proc/version").unwrap();
    let mut lines = out.lines();
    assert_ne!(lines.next().unwrap().trim(), host.trim(), "{out}");
    assert_eq!(lines.next(), Some("0"));
    assert_eq!(lines.next(), Some("listed"));
    // Files through the agent, as root and as the sandbox's user.
    let (out, _, code) = s
        .sh("echo hi > /workspace/a && chown user /workspace && stat -c %U /workspace/a")
        .await;
    assert_eq!((out.as_str(), code), ("root\n", 0));
    let r = s
        .agent
        .read_file(pb::ReadFileRequest {
            path: "a".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.data, b"hi\n");
    // A file call as the user (the agent switches its thread's effective
    // ids: gVisor has no setfsuid): the user's permissions and ownership.
    use pb::write_file_request::Message as W;
    let write_as = |path: &str| {
        vec![
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Header(pb::WriteFileHeader {
                    path: path.into(),
                    user: "user".into(),
                    ..Default::default()
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
        ]
    };
    s.agent
        .write_file(tokio_stream::iter(write_as("/home/user/by-api")))
        .await
        .unwrap();
    let e = s
        .agent
        .write_file(tokio_stream::iter(write_as("/root/by-api")))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e}");
    let (out, _, _) = s.sh("stat -c %U /home/user/by-api; id -u").await;
    assert_eq!(out, "user\n0\n", "the agent is root again");
    let (_, _, code) = sh_as(&mut s.agent, "user", "echo mine > /workspace/b").await;
    assert_eq!(code, 0);
    let (out, _, _) = s.sh("stat -c %U /workspace/b").await;
    assert_eq!(out, "user\n");
    // A snapshot of it (frozen through runsc) starts another gVisor sandbox
    // with its files, under its own name.
    let (snap, _) = env
        .host
        .snapshot(&s.id, 1, "snap:gv", 1 << 30)
        .await
        .unwrap();
    assert!(snap.host_root, "{snap:?}");
    let mut from = gvisor_spec();
    from.image = "snap:gv".into();
    let mut f = create(&env, &from).await.unwrap();
    let (out, err, code) = f.sh("cat /workspace/a /workspace/b; hostname").await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("hi\nmine\n{}\n", f.id));
    let fid = f.id.clone();
    env.host.delete(&fid, 1).await.unwrap();
    drop(f);
    // Pause and resume through runsc.
    s.env.host.pause(&s.id, 1).await.unwrap();
    s.env.host.resume(&s.id, 1).await.unwrap();
    let (out, _, _) = s.sh("echo back").await;
    assert_eq!(out, "back\n");
    // Deleted: nothing of it is left in runsc's state.
    let id = s.id.clone();
    env.host.delete(&id, 1).await.unwrap();
    drop(s);
    let left: Vec<_> = std::fs::read_dir(env.data().join("runsc-state"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "runsc state left: {left:?}");
}

/// A worker without runsc refuses the level, saying so.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_without_runsc_refuses_gvisor() {
    let env = TestHost::new(Default::default());
    let e = create(&env, &gvisor_spec()).await.err().expect("refused");
    assert!(e.to_string().contains("does not offer gvisor"), "{e:#}");
}

/// With the worker's network: a gVisor sandbox gets its link before runsc
/// starts (its netstack takes the links it finds then) and reaches the
/// worker's resolver through it; under `deny` it has loopback only.
#[tokio::test(flavor = "multi_thread")]
async fn a_gvisor_sandbox_is_on_the_network_its_policy_allows() {
    use talon_worker::net::NetOptions;
    let env = TestHost::with_gvisor(Default::default());
    let net = env
        .host
        .enable_network(NetOptions {
            bridge: "tlngv0".into(),
            cidr: "10.86.0.0/24".parse().unwrap(),
            dns_upstream: Some("127.0.0.1:53".parse().unwrap()),
            ..Default::default()
        })
        .await
        .unwrap();
    // A DNS question to the sandbox's nameserver: any reply is an answer
    // (the upstream here answers nothing; the worker's resolver does).
    const ASK: &str = r#"python3 -c '
import socket
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")][0]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(8)
q = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")
try:
    s.sendto(q, (ns, 53)); d, _ = s.recvfrom(512); print("answered" if d[:2] == q[:2] else "garbled")
except OSError as e:
    print("no answer:", e)
'; grep -c eth0 /proc/net/dev"#;
    let mut open = gvisor_spec();
    open.network_policy = Some(pb::NetworkPolicy {
        mode: pb::EgressMode::Open as i32,
        ..Default::default()
    });
    let mut s = create(&env, &open).await.unwrap();
    let (out, err, _) = s.sh(ASK).await;
    assert_eq!(out, "answered\n1\n", "{err}");
    let id = s.id.clone();
    env.host.delete(&id, 1).await.unwrap();
    drop(s);

    let mut deny = gvisor_spec();
    deny.network_policy = Some(pb::NetworkPolicy {
        mode: pb::EgressMode::Deny as i32,
        ..Default::default()
    });
    let mut s = create(&env, &deny).await.unwrap();
    let (out, _, _) = s.sh(ASK).await;
    assert!(
        out.starts_with("no answer") && out.ends_with("\n0\n"),
        "{out}"
    );
    let id = s.id.clone();
    env.host.delete(&id, 1).await.unwrap();
    drop(s);
    net.remove().await;
}

/// Under gVisor the sandbox's root can write the directory its agent binds
/// in (through runsc's gofer): a link planted there in place of the socket,
/// to another sandbox's agent, is never followed by the worker, and a stop
/// and start makes the directory afresh.
#[tokio::test(flavor = "multi_thread")]
async fn a_gvisor_sandbox_cannot_point_the_worker_at_another_socket() {
    let env = TestHost::with_gvisor(Default::default());
    let mut a = create(&env, &gvisor_spec()).await.unwrap();
    let mut b = create(&env, &spec("host", (500, 128, 64))).await.unwrap();
    b.sh("echo tenant-b > /workspace/secret").await;
    let sandboxes = env.data().join("sandboxes");
    let b_sock = sandboxes.join(&b.id).join("agent.sock");
    let (out, err, _) = a
        .sh(&format!(
            "rm -f /.talon/run/agent.sock && ln -s {} /.talon/run/agent.sock && echo planted",
            b_sock.display()
        ))
        .await;
    assert_eq!(out, "planted\n", "{err}");
    let planted = sandboxes.join(&a.id).join("agent/agent.sock");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is on the host"
    );
    let e = env
        .host
        .agent(&a.id)
        .await
        .expect_err("the link was followed");
    assert!(format!("{e:#}").contains("not a socket"), "{e:#}");
    // Stopped and started: its directory afresh, its own agent again.
    env.host.stop(&a.id, 1).await.unwrap();
    env.host.start(&a.id, 1, None).await.unwrap();
    let mut agent = env.host.agent(&a.id).await.unwrap();
    let (out, _, _) = sh(&mut agent, "cat /workspace/secret 2>&1; echo ok").await;
    assert!(!out.contains("tenant-b") && out.ends_with("ok\n"), "{out}");
    let (out, _, _) = b.sh("cat /workspace/secret").await;
    assert_eq!(out, "tenant-b\n");
}

/// gVisor sandboxes have pools of their own: a create of each level takes
/// a pooled sandbox of that level only, and a claimed gVisor sandbox is the
/// one asked for (its id as hostname, set inside gVisor's kernel; its env
/// and secrets).
#[tokio::test(flavor = "multi_thread")]
async fn gvisor_sandboxes_have_pools_of_their_own() {
    use std::time::Duration;
    let env = TestHost::with_gvisor(talon_worker::host::HostOptions {
        pool: talon_worker::pool::PoolOptions {
            size: 1,
            refill_interval: Duration::from_millis(10),
            ..Default::default()
        },
        ..Default::default()
    });
    let refill = tokio::spawn(env.host.clone().refill());
    let container = spec("host", (500, 256, 64));
    let mut gvisor = gvisor_spec();
    gvisor.resources = container.resources;
    let mut made = Vec::new();
    // One cold create of each level makes the pool want its shape.
    for s in [&container, &gvisor] {
        let id = unique_id("p");
        env.host.create(&id, 1, s).await.unwrap();
        made.push(id);
    }
    for _ in 0..600 {
        if env.host.pool().stats().ready >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(env.host.pool().stats().ready, 2, "one pooled per level");
    let mut s = gvisor.clone();
    s.env.insert("FOO".into(), "bar".into());
    s.secret_files.insert("token".into(), b"s3cret".to_vec());
    let id = unique_id("p");
    env.host.create(&id, 1, &s).await.unwrap();
    made.push(id.clone());
    assert_eq!(env.host.pool().stats().hits, 1);
    let held = env.host.held(&id).unwrap();
    assert!(held.container.is_some(), "it was claimed from the pool");
    let mut agent = env.host.agent(&id).await.unwrap();
    let (out, err, code) = sh(
        &mut agent,
        "hostname; echo $FOO; cat /run/secrets/token; echo; grep -c gvisor /proc/version",
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{id}\nbar\ns3cret\n1\n"));
    refill.abort();
    for id in made {
        env.host.delete(&id, 1).await.unwrap();
    }
}

/// Watching a directory works under gVisor: its inotify sees what the
/// sandbox's processes and the file API change, in subdirectories made
/// after the watch began too.
#[tokio::test(flavor = "multi_thread")]
async fn a_gvisor_sandbox_watches_its_files() {
    let env = TestHost::with_gvisor(Default::default());
    let mut s = create(&env, &gvisor_spec()).await.unwrap();
    let mut w = s
        .agent
        .watch_dir(pb::WatchDirRequest {
            recursive: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (_, err, code) = s
        .sh("echo x > /workspace/new.txt; mkdir /workspace/sub; sleep 0.3; echo y > /workspace/sub/deep.txt")
        .await;
    assert_eq!(code, 0, "{err}");
    s.put("api.txt", b"z", 0).await;
    let mut seen = Vec::new();
    let want = [
        ("/workspace/new.txt", pb::FileEventType::Create),
        ("/workspace/sub", pb::FileEventType::Create),
        ("/workspace/sub/deep.txt", pb::FileEventType::Create),
        ("/workspace/api.txt", pb::FileEventType::Write),
    ];
    while !want
        .iter()
        .all(|(p, t)| seen.contains(&(p.to_string(), *t as i32)))
    {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(10), w.message())
            .await
            .unwrap_or_else(|_| panic!("no more events; seen {seen:?}"))
            .unwrap()
            .expect("the watch ended");
        assert!(!ev.path.contains(".talon-write-"), "{ev:?}");
        seen.push((ev.path, ev.r#type));
    }
}
