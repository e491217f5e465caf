//! File operations inside the sandbox. Every path is resolved by the
//! kernel with openat2: relative paths (the workspace-scoped API) under the
//! workspace with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so neither `..`
//! nor a symlink anywhere on the way can leave it; absolute paths with
//! RESOLVE_IN_ROOT against the sandbox's root. The last component is then
//! acted on with a *at call relative to its parent's fd, never by path, so
//! a parent swapped for a symlink after the check changes nothing.
//! Writes are atomic: a temp file beside the target, fsync, rename.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use talon_proto::v1 as pb;
use tokio::sync::mpsc;
use tonic::Status;

use rustix::fs::ResolveFlags;
const RESOLVE_NO_MAGICLINKS: u64 = ResolveFlags::NO_MAGICLINKS.bits();
const RESOLVE_NO_SYMLINKS: u64 = ResolveFlags::NO_SYMLINKS.bits();
const RESOLVE_BENEATH: u64 = ResolveFlags::BENEATH.bits();
const RESOLVE_IN_ROOT: u64 = ResolveFlags::IN_ROOT.bits();
/// Names of the temp files atomic writes go through; watchers skip them.
pub const TEMP_PREFIX: &str = ".talon-write-";
/// Most entries ListDir returns.
pub const MAX_LIST: usize = 10_000;
const CHUNK: usize = 256 * 1024;

/// Set once openat2 answered ENOSYS (gVisor): `resolve` walks instead.
static NO_OPENAT2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// openat2(2) through rustix, or its rules walked in user space where the
/// kernel has no openat2 (see `resolve`): `dir` may be `libc::AT_FDCWD`;
/// the fd is close-on-exec.
pub(super) fn openat2(
    dir: RawFd,
    path: &CStr,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> std::io::Result<OwnedFd> {
    use std::sync::atomic::Ordering;
    // Tests stand in for a kernel without openat2.
    #[cfg(debug_assertions)]
    if std::env::var_os("TALON_AGENT_TEST_NO_OPENAT2").is_some() {
        NO_OPENAT2.store(true, Ordering::Relaxed);
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match kernel_openat2(dir, path, flags, mode, resolve) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            r => return r,
        }
    }
    resolve::openat2(dir, path, flags, mode, resolve)
}

fn kernel_openat2(
    dir: RawFd,
    path: &CStr,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> std::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::from_bits_retain((flags | libc::O_CLOEXEC) as u32);
    let mode = Mode::from_raw_mode(mode);
    let resolve = ResolveFlags::from_bits_retain(resolve);
    let r = if dir == libc::AT_FDCWD {
        rustix::fs::openat2(rustix::fs::CWD, path, flags, mode, resolve)
    } else {
        // SAFETY: the caller holds `dir` open for the call.
        let dir = unsafe { std::os::fd::BorrowedFd::borrow_raw(dir) };
        rustix::fs::openat2(dir, path, flags, mode, resolve)
    };
    r.map_err(std::io::Error::from)
}

pub(super) fn cstr(s: &str) -> Result<CString, Status> {
    CString::new(s).map_err(|_| Status::invalid_argument("path contains NUL"))
}

/// Maps an errno to the status the API promises.
pub fn status(e: std::io::Error, path: &str) -> Status {
    match e.raw_os_error() {
        Some(libc::ENOENT) => Status::not_found(format!("{path}: no such file or directory")),
        Some(libc::EXDEV) | Some(libc::ELOOP) => Status::permission_denied(format!(
            "{path}: escapes the workspace or crosses a symlink"
        )),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => {
            Status::permission_denied(format!("{path}: permission denied"))
        }
        Some(libc::EEXIST) => Status::already_exists(format!("{path}: already exists")),
        Some(libc::EAGAIN) => Status::aborted(format!(
            "{path}: changed while it was resolved (renamed meanwhile); retry"
        )),
        Some(libc::ENOTDIR) => Status::failed_precondition(format!("{path}: not a directory")),
        Some(libc::EISDIR) => Status::failed_precondition(format!("{path}: is a directory")),
        Some(libc::ENOTEMPTY) => {
            Status::failed_precondition(format!("{path}: directory not empty"))
        }
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => Status::resource_exhausted(format!(
            "{path}: no space left on the sandbox's disk (its size is resources.diskMib)"
        )),
        Some(libc::ENAMETOOLONG) => Status::invalid_argument(format!("{path}: name too long")),
        // What the caller asked can't be done to this path: user errors,
        // never the agent's (they were 500s).
        Some(libc::EBUSY) | Some(libc::ETXTBSY) => Status::failed_precondition(format!(
            "{path}: busy (a mount point, a device or a running program can't be replaced)"
        )),
        Some(libc::ENXIO) | Some(libc::ENODEV) => {
            Status::failed_precondition(format!("{path}: no such device (a special file)"))
        }
        Some(libc::EINVAL) => Status::invalid_argument(format!(
            "{path}: invalid for this path (e.g. moving a directory into itself)"
        )),
        Some(libc::EMLINK) => Status::failed_precondition(format!("{path}: too many links")),
        Some(libc::EFBIG) => Status::resource_exhausted(format!("{path}: file too large")),
        Some(libc::EOPNOTSUPP) => {
            Status::failed_precondition(format!("{path}: not supported by this file system"))
        }
        _ => Status::internal(format!("{path}: {e}")),
    }
}

