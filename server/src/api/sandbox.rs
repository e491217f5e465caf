//! SandboxService.

use super::principal;
use crate::api::convert::{
    duration, isolation_from_pb, policy_from_pb, restart_policy_from_pb, sandbox_to_pb,
    snapshot_to_pb, state_from_pb, timeout_action_from_pb, ts, worker_loss_from_pb,
};
use crate::app::App;
use crate::audit::with_resource;
use crate::domain::sandboxes::{self, ListQuery, NewSandbox};
use crate::domain::snapshots;
use crate::domain::tenants::TenantScope;
use crate::domain::{encode_page_token, page};
use crate::error::Error;
use std::pin::Pin;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::sandbox_service_server::SandboxService;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

pub struct SandboxApi(pub Arc<App>);

/// The create request's sandbox, with output-only fields dropped: tenant,
/// owner, state, generation, worker and times are the server's to set.
fn new_sandbox(s: pb::Sandbox, idempotency_key: String) -> Result<NewSandbox, Error> {
    let r = s.resources.unwrap_or_default();
    Ok(NewSandbox {
        image: s.image,
        cpu_millis: r.cpu_millis,
        memory_mib: r.memory_mib,
        disk_mib: r.disk_mib,
        max_pids: r.max_pids,
        labels: s.labels.into_iter().collect(),
        env: s.env.into_iter().collect(),
        secret_names: s.secret_names,
        network_policy: s.network_policy.as_ref().map(policy_from_pb).transpose()?,
        timeout: s.timeout.as_ref().map(duration).transpose()?,
        timeout_action: timeout_action_from_pb(s.timeout_action)?,
        metadata: s.metadata.into_iter().collect(),
        idempotency_key: (!idempotency_key.is_empty()).then_some(idempotency_key),
        idle_timeout: s.idle_timeout.as_ref().map(duration).transpose()?,
        auto_resume: s.auto_resume,
        snapshot_id: (!s.snapshot_id.is_empty()).then_some(s.snapshot_id),
        isolation: isolation_from_pb(s.isolation)?,
        volume_mounts: s
            .volume_mounts
            .into_iter()
            .map(|m| crate::domain::volumes::MountRequest {
                name: m.name,
                path: m.path,
                read_only: m.read_only,
            })
            .collect(),
        restart_policy: restart_policy_from_pb(s.restart_policy)?,
        worker_loss: worker_loss_from_pb(s.worker_loss_action)?,
    })
}

/// A response carrying one sandbox, marked for the audit with its id.
fn reply<T>(
    row: &crate::db::entity::sandbox::Model,
    wrap: impl FnOnce(Option<pb::Sandbox>) -> T,
) -> Result<Response<T>, Status> {
    Ok(with_resource(
        Response::new(wrap(Some(sandbox_to_pb(row)?))),
        row.id.clone(),
    ))
}

type EventStream =
    Pin<Box<dyn Stream<Item = Result<pb::WatchSandboxEventsResponse, Status>> + Send>>;

