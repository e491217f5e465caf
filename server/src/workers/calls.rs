//! Every call the control plane makes to a worker goes through one seam,
//! `WorkerCalls`: commands on a worker's session (on this server, or
//! relayed through the server that holds it) and the data-plane calls
//! (usage, snapshots, images, the agent proxy's channel). `Remote` is the
//! real one: it owns the worker token (the bearer), the data-plane
//! channels and their limits. The domain's unit tests use
//! `fake::FakeWorkers` instead, so sandbox operations, the autopilot,
//! images and tenants are tested without a worker or root. `error` is the
//! one table from a worker's answer code to the API's error.

use crate::app::App;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;
use tonic::transport::Channel;
use wpb::worker_image_service_client::WorkerImageServiceClient;
use wpb::worker_sandbox_service_client::WorkerSandboxServiceClient;

/// What the control plane asks of workers.
#[tonic::async_trait]
pub trait WorkerCalls: Send + Sync {
    /// Sends a command and waits for its result: on the worker's session
    /// when this server holds it, else relayed through the server that
    /// does. A result with a nonzero code is the worker's answer (see
    /// `error`); an `Err` means the worker was not reached.
    async fn command(
        &self,
        app: &App,
        worker_id: &str,
        cmd: wpb::Command,
        timeout: Duration,
    ) -> Result<wpb::CommandResult>;

    /// A sandbox's usage, read by its worker's data plane at `addr`.
    async fn usage(
        &self,
        addr: &str,
        sandbox_id: &str,
        generation: i64,
    ) -> Result<wpb::GetSandboxUsageResponse>;

    /// Copies a sandbox's files into an image on its worker, telling
    /// `progress` how far the copy has got as it goes.
    async fn snapshot(
        &self,
        addr: &str,
        generation: i64,
        req: wpb::SnapshotSandboxRequest,
        progress: &tokio::sync::watch::Sender<wpb::TakeSnapshotResponse>,
    ) -> Result<wpb::SnapshotSandboxResponse>;

    /// Has the worker at `addr` forget an image.
    async fn delete_image(&self, addr: &str, name: &str) -> Result<()>;

    /// The data plane's channel at `addr` (a worker's host:port, or a
    /// peer server's URL), for the streaming calls (image uploads, the
    /// agent proxy); requests on it carry `authorize`'s bearer.
    fn channel(&self, addr: &str) -> Result<Channel>;

    /// Adds the worker token as the bearer (the one place it is
    /// presented).
    fn authorize(&self, metadata: &mut tonic::metadata::MetadataMap);
}

/// The one table from a worker's answer (a command's result code, or a
/// data-plane call's status) to the API's error. A refusal keeps its
/// meaning (a stale generation is ABORTED, bad input INVALID_ARGUMENT, a
/// limit RESOURCE_EXHAUSTED); a sandbox or image the worker does not hold,
/// or a host or runtime that could not do it, is FAILED_PRECONDITION;
/// a worker not reached, UNAVAILABLE; a fault of its own, INTERNAL.
pub fn error(worker_id: &str, code: tonic::Code, message: &str) -> Error {
    use tonic::Code as C;
    let m = format!("worker {worker_id}: {message}");
    match code {
        C::Aborted => Error::Aborted(m),
        C::InvalidArgument | C::OutOfRange => Error::InvalidArgument(m),
        C::ResourceExhausted => Error::ResourceExhausted(m),
        C::AlreadyExists => Error::AlreadyExists(m),
        C::NotFound => {
            Error::FailedPrecondition(format!("worker {worker_id} does not hold it: {message}"))
        }
        C::Unavailable | C::DeadlineExceeded | C::Cancelled => Error::Unavailable(m),
        C::Internal | C::DataLoss | C::Unknown => Error::Internal(m),
        C::Ok
        | C::FailedPrecondition
        | C::PermissionDenied
        | C::Unauthenticated
        | C::Unimplemented => Error::FailedPrecondition(m),
    }
}

/// A command result's code as `error` reads it.
pub fn command_error(worker_id: &str, r: &wpb::CommandResult) -> Error {
    error(worker_id, tonic::Code::from_i32(r.code), &r.message)
}

/// Whether a failed command's code says the sandbox itself failed (the
/// runtime could not do it), as opposed to the worker refusing it.
pub fn sandbox_failed(code: i32) -> bool {
    tonic::Code::from_i32(code) == tonic::Code::FailedPrecondition
}

/// The real workers: sessions through the hub, the data plane over
/// HTTP/2 channels made once per address and reused by every call.
pub struct Remote {
    token: String,
    channels: Mutex<HashMap<String, Channel>>,
}

impl Remote {
    pub fn new(token: String) -> Remote {
        Remote {
            token,
            channels: Mutex::new(HashMap::new()),
        }
    }

    fn request<T>(&self, msg: T) -> tonic::Request<T> {
        let mut r = tonic::Request::new(msg);
        self.authorize(r.metadata_mut());
        r
    }
}

/// A request to a worker's data plane about one sandbox: the bearer, and
/// the sandbox and generation the worker fences it by.
pub fn sandbox_request<T>(
    workers: &dyn WorkerCalls,
    msg: T,
    sandbox_id: &str,
    generation: i64,
) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    workers.authorize(r.metadata_mut());
    let m = r.metadata_mut();
    m.insert(
        talon_core::wire::SANDBOX_HEADER,
        sandbox_id.parse().expect("sandbox ids are ascii"),
    );
    m.insert(
        talon_core::wire::GENERATION_HEADER,
        tonic::metadata::MetadataValue::from(generation),
    );
    r
}

