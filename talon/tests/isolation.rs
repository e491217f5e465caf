//! Isolation levels through a real server and its embedded worker: a
//! create names `gvisor` and runs under gVisor's kernel, the sandbox says
//! its level, a preview reaches a port in it; MICROVM is refused as offered by no worker, an unknown level
//! as invalid, and a level no connected worker offers names itself.
//! The file API leaves device nodes alone under both runtimes. Needs
//! root and the pinned runsc (scripts/install-runsc.sh).

mod common;
use common::*;
use talon_proto::v1 as pb;
use tonic::Code;

fn create(isolation: i32) -> pb::CreateSandboxRequest {
    pb::CreateSandboxRequest {
        sandbox: Some(pb::Sandbox {
            isolation,
            ..Default::default()
        }),
        wait_until_running: true,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_create_picks_its_isolation_and_an_unoffered_level_is_refused() {
    let runsc = talon_worker::testing::runsc();
    let s = Server::up_with(&["--runsc", &runsc.to_string_lossy()]).await;
    let t = tenant(&s, "iso").await;
    let mut c = s.as_(&t.developer).await;
    let mut procs = pb::process_service_client::ProcessServiceClient::with_interceptor(
        s.channel().await,
        bearer(&t.developer),
    );

    let g = c
        .sandboxes
        .create_sandbox(create(pb::Isolation::Gvisor as i32))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(g.isolation, pb::Isolation::Gvisor as i32);
    let (out, code) = proc_sh(
        &mut procs,
        &g.sandbox_id,
        "cat /proc/version; ls -l / >/dev/null && echo ok",
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let host = std::fs::read_to_string("/proc/version").unwrap();
    assert_ne!(out.lines().next().unwrap().trim(), host.trim(), "{out}");
    assert_eq!(
        get(&mut c, &g.sandbox_id).await.isolation,
        pb::Isolation::Gvisor as i32
    );
    // A preview of a port in it, through the gateway and the agent's tunnel.
    let (out, code) = proc_sh(
        &mut procs,
        &g.sandbox_id,
        "echo served > /workspace/p.txt; cd /workspace; nohup python3 -m http.server 8123 >/dev/null 2>&1 & \
         for i in $(seq 100); do python3 -c \"import socket; socket.create_connection(('127.0.0.1', 8123))\" 2>/dev/null && exit 0; sleep 0.1; done; exit 1",
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let r = reqwest::Client::new()
        .get(format!("{}/preview/{}/8123/p.txt", s.http, g.sandbox_id))
        .bearer_auth(&t.developer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "served\n");

    // Unspecified is a container, on the host's kernel.
    let d = c
        .sandboxes
        .create_sandbox(create(0))
        .await
        .unwrap()
        .into_inner()
        .sandbox
        .unwrap();
    assert_eq!(d.isolation, pb::Isolation::Container as i32);
    let (out, _) = proc_sh(&mut procs, &d.sandbox_id, "cat /proc/version").await;
    assert_eq!(out.trim(), host.trim());

    let e = c
        .sandboxes
        .create_sandbox(create(pb::Isolation::Microvm as i32))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("microvm"), "{e}");
    let e = c.sandboxes.create_sandbox(create(99)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e}");
    // The file API never replaces, moves or removes a device node, under
    // either runtime (gVisor's /dev nodes are no mounts: a rename over
    // /dev/null made it a regular file).
    let mut fs = files(s.channel().await, bearer(&t.developer));
    for id in [&g.sandbox_id, &d.sandbox_id] {
        use pb::write_file_request::Message as W;
        let msg = |m| pb::WriteFileRequest {
            sandbox_id: id.clone(),
            message: Some(m),
        };
        let header = W::Header(pb::WriteFileHeader {
            path: "/dev/null".into(),
            ..Default::default()
        });
        let msgs = vec![
            msg(header),
            msg(W::Data(b"x".to_vec())),
            msg(W::Finish(pb::WriteFileFinish { size: 1 })),
        ];
        let e = fs.write_file(tokio_stream::iter(msgs)).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{id}: {e}");
        let e = fs
            .move_path(pb::MovePathRequest {
                sandbox_id: id.clone(),
                source_path: "/workspace/p.txt".into(),
                destination_path: "/dev/full".into(),
                overwrite: true,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{id}: {e}");
        let e = fs
            .remove_path(pb::RemovePathRequest {
                sandbox_id: id.clone(),
                path: "/dev/zero".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{id}: {e}");
        let (out, code) = proc_sh(
            &mut procs,
            id,
            "test -c /dev/null && test -c /dev/full && test -c /dev/zero && echo devices",
        )
        .await;
        assert_eq!((out.as_str(), code), ("devices\n", 0), "{id}");
    }
    // A workload swapping a directory of its workspace and a symlink to
    // / by plain renames, while the API writes into that directory by
    // a workspace path (as root): nothing lands in /etc, under either
    // runtime (under gVisor the agent walks paths itself).
    for id in [&g.sandbox_id, &d.sandbox_id] {
        swap_race(&mut procs, &fs, id).await;
    }
    for id in [g.sandbox_id, d.sandbox_id] {
        c.sandboxes
            .delete_sandbox(pb::DeleteSandboxRequest { sandbox_id: id })
            .await
            .unwrap();
    }
    drop(s);

    // A platform whose worker has no runsc.
    let s = Server::up_with(&["--runsc", "none"]).await;
    let t = tenant(&s, "iso").await;
    let mut c = s.as_(&t.developer).await;
    let e = c
        .sandboxes
        .create_sandbox(create(pb::Isolation::Gvisor as i32))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("offers gvisor"), "{e}");
}

async fn swap_race(procs: &mut Procs, fs: &Fs, id: &str) {
    use pb::write_file_request::Message as W;
    // `d/etc/pwn`: through the link (to /) it would be /etc/pwn.
    let swapper = "mkdir -p /workspace/d/etc; chown -R user /workspace/d; end=$(($(date +%s) + 12)); \
        while [ $(date +%s) -lt $end ]; do \
          mv /workspace/d /workspace/d.real; ln -s / /workspace/d.link; \
          mv /workspace/d.link /workspace/d; mv /workspace/d /workspace/d.link; \
          mv /workspace/d.real /workspace/d; rm -f /workspace/d.link; \
        done";
    let race = proc_sh(procs, id, swapper);
    let writes = async {
        let mut tasks = Vec::new();
        for t in 0..4 {
            let mut fs = fs.clone();
            let id = id.to_string();
            tasks.push(tokio::spawn(async move {
                let (mut ok, mut refused) = (0, 0);
                for i in 0..150 {
                    let msg = |m| pb::WriteFileRequest {
                        sandbox_id: id.clone(),
                        message: Some(m),
                    };
                    let msgs = vec![
                        // Half by a workspace path as root, half by an
                        // absolute one as the sandbox's `user` (in-root
                        // resolution follows links: /etc is root's).
                        msg(W::Header(if i % 2 == 0 {
                            pb::WriteFileHeader {
                                path: format!("d/etc/pwn-{t}-{i}"),
                                ..Default::default()
                            }
                        } else {
                            pb::WriteFileHeader {
                                path: format!("/workspace/d/etc/pwn-{t}-{i}"),
                                user: "user".into(),
                                ..Default::default()
                            }
                        })),
                        msg(W::Data(b"x".to_vec())),
                        msg(W::Finish(pb::WriteFileFinish { size: 1 })),
                    ];
                    match fs.write_file(tokio_stream::iter(msgs)).await {
                        Ok(_) => ok += 1,
                        Err(_) => refused += 1,
                    }
                }
                (ok, refused)
            }));
        }
        let mut all = (0, 0);
        for t in tasks {
            let (a, b) = t.await.unwrap();
            all = (all.0 + a, all.1 + b);
        }
        all
    };
    let ((_, code), (ok, refused)) = tokio::join!(race, writes);
    assert_eq!(code, 0, "{id}: the swapper failed");
    let (out, code) = proc_sh(
        procs,
        id,
        "ls /etc | grep -c '^pwn-' || true; ls /workspace/d/etc /workspace/d.real/etc 2>/dev/null | grep -c '^pwn-' || true",
    )
    .await;
    assert_eq!(code, 0);
    let counts: Vec<&str> = out.lines().collect();
    println!("{id}: {ok} writes landed, {refused} refused during the swaps: {counts:?}");
    assert_eq!(
        counts.first(),
        Some(&"0"),
        "{id}: API writes landed in /etc"
    );
}