pub(super) fn last_err() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// A path split for *at calls.
struct Target {
    /// What the path is relative to: the workspace or the root.
    base: RawFd,
    resolve: u64,
    /// The parent, relative to `base` ("." for the base itself).
    parent: CString,
    /// The last component, or None when the path is the base itself.
    leaf: Option<CString>,
    /// The absolute path, for messages and FileInfo.
    shown: String,
    /// The path ended in `/` or `/.`: as in POSIX, it names a directory,
    /// and a file there is ENOTDIR (`write lnroot/.` once replaced the
    /// symlink `lnroot` with a file).
    dir_only: bool,
}

pub struct Files {
    workspace: PathBuf,
    workspace_fd: OwnedFd,
    root_fd: OwnedFd,
}

impl Files {
    pub fn new(workspace: PathBuf) -> std::io::Result<Files> {
        let ws = CString::new(workspace.as_os_str().as_encoded_bytes())
            .map_err(std::io::Error::other)?;
        let workspace_fd = openat2(libc::AT_FDCWD, &ws, libc::O_DIRECTORY | libc::O_PATH, 0, 0)?;
        let root_fd = openat2(libc::AT_FDCWD, c"/", libc::O_DIRECTORY | libc::O_PATH, 0, 0)?;
        Ok(Files {
            workspace,
            workspace_fd,
            root_fd,
        })
    }

    fn target(&self, path: &str) -> Result<Target, Status> {
        if path.contains('\0') {
            return Err(Status::invalid_argument("path contains NUL"));
        }
        let absolute = path.starts_with('/');
        let (base, resolve, rel) = if let Some(abs) = path.strip_prefix('/') {
            (
                self.root_fd.as_raw_fd(),
                RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
                abs,
            )
        } else {
            (
                self.workspace_fd.as_raw_fd(),
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                path,
            )
        };
        // "dir/." and "." name the directory itself.
        let mut dir_only = rel.ends_with('/') || rel.ends_with("/.");
        let mut rel = rel.trim_end_matches('/');
        while let Some(r) = rel.strip_suffix("/.") {
            rel = r.trim_end_matches('/');
        }
        if rel == "." {
            rel = "";
        }
        dir_only &= !rel.is_empty();
        let shown = match (absolute, rel.is_empty()) {
            (true, _) => format!("/{rel}"),
            (false, true) => self.workspace.display().to_string(),
            (false, false) => self.workspace.join(rel).display().to_string(),
        };
        if rel.is_empty() {
            return Ok(Target {
                base,
                resolve,
                parent: c".".into(),
                leaf: None,
                shown,
                dir_only: false,
            });
        }
        let (parent, leaf) = match rel.rsplit_once('/') {
            Some((p, l)) => (if p.is_empty() { "." } else { p }, l),
            None => (".", rel),
        };
        if leaf == "." || leaf == ".." {
            return Err(Status::invalid_argument(format!(
                "{path}: the last component may not be . or .."
            )));
        }
        Ok(Target {
            base,
            resolve,
            parent: cstr(parent)?,
            leaf: Some(cstr(leaf)?),
            shown,
            dir_only,
        })
    }

