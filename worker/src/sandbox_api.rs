//! WorkerSandboxService, served on the data plane for the control plane
//! only: what the worker itself does to one of its sandboxes outside its
//! agent (its usage, its snapshots). The call names the sandbox and its generation in metadata like
//! a forwarded call, and is fenced the same way, so a server with a stale
//! view of a sandbox never reads another placement's figures.

use crate::host::SandboxHost;
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
        let (image, frozen) = self
            .host
            .snapshot(&r.sandbox_id, generation, &r.image_name, r.max_bytes as u64)
            .await
            .map_err(|e| Status::new(crate::host::code_of(&e), format!("{e:#}")))?;
        Ok(Response::new(wpb::SnapshotSandboxResponse {
            size_bytes: image.size_bytes as i64,
            frozen: Some(prost_types::Duration {
                seconds: frozen.as_secs() as i64,
                nanos: frozen.subsec_nanos() as i32,
            }),
            digest: image.digest,
        }))
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
