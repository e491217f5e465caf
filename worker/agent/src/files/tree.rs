//! Whole directories: their entries, a bounded walk, recursive removal,
//! each through fds, never paths.

use super::*;

pub(super) fn unlink(dir: RawFd, leaf: &CStr, flags: i32, shown: &str) -> Result<(), Status> {
    // SAFETY: unlinkat relative to a dirfd we hold.
    if unsafe { libc::unlinkat(dir, leaf.as_ptr(), flags) } != 0 {
        return Err(status(last_err(), shown));
    }
    Ok(())
}

/// Entries of a directory fd, without . and ..
pub fn entries(dir: RawFd) -> Result<Vec<CString>, Status> {
    // SAFETY: fdopendir takes ownership of a dup; closedir releases it.
    unsafe {
        let dup = libc::fcntl(dir, libc::F_DUPFD_CLOEXEC, 0);
        if dup < 0 {
            return Err(status(last_err(), "directory"));
        }
        let d = libc::fdopendir(dup);
        if d.is_null() {
            libc::close(dup);
            return Err(status(last_err(), "directory"));
        }
        libc::rewinddir(d);
        let mut out = Vec::new();
        loop {
            let e = libc::readdir(d);
            if e.is_null() {
                break;
            }
            let name = CStr::from_ptr((*e).d_name.as_ptr());
            if name != c"." && name != c".." {
                out.push(name.to_owned());
            }
        }
        libc::closedir(d);
        Ok(out)
    }
}

pub(super) fn walk(
    dir: OwnedFd,
    shown: &str,
    depth: i32,
    out: &mut Vec<pb::FileInfo>,
) -> Result<(), Status> {
    for name in entries(dir.as_raw_fd())? {
        if out.len() >= MAX_LIST {
            return Err(Status::resource_exhausted(format!(
                "more than {MAX_LIST} entries; list a narrower directory or a smaller depth"
            )));
        }
        let child = format!("{}/{}", shown.trim_end_matches('/'), name.to_string_lossy());
        let info = match Files::info_at(dir.as_raw_fd(), Some(&name), &child) {
            Ok(i) => i,
            Err(s) if s.code() == tonic::Code::NotFound => continue, // gone meanwhile
            Err(s) => return Err(s),
        };
        let is_dir = info.r#type == pb::FileType::Directory as i32;
        out.push(info);
        if is_dir
            && depth > 1
            && let Ok(sub) = openat2(
                dir.as_raw_fd(),
                &name,
                libc::O_DIRECTORY | libc::O_RDONLY,
                0,
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
            )
        {
            walk(sub, &child, depth - 1, out)?;
        }
    }
    Ok(())
}

pub(super) fn remove_tree(parent: RawFd, leaf: &CStr, shown: &str) -> Result<(), Status> {
    let dir = openat2(
        parent,
        leaf,
        libc::O_DIRECTORY | libc::O_RDONLY | libc::O_NOFOLLOW,
        0,
        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    )
    .map_err(|e| status(e, shown))?;
    for name in entries(dir.as_raw_fd())? {
        let child = format!("{shown}/{}", name.to_string_lossy());
        let info = Files::info_at(dir.as_raw_fd(), Some(&name), &child)?;
        if info.r#type == pb::FileType::Directory as i32 {
            remove_tree(dir.as_raw_fd(), &name, &child)?;
        } else {
            unlink(dir.as_raw_fd(), &name, 0, &child)?;
        }
    }
    unlink(parent, leaf, libc::AT_REMOVEDIR, shown)
}