    /// For a path that ends in `/`: what it names, if it exists, must be a
    /// directory (ENOTDIR otherwise). Whether it exists and is one.
    fn dir_only_check(t: &Target, parent: RawFd) -> Result<Option<bool>, Status> {
        let Some(leaf) = &t.leaf else {
            return Ok(Some(true));
        };
        match Self::info_at(parent, Some(leaf), &t.shown) {
            Ok(i) if i.r#type == pb::FileType::Directory as i32 => Ok(Some(true)),
            Ok(_) if t.dir_only => Err(status(
                std::io::Error::from_raw_os_error(libc::ENOTDIR),
                &t.shown,
            )),
            Ok(_) => Ok(Some(false)),
            Err(e) if e.code() == tonic::Code::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn open_parent(&self, t: &Target) -> Result<OwnedFd, Status> {
        openat2(
            t.base,
            &t.parent,
            libc::O_DIRECTORY | libc::O_RDONLY,
            0,
            t.resolve,
        )
        .map_err(|e| status(e, &t.shown))
    }

    fn info_at(dir: RawFd, leaf: Option<&CStr>, shown: &str) -> Result<pb::FileInfo, Status> {
        // SAFETY: zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat on a valid dirfd; empty path with AT_EMPTY_PATH for the dir itself.
        let r = unsafe {
            match leaf {
                Some(l) => libc::fstatat(dir, l.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW),
                None => libc::fstatat(dir, c"".as_ptr(), &mut st, libc::AT_EMPTY_PATH),
            }
        };
        if r != 0 {
            return Err(status(last_err(), shown));
        }
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => pb::FileType::File,
            libc::S_IFDIR => pb::FileType::Directory,
            libc::S_IFLNK => pb::FileType::Symlink,
            _ => pb::FileType::Other,
        };
        let symlink_target = if kind == pb::FileType::Symlink {
            let mut buf = vec![0u8; 4096];
            // SAFETY: readlinkat into a buffer of the given size.
            let n = unsafe {
                libc::readlinkat(
                    dir,
                    leaf.expect("symlink has a name").as_ptr(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )
            };
            if n > 0 {
                String::from_utf8_lossy(&buf[..n as usize]).into_owned()
            } else {
                String::new()
            }
        } else {
            String::new()
        };
        let name = shown.rsplit('/').next().unwrap_or_default().to_string();
        Ok(pb::FileInfo {
            path: shown.to_string(),
            name,
            r#type: kind as i32,
            size: st.st_size,
            mode: st.st_mode & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
            modify_time: Some(prost_types::Timestamp {
                seconds: st.st_mtime,
                nanos: st.st_mtime_nsec as i32,
            }),
            symlink_target,
        })
    }

    pub fn stat(&self, path: &str) -> Result<pb::FileInfo, Status> {
        let t = self.target(path)?;
        match &t.leaf {
            None => Self::info_at(t.base, None, &t.shown),
            Some(leaf) => {
                let parent = self.open_parent(&t)?;
                if t.dir_only {
                    Self::dir_only_check(&t, parent.as_raw_fd())?;
                }
                Self::info_at(parent.as_raw_fd(), Some(leaf), &t.shown)
            }
        }
    }

    fn open_dir(&self, t: &Target) -> Result<OwnedFd, Status> {
        let rel = match &t.leaf {
            None => t.parent.clone(),
            Some(l) => {
                let p = t.parent.to_str().unwrap_or(".");
                cstr(&format!("{p}/{}", l.to_str().unwrap_or("")))?
            }
        };
        openat2(
            t.base,
            &rel,
            libc::O_DIRECTORY | libc::O_RDONLY,
            0,
            t.resolve,
        )
        .map_err(|e| status(e, &t.shown))
    }

    pub fn list_dir(&self, path: &str, depth: i32) -> Result<Vec<pb::FileInfo>, Status> {
        let depth = match depth {
            d if d < 0 => return Err(Status::invalid_argument("depth must not be negative")),
            0 => 1,
            d => d.min(16),
        };
        let t = self.target(path)?;
        let dir = self.open_dir(&t)?;
        let mut out = Vec::new();
        walk(dir, &t.shown, depth, &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    pub fn open_read(&self, path: &str, offset: i64, length: i64) -> Result<Reader, Status> {
        if offset < 0 || length < 0 {
            return Err(Status::invalid_argument(
                "offset and length must not be negative",
            ));
        }
        let t = self.target(path)?;
        if t.dir_only {
            let parent = self.open_parent(&t)?;
            Self::dir_only_check(&t, parent.as_raw_fd())?;
            return Err(status(
                std::io::Error::from_raw_os_error(libc::EISDIR),
                &t.shown,
            ));
        }
        let rel = match &t.leaf {
            None => {
                return Err(Status::failed_precondition(format!(
                    "{}: is a directory",
                    t.shown
                )));
            }
            Some(l) => cstr(&format!(
                "{}/{}",
                t.parent.to_str().unwrap_or("."),
                l.to_str().unwrap_or("")
            ))?,
        };
        let fd = openat2(
            t.base,
            &rel,
            // O_NONBLOCK: opening a FIFO must not hang waiting for a writer.
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
            0,
            t.resolve,
        )
        .map_err(|e| status(e, &t.shown))?;
        let info = Self::info_at(fd.as_raw_fd(), None, &t.shown)?;
        if info.r#type != pb::FileType::File as i32 {
            return Err(Status::failed_precondition(format!(
                "{}: not a regular file",
                t.shown
            )));
        }
        // SAFETY: clear O_NONBLOCK on our fd now that it is a regular file.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, 0) };
        let end = if length == 0 {
            info.size
        } else {
            (offset.saturating_add(length)).min(info.size)
        };
        Ok(Reader {
            file: File::from(fd),
            offset,
            end,
            total: info.size,
        })
    }

    /// Refused when `leaf` in `dir` is a device node: the file API never
    /// replaces, moves or removes one (under gVisor /dev's nodes are not
    /// mounts, so a rename over /dev/null would succeed).
    pub(crate) fn not_a_device(dir: RawFd, leaf: &CStr, shown: &str) -> Result<(), Status> {
        // SAFETY: zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat relative to a dirfd we hold, not following.
        let r = unsafe { libc::fstatat(dir, leaf.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        let kind = st.st_mode & libc::S_IFMT;
        if r == 0 && (kind == libc::S_IFCHR || kind == libc::S_IFBLK) {
            return Err(Status::invalid_argument(format!(
                "{shown} is a device: the file API writes, moves and removes files, directories and links only"
            )));
        }
        Ok(())
    }

    pub fn begin_write(&self, h: &pb::WriteFileHeader) -> Result<Writer, Status> {
        let t = self.target(&h.path)?;
        let leaf = t
            .leaf
            .clone()
            .ok_or_else(|| Status::invalid_argument("path names a directory"))?;
        let parent = if h.create_parents {
            self.mkdir_all(&t.base, t.resolve, &t.parent, &t.shown)?
        } else {
            self.open_parent(&t)?
        };
        if t.dir_only {
            // A file can't be written at a path that names a directory.
            Self::dir_only_check(&t, parent.as_raw_fd())?;
            return Err(status(
                std::io::Error::from_raw_os_error(libc::EISDIR),
                &t.shown,
            ));
        }
        Self::not_a_device(parent.as_raw_fd(), &leaf, &t.shown)?;
        let tmp = cstr(&format!(
            "{TEMP_PREFIX}{}-{}",
            std::process::id(),
            rand_suffix()
        ))?;
        let mode = if h.mode == 0 { 0o644 } else { h.mode & 0o7777 };
        // SAFETY: openat relative to a dirfd we hold, creating a new file.
        let fd = unsafe {
            libc::openat(
                parent.as_raw_fd(),
                tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                mode,
            )
        };
        if fd < 0 {
            return Err(status(last_err(), &t.shown));
        }
        // SAFETY: fd was just created.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        Ok(Writer {
            parent,
            tmp,
            leaf,
            file: Some(file),
            no_overwrite: h.no_overwrite,
            shown: t.shown,
            mode,
        })
    }

    /// Creates every component of `rel` under `base` (as mkdir -p does),
    /// opening each with the same resolve rules, and returns the last.
    fn mkdir_all(
        &self,
        base: &RawFd,
        resolve: u64,
        rel: &CStr,
        shown: &str,
    ) -> Result<OwnedFd, Status> {
        let mut cur = openat2(*base, c".", libc::O_DIRECTORY | libc::O_RDONLY, 0, resolve)
            .map_err(|e| status(e, shown))?;
        let rel = rel
            .to_str()
            .map_err(|_| Status::invalid_argument("path is not UTF-8"))?;
        for comp in rel.split('/').filter(|c| !c.is_empty() && *c != ".") {
            if comp == ".." {
                return Err(Status::permission_denied(format!(
                    "{shown}: escapes the workspace or crosses a symlink"
                )));
            }
            let c = cstr(comp)?;
            // SAFETY: mkdirat relative to a dirfd we hold.
            if unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o755) } != 0
                && last_err().raw_os_error() != Some(libc::EEXIST)
            {
                return Err(status(last_err(), shown));
            }
            cur = openat2(
                cur.as_raw_fd(),
                &c,
                libc::O_DIRECTORY | libc::O_RDONLY,
                0,
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
            )
            .map_err(|e| status(e, shown))?;
        }
        Ok(cur)
    }

    pub fn make_dir(&self, path: &str, parents: bool, mode: u32) -> Result<pb::FileInfo, Status> {
        let t = self.target(path)?;
        let leaf = t
            .leaf
            .clone()
            .ok_or_else(|| Status::already_exists(format!("{}: already exists", t.shown)))?;
        let parent = if parents {
            self.mkdir_all(&t.base, t.resolve, &t.parent, &t.shown)?
        } else {
            self.open_parent(&t)?
        };
        let mode = if mode == 0 { 0o755 } else { mode & 0o7777 };
        // SAFETY: mkdirat relative to a dirfd we hold.
        if unsafe { libc::mkdirat(parent.as_raw_fd(), leaf.as_ptr(), mode) } != 0 {
            let e = last_err();
            let is_dir = || {
                Self::info_at(parent.as_raw_fd(), Some(&leaf), &t.shown)
                    .map(|i| i.r#type == pb::FileType::Directory as i32)
                    .unwrap_or(false)
            };
            if !(parents && e.raw_os_error() == Some(libc::EEXIST) && is_dir()) {
                return Err(status(e, &t.shown));
            }
        }
        Self::info_at(parent.as_raw_fd(), Some(&leaf), &t.shown)
    }

    pub fn move_path(&self, from: &str, to: &str, overwrite: bool) -> Result<pb::FileInfo, Status> {
        let a = self.target(from)?;
        let b = self.target(to)?;
        let (Some(al), Some(bl)) = (&a.leaf, &b.leaf) else {
            return Err(Status::invalid_argument(
                "cannot move the workspace or the root",
            ));
        };
        let ap = self.open_parent(&a)?;
        let bp = self.open_parent(&b)?;
        if a.dir_only || b.dir_only {
            // Either end with a `/`: the source must be a directory.
            if Self::dir_only_check(&a, ap.as_raw_fd())? == Some(false) {
                return Err(status(
                    std::io::Error::from_raw_os_error(libc::ENOTDIR),
                    &a.shown,
                ));
            }
            Self::dir_only_check(&b, bp.as_raw_fd())?;
        }
        Self::not_a_device(ap.as_raw_fd(), al, &a.shown)?;
        Self::not_a_device(bp.as_raw_fd(), bl, &b.shown)?;
        let flags: libc::c_uint = if overwrite { 0 } else { libc::RENAME_NOREPLACE };
        // SAFETY: renameat2 between two dirfds we hold.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                ap.as_raw_fd(),
                al.as_ptr(),
                bp.as_raw_fd(),
                bl.as_ptr(),
                flags,
            )
        };
        if r != 0 {
            return Err(status(last_err(), &a.shown));
        }
        Self::info_at(bp.as_raw_fd(), Some(bl), &b.shown)
    }

