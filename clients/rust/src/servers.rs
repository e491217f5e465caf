//! Several servers of one platform as one channel. Calls go to the
//! current server; a call that fails there at the transport (the server
//! is gone: connection refused, reset, timed out) makes the next server
//! current, so the caller's retry goes there. The call itself is not
//! replayed: a request body is consumed by its first try, and a create
//! that reached a dying server may have happened (retry a create with an
//! idempotency key). tonic's own balancer was no help here: it kept
//! sending calls to a killed server's endpoint.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codegen::Service;
use tonic::codegen::http;
use tonic::transport::Channel;

#[derive(Clone)]
pub struct Servers {
    chans: Arc<[Channel]>,
    current: Arc<AtomicUsize>,
}

impl Servers {
    pub fn new(chans: Vec<Channel>) -> Servers {
        Servers {
            chans: chans.into(),
            current: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The index of the server calls go to now.
    pub fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed) % self.chans.len()
    }
}

type Fut =
    Pin<Box<dyn Future<Output = Result<http::Response<Body>, tonic::transport::Error>> + Send>>;

impl Service<http::Request<Body>> for Servers {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = Fut;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Each call readies the channel it picks.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Fut {
        let n = self.chans.len();
        let i = self.current();
        let mut ch = self.chans[i].clone();
        let current = self.current.clone();
        Box::pin(async move {
            let r = async {
                futures::future::poll_fn(|cx| ch.poll_ready(cx)).await?;
                ch.call(req).await
            }
            .await;
            if r.is_err() && n > 1 {
                // Another call may have moved on already.
                let _ =
                    current.compare_exchange(i, (i + 1) % n, Ordering::Relaxed, Ordering::Relaxed);
            }
            r
        })
    }
}
