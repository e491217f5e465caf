//! WorkerSandboxService, served on the data plane for the control plane
//! only: what the worker itself does to one of its sandboxes outside its
//! agent (its usage, its snapshots). The call names the sandbox and its generation in metadata like
//! a forwarded call, and is fenced the same way, so a server with a stale
//! view of a sandbox never reads another placement's figures.

use crate::host::{SandboxHost, SnapshotProgress};
use crate::usage::Sampler;
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_sandbox_service_server::WorkerSandboxService;
use tonic::{Request, Response, Status};

pub struct SandboxApi {
    pub host: Arc<SandboxHost>,
    pub sampler: Sampler,
}

impl SandboxApi {
    pub fn new(host: Arc<SandboxHost>) -> SandboxApi {
        SandboxApi {
            host,
            sampler: Sampler::default(),
        }
    }
}

fn header<'a, T>(req: &'a Request<T>, name: &str) -> Option<&'a str> {
    req.metadata().get(name).and_then(|v| v.to_str().ok())
}

/// The sandbox a call names and the generation it is for, when its
/// metadata names the same sandbox.
fn target<T>(req: &Request<T>, id: &str) -> Result<i64, Status> {
    if header(req, talon_core::wire::SANDBOX_HEADER) != Some(id) {
        return Err(Status::invalid_argument(
            "the sandbox in the request and in its metadata differ",
        ));
    }
    Ok(header(req, talon_core::wire::GENERATION_HEADER)
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1))
}

