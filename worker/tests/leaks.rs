//! No leaks: 50 create/delete cycles (the `host` image, an imported image
//! on an overlay root, and on a hardlink root; on a networked host, under
//! every egress policy) leave the host's counts of mounts, loop devices, talon cgroups,
//! network namespaces, sandbox processes, sandbox links and nft objects
//! where they started, and nothing of the sandboxes under the data
//! directory.
//! Its own test binary, so nothing else runs beside it. Root is required.

mod common;

use common::{TestHost, create, spec};
use std::collections::HashSet;
use std::path::Path;
use talon_proto::v1::EgressMode;
use talon_worker::host::HostOptions;
use talon_worker::image::pack::{Format, PackOptions, pack};
use talon_worker::net::NetOptions;
use talon_worker::net::nft::Census;
use talon_worker::rootfs::RootfsMode;

#[derive(Debug, PartialEq, Eq)]
struct Counts {
    /// Every mount of this mount namespace.
    mounts: usize,
    /// Every network namespace any process is in.
    netns: usize,
    /// Cgroups (v1 controllers and the unified tree) of this test's sandboxes.
    cgroups: usize,
    /// Processes in those cgroups, or running as a sandbox user.
    sandbox_processes: usize,
    /// Links of the networked host's sandboxes.
    links: usize,
    /// Loop devices with a backing file (sandbox disks).
    loops: usize,
}

fn attached_loops() -> usize {
    std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .filter(|e| e.path().join("loop/backing_file").exists())
        .count()
}

const BRIDGE: &str = "tlleak";

fn sandbox_links() -> usize {
    std::fs::read_dir("/sys/class/net")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{BRIDGE}v"))
        })
        .count()
}

/// Sandbox ids of this process start with this (see common::unique_id), so
/// sandboxes that other runs left on the machine are not counted.
fn ours() -> String {
    format!("sbx_t{}x", std::process::id())
}

fn cgroup_dirs(dir: &Path, n: &mut usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if e.file_name().to_string_lossy().starts_with(&ours()) {
            *n += 1;
        }
        cgroup_dirs(&e.path(), n);
    }
}

fn counts() -> Counts {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .count();
    let mut cgroups = 0;
    cgroup_dirs(Path::new("/sys/fs/cgroup"), &mut cgroups);
    let mut netns = HashSet::new();
    let mut sandbox_processes = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Ok(l) = std::fs::read_link(format!("/proc/{pid}/ns/net")) {
            netns.insert(l);
        }
        let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        if cg.contains(&ours()) {
            sandbox_processes += 1;
        }
    }
    Counts {
        mounts,
        cgroups,
        netns: netns.len(),
        sandbox_processes,
        links: sandbox_links(),
        loops: attached_loops(),
    }
}

