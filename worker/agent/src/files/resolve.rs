//! openat2's RESOLVE_BENEATH, RESOLVE_IN_ROOT and RESOLVE_NO_SYMLINKS done
//! in user space, one component at a time, for kernels without openat2:
//! gVisor's sentry answers ENOSYS to it. The rules are the kernel's:
//! every step is an `openat` of one name relative to a directory fd held
//! open, never a path; `..` pops to a directory already held (beneath the
//! base it is refused, in a root it stays at the root); a symlink is never
//! followed by the kernel — with NO_SYMLINKS it is refused, in a root its
//! text is resolved again by these same rules (an absolute one from the
//! root), so a magic link of /proc is never followed either. The last
//! component is opened with O_NOFOLLOW, so a symlink swapped in after the
//! check is refused, not followed; and every name opened is checked again
//! on its held parent to name what was opened (`held_open`).

use std::collections::VecDeque;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use rustix::fs::ResolveFlags;

/// Links followed in one resolution, as the kernel's limit.
const MAX_LINKS: u32 = 40;

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

fn openat(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: openat on a directory fd the caller holds open and a
    // NUL-terminated name; the new fd is owned by the result.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd from openat, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn lstat_at(dir: RawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: zeroed stat is a valid out-parameter; fstatat on a held dir.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat/fstatat into a local struct, on an fd we hold.
    let r = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `openat` of one name, then re-checked on the held parent: the name
/// must still name what was opened (same device and inode). A workload
/// swapping a directory and a symlink by plain renames while the walk
/// runs (gVisor's own lookups were seen to follow one) cannot then hand
/// the walk what the link points to: the name never names that inode.
/// EAGAIN when it changed.
fn held_open(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let fd = openat(dir, name, flags, mode)?;
    // SAFETY: zeroed stat is a valid out-parameter; fstat on our fd.
    let mut got: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat/fstatat into a local struct, on an fd we hold.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut got) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let now = lstat_at(dir, name)?;
    if (got.st_dev, got.st_ino) != (now.st_dev, now.st_ino) {
        return Err(err(libc::EAGAIN));
    }
    Ok(fd)
}

fn is(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
}

fn read_link(dir: RawFd, name: &CStr) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: readlinkat into a buffer of buf.len() bytes.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

fn components(path: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    path.split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(|c| c.to_vec())
}

fn name(c: &[u8]) -> io::Result<CString> {
    CString::new(c).map_err(|_| err(libc::EINVAL))
}

