//! A sandbox's disk: every path a sandbox can write (its workspace, /tmp,
//! /root, /var, /etc, its logs, an image's writable upper layer) lives on
//! one ext4 filesystem in a sparse image file of `disk_mib`, mounted on
//! the host through a loop device. A full sandbox gets ENOSPC from its own
//! filesystem, its inodes are that filesystem's (so a flood of small files
//! stops there too), and the host and other tenants are untouched: the
//! probe that found this class wrote 2.8 GB and 118k files into the host's
//! root filesystem from a sandbox with `diskMib: 256`.
//!
//! Images are copied (holes kept) from a template made once per size and
//! inode ratio with `mkfs.ext4`, then attached with LOOP_CONFIGURE
//! (autoclear: the loop device goes with the last unmount; direct I/O: no
//! second copy of the data in the host's page cache) and mounted nosuid,
//! nodev. The image file is root's alone; only the kernel writes its
//! metadata, so a sandbox never hands the kernel a filesystem it crafted.
//! The inode tables of a fresh image are holes, which read as zeros: the
//! filesystem is mounted `noinit_itable`, so nothing zeroes them again in
//! the background (which would write the whole table into every image).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How sandbox disks are made; every field has a default.
#[derive(Clone, Debug)]
pub struct DiskOptions {
    /// The size of a sandbox's disk when its spec names none.
    pub default_mib: u64,
    /// The smallest disk made (ext4 and its journal need some room).
    pub min_mib: u64,
    /// One inode per this many bytes of disk: the inode limit.
    pub bytes_per_inode: u64,
    /// How long an unmount or a mount waits for an earlier mount of the
    /// same disk, held by another mount namespace, to let it go (see
    /// `wait_released`).
    pub release_wait: std::time::Duration,
}

impl Default for DiskOptions {
    fn default() -> Self {
        DiskOptions {
            default_mib: 2048,
            min_mib: 64,
            bytes_per_inode: 16384,
            release_wait: std::time::Duration::from_secs(30),
        }
    }
}

impl DiskOptions {
    /// The size a spec's `disk_mib` gets: its own, or the default; never
    /// under the minimum.
    pub fn size_mib(&self, asked: i64) -> u64 {
        let asked = u64::try_from(asked).unwrap_or(0);
        if asked == 0 {
            self.default_mib
        } else {
            asked.max(self.min_mib)
        }
    }

    /// How many inodes a disk of `size_mib` has.
    pub fn inodes(&self, size_mib: u64) -> u64 {
        (size_mib << 20) / self.bytes_per_inode.max(1024)
    }
}

/// Templates of empty filesystems, one per size and inode ratio.
#[derive(Debug)]
pub struct Templates {
    dir: PathBuf,
    opts: DiskOptions,
}

impl Templates {
    pub fn new(dir: PathBuf, opts: DiskOptions) -> io::Result<Templates> {
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(Templates { dir, opts })
    }

    pub fn options(&self) -> &DiskOptions {
        &self.opts
    }

    /// The template for a disk of `size_mib`, made on first use.
    fn template(&self, size_mib: u64) -> io::Result<PathBuf> {
        let path = self.dir.join(format!(
            "ext4-{size_mib}m-{}b.img",
            self.opts.bytes_per_inode
        ));
        if path.exists() {
            return Ok(path);
        }
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let made = (|| {
            File::options()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?
                .set_len(size_mib << 20)?;
            let out = std::process::Command::new("mkfs.ext4")
                .args(["-q", "-F", "-m", "0", "-i"])
                .arg(self.opts.bytes_per_inode.max(1024).to_string())
                .args([
                    "-E",
                    "lazy_itable_init=1,lazy_journal_init=1,nodiscard,root_owner=0:0",
                ])
                .arg(&tmp)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("mkfs.ext4 (Debian's e2fsprogs) makes sandbox disks: {e}"),
                    )
                })?;
            if !out.status.success() {
                return Err(io::Error::other(format!(
                    "mkfs.ext4: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            std::fs::rename(&tmp, &path)
        })();
        if made.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        made.map(|()| path)
    }

    /// Makes `image`, a new empty filesystem of `size_mib`, root's alone.
    pub fn create(&self, image: &Path, size_mib: u64) -> io::Result<()> {
        let template = self.template(size_mib)?;
        copy_sparse(&template, image)
    }
}

/// Copies `src` to a new file `dst` (mode 0600), its holes kept holes.
fn copy_sparse(src: &Path, dst: &Path) -> io::Result<()> {
    let from = File::open(src)?;
    let to = File::options()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dst)?;
    let len = from.metadata()?.len();
    to.set_len(len)?;
    let mut at = 0u64;
    while at < len {
        let data = match rustix::fs::seek(&from, rustix::fs::SeekFrom::Data(at)) {
            Ok(d) => d,
            Err(rustix::io::Errno::NXIO) => break,
            Err(e) => return Err(e.into()),
        };
        let hole = rustix::fs::seek(&from, rustix::fs::SeekFrom::Hole(data))?;
        let (mut off_in, mut off_out) = (data, data);
        while off_in < hole {
            let len = (hole - off_in) as usize;
            let n = rustix::fs::copy_file_range(
                &from,
                Some(&mut off_in),
                &to,
                Some(&mut off_out),
                len,
            )?;

            if n == 0 {
                return Err(io::Error::other("short copy of a disk template"));
            }
        }
        at = hole;
    }
    to.sync_all()
}

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;

