//! Wrappers of connections: what they hand on unchanged.

/// Implements `tokio::io::AsyncWrite` for a wrapper by handing every call
/// to one of its fields (the wrappers of a connection change how it reads,
/// never how it writes). `forward_async_write!(Type, field)`, or
/// `forward_async_write!(Type<T>, field)` for a wrapper generic over its
/// stream.
#[macro_export]
macro_rules! forward_async_write {
    ($ty:ident < $g:ident >, $field:tt) => {
        impl<$g: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for $ty<$g> {
            $crate::forward_async_write!(@body $field);
        }
    };
    ($ty:ty, $field:tt) => {
        impl tokio::io::AsyncWrite for $ty {
            $crate::forward_async_write!(@body $field);
        }
    };
    (@body $field:tt) => {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::pin::Pin::new(&mut self.$field).poll_write(cx, buf)
        }
        fn poll_write_vectored(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            bufs: &[std::io::IoSlice<'_>],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::pin::Pin::new(&mut self.$field).poll_write_vectored(cx, bufs)
        }
        fn is_write_vectored(&self) -> bool {
            self.$field.is_write_vectored()
        }
        fn poll_flush(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.$field).poll_flush(cx)
        }
        fn poll_shutdown(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::pin::Pin::new(&mut self.$field).poll_shutdown(cx)
        }
    };
}
