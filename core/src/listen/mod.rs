//! Limits on the connections of every listener a client can reach (gRPC,
//! REST): at most `max` at once, at most `per_peer` from one address, and
//! a connection that sends nothing within `first_byte` is closed. A
//! connection over a limit is closed as soon as it is accepted, so a flood
//! of idle connections cannot take the process's file descriptors from
//! everything else: the probe's 20k idle connections to the gateway hit
//! the fd limit and the whole platform (one process) stopped answering.
//! Idle keep-alive connections are the HTTP server's to close (the REST
//! gateway's header read timeout); the limits here hold whatever the
//! protocol.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

pub mod framing;

/// The limits of one listener; 0 turns a count limit off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once.
    pub max: usize,
    /// Connections open at once from one IP address.
    pub per_peer: usize,
    /// How long a new connection may stay silent before it is closed.
    pub first_byte: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max: 4096,
            per_peer: 256,
            first_byte: Duration::from_secs(10),
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// Counts a listener's open connections against its limits.
#[derive(Clone, Debug)]
pub struct Admission {
    limits: Limits,
    counts: Arc<Mutex<Counts>>,
}

/// One admitted connection's place; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    peer: IpAddr,
    counts: Arc<Mutex<Counts>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().expect("connection counts");
        c.total -= 1;
        if let Some(n) = c.by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                c.by_peer.remove(&self.peer);
            }
        }
    }
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Full,
    PeerFull,
}

impl Admission {
    pub fn new(limits: Limits) -> Self {
        Admission {
            limits,
            counts: Arc::default(),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A place for a connection from `peer`, if the limits allow one.
    pub fn admit(&self, peer: IpAddr) -> Result<Slot, Refused> {
        let mut c = self.counts.lock().expect("connection counts");
        if self.limits.max > 0 && c.total >= self.limits.max {
            return Err(Refused::Full);
        }
        let mine = c.by_peer.get(&peer).copied().unwrap_or(0);
        if self.limits.per_peer > 0 && mine >= self.limits.per_peer {
            return Err(Refused::PeerFull);
        }
        c.total += 1;
        *c.by_peer.entry(peer).or_default() += 1;
        Ok(Slot {
            peer,
            counts: self.counts.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.counts.lock().expect("connection counts").total
    }

    /// The next connection the limits admit, wrapped so that it keeps its
    /// place while open and is closed if it stays silent too long. Those
    /// refused are closed at once (and logged at most once a second).
    pub async fn accept(&self, listener: &TcpListener) -> io::Result<(Limited, SocketAddr)> {
        let mut last_warned: Option<tokio::time::Instant> = None;
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(x) => x,
                // Out of fds or a connection reset before we took it:
                // wait a moment rather than spin.
                Err(e) if is_transient(&e) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            match self.admit(peer.ip()) {
                Ok(slot) => {
                    let _ = stream.set_nodelay(true);
                    return Ok((Limited::new(stream, slot, self.limits.first_byte), peer));
                }
                Err(why) => {
                    drop(stream);
                    if last_warned.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
                        last_warned = Some(tokio::time::Instant::now());
                        eprintln_refusal(why, peer, self.limits);
                    }
                }
            }
        }
    }
}

fn eprintln_refusal(why: Refused, peer: SocketAddr, l: Limits) {
    let what = match why {
        Refused::Full => format!("{} connections are open (the limit)", l.max),
        Refused::PeerFull => format!(
            "{} has {} connections open (the per-peer limit)",
            peer.ip(),
            l.per_peer
        ),
    };
    // No tracing here (this crate names no logger): the caller's stderr.
    eprintln!("connection from {peer} refused: {what}");
}

fn is_transient(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
        || matches!(
            e.kind(),
            io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::Interrupted
        )
}

/// An admitted connection: its place is held while it is open, and a read
/// that finds no byte at all within the first-byte time fails.
#[derive(Debug)]
pub struct Limited {
    io: TcpStream,
    _slot: Slot,
    /// Until the first byte arrives.
    silent: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Limited {
    fn new(io: TcpStream, slot: Slot, first_byte: Duration) -> Limited {
        Limited {
            io,
            _slot: slot,
            silent: (!first_byte.is_zero()).then(|| Box::pin(tokio::time::sleep(first_byte))),
        }
    }

    pub fn get_ref(&self) -> &TcpStream {
        &self.io
    }
}

impl AsyncRead for Limited {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.silent = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match self.silent.as_mut().map(|s| s.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no request arrived on the connection in time",
                ))),
                _ => Poll::Pending,
            },
            other => other,
        }
    }
}

