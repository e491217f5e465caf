//! A sandbox's root filesystem on the host, for imported images.
//!
//! The layer store keeps each image's own owners (root is uid 0), and each
//! sandbox has its own host uid range. Rather than chown a copy per
//! sandbox, the layers enter through idmapped mounts (kernel 5.19+ for
//! overlayfs): detached clones of the layer directories whose ids are
//! shifted by the sandbox's user namespace mapping. They are handed to
//! overlayfs as `/proc/self/fd/N` and never attached anywhere, so a
//! sandbox costs one mount.
//!
//! - `overlay` (the default): the layers under a per-sandbox upper
//!   directory; the whole root is writable, copy-on-write.
//! - `hardlink`: the layers merged once per image into a hardlinked tree
//!   (see `ImageStore::flat`), bound read-only; only /workspace, /tmp and
//!   /root are writable.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootfsMode {
    #[default]
    Overlay,
    Hardlink,
}

impl std::str::FromStr for RootfsMode {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<RootfsMode> {
        match s {
            "overlay" => Ok(RootfsMode::Overlay),
            "hardlink" => Ok(RootfsMode::Hardlink),
            _ => anyhow::bail!("unknown rootfs mode {s:?} (overlay or hardlink)"),
        }
    }
}

impl std::fmt::Display for RootfsMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RootfsMode::Overlay => "overlay",
            RootfsMode::Hardlink => "hardlink",
        })
    }
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// A detached clone of `dir` whose ids are shifted through `userns`.
fn idmapped(dir: &Path, userns: &OwnedFd, extra: u64) -> std::io::Result<OwnedFd> {
    use rustix::mount::OpenTreeFlags;
    let fd = rustix::mount::open_tree(
        rustix::fs::CWD,
        dir,
        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )?;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_IDMAP | extra,
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns.as_raw_fd() as u64,
    };
    // SAFETY: mount_setattr on a mount fd we own, with a struct of the size
    // we pass.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(
            e.kind(),
            format!(
                "idmapped mount of {}: {e} (needs Linux 5.19+ and a filesystem that supports idmapped mounts)",
                dir.display()
            ),
        ));
    }
    Ok(fd)
}

fn safe_for_options(p: &Path) -> anyhow::Result<String> {
    let s = p
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("{} is not UTF-8", p.display()))?;
    anyhow::ensure!(
        !s.contains([',', ':', '\\']),
        "{s} has a character overlayfs options can't carry (, : or \\); use another data directory"
    );
    Ok(s.to_string())
}

/// Mounts an overlay of `lowers` (bottom first) under `upper` at `target`,
/// the lowers shifted to the sandbox's id range starting at `base`.
pub fn mount_overlay(
    lowers: &[PathBuf],
    upper: &Path,
    work: &Path,
    target: &Path,
    base: u32,
    size: u32,
) -> anyhow::Result<()> {
    anyhow::ensure!(!lowers.is_empty(), "an image has at least one layer");
    let ns = crate::ns::userns(base, size, None)?;
    let fds = lowers
        .iter()
        .rev()
        .map(|l| idmapped(l, &ns, 0))
        .collect::<std::io::Result<Vec<_>>>()?;
    let lowerdir = fds
        .iter()
        .map(|fd| format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .collect::<Vec<_>>()
        .join(":");
    let data = format!(
        "lowerdir={lowerdir},upperdir={},workdir={},index=off",
        safe_for_options(upper)?,
        safe_for_options(work)?
    );
    anyhow::ensure!(
        data.len() < 4000,
        "the image has too many layers ({}) for one overlay mount",
        lowers.len()
    );
    let data = std::ffi::CString::new(data)?;
    rustix::mount::mount(
        "overlay",
        target,
        "overlay",
        rustix::mount::MountFlags::NODEV,
        Some(data.as_c_str()),
    )
    .map_err(|e| anyhow::anyhow!("overlay mount at {}: {e}", target.display()))?;
    drop(fds);
    Ok(())
}

/// Binds `dir` read-only at `target`, shifted to the sandbox's id range.
pub fn mount_readonly(dir: &Path, target: &Path, base: u32, size: u32) -> anyhow::Result<()> {
    mount_shifted(dir, target, base, size, MOUNT_ATTR_RDONLY)
}

/// Binds `dir` at `target` with its ids 0..size shown as base..base+size:
/// a filesystem that stores a sandbox's files by ids of its own (a
/// volume) reads as each sandbox's that mounts it, whatever its range.
pub fn mount_shifted(
    dir: &Path,
    target: &Path,
    base: u32,
    size: u32,
    extra: u64,
) -> anyhow::Result<()> {
    let ns = crate::ns::userns(base, size, None)?;
    let fd = idmapped(dir, &ns, extra | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID)?;
    rustix::mount::move_mount(
        &fd,
        "",
        rustix::fs::CWD,
        target,
        rustix::mount::MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )
    .map_err(|e| anyhow::anyhow!("mount at {}: {e}", target.display()))?;
    Ok(())
}

/// Undoes /proc/self/mountinfo's octal escapes (`\040` for a space).
pub(crate) fn unescape(s: &str) -> PathBuf {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Mount points at or under `dir`, in this mount namespace.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape)
        .filter(|m| m.starts_with(dir))
        .collect()
}

