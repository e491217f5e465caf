//! Unpacks one image layer (a tar stream) into an empty directory of the
//! layer store, refusing what could reach outside it or into the host:
//! absolute paths, `..`, entries whose parent is a symlink (tar-slip
//! through a link planted earlier in the same layer), hardlinks whose
//! target is not a file of this layer, and device nodes. A refused entry
//! fails the whole layer: a half-applied image is worse than none.
//!
//! OCI whiteouts become overlayfs's own: `.wh.NAME` a 0:0 character
//! device, `.wh..wh..opq` the `trusted.overlay.opaque` xattr, so the
//! layer directory can be a lower layer of an overlay as it is.

use crate::beneath::{self, BadPath, RelPath, Tree, name};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timestamps};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("entry {0:?} has an absolute path")]
    Absolute(String),
    #[error("entry {0:?} climbs out of the layer with ..")]
    Climbs(String),
    #[error("entry {0:?} has a NUL in its name")]
    Nul(String),
    #[error("entry {0:?} is a device node")]
    Device(String),
    #[error("hardlink {0:?} points outside the layer, or at nothing in it: {1:?}")]
    HardlinkEscapes(String, String),
    #[error("entry {0:?} would be written through a symlink")]
    ThroughSymlink(String),
    #[error("entry {0:?} has an unsupported type {1:?}")]
    Unsupported(String, tar::EntryType),
    #[error("the layer unpacks to more than {0} bytes")]
    TooLarge(u64),
    #[error("entry {0:?}: {1}")]
    Io(String, std::io::Error),
    #[error("reading the layer: {0}")]
    Read(#[from] std::io::Error),
}

/// What a layer held.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unpacked {
    pub bytes: u64,
    pub entries: u64,
}

const WHITEOUT: &[u8] = b".wh.";
const OPAQUE: &[u8] = b".wh..wh..opq";

fn path_of(raw: &[u8]) -> Result<RelPath, Refused> {
    let shown = || String::from_utf8_lossy(raw).into_owned();
    RelPath::parse(raw).map_err(|e| match e {
        BadPath::Absolute => Refused::Absolute(shown()),
        BadPath::Climbs => Refused::Climbs(shown()),
        BadPath::Nul => Refused::Nul(shown()),
    })
}

/// ELOOP/EXDEV from a confined lookup mean a symlink or an escape.
fn io(path: &RelPath, e: std::io::Error) -> Refused {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EXDEV) => Refused::ThroughSymlink(path.display()),
        _ => Refused::Io(path.display(), e),
    }
}