crate::forward_async_write!(Limited, io);

/// Raises this process's open-file limit to its hard limit: a server's
/// connections, a worker's sandboxes and their agent connections all take
/// file descriptors. What the soft limit is now.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 0;
        }
        if r.rlim_cur < r.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return r.rlim_max;
            }
        }
    }
    r.rlim_cur
}

/// A loopback TCP port that is free now and lies below the kernel's
/// ephemeral range, for a harness that hands ports to a child process to
/// bind. A port the kernel picked for `bind(0)` may be given to an
/// outgoing connection before the child binds it (CI saw `talon up` exit
/// with "address in use" that way); ports below the range never are. Each
/// port is handed out once per process.
pub fn spare_port() -> io::Result<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let (lo, hi) = (20_000u32, ephemeral_low().clamp(20_001, 65_535));
    let span = hi - lo;
    // Processes started together start at different places.
    let seed = std::process::id().wrapping_mul(2_654_435_761) % span;
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (lo + (seed + n.wrapping_mul(7_919)) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        "no spare port below the ephemeral range",
    ))
}

/// The kernel's first ephemeral port (32768 unless configured).
fn ephemeral_low() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_ports_are_distinct_bindable_and_below_the_ephemeral_range() {
        let a = spare_port().unwrap();
        let b = spare_port().unwrap();
        assert_ne!(a, b);
        for p in [a, b] {
            assert!((20_000..ephemeral_low() as u16).contains(&p), "{p}");
            std::net::TcpListener::bind(("127.0.0.1", p)).unwrap();
        }
    }

    #[test]
    fn counts_per_peer_and_in_all() {
        let a = Admission::new(Limits {
            max: 3,
            per_peer: 2,
            first_byte: Duration::from_secs(1),
        });
        let (p, q): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let s1 = a.admit(p).unwrap();
        let _s2 = a.admit(p).unwrap();
        assert_eq!(a.admit(p).unwrap_err(), Refused::PeerFull);
        let _s3 = a.admit(q).unwrap();
        assert_eq!(a.admit(q).unwrap_err(), Refused::Full);
        drop(s1);
        assert_eq!(a.open(), 2);
        let _s4 = a.admit(p).unwrap();
        let unlimited = Admission::new(Limits {
            max: 0,
            per_peer: 0,
            first_byte: Duration::ZERO,
        });
        let held: Vec<_> = (0..1000).map(|_| unlimited.admit(p).unwrap()).collect();
        assert_eq!(unlimited.open(), held.len());
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_one_over_the_limit_refused() {
        use tokio::io::AsyncReadExt;
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let a = Admission::new(Limits {
            max: 10,
            per_peer: 1,
            first_byte: Duration::from_millis(300),
        });
        let _silent = TcpStream::connect(addr).await.unwrap();
        let (mut conn, _) = a.accept(&listener).await.unwrap();
        let next = tokio::spawn({
            let (a, listener) = (a.clone(), listener.clone());
            async move { a.accept(&listener).await.map(|(c, _)| c) }
        });
        // Over the per-peer limit: closed without a byte.
        let mut refused = TcpStream::connect(addr).await.unwrap();
        let mut b = [0u8; 1];
        let n = tokio::time::timeout(Duration::from_secs(2), refused.read(&mut b))
            .await
            .unwrap()
            .unwrap_or(0);
        assert_eq!(n, 0);
        // The silent one times out and gives its place back.
        let e = conn.read(&mut b).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        drop(conn);
        assert_eq!(a.open(), 0);
        let _fresh = TcpStream::connect(addr).await.unwrap();
        let admitted = tokio::time::timeout(Duration::from_secs(2), next)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(a.open(), 1);
        drop(admitted);
    }
}