#[repr(C)]
struct LoopInfo64 {
    device: u64,
    inode: u64,
    rdevice: u64,
    offset: u64,
    sizelimit: u64,
    number: u32,
    encrypt_type: u32,
    encrypt_key_size: u32,
    flags: u32,
    file_name: [u8; 64],
    crypt_name: [u8; 64],
    encrypt_key: [u8; 32],
    init: [u64; 2],
}

#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// Attaches `image` to a free loop device (autoclear, direct I/O when the
/// host's filesystem allows it); the device's path and an fd holding it.
fn attach(image: &File, name: &Path) -> io::Result<(PathBuf, OwnedFd)> {
    let ctl = File::options()
        .read(true)
        .write(true)
        .open("/dev/loop-control")?;
    // Another attach may take the device between GET_FREE and CONFIGURE.
    for _ in 0..16 {
        // SAFETY: an ioctl without arguments on the control device.
        let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let path = PathBuf::from(format!("/dev/loop{n}"));
        let dev = File::options()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path)?;
        for flags in [LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO, LO_FLAGS_AUTOCLEAR] {
            let mut cfg = LoopConfig {
                fd: image.as_raw_fd() as u32,
                block_size: 0,
                // SAFETY: all-zero is a valid loop_info64.
                info: unsafe { std::mem::zeroed() },
                reserved: [0; 8],
            };
            cfg.info.flags = flags;
            let bytes = name.as_os_str().as_encoded_bytes();
            let n = bytes.len().min(63);
            cfg.info.file_name[..n].copy_from_slice(&bytes[..n]);
            // SAFETY: LOOP_CONFIGURE reads a loop_config we own.
            let r =
                unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE, &cfg as *const LoopConfig) };
            if r == 0 {
                // SAFETY: `dev` is ours; its fd moves into the OwnedFd.
                let fd = unsafe { OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(dev)) };
                return Ok((path, fd));
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // Direct I/O refused by the backing filesystem: buffered.
                Some(libc::EINVAL) if flags & LO_FLAGS_DIRECT_IO != 0 => continue,
                Some(libc::EBUSY) => break,
                _ => return Err(e),
            }
        }
    }
    Err(io::Error::other("no free loop device"))
}

/// Mounts the disk `image` at `at` (nosuid, nodev), unless something is
/// mounted there already (a restarted worker finds it so). Never a second
/// live filesystem on one image: an earlier mount of it that another
/// mount namespace still holds (see `wait_released`) is waited for, and
/// if it stays, the mount is refused. Two ext4 instances on one file each
/// write their own view of it: the second read a file the first had just
/// written as zeros, and the first's late writes corrupt the second's.
pub fn mount(image: &Path, at: &Path) -> anyhow::Result<()> {
    if crate::rootfs::mounts_under(at).iter().any(|m| m == at) {
        return Ok(());
    }
    // Root's alone while nothing is mounted on it (a stopped sandbox).
    crate::private_dir(at)?;
    let file = File::options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(image)
        .map_err(|e| anyhow::anyhow!("sandbox disk {}: {e}", image.display()))?;
    wait_released(&[identity(&file)?], image)
        .map_err(|e| anyhow::anyhow!("{e:#}; not mounting it a second time"))?;
    let (dev, hold) = attach(&file, image)?;
    let data = c"noinit_itable,discard,errors=remount-ro";
    let r = rustix::mount::mount(
        dev.as_path(),
        at,
        "ext4",
        rustix::mount::MountFlags::NOSUID | rustix::mount::MountFlags::NODEV,
        Some(data),
    );
    // The mount holds the device now; with autoclear, it goes when the
    // filesystem is unmounted (or now, if the mount failed).
    drop(hold);
    r.map_err(|e| anyhow::anyhow!("mounting {} at {}: {e}", image.display(), at.display()))
}

