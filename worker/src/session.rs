//! The worker's session with the control plane (register, heartbeats,
//! commands and their results, events), and what runs beside it: fencing
//! by the lease (with its fence keeper), idle pauses, and the heartbeats'
//! contents.

use super::*;

pub(crate) async fn session(
    config: &WorkerConfig,
    url: &str,
    id: &str,
    host: Option<std::sync::Arc<host::SandboxHost>>,
    data_address: &str,
    lease: &lease::Lease,
) -> anyhow::Result<()> {
    let channel = tonic::transport::Endpoint::from_shared(url.to_string())?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .connect()
        .await?;
    let token: tonic::metadata::MetadataValue<_> = format!("Bearer {}", config.token).parse()?;
    let mut client =
        WorkerControlServiceClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
            req.metadata_mut().insert("authorization", token.clone());
            Ok(req)
        });
    let (tx, rx) = tokio::sync::mpsc::channel::<wpb::SessionRequest>(256);
    let registered = std::time::Instant::now();
    tx.send(wpb::SessionRequest {
        message: Some(wpb::session_request::Message::Register(wpb::Register {
            worker_id: id.to_string(),
            hostname: hostname(),
            capacity: Some(host_capacity(config.max_sandboxes, config.cpu_overcommit)),
            runtimes: host.iter().map(|h| h.runtime_name().to_string()).collect(),
            images: host.as_ref().map(|h| h.image_names()).unwrap_or_default(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            sandboxes: match &host {
                Some(h) => h.inventory().await,
                None => vec![],
            },
            data_address: data_address.to_string(),
            isolation_levels: host
                .iter()
                .flat_map(|h| h.isolation_levels())
                .map(|l| l.to_proto() as i32)
                .collect(),
            workspace_backend: host
                .as_ref()
                .map_or("local", |h| h.workspace_backend())
                .to_string(),
        })),
    })
    .await?;
    let mut inbound = client
        .session(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut interval = Duration::from_secs(5);
    let mut beat = tokio::time::interval(interval);
    // How often containers are checked for having died on their own.
    let mut watch = tokio::time::interval(Duration::from_secs(2));
    let mut reconcile =
        tokio::time::interval(config.reconcile_interval.max(Duration::from_secs(1)));
    reconcile.tick().await;
    let mut load = load::Load::default();
    // Idle sandboxes are paused apart from this loop: it asks agents,
    // which must not hold up heartbeats. It ends with the session.
    let _idle = host
        .clone()
        .map(|h| AbortOnDrop(tokio::spawn(pause_idle(h, tx.clone()))));
    loop {
        tokio::select! {
            msg = inbound.next() => {
                let Some(msg) = msg else { return Ok(()) };
                match msg?.message {
                    Some(wpb::session_response::Message::Ack(ack)) => {
                        if let Some(d) = ack.heartbeat_interval.filter(|d| d.seconds > 0) {
                            interval = Duration::from_secs(d.seconds as u64);
                            beat = tokio::time::interval(interval);
                        }
                        if let Some(d) = ack.lease.and_then(|d| Duration::try_from(d).ok()) {
                            lease.granted(registered, d);
                        }
                        tracing::info!(worker = %id, "registered with the control plane");
                    }
                    Some(wpb::session_response::Message::Command(cmd)) => {
                        // Commands run concurrently; the host orders those
                        // of one sandbox.
                        let (tx, host) = (tx.clone(), host.clone());
                        tokio::spawn(async move {
                            let result = answer(host.as_deref(), &cmd).await;
                            let _ = tx.send(wpb::SessionRequest { message: Some(wpb::session_request::Message::Result(result)) }).await;
                        });
                    }
                    Some(wpb::session_response::Message::Lease(r)) => {
                        if r.fence {
                            lease.revoke();
                        } else if let Some(d) = r.valid_for.and_then(|d| Duration::try_from(d).ok()) {
                            let scope = wpb::FenceScope::try_from(r.fence_scope).unwrap_or(wpb::FenceScope::None);
                            lease.renewed(r.seq, d, scope);
                        }
                    }
                    None => {}
                }
            }
            _ = watch.tick() => {
                // What fencing stopped: the control plane takes this
                // worker for lost (a stale one is refused there).
                for status in lease.take_reports() {
                    tx.send(wpb::SessionRequest { message: Some(wpb::session_request::Message::Event(status)) }).await?;
                }
                // Not while the lease is lapsed: what dies then is the
                // fence's doing, and is reported as fenced.
                if let Some(h) = host.as_ref().filter(|_| !lease.fencing()) {
                    h.expire_secrets().await;
                    for status in h.reap_dead().await {
                        tracing::warn!(sandbox = %status.sandbox_id, "sandbox died");
                        tx.send(wpb::SessionRequest { message: Some(wpb::session_request::Message::Event(status)) }).await?;
                    }
                }
            }
            _ = beat.tick() => {
                tx.send(heartbeat(host.as_deref(), Some(&mut load), lease.beat())).await?;
            }
            // A wider fence scope is reported at once: until the control
            // plane stores it, it moves nothing the scope now covers.
            _ = lease.scope_changed.notified() => {
                tx.send(heartbeat(host.as_deref(), None, lease.beat())).await?;
            }
            // Every sandbox held, so that the server can have those it no
            // longer knows removed (a create that outran its delete).
            _ = reconcile.tick() => {
                let mut hb = heartbeat(host.as_deref(), Some(&mut load), lease.beat());
                if let (Some(h), Some(wpb::session_request::Message::Heartbeat(b))) = (&host, &mut hb.message) {
                    b.held = h.held_records();
                    b.held_sent = true;
                }
                tx.send(hb).await?;
            }
            // The pool's figures reach the server as they change (a claim,
            // a refill), not a heartbeat later.
            _ = pool_changed(host.as_deref()) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                tx.send(heartbeat(host.as_deref(), None, lease.beat())).await?;
            }
        }
    }
}

