//! WatchDir with inotify. Watches are added through /proc/self/fd/N of a
//! directory fd that openat2 already checked, so the watched directory is
//! the one the resolve rules allowed. New subdirectories are watched as
//! they appear when `recursive` is set.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use talon_proto::v1 as pb;
use tokio::sync::mpsc;
use tonic::Status;

/// Most directories one recursive watch follows.
pub const MAX_WATCHES: usize = 4096;

const MASK: u32 = libc::IN_CREATE
    | libc::IN_CLOSE_WRITE
    | libc::IN_MODIFY
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_ATTRIB
    | libc::IN_ONLYDIR;

fn add(ino: i32, dir: &OwnedFd) -> Result<i32, Status> {
    let p = CString::new(format!("/proc/self/fd/{}", dir.as_raw_fd())).expect("no NUL");
    // The /proc/self/fd link must be followed, so no IN_DONT_FOLLOW here.
    // SAFETY: inotify_add_watch on our inotify fd and a NUL-terminated path.
    let wd = unsafe { libc::inotify_add_watch(ino, p.as_ptr(), MASK) };
    if wd < 0 {
        return Err(crate::files::status(
            std::io::Error::last_os_error(),
            "watch",
        ));
    }
    Ok(wd)
}

pub(crate) fn now() -> prost_types::Timestamp {
    talon_core::time::ms_to_timestamp(talon_core::time::now_ms())
}

pub fn start(
    dir: OwnedFd,
    shown: String,
    recursive: bool,
) -> Result<mpsc::Receiver<Result<pb::WatchDirResponse, Status>>, Status> {
    // SAFETY: inotify_init1 with flags.
    let ino = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    if ino < 0 {
        return Err(Status::internal(format!(
            "inotify: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: ino was just returned.
    let ino_fd: OwnedFd = unsafe { std::os::fd::FromRawFd::from_raw_fd(ino) };
    let mut dirs: HashMap<i32, String> = HashMap::new();
    let mut pending = vec![(dir, shown)];
    while let Some((d, path)) = pending.pop() {
        let wd = add(ino, &d)?;
        if recursive {
            for name in crate::files::entries(d.as_raw_fd())? {
                if dirs.len() + pending.len() >= MAX_WATCHES {
                    break;
                }
                if let Ok(sub) = open_subdir(&d, &name) {
                    pending.push((sub, format!("{path}/{}", name.to_string_lossy())));
                }
            }
        }
        dirs.insert(wd, path);
    }
    let (tx, rx) = mpsc::channel(256);
    crate::threads::spawn("watch", move || run(ino_fd, dirs, recursive, tx))?;
    Ok(rx)
}

fn open_subdir(parent: &OwnedFd, name: &std::ffi::CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: openat relative to a dirfd we hold, refusing symlinks.
    let fd = unsafe {
        libc::openat(
            parent.as_raw_fd(),
            name.as_ptr(),
            libc::O_DIRECTORY | libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

fn run(
    ino: OwnedFd,
    mut dirs: HashMap<i32, String>,
    recursive: bool,
    tx: mpsc::Sender<Result<pb::WatchDirResponse, Status>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    // Cookies of temp files moved away: their arrival is a write.
    let mut temp_moves: std::collections::HashSet<u32> = std::collections::HashSet::new();
    loop {
        if tx.is_closed() {
            return;
        }
        let mut pfd = libc::pollfd {
            fd: ino.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll one fd with a timeout, so a closed client is noticed.
        let r = unsafe { libc::poll(&mut pfd, 1, 500) };
        if r <= 0 {
            continue;
        }
        // SAFETY: read into our buffer.
        let n = unsafe { libc::read(ino.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            continue;
        }
        let mut off = 0usize;
        while off + std::mem::size_of::<libc::inotify_event>() <= n as usize {
            // SAFETY: the kernel wrote whole events into the buffer.
            let ev: libc::inotify_event =
                unsafe { std::ptr::read_unaligned(buf[off..].as_ptr().cast()) };
            let name_start = off + std::mem::size_of::<libc::inotify_event>();
            let name_bytes = &buf[name_start..name_start + ev.len as usize];
            let name =
                String::from_utf8_lossy(name_bytes.split(|b| *b == 0).next().unwrap_or_default())
                    .into_owned();
            off = name_start + ev.len as usize;
            let Some(dir) = dirs.get(&ev.wd).cloned() else {
                continue;
            };
            // An atomic write's temp file is not news; its rename into
            // place is a write of the target.
            if name.starts_with(crate::files::TEMP_PREFIX) {
                if ev.mask & libc::IN_MOVED_FROM != 0 {
                    if temp_moves.len() > 1024 {
                        temp_moves.clear();
                    }
                    temp_moves.insert(ev.cookie);
                }
                continue;
            }
            let path = if name.is_empty() {
                dir.clone()
            } else {
                format!("{dir}/{name}")
            };
            if recursive
                && ev.mask & libc::IN_ISDIR != 0
                && ev.mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0
                && dirs.len() < MAX_WATCHES
            {
                let p = CString::new(path.clone()).unwrap_or_default();
                // SAFETY: watch the new directory by path; a race only misses it.
                let wd = unsafe {
                    libc::inotify_add_watch(
                        ino.as_raw_fd(),
                        p.as_ptr(),
                        MASK | libc::IN_DONT_FOLLOW,
                    )
                };
                if wd >= 0 {
                    dirs.insert(wd, path.clone());
                }
            }
            let kind = if ev.mask & libc::IN_CREATE != 0 {
                pb::FileEventType::Create
            } else if ev.mask & (libc::IN_CLOSE_WRITE | libc::IN_MODIFY) != 0 {
                pb::FileEventType::Write
            } else if ev.mask & libc::IN_DELETE != 0 {
                pb::FileEventType::Remove
            } else if ev.mask & libc::IN_MOVED_TO != 0 && temp_moves.remove(&ev.cookie) {
                pb::FileEventType::Write
            } else if ev.mask & (libc::IN_MOVED_FROM | libc::IN_MOVED_TO) != 0 {
                pb::FileEventType::Rename
            } else if ev.mask & libc::IN_ATTRIB != 0 {
                pb::FileEventType::Chmod
            } else {
                continue;
            };
            let msg = pb::WatchDirResponse {
                r#type: kind as i32,
                path,
                event_time: Some(now()),
            };
            if tx.blocking_send(Ok(msg)).is_err() {
                return;
            }
        }
    }
}
