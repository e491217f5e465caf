//! AdminService.

use super::principal;
use crate::api::convert::{audit_to_pb, ms_of, worker_to_pb};
use crate::app::App;
use crate::audit::with_resource;
use crate::db::entity::{audit_event, sandbox, worker};
use crate::domain::state::SandboxState;
use crate::domain::{page, paged, sandboxes};
use crate::error::Error;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::admin_service_server::AdminService;
use tonic::{Request, Response, Status};

pub struct AdminApi(pub Arc<App>);

impl AdminApi {
    async fn allocated(&self, worker_id: &str) -> Result<pb::WorkerCapacity, Error> {
        let live: Vec<&str> = SandboxState::LIVE.iter().map(|s| s.as_str()).collect();
        let rows: Vec<(i64, i64)> = sandbox::Entity::find()
            .select_only()
            .column(sandbox::Column::CpuMillis)
            .column(sandbox::Column::MemoryMib)
            .filter(sandbox::Column::WorkerId.eq(worker_id))
            .filter(sandbox::Column::State.is_in(live))
            .into_tuple()
            .all(&self.0.db)
            .await?;
        Ok(pb::WorkerCapacity {
            cpu_millis: rows.iter().map(|r| r.0).sum(),
            memory_mib: rows.iter().map(|r| r.1).sum(),
            sandboxes: rows.len() as i64,
        })
    }

    async fn worker(&self, id: &str) -> Result<pb::Worker, Error> {
        let w = worker::Entity::find_by_id(id.to_string())
            .one(&self.0.db)
            .await?
            .ok_or_else(|| Error::NotFound(format!("worker {id}")))?;
        let alloc = self.allocated(&w.id).await?;
        Ok(worker_to_pb(&w, self.0.hub.is_connected(&w.id), alloc))
    }
}

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn list_workers(
        &self,
        _req: Request<pb::ListWorkersRequest>,
    ) -> Result<Response<pb::ListWorkersResponse>, Status> {
        let rows = worker::Entity::find()
            .order_by_asc(worker::Column::Id)
            .all(&self.0.db)
            .await
            .map_err(Error::from)?;
        let mut workers = Vec::with_capacity(rows.len());
        for w in rows {
            let alloc = self.allocated(&w.id).await?;
            workers.push(worker_to_pb(&w, self.0.hub.is_connected(&w.id), alloc));
        }
        Ok(Response::new(pb::ListWorkersResponse { workers }))
    }

    async fn get_worker(
        &self,
        req: Request<pb::GetWorkerRequest>,
    ) -> Result<Response<pb::GetWorkerResponse>, Status> {
        Ok(Response::new(pb::GetWorkerResponse {
            worker: Some(self.worker(&req.get_ref().worker_id).await?),
        }))
    }

    async fn drain_worker(
        &self,
        req: Request<pb::DrainWorkerRequest>,
    ) -> Result<Response<pb::DrainWorkerResponse>, Status> {
        let r = req.into_inner();
        let w = worker::Entity::find_by_id(r.worker_id.clone())
            .one(&self.0.db)
            .await
            .map_err(Error::from)?
            .ok_or_else(|| Error::NotFound(format!("worker {}", r.worker_id)))?;
        let mut am: worker::ActiveModel = w.into();
        am.draining = Set(!r.undrain);
        am.update(&self.0.db).await.map_err(Error::from)?;
        let w = self.worker(&r.worker_id).await?;
        Ok(with_resource(
            Response::new(pb::DrainWorkerResponse { worker: Some(w) }),
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
        // Records of calls made before this one are stored first.
        self.0.audit.flush().await;
        let mut q = audit_event::Entity::find();
        // Owners see their own tenant; platform admins any, or one they name.
        if !p.platform_admin {
            q = q.filter(audit_event::Column::TenantId.eq(&p.tenant_id));
        } else if !r.tenant_id.is_empty() {
            q = q.filter(audit_event::Column::TenantId.eq(&r.tenant_id));
        }
        if !r.actor_id.is_empty() {
            q = q.filter(audit_event::Column::ActorId.eq(&r.actor_id));
        }
        if !r.method.is_empty() {
            q = q.filter(audit_event::Column::Method.eq(&r.method));
        }
        if !r.resource_id.is_empty() {
            q = q.filter(audit_event::Column::ResourceId.eq(&r.resource_id));
        }
        if let Some(t) = &r.start_time {
            q = q.filter(audit_event::Column::CreatedAt.gte(ms_of(t)));
        }
        if let Some(t) = &r.end_time {
            q = q.filter(audit_event::Column::CreatedAt.lt(ms_of(t)));
        }
        let rows = q
            .order_by_desc(audit_event::Column::Id)
            .offset(offset)
            .limit(limit + 1)
            .all(&self.0.db)
            .await
            .map_err(Error::from)?;
        let (rows, next) = paged(rows, offset, limit);
        Ok(Response::new(pb::ListAuditEventsResponse {
            audit_events: rows.iter().map(audit_to_pb).collect(),
            next_page_token: next,
        }))
    }
}