/// Unpacks `layer` into `dest` (an empty directory), at most `max_bytes`
/// of file content.
pub fn unpack(layer: impl Read, dest: &Path, max_bytes: u64) -> Result<Unpacked, Refused> {
    let tree = Tree::open(dest)?;
    let mut archive = tar::Archive::new(layer);
    let mut done = Unpacked::default();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = path_of(&entry.path_bytes())?;
        let Some((parent, leaf)) = path.split() else {
            // "./" itself: the layer's root keeps our mode and owner.
            continue;
        };
        let leaf = leaf.to_vec();
        let dir = tree.dir_all(&parent).map_err(|e| io(&path, e))?;
        if leaf == OPAQUE {
            let d = tree
                .open_at(&parent, OFlags::RDONLY | OFlags::DIRECTORY)
                .map_err(|e| io(&path, e))?;
            rustix::fs::fsetxattr(
                &d,
                "trusted.overlay.opaque",
                b"y",
                rustix::fs::XattrFlags::empty(),
            )
            .map_err(|e| io(&path, e.into()))?;
            continue;
        }
        if let Some(hidden) = leaf.strip_prefix(WHITEOUT) {
            let target = parent.join(hidden);
            tree.remove(&target).map_err(|e| io(&target, e))?;
            rustix::fs::mknodat(
                &dir,
                name(hidden),
                FileType::CharacterDevice,
                Mode::empty(),
                rustix::fs::makedev(0, 0),
            )
            .map_err(|e| io(&target, e.into()))?;
            done.entries += 1;
            continue;
        }
        let h = entry.header().clone();
        let (uid, gid) = (h.uid()? as u32, h.gid()? as u32);
        let mode = Mode::from_raw_mode(h.mode()? & 0o7777);
        let kind = h.entry_type();
        let here = || path.display();
        use tar::EntryType as T;
        match kind {
            T::Directory => {
                let existing = rustix::fs::statat(&dir, name(&leaf), AtFlags::SYMLINK_NOFOLLOW);
                match existing {
                    Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Directory => {}
                    Ok(_) => {
                        beneath::remove_entry(&dir, &leaf).map_err(|e| io(&path, e))?;
                        mkdir(&dir, &leaf).map_err(|e| io(&path, e))?;
                    }
                    Err(_) => mkdir(&dir, &leaf).map_err(|e| io(&path, e))?,
                }
                let d = tree
                    .open_at(&path, OFlags::RDONLY | OFlags::DIRECTORY)
                    .map_err(|e| io(&path, e))?;
                own(&d, uid, gid, mode).map_err(|e| io(&path, e))?;
            }
            T::Regular | T::Continuous | T::GNUSparse => {
                replace(&dir, &leaf).map_err(|e| io(&path, e))?;
                let f = rustix::fs::openat(
                    &dir,
                    name(&leaf),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(|e| io(&path, e.into()))?;
                let mut file = std::fs::File::from(f);
                let left = max_bytes.saturating_sub(done.bytes);
                let n = std::io::copy(&mut (&mut entry).take(left + 1), &mut file)
                    .map_err(|e| io(&path, e))?;
                if n > left {
                    return Err(Refused::TooLarge(max_bytes));
                }
                done.bytes += n;
                own(&file, uid, gid, mode).map_err(|e| io(&path, e))?;
                times(&dir, &leaf, h.mtime().unwrap_or(0)).map_err(|e| io(&path, e))?;
            }
            T::Symlink => {
                let target = entry
                    .link_name_bytes()
                    .ok_or_else(|| Refused::Unsupported(here(), kind))?;
                if target.contains(&0) {
                    return Err(Refused::Nul(here()));
                }
                replace(&dir, &leaf).map_err(|e| io(&path, e))?;
                // The target is only ever read inside the sandbox's root;
                // the worker never follows it.
                rustix::fs::symlinkat(name(&target), &dir, name(&leaf))
                    .map_err(|e| io(&path, e.into()))?;
                chown_at(&dir, &leaf, uid, gid).map_err(|e| io(&path, e))?;
                times(&dir, &leaf, h.mtime().unwrap_or(0)).map_err(|e| io(&path, e))?;
            }
            T::Link => {
                let raw = entry
                    .link_name_bytes()
                    .ok_or_else(|| Refused::Unsupported(here(), kind))?;
                let escapes =
                    || Refused::HardlinkEscapes(here(), String::from_utf8_lossy(&raw).into_owned());
                let target = RelPath::parse(&raw).map_err(|_| escapes())?;
                let (tparent, tleaf) = target.split().ok_or_else(escapes)?;
                let tdir = tree.dir(&tparent).map_err(|_| escapes())?;
                let st = rustix::fs::statat(&tdir, name(tleaf), AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|_| escapes())?;
                if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                    return Err(escapes());
                }
                if target != path {
                    replace(&dir, &leaf).map_err(|e| io(&path, e))?;
                    rustix::fs::linkat(&tdir, name(tleaf), &dir, name(&leaf), AtFlags::empty())
                        .map_err(|e| io(&path, e.into()))?;
                }
            }
            T::Fifo => {
                replace(&dir, &leaf).map_err(|e| io(&path, e))?;
                rustix::fs::mknodat(&dir, name(&leaf), FileType::Fifo, mode, 0)
                    .map_err(|e| io(&path, e.into()))?;
                chown_at(&dir, &leaf, uid, gid).map_err(|e| io(&path, e))?;
            }
            T::Char | T::Block => return Err(Refused::Device(here())),
            other => return Err(Refused::Unsupported(here(), other)),
        }
        done.entries += 1;
    }
    Ok(done)
}

