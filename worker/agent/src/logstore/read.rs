//! Reading a log: a [`Cursor`] walks the segments in order by sequence
//! number, with an open file and an offset, so a reader that keeps up
//! reads each byte once. A live follower's cursor holds its position in
//! the store, which keeps what it has not read (see the module above).
//!
//! The segments lie in a directory the workload can write: a file that is
//! gone, cut short or garbled ends that segment for the reader (it reads
//! on from the next one) rather than failing, spinning, or allocating what
//! a forged length says.

use super::{HEADER, LogStore, Record};
use std::fs::File;
use std::io::ErrorKind;
use std::ops::Deref;
use std::os::unix::fs::FileExt;

/// No record the agent writes is larger (its reads are 32 KiB); a header
/// that says more is garbage.
const MAX_RECORD: usize = 1 << 20;

struct Open {
    file: File,
    first_seq: u64,
    offset: u64,
    /// An end already seen once in this segment after it was closed.
    ended_once: bool,
}

/// A reader of one process's log, oldest first.
pub struct Cursor<S: Deref<Target = LogStore>> {
    store: S,
    /// The follower's id in the store's holds (None: it holds nothing).
    hold: Option<u64>,
    /// The next sequence number wanted.
    next: u64,
    open: Option<Open>,
}

/// A record's header: (seq, stream, time_ms, len).
fn header_at(f: &File, offset: u64) -> std::io::Result<Option<(u64, u8, i64, usize)>> {
    let mut head = [0u8; HEADER];
    match f.read_exact_at(&mut head, offset) {
        Ok(()) => {}
        // A record being written right now is not complete yet.
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let seq = u64::from_le_bytes(head[0..8].try_into().expect("8"));
    let time_ms = i64::from_le_bytes(head[9..17].try_into().expect("8"));
    let len = u32::from_le_bytes(head[17..21].try_into().expect("4")) as usize;
    Ok(Some((seq, head[8], time_ms, len)))
}

impl<S: Deref<Target = LogStore>> Cursor<S> {
    pub(super) fn new(store: S, after: u64, held: bool) -> Self {
        let hold = held.then(|| {
            let mut g = store.lock();
            let id = g.next_hold;
            g.next_hold += 1;
            g.holds.insert(id, after);
            id
        });
        Cursor {
            store,
            hold,
            next: after.saturating_add(1),
            open: None,
        }
    }

    /// Opens the segment that holds `next` (the oldest kept, when history
    /// before it is gone); false when nothing past `next` is written.
    fn open_segment(&mut self) -> std::io::Result<bool> {
        if self.open.is_some() {
            return Ok(true);
        }
        let g = self.store.lock();
        loop {
            if self.next >= g.next_seq {
                return Ok(false);
            }
            let i = g
                .segments
                .iter()
                .rposition(|s| s.first_seq <= self.next)
                .unwrap_or(0);
            let Some(seg) = g.segments.get(i) else {
                return Ok(false);
            };
            match File::open(&seg.path) {
                Ok(file) => {
                    self.open = Some(Open {
                        file,
                        first_seq: seg.first_seq,
                        offset: 0,
                        ended_once: false,
                    });
                    return Ok(true);
                }
                // Segments go under this lock, so the workload removed it.
                Err(e) if e.kind() == ErrorKind::NotFound => match g.segments.get(i + 1) {
                    Some(later) => self.next = self.next.max(later.first_seq),
                    None => return Ok(false),
                },
                Err(e) => return Err(e),
            }
        }
    }

    /// At the end of the open segment: whether to read on (it was closed
    /// after records past our read were written, or the next one starts).
    fn past_end(&mut self) -> bool {
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        let g = self.store.lock();
        let Some(later) = g
            .segments
            .iter()
            .find(|s| s.first_seq > open.first_seq)
            .map(|s| s.first_seq)
        else {
            // The segment being written: nothing more for now.
            return false;
        };
        drop(g);
        if self.next < later && !open.ended_once {
            // Closed since we read its end: the rest is complete now.
            open.ended_once = true;
            return true;
        }
        // Done with it (or it was cut short: what it lost is skipped).
        self.next = self.next.max(later);
        self.open = None;
        true
    }

    /// Up to `max_records` records (and about `max_bytes`) after the last
    /// one read; empty when there is nothing more yet.
    pub fn read(&mut self, max_records: usize, max_bytes: usize) -> std::io::Result<Vec<Record>> {
        let mut out = Vec::new();
        let mut bytes = 0;
        while out.len() < max_records && bytes < max_bytes && self.open_segment()? {
            let open = self.open.as_mut().expect("opened");
            let head = header_at(&open.file, open.offset)?.filter(|h| h.3 <= MAX_RECORD);
            let Some((seq, stream, time_ms, len)) = head else {
                if self.past_end() {
                    continue;
                }
                break;
            };
            if seq < self.next {
                // Before where we are: skipped unread.
                open.offset += (HEADER + len) as u64;
                continue;
            }
            let mut data = vec![0u8; len];
            match open
                .file
                .read_exact_at(&mut data, open.offset + HEADER as u64)
            {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                    if self.past_end() {
                        continue;
                    }
                    break;
                }
                Err(e) => return Err(e),
            }
            open.offset += (HEADER + len) as u64;
            self.next = seq + 1;
            bytes += len;
            out.push(Record {
                seq,
                stream,
                time_ms,
                data,
            });
        }
        self.release();
        Ok(out)
    }

    /// Moves the hold to what has been read, and lets the writer know.
    fn release(&mut self) {
        let Some(id) = self.hold else { return };
        let at = self.next.saturating_sub(1);
        let mut g = self.store.lock();
        if g.holds.get(&id) != Some(&at) {
            g.holds.insert(id, at);
            g.collect();
            drop(g);
            self.store.moved.notify_all();
        }
    }
}

impl<S: Deref<Target = LogStore>> Drop for Cursor<S> {
    fn drop(&mut self) {
        if let Some(id) = self.hold {
            let mut g = self.store.lock();
            g.holds.remove(&id);
            g.collect();
            drop(g);
            self.store.moved.notify_all();
        }
    }
}
