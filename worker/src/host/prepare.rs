//! A sandbox's files before its container runs: its disk, root, secrets,
//! /etc and hostname.

use super::*;
use crate::bundle::{self, Layout, RootKind};
use crate::image::ImageStore;
use crate::rootfs::{self, RootfsMode};
use std::collections::HashMap;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use talon_proto::talon::worker::v1 as wpb;

impl SandboxHost {
    /// Makes (once) and mounts the sandbox's disk (see `disk`); its top
    /// directory is the sandbox's root's alone, so no other host user
    /// reaches anything the sandbox wrote. On shared storage the disk is
    /// claimed for this generation first (see `shared`): a moved sandbox
    /// finds the disk its last worker wrote. True when the disk is new.
    pub(super) fn mount_disk(
        &self,
        l: &Layout,
        uid: u32,
        spec: &wpb::SandboxSpec,
        generation: i64,
    ) -> anyhow::Result<bool> {
        if let Some(shared) = &self.shared {
            let id = l.dir.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                anyhow::anyhow!("sandbox directory {} has no id", l.dir.display())
            })?;
            shared.claim(id, generation)?;
        }
        let image = l.disk_image();
        let fresh = !image.exists();
        if fresh {
            let asked = spec.resources.map_or(0, |r| r.disk_mib);
            let size = self.disks.options().size_mib(asked);
            self.disks.create(&image, size)?;
        }
        crate::disk::mount(&image, &l.disk())?;
        // A disk made under another id range (a sandbox moved here from
        // another worker, on shared storage) is shifted to this one: its
        // files stay its root's and its users'.
        let owner = l.disk().join(OWNER_FILE);
        let recorded: Option<u32> = match std::fs::read_to_string(&owner) {
            Ok(s) => Some(
                s.trim()
                    .parse()
                    .map_err(|_| anyhow::anyhow!("{} does not read ({s:?})", owner.display()))?,
            ),
            // A new disk, or one from before the file was kept: its range
            // is this one.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        if let Some(old) = recorded.filter(|old| *old != uid) {
            shift_ids(&l.disk(), old, uid)?;
        }
        if recorded != Some(uid) {
            write_private(&owner, uid.to_string().as_bytes())?;
        }
        chown(l.disk(), Some(uid), Some(uid))?;
        std::fs::set_permissions(l.disk(), std::fs::Permissions::from_mode(0o700))?;
        Ok(fresh)
    }

    /// Mounts the sandbox's volumes (see `shared`) at `Layout::volume`,
    /// each an ext4 image on the shared storage whose ids are the
    /// sandbox's own (0 its root), shown shifted to this sandbox's range,
    /// so one volume reads the same in every sandbox that mounts it.
    /// Once: a restarted worker finds them mounted.
    pub(super) fn mount_volumes(
        &self,
        l: &Layout,
        id: &str,
        uid: u32,
        generation: i64,
        volumes: &[wpb::VolumeAttachment],
    ) -> anyhow::Result<()> {
        if volumes.is_empty() {
            return Ok(());
        }
        let shared = self.shared.as_ref().ok_or_else(|| {
            anyhow::anyhow!(
                "volumes need the shared workspace backend (--shared-workspaces); this worker's is local"
            )
        })?;
        let base = l.dir.join("volumes");
        std::fs::create_dir_all(&base)?;
        // The sandbox's root (its group) passes through to its volumes,
        // whose top directories it may open to all; no other host user
        // passes.
        chown(&base, Some(0), Some(uid))?;
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o710))?;
        for v in volumes {
            let target = l.volume(&v.volume_id);
            if rootfs::mounts_under(&target).contains(&target) {
                continue;
            }
            let image = shared.claim_volume(&v.volume_id, id, generation)?;
            if !image.exists() {
                let size = u64::try_from(v.size_mib).unwrap_or(0).max(16);
                self.disks.create(&image, size)?;
            }
            let raw = base.join(format!("{}.raw", v.volume_id));
            crate::disk::mount(&image, &raw)?;
            crate::private_dir(&target)?;
            let shifted = rootfs::mount_shifted(&raw, &target, uid, bundle::ID_RANGE, 0);
            // The shifted clone keeps the filesystem; the plain one goes.
            let _ = rustix::mount::unmount(&raw, rustix::mount::UnmountFlags::DETACH);
            let _ = std::fs::remove_dir(&raw);
            shifted?;
        }
        Ok(())
    }

    /// Mount points for the volumes that lie in a directory of the sandbox's
    /// own disk (/workspace/data) or in the `host` root (/data): made here,
    /// beneath the directory with no symlink followed (the sandbox wrote
    /// that directory), owned by the sandbox's root. Elsewhere (an
    /// image's root) the runtime makes them, and `check_mount_points`
    /// refuses a symlink on the way.
    pub(super) fn volume_mount_points(
        &self,
        l: &Layout,
        kind: RootKind,
        isolation: crate::runtime::Isolation,
        uid: u32,
        volumes: &[wpb::VolumeAttachment],
    ) -> anyhow::Result<()> {
        use crate::beneath::{RelPath, Tree};
        let dirs = l.private_dirs(kind, isolation);
        for v in volumes {
            let path = Path::new(&v.path);
            let within = dirs
                .iter()
                .filter_map(|(src, dst)| Some((src, path.strip_prefix(dst).ok()?)))
                .max_by_key(|(_, rest)| usize::MAX - rest.components().count());
            let (root, rest, owner) = match within {
                Some((src, rest)) => (src.clone(), rest.to_path_buf(), Some(uid)),
                None if kind == RootKind::Host => (
                    l.rootfs(),
                    path.strip_prefix("/").unwrap_or(path).to_path_buf(),
                    None,
                ),
                None => continue,
            };
            let tree = Tree::open(&root)?;
            let mut rel = RelPath::parse(b"").map_err(|_| anyhow::anyhow!("empty path"))?;
            for c in rest.components() {
                let name = c.as_os_str().as_encoded_bytes();
                rel = rel.join(name);
                let made = tree.stat(&rel)?.is_none();
                let fd = tree.dir_all(&rel).map_err(|e| {
                    anyhow::anyhow!(
                        "volume mount point {}: {e} (a symlink or a file on the way?)",
                        v.path
                    )
                })?;
                if let (true, Some(u)) = (made, owner) {
                    rustix::fs::chownat(
                        &fd,
                        "",
                        Some(rustix::fs::Uid::from_raw(u)),
                        Some(rustix::fs::Gid::from_raw(u)),
                        rustix::fs::AtFlags::EMPTY_PATH,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Mounts an imported image's root (once: a restarted worker finds it
    /// still mounted) and checks its mount points.
    pub(super) fn mount_root(&self, l: &Layout, uid: u32, h: &Held) -> anyhow::Result<()> {
        let Some(i) = &h.image else {
            return Ok(());
        };
        let rootfs = l.rootfs();
        if !rootfs::mounts_under(&rootfs).is_empty() {
            return Ok(());
        }
        match i.mode {
            RootfsMode::Overlay => {
                let lowers: Vec<PathBuf> =
                    i.layers.iter().map(|d| self.images.layer_dir(d)).collect();
                rootfs::mount_overlay(
                    &lowers,
                    &l.upper(),
                    &l.work(),
                    &rootfs,
                    uid,
                    bundle::ID_RANGE,
                )
            }
            RootfsMode::Hardlink => {
                let flat = self.images.flat(&i.layers)?;
                rootfs::mount_readonly(&flat, &rootfs, uid, bundle::ID_RANGE)
            }
        }
    }
}

/// A sandbox's root is an unprivileged host user: it must be able to
/// pass through every directory above its bundle.
pub(super) fn traversable(dir: &Path) -> anyhow::Result<()> {
    let mut p = Some(dir);
    while let Some(d) = p {
        let mode = std::fs::metadata(d)?.permissions().mode();
        if mode & 0o001 == 0 {
            anyhow::bail!(
                "{} is not traversable by other users (mode {:o}); sandboxes under {} could not reach their root. \
                 Use a data directory outside it (for example /var/lib/talon)",
                d.display(),
                mode & 0o777,
                dir.display()
            );
        }
        p = d.parent();
    }
    Ok(())
}

/// Sets the UTS hostname of the sandbox whose init is `pid`, from a
/// thread that joins its UTS namespace (the agent has no CAP_SYS_ADMIN).
pub(super) async fn set_hostname(pid: u32, name: &str) -> anyhow::Result<()> {
    let name = name.to_string();
    crate::ns::within(
        pid,
        "uts",
        crate::ns::Kind::HostNameAndNISDomainName,
        move || Ok(rustix::system::sethostname(name.as_bytes())?),
    )
    .await
}

/// Most bytes of secret files one sandbox may hold (its tmpfs's size).
pub const SECRETS_TMPFS_BYTES: u64 = 8 << 20;

/// Mounts the sandbox's secrets directory: a tmpfs of its own (secrets
/// never touch a disk), the sandbox's root's and no one else's, bound
/// read-only at /run/secrets. Once: a restarted worker finds it mounted.
pub(super) fn mount_secrets(l: &Layout, uid: u32) -> anyhow::Result<()> {
    let at = l.secrets();
    if rootfs::mounts_under(&at).contains(&at) {
        return Ok(());
    }
    crate::private_dir(&at)?;
    let data = std::ffi::CString::new(format!(
        "size={SECRETS_TMPFS_BYTES},nr_inodes=1024,mode=0500,uid={uid},gid={uid}"
    ))?;
    use rustix::mount::MountFlags;
    rustix::mount::mount(
        "tmpfs",
        &at,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        Some(data.as_c_str()),
    )
    .map_err(|e| anyhow::anyhow!("secrets tmpfs at {}: {e}", at.display()))
}

/// Brings a sandbox's secrets tmpfs in line with `files`, readable by its
/// root only: each file written whole under a temporary name and renamed
/// over the old (a reader sees the old value or the new, never a part),
/// every other file removed. Only the worker writes there (the sandbox
/// sees it read-only), and a name is one plain component.
pub(super) fn sync_secrets(
    l: &Layout,
    uid: u32,
    files: &HashMap<String, Vec<u8>>,
) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = l.secrets();
    for (name, value) in files {
        anyhow::ensure!(
            !name.is_empty() && !name.contains('/') && !name.starts_with('.'),
            "bad secret name"
        );
        // A dot first: no secret's name, so never one of theirs.
        let tmp = dir.join(format!(".{name}.new"));
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(|e| anyhow::anyhow!("secret file {name}: {e}"))?;
        let written = f.write_all(value).map_err(|e| {
            anyhow::anyhow!(
                "secret file {name}: {e} (a sandbox's secret files hold at most {} MiB)",
                SECRETS_TMPFS_BYTES >> 20
            )
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // On the fd: the secrets tmpfs is the sandbox's, and a path could
        // be swapped for a link to a host file between open and chown.
        std::os::unix::fs::fchown(&f, Some(uid), Some(uid))?;
        std::fs::rename(&tmp, dir.join(name))?;
    }
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let keep = entry
            .file_name()
            .to_str()
            .is_some_and(|n| files.contains_key(n));
        if !keep {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Writes a file only root may read, atomically (a temporary file of mode
/// 0600, then a rename): records, specs and bundles, which may hold a
/// sandbox's environment and secrets.
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A sandbox's directory: root's, traversable (its root user reaches its
/// bundle through it), not listable.
pub(super) fn sandbox_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o711).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.into()),
        _ => {}
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))?;
    Ok(())
}

/// Creates the directories of a new sandbox on its mounted disk, owned by
/// its root user, and its bundle's root.
pub(super) fn prepare(
    l: &Layout,
    uid: u32,
    image: Option<&HeldImage>,
    images: &ImageStore,
    nameserver: Option<std::net::Ipv4Addr>,
    isolation: crate::runtime::Isolation,
    fresh: bool,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(l.rootfs())?;
    std::fs::set_permissions(l.bundle(), std::fs::Permissions::from_mode(0o711))?;
    let kind = image.map_or(RootKind::Host, HeldImage::root_kind);
    match image {
        None => prepare_host_root(l)?,
        Some(i) if i.mode == RootfsMode::Overlay => {
            std::fs::create_dir_all(l.upper())?;
            std::fs::create_dir_all(l.work())?;
            std::fs::set_permissions(l.work(), std::fs::Permissions::from_mode(0o700))?;
            // The upper directory's root is the sandbox's /, owned by its root.
            chown(l.upper(), Some(uid), Some(uid))?;
            std::fs::set_permissions(l.upper(), std::fs::Permissions::from_mode(0o755))?;
            let has = |p: &str| {
                i.layers
                    .iter()
                    .any(|d| images.layer_dir(d).join(p).symlink_metadata().is_ok())
            };
            let etc = l.upper().join("etc");
            std::fs::create_dir_all(&etc)?;
            chown(&etc, Some(uid), Some(uid))?;
            std::fs::set_permissions(&etc, std::fs::Permissions::from_mode(0o755))?;
            write_worker_etc(&etc, uid, nameserver)?;
            if !has("tmp") {
                let tmp = l.upper().join("tmp");
                std::fs::create_dir_all(&tmp)?;
                chown(&tmp, Some(uid), Some(uid))?;
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))?;
            }
        }
        Some(_) => {
            std::fs::create_dir_all(l.etc())?;
            write_worker_etc(&l.etc(), uid, nameserver)?;
        }
    }
    for (dir, _) in l.private_dirs(kind, isolation) {
        std::fs::create_dir_all(&dir)?;
    }
    if kind == RootKind::Host {
        write_etc(l, nameserver)?;
        for e in bundle::HOST_ETC {
            let inside = l.etc().join(&e[5..]);
            let host = Path::new(e);
            if host.is_dir() {
                std::fs::create_dir_all(&inside)?;
            } else if host.exists() {
                std::fs::write(&inside, b"")?;
            }
        }
    }
    // The sandbox's root owns its private directories (on a disk that
    // holds files already, a moved sandbox's, their owners stay).
    if fresh {
        for (dir, _) in l.private_dirs(kind, isolation) {
            chown_tree(&dir, uid)?;
        }
    }
    std::fs::set_permissions(l.workspace(), std::fs::Permissions::from_mode(0o755))?;
    let disk = l.disk();
    if disk.join("tmp").is_dir() {
        std::fs::set_permissions(disk.join("tmp"), std::fs::Permissions::from_mode(0o1777))?;
    }
    if kind != RootKind::Overlay {
        std::fs::set_permissions(disk.join("root"), std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The `host` image's root: an empty tree with the mount points, the
/// host's merged-/usr symlinks mirrored.
pub(super) fn prepare_host_root(l: &Layout) -> anyhow::Result<()> {
    for d in [
        "proc",
        "dev",
        "sys",
        "usr",
        "workspace",
        "tmp",
        "root",
        "home",
        "var/log/talon",
        "etc",
        "run/secrets",
        ".talon/run",
    ] {
        std::fs::create_dir_all(l.rootfs().join(d))?;
    }
    std::fs::write(l.rootfs().join(".talon/agent"), b"")?;
    for d in bundle::HOST_DIRS {
        let host = Path::new(d);
        let inside = l.rootfs().join(&d[1..]);
        if host.is_symlink() {
            let target = std::fs::read_link(host)?;
            let _ = std::fs::remove_dir(&inside);
            std::os::unix::fs::symlink(target, &inside)?;
        } else if host.is_dir() {
            std::fs::create_dir_all(&inside)?;
        }
    }
    std::fs::create_dir_all(l.disk().join("var/log/talon"))?;
    std::fs::create_dir_all(l.disk().join("var/tmp"))?;
    Ok(())
}

/// /etc/hosts, /etc/hostname and /etc/resolv.conf, which the worker
/// provides whatever the image. With a network, the only name server is
/// the worker's resolver at the gateway.
pub(super) fn write_worker_etc(
    dir: &Path,
    uid: u32,
    nameserver: Option<std::net::Ipv4Addr>,
) -> anyhow::Result<()> {
    let resolv = match nameserver {
        Some(ns) => format!("nameserver {ns}\noptions timeout:2 attempts:2\n"),
        None => std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default(),
    };
    for (name, body) in [
        (
            "hosts",
            "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n".to_string(),
        ),
        ("hostname", "sandbox\n".to_string()),
        ("resolv.conf", resolv),
    ] {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            std::fs::remove_file(&p)?;
        }
        std::fs::write(&p, body)?;
        chown(&p, Some(uid), Some(uid))?;
    }
    Ok(())
}

pub(super) fn write_etc(l: &Layout, nameserver: Option<std::net::Ipv4Addr>) -> anyhow::Result<()> {
    let etc = l.etc();
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/home/user:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    )?;
    std::fs::write(
        etc.join("group"),
        "root:x:0:\ntty:x:5:\nuser:x:1000:\nnogroup:x:65534:\n",
    )?;
    std::fs::write(
        etc.join("nsswitch.conf"),
        "passwd: files\ngroup: files\nhosts: files dns\n",
    )?;
    // /usr is the host's and read-only: pip installs into the user site
    // (~/.local) instead, and may, since nothing there is the system's.
    std::fs::write(
        etc.join("pip.conf"),
        "[global]\nbreak-system-packages = true\n",
    )?;
    write_worker_etc(&etc, 0, nameserver)?;
    Ok(())
}

/// The `host` image's /home/user, owned by `user` (uid 1000 inside).
/// Run at every boot, so a sandbox made before /home existed gets one;
/// never follows a link the sandbox may have left in its place.
pub(super) fn ensure_home(l: &Layout, uid: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(l.rootfs().join("home"))?;
    let home = l.home();
    if home.symlink_metadata().is_err() {
        std::fs::create_dir(&home)?;
        std::os::unix::fs::lchown(&home, Some(uid), Some(uid))?;
    }
    let user = home.join("user");
    if user.symlink_metadata().is_err() {
        std::fs::create_dir(&user)?;
        std::os::unix::fs::lchown(&user, Some(uid + 1000), Some(uid + 1000))?;
        std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// At the top of a sandbox's disk (which the sandbox never sees: it gets
/// directories of it): the first uid of the range the disk's files are
/// owned in.
const OWNER_FILE: &str = ".talon-ids";

/// Moves every file under `dir` (not following symlinks) owned in the id
/// range starting at `from` to the same place in the range starting at
/// `to`; ids outside the range are left. Run before the sandbox starts,
/// so nothing it runs races the walk.
pub(super) fn shift_ids(dir: &Path, from: u32, to: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let range = from..from.saturating_add(bundle::ID_RANGE);
    let shift = |id: u32| range.contains(&id).then(|| id - from + to);
    let mut stack = vec![dir.to_path_buf()];
    let mut n = 0u64;
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p)?;
        let (u, g) = (shift(m.uid()), shift(m.gid()));
        if u.is_some() || g.is_some() {
            let mode = m.mode();
            std::os::unix::fs::lchown(&p, u, g)?;
            // chown clears set-id bits; a file the sandbox made set-id
            // keeps them (in its own range).
            if mode & 0o6000 != 0 && !m.file_type().is_symlink() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode & 0o7777))?;
            }
        }
        n += 1;
        if m.is_dir() {
            for e in std::fs::read_dir(&p)? {
                stack.push(e?.path());
            }
        }
    }
    tracing::info!(dir = %dir.display(), files = n, from, to, "a disk's files moved to this sandbox's id range");
    Ok(())
}