/// The worker a data-plane address belongs to, for messages.
fn at(addr: &str) -> String {
    format!("at {addr}")
}

#[tonic::async_trait]
impl WorkerCalls for Remote {
    async fn command(
        &self,
        app: &App,
        worker_id: &str,
        cmd: wpb::Command,
        timeout: Duration,
    ) -> Result<wpb::CommandResult> {
        if app.hub().is_connected(worker_id) {
            return app.hub().call(worker_id, cmd, timeout).await;
        }
        match crate::peers::holder(app, worker_id).await? {
            Some(addr) => crate::peers::relay(app, &addr, worker_id, cmd, timeout).await,
            None => Err(Error::Unavailable(format!(
                "worker {worker_id} is not connected"
            ))),
        }
    }

    async fn usage(
        &self,
        addr: &str,
        sandbox_id: &str,
        generation: i64,
    ) -> Result<wpb::GetSandboxUsageResponse> {
        let req = sandbox_request(
            self,
            wpb::GetSandboxUsageRequest {
                sandbox_id: sandbox_id.to_string(),
            },
            sandbox_id,
            generation,
        );
        WorkerSandboxServiceClient::new(self.channel(addr)?)
            .get_sandbox_usage(req)
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| error(&at(addr), s.code(), s.message()))
    }

    async fn snapshot(
        &self,
        addr: &str,
        generation: i64,
        req: wpb::SnapshotSandboxRequest,
        progress: &tokio::sync::watch::Sender<wpb::TakeSnapshotResponse>,
    ) -> Result<wpb::SnapshotSandboxResponse> {
        let id = req.sandbox_id.clone();
        let mut client = WorkerSandboxServiceClient::new(self.channel(addr)?);
        let take = wpb::TakeSnapshotRequest {
            sandbox_id: req.sandbox_id.clone(),
            image_name: req.image_name.clone(),
            max_bytes: req.max_bytes,
        };
        let fail = |s: tonic::Status| error(&at(addr), s.code(), s.message());
        let mut steps = match client
            .take_snapshot(sandbox_request(self, take, &id, generation))
            .await
        {
            Ok(s) => s.into_inner(),
            // A worker of an earlier release: the copy without progress.
            Err(s) if s.code() == tonic::Code::Unimplemented => {
                return client
                    .snapshot_sandbox(sandbox_request(self, req, &id, generation))
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(fail);
            }
            Err(s) => return Err(fail(s)),
        };
        while let Some(step) = steps.message().await.map_err(fail)? {
            // The last step is the caller's to report, with what it keeps.
            if let Some(done) = step.done {
                return Ok(done);
            }
            progress.send_replace(step);
        }
        Err(Error::Unavailable(format!(
            "worker {addr} ended sandbox {id}'s snapshot without its result"
        )))
    }

    async fn delete_image(&self, addr: &str, name: &str) -> Result<()> {
        let req = self.request(wpb::DeleteImageRequest { name: name.into() });
        WorkerImageServiceClient::new(self.channel(addr)?)
            .delete_image(req)
            .await
            .map(|_| ())
            .map_err(|s| error(&at(addr), s.code(), s.message()))
    }

    fn channel(&self, addr: &str) -> Result<Channel> {
        let mut cache = self.channels.lock().expect("lock");
        if let Some(c) = cache.get(addr) {
            return Ok(c.clone());
        }
        // A worker's data plane is host:port; a peer server's, a URL.
        let url = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        let c = tonic::transport::Endpoint::from_shared(url)
            .map_err(|e| Error::Internal(format!("worker address: {e}")))?
            .tcp_nodelay(true)
            .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
            .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
            .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
            // A host that vanished without a reset ends its streams (a
            // snapshot's, a process's) within half a minute, not at TCP's
            // own timeout.
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true)
            .connect_lazy();
        cache.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    fn authorize(&self, metadata: &mut tonic::metadata::MetadataMap) {
        metadata.insert(
            "authorization",
            format!("Bearer {}", self.token)
                .parse()
                .expect("the worker token is ascii"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code as C;

    #[test]
    fn one_table_for_every_answer() {
        let cases = [
            (C::Aborted, C::Aborted),
            (C::InvalidArgument, C::InvalidArgument),
            (C::ResourceExhausted, C::ResourceExhausted),
            (C::NotFound, C::FailedPrecondition),
            (C::FailedPrecondition, C::FailedPrecondition),
            (C::Unavailable, C::Unavailable),
            (C::DeadlineExceeded, C::Unavailable),
            (C::Internal, C::Internal),
        ];
        for (code, want) in cases {
            let e = error("w1", code, "why");
            assert_eq!(e.code(), want, "{code:?}");
            assert!(e.to_string().contains("worker w1"), "{e}");
            assert!(e.to_string().contains("why"), "{e}");
        }
    }

    #[test]
    fn the_bearer_is_the_worker_token() {
        let r = Remote::new("tok".into());
        let req = sandbox_request(&r, (), "sbx_1", 7);
        assert_eq!(req.metadata().get("authorization").unwrap(), "Bearer tok");
        assert_eq!(
            req.metadata()
                .get(talon_core::wire::SANDBOX_HEADER)
                .unwrap(),
            "sbx_1"
        );
        assert_eq!(
            req.metadata()
                .get(talon_core::wire::GENERATION_HEADER)
                .unwrap(),
            "7"
        );
    }
}
