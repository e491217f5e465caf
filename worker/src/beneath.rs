//! File operations confined to one directory tree on the host, for the
//! worker's own writes into trees whose content comes from users: image
//! layers being unpacked, flattened images, a sandbox's rootfs. Every
//! lookup goes through openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
//! so neither `..` nor a symlink planted by an image can take a write
//! outside the tree; the last component is then acted on with a *at call
//! relative to its parent's fd, never by path.

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS)
    .union(ResolveFlags::NO_XDEV);

/// A path inside a tree, checked: relative, no `..`, no empty or `.`
/// components left. The empty path is the tree's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelPath(Vec<Vec<u8>>);

/// Why a path was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadPath {
    Absolute,
    Climbs,
    Nul,
}

impl RelPath {
    /// Accepts `a/b`, `./a/b/`, `a//b`; refuses `/a`, `a/../b` and NULs.
    pub fn parse(raw: &[u8]) -> Result<RelPath, BadPath> {
        if raw.contains(&0) {
            return Err(BadPath::Nul);
        }
        if raw.starts_with(b"/") {
            return Err(BadPath::Absolute);
        }
        let mut parts = Vec::new();
        for c in raw.split(|b| *b == b'/') {
            match c {
                b"" | b"." => {}
                b".." => return Err(BadPath::Climbs),
                c => parts.push(c.to_vec()),
            }
        }
        Ok(RelPath(parts))
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The parent and the last component; None for the root.
    pub fn split(&self) -> Option<(RelPath, &[u8])> {
        let (leaf, parent) = self.0.split_last()?;
        Some((RelPath(parent.to_vec()), leaf))
    }

    pub fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.0.iter().map(Vec::as_slice)
    }

    pub fn join(&self, name: &[u8]) -> RelPath {
        let mut v = self.0.clone();
        v.push(name.to_vec());
        RelPath(v)
    }

    /// For openat2: "." for the root.
    fn as_path(&self) -> std::path::PathBuf {
        if self.0.is_empty() {
            return ".".into();
        }
        let joined = self.0.join(&b'/');
        Path::new(OsStr::from_bytes(&joined)).to_path_buf()
    }

    pub fn display(&self) -> String {
        String::from_utf8_lossy(&self.0.join(&b'/')).into_owned()
    }
}

pub fn name(b: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(b))
}

/// The root of a confined tree.
pub struct Tree {
    fd: OwnedFd,
}

impl Tree {
    pub fn open(dir: &Path) -> std::io::Result<Tree> {
        let fd = rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Tree { fd })
    }

    /// An fd for `rel`, resolved beneath the root with no symlink on the
    /// way or at the end (RESOLVE_NO_SYMLINKS covers the last component
    /// too). ELOOP or EXDEV means a symlink or an escape.
    pub fn open_at(&self, rel: &RelPath, flags: OFlags) -> std::io::Result<OwnedFd> {
        Ok(rustix::fs::openat2(
            &self.fd,
            rel.as_path(),
            flags | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        )?)
    }

    /// A directory fd (O_PATH) for *at calls.
    pub fn dir(&self, rel: &RelPath) -> std::io::Result<OwnedFd> {
        self.open_at(rel, OFlags::PATH | OFlags::DIRECTORY)
    }

    /// Like `dir`, creating missing directories (mode 0755, root-owned)
    /// one component at a time.
    pub fn dir_all(&self, rel: &RelPath) -> std::io::Result<OwnedFd> {
        let mut fd = self.dir(&RelPath(vec![]))?;
        for c in rel.components() {
            match rustix::fs::mkdirat(&fd, name(c), Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            fd = rustix::fs::openat2(
                &fd,
                name(c),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                RESOLVE,
            )?;
        }
        Ok(fd)
    }

    /// What is at `rel`, without following a symlink; None if nothing.
    pub fn stat(&self, rel: &RelPath) -> std::io::Result<Option<rustix::fs::Stat>> {
        let Some((parent, leaf)) = rel.split() else {
            return Ok(Some(rustix::fs::fstat(&self.fd)?));
        };
        let dir = match self.dir(&parent) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir, name(leaf), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Ok(Some(s)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes `rel` and, for a directory, everything under it, through
    /// fds only. Nothing there is not an error.
    pub fn remove(&self, rel: &RelPath) -> std::io::Result<()> {
        let Some((parent, leaf)) = rel.split() else {
            return Err(std::io::Error::other("refusing to remove the tree's root"));
        };
        let dir = match self.dir(&parent) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
            Err(e) => return Err(e),
        };
        remove_entry(&dir, leaf)
    }
}

/// Removes one entry of `dir`, recursing into directories by fd.
pub fn remove_entry(dir: &OwnedFd, leaf: &[u8]) -> std::io::Result<()> {
    let st = match rustix::fs::statat(dir, name(leaf), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory {
        let sub = rustix::fs::openat2(
            dir,
            name(leaf),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        )?;
        for child in read_names(&sub)? {
            remove_entry(&sub, &child)?;
        }
        rustix::fs::unlinkat(dir, name(leaf), AtFlags::REMOVEDIR)?;
    } else {
        rustix::fs::unlinkat(dir, name(leaf), AtFlags::empty())?;
    }
    Ok(())
}

/// The names in a directory (opened for reading), without `.` and `..`.
pub fn read_names(dir: &impl AsFd) -> std::io::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for e in rustix::fs::Dir::read_from(dir)? {
        let e = e?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(n.to_vec());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked() {
        assert_eq!(RelPath::parse(b"./a//b/./c/").unwrap().display(), "a/b/c");
        assert!(RelPath::parse(b".").unwrap().is_root());
        assert_eq!(RelPath::parse(b"/etc/passwd"), Err(BadPath::Absolute));
        assert_eq!(RelPath::parse(b"a/../../b"), Err(BadPath::Climbs));
        assert_eq!(RelPath::parse(b"a/\0"), Err(BadPath::Nul));
    }

    #[test]
    fn a_symlink_on_the_way_is_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("tree")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("tree/link")).unwrap();
        let tree = Tree::open(&t.path().join("tree")).unwrap();
        let through = RelPath::parse(b"link/x").unwrap();
        let e = tree.dir_all(&through).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        // Removing the link removes the link, not what it points to.
        std::fs::write(outside.path().join("keep"), b"x").unwrap();
        tree.remove(&RelPath::parse(b"link").unwrap()).unwrap();
        assert!(outside.path().join("keep").exists());
    }
}