/// A tiny image: the agent needs nothing from its root to come up.
fn tiny_image(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("tiny");
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    std::fs::write(root.join("etc/motd"), b"tiny\n").unwrap();
    let out = dir.join("tiny.tar");
    pack(&root, &out, Format::Oci, &PackOptions::default()).unwrap();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_create_delete_cycles_leave_nothing_behind() {
    let scratch = tempfile::tempdir().unwrap();
    let archive = tiny_image(scratch.path());
    let overlay = TestHost::new(HostOptions::default());
    let hardlink = TestHost::new(HostOptions {
        rootfs_mode: RootfsMode::Hardlink,
        ..Default::default()
    });
    for env in [&overlay, &hardlink] {
        env.host.images().import("tiny", &archive).unwrap();
    }
    let net = overlay
        .host
        .enable_network(NetOptions {
            bridge: BRIDGE.into(),
            cidr: "10.85.0.0/24".parse().unwrap(),
            dns_upstream: Some("127.0.0.1:53".parse().unwrap()),
            ..Default::default()
        })
        .await
        .unwrap();
    // One cycle first, so that lazily made things (the parent cgroups,
    // the flattened image) exist before counting.
    drop(
        create(&overlay, &spec("tiny", (100, 64, 32)))
            .await
            .unwrap(),
    );
    drop(
        create(&hardlink, &spec("tiny", (100, 64, 32)))
            .await
            .unwrap(),
    );
    drop(
        create(&overlay, &spec("host", (100, 64, 32)))
            .await
            .unwrap(),
    );
    let before = counts();
    let nft_before = net.tables().census().await.unwrap();
    assert_eq!(nft_before, Census::default(), "no sandbox is in the tables");
    // The counting sees sandboxes: one running now is counted.
    let probe = create(&overlay, &spec("host", (100, 64, 32)))
        .await
        .unwrap();
    let during = counts();
    assert!(
        during.cgroups > 0 && during.sandbox_processes > 0,
        "{during:?}"
    );
    assert_eq!(
        during.netns,
        before.netns + 1,
        "a sandbox has its own netns"
    );
    assert_eq!(
        (during.mounts, during.loops),
        (before.mounts + 2, before.loops + 1),
        "a host-image sandbox mounts its disk and binds its user namespace here, and nothing else"
    );

    assert_eq!(during.links, before.links + 1, "a sandbox has its link");
    let nft_during = net.tables().census().await.unwrap();
    assert_eq!(
        (nft_during.chains, nft_during.egress, nft_during.ports),
        (1, 1, 1),
        "{nft_during:?}"
    );
    drop(probe);

    let started = std::time::Instant::now();
    for i in 0..50 {
        let (env, image) = match i % 5 {
            0 | 1 => (&overlay, "host"),
            2 | 3 => (&overlay, "tiny"),
            _ => (&hardlink, "tiny"),
        };
        let mut spec = spec(image, (100, 64, 32));
        let mode = [
            EgressMode::Open,
            EgressMode::Allowlist,
            EgressMode::Sealed,
            EgressMode::Deny,
        ][i % 4];
        // Rules belong to an allowlist alone (the worker refuses them
        // elsewhere, as the server does).
        let rules = |v: &str| {
            if mode == EgressMode::Allowlist {
                vec![v.to_string()]
            } else {
                vec![]
            }
        };
        spec.network_policy = Some(talon_proto::v1::NetworkPolicy {
            mode: mode as i32,
            allow_cidrs: rules("198.51.100.0/24"),
            allow_domains: rules("example.com"),
        });
        let mut s = create(env, &spec)
            .await
            .unwrap_or_else(|e| panic!("cycle {i} ({image}): {e:#}"));
        if image == "host" {
            let (out, _, code) = s.sh("echo up").await;
            assert_eq!((out.as_str(), code), ("up\n", 0), "cycle {i}");
        } else {
            // The tiny image has no shell; its file is there.
            let r = s
                .agent
                .read_file(talon_proto::v1::ReadFileRequest {
                    path: "/etc/motd".into(),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .message()
                .await
                .unwrap()
                .unwrap();
            assert_eq!(r.data, b"tiny\n", "cycle {i}");
        }
        let dir = s.dir();
        let id = s.id.clone();
        env.host.delete(&id, 1).await.unwrap();
        assert!(!dir.exists(), "cycle {i}: {} remains", dir.display());
        drop(s);
    }

    eprintln!("50 cycles in {:?}", started.elapsed());
    let after = counts();
    assert_eq!(before, after, "host resources leaked");
    assert_eq!(
        net.tables().census().await.unwrap(),
        nft_before,
        "nft objects leaked"
    );
    assert!(net.policy_of("10.85.0.2".parse().unwrap()).is_none());
    net.remove().await;
    assert_eq!((after.cgroups, after.sandbox_processes), (0, 0));
    for env in [&overlay, &hardlink] {
        let left: Vec<_> = std::fs::read_dir(env.data().join("sandboxes"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "sandbox directories left: {left:?}");
        let state: Vec<_> = std::fs::read_dir(env.data().join("runtime-state"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(state.is_empty(), "runtime state left: {state:?}");
    }
}
