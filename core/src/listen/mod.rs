//! Limits on the connections of every listener a client can reach (gRPC,
//! REST, E2B's two, the worker's data plane, ops), whatever the protocol:
//!
//! - at most `max` open at once and `per_peer` from one address; one over
//!   a limit is closed as soon as it is accepted, so a flood cannot take
//!   the process's file descriptors from everything else (the probe's 20k
//!   idle connections to the gateway hit the fd limit and the platform,
//!   one process, stopped answering);
//! - a connection that sends nothing within `first_byte` is closed;
//! - a connection counts as unauthenticated until one of its requests
//!   presents a credential the server takes (`Conn::authenticated`), and
//!   at most `unauthenticated` such are open: a newcomer past that, or
//!   past `max`, closes the oldest unauthenticated one instead of being
//!   refused. A flood that never authenticates (17 addresses × 256 idle
//!   or stalled connections filled every listener for a minute) then only
//!   recycles its own connections, while a new client still gets in and
//!   authenticated ones are never touched;
//! - an unauthenticated connection with no request in flight for `idle`
//!   is closed (an HTTP/2 connection that sent its preface and SETTINGS
//!   and nothing else was kept forever).
//!
//! Request bodies have their own rule (`body`), and so does the check of a
//! credential before a body is read (`checked`); two framings in one
//! request are `framing`'s.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
#[cfg(test)]
use tokio::net::TcpStream;

pub mod body;
pub mod checked;
mod conn;
pub mod framing;
pub mod trace;

pub use body::{BodyLimits, Paced, Tracked, track};
pub use checked::CheckedCredentials;
pub use conn::{Conn, InFlight, Limited, RequestConn};

/// The limits of one listener; 0 turns a count limit off, a zero time
/// turns its timeout off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once.
    pub max: usize,
    /// Connections open at once from one IP address.
    pub per_peer: usize,
    /// How long a new connection may stay silent before it is closed.
    pub first_byte: Duration,
    /// Connections open at once that have not authenticated; a newcomer
    /// past it closes the oldest of them.
    pub unauthenticated: usize,
    /// How long an unauthenticated connection may have no request in
    /// flight before it is closed.
    pub idle: Duration,
    /// HTTP/2: a ping after this much silence from the peer, and how long
    /// its answer may take before the connection is closed.
    pub keepalive: Duration,
    pub keepalive_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max: 4096,
            per_peer: 256,
            first_byte: Duration::from_secs(10),
            unauthenticated: 1024,
            idle: Duration::from_secs(30),
            keepalive: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// The HTTP/2 keepalive interval, for hyper's and tonic's builders.
    pub fn keepalive_interval(&self) -> Option<Duration> {
        (!self.keepalive.is_zero()).then_some(self.keepalive)
    }
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
    /// The open connections that have not authenticated, oldest first.
    unauthenticated: BTreeMap<u64, Conn>,
    next: u64,
}

impl Counts {
    /// Closes the oldest unauthenticated connection, if there is one.
    fn evict_oldest(&mut self) -> bool {
        match self.unauthenticated.pop_first() {
            Some((_, conn)) => {
                conn.close();
                true
            }
            None => false,
        }
    }
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
    conn: Conn,
    counts: Arc<Mutex<Counts>>,
}