pub(super) fn chown_tree(p: &Path, uid: u32) -> std::io::Result<()> {
    chown(p, Some(uid), Some(uid))?;
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p)? {
            chown_tree(&e?.path(), uid)?;
        }
    }
    Ok(())
}

/// A gVisor sandbox's agent directory (`Layout::agent_dir`), made afresh at
/// every boot: its root's alone (0700), so no other user of the sandbox
/// reaches the agent, and empty, so no socket of an earlier boot is dialled.
pub(super) fn agent_dir(l: &Layout, uid: u32) -> anyhow::Result<()> {
    let dir = l.agent_dir();
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dir)?,
        Ok(_) => std::fs::remove_file(&dir)?,
        Err(_) => {}
    }
    std::fs::create_dir(&dir)?;
    std::os::unix::fs::lchown(&dir, Some(uid), Some(uid))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A disk moved to another id range keeps its owners: root's files
    /// stay root's, the user's the user's, set-id bits stay, symlinks are
    /// not followed, ids outside the range are left.
    #[test]
    fn a_moved_disk_shifts_to_the_new_range() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let (from, to) = (300_000u32, 500_000u32);
        let outside = tempfile::NamedTempFile::new().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::create_dir_all(p("workspace/sub")).unwrap();
        std::fs::write(p("workspace/root-file"), b"x").unwrap();
        std::fs::write(p("workspace/sub/user-file"), b"x").unwrap();
        std::fs::write(p("workspace/setuid"), b"x").unwrap();
        std::fs::write(p("workspace/stranger"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path(), p("workspace/link")).unwrap();
        for (f, id) in [
            ("workspace", from),
            ("workspace/sub", from + 1000),
            ("workspace/root-file", from),
            ("workspace/sub/user-file", from + 1000),
            ("workspace/setuid", from + 1000),
            ("workspace/link", from + 5),
            ("workspace/stranger", 12345),
        ] {
            std::os::unix::fs::lchown(p(f), Some(id), Some(id)).unwrap();
        }
        std::fs::set_permissions(
            p("workspace/setuid"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        shift_ids(d.path(), from, to).unwrap();
        let owner = |f: &str| {
            let m = std::fs::symlink_metadata(p(f)).unwrap();
            (m.uid(), m.gid())
        };
        assert_eq!(owner("workspace"), (to, to));
        assert_eq!(owner("workspace/sub"), (to + 1000, to + 1000));
        assert_eq!(owner("workspace/root-file"), (to, to));
        assert_eq!(owner("workspace/sub/user-file"), (to + 1000, to + 1000));
        assert_eq!(owner("workspace/link"), (to + 5, to + 5));
        assert_eq!(owner("workspace/stranger"), (12345, 12345));
        assert_eq!(
            std::fs::metadata(p("workspace/setuid")).unwrap().mode() & 0o7777,
            0o4755
        );
        // The symlink's target was not touched.
        assert_eq!(std::fs::metadata(outside.path()).unwrap().uid(), 0);
    }
}