/// Unmounts everything at or under `dir`, deepest first, and checks that
/// nothing is left: a directory is only ever removed with no mount in it,
/// so a removal can't reach into a layer or a host directory.
///
/// A plain unmount first, retried briefly while the mount is busy (a
/// killed sandbox's processes and mount namespace going away): it
/// returns only once the filesystem is written out and let go, which a
/// fence needs before another worker mounts the same shared disk. A lazy
/// one (MNT_DETACH) only after that. Then, for the disks among them,
/// until no other mount namespace holds them either (see
/// `disk::wait_released`).
pub fn unmount_under(dir: &Path) -> anyhow::Result<()> {
    // Read once: later rounds only see what is left of these mounts.
    let disks = crate::disk::backing_of_mounts(&mounts_under(dir));
    for round in 0..8 {
        let mut ms = mounts_under(dir);
        if ms.is_empty() {
            return crate::disk::wait_released(&disks, dir);
        }
        ms.sort_by_key(|m| std::cmp::Reverse(m.components().count()));
        for m in ms {
            let flags = if round < 2 {
                rustix::mount::UnmountFlags::empty()
            } else {
                rustix::mount::UnmountFlags::DETACH
            };
            let mut tries = 0;
            while let Err(rustix::io::Errno::BUSY) = rustix::mount::unmount(&m, flags) {
                tries += 1;
                if tries >= 10 || flags.contains(rustix::mount::UnmountFlags::DETACH) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    anyhow::bail!(
        "mounts remain under {}: {:?}",
        dir.display(),
        mounts_under(dir)
    )
}

/// Refuses a root whose mount points lead through a symlink: an image
/// with `/proc -> /` (or any such link) would have the runtime mount
/// over a path it chose. Missing mount points are fine; the runtime
/// makes them.
pub fn check_mount_points(rootfs: &Path, dests: &[&str]) -> anyhow::Result<()> {
    use crate::beneath::{RelPath, Tree};
    let tree = Tree::open(rootfs)?;
    for d in dests {
        let rel = RelPath::parse(d.trim_start_matches('/').as_bytes())
            .map_err(|_| anyhow::anyhow!("bad mount point {d}"))?;
        let refused =
            || anyhow::anyhow!("the image has a symlink at or above {d}; refusing to start");
        match tree.stat(&rel) {
            Ok(Some(s)) => {
                let ft = rustix::fs::FileType::from_raw_mode(s.st_mode);
                if ft == rustix::fs::FileType::Symlink {
                    return Err(refused());
                }
                if ["/proc", "/sys", "/dev"].contains(d) && ft != rustix::fs::FileType::Directory {
                    anyhow::bail!("the image's {d} is not a directory; refusing to start");
                }
            }
            Ok(None) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV)) => {
                return Err(refused());
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Err(refused()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape("/a\\040b"), PathBuf::from("/a b"));
        assert_eq!(unescape("/plain"), PathBuf::from("/plain"));
    }

    #[test]
    fn a_symlinked_proc_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/", d.path().join("proc")).unwrap();
        let e = check_mount_points(d.path(), &["/proc"]).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        std::fs::create_dir(d.path().join("etc")).unwrap();
        std::os::unix::fs::symlink("/etc", d.path().join("run")).unwrap();
        assert!(check_mount_points(d.path(), &["/run/talon"]).is_err());
        assert!(check_mount_points(d.path(), &["/etc/hosts", "/workspace"]).is_ok());
    }
}
