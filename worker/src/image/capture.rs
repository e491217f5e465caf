//! Captures a tree a sandbox wrote (its overlay upper directory, its
//! workspace) as a directory in the image store's layer format, the first
//! step of a filesystem snapshot: owners shifted from the sandbox's host
//! uid range back to the image's own (its root is 0), overlay whiteouts
//! and opaque directories kept, hardlinks kept as links, modes, times and
//! `user.*` xattrs kept. The same copy with the shift reversed fills a
//! new sandbox's workspace from a snapshot.
//!
//! The source is content the sandbox controls, so nothing in it is
//! trusted: every step goes through directory fds, a symlink is copied as
//! a link and never followed, a file is opened with `O_NOFOLLOW` and
//! checked to be the entry that was listed, and what a sandbox cannot
//! make (a device other than a whiteout, an owner outside its range)
//! fails the capture rather than being guessed at. A byte budget bounds
//! it. The caller freezes the sandbox first, so the tree holds still.

use crate::beneath::{name, read_names};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timestamps};
use std::collections::HashMap;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Host ids `[from, from + len)` become `[to, to + len)`: from a
/// sandbox's range to the image's own (`to` 0) when a snapshot is taken,
/// and back into another sandbox's range when one starts from it.
#[derive(Clone, Copy, Debug)]
pub struct Shift {
    pub from: u32,
    pub to: u32,
    pub len: u32,
}

impl Shift {
    fn map(&self, id: u32) -> Result<u32, CaptureError> {
        id.checked_sub(self.from)
            .filter(|i| *i < self.len)
            .and_then(|i| i.checked_add(self.to))
            .ok_or(CaptureError::Refused(format!(
                "owner {id} is outside the sandbox's ids"
            )))
    }
}

/// What a capture copied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// Bytes of file content (a hardlinked file counts once).
    pub bytes: u64,
    /// Entries made, the root aside.
    pub entries: u64,
    /// Sockets left out: they mean nothing without their process.
    pub sockets: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The tree holds what a snapshot cannot carry.
    #[error("{0}")]
    Refused(String),
    /// Over the byte budget.
    #[error("the tree holds more than {0} bytes")]
    TooLarge(u64),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

const XATTR_OPAQUE: &str = "trusted.overlay.opaque";

struct State<'a> {
    shift: Shift,
    max_bytes: u64,
    /// Bytes of content copied so far, for a watcher (see `capture_counted`).
    counter: &'a AtomicU64,
    done: Captured,
    /// (dev, ino) of a file with several links → where its first copy is,
    /// as the destination directory's fd and name.
    links: HashMap<(u64, u64), (std::sync::Arc<OwnedFd>, Vec<u8>)>,
}

/// Copies `src` into `dst` (an empty directory, made by the caller).
pub fn capture(
    src: &Path,
    dst: &Path,
    shift: Shift,
    max_bytes: u64,
) -> Result<Captured, CaptureError> {
    capture_counted(src, dst, shift, max_bytes, &AtomicU64::new(0))
}

/// Bytes of one file copied between two additions to the counter: a
/// large file's copy shows progress as it goes.
const COUNT_EVERY: u64 = 8 << 20;

