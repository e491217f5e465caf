//! Per-process output kept on disk: a client that reconnects reads on from
//! the last sequence number it saw, and a live follower (a stream reading
//! it now) receives every byte, however slowly it reads.
//!
//! The agent is the reader of every process's pipes, so it writes the log
//! itself, record by record ([`LogWriter`], the process's output thread):
//! no copytruncate and no window in which a process writes while the file
//! is being rotated. A record is `seq u64 | stream u8 | time_ms i64 | len
//! u32 | data`, little-endian. Records go to segment files (`BASE.N.log`);
//! when the one being written passes `max_file_bytes` the next starts. The
//! newest closed segment is kept and older ones go, so about `2 *
//! max_file_bytes` is what a reconnect can replay (`first_kept_seq` says
//! where it begins). A file is made at the first output: a process that
//! prints nothing (most of an agent's `true`, `mkdir`, `test`) costs none.
//!
//! Live followers ([`Cursor`]) hold what they have not read yet: a closed
//! segment one of them still needs is kept past that (spilled), up to
//! `max_spill_bytes` in all. When a rotation would spill more, the writer
//! waits until the slowest follower reads on or goes away, and so stops
//! reading the process's pipes: the process blocks on its write, as on a
//! pipe to a slow reader. Disk stays bounded, and memory too: a follower
//! has one page in memory, never a queue. A disk that fills while
//! followers hold spilled segments is waited out the same way, before the
//! reserve (see `reserve`) is touched.
//!
//! The segments' index lives here, under a lock the followers take from
//! async tasks; the writer does its file I/O outside it, and publishes a
//! record (its bytes and sequence number) only once it is whole.

mod read;
mod reserve;
mod write;

pub use read::Cursor;
pub use reserve::keep_reserve;
pub use write::LogWriter;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

pub const HEADER: usize = 8 + 1 + 8 + 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    /// 1 stdout (and PTY), 2 stderr: the values of `talon.v1.OutputStream`.
    pub stream: u8,
    pub time_ms: i64,
    pub data: Vec<u8>,
}

/// One file of records, `first_seq` onwards.
#[derive(Debug)]
struct Segment {
    path: PathBuf,
    first_seq: u64,
    bytes: u64,
}

#[derive(Default)]
struct Inner {
    /// Oldest first; the last is the one being written.
    segments: VecDeque<Segment>,
    /// The sequence number the next record published will have.
    next_seq: u64,
    /// Each live follower's position: the last sequence number it has.
    holds: HashMap<u64, u64>,
    next_hold: u64,
    /// The log was removed (its process evicted): nothing more is kept.
    removed: bool,
    /// Whether the first wait was said in the agent's log already.
    told: bool,
}

pub struct LogStore {
    /// `BASE` of the segments' names, `BASE.N.log`.
    base: PathBuf,
    max_file_bytes: u64,
    max_spill_bytes: u64,
    /// Who writes, for the agent's log ("pid 42").
    label: String,
    inner: Mutex<Inner>,
    /// Wakes a writer waiting for followers.
    moved: Condvar,
    /// Set while the writer waits for followers.
    held_back: AtomicBool,
}

impl Inner {
    /// The last sequence number of segment `i` (closed ones only).
    fn last_of(&self, i: usize) -> u64 {
        self.segments[i + 1].first_seq - 1
    }

    fn slowest(&self) -> Option<u64> {
        self.holds.values().min().copied()
    }

    /// Bytes of closed segments a follower still needs: the spill once
    /// the segment being written is closed too.
    fn needed_closed_bytes(&self) -> u64 {
        let Some(slowest) = self.slowest() else {
            return 0;
        };
        (0..self.segments.len().saturating_sub(1))
            .filter(|&i| slowest < self.last_of(i))
            .map(|i| self.segments[i].bytes)
            .sum()
    }

    /// Bytes kept beyond the normal two segments, for followers.
    fn spilled_bytes(&self) -> u64 {
        let n = self.segments.len().saturating_sub(2);
        self.segments.iter().take(n).map(|s| s.bytes).sum()
    }

    /// Removes the closed segments no follower needs, beyond the newest.
    fn collect(&mut self) {
        let slowest = self.slowest();
        while self.segments.len() > 2 {
            if slowest.is_some_and(|s| s < self.last_of(0)) {
                break;
            }
            if let Some(s) = self.segments.pop_front() {
                let _ = std::fs::remove_file(&s.path);
            }
        }
    }
}

impl LogStore {
    /// A log of segments `BASE.N.log`; `label` names the writer in the
    /// agent's own log.
    pub fn create(
        base: PathBuf,
        max_file_bytes: u64,
        max_spill_bytes: u64,
        label: String,
    ) -> Arc<Self> {
        Arc::new(LogStore {
            base,
            max_file_bytes: max_file_bytes.max(1024),
            max_spill_bytes,
            label,
            inner: Mutex::new(Inner {
                next_seq: 1,
                ..Default::default()
            }),
            moved: Condvar::new(),
            held_back: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("log lock")
    }

    /// The log's writer; there is one, the process's output thread.
    pub fn writer(self: &Arc<Self>) -> LogWriter {
        LogWriter::new(self.clone())
    }

    /// Whether the writer is waiting for a slow follower right now.
    pub fn held_back(&self) -> bool {
        self.held_back.load(Ordering::SeqCst)
    }

    /// Waits (a second at most) for a follower to move or go.
    fn wait<'a>(&'a self, mut g: MutexGuard<'a, Inner>, why: &str) -> MutexGuard<'a, Inner> {
        if !g.told {
            g.told = true;
            eprintln!(
                "talon-agent: output of {} is held back ({why}): the process waits until its slowest live reader reads on or goes",
                self.label
            );
        }
        self.held_back.store(true, Ordering::SeqCst);
        let (mut g, _) = self
            .moved
            .wait_timeout(g, Duration::from_secs(1))
            .expect("log lock");
        self.held_back.store(false, Ordering::SeqCst);
        g.collect();
        g
    }

    /// Reads up to `limit` records with `seq > after`, oldest first, and
    /// the first sequence number still kept (0 when nothing is). Not a
    /// follower: what rotates away meanwhile is skipped.
    pub fn read_after(&self, after: u64, limit: usize) -> std::io::Result<(Vec<Record>, u64)> {
        let first = self.lock().segments.front().map_or(0, |s| s.first_seq);
        let mut c = Cursor::new(self, after, false);
        let records = c.read(limit, usize::MAX)?;
        Ok((records, first))
    }

    /// A live follower from `after` on: what it has not read is kept for
    /// it (and the writer waits for it) until it reads on or is dropped.
    pub fn follow(self: &Arc<Self>, after: u64) -> Cursor<Arc<LogStore>> {
        Cursor::new(self.clone(), after, true)
    }

    /// Removes every segment (the process is evicted); whatever the
    /// process still writes is not kept.
    pub fn remove(&self) {
        let mut g = self.lock();
        g.removed = true;
        for s in g.segments.drain(..) {
            let _ = std::fs::remove_file(&s.path);
        }
        drop(g);
        self.moved.notify_all();
    }
}

#[cfg(test)]
mod tests;
