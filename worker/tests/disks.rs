//! A sandbox's disk is never mounted twice at once. An unmount in the
//! worker's namespace returns while another mount namespace (a container
//! being set up for another sandbox copies every host mount until it
//! pivots into its root) still holds the filesystem; mounting the image
//! again then made a second ext4 instance on the same file, which read a
//! file the first had just written as missing or as zeros (CI: a stop
//! then start of a pooled sandbox read its `.talon-ids` as seven NULs
//! while the pool built the next sandbox), and the first one's late
//! writes would corrupt the second's.
//! Its own test binary: the release wait is process-wide. Root is required.

mod common;

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};
use talon_worker::disk::{self, DiskOptions, Templates};
use talon_worker::rootfs;

/// A process in a mount namespace of its own, copied from this one (so
/// holding every mount made so far), alive for `secs`.
fn holder(secs: u32) -> Child {
    let child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sleep"])
        .arg(secs.to_string())
        .spawn()
        .expect("unshare");
    let comm = format!("/proc/{}/comm", child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
        assert!(Instant::now() < deadline, "unshare never ran sleep");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

fn loops_backed_by(image: &Path) -> usize {
    let out = Command::new("losetup")
        .arg("-j")
        .arg(image)
        .output()
        .expect("losetup");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn a_disk_held_by_another_namespace_is_waited_for_never_mounted_twice() {
    common::require_root();
    let d = tempfile::tempdir().unwrap();
    let templates = Templates::new(d.path().join("templates"), DiskOptions::default()).unwrap();
    let image = d.path().join("disk.img");
    templates.create(&image, 64).unwrap();
    let sandbox = d.path().join("sbx");
    let at = sandbox.join("disk");
    disk::mount(&image, &at).unwrap();
    // Written, not synced: it is in the first filesystem's cache alone.
    std::fs::write(at.join("ids"), b"1234567").unwrap();

    // Held elsewhere past a short release wait: the unmount says so, and
    // the mount refuses rather than make a second filesystem.
    let mut held = holder(30);
    disk::set_release_wait(Duration::from_millis(300));
    let e = rootfs::unmount_under(&sandbox).unwrap_err();
    assert!(
        e.to_string()
            .contains("still held by a mount in another namespace"),
        "{e:#}"
    );
    assert!(
        rootfs::mounts_under(&sandbox).is_empty(),
        "unmounted here all the same"
    );
    let e = disk::mount(&image, &at).unwrap_err();
    assert!(
        e.to_string().contains("not mounting it a second time"),
        "{e:#}"
    );
    assert_eq!(loops_backed_by(&image), 1, "one filesystem on the image");
    held.kill().unwrap();
    held.wait().unwrap();

    // The holder gone, so is the first filesystem, written out.
    disk::set_release_wait(Duration::from_secs(30));
    disk::mount(&image, &at).unwrap();
    assert_eq!(std::fs::read(at.join("ids")).unwrap(), b"1234567");
    std::fs::write(at.join("more"), b"89").unwrap();

    // Held for a moment, within the wait: a mount waits for the first
    // filesystem to go, and finds what it wrote.
    let mut held = holder(2);
    disk::set_release_wait(Duration::from_millis(300));
    assert!(rootfs::unmount_under(&sandbox).is_err());
    disk::set_release_wait(Duration::from_secs(30));
    let start = Instant::now();
    disk::mount(&image, &at).unwrap();
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(500),
        "mounted while the first filesystem lived ({waited:?})"
    );
    assert!(
        held.try_wait().unwrap().is_some(),
        "it waited for the holder"
    );
    assert_eq!(std::fs::read(at.join("ids")).unwrap(), b"1234567");
    assert_eq!(std::fs::read(at.join("more")).unwrap(), b"89");
    assert_eq!(loops_backed_by(&image), 1);

    // And an unmount waits the same way: when it returns, the disk is let
    // go everywhere (a fence needs that before another worker mounts it).
    let mut held = holder(2);
    let start = Instant::now();
    rootfs::unmount_under(&sandbox).unwrap();
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(500),
        "the unmount returned while the disk was still held ({waited:?})"
    );
    assert!(
        held.try_wait().unwrap().is_some(),
        "it waited for the holder"
    );
    assert_eq!(loops_backed_by(&image), 0);
}
