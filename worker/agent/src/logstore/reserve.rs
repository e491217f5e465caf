//! Room for output on a full disk. The log directory is on the sandbox's
//! disk, which the workload may fill (bytes or inodes), and then its last
//! output (often the very error that says the disk is full) would be
//! lost. So the agent keeps a file of [`RESERVE_BYTES`] allocated at start;
//! a write that fails for want of space gives it back and is tried once
//! more.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// Bytes kept free for output on a full disk.
pub const RESERVE_BYTES: i64 = 2 << 20;

static RESERVE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Allocates the reserve in `dir` (again, if it was given back and there
/// is room now); quietly nothing where it can't be had.
pub fn keep_reserve(dir: &Path) {
    let mut held = RESERVE.lock().expect("reserve");
    if held.is_some() {
        return;
    }
    let path = dir.join(".reserve");
    let made = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .and_then(|f| {
            use std::os::fd::AsRawFd;
            // SAFETY: fallocate on a file we own.
            match unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, RESERVE_BYTES) } {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    match made {
        Ok(()) => *held = Some(path),
        Err(_) => {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Gives the reserve back to the filesystem; whether there was one.
pub(super) fn release_reserve() -> bool {
    match RESERVE.lock().expect("reserve").take() {
        Some(p) => std::fs::remove_file(p).is_ok(),
        None => false,
    }
}

pub(super) fn out_of_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