#[tonic::async_trait]
impl SandboxService for SandboxApi {
    async fn create_sandbox(
        &self,
        req: Request<pb::CreateSandboxRequest>,
    ) -> Result<Response<pb::CreateSandboxResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let n = new_sandbox(r.sandbox.unwrap_or_default(), r.idempotency_key)?;
        // An unset or zero wait_timeout takes the default.
        let wait = match r.wait_timeout.as_ref().map(duration).transpose()? {
            Some(d) if !d.is_zero() => d,
            _ => self.0.config().default_wait_timeout,
        };
        if wait > self.0.config().max_wait_timeout {
            return Err(Error::InvalidArgument(format!(
                "wait_timeout is at most {} s",
                self.0.config().max_wait_timeout.as_secs()
            ))
            .into());
        }
        let row = sandboxes::create(&self.0, &p, n).await?;
        let id = row.id.clone();
        let row = if r.wait_until_running {
            match sandboxes::wait_until_running(&self.0, row, wait).await {
                Ok(row) => row,
                // The sandbox exists either way: the audit names it.
                Err(e) => {
                    let mut s: Status = e.into();
                    s.metadata_mut().insert(
                        talon_core::wire::SANDBOX_HEADER,
                        id.parse().expect("ascii id"),
                    );
                    return Err(s);
                }
            }
        } else {
            row
        };
        reply(&row, |sandbox| pb::CreateSandboxResponse { sandbox })
    }

    async fn get_sandbox(
        &self,
        req: Request<pb::GetSandboxRequest>,
    ) -> Result<Response<pb::GetSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get_cached(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id)
            .await?;
        Ok(Response::new(pb::GetSandboxResponse {
            sandbox: Some(sandbox_to_pb(&row)?),
        }))
    }

    async fn list_sandboxes(
        &self,
        req: Request<pb::ListSandboxesRequest>,
    ) -> Result<Response<pb::ListSandboxesResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let states = r
            .states
            .iter()
            .map(|s| {
                state_from_pb(*s)
                    .ok_or_else(|| Error::InvalidArgument(format!("unknown state {s}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let q = ListQuery {
            offset,
            limit,
            labels: sandboxes::parse_label_selector(&r.label_selector)?,
            metadata: sandboxes::metadata_filter(r.metadata.into_iter().collect())?,
            states,
        };
        let (rows, more) = sandboxes::list(&self.0, &TenantScope::own(&p), q).await?;
        Ok(Response::new(pb::ListSandboxesResponse {
            sandboxes: rows.iter().map(sandbox_to_pb).collect::<Result<_, _>>()?,
            next_page_token: if more {
                encode_page_token(offset + limit)
            } else {
                String::new()
            },
        }))
    }

    async fn create_snapshot(
        &self,
        req: Request<pb::CreateSnapshotRequest>,
    ) -> Result<Response<pb::CreateSnapshotResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &r.sandbox_id).await?;
        let s = snapshots::create(&self.0, &p, &row, &r.name, r.memory).await?;
        Ok(with_resource(
            Response::new(pb::CreateSnapshotResponse {
                snapshot: Some(snapshot_to_pb(&s)),
            }),
            s.id,
        ))
    }

    type TakeSnapshotStream =
        Pin<Box<dyn Stream<Item = Result<pb::TakeSnapshotResponse, Status>> + Send>>;

    /// CreateSnapshot whose copy is watched: the checks and the
    /// reservation answer the call; the copy runs in its own task (to its
    /// end, whoever still watches), its progress sent as it changes.
    async fn take_snapshot(
        &self,
        req: Request<pb::TakeSnapshotRequest>,
    ) -> Result<Response<Self::TakeSnapshotStream>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &r.sandbox_id).await?;
        let taking = snapshots::begin(&self.0, &p, &row, &r.name, r.memory).await?;
        let id = taking.id().to_string();
        let (progress, mut watch) = tokio::sync::watch::channel(Default::default());
        let (app, audit) = (self.0.clone(), self.0.clone());
        let resource = id.clone();
        let mut job = tokio::spawn(async move { snapshots::finish(&app, taking, &progress).await });
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let done = loop {
                tokio::select! {
                    biased;
                    done = &mut job => break done,
                    changed = watch.changed() => {
                        if changed.is_err() {
                            break (&mut job).await;
                        }
                        let s = watch.borrow_and_update().clone();
                        let _ = tx.send(Ok(pb::TakeSnapshotResponse {
                            phase: s.phase,
                            bytes_done: s.bytes_done,
                            bytes_total: s.bytes_total,
                            snapshot: None,
                        })).await;
                    }
                }
            };
            let total = watch.borrow().bytes_total;
            let end = match done {
                Ok(Ok(m)) => Ok(pb::TakeSnapshotResponse {
                    phase: "done".into(),
                    bytes_done: m.size_bytes,
                    bytes_total: total,
                    snapshot: Some(snapshot_to_pb(&m)),
                }),
                Ok(Err(e)) => Err(Status::from(e)),
                Err(e) => Err(Status::internal(format!("the snapshot's task failed: {e}"))),
            };
            if let Err(s) = &end {
                // The call was audited OK when its stream began; the copy's
                // failure is audited too, under the same snapshot id.
                audit
                    .audit()
                    .record(crate::audit::AuditRecord::new(
                        &p,
                        "/talon.v1.SandboxService/TakeSnapshot",
                        &resource,
                        s.code(),
                        "",
                    ))
                    .await;
            }
            let _ = tx.send(end).await;
        });
        Ok(with_resource(
            Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
                as Self::TakeSnapshotStream),
            id,
        ))
    }

    async fn list_snapshots(
        &self,
        req: Request<pb::ListSnapshotsRequest>,
    ) -> Result<Response<pb::ListSnapshotsResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let (rows, more) =
            snapshots::list(&self.0, &p.tenant_id, &r.sandbox_id, offset, limit).await?;
        Ok(Response::new(pb::ListSnapshotsResponse {
            snapshots: rows.iter().map(snapshot_to_pb).collect(),
            next_page_token: if more {
                encode_page_token(offset + limit)
            } else {
                String::new()
            },
        }))
    }

    async fn get_snapshot(
        &self,
        req: Request<pb::GetSnapshotRequest>,
    ) -> Result<Response<pb::GetSnapshotResponse>, Status> {
        let p = principal(&req)?;
        let s = snapshots::get(&self.0, &p.tenant_id, &req.get_ref().snapshot_id).await?;
        Ok(Response::new(pb::GetSnapshotResponse {
            snapshot: Some(snapshot_to_pb(&s)),
        }))
    }

    async fn delete_snapshot(
        &self,
        req: Request<pb::DeleteSnapshotRequest>,
    ) -> Result<Response<pb::DeleteSnapshotResponse>, Status> {
        let p = principal(&req)?;
        let s = snapshots::delete(&self.0, &p.tenant_id, &req.get_ref().snapshot_id).await?;
        Ok(with_resource(
            Response::new(pb::DeleteSnapshotResponse {}),
            s.id,
        ))
    }

    async fn fork_sandbox(
        &self,
        req: Request<pb::ForkSandboxRequest>,
    ) -> Result<Response<pb::ForkSandboxResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &r.sandbox_id).await?;
        let forks = snapshots::fork(&self.0, &p, &row, r.count).await?;
        Ok(with_resource(
            Response::new(pb::ForkSandboxResponse {
                sandboxes: forks.iter().map(sandbox_to_pb).collect::<Result<_, _>>()?,
            }),
            row.id,
        ))
    }

    async fn get_sandbox_metrics(
        &self,
        req: Request<pb::GetSandboxMetricsRequest>,
    ) -> Result<Response<pb::GetSandboxMetricsResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get_cached(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id)
            .await?;
        let m = sandboxes::metrics(&self.0, &row).await?;
        Ok(Response::new(pb::GetSandboxMetricsResponse {
            metrics: Some(pb::SandboxMetrics {
                sample_time: Some(ts(m.sample_time_ms)),
                cpu_count: m.cpu_count,
                cpu_used_pct: m.cpu_used_pct,
                cpu_time: Some(prost_types::Duration {
                    seconds: m.cpu_time.as_secs() as i64,
                    nanos: m.cpu_time.subsec_nanos() as i32,
                }),
                mem_used_bytes: m.mem_used_bytes,
                mem_total_bytes: m.mem_total_bytes,
                disk_used_bytes: m.disk_used_bytes,
                disk_total_bytes: m.disk_total_bytes,
            }),
        }))
    }

    async fn create_sandbox_access_token(
        &self,
        req: Request<pb::CreateSandboxAccessTokenRequest>,
    ) -> Result<Response<pb::CreateSandboxAccessTokenResponse>, Status> {
        let p = principal(&req)?;
        let id = req.into_inner().sandbox_id;
        let token = sandboxes::access_token(&self.0, &p, &id).await?;
        Ok(crate::audit::with_resource(
            Response::new(pb::CreateSandboxAccessTokenResponse { token }),
            id,
        ))
    }

    async fn delete_sandbox(
        &self,
        req: Request<pb::DeleteSandboxRequest>,
    ) -> Result<Response<pb::DeleteSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id).await?;
        let row = sandboxes::delete(&self.0, row).await?;
        reply(&row, |sandbox| pb::DeleteSandboxResponse { sandbox })
    }

    async fn pause_sandbox(
        &self,
        req: Request<pb::PauseSandboxRequest>,
    ) -> Result<Response<pb::PauseSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id).await?;
        let row = sandboxes::pause(&self.0, row).await?;
        reply(&row, |sandbox| pb::PauseSandboxResponse { sandbox })
    }

    async fn resume_sandbox(
        &self,
        req: Request<pb::ResumeSandboxRequest>,
    ) -> Result<Response<pb::ResumeSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id).await?;
        let row = sandboxes::resume(&self.0, row).await?;
        reply(&row, |sandbox| pb::ResumeSandboxResponse { sandbox })
    }

    async fn stop_sandbox(
        &self,
        req: Request<pb::StopSandboxRequest>,
    ) -> Result<Response<pb::StopSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id).await?;
        let row = sandboxes::stop(&self.0, row).await?;
        reply(&row, |sandbox| pb::StopSandboxResponse { sandbox })
    }

    async fn start_sandbox(
        &self,
        req: Request<pb::StartSandboxRequest>,
    ) -> Result<Response<pb::StartSandboxResponse>, Status> {
        let p = principal(&req)?;
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &req.get_ref().sandbox_id).await?;
        let row = sandboxes::start(&self.0, &p, row).await?;
        reply(&row, |sandbox| pb::StartSandboxResponse { sandbox })
    }

    async fn set_sandbox_timeout(
        &self,
        req: Request<pb::SetSandboxTimeoutRequest>,
    ) -> Result<Response<pb::SetSandboxTimeoutResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &r.sandbox_id).await?;
        let t = duration(
            r.timeout
                .as_ref()
                .ok_or_else(|| Error::InvalidArgument("timeout is required".into()))?,
        )?;
        let row =
            sandboxes::set_timeout(&self.0, row, t, timeout_action_from_pb(r.timeout_action)?)
                .await?;
        reply(&row, |sandbox| pb::SetSandboxTimeoutResponse { sandbox })
    }

    async fn update_network_policy(
        &self,
        req: Request<pb::UpdateNetworkPolicyRequest>,
    ) -> Result<Response<pb::UpdateNetworkPolicyResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let row = sandboxes::get(&self.0, &TenantScope::own(&p), &r.sandbox_id).await?;
        let policy = policy_from_pb(&r.network_policy.unwrap_or_default())?;
        let row = sandboxes::update_network_policy(&self.0, row, policy).await?;
        reply(&row, |sandbox| pb::UpdateNetworkPolicyResponse { sandbox })
    }

    type WatchSandboxEventsStream = EventStream;

    async fn watch_sandbox_events(
        &self,
        req: Request<pb::WatchSandboxEventsRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let p = principal(&req)?;
        let id = Some(req.into_inner().sandbox_id).filter(|id| !id.is_empty());
        let changes = sandboxes::watch(&self.0, &TenantScope::own(&p), id).await?;
        let stream = changes.map(|change| match change {
            Ok(ev) => Ok(pb::WatchSandboxEventsResponse {
                sandbox: Some(sandbox_to_pb(&ev.sandbox)?),
                event_time: Some(match ev.kind {
                    crate::app::EventKind::StateChanged => ts(ev.sandbox.updated_at),
                    _ => prost_types::Timestamp::from(std::time::SystemTime::now()),
                }),
                kind: match ev.kind {
                    crate::app::EventKind::StateChanged => pb::SandboxEventKind::StateChanged,
                    crate::app::EventKind::BrowserCrashed => pb::SandboxEventKind::BrowserCrashed,
                    crate::app::EventKind::IdlePaused => pb::SandboxEventKind::IdlePaused,
                    crate::app::EventKind::AutoResumed => pb::SandboxEventKind::AutoResumed,
                } as i32,
                message: ev.message,
            }),
            Err(sandboxes::Lagged) => Err(Status::data_loss(
                "event stream lagged; reconnect to resume",
            )),
        });
        Ok(Response::new(Box::pin(stream)))
    }
}