impl Slot {
    /// The connection's state, which its requests carry.
    pub fn conn(&self) -> &Conn {
        &self.conn
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().expect("connection counts");
        c.total -= 1;
        c.unauthenticated.remove(&self.conn.seq());
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
    /// Every place is held by an authenticated connection.
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

    /// A place for a connection from `peer`, if the limits allow one: a
    /// peer at its own limit is refused; past the total or the
    /// unauthenticated budget, the oldest unauthenticated connection is
    /// closed to make room (and only when every place is held by an
    /// authenticated one is the newcomer refused).
    pub fn admit(&self, peer: IpAddr) -> Result<Slot, Refused> {
        let l = self.limits;
        let mut c = self.counts.lock().expect("connection counts");
        let mine = c.by_peer.get(&peer).copied().unwrap_or(0);
        if l.per_peer > 0 && mine >= l.per_peer {
            return Err(Refused::PeerFull);
        }
        let full = l.max > 0 && c.total >= l.max;
        let crowded = l.unauthenticated > 0 && c.unauthenticated.len() >= l.unauthenticated;
        if full || crowded {
            let made_room = c.evict_oldest();
            if full && !made_room {
                return Err(Refused::Full);
            }
        }
        c.total += 1;
        *c.by_peer.entry(peer).or_default() += 1;
        let seq = c.next;
        c.next += 1;
        let conn = Conn::new(seq, Arc::downgrade(&self.counts));
        c.unauthenticated.insert(seq, conn.clone());
        Ok(Slot {
            peer,
            conn,
            counts: self.counts.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.counts.lock().expect("connection counts").total
    }

    /// Open connections that have not authenticated.
    pub fn unauthenticated(&self) -> usize {
        self.counts
            .lock()
            .expect("connection counts")
            .unauthenticated
            .len()
    }

    /// The next connection the limits admit, wrapped so that it keeps its
    /// place while open and is closed when it stays silent or idle too
    /// long or is evicted. Those refused are closed at once (and logged at
    /// most once a second).
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
                    return Ok((Limited::new(stream, slot, self.limits), peer));
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
        Refused::Full => format!(
            "{} connections are open, all authenticated (the limit)",
            l.max
        ),
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

    fn limits(max: usize, per_peer: usize, unauthenticated: usize) -> Limits {
        Limits {
            max,
            per_peer,
            first_byte: Duration::from_millis(300),
            unauthenticated,
            idle: Duration::from_millis(300),
            ..Limits::default()
        }
    }

    fn closed(s: &Slot) -> bool {
        s.conn().is_closed()
    }

    #[test]
    fn counts_per_peer_and_in_all() {
        let a = Admission::new(limits(3, 2, 0));
        let (p, q): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let s1 = a.admit(p).unwrap();
        let s2 = a.admit(p).unwrap();
        assert_eq!(a.admit(p).unwrap_err(), Refused::PeerFull);
        let s3 = a.admit(q).unwrap();
        // Full: authenticated connections keep their places, and a
        // newcomer closes the oldest unauthenticated one instead.
        s1.conn().authenticated();
        let s4 = a.admit(q).unwrap();
        assert!(closed(&s2) && !closed(&s1) && !closed(&s3));
        drop(s2);
        s3.conn().authenticated();
        s4.conn().authenticated();
        assert_eq!(a.admit(p).unwrap_err(), Refused::Full);
        drop(s1);
        assert_eq!(a.open(), 2);
        let _s5 = a.admit(p).unwrap();
        let unlimited = Admission::new(limits(0, 0, 0));
        let held: Vec<_> = (0..1000).map(|_| unlimited.admit(p).unwrap()).collect();
        assert_eq!(unlimited.open(), held.len());
    }

    #[test]
    fn unauthenticated_connections_have_a_smaller_budget() {
        let a = Admission::new(limits(100, 100, 2));
        let p: IpAddr = "10.0.0.1".parse().unwrap();
        let s1 = a.admit(p).unwrap();
        let s2 = a.admit(p).unwrap();
        s2.conn().authenticated();
        let s3 = a.admit(p).unwrap();
        let s4 = a.admit(p).unwrap();
        // s1 was the oldest unauthenticated one; s2 is not counted.
        assert!(closed(&s1) && !closed(&s2) && !closed(&s3) && !closed(&s4));
        assert_eq!(a.unauthenticated(), 2);
        let s5 = a.admit(p).unwrap();
        assert!(closed(&s3) && !closed(&s4) && !closed(&s5));
        drop((s1, s3));
        assert_eq!((a.open(), a.unauthenticated()), (3, 2));
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_one_over_the_limit_refused() {
        use tokio::io::AsyncReadExt;
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let a = Admission::new(limits(10, 1, 0));
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

    /// After its first byte, an unauthenticated connection is closed once
    /// it has had no request in flight for the idle time, an evicted one
    /// at once, and an authenticated one is left alone.
    #[tokio::test]
    async fn idle_and_evicted_connections_are_closed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let a = Admission::new(limits(10, 10, 1));
        let mut peer = TcpStream::connect(addr).await.unwrap();
        let (mut conn, _) = a.accept(&listener).await.unwrap();
        peer.write_all(b"x").await.unwrap();
        let mut b = [0u8; 1];
        conn.read_exact(&mut b).await.unwrap();
        // A request in flight keeps it open past the idle time.
        let req = conn.conn().request();
        let t0 = std::time::Instant::now();
        let waited = tokio::time::timeout(Duration::from_millis(600), conn.read(&mut b)).await;
        assert!(waited.is_err(), "{waited:?}");
        drop(req);
        let e = conn.read(&mut b).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(
            t0.elapsed() >= Duration::from_millis(850),
            "{:?}",
            t0.elapsed()
        );
        drop(conn);
        // Authenticated: never idle-closed; evicted: closed at once.
        let mut p1 = TcpStream::connect(addr).await.unwrap();
        let (mut authed, _) = a.accept(&listener).await.unwrap();
        p1.write_all(b"x").await.unwrap();
        authed.read_exact(&mut b).await.unwrap();
        authed.conn().authenticated();
        let waited = tokio::time::timeout(Duration::from_millis(600), authed.read(&mut b)).await;
        assert!(waited.is_err(), "{waited:?}");
        let _p2 = TcpStream::connect(addr).await.unwrap();
        let (mut first, _) = a.accept(&listener).await.unwrap();
        let reading = tokio::spawn(async move {
            let mut b = [0u8; 1];
            first.read(&mut b).await.map_err(|e| e.kind())
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _p3 = TcpStream::connect(addr).await.unwrap();
        let (_second, _) = a.accept(&listener).await.unwrap();
        let r = tokio::time::timeout(Duration::from_millis(200), reading).await;
        assert_eq!(r.unwrap().unwrap(), Err(io::ErrorKind::ConnectionReset));
    }
}
