//! Refuses an HTTP/1 request that carries both `Transfer-Encoding` and
//! `Content-Length`: the two framings disagree, and a proxy in front that
//! reads the other one is how requests are smuggled. hyper follows the
//! RFC (chunked wins, the connection is closed after the response) and,
//! when `Transfer-Encoding` comes first, drops `Content-Length` before a
//! handler can see it, so the check is made here, on the bytes: the
//! connection's inbound stream is followed head by body (a length, chunks,
//! or nothing), and each request head is held back until it is whole and
//! checked. One with both fields is replaced by a request for
//! [`REFUSED_PATH`], which every HTTP listener (the REST gateway, E2B's
//! two) answers with a 400, and the stream ends there; the requests
//! before it are answered as usual. HTTP/2 (its preface) and upgraded
//! connections are passed through untouched; so is anything this reader
//! can't follow (hyper refuses what is malformed).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};

/// The path a refused request becomes; each listener answers it with a 400.
pub const REFUSED_PATH: &str = "/.talon/two-framings";
const REFUSED_HEAD: &[u8] =
    b"GET /.talon/two-framings HTTP/1.1\r\nhost: talon\r\nconnection: close\r\n\r\n";

/// Most bytes of one request head held back; past it, the stream is
/// passed through (hyper refuses a head that long).
const MAX_HEAD: usize = 64 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading a request head.
    Head,
    /// A body of this many bytes more.
    Body(u64),
    /// In a chunked body: a chunk-size line.
    ChunkSize,
    /// A chunk's data and its CRLF: this many bytes more.
    ChunkData(u64),
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
    /// Not followed any further: HTTP/2, an upgrade, or unreadable.
    Pass,
    /// A refused head was replaced: nothing after it is read.
    Ended,
}

/// Follows one connection's inbound HTTP/1 bytes in a buffer: what is
/// approved may go to the server, what is being checked waits.
#[derive(Debug)]
pub struct Follower {
    state: State,
    /// Bytes read and not yet handed on.
    pending: Vec<u8>,
    /// How many of `pending` are approved, and how many were looked at.
    approved: usize,
    scanned: usize,
}

impl Default for Follower {
    fn default() -> Self {
        Follower {
            state: State::Head,
            pending: Vec::new(),
            approved: 0,
            scanned: 0,
        }
    }
}

impl Follower {
    /// Takes bytes just read and approves what it can.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        self.advance();
    }

    /// The peer ended its side: whatever waits is handed on as it is.
    pub fn eof(&mut self) {
        if self.state != State::Ended {
            self.approved = self.pending.len();
            self.state = State::Pass;
        }
    }

    /// Approved bytes, taken by the caller (at most `max`).
    pub fn take(&mut self, max: usize) -> Vec<u8> {
        let n = self.approved.min(max);
        self.approved -= n;
        self.scanned -= n;
        self.pending.drain(..n).collect()
    }

    /// Whether part of a request head is held back, waiting for the rest.
    pub fn holding(&self) -> bool {
        self.state == State::Head && self.pending.len() > self.approved
    }

    pub fn has_approved(&self) -> bool {
        self.approved > 0
    }

    /// Whether nothing more will be approved (a refusal was handed on).
    pub fn ended(&self) -> bool {
        self.state == State::Ended && self.approved == 0
    }

    fn advance(&mut self) {
        loop {
            let avail = self.pending.len() - self.scanned;
            match self.state {
                State::Ended => return,
                State::Pass => {
                    self.scanned = self.pending.len();
                    self.approved = self.scanned;
                    return;
                }
                State::Body(n) | State::ChunkData(n) => {
                    if avail == 0 {
                        return;
                    }
                    let take = (avail as u64).min(n);
                    self.scanned += take as usize;
                    self.approved = self.scanned;
                    let left = n - take;
                    self.state = match (self.state, left) {
                        (State::Body(_), 0) => State::Head,
                        (State::Body(_), l) => State::Body(l),
                        (_, 0) => State::ChunkSize,
                        (_, l) => State::ChunkData(l),
                    };
                }
                State::ChunkSize | State::Trailers => {
                    let Some(nl) = self.pending[self.scanned..]
                        .iter()
                        .position(|b| *b == b'\n')
                    else {
                        if avail > MAX_HEAD {
                            self.state = State::Pass;
                            continue;
                        }
                        return;
                    };
                    let line = &self.pending[self.scanned..self.scanned + nl + 1];
                    self.state = if self.state == State::Trailers {
                        if line == b"\r\n" || line == b"\n" {
                            State::Head
                        } else {
                            State::Trailers
                        }
                    } else {
                        match chunk_size(line) {
                            Some(0) => State::Trailers,
                            Some(n) => State::ChunkData(n.saturating_add(2)),
                            None => State::Pass,
                        }
                    };
                    self.scanned += nl + 1;
                    self.approved = self.scanned;
                }
                State::Head => {
                    let start = self.approved;
                    let held = &self.pending[start..];
                    const PREFACE: &[u8] = b"PRI * HTTP/2.0";
                    if !held.is_empty() && held.len() < PREFACE.len() && PREFACE.starts_with(held) {
                        self.scanned = self.pending.len();
                        return;
                    }
                    if held.starts_with(PREFACE) {
                        self.state = State::Pass;
                        continue;
                    }
                    let Some(end) = head_end(held) else {
                        if held.len() > MAX_HEAD {
                            self.state = State::Pass;
                            continue;
                        }
                        self.scanned = self.pending.len();
                        return;
                    };
                    let next = next_after_head(&held[..end]);
                    if next == State::Ended {
                        self.pending.truncate(start);
                        self.pending.extend_from_slice(REFUSED_HEAD);
                        self.scanned = self.pending.len();
                        self.approved = self.scanned;
                        self.state = State::Ended;
                        return;
                    }
                    self.scanned = start + end;
                    self.approved = self.scanned;
                    self.state = next;
                }
            }
        }
    }
}

