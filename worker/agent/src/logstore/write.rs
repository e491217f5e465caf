//! The writer of one process's log: its output thread's, the only one.
//! File I/O happens here, outside the store's lock; the store hears of a
//! record (its bytes, its sequence number) once it is whole on disk.

use super::reserve::{out_of_space, release_reserve};
use super::{HEADER, LogStore, Segment};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use talon_core::time::now_ms;

pub struct LogWriter {
    store: Arc<LogStore>,
    /// The segment being written; None until the first record.
    file: Option<File>,
    /// Its size.
    size: u64,
    /// The number in the next segment's name.
    next_file: u64,
    /// The sequence number of the next record.
    next_seq: u64,
    /// The log was removed: nothing more is written.
    gone: bool,
}

impl LogWriter {
    pub(super) fn new(store: Arc<LogStore>) -> Self {
        LogWriter {
            store,
            file: None,
            size: 0,
            next_file: 0,
            next_seq: 1,
            gone: false,
        }
    }

    fn segment_path(&self) -> PathBuf {
        let mut p = self.store.base.as_os_str().to_owned();
        p.push(format!(".{}.log", self.next_file));
        PathBuf::from(p)
    }

    /// Appends one chunk and returns its sequence number. It waits while
    /// a live follower is too far behind (see the module above). Out of
    /// space, it waits for followers that hold spilled segments, then the
    /// reserve goes and the chunk is tried again once. A write that still
    /// fails leaves no partial record behind.
    pub fn append(&mut self, stream: u8, data: &[u8]) -> std::io::Result<u64> {
        crate::activity::touch();
        let mut reserve_used = false;
        loop {
            match self.try_append(stream, data) {
                Err(e) if out_of_space(&e) && self.spill_held() => {
                    let g = self.store.lock();
                    drop(self.store.wait(g, "the disk is full"));
                }
                Err(e) if out_of_space(&e) && !reserve_used && release_reserve() => {
                    reserve_used = true;
                }
                r => return r,
            }
        }
    }

    /// Whether followers hold segments past the normal two.
    fn spill_held(&self) -> bool {
        let g = self.store.lock();
        !g.removed && !g.holds.is_empty() && g.spilled_bytes() > 0
    }

    /// Starts the next segment, once closing this one spills no more than
    /// allowed for the followers still reading older ones.
    fn rotate(&mut self) -> std::io::Result<()> {
        let path = self.segment_path();
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)?;
        let mut g = self.store.lock();
        while self.file.is_some()
            && !g.removed
            && g.needed_closed_bytes() > self.store.max_spill_bytes
        {
            g = self.store.wait(g, "a live reader is behind");
        }
        if g.removed {
            drop(g);
            let _ = std::fs::remove_file(&path);
            self.gone = true;
            return Ok(());
        }
        g.segments.push_back(Segment {
            path,
            first_seq: self.next_seq,
            bytes: 0,
        });
        g.collect();
        drop(g);
        self.next_file += 1;
        self.file = Some(file);
        self.size = 0;
        Ok(())
    }

    fn try_append(&mut self, stream: u8, data: &[u8]) -> std::io::Result<u64> {
        if !self.gone && (self.file.is_none() || self.size >= self.store.max_file_bytes) {
            self.rotate()?;
        }
        let seq = self.next_seq;
        let Some(file) = self.file.as_mut().filter(|_| !self.gone) else {
            // Removed: the process's output goes nowhere now.
            self.next_seq += 1;
            return Ok(seq);
        };
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
        let mut g = self.store.lock();
        if g.removed {
            drop(g);
            self.file = None;
            self.gone = true;
            return Ok(seq);
        }
        if let Some(s) = g.segments.back_mut() {
            s.bytes = self.size;
        }
        g.next_seq = self.next_seq;
        Ok(seq)
    }
}