fn mkdir(dir: &OwnedFd, leaf: &[u8]) -> std::io::Result<()> {
    Ok(rustix::fs::mkdirat(
        dir,
        name(leaf),
        Mode::from_raw_mode(0o755),
    )?)
}

/// A later entry replaces an earlier one of the same name (tar's rule);
/// a directory is only replaced by a directory.
fn replace(dir: &OwnedFd, leaf: &[u8]) -> std::io::Result<()> {
    match rustix::fs::statat(dir, name(leaf), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Directory => {
            beneath::remove_entry(dir, leaf)
        }
        Ok(_) => Ok(rustix::fs::unlinkat(dir, name(leaf), AtFlags::empty())?),
        Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Owns an entry of `dir` without following it (symlinks, FIFOs).
fn chown_at(dir: &OwnedFd, leaf: &[u8], uid: u32, gid: u32) -> std::io::Result<()> {
    Ok(rustix::fs::chownat(
        dir,
        name(leaf),
        Some(rustix::fs::Uid::from_raw(uid)),
        Some(rustix::fs::Gid::from_raw(gid)),
        AtFlags::SYMLINK_NOFOLLOW,
    )?)
}

/// Owner first, then mode: chown clears set-id bits.
fn own(fd: &impl std::os::fd::AsFd, uid: u32, gid: u32, mode: Mode) -> std::io::Result<()> {
    rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(uid)),
        Some(rustix::fs::Gid::from_raw(gid)),
    )?;
    rustix::fs::fchmod(fd, mode)?;
    Ok(())
}

