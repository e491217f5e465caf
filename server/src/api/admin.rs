//! AdminService.

use super::principal;
use crate::api::convert::{
    audit_to_pb, ms_of, sandbox_move_to_pb, state_to_pb, ts, worker_sandbox_to_pb, worker_to_pb,
};
use crate::app::App;
use crate::audit::with_resource;
use crate::domain::audit_events::{self, AuditQuery};
use crate::domain::sandboxes::history;
use crate::domain::workers::{self, WorkerView};
use crate::domain::{
    decode_cursor, decode_keyset, encode_cursor, encode_keyset, page, paged, paged_by, sandboxes,
    servers,
};
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

/// One of the server's Prometheus families as the API gives it. Only the
/// kinds the server registers are known; another is an error, not a
/// family shown wrong.
fn family_to_pb(f: &prometheus::proto::MetricFamily) -> Result<pb::MetricFamily, Status> {
    use prometheus::proto::MetricType;
    let kind = match f.get_field_type() {
        MetricType::COUNTER => pb::MetricKind::Counter,
        MetricType::GAUGE => pb::MetricKind::Gauge,
        MetricType::HISTOGRAM => pb::MetricKind::Histogram,
        other => {
            return Err(Status::internal(format!(
                "metric {} is of a kind the API does not give ({other:?})",
                f.name()
            )));
        }
    };
    let samples = f
        .get_metric()
        .iter()
        .map(|m| pb::MetricSample {
            labels: m
                .get_label()
                .iter()
                .map(|l| (l.name().to_string(), l.value().to_string()))
                .collect(),
            value: match kind {
                pb::MetricKind::Counter => m.get_counter().value(),
                pb::MetricKind::Gauge => m.get_gauge().value(),
                _ => 0.0,
            },
            count: m.get_histogram().sample_count(),
            sum: m.get_histogram().sample_sum(),
        })
        .collect();
    Ok(pb::MetricFamily {
        name: f.name().to_string(),
        help: f.help().to_string(),
        kind: kind as i32,
        samples,
    })
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

    async fn delete_worker(
        &self,
        req: Request<pb::DeleteWorkerRequest>,
    ) -> Result<Response<pb::DeleteWorkerResponse>, Status> {
        let id = req.into_inner().worker_id;
        workers::forget(&self.0, &id).await?;
        Ok(with_resource(
            Response::new(pb::DeleteWorkerResponse {}),
            id,
        ))
    }

    async fn list_worker_sandboxes(
        &self,
        req: Request<pb::ListWorkerSandboxesRequest>,
    ) -> Result<Response<pb::ListWorkerSandboxesResponse>, Status> {
        let r = req.into_inner();
        let (_, limit) = page("", r.page_size)?;
        let after = decode_keyset(&r.page_token)?;
        let rows = sandboxes::on_worker(&self.0, &r.worker_id, after, limit).await?;
        let (rows, next) = paged_by(rows, limit, |l| encode_keyset(l.created_at, &l.id));
        Ok(Response::new(pb::ListWorkerSandboxesResponse {
            sandboxes: rows
                .iter()
                .map(worker_sandbox_to_pb)
                .collect::<crate::error::Result<_>>()?,
            next_page_token: next,
        }))
    }

    async fn list_sandbox_moves(
        &self,
        req: Request<pb::ListSandboxMovesRequest>,
    ) -> Result<Response<pb::ListSandboxMovesResponse>, Status> {
        let r = req.into_inner();
        let (_, limit) = page("", r.page_size)?;
        let before = decode_cursor(&r.page_token)?;
        let rows = history::moves(&self.0, &r.sandbox_id, &r.worker_id, before, limit).await?;
        let (rows, next) = paged_by(rows, limit, |l| encode_cursor(l.id));
        Ok(Response::new(pb::ListSandboxMovesResponse {
            moves: rows
                .iter()
                .map(sandbox_move_to_pb)
                .collect::<crate::error::Result<_>>()?,
            next_page_token: next,
        }))
    }

    async fn list_servers(
        &self,
        _req: Request<pb::ListServersRequest>,
    ) -> Result<Response<pb::ListServersResponse>, Status> {
        let servers = servers::list(&self.0).await?;
        Ok(Response::new(pb::ListServersResponse {
            servers: servers
                .into_iter()
                .map(|s| pb::PlatformServer {
                    server_id: s.id,
                    address: s.address,
                    last_heartbeat_time: Some(ts(s.heartbeat_ms)),
                    live: s.live,
                    duties_leader: s.leader,
                    answering: s.me,
                })
                .collect(),
        }))
    }

    async fn get_platform_metrics(
        &self,
        _req: Request<pb::GetPlatformMetricsRequest>,
    ) -> Result<Response<pb::GetPlatformMetricsResponse>, Status> {
        let sandboxes_by_state = servers::sandboxes_by_state(&self.0)
            .await?
            .into_iter()
            .map(|(s, n)| (state_to_pb(s).as_str_name().to_string(), n))
            .collect();
        let mut workers_by_state = std::collections::HashMap::new();
        for w in workers::list(&self.0).await? {
            let state = pb::WorkerState::try_from(view_to_pb(&w).state)
                .unwrap_or(pb::WorkerState::Unspecified);
            *workers_by_state
                .entry(state.as_str_name().to_string())
                .or_insert(0) += 1;
        }
        let families = self
            .0
            .metrics()
            .gather()
            .iter()
            .map(family_to_pb)
            .collect::<Result<_, Status>>()?;
        Ok(Response::new(pb::GetPlatformMetricsResponse {
            server_id: self.0.config().server_id.clone(),
            sample_time: Some(ts(crate::db::now_ms())),
            sandboxes_by_state,
            workers_by_state,
            families,
        }))
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

#[cfg(test)]
mod tests {
    /// Every family the server registers is of a kind the API gives: a
    /// new kind fails here, not on an admin's metrics page.
    #[test]
    fn every_family_of_the_server_converts() {
        let m = crate::metrics::Metrics::new();
        m.rpc(
            "/talon.v1.AdminService/ListWorkers",
            tonic::Code::Ok,
            std::time::Duration::from_millis(3),
        );
        let families = m.gather();
        assert!(families.len() > 5, "{} families", families.len());
        for f in &families {
            super::family_to_pb(f).unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        }
    }
}