/// `openat2(dir, path, flags, mode, resolve)` without openat2.
pub fn openat2(
    dir: RawFd,
    path: &CStr,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let resolve = ResolveFlags::from_bits_retain(resolve);
    let beneath = resolve.contains(ResolveFlags::BENEATH);
    let in_root = resolve.contains(ResolveFlags::IN_ROOT);
    let no_symlinks = resolve.contains(ResolveFlags::NO_SYMLINKS);
    if !beneath && !in_root && !no_symlinks {
        // Only NO_MAGICLINKS (or nothing): the callers pass it with one
        // of the others; alone it would need the kernel.
        if !resolve.is_empty() {
            return Err(err(libc::EINVAL));
        }
        return openat(dir, path, flags, mode);
    }
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return Err(err(libc::ENOENT));
    }
    if beneath && bytes.starts_with(b"/") {
        return Err(err(libc::EXDEV));
    }
    let mut todo: VecDeque<Vec<u8>> = components(bytes).collect();
    let mut stack = vec![openat(dir, c".", libc::O_PATH | libc::O_DIRECTORY, 0)?];
    let mut links = 0;
    let top = |stack: &Vec<OwnedFd>| stack.last().expect("the base is held").as_raw_fd();
    while let Some(c) = todo.pop_front() {
        let last = todo.is_empty();
        if c == b".." {
            if stack.len() > 1 {
                stack.pop();
            } else if beneath {
                return Err(err(libc::EXDEV));
            }
            continue;
        }
        let n = name(&c)?;
        let st = if last {
            // Not there: O_CREAT may make it, or openat says why not.
            lstat_at(top(&stack), &n).ok()
        } else {
            None
        };
        if last && !st.as_ref().is_some_and(|s| is(s, libc::S_IFLNK)) {
            return held_open(top(&stack), &n, flags | libc::O_NOFOLLOW, mode);
        }
        if last && flags & libc::O_NOFOLLOW != 0 {
            // The link itself (O_PATH) or ELOOP, as the kernel answers.
            return held_open(top(&stack), &n, flags, mode);
        }
        if last && flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL {
            return Err(err(libc::EEXIST));
        }
        let fd = if last {
            None
        } else {
            Some(held_open(
                top(&stack),
                &n,
                libc::O_PATH | libc::O_NOFOLLOW,
                0,
            )?)
        };
        let link = match &fd {
            None => true,
            Some(fd) => {
                // SAFETY: zeroed stat is a valid out-parameter; fstat on our fd.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: fstat/fstatat into a local struct, on an fd we hold.
                if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                if !is(&st, libc::S_IFLNK) && !is(&st, libc::S_IFDIR) {
                    return Err(err(libc::ENOTDIR));
                }
                is(&st, libc::S_IFLNK)
            }
        };
        if !link {
            stack.push(fd.expect("opened"));
            continue;
        }
        if no_symlinks {
            return Err(err(libc::ELOOP));
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(err(libc::ELOOP));
        }
        let target = read_link(top(&stack), &n)?;
        if target.starts_with(b"/") {
            stack.truncate(1);
        }
        let mut rest: VecDeque<Vec<u8>> = components(&target).collect();
        rest.extend(todo.drain(..));
        todo = rest;
    }
    // The path named the base or a directory reached through `..`.
    openat(top(&stack), c".", flags, mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const BENEATH: u64 = ResolveFlags::BENEATH.bits()
        | ResolveFlags::NO_SYMLINKS.bits()
        | ResolveFlags::NO_MAGICLINKS.bits();
    const IN_ROOT: u64 = ResolveFlags::IN_ROOT.bits() | ResolveFlags::NO_MAGICLINKS.bits();

    fn kernel(dir: RawFd, path: &CStr, flags: i32, resolve: u64) -> io::Result<OwnedFd> {
        // SAFETY: the test holds `dir` open.
        let dir = unsafe { std::os::fd::BorrowedFd::borrow_raw(dir) };
        rustix::fs::openat2(
            dir,
            path,
            rustix::fs::OFlags::from_bits_retain((flags | libc::O_CLOEXEC) as u32),
            // openat2 refuses a mode without O_CREAT.
            rustix::fs::Mode::from_raw_mode(if flags & libc::O_CREAT != 0 { 0o644 } else { 0 }),
            ResolveFlags::from_bits_retain(resolve),
        )
        .map_err(io::Error::from)
    }

    fn ino(fd: &OwnedFd) -> u64 {
        // SAFETY: zeroed stat is a valid out-parameter; fstat on our fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat/fstatat into a local struct, on an fd we hold.
        assert_eq!(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) }, 0);
        st.st_ino
    }

    /// Each case resolved by the kernel and by the walk: the same file
    /// or the same errno, whatever symlinks and `..` try.
    #[test]
    fn the_walk_agrees_with_the_kernel() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        let ws = root.join("workspace");
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("etc")).unwrap();
        std::fs::write(root.join("etc/passwd"), "root").unwrap();
        std::fs::write(t.path().join("outside"), "host").unwrap();
        std::fs::write(ws.join("a/b/f"), "f").unwrap();
        symlink("/etc/passwd", ws.join("abs")).unwrap();
        symlink("../../outside", ws.join("up")).unwrap();
        symlink("a/b", ws.join("rel")).unwrap();
        symlink("loop", ws.join("loop")).unwrap();
        symlink("/proc/self/fd/0", ws.join("magic")).unwrap();
        std::fs::write(ws.join("file"), "x").unwrap();
        let open = |p: &std::path::Path| {
            openat(
                libc::AT_FDCWD,
                &name(p.as_os_str().as_encoded_bytes()).unwrap(),
                libc::O_PATH | libc::O_DIRECTORY,
                0,
            )
            .unwrap()
        };
        let (wfd, rfd) = (open(&ws), open(&root));
        let cases: &[(&OwnedFd, &str, i32, u64)] = &[
            (&wfd, "a/b/f", libc::O_RDONLY, BENEATH),
            (&wfd, "a/../a/b/f", libc::O_RDONLY, BENEATH),
            (&wfd, "a/b/../../../outside", libc::O_RDONLY, BENEATH),
            (&wfd, "/etc/passwd", libc::O_RDONLY, BENEATH),
            (&wfd, "abs", libc::O_RDONLY, BENEATH),
            (&wfd, "rel/f", libc::O_RDONLY, BENEATH),
            (&wfd, "abs", libc::O_PATH | libc::O_NOFOLLOW, BENEATH),
            (&wfd, "file/x", libc::O_RDONLY, BENEATH),
            (&wfd, "missing", libc::O_RDONLY, BENEATH),
            (&wfd, "a", libc::O_RDONLY | libc::O_DIRECTORY, BENEATH),
            (&wfd, "", libc::O_RDONLY | libc::O_DIRECTORY, BENEATH),
            (&wfd, "a/..", libc::O_RDONLY | libc::O_DIRECTORY, BENEATH),
            (&rfd, "workspace/abs", libc::O_RDONLY, IN_ROOT),
            (&rfd, "workspace/up", libc::O_RDONLY, IN_ROOT),
            (&rfd, "../../../etc/passwd", libc::O_RDONLY, IN_ROOT),
            (&rfd, "workspace/rel/f", libc::O_RDONLY, IN_ROOT),
            (&rfd, "workspace/loop", libc::O_RDONLY, IN_ROOT),
            (&rfd, "workspace/magic", libc::O_RDONLY, IN_ROOT),
            (
                &rfd,
                "workspace/abs",
                libc::O_RDONLY | libc::O_NOFOLLOW,
                IN_ROOT,
            ),
            (
                &rfd,
                "workspace/abs",
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
                IN_ROOT,
            ),
        ];
        for (dir, path, flags, resolve) in cases {
            let p = name(path.as_bytes()).unwrap();
            let k = kernel(dir.as_raw_fd(), &p, *flags, *resolve);
            let w = openat2(dir.as_raw_fd(), &p, *flags, 0o644, *resolve);
            match (&k, &w) {
                (Ok(a), Ok(b)) => assert_eq!(ino(a), ino(b), "{path}"),
                (Err(a), Err(b)) => assert_eq!(a.raw_os_error(), b.raw_os_error(), "{path}"),
                _ => panic!("{path}: the kernel says {k:?}, the walk {w:?}"),
            }
        }
        // A created file lands where the kernel would put it.
        let p = c"workspace/a/new";
        let fd = openat2(
            rfd.as_raw_fd(),
            p,
            libc::O_WRONLY | libc::O_CREAT,
            0o600,
            IN_ROOT,
        )
        .unwrap();
        drop(fd);
        assert!(ws.join("a/new").is_file());
    }
}
