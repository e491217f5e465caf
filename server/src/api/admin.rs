//! AdminService.

use super::principal;
use crate::api::convert::{audit_to_pb, ms_of, worker_to_pb};
use crate::app::App;
use crate::audit::with_resource;
use crate::domain::audit_events::{self, AuditQuery};
use crate::domain::workers::{self, WorkerView};
use crate::domain::{page, paged, sandboxes};
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::admin_service_server::AdminService;
use tonic::{Request, Response, Status};

pub struct AdminApi(pub Arc<App>);

fn view_to_pb(v: &WorkerView) -> pb::Worker {
    worker_to_pb(
        &v.worker,
        v.connected,
        pb::WorkerCapacity {
            cpu_millis: v.allocated.cpu_millis,
            memory_mib: v.allocated.memory_mib,
            sandboxes: v.allocated.sandboxes,
        },
    )
}

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn list_workers(
        &self,
        _req: Request<pb::ListWorkersRequest>,
    ) -> Result<Response<pb::ListWorkersResponse>, Status> {
        let workers = workers::list(&self.0).await?;
        Ok(Response::new(pb::ListWorkersResponse {
            workers: workers.iter().map(view_to_pb).collect(),
        }))
    }

    async fn get_worker(
        &self,
        req: Request<pb::GetWorkerRequest>,
    ) -> Result<Response<pb::GetWorkerResponse>, Status> {
        let w = workers::get(&self.0, &req.get_ref().worker_id).await?;
        Ok(Response::new(pb::GetWorkerResponse {
            worker: Some(view_to_pb(&w)),
        }))
    }

    async fn drain_worker(
        &self,
        req: Request<pb::DrainWorkerRequest>,
    ) -> Result<Response<pb::DrainWorkerResponse>, Status> {
        let r = req.into_inner();
        let w = workers::set_draining(&self.0, &r.worker_id, !r.undrain).await?;
        Ok(with_resource(
            Response::new(pb::DrainWorkerResponse {
                worker: Some(view_to_pb(&w)),
            }),
            r.worker_id,
        ))
    }

    async fn reassign_sandbox(
        &self,
        req: Request<pb::ReassignSandboxRequest>,
    ) -> Result<Response<pb::ReassignSandboxResponse>, Status> {
        let r = req.into_inner();
        let target = Some(r.worker_id.as_str()).filter(|s| !s.is_empty());
        let row = sandboxes::reassign(&self.0, &r.sandbox_id, target).await?;
        Ok(with_resource(
            Response::new(pb::ReassignSandboxResponse {
                worker_id: row.worker_id.clone().unwrap_or_default(),
                generation: row.generation,
            }),
            row.id,
        ))
    }

    async fn list_audit_events(
        &self,
        req: Request<pb::ListAuditEventsRequest>,
    ) -> Result<Response<pb::ListAuditEventsResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let q = AuditQuery {
            tenant_id: r.tenant_id,
            actor_id: r.actor_id,
            method: r.method,
            resource_id: r.resource_id,
            start_ms: r.start_time.as_ref().map(ms_of),
            end_ms: r.end_time.as_ref().map(ms_of),
            offset,
            limit,
        };
        let rows = audit_events::list(&self.0, &p, &q).await?;
        let (rows, next) = paged(rows, offset, limit);
        Ok(Response::new(pb::ListAuditEventsResponse {
            audit_events: rows.iter().map(audit_to_pb).collect(),
            next_page_token: next,
        }))
    }
}
