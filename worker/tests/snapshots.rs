//! Filesystem snapshots on real sandboxes: a sandbox's writable root and
//! workspace copied into the image store while it is frozen, and new
//! sandboxes started from the copy. Each fork has what the source had,
//! owned as it was, and shares no writable byte with the source or with
//! another fork; the snapshot outlives its source and a worker restart.
//! Root is required; CI is root.

mod common;

use common::{TestHost, create, spec, unique_id};
use std::path::PathBuf;
use talon_worker::host::{HostOptions, code_of};
use talon_worker::image::pack::{Format, PackOptions, pack};

fn debian_archive() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("snapshot-archive");
    std::fs::create_dir_all(&d).unwrap();
    let oci = d.join("debian-oci.tar");
    let opts = PackOptions {
        reference: "debian:bookworm".into(),
        env: vec![],
        working_dir: String::new(),
    };
    pack(
        &talon_worker::testing::debian_rootfs(),
        &oci,
        Format::Oci,
        &opts,
    )
    .unwrap();
    oci
}

const SETUP: &str = "set -e
echo source > /workspace/data.txt
mkdir -p /workspace/deep/er && echo nested > /workspace/deep/er/f
ln /workspace/data.txt /workspace/hardlink
ln -s data.txt /workspace/link
printf '#!/bin/sh\\necho tool-ran\\n' > /usr/local/bin/tool && chmod 755 /usr/local/bin/tool
rm /usr/bin/tail
useradd -m alice && su alice -c 'echo hers > ~/note'
chown alice /workspace/deep";

/// What each fork must see: the source's files, links, owners, the
/// package under /usr/local, the deletion from the image's layer.
const CHECK: &str = "cat /workspace/data.txt /workspace/deep/er/f; readlink /workspace/link
stat -c '%h %U' /workspace/hardlink /workspace/deep; tool; cat /home/alice/note
ls /usr/bin/tail 2>&1 | grep -c 'No such'";
const SEEN: &str = "source\nnested\ndata.txt\n2 root\n3 alice\ntool-ran\nhers\n1\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_forks_into_independent_sandboxes_and_outlives_its_source() {
    let env = TestHost::new(HostOptions::default());
    env.host
        .images()
        .import("debian", &debian_archive())
        .unwrap();
    let mut src = create(&env, &spec("debian", (1000, 256, 256)))
        .await
        .unwrap();
    let (_, err, code) = src.sh(SETUP).await;
    assert_eq!(code, 0, "{err}");

    let t = std::time::Instant::now();
    let (snap, frozen) = env
        .host
        .snapshot(&src.id, 1, "snap:one", 1 << 30)
        .await
        .unwrap();
    println!(
        "snapshot of a running sandbox: {:?}, frozen {frozen:?}",
        t.elapsed()
    );
    assert!(frozen > std::time::Duration::ZERO);
    assert_eq!(
        snap.layers.len(),
        2,
        "the image's layer and the root's upper"
    );
    assert_eq!(snap.seeds.len(), 1, "{:?}", snap.seeds);
    // The source runs on, thawed.
    let (out, _, code) = src.sh("cat /workspace/data.txt").await;
    assert_eq!((out.as_str(), code), ("source\n", 0));

    // Refusals: a taken name, a bad name, a budget it exceeds.
    let e = env
        .host
        .snapshot(&src.id, 1, "snap:one", 1 << 30)
        .await
        .unwrap_err();
    assert_eq!(code_of(&e), tonic::Code::AlreadyExists, "{e}");
    let e = env
        .host
        .snapshot(&src.id, 1, "host", 1 << 30)
        .await
        .unwrap_err();
    assert_eq!(code_of(&e), tonic::Code::InvalidArgument, "{e}");
    let e = env
        .host
        .snapshot(&src.id, 1, "snap:small", 10)
        .await
        .unwrap_err();
    assert_eq!(code_of(&e), tonic::Code::ResourceExhausted, "{e}");
    assert!(env.host.images().get("snap:small").is_none());
    let e = env
        .host
        .snapshot(&src.id, 2, "snap:stale", 1 << 30)
        .await
        .unwrap_err();
    assert_eq!(code_of(&e), tonic::Code::Aborted, "{e}");

    let mut forks = Vec::new();
    for _ in 0..2 {
        let mut f = create(&env, &spec("snap:one", (1000, 256, 256)))
            .await
            .unwrap();
        let (out, err, code) = f.sh(CHECK).await;
        assert_eq!((out.as_str(), code), (SEEN, 0), "{err}");
        forks.push(f);
    }
    // Writes in one are not seen in another, nor in the source.
    let (_, err, code) = forks[0]
        .sh("echo fork0 > /workspace/data.txt; echo x > /usr/local/bin/tool; touch /workspace/new")
        .await;
    assert_eq!(code, 0, "{err}");
    for s in [&mut forks[1], &mut src] {
        let (out, _, _) = s
            .sh("cat /workspace/data.txt; tool; ls /workspace/new 2>&1 | grep -c 'No such'")
            .await;
        assert_eq!(out, "source\ntool-ran\n1\n");
    }

    // A paused sandbox is snapshotted as it is, and stays paused.
    env.host.pause(&forks[0].id, 1).await.unwrap();
    let (_, frozen) = env
        .host
        .snapshot(&forks[0].id, 1, "snap:paused", 1 << 30)
        .await
        .unwrap();
    assert_eq!(frozen, std::time::Duration::ZERO, "it was already");
    let held = env.host.held(&forks[0].id).unwrap();
    assert_eq!(held.state, talon_worker::host::SandboxPhase::Paused);
    env.host.resume(&forks[0].id, 1).await.unwrap();

    // The snapshot outlives its source and a worker restart.
    let source = src.id.clone();
    env.host.delete(&source, 1).await.unwrap();
    drop(src);
    let again = env.reopen(HostOptions::default());
    assert!(again.image_names().contains(&"snap:one".to_string()));
    let id = unique_id("snap");
    again
        .create(&id, 1, &spec("snap:one", (1000, 256, 256)))
        .await
        .unwrap();
    let mut agent = again.agent(&id).await.unwrap();
    let (out, err, code) = common::sh(&mut agent, CHECK).await;
    assert_eq!((out.as_str(), code), (SEEN, 0), "{err}");
    again.delete(&id, 1).await.unwrap();

    // Deleting the image keeps the layers its sandboxes still use.
    assert!(env.host.delete_image("snap:one").unwrap());
    let (out, _, _) = forks[1].sh("tool").await;
    assert_eq!(out, "tool-ran\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_image_sandbox_snapshots_its_workspace_and_home() {
    let env = TestHost::new(HostOptions::default());
    let mut src = create(&env, &spec("host", (1000, 256, 256))).await.unwrap();
    let (_, err, code) = src.sh("echo w > /workspace/w && echo r > /root/r").await;
    assert_eq!(code, 0, "{err}");
    let (_, err, code) = common::sh_as(&mut src.agent, "user", "echo h > /home/user/h").await;
    assert_eq!(code, 0, "{err}");
    let (snap, _) = env
        .host
        .snapshot(&src.id, 1, "snap:host", 1 << 30)
        .await
        .unwrap();
    assert!(snap.host_root && snap.layers.is_empty(), "{snap:?}");
    let mut f = create(&env, &spec("snap:host", (1000, 256, 256)))
        .await
        .unwrap();
    let (out, err, code) = f
        .sh("cat /workspace/w /home/user/h /root/r; stat -c %U /home/user/h; hostname")
        .await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(&lines[..4], ["w", "h", "r", "user"], "{out}");
    assert_eq!(lines[4], f.id, "the fork has its own identity");
}
