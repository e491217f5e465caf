//! The gRPC listener's connections, admitted within the limits of
//! `talon_core::listen` (a flood of idle connections must not take every
//! fd of the process), wrapped so tonic can serve them.

/// A connection of the gRPC listener, within its limits (see
/// `talon_core::listen`).
pub struct GrpcConn(talon_core::listen::Limited);

impl tonic::transport::server::Connected for GrpcConn {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.0.get_ref().connect_info()
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
