//! One admitted connection: its state, which its requests carry (whether it
//! has authenticated, how many requests are in flight), and the stream
//! wrapper that closes it when it stays silent or, unauthenticated, idle
//! too long, or when it is evicted to make room (see the module above).

use super::{Counts, Limits, Slot};
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

struct Shared {
    seq: u64,
    authenticated: AtomicBool,
    /// Evicted: the stream fails at its next read or write.
    closed: AtomicBool,
    in_flight: AtomicUsize,
    /// When the last request in flight ended (or the connection opened).
    idle_since: Mutex<Instant>,
    /// The connection's reader, woken when any of the above changes.
    reader: Mutex<Option<Waker>>,
    counts: Weak<Mutex<Counts>>,
}

/// The state of one connection, shared by its stream and its requests
/// (`track` puts it in each request's extensions).
#[derive(Clone)]
pub struct Conn(Arc<Shared>);

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn")
            .field("seq", &self.0.seq)
            .field("authenticated", &self.is_authenticated())
            .field("in_flight", &self.0.in_flight.load(Ordering::Relaxed))
            .finish()
    }
}

impl Conn {
    pub(super) fn new(seq: u64, counts: Weak<Mutex<Counts>>) -> Conn {
        Conn(Arc::new(Shared {
            seq,
            authenticated: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            reader: Mutex::new(None),
            counts,
        }))
    }

    pub(super) fn seq(&self) -> u64 {
        self.0.seq
    }

    /// One of the connection's requests presented a credential the server
    /// took: the connection leaves the unauthenticated budget for good.
    pub fn authenticated(&self) {
        if self.0.authenticated.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(counts) = self.0.counts.upgrade() {
            counts
                .lock()
                .expect("connection counts")
                .unauthenticated
                .remove(&self.0.seq);
        }
        self.wake();
    }

    pub fn is_authenticated(&self) -> bool {
        self.0.authenticated.load(Ordering::Acquire)
    }

    /// A request under way; the connection is not idle until it is dropped.
    pub fn request(&self) -> InFlight {
        self.0.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.0.clone())
    }

    /// The connection was upgraded (a WebSocket): it is never idle again;
    /// it ends when the upgraded stream does.
    pub fn upgraded(&self) {
        std::mem::forget(self.request());
    }

    /// Closes the connection at its next read or write.
    pub(super) fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
        self.wake();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.0.closed.load(Ordering::Acquire)
    }

    fn wake(&self) {
        if let Some(w) = self.0.reader.lock().expect("reader").take() {
            w.wake();
        }
    }
}

/// A request in flight on its connection (see `Conn::request`).
pub struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.0.idle_since.lock().expect("idle") = Instant::now();
            if let Some(w) = self.0.reader.lock().expect("reader").take() {
                w.wake();
            }
        }
    }
}

/// What a request carries of its connection: put in its extensions by
/// `track`, found there by whoever checks its credential.
#[derive(Clone, Debug)]
pub struct RequestConn {
    pub(super) conn: Conn,
    pub(super) pace: super::body::Lift,
}

impl RequestConn {
    pub fn of(extensions: &http::Extensions) -> Option<&RequestConn> {
        extensions.get::<RequestConn>()
    }

    /// The request presented a credential the server took.
    pub fn authenticated(&self) {
        self.conn.authenticated();
    }

    /// The request's body is no longer held to the minimum rate (an
    /// authenticated interactive stream: a PTY's or a process's input).
    pub fn unpace(&self) {
        self.pace.lift();
    }

    pub fn conn(&self) -> &Conn {
        &self.conn
    }
}

/// An admitted connection: its place is held while it is open; a read
/// fails when no byte at all came within the first-byte time, when it is
/// unauthenticated and has had no request in flight for the idle time,
/// and (as does a write) once it was evicted.
pub struct Limited {
    io: TcpStream,
    slot: Slot,
    /// Until the first byte arrives.
    silent: Option<Pin<Box<Sleep>>>,
    idle: Duration,
    /// Armed for this deadline while the connection is idle.
    idle_timer: Option<(Instant, Pin<Box<Sleep>>)>,
}

impl fmt::Debug for Limited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limited")
            .field("io", &self.io)
            .field("conn", &self.slot.conn)
            .finish()
    }
}

fn evicted() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "closed to make room: the connection had not authenticated",
    )
}

impl Limited {
    pub(super) fn new(io: TcpStream, slot: Slot, limits: Limits) -> Limited {
        let first = limits.first_byte;
        Limited {
            io,
            slot,
            silent: (!first.is_zero()).then(|| Box::pin(tokio::time::sleep(first))),
            idle: limits.idle,
            idle_timer: None,
        }
    }

    pub fn get_ref(&self) -> &TcpStream {
        &self.io
    }

    /// The connection's state, for its requests.
    pub fn conn(&self) -> Conn {
        self.slot.conn.clone()
    }

    fn closed(&self) -> bool {
        self.slot.conn.is_closed()
    }

    /// Whether an unauthenticated connection has been idle too long; arms
    /// the timer (woken by it) when it is idle but not yet for long enough.
    fn idle_expired(&mut self, cx: &mut Context<'_>) -> bool {
        let s = &self.slot.conn.0;
        if self.idle.is_zero()
            || s.authenticated.load(Ordering::Acquire)
            || s.in_flight.load(Ordering::Acquire) > 0
        {
            self.idle_timer = None;
            return false;
        }
        let deadline = *s.idle_since.lock().expect("idle") + self.idle;
        match &mut self.idle_timer {
            Some((at, t)) => {
                if *at != deadline {
                    *at = deadline;
                    t.as_mut().reset(deadline);
                }
                t.as_mut().poll(cx).is_ready()
            }
            None => {
                let mut t = Box::pin(tokio::time::sleep_until(deadline));
                let ready = t.as_mut().poll(cx).is_ready();
                self.idle_timer = Some((deadline, t));
                ready
            }
        }
    }
}

impl AsyncRead for Limited {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.closed() {
            return Poll::Ready(Err(evicted()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.silent = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                // Woken by an eviction or a change of state, then looked
                // at again (the state may have changed before the waker
                // was in place).
                *self.slot.conn.0.reader.lock().expect("reader") = Some(cx.waker().clone());
                if self.closed() {
                    return Poll::Ready(Err(evicted()));
                }
                if let Some(Poll::Ready(())) = self.silent.as_mut().map(|s| s.as_mut().poll(cx)) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request arrived on the connection in time",
                    )));
                }
                if self.idle_expired(cx) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the unauthenticated connection was idle too long",
                    )));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for Limited {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.closed() {
            return Poll::Ready(Err(evicted()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.closed() {
            return Poll::Ready(Err(evicted()));
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