    pub fn remove(&self, path: &str, recursive: bool) -> Result<(), Status> {
        let t = self.target(path)?;
        let leaf = t
            .leaf
            .clone()
            .ok_or_else(|| Status::invalid_argument("cannot remove the workspace or the root"))?;
        let parent = self.open_parent(&t)?;
        if t.dir_only {
            Self::dir_only_check(&t, parent.as_raw_fd())?;
        }
        let info = Self::info_at(parent.as_raw_fd(), Some(&leaf), &t.shown)?;
        Self::not_a_device(parent.as_raw_fd(), &leaf, &t.shown)?;
        if info.r#type == pb::FileType::Directory as i32 {
            if recursive {
                remove_tree(parent.as_raw_fd(), &leaf, &t.shown)
            } else {
                unlink(parent.as_raw_fd(), &leaf, libc::AT_REMOVEDIR, &t.shown)
            }
        } else {
            // A symlink is removed itself; its target is never touched.
            unlink(parent.as_raw_fd(), &leaf, 0, &t.shown)
        }
    }

    pub fn watch(
        &self,
        path: &str,
        recursive: bool,
    ) -> Result<mpsc::Receiver<Result<pb::WatchDirResponse, Status>>, Status> {
        let t = self.target(path)?;
        let dir = self.open_dir(&t)?;
        crate::watch::start(dir, t.shown, recursive)
    }
}

mod resolve;
mod stream;
mod tree;
pub(crate) use stream::rand_suffix;
pub use stream::{Reader, Writer};
pub use tree::entries;
use tree::{remove_tree, unlink, walk};
