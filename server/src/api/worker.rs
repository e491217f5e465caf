//! WorkerControlService: one bidirectional session per worker.

use crate::app::App;
use crate::domain::fencing::FenceScope;
use crate::domain::scheduler::Amount;
use crate::domain::{sandboxes, workers};
use futures::StreamExt;
use std::pin::Pin;
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_control_service_server::WorkerControlService;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

pub struct WorkerApi(pub Arc<App>);

/// A live sandbox placed on a worker, unchanged for this long, that the
/// worker's full report leaves out is missing there (a create still on
/// its way is well within it).
const MISSING_AFTER_MS: i64 = 10_000;

fn duration(d: std::time::Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

fn amount(c: Option<wpb::Capacity>) -> Amount {
    let c = c.unwrap_or_default();
    Amount {
        cpu_millis: c.cpu_millis,
        memory_mib: c.memory_mib,
        sandboxes: c.sandboxes,
    }
}

type Out = Pin<Box<dyn tokio_stream::Stream<Item = Result<wpb::SessionResponse, Status>> + Send>>;

#[tonic::async_trait]
impl WorkerControlService for WorkerApi {
    type SessionStream = Out;

    /// Another server's command for a worker whose session is here; only
    /// this server's own session is used (never relayed again).
    async fn relay_command(
        &self,
        req: Request<wpb::RelayCommandRequest>,
    ) -> Result<Response<wpb::RelayCommandResponse>, Status> {
        let r = req.into_inner();
        let cmd = r
            .command
            .ok_or_else(|| Status::invalid_argument("command is required"))?;
        if !(1..=600_000).contains(&r.timeout_ms) {
            return Err(Status::invalid_argument("timeout_ms must be 1 to 600000"));
        }
        let timeout = std::time::Duration::from_millis(r.timeout_ms as u64);
        let result = self.0.hub().call(&r.worker_id, cmd, timeout).await?;
        Ok(Response::new(wpb::RelayCommandResponse {
            result: Some(result),
        }))
    }

    async fn session(
        &self,
        req: Request<Streaming<wpb::SessionRequest>>,
    ) -> Result<Response<Out>, Status> {
        let mut inbound = req.into_inner();
        let first = inbound
            .next()
            .await
            .ok_or_else(|| Status::invalid_argument("the session must start with register"))??;
        let Some(wpb::session_request::Message::Register(reg)) = first.message else {
            return Err(Status::invalid_argument(
                "the session must start with register",
            ));
        };
        let app = self.0.clone();
        let registered_at = crate::db::now_ms();
        let cap = amount(reg.capacity);
        let session_at = workers::register(
            &app,
            &workers::Registration {
                worker_id: &reg.worker_id,
                hostname: &reg.hostname,
                capacity: cap.clone(),
                runtimes: &reg.runtimes,
                version: &reg.version,
                data_address: &reg.data_address,
                workspace_backend: &reg.workspace_backend,
            },
        )
        .await?;

        let (tx, rx) = tokio::sync::mpsc::channel(256);
        let worker_id = reg.worker_id.clone();
        let session = app.hub().attach(
            &worker_id,
            tx.clone(),
            cap,
            reg.data_address.clone(),
            reg.images.clone(),
            reg.isolation_levels
                .iter()
                .filter_map(|l| match talon_proto::v1::Isolation::try_from(*l) {
                    Ok(talon_proto::v1::Isolation::Container) => Some("container".to_string()),
                    Ok(talon_proto::v1::Isolation::Gvisor) => Some("gvisor".to_string()),
                    // A level this server does not know is not offered.
                    _ => None,
                })
                .collect(),
        );
        // Its inventory, for the other servers' placement, at once.
        let _ = workers::heartbeat(&app, &worker_id, session_at, FenceScope::None).await;
        tracing::info!(worker = %worker_id, hostname = %reg.hostname, "worker registered");
        let ack = wpb::SessionResponse {
            message: Some(wpb::session_response::Message::Ack(wpb::RegisterAck {
                worker_id: worker_id.clone(),
                heartbeat_interval: Some(prost_types::Duration {
                    seconds: app.config().heartbeat_interval.as_secs() as i64,
                    nanos: 0,
                }),
                lease: Some(duration(app.config().worker_lease)),
            })),
        };
        let _ = tx.send(Ok(ack)).await;
        {
            let (app, worker_id) = (app.clone(), worker_id.clone());
            let held: Vec<String> = reg.sandboxes.iter().map(|s| s.sandbox_id.clone()).collect();
            tokio::spawn(async move {
                if let Err(e) = crate::domain::autopilot::recover_missing(
                    &app,
                    &worker_id,
                    &held,
                    registered_at,
                )
                .await
                {
                    tracing::warn!(worker = %worker_id, error = %e, "sandboxes the worker no longer holds not recovered");
                }
            });
        }
        for cmd in sandboxes::reconcile(&app, &worker_id, &reg.sandboxes).await {
            let _ = tx
                .send(Ok(wpb::SessionResponse {
                    message: Some(wpb::session_response::Message::Command(cmd)),
                }))
                .await;
        }

        tokio::spawn(async move {
            let mut pool = wpb::PoolStats::default();
            let mut last_beat = std::time::Instant::now() - std::time::Duration::from_secs(60);
            let mut stored_scope = FenceScope::None;
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                match msg.message {
                    Some(wpb::session_request::Message::Heartbeat(hb)) => {
                        if hb.used.is_some() {
                            app.hub().set_used(&worker_id, amount(hb.used));
                        }
                        if let Some(p) = hb.pool {
                            app.metrics().pool(&worker_id, &pool, &p);
                            pool = p;
                        }
                        if hb.held_sent {
                            // What it no longer holds (a fence's report
                            // lost, say) is started again; what changed
                            // lately may still be on its way to it.
                            let held: Vec<String> =
                                hb.held.iter().map(|s| s.sandbox_id.clone()).collect();
                            let report = hb.held.clone();
                            let before = crate::db::now_ms() - MISSING_AFTER_MS;
                            let (app, worker_id) = (app.clone(), worker_id.clone());
                            tokio::spawn(async move {
                                if let Err(e) = crate::domain::autopilot::recover_missing(
                                    &app, &worker_id, &held, before,
                                )
                                .await
                                {
                                    tracing::warn!(worker = %worker_id, error = %e, "sandboxes the worker no longer holds not recovered");
                                }
                                if let Err(e) =
                                    sandboxes::settle_stale(&app, &worker_id, &report, before).await
                                {
                                    tracing::warn!(worker = %worker_id, error = %e, "transitions whose result never came not settled");
                                }
                            });
                        }
                        for cmd in sandboxes::orphans(&app, &worker_id, &hb.held).await {
                            let _ = tx
                                .send(Ok(wpb::SessionResponse {
                                    message: Some(wpb::session_response::Message::Command(cmd)),
                                }))
                                .await;
                        }

                        // Pool changes beat often; the database hears a
                        // beat at most once a second, but at once when the
                        // fence scope the worker applies changed.
                        let scope = FenceScope::from_number(hb.fence_scope as i64);
                        if scope == stored_scope
                            && last_beat.elapsed()
                                < (app.config().heartbeat_interval / 2)
                                    .min(std::time::Duration::from_secs(1))
                        {
                            continue;
                        }
                        last_beat = std::time::Instant::now();
                        // The worker counts on a renewal only once it is
                        // stored (it fences itself when its lease lapses).
                        match workers::heartbeat(&app, &worker_id, session_at, scope).await {
                            Ok(r) => {
                                stored_scope = scope;
                                let renewed = wpb::SessionResponse {
                                    message: Some(wpb::session_response::Message::Lease(
                                        wpb::LeaseRenewed {
                                            seq: hb.seq,
                                            valid_for: Some(duration(app.config().worker_lease)),
                                            fence: r.fence,
                                            fence_scope: r.scope.number(),
                                        },
                                    )),
                                };
                                let _ = tx.send(Ok(renewed)).await;
                            }
                            Err(e) => {
                                tracing::warn!(worker = %worker_id, error = %e, "worker lease not renewed")
                            }
                        }
                    }
                    Some(wpb::session_request::Message::Result(r)) => {
                        if !app.hub().resolve(&worker_id, r.clone()) {
                            // Nobody waits (it timed out): still apply what it says.
                            if let Some(s) = r.status {
                                let _ = sandboxes::apply_status(&app, &worker_id, &s).await;
                            }
                        }
                    }
                    Some(wpb::session_request::Message::Event(s)) => {
                        if let Err(e) = sandboxes::apply_event(&app, &worker_id, &s).await {
                            tracing::warn!(worker = %worker_id, sandbox = %s.sandbox_id, error = %e, "worker event refused");
                        }
                    }
                    Some(wpb::session_request::Message::Register(_)) | None => {
                        tracing::warn!(worker = %worker_id, "unexpected message on worker session");
                    }
                }
            }
            app.hub().detach(&worker_id, session);
            tracing::info!(worker = %worker_id, "worker disconnected");
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