/// Where a request head (after any blank lines before it) ends.
fn head_end(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    // Blank lines before a request are allowed (and skipped by hyper).
    while b[i..].starts_with(b"\r\n") {
        i += 2;
    }
    b[i..]
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| i + p + 4)
}

fn chunk_size(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    let hex = text.trim_end().split(';').next()?.trim();
    u64::from_str_radix(hex, 16).ok()
}

/// What follows a complete request head.
fn next_after_head(head: &[u8]) -> State {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    let at = head
        .iter()
        .position(|b| *b != b'\r' && *b != b'\n')
        .unwrap_or(0);
    match req.parse(&head[at..]) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return State::Pass,
    }
    let named = |n: &'static str| {
        req.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(n))
    };
    let te = named("transfer-encoding").count() > 0;
    let cl: Vec<&[u8]> = named("content-length").map(|h| h.value).collect();
    if te && !cl.is_empty() {
        return State::Ended;
    }
    if named("upgrade").count() > 0 {
        return State::Pass;
    }
    if te {
        return State::ChunkSize;
    }
    match cl.first() {
        None => State::Head,
        Some(v) => match std::str::from_utf8(v)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            Some(0) => State::Head,
            Some(n) => State::Body(n),
            None => State::Pass,
        },
    }
}

/// A connection whose inbound HTTP/1 requests are followed (see above).
/// A request head held back here is invisible to hyper, whose header read
/// timeout starts only once the connection's protocol is known from its
/// first bytes: so a head that is not whole within `head_timeout` of its
/// first byte fails the connection here.
#[derive(Debug)]
pub struct Followed<T> {
    io: T,
    follower: Follower,
    head_timeout: Duration,
    /// Running while a head is held back.
    head_deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> Followed<T> {
    pub fn new(io: T, head_timeout: Duration) -> Self {
        Followed {
            io,
            follower: Follower::default(),
            head_timeout,
            head_deadline: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Followed<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        loop {
            if me.follower.has_approved() {
                me.head_deadline = None;
                let bytes = me.follower.take(buf.remaining());
                buf.put_slice(&bytes);
                return Poll::Ready(Ok(()));
            }
            if me.follower.ended() {
                // Nothing after the refused request is read. Not an EOF:
                // hyper would drop the 400 it is writing (it closes on a
                // half-close); the 400 says `connection: close`.
                return Poll::Pending;
            }
            let mut tmp = [0u8; 16 << 10];
            let mut rb = ReadBuf::new(&mut tmp);
            match Pin::new(&mut me.io).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) if rb.filled().is_empty() => {
                    me.follower.eof();
                    if !me.follower.has_approved() {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(Ok(())) => me.follower.push(rb.filled()),
                Poll::Pending => {
                    if me.follower.holding() {
                        let timeout = me.head_timeout;
                        let deadline = me
                            .head_deadline
                            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                        if deadline.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                "a request's headers did not arrive in time",
                            )));
                        }
                    }
                    return Poll::Pending;
                }
                other => return other,
            }
        }
    }
}

crate::forward_async_write!(Followed<T>, io);

#[cfg(test)]
mod tests {
    use super::*;

    /// What reaches the server from `bytes`, cut in two at every place
    /// (each cut must give the same).
    fn follow(bytes: &[u8]) -> Vec<u8> {
        let run = |parts: &[&[u8]]| {
            let mut f = Follower::default();
            let mut out = Vec::new();
            for p in parts {
                f.push(p);
                out.extend(f.take(usize::MAX));
            }
            f.eof();
            out.extend(f.take(usize::MAX));
            out
        };
        let whole = run(&[bytes]);
        for cut in 0..bytes.len() {
            assert_eq!(run(&[&bytes[..cut], &bytes[cut..]]), whole, "cut at {cut}");
        }
        whole
    }

    fn refused_after(prefix: &[u8]) -> Vec<u8> {
        let mut v = prefix.to_vec();
        v.extend_from_slice(REFUSED_HEAD);
        v
    }

    #[test]
    fn two_framings_are_refused_in_either_order_and_anywhere() {
        for head in [
            &b"POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\nabcd"[..],
            b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 4\r\n\r\n2\r\nab\r\n0\r\n\r\n",
        ] {
            assert_eq!(follow(head), REFUSED_HEAD);
        }
        // After a request with a body and one with chunks, which pass.
        let mut s = b"POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".to_vec();
        s.extend_from_slice(
            b"POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n",
        );
        assert_eq!(follow(&s), s);
        let good = s.clone();
        s.extend_from_slice(b"\r\nGET /c HTTP/1.1\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\nGET /d HTTP/1.1\r\n\r\n");
        assert_eq!(follow(&s), refused_after(&good));
    }

    #[test]
    fn what_is_left_alone() {
        for s in [
            // A body that looks like a head is a body.
            &b"POST / HTTP/1.1\r\nContent-Length: 66\r\n\r\nGET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            // HTTP/2, and an upgraded connection's bytes.
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nTransfer-Encoding: x\r\nContent-Length: 1\r\n\r\n",
            b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\nGET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            // A head cut short is handed on at the end, for hyper to refuse.
            b"GET / HTTP/1.1\r\nHost: x",
        ] {
            assert_eq!(follow(s), s, "{}", String::from_utf8_lossy(s));
        }
    }
}