/// A backing file as a loop device names it: its device (the kernel's
/// `new_encode_dev`) and inode.
pub type Backing = (u64, u64);

fn identity(file: &File) -> io::Result<Backing> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata()?;
    let (major, minor) = (libc::major(m.dev()) as u64, libc::minor(m.dev()) as u64);
    let dev = (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12);
    Ok((dev, m.ino()))
}

/// What loop device `dev` (a path under /dev) is bound to, if anything.
fn backing_of(dev: &Path) -> Option<Backing> {
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(dev)
        .ok()?;
    // SAFETY: all-zero is a valid loop_info64.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 fills a loop_info64 we own.
    let r = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            LOOP_GET_STATUS64,
            &mut info as *mut LoopInfo64,
        )
    };
    (r == 0).then_some((info.device, info.inode))
}

/// The backing files of the loop devices that the mounts at `points`
/// are made from (for `wait_released` after they are unmounted).
pub fn backing_of_mounts(points: &[PathBuf]) -> Vec<Backing> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines()
        .filter(|l| {
            l.split(' ')
                .nth(4)
                .is_some_and(|m| points.contains(&crate::rootfs::unescape(m)))
        })
        .filter_map(|l| l.split(" - ").nth(1)?.split(' ').nth(1))
        .filter(|src| src.starts_with("/dev/loop"))
        .filter_map(|src| backing_of(Path::new(src)))
        .collect()
}

/// Loop devices bound to one of `files`.
fn bound(files: &[Backing]) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    dir.flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("loop"))
        .filter(|n| Path::new("/sys/block").join(n).join("loop").exists())
        .map(|n| Path::new("/dev").join(n))
        .filter(|d| backing_of(d).is_some_and(|b| files.contains(&b)))
        .collect()
}

static RELEASE_WAIT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(30_000);

/// Sets how long `wait_released` waits (`DiskOptions::release_wait`).
pub fn set_release_wait(d: std::time::Duration) {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    RELEASE_WAIT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

/// Waits until no loop device is bound to any of `files`, that is, until
/// every filesystem made from them is gone. An unmount in the worker's
/// namespace returns at once while a copy of the mount lives on in
/// another one (a container being set up elsewhere copies every host
/// mount until it pivots into its root; a process that entered a
/// namespace): the filesystem, its dirty data with it, goes only with
/// the last copy. Errs (naming what holds it) after the release wait.
pub fn wait_released(files: &[Backing], what: &Path) -> anyhow::Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let wait = std::time::Duration::from_millis(
        RELEASE_WAIT_MS.load(std::sync::atomic::Ordering::Relaxed),
    );
    let start = std::time::Instant::now();
    loop {
        let held = bound(files);
        if held.is_empty() {
            return Ok(());
        }
        if start.elapsed() >= wait {
            anyhow::bail!(
                "the disk {} is still held by a mount in another namespace ({}) after {wait:?}",
                what.display(),
                held.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_inodes() {
        let o = DiskOptions::default();
        assert_eq!(o.size_mib(0), 2048);
        assert_eq!(o.size_mib(-5), 2048);
        assert_eq!(o.size_mib(1), 64);
        assert_eq!(o.size_mib(256), 256);
        assert_eq!(o.inodes(256), 16384);
    }

    #[test]
    fn a_sparse_copy_keeps_its_holes() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src");
        let f = File::create(&src).unwrap();
        f.set_len(64 << 20).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(b"head", 0).unwrap();
        f.write_all_at(b"middle", 32 << 20).unwrap();
        f.sync_all().unwrap();
        let dst = d.path().join("dst");
        copy_sparse(&src, &dst).unwrap();
        assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&dst).unwrap());
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&dst).unwrap();
        assert!(
            m.blocks() * 512 < 1 << 20,
            "the holes were filled: {}",
            m.blocks()
        );
        assert_eq!(m.mode() & 0o777, 0o600);
    }
}