/// How long after the lease's end the fence keeper acts (well under any
/// grace period: the autopilot moves nothing before the lease and the
/// grace have passed).
const KEEPER_MARGIN: Duration = Duration::from_millis(500);

/// Fences the host whenever the lease lapses (see `lease`), and keeps the
/// fence keeper told (see `keeper`).
pub(crate) async fn fence(
    host: std::sync::Arc<host::SandboxHost>,
    lease: std::sync::Arc<lease::Lease>,
    mut keeper: Option<keeper::Keeper>,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let scope = lease.scope_to_apply();
        if let Some(k) = &mut keeper {
            let now = std::time::Instant::now();
            // The keeper acts a moment after the worker would: when the
            // worker is alive it fences (and reports) first.
            let until_ns = lease.until().map_or(0, |u| {
                keeper::monotonic_ns()
                    + u.saturating_duration_since(now).as_nanos() as u64
                    + KEEPER_MARGIN.as_nanos() as u64
            });
            let word = keeper::Word {
                until_ns,
                sandboxes: host.fence_targets(scope),
            };
            if let Err(e) = k.tell(&word) {
                tracing::error!(error = %e, "the fence keeper is gone");
                keeper = None;
            }
        }
        // Applied once the keeper knows (or there is none to tell).
        lease.applied(scope);
        if lease.take_lapse() {
            let fenced = host.fence_all(lease.scope()).await;
            if !fenced.is_empty() {
                tracing::warn!(
                    sandboxes = fenced.len(),
                    "this worker's lease lapsed: its sandboxes are stopped (the control plane may move them)"
                );
            }
            lease.report(fenced);
        }
    }
}

/// Aborts a task when dropped.
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Every 2 s, freezes the sandboxes idle past their timeout and tells
/// the server (see host::idle).
async fn pause_idle(
    host: std::sync::Arc<host::SandboxHost>,
    tx: tokio::sync::mpsc::Sender<wpb::SessionRequest>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tick.tick().await;
        for status in host.pause_idle().await {
            let event = wpb::SessionRequest {
                message: Some(wpb::session_request::Message::Event(status)),
            };
            if tx.send(event).await.is_err() {
                return;
            }
        }
    }
}

/// A beat; `load` is read on the timed beats (a pool change's beat
/// carries no `used`, and the server keeps the last it had); `beat` is
/// its number and the fence scope it reports (`Lease::beat`).
fn heartbeat(
    host: Option<&host::SandboxHost>,
    load: Option<&mut load::Load>,
    (seq, scope): (u64, wpb::FenceScope),
) -> wpb::SessionRequest {
    let used = load.map(|l| {
        let (cpu_millis, memory_mib) = l.sample();
        wpb::Capacity {
            cpu_millis,
            memory_mib,
            sandboxes: host.map_or(0, |h| h.live_count() as i64),
        }
    });
    let hb = wpb::Heartbeat {
        used,
        time: None,
        pool: host.map(|h| h.pool().stats()),
        held: vec![],
        seq,
        fence_scope: scope as i32,
        held_sent: false,
    };

    wpb::SessionRequest {
        message: Some(wpb::session_request::Message::Heartbeat(hb)),
    }
}

async fn pool_changed(host: Option<&host::SandboxHost>) {
    match host {
        Some(h) => h.pool().changed.notified().await,
        None => std::future::pending().await,
    }
}