/// `capture`, adding the bytes of content it copies to `counter` as it
/// goes (every `COUNT_EVERY` bytes of a file, and at its end), so
/// another thread can show how far it has got.
pub fn capture_counted(
    src: &Path,
    dst: &Path,
    shift: Shift,
    max_bytes: u64,
    counter: &AtomicU64,
) -> Result<Captured, CaptureError> {
    let dir = |p: &Path| {
        rustix::fs::open(
            p,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    let (s, d) = (
        dir(src).map_err(std::io::Error::from)?,
        dir(dst).map_err(std::io::Error::from)?,
    );
    let mut st = State {
        shift,
        max_bytes,
        counter,
        done: Captured::default(),
        links: HashMap::new(),
    };
    let root = rustix::fs::fstat(&s).map_err(std::io::Error::from)?;
    copy_dir(&s, std::sync::Arc::new(d), &mut st)?;
    // The root's own owner, mode and opaqueness, like any directory's.
    let d = dir(dst).map_err(std::io::Error::from)?;
    finish_dir(&s, &d, &root, &st.shift)?;
    Ok(st.done)
}

fn copy_dir(
    s: &OwnedFd,
    d: std::sync::Arc<OwnedFd>,
    st: &mut State<'_>,
) -> Result<(), CaptureError> {
    for leaf in read_names(s)? {
        let n = name(&leaf);
        let meta =
            rustix::fs::statat(s, n, AtFlags::SYMLINK_NOFOLLOW).map_err(std::io::Error::from)?;
        let whiteout =
            FileType::from_raw_mode(meta.st_mode) == FileType::CharacterDevice && meta.st_rdev == 0;
        // Overlayfs makes a whiteout with its mounter's ids (the host's
        // root), not the deleter's: it is the new root's, whoever it was.
        let (uid, gid) = if whiteout {
            (st.shift.to, st.shift.to)
        } else {
            (st.shift.map(meta.st_uid)?, st.shift.map(meta.st_gid)?)
        };
        let mode = Mode::from_raw_mode(meta.st_mode & 0o7777);
        match FileType::from_raw_mode(meta.st_mode) {
            FileType::Directory => {
                rustix::fs::mkdirat(&*d, n, Mode::from_raw_mode(0o700))
                    .map_err(std::io::Error::from)?;
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let sd =
                    rustix::fs::openat(s, n, flags, Mode::empty()).map_err(std::io::Error::from)?;
                same_entry(&sd, &meta)?;
                let dd = std::sync::Arc::new(
                    rustix::fs::openat(&*d, n, flags, Mode::empty())
                        .map_err(std::io::Error::from)?,
                );
                copy_dir(&sd, dd.clone(), st)?;
                finish_dir(&sd, &dd, &meta, &st.shift)?;
            }
            FileType::RegularFile => {
                let key = (meta.st_dev, meta.st_ino);
                if meta.st_nlink > 1
                    && let Some((first_dir, first)) = st.links.get(&key)
                {
                    rustix::fs::linkat(&**first_dir, name(first), &*d, n, AtFlags::empty())
                        .map_err(std::io::Error::from)?;
                    st.done.entries += 1;
                    continue;
                }
                let sf = rustix::fs::openat(
                    s,
                    n,
                    OFlags::RDONLY
                        | OFlags::NOFOLLOW
                        | OFlags::NONBLOCK
                        | OFlags::NOCTTY
                        | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(std::io::Error::from)?;
                same_entry(&sf, &meta)?;
                let size = meta.st_size.max(0) as u64;
                if st.done.bytes + size > st.max_bytes {
                    return Err(CaptureError::TooLarge(st.max_bytes));
                }
                let df = rustix::fs::openat(
                    &*d,
                    n,
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(std::io::Error::from)?;
                let mut from = std::fs::File::from(sf);
                let mut to = std::fs::File::from(df);
                // At most what was listed: a file that grows meanwhile
                // cannot blow the budget. In steps, counted as they go.
                let mut copied = 0u64;
                while copied < size {
                    let step = (size - copied).min(COUNT_EVERY);
                    let n = std::io::copy(&mut std::io::Read::take(&mut from, step), &mut to)?;
                    if n == 0 {
                        break;
                    }
                    copied += n;
                    st.counter.fetch_add(n, Ordering::Relaxed);
                }
                to.flush()?;
                st.done.bytes += copied;
                copy_user_xattrs(&from, &to)?;
                rustix::fs::fchown(&to, Some(uid_of(uid)), Some(gid_of(gid)))
                    .map_err(std::io::Error::from)?;
                rustix::fs::fchmod(&to, mode).map_err(std::io::Error::from)?;
                rustix::fs::futimens(&to, &stamps(&meta)).map_err(std::io::Error::from)?;
                if meta.st_nlink > 1 {
                    st.links.insert(key, (d.clone(), leaf.clone()));
                }
            }
            FileType::Symlink => {
                let target =
                    rustix::fs::readlinkat(s, n, Vec::new()).map_err(std::io::Error::from)?;
                rustix::fs::symlinkat(target.as_c_str(), &*d, n).map_err(std::io::Error::from)?;
                leaf_owner_and_times(&d, n, uid, gid, &meta)?;
            }
            FileType::CharacterDevice if meta.st_rdev == 0 => {
                // An overlay whiteout: a file the sandbox deleted.
                rustix::fs::mknodat(&*d, n, FileType::CharacterDevice, Mode::empty(), 0)
                    .map_err(std::io::Error::from)?;
                leaf_owner_and_times(&d, n, uid, gid, &meta)?;
            }
            FileType::Fifo => {
                rustix::fs::mknodat(&*d, n, FileType::Fifo, mode, 0)
                    .map_err(std::io::Error::from)?;
                leaf_owner_and_times(&d, n, uid, gid, &meta)?;
            }
            FileType::Socket => {
                st.done.sockets += 1;
                continue;
            }
            other => {
                return Err(CaptureError::Refused(format!(
                    "{}: a {other:?} cannot be captured",
                    String::from_utf8_lossy(&leaf)
                )));
            }
        }
        st.done.entries += 1;
    }
    Ok(())
}

/// The opened fd is the entry that was listed (not one swapped in since).
fn same_entry(fd: &OwnedFd, listed: &rustix::fs::Stat) -> Result<(), CaptureError> {
    let now = rustix::fs::fstat(fd).map_err(std::io::Error::from)?;
    if (now.st_dev, now.st_ino) != (listed.st_dev, listed.st_ino) {
        return Err(CaptureError::Refused(
            "the tree changed while it was captured".into(),
        ));
    }
    Ok(())
}

/// A directory's owner, mode, opaqueness, xattrs and times, set once its
/// entries are in (they would change its times).
fn finish_dir(
    s: &OwnedFd,
    d: &OwnedFd,
    meta: &rustix::fs::Stat,
    shift: &Shift,
) -> Result<(), CaptureError> {
    let mut v = [0u8; 1];
    if rustix::fs::fgetxattr(s, XATTR_OPAQUE, &mut v[..]).is_ok_and(|n| n == 1 && v[0] == b'y') {
        rustix::fs::fsetxattr(d, XATTR_OPAQUE, b"y", rustix::fs::XattrFlags::empty())
            .map_err(std::io::Error::from)?;
    }
    copy_user_xattrs(s, d)?;
    let (uid, gid) = (shift.map(meta.st_uid)?, shift.map(meta.st_gid)?);
    rustix::fs::fchown(d, Some(uid_of(uid)), Some(gid_of(gid))).map_err(std::io::Error::from)?;
    rustix::fs::fchmod(d, Mode::from_raw_mode(meta.st_mode & 0o7777))
        .map_err(std::io::Error::from)?;
    rustix::fs::futimens(d, &stamps(meta)).map_err(std::io::Error::from)?;
    Ok(())
}

/// `user.*` xattrs only: `trusted.*` and `security.*` ones are the
/// host's to set (a file capability would carry the sandbox's root id).
fn copy_user_xattrs(
    s: &impl std::os::fd::AsFd,
    d: &impl std::os::fd::AsFd,
) -> Result<(), CaptureError> {
    let mut names = vec![0u8; 64 * 1024];
    let n = match rustix::fs::flistxattr(s, &mut names[..]) {
        Ok(n) => n,
        Err(rustix::io::Errno::NOTSUP) => return Ok(()),
        Err(e) => return Err(std::io::Error::from(e).into()),
    };
    for key in names[..n]
        .split(|b| *b == 0)
        .filter(|k| k.starts_with(b"user."))
    {
        let key = std::ffi::CString::new(key).expect("no NUL in a split name");
        let mut value = vec![0u8; 64 * 1024];
        let len = rustix::fs::fgetxattr(s, key.as_c_str(), &mut value[..])
            .map_err(std::io::Error::from)?;
        rustix::fs::fsetxattr(
            d,
            key.as_c_str(),
            &value[..len],
            rustix::fs::XattrFlags::empty(),
        )
        .map_err(std::io::Error::from)?;
    }
    Ok(())
}

fn leaf_owner_and_times(
    d: &OwnedFd,
    n: &Path,
    uid: u32,
    gid: u32,
    meta: &rustix::fs::Stat,
) -> Result<(), CaptureError> {
    rustix::fs::chownat(
        d,
        n,
        Some(uid_of(uid)),
        Some(gid_of(gid)),
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .map_err(std::io::Error::from)?;
    rustix::fs::utimensat(d, n, &stamps(meta), AtFlags::SYMLINK_NOFOLLOW)
        .map_err(std::io::Error::from)?;
    Ok(())
}

fn uid_of(id: u32) -> rustix::fs::Uid {
    rustix::fs::Uid::from_raw(id)
}

fn gid_of(id: u32) -> rustix::fs::Gid {
    rustix::fs::Gid::from_raw(id)
}

fn stamps(m: &rustix::fs::Stat) -> Timestamps {
    Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: m.st_atime,
            tv_nsec: m.st_atime_nsec as _,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: m.st_mtime,
            tv_nsec: m.st_mtime_nsec as _,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const BASE: u32 = 200_000;
    const SHIFT: Shift = Shift {
        from: BASE,
        to: 0,
        len: 65_536,
    };

    fn chown(p: &Path, uid: u32) {
        std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
    }

    /// A tree as a sandbox with ids from BASE would leave it.
    fn sandbox_tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("usr/local/bin")).unwrap();
        std::fs::write(r.join("usr/local/bin/tool"), b"#!/bin/sh\necho tool\n").unwrap();
        std::fs::hard_link(r.join("usr/local/bin/tool"), r.join("usr/local/bin/alias")).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", r.join("usr/local/bin/escape")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            r.join("gone"),
            FileType::CharacterDevice,
            Mode::empty(),
            0,
        )
        .unwrap();
        std::fs::create_dir(r.join("opaque")).unwrap();
        rustix::fs::setxattr(
            r.join("opaque"),
            XATTR_OPAQUE,
            b"y",
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
        rustix::fs::setxattr(
            r.join("usr/local/bin/tool"),
            "user.origin",
            b"pip",
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            r.join("pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(r.join("sock")).unwrap();
        for p in [
            "",
            "usr",
            "usr/local",
            "usr/local/bin",
            "usr/local/bin/tool",
            "usr/local/bin/escape",
            "opaque",
            "pipe",
            "sock",
        ] {
            chown(&r.join(p), BASE);
        }
        chown(&r.join("usr/local/bin/tool"), BASE + 1000);
        // Overlayfs makes whiteouts as its mounter, the host's root.
        chown(&r.join("gone"), 0);
        // After the chown, which clears set-id bits.
        std::fs::set_permissions(
            r.join("usr/local/bin/tool"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        t
    }

    #[test]
    fn a_sandbox_tree_comes_back_with_its_own_owners() {
        let src = sandbox_tree();
        let dst = tempfile::tempdir().unwrap();
        let done = capture(src.path(), dst.path(), SHIFT, 1 << 20).unwrap();
        let d = dst.path();
        assert_eq!(done.sockets, 1);
        assert_eq!(done.bytes, 20, "the hardlinked file counts once");
        let tool = std::fs::symlink_metadata(d.join("usr/local/bin/tool")).unwrap();
        assert_eq!((tool.uid(), tool.gid()), (1000, 1000));
        assert_eq!(
            tool.mode() & 0o7777,
            0o4755,
            "set-id bits survive the chown"
        );
        assert_eq!(
            std::fs::read(d.join("usr/local/bin/tool")).unwrap(),
            b"#!/bin/sh\necho tool\n"
        );
        let alias = std::fs::symlink_metadata(d.join("usr/local/bin/alias")).unwrap();
        assert_eq!(alias.ino(), tool.ino(), "a hardlink stays one file");
        assert_eq!(
            std::fs::read_link(d.join("usr/local/bin/escape")).unwrap(),
            Path::new("/etc/shadow"),
            "a symlink is copied as a link, not followed"
        );
        assert_eq!(
            std::fs::symlink_metadata(d.join("usr/local/bin/escape"))
                .unwrap()
                .uid(),
            0
        );
        let gone = std::fs::symlink_metadata(d.join("gone")).unwrap();
        assert!(
            std::os::unix::fs::FileTypeExt::is_char_device(&gone.file_type()) && gone.rdev() == 0
        );
        assert_eq!(gone.uid(), 0, "a whiteout is the image's root's");
        let mut v = [0u8; 1];
        assert_eq!(
            rustix::fs::getxattr(d.join("opaque"), XATTR_OPAQUE, &mut v[..]).unwrap(),
            1
        );
        let mut v = [0u8; 8];
        let n =
            rustix::fs::getxattr(d.join("usr/local/bin/tool"), "user.origin", &mut v[..]).unwrap();
        assert_eq!(&v[..n], b"pip");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(
            &std::fs::symlink_metadata(d.join("pipe"))
                .unwrap()
                .file_type()
        ));
        assert!(!d.join("sock").exists());
        assert_eq!(
            std::fs::symlink_metadata(d).unwrap().uid(),
            0,
            "the root too"
        );
        assert_eq!(
            std::fs::symlink_metadata(src.path().join("usr/local/bin/tool"))
                .unwrap()
                .uid(),
            BASE + 1000,
            "the source is left as it was"
        );
    }

    #[test]
    fn what_a_sandbox_cannot_make_fails_the_capture() {
        let src = sandbox_tree();
        // An owner outside the sandbox's range (the host's root).
        chown(&src.path().join("usr/local/bin/escape"), 0);
        let dst = tempfile::tempdir().unwrap();
        assert!(matches!(
            capture(src.path(), dst.path(), SHIFT, 1 << 20),
            Err(CaptureError::Refused(m)) if m.contains("outside")
        ));
        // A real device.
        let src = sandbox_tree();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            src.path().join("null"),
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, 3),
        )
        .unwrap();
        chown(&src.path().join("null"), BASE);
        let dst = tempfile::tempdir().unwrap();
        assert!(matches!(
            capture(src.path(), dst.path(), SHIFT, 1 << 20),
            Err(CaptureError::Refused(_))
        ));
        // Over the budget.
        let src = sandbox_tree();
        let dst = tempfile::tempdir().unwrap();
        assert!(matches!(
            capture(src.path(), dst.path(), SHIFT, 10),
            Err(CaptureError::TooLarge(10))
        ));
    }

    #[test]
    fn a_captured_tree_goes_into_another_sandboxs_range() {
        let src = sandbox_tree();
        let image = tempfile::tempdir().unwrap();
        capture(src.path(), image.path(), SHIFT, 1 << 20).unwrap();
        let other = tempfile::tempdir().unwrap();
        let into = Shift {
            from: 0,
            to: BASE + 65_536,
            len: 65_536,
        };
        capture(image.path(), other.path(), into, 1 << 20).unwrap();
        let tool = std::fs::symlink_metadata(other.path().join("usr/local/bin/tool")).unwrap();
        assert_eq!(tool.uid(), BASE + 65_536 + 1000);
        assert_eq!(
            std::fs::symlink_metadata(other.path()).unwrap().uid(),
            BASE + 65_536
        );
    }

    #[test]
    fn captured_layers_are_content_addressed_whiteouts_included() {
        let data = tempfile::tempdir().unwrap();
        let store = crate::image::ImageStore::new(data.path(), 1 << 30).unwrap();
        let capture_layer = |src: &std::path::Path, shift, budget| {
            store
                .stage(src, shift, budget)
                .and_then(|s| store.publish_staged(s))
        };
        let a = sandbox_tree();
        let (id_a, bytes) = capture_layer(a.path(), SHIFT, 1 << 20).unwrap();
        assert_eq!(bytes, 20);
        assert!(store.layer_dir(&id_a).join("usr/local/bin/tool").is_file());
        // The same content again: the same layer, kept once.
        let b = sandbox_tree();
        let (id_b, _) = capture_layer(b.path(), SHIFT, 1 << 20).unwrap();
        assert_eq!(id_a, id_b);
        // A whiteout less is other content.
        std::fs::remove_file(b.path().join("gone")).unwrap();
        let (id_c, _) = capture_layer(b.path(), SHIFT, 1 << 20).unwrap();
        assert_ne!(id_a, id_c);
        // A refused capture leaves nothing behind in the store.
        chown(&b.path().join("opaque"), 0);
        assert!(capture_layer(b.path(), SHIFT, 1 << 20).is_err());
        assert_eq!(std::fs::read_dir(store.tmp_dir()).unwrap().count(), 0);
    }
}
