//! Reading and atomically writing one file, in chunks.

use super::*;

pub(crate) fn rand_suffix() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom into a local buffer.
    unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    u64::from_le_bytes(b)
}

pub struct Reader {
    pub(super) file: File,
    pub(super) offset: i64,
    pub(super) end: i64,
    pub(super) total: i64,
}

impl Reader {
    /// Sends the content in chunks; `send` returns false when the reader
    /// went away.
    pub fn pump(self, mut send: impl FnMut(Result<pb::ReadFileResponse, Status>) -> bool) {
        use std::os::unix::fs::FileExt;
        let mut pos = self.offset;
        let mut first = true;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let want = ((self.end - pos).max(0) as usize).min(CHUNK);
            if want == 0 {
                if first {
                    send(Ok(pb::ReadFileResponse {
                        data: vec![],
                        total_size: self.total,
                    }));
                }
                return;
            }
            match self.file.read_at(&mut buf[..want], pos as u64) {
                Ok(0) => return,
                Ok(n) => {
                    pos += n as i64;
                    let total_size = if first { self.total } else { 0 };
                    first = false;
                    if !send(Ok(pb::ReadFileResponse {
                        data: buf[..n].to_vec(),
                        total_size,
                    })) {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    send(Err(Status::internal(format!("read: {e}"))));
                    return;
                }
            }
        }
    }
}

/// An atomic write in progress; dropped without `commit`, it leaves
/// nothing behind.
pub struct Writer {
    pub(super) parent: OwnedFd,
    pub(super) tmp: CString,
    pub(super) leaf: CString,
    pub(super) file: Option<File>,
    pub(super) no_overwrite: bool,
    pub(super) shown: String,
    pub(super) mode: u32,
}

impl Writer {
    pub fn write(&mut self, data: &[u8]) -> Result<(), Status> {
        let f = self.file.as_mut().expect("open until commit");
        f.write_all(data).map_err(|e| status(e, &self.shown))
    }

    pub fn commit(mut self) -> Result<pb::FileInfo, Status> {
        let f = self.file.take().expect("open until commit");
        // The umask may have narrowed the mode at creation.
        // SAFETY: fchmod on our file.
        unsafe { libc::fchmod(f.as_raw_fd(), self.mode) };
        f.sync_all().map_err(|e| status(e, &self.shown))?;
        drop(f);
        let p = self.parent.as_raw_fd();
        Files::not_a_device(p, &self.leaf, &self.shown)?;
        // SAFETY: *at calls relative to the parent dirfd we hold.
        let r = unsafe {
            if self.no_overwrite {
                let r = libc::linkat(p, self.tmp.as_ptr(), p, self.leaf.as_ptr(), 0);
                if r == 0 {
                    libc::unlinkat(p, self.tmp.as_ptr(), 0);
                }
                r
            } else {
                libc::renameat(p, self.tmp.as_ptr(), p, self.leaf.as_ptr())
            }
        };
        if r != 0 {
            return Err(status(last_err(), &self.shown));
        }
        // SAFETY: fsync of the directory makes the rename durable.
        unsafe { libc::fsync(p) };
        self.tmp = CString::default();
        Files::info_at(p, Some(&self.leaf), &self.shown)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.tmp.as_bytes().is_empty() {
            // SAFETY: remove our temp file, relative to its parent.
            unsafe { libc::unlinkat(self.parent.as_raw_fd(), self.tmp.as_ptr(), 0) };
        }
    }
}