fn times(dir: &OwnedFd, leaf: &[u8], mtime: u64) -> std::io::Result<()> {
    let t = rustix::fs::Timespec {
        tv_sec: mtime.min(i64::MAX as u64) as i64,
        tv_nsec: 0,
    };
    rustix::fs::utimensat(
        dir,
        name(leaf),
        &Timestamps {
            last_access: t,
            last_modification: t,
        },
        AtFlags::SYMLINK_NOFOLLOW,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar built entry by entry, with names tar::Builder would refuse.
    struct Raw(Vec<u8>);

    impl Raw {
        fn new() -> Raw {
            Raw(Vec::new())
        }
        fn entry(mut self, path: &[u8], kind: tar::EntryType, link: &[u8], data: &[u8]) -> Raw {
            let mut h = tar::Header::new_old();
            {
                let old = h.as_old_mut();
                old.name[..path.len()].copy_from_slice(path);
                old.linkname[..link.len()].copy_from_slice(link);
            }
            h.set_entry_type(kind);
            h.set_mode(if kind == tar::EntryType::Directory {
                0o755
            } else {
                0o644
            });
            h.set_size(data.len() as u64);
            h.set_uid(0);
            h.set_gid(0);
            h.set_cksum();
            self.0.extend_from_slice(h.as_bytes());
            self.0.extend_from_slice(data);
            self.0.resize(self.0.len().div_ceil(512) * 512, 0);
            self
        }
        fn file(self, path: &str, data: &str) -> Raw {
            self.entry(
                path.as_bytes(),
                tar::EntryType::Regular,
                b"",
                data.as_bytes(),
            )
        }
        fn done(mut self) -> Vec<u8> {
            self.0.extend_from_slice(&[0u8; 1024]);
            self.0
        }
    }

    fn run(tar: Vec<u8>) -> (tempfile::TempDir, Result<Unpacked, Refused>) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("layer")).unwrap();
        let r = unpack(&tar[..], &d.path().join("layer"), 1 << 30);
        (d, r)
    }

    #[test]
    fn files_links_and_whiteouts() {
        use tar::EntryType as T;
        let tar = Raw::new()
            .entry(b"./etc/", T::Directory, b"", b"")
            .file("./etc/os-release", "talon\n")
            .entry(b"etc/os", T::Symlink, b"/etc/os-release", b"")
            .entry(b"etc/hard", T::Link, b"./etc/os-release", b"")
            .entry(b"gone/.wh.old", T::Regular, b"", b"")
            .entry(b"opaque/.wh..wh..opq", T::Regular, b"", b"")
            .entry(b"pipe", T::Fifo, b"", b"")
            .done();
        let (d, r) = run(tar);
        let r = r.unwrap();
        let l = d.path().join("layer");
        assert_eq!(
            std::fs::read_to_string(l.join("etc/os-release")).unwrap(),
            "talon\n"
        );
        assert_eq!(
            std::fs::read_link(l.join("etc/os")).unwrap(),
            Path::new("/etc/os-release")
        );
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata(l.join("etc/hard")).unwrap().ino(),
            std::fs::metadata(l.join("etc/os-release")).unwrap().ino()
        );
        let wh = std::fs::symlink_metadata(l.join("gone/old")).unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(wh.file_type().is_char_device() && wh.rdev() == 0);
        assert!(!l.join("gone/.wh.old").exists());
        let mut buf = [0u8; 4];
        let n =
            rustix::fs::getxattr(l.join("opaque"), "trusted.overlay.opaque", &mut buf[..]).unwrap();
        assert_eq!(&buf[..n], b"y");
        assert!(
            std::fs::symlink_metadata(l.join("pipe"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(r.bytes, 6);
    }

    #[test]
    fn escapes_are_refused_and_nothing_outside_changes() {
        use tar::EntryType as T;
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("absolute", Raw::new().file("/tmp/talon-slip", "x").done()),
            ("dotdot", Raw::new().file("a/../../talon-slip", "x").done()),
            (
                "through a symlink",
                Raw::new()
                    .entry(b"out", T::Symlink, b"..", b"")
                    .file("out/talon-slip", "x")
                    .done(),
            ),
            (
                "through an absolute symlink",
                Raw::new()
                    .entry(b"etc", T::Symlink, b"/etc", b"")
                    .file("etc/talon-slip", "x")
                    .done(),
            ),
            (
                "hardlink out",
                Raw::new()
                    .entry(b"pw", T::Link, b"../../../../etc/passwd", b"")
                    .done(),
            ),
            (
                "absolute hardlink",
                Raw::new().entry(b"pw", T::Link, b"/etc/passwd", b"").done(),
            ),
            (
                "hardlink through a symlink",
                Raw::new()
                    .entry(b"e", T::Symlink, b"/etc", b"")
                    .entry(b"pw", T::Link, b"e/passwd", b"")
                    .done(),
            ),
            (
                "char device",
                Raw::new().entry(b"null", T::Char, b"", b"").done(),
            ),
            (
                "block device",
                Raw::new().entry(b"sda", T::Block, b"", b"").done(),
            ),
        ];
        let passwd = std::fs::read("/etc/passwd").unwrap();
        for (what, tar) in cases {
            let (d, r) = run(tar);
            assert!(r.is_err(), "{what}: accepted");
            assert!(
                !d.path().join("talon-slip").exists(),
                "{what}: wrote outside"
            );
            assert!(
                !Path::new("/tmp/talon-slip").exists(),
                "{what}: wrote to /tmp"
            );
            assert!(
                !Path::new("/etc/talon-slip").exists(),
                "{what}: wrote to /etc"
            );
            assert_eq!(std::fs::read("/etc/passwd").unwrap(), passwd, "{what}");
            if what.starts_with("hardlink") || what.starts_with("absolute hardlink") {
                assert!(!d.path().join("layer/pw").exists(), "{what}: linked");
            }
        }
    }

    #[test]
    fn a_size_limit_holds() {
        let tar = Raw::new().file("big", &"x".repeat(5000)).done();
        let d = tempfile::tempdir().unwrap();
        let r = unpack(&tar[..], d.path(), 4096);
        assert!(matches!(r, Err(Refused::TooLarge(4096))), "{r:?}");
    }
}
