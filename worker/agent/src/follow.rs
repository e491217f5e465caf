//! A process's output as a live stream (StartProcess, ConnectProcess,
//! FollowProcessLogs, Attach, an agent run): from its log after a sequence
//! number, then live, then its exit.
//!
//! The stream reads through a follower's cursor, so what it has not read
//! stays on disk for it and the process waits when it falls too far
//! behind (see `logstore`): a slow reader receives every byte, in order.
//! It holds one page in memory; the gRPC stream's flow control carries the
//! wait back to whoever reads it, hop by hop. Dropping the stream (the
//! client went) lets the process run on.

use crate::logstore::{Cursor, LogStore, Record};
use crate::supervisor::{Follower, Proc, Progress};
use std::collections::VecDeque;
use std::sync::Arc;
use talon_proto::v1 as pb;
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

/// Most records, and about the most bytes, read from disk at once.
const PAGE: usize = 256;
const PAGE_BYTES: usize = 1 << 20;

/// What a follower sends: a chunk, or the exit at the end.
pub enum Follow {
    Chunk(Record),
    Exit(pb::ProcessExited),
}

/// Streams a process's output after `after`, then live, then its exit.
/// The stream itself waits for the process (no task and channel between
/// them: one wakeup less per event, and nothing queued).
pub fn follow(p: Arc<Proc>, after: u64) -> impl Stream<Item = Result<Follow, Status>> + Send {
    let cursor = p.follower(after);
    follow_with(p, cursor, after)
}

/// `follow` through a follower made before (one made with the process,
/// from its first byte: `Supervisor::spawn_followed`), whose position is
/// `after`.
pub fn follow_with(
    p: Arc<Proc>,
    cursor: Follower,
    after: u64,
) -> impl Stream<Item = Result<Follow, Status>> + Send {
    struct State {
        progress: tokio::sync::watch::Receiver<Progress>,
        cursor: Cursor<Arc<LogStore>>,
        /// The last sequence number sent.
        sent: u64,
        read: VecDeque<Record>,
        ended: bool,
    }
    let st = State {
        progress: p.subscribe(),
        cursor,
        sent: after,
        read: Default::default(),
        ended: false,
    };
    futures::stream::unfold(st, |mut st| async move {
        loop {
            if st.ended {
                return None;
            }
            if let Some(r) = st.read.pop_front() {
                st.sent = r.seq;
                return Some((Ok(Follow::Chunk(r)), st));
            }
            let now = st.progress.borrow_and_update().clone();
            // Records reach the disk before `last_seq` moves past them, so
            // there is nothing to read unless it has.
            //
            // Read here, not on the blocking pool: a page of records is in
            // the page cache, and a sandbox at its pids limit (a fork bomb)
            // leaves no thread to start, where a pool with none idle would
            // panic the stream.
            if now.last_seq > st.sent {
                match st.cursor.read(PAGE, PAGE_BYTES) {
                    Ok(records) if !records.is_empty() => {
                        st.read.extend(records);
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        st.ended = true;
                        return Some((Err(Status::internal(format!("log read: {e}"))), st));
                    }
                }
            }
            if now.done {
                st.ended = true;
                let exit = now.exit?;
                return Some((Ok(Follow::Exit(exit.to_pb())), st));
            }
            if st.progress.changed().await.is_err() {
                return None;
            }
        }
    })
}

/// The process's events: its start (when asked), output and exit.
pub fn event_stream(
    p: Arc<Proc>,
    after: u64,
    with_start: bool,
) -> impl Stream<Item = Result<pb::ProcessEvent, Status>> {
    let cursor = p.follower(after);
    event_stream_with(p, cursor, after, with_start)
}

/// `event_stream` through a follower made before (see `follow_with`).
pub fn event_stream_with(
    p: Arc<Proc>,
    cursor: Follower,
    after: u64,
    with_start: bool,
) -> impl Stream<Item = Result<pb::ProcessEvent, Status>> {
    use pb::process_event::Event;
    let start = with_start.then(|| {
        Ok(pb::ProcessEvent {
            event: Some(Event::Started(pb::ProcessStarted {
                pid: p.pid,
                tag: p.tag.clone(),
            })),
        })
    });
    let rest = follow_with(p, cursor, after).map(|f| {
        f.map(|f| match f {
            Follow::Chunk(r) => pb::ProcessEvent {
                event: Some(Event::Output(pb::ProcessOutput {
                    stream: i32::from(r.stream),
                    data: r.data,
                    seq: r.seq,
                })),
            },
            Follow::Exit(e) => pb::ProcessEvent {
                event: Some(Event::Exited(e)),
            },
        })
    });
    tokio_stream::iter(start).chain(rest)
}
