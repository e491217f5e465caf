//! Per-process output kept on disk, so a client that reconnects reads on
//! from the last sequence number it saw, with nothing lost or repeated.
//!
//! The agent is the reader of every process's pipes, so it writes the log
//! itself, record by record: no copytruncate and no window in which a
//! process writes while the file is being rotated. A record is
//! `seq u64 | stream u8 | time_ms i64 | len u32 | data`, little-endian.
//! When the current file passes `max_file_bytes` it becomes `.1`
//! (replacing the older one) and a new file starts; so at most two files,
//! about `2 * max_file_bytes`, are kept per process. The file is made at
//! the first output: a process that prints nothing (most of an agent's
//! `true`, `mkdir`, `test`) costs no file, and its start no file creation.
//!
//! The log directory is on the sandbox's disk, which the workload may fill
//! (bytes or inodes), and then its last output (often the very error that
//! says the disk is full) would be lost. So the agent keeps a reserve: a
//! file of [`RESERVE_BYTES`] allocated at start. A write that fails for
//! want of space (or a log file that can't be made for want of an inode)
//! gives the reserve back and is tried once more. A write that still
//! fails leaves no partial record behind.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

pub const HEADER: usize = 8 + 1 + 8 + 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    /// 1 stdout (and PTY), 2 stderr: the values of `talon.v1.OutputStream`.
    pub stream: u8,
    pub time_ms: i64,
    pub data: Vec<u8>,
}

pub struct LogStore {
    path: PathBuf,
    /// None until the first record.
    file: Option<File>,
    size: u64,
    max_file_bytes: u64,
    next_seq: u64,
}

fn rotated(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

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
fn release_reserve() -> bool {
    match RESERVE.lock().expect("reserve").take() {
        Some(p) => std::fs::remove_file(p).is_ok(),
        None => false,
    }
}

fn out_of_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

impl LogStore {
    pub fn create(path: PathBuf, max_file_bytes: u64) -> Self {
        LogStore {
            path,
            file: None,
            size: 0,
            max_file_bytes: max_file_bytes.max(1024),
            next_seq: 1,
        }
    }

    fn open(path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
    }

    /// Appends one chunk and returns its sequence number. Out of space,
    /// the reserve goes and the chunk is tried again once.
    pub fn append(&mut self, stream: u8, data: &[u8]) -> std::io::Result<u64> {
        crate::activity::touch();
        match self.try_append(stream, data) {
            Err(e) if out_of_space(&e) && release_reserve() => self.try_append(stream, data),
            r => r,
        }
    }

    fn try_append(&mut self, stream: u8, data: &[u8]) -> std::io::Result<u64> {
        match &self.file {
            None => {
                let _ = std::fs::remove_file(rotated(&self.path));
                self.file = Some(Self::open(&self.path)?);
            }
            Some(f) if self.size >= self.max_file_bytes => {
                f.sync_data()?;
                std::fs::rename(&self.path, rotated(&self.path))?;
                self.file = Some(Self::open(&self.path)?);
                self.size = 0;
            }
            Some(_) => {}
        }
        let file = self.file.as_mut().expect("opened above");
        let seq = self.next_seq;
        let mut buf = Vec::with_capacity(HEADER + data.len());
        buf.extend_from_slice(&seq.to_le_bytes());
        buf.push(stream);
        buf.extend_from_slice(&now_ms().to_le_bytes());
        buf.extend_from_slice(&(data.len() as u32).to_le_bytes());
        buf.extend_from_slice(data);
        if let Err(e) = file.write_all(&buf) {
            // No half record for a reader to trip on.
            use std::io::Seek;
            let _ = file.set_len(self.size);
            let _ = file.seek(std::io::SeekFrom::Start(self.size));
            return Err(e);
        }
        self.size += buf.len() as u64;

        self.next_seq += 1;
        Ok(seq)
    }
}

fn read_file(
    path: &Path,
    after: u64,
    limit: usize,
    out: &mut Vec<Record>,
    first: &mut Option<u64>,
) -> std::io::Result<()> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut r = BufReader::with_capacity(64 * 1024, f);
    let mut head = [0u8; HEADER];
    loop {
        match r.read_exact(&mut head) {
            Ok(()) => {}
            // A record being written right now is not complete yet.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let seq = u64::from_le_bytes(head[0..8].try_into().expect("8"));
        let stream = head[8];
        let time_ms = i64::from_le_bytes(head[9..17].try_into().expect("8"));
        let len = u32::from_le_bytes(head[17..21].try_into().expect("4")) as usize;
        first.get_or_insert(seq);
        if seq <= after {
            // Skip the payload without allocating for it.
            let skipped = std::io::copy(&mut (&mut r).take(len as u64), &mut std::io::sink())?;
            if skipped < len as u64 {
                return Ok(());
            }
            continue;
        }
        let mut data = vec![0u8; len];
        match r.read_exact(&mut data) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        out.push(Record {
            seq,
            stream,
            time_ms,
            data,
        });
        if out.len() >= limit {
            return Ok(());
        }
    }
}

/// Reads up to `limit` records with `seq > after`, oldest first, and the
/// first sequence number still kept (0 when nothing is).
pub fn read_after(path: &Path, after: u64, limit: usize) -> std::io::Result<(Vec<Record>, u64)> {
    let mut out = Vec::new();
    let mut first = None;
    read_file(&rotated(path), after, limit, &mut out, &mut first)?;
    if out.len() < limit {
        read_file(path, after, limit, &mut out, &mut first)?;
    }
    Ok((out, first.unwrap_or(0)))
}

pub fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(rotated(path));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_read_and_rotate_without_loss_or_duplication() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.log");
        let mut log = LogStore::create(path.clone(), 4096);
        assert!(!path.exists(), "no file before the first record");
        for i in 0..1000u32 {
            let stream = if i % 3 == 0 { 2 } else { 1 };
            assert_eq!(
                log.append(stream, format!("line {i}\n").as_bytes())
                    .unwrap(),
                u64::from(i) + 1
            );
        }
        // Rotation dropped the oldest records; what is kept is contiguous.
        let (all, first) = read_after(&path, 0, usize::MAX).unwrap();
        assert!(first > 1, "rotation kept everything: first={first}");
        assert_eq!(all.first().unwrap().seq, first);
        assert_eq!(all.last().unwrap().seq, 1000);
        for w in all.windows(2) {
            assert_eq!(w[0].seq + 1, w[1].seq);
        }
        // Paging from any point continues exactly after it.
        let mut cursor = first - 1;
        let mut seen = 0;
        loop {
            let (page, _) = read_after(&path, cursor, 7).unwrap();
            if page.is_empty() {
                break;
            }
            assert_eq!(page[0].seq, cursor + 1);
            cursor = page.last().unwrap().seq;
            seen += page.len();
        }
        assert_eq!(seen, all.len());
        assert_eq!(
            String::from_utf8_lossy(&all.last().unwrap().data),
            "line 999\n"
        );
        let size: u64 = [path.clone(), rotated(&path)]
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .sum();
        assert!(size < 2 * 4096 + 200, "{size} bytes kept");
    }
}
