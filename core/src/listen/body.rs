//! Request bodies must keep arriving. Every listener paces the bodies it
//! reads: a body must be whole within `timeout`, plus one second for every
//! `min_rate` bytes it has brought so far (Apache's mod_reqtimeout rule).
//! A stalled or trickling body fails (its request is answered or reset,
//! its HTTP/1 connection closed), while an upload that keeps the minimum
//! rate may last as long as it needs. Only a stream that is interactive by
//! nature, once its credential was taken (a PTY's or process's input over
//! gRPC, E2B's StreamInput), is let off (`RequestConn::unpace`).
//!
//! `track` is what a listener does with each request: it puts the
//! connection (`RequestConn`) in the request's extensions, paces its body
//! and counts it in flight until its response body (`Tracked`) is done.

use super::conn::{Conn, InFlight, RequestConn};
use bytes::Buf;
use http_body::{Body, Frame, SizeHint};
use std::error::Error;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn Error + Send + Sync>;

/// How fast a request body must arrive; a zero timeout turns pacing off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyLimits {
    /// The time a body may take, before any credit for what it brought.
    pub timeout: Duration,
    /// Bytes a second that earn a body one more second (0: no credit).
    pub min_rate: u64,
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits {
            timeout: Duration::from_secs(30),
            min_rate: 1024,
        }
    }
}

impl BodyLimits {
    /// How long a body that has brought `received` bytes may take in all.
    fn allowance(&self, received: u64) -> Duration {
        let credit = match self.min_rate {
            0 => Duration::ZERO,
            r => Duration::from_secs_f64(received as f64 / r as f64),
        };
        self.timeout.saturating_add(credit)
    }
}

/// Lets one body off its pace (see `RequestConn::unpace`).
#[derive(Clone, Debug, Default)]
pub(super) struct Lift(Arc<AtomicBool>);

impl Lift {
    pub(super) fn lift(&self) {
        self.0.store(true, Ordering::Release);
    }
    fn lifted(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// The error of a body that did not arrive in time.
#[derive(Debug)]
pub struct TooSlow(BodyLimits);

impl fmt::Display for TooSlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the request body did not arrive in time ({} s, and 1 s more for every {} bytes)",
            self.0.timeout.as_secs(),
            self.0.min_rate
        )
    }
}

impl Error for TooSlow {}

/// Whether `e` (or what caused it) is a body that did not arrive in time.
pub fn too_slow(e: &(dyn Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if e.is::<TooSlow>() {
            return true;
        }
        cur = e.source();
    }
    false
}

/// A request body held to its limits (see above).
pub struct Paced<B> {
    inner: B,
    limits: BodyLimits,
    started: Instant,
    received: u64,
    timer: Option<Pin<Box<Sleep>>>,
    lift: Lift,
}

impl<B> Paced<B> {
    fn new(inner: B, limits: BodyLimits, lift: Lift) -> Paced<B> {
        Paced {
            inner,
            limits,
            started: Instant::now(),
            received: 0,
            timer: None,
            lift,
        }
    }
}

impl<B> Body for Paced<B>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let me = &mut *self;
        match Pin::new(&mut me.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    me.received += d.remaining() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if me.limits.timeout.is_zero() || me.lift.lifted() {
                    return Poll::Pending;
                }
                let deadline = me.started + me.limits.allowance(me.received);
                let timer = me
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(TooSlow(me.limits))))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request counted in flight on its
/// connection until it is done or dropped.
pub struct Tracked<B> {
    inner: B,
    _in_flight: InFlight,
}

impl<B> Tracked<B> {
    pub fn new(inner: B, in_flight: InFlight) -> Tracked<B> {
        Tracked {
            inner,
            _in_flight: in_flight,
        }
    }
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Takes a request on `conn`: its connection goes in its extensions, its
/// body is paced, and it is in flight until the returned guard is dropped
/// (give it to the response: `Tracked::new`).
pub fn track<B>(
    conn: &Conn,
    limits: BodyLimits,
    mut req: http::Request<B>,
) -> (http::Request<Paced<B>>, InFlight) {
    let pace = Lift::default();
    req.extensions_mut().insert(RequestConn {
        conn: conn.clone(),
        pace: pace.clone(),
    });
    let in_flight = conn.request();
    (req.map(|b| Paced::new(b, limits, pace)), in_flight)
}

/// Reads and drops the rest of a body that is answered without being
/// read (a refused credential), while it keeps coming: at most `max`
/// bytes, no pause over `gap`, `total` in all. A client still writing a
/// small body then reads the answer rather than a reset, and a stalled
/// one is answered at once. Whether the body ended.
pub async fn drain<B: Body + Unpin>(
    body: &mut B,
    max: usize,
    gap: Duration,
    total: Duration,
) -> bool {
    let until = Instant::now() + total;
    let mut read = 0usize;
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx));
        let wait = gap.min(until.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, next).await {
            Ok(None) => return true,
            Ok(Some(Ok(frame))) => {
                read += frame.data_ref().map_or(0, |d| d.remaining());
                if read > max {
                    return false;
                }
            }
            Ok(Some(Err(_))) | Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    /// A body fed by hand.
    struct Fed(tokio::sync::mpsc::Receiver<Bytes>);

    impl Body for Fed {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
        }
    }

    async fn next<B: Body + Unpin>(b: &mut B) -> Option<Result<Frame<B::Data>, B::Error>> {
        std::future::poll_fn(|cx| Pin::new(&mut *b).poll_frame(cx)).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_must_keep_the_minimum_rate_unless_let_off() {
        let limits = BodyLimits {
            timeout: Duration::from_secs(2),
            min_rate: 100,
        };
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let mut b = Paced::new(Fed(rx), limits, Lift::default());
        // 300 bytes earn 3 s more: 5 s in all.
        tx.send(Bytes::from(vec![0u8; 300])).await.unwrap();
        assert!(next(&mut b).await.unwrap().is_ok());
        let t0 = Instant::now();
        let e = next(&mut b).await.unwrap().unwrap_err();
        assert!(too_slow(&*e), "{e}");
        assert_eq!(t0.elapsed(), Duration::from_secs(5));
        // Let off, the same body waits as long as it takes.
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let lift = Lift::default();
        let mut b = Paced::new(Fed(rx), limits, lift.clone());
        lift.lift();
        let waiting = tokio::spawn(async move { next(&mut b).await.map(|f| f.is_ok()) });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        tx.send(Bytes::from_static(b"late")).await.unwrap();
        assert_eq!(waiting.await.unwrap(), Some(true));
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_body_is_drained_while_it_keeps_coming() {
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let mut b = Fed(rx);
        tx.send(Bytes::from_static(b"abc")).await.unwrap();
        let t0 = Instant::now();
        let gap = Duration::from_millis(200);
        assert!(!drain(&mut b, 1 << 20, gap, Duration::from_secs(2)).await);
        assert_eq!(
            t0.elapsed(),
            gap,
            "a stalled body is given up after one gap"
        );
        drop(tx);
        assert!(drain(&mut b, 1 << 20, gap, Duration::from_secs(2)).await);
    }
}
