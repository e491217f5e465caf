//! The gRPC listener's connections, admitted within the limits of
//! `talon_core::listen` (a flood of idle or unauthenticated connections
//! must not take every fd of the process, nor every place from the
//! clients that authenticate), wrapped so tonic can serve them; and the
//! outermost layer, which takes each request on its connection: counted in
//! flight until its response ends, its body paced until the access layer
//! (`rbac`) takes its credential.

use std::task::{Context, Poll};
use talon_core::listen::{BodyLimits, Conn, Tracked};
use tonic::body::Body;

/// A connection of the gRPC listener, within its limits (see
/// `talon_core::listen`).
pub struct GrpcConn(talon_core::listen::Limited);

/// What tonic puts in each request of a connection: its addresses and the
/// connection's state.
#[derive(Clone, Debug)]
pub struct ConnInfo {
    pub tcp: tonic::transport::server::TcpConnectInfo,
    pub conn: Conn,
}

impl tonic::transport::server::Connected for GrpcConn {
    type ConnectInfo = ConnInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        ConnInfo {
            tcp: self.0.get_ref().connect_info(),
            conn: self.0.conn(),
        }
    }
}

impl tokio::io::AsyncRead for GrpcConn {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

talon_core::forward_async_write!(GrpcConn, 0);

/// The gRPC listener's connections, admitted within `limits`.
pub fn limited_incoming(
    listener: tokio::net::TcpListener,
    limits: talon_core::listen::Limits,
) -> impl futures::Stream<Item = std::io::Result<GrpcConn>> {
    let admission = talon_core::listen::Admission::new(limits);
    futures::stream::unfold((listener, admission), |(l, a)| async move {
        let next = a.accept(&l).await.map(|(io, _)| GrpcConn(io));
        Some((next, (l, a)))
    })
}

/// Takes every request on its connection (see the module's doc).
#[derive(Clone, Copy, Debug)]
pub struct ConnLayer(pub BodyLimits);

impl<S> tower::Layer<S> for ConnLayer {
    type Service = ConnService<S>;
    fn layer(&self, inner: S) -> ConnService<S> {
        ConnService {
            inner,
            bodies: self.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ConnService<S> {
    inner: S,
    bodies: BodyLimits,
}

impl<S> tower::Service<http::Request<Body>> for ConnService<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let Some(conn) = req.extensions().get::<ConnInfo>().map(|i| i.conn.clone()) else {
            return Box::pin(self.inner.call(req));
        };
        let (req, in_flight) = talon_core::listen::track(&conn, self.bodies, req);
        let call = self.inner.call(req.map(Body::new));
        Box::pin(async move {
            let resp = call.await?;
            Ok(resp.map(|b| Body::new(Tracked::new(b, in_flight))))
        })
    }
}
