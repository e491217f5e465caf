//! Escape tests, paths: the file API stays inside the sandbox, images
//! with a symlinked /proc, and sandbox-writable paths the host must never
//! follow, across a worker restart. Root is required; CI is root.

mod common;

use common::{hex, sandbox};
use sha2::{Digest, Sha256};
use std::path::Path;
use talon_proto::v1 as pb;

#[tokio::test(flavor = "multi_thread")]
async fn escape_fs_api_stays_inside() {
    fs_api_cases(sandbox((1000, 256, 256)).await, 1000).await;
}

/// The same under gVisor, where the kernel has no openat2 and the agent
/// walks the paths itself: the swapped symlink races its walk (fewer
/// rounds: each costs gVisor several times more).
#[tokio::test(flavor = "multi_thread")]
async fn escape_fs_api_stays_inside_under_gvisor() {
    let env = common::TestHost::with_gvisor(Default::default());
    let mut spec = common::spec("host", (1000, 256, 256));
    spec.isolation = pb::Isolation::Gvisor as i32;
    fs_api_cases(common::create(&env, &spec).await.unwrap(), 300).await;
}

/// `writes` racing writes against three times as many symlink swaps.
async fn fs_api_cases(mut s: common::Sandbox, writes: usize) {
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
        ..Default::default()
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
                command: vec![
                    "sh".into(),
                    "-c".into(),
                    format!(
                        "mkdir -p /workspace/d; i=0; while [ $i -lt {} ]; do rm -rf /workspace/d; ln -s / /workspace/d; rm -f /workspace/d; mkdir /workspace/d; i=$((i+1)); done",
                        writes * 3
                    ),
                ],
                ..Default::default()
            };
            let mut st = agent.start_process(req).await.unwrap().into_inner();
            while st.message().await.unwrap().is_some() {}
        }
    });
    use pb::write_file_request::Message as W;
    for i in 0..writes {
        let msgs = vec![
            pb::WriteFileRequest {
                sandbox_id: String::new(),
                message: Some(W::Header(pb::WriteFileHeader {
                    path: format!("d/tmp/x{i}"),
                    mode: 0,
                    create_parents: true,
                    no_overwrite: false,
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
            ..Default::default()
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
        Default::default(),
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