#[tonic::async_trait]
impl WorkerSandboxService for SandboxApi {
    async fn snapshot_sandbox(
        &self,
        req: Request<wpb::SnapshotSandboxRequest>,
    ) -> Result<Response<wpb::SnapshotSandboxResponse>, Status> {
        let r = req.get_ref();
        let generation = target(&req, &r.sandbox_id)?;
        if r.max_bytes <= 0 {
            return Err(Status::invalid_argument("max_bytes must be positive"));
        }
        // In a task of its own, like TakeSnapshot's, so a caller that
        // goes away never leaves the sandbox frozen; an image nobody took
        // is deleted.
        let (host, r) = (self.host.clone(), r.clone());
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let done = host
                .snapshot(&r.sandbox_id, generation, &r.image_name, r.max_bytes as u64)
                .await;
            let made = done.is_ok();
            if tx.send(done).is_err() && made {
                discard(&host, &r.image_name);
            }
        });
        let done = rx
            .await
            .map_err(|_| Status::internal("the snapshot's task failed"))?;
        Ok(Response::new(snapshot_result(done)?))
    }

    type TakeSnapshotStream = std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<wpb::TakeSnapshotResponse, Status>> + Send>,
    >;

    async fn take_snapshot(
        &self,
        req: Request<wpb::TakeSnapshotRequest>,
    ) -> Result<Response<Self::TakeSnapshotStream>, Status> {
        let generation = target(&req, &req.get_ref().sandbox_id)?;
        let r = req.into_inner();
        if r.max_bytes <= 0 {
            return Err(Status::invalid_argument("max_bytes must be positive"));
        }
        let progress = Arc::new(SnapshotProgress::default());
        let (host, watched) = (self.host.clone(), progress.clone());
        let (owner, name) = (self.host.clone(), r.image_name.clone());
        // Its own task: the copy runs to its end (and a frozen sandbox is
        // thawed) even when the watcher goes away.
        let mut job = tokio::spawn(async move {
            host.snapshot_watched(
                &r.sandbox_id,
                generation,
                &r.image_name,
                r.max_bytes as u64,
                &watched,
            )
            .await
        });
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(PROGRESS_EVERY);
            let mut last = None;
            let done = loop {
                tokio::select! {
                    done = &mut job => break done,
                    _ = tick.tick() => {
                        let now = step(&progress, None);
                        if last.as_ref() != Some(&now) {
                            last = Some(now.clone());
                            // A watcher gone is no reason to stop the copy.
                            let _ = tx.send(Ok(now)).await;
                        }
                    }
                }
            };
            let end = match done {
                Ok(done) => snapshot_result(done).map(|d| step(&progress, Some(d))),
                Err(e) => Err(Status::internal(format!("the snapshot's task failed: {e}"))),
            };
            let made = end.is_ok();
            // The caller went away (a client dropped its CreateSnapshot,
            // a server died): no catalogue will ever name this image.
            if tx.send(end).await.is_err() && made {
                discard(&owner, &name);
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn get_sandbox_usage(
        &self,
        req: Request<wpb::GetSandboxUsageRequest>,
    ) -> Result<Response<wpb::GetSandboxUsageResponse>, Status> {
        let id = req.get_ref().sandbox_id.clone();
        let generation = target(&req, &id)?;
        let held = self
            .host
            .fenced_for_call(&id, generation)
            .map_err(|e| Status::new(e.code(), e.to_string()))?;
        let Some((pid, disk)) = self.host.usage_target(&held).await.map_err(|e| {
            match e.downcast_ref::<crate::host::WorkerError>() {
                Some(w) => Status::new(w.code(), w.to_string()),
                None => Status::unavailable(format!("{e:#}")),
            }
        })?
        else {
            self.sampler.forget(&id);
            return Err(Status::failed_precondition(format!(
                "sandbox {id} has no running container"
            )));
        };
        let u = self
            .sampler
            .read(&id, pid, &disk)
            .await
            .map_err(|e| Status::internal(format!("reading sandbox {id}'s usage: {e}")))?;
        Ok(Response::new(wpb::GetSandboxUsageResponse {
            sample_time: Some(talon_core::time::ms_to_timestamp(talon_core::time::now_ms())),
            cpu_time: Some(prost_types::Duration {
                seconds: u.cpu_time.as_secs() as i64,
                nanos: u.cpu_time.subsec_nanos() as i32,
            }),
            cpu_cores: u.cpu_cores,
            mem_used_bytes: u.mem_used_bytes as i64,
            disk_used_bytes: u.disk_used_bytes as i64,
            disk_total_bytes: u.disk_total_bytes as i64,
        }))
    }
}

/// Deletes a snapshot's image whose result no caller took.
fn discard(host: &SandboxHost, name: &str) {
    match host.delete_image(name) {
        Ok(_) => {
            tracing::warn!(image = %name, "a snapshot's caller went away before its result: its image is deleted")
        }
        Err(e) => {
            tracing::error!(image = %name, error = %e, "a snapshot nobody took could not be deleted")
        }
    }
}

/// How often a snapshot's progress is looked at (and sent when it moved).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// A snapshot's outcome as the call's answer or status.
fn snapshot_result(
    done: anyhow::Result<(crate::image::ImageRef, std::time::Duration)>,
) -> Result<wpb::SnapshotSandboxResponse, Status> {
    let (image, frozen) =
        done.map_err(|e| Status::new(crate::host::code_of(&e), format!("{e:#}")))?;
    Ok(wpb::SnapshotSandboxResponse {
        size_bytes: image.size_bytes as i64,
        frozen: Some(prost_types::Duration {
            seconds: frozen.as_secs() as i64,
            nanos: frozen.subsec_nanos() as i32,
        }),
        digest: image.digest,
    })
}

/// One message of TakeSnapshot: where `p` is, or its end with `done`.
fn step(
    p: &SnapshotProgress,
    done: Option<wpb::SnapshotSandboxResponse>,
) -> wpb::TakeSnapshotResponse {
    use std::sync::atomic::Ordering::Relaxed;
    wpb::TakeSnapshotResponse {
        phase: if done.is_some() { "done" } else { p.phase() }.into(),
        bytes_done: p.copied.load(Relaxed) as i64,
        bytes_total: p.total.load(Relaxed) as i64,
        done,
    }
}
