//! The measurements behind some figures: PTY echoes, RPC round trips,
//! loads of many clients, and density (memory per idle sandbox).

use crate::baseline::{self};
use crate::platform::Platform;
use crate::stats::Stats;
use crate::talon::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use talon_proto::v1 as pb;
use talon_sdk::{Client, CreateOptions, Sandbox};
use tokio_stream::StreamExt;

/// Lets the admin's tenant hold the density run.
pub(crate) async fn raise_quota(p: &Platform, n: usize) -> anyhow::Result<()> {
    let me = p.client().await?.whoami().await?;
    let bearer: tonic::metadata::MetadataValue<_> = format!("Bearer {}", p.api_key).parse()?;
    let ch = tonic::transport::Endpoint::from_shared(p.grpc.clone())?
        .connect()
        .await?;
    let mut t = pb::tenant_service_client::TenantServiceClient::with_interceptor(
        ch,
        move |mut r: tonic::Request<()>| {
            r.metadata_mut().insert("authorization", bearer.clone());
            Ok(r)
        },
    );
    t.update_tenant_quota(pb::UpdateTenantQuotaRequest {
        tenant_id: me.tenant_id,
        quota: Some(pb::Quota {
            max_sandboxes: n as i64,
            max_cpu_millis: 1 << 30,
            max_memory_mib: 1 << 30,
        }),
    })
    .await?;
    Ok(())
}

pub(crate) async fn pty_echo(
    c: &Client,
    id: &str,
    warm: usize,
    runs: usize,
) -> anyhow::Result<Vec<Duration>> {
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::AttachRequest>(8);
    tx.send(pb::AttachRequest {
        sandbox_id: id.into(),
        message: Some(pb::attach_request::Message::Open(pb::PtyOpen {
            target: Some(pb::pty_open::Target::Command(pb::PtyCommand {
                command: argv(&["sh", "-c", baseline::PTY_ECHO]),
                ..Default::default()
            })),
            size: Some(pb::PtySize { rows: 24, cols: 80 }),
        })),
    })
    .await?;
    let mut out = c
        .pty()
        .attach(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut seen = Vec::new();
    let mut expect = async |want: &[u8], seen: &mut Vec<u8>| -> anyhow::Result<()> {
        while !seen.windows(want.len()).any(|w| w == want) {
            match out.next().await.transpose()? {
                Some(pb::AttachResponse {
                    message: Some(pb::attach_response::Message::Output(d)),
                }) => seen.extend(d),
                Some(_) => {}
                None => anyhow::bail!("the PTY closed"),
            }
        }
        seen.clear();
        Ok(())
    };
    expect(b"ready", &mut seen).await?;
    let mut v = Vec::new();
    for i in 0..warm + runs {
        let t0 = Instant::now();
        tx.send(pb::AttachRequest {
            sandbox_id: String::new(),
            message: Some(pb::attach_request::Message::Input(b"k".to_vec())),
        })
        .await?;
        expect(b"k", &mut seen).await?;
        if i >= warm {
            v.push(t0.elapsed());
        }
    }
    drop(tx);
    Ok(v)
}

/// Back-to-back gRPC health checks on one new connection to the server.
pub(crate) async fn rpc_round_trips(
    p: &Platform,
    warm: usize,
    runs: usize,
) -> anyhow::Result<Vec<Duration>> {
    let ch = tonic::transport::Endpoint::from_shared(p.grpc.clone())?
        .connect()
        .await?;
    let mut health = tonic_health::pb::health_client::HealthClient::new(ch);
    let mut v = Vec::with_capacity(runs);
    for i in 0..warm + runs {
        let t0 = Instant::now();
        health
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await?;
        if i >= warm {
            v.push(t0.elapsed());
        }
    }
    Ok(v)
}

/// `clients` connections calling GetSandbox (or, for the baseline, the
/// health check) back to back for `secs`: latencies and calls per second.
pub(crate) async fn load(
    p: &Platform,
    clients: usize,
    secs: u64,
    sandbox: Option<String>,
) -> anyhow::Result<(Stats, f64)> {
    load_at(
        std::slice::from_ref(&p.grpc),
        &p.api_key,
        clients,
        secs,
        sandbox,
    )
    .await
}

/// `load` with its clients spread over servers (`urls`, round robin).
pub(crate) async fn load_at(
    urls: &[String],
    api_key: &str,
    clients: usize,
    secs: u64,
    sandbox: Option<String>,
) -> anyhow::Result<(Stats, f64)> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for i in 0..clients {
        let url = &urls[i % urls.len()];
        let c = Client::connect(url, api_key).await?;
        let ch = tonic::transport::Endpoint::from_shared(url.clone())?
            .connect()
            .await?;
        let (stop, sandbox) = (stop.clone(), sandbox.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut sbx = c.sandboxes();
            let mut health = tonic_health::pb::health_client::HealthClient::new(ch);
            while !stop.load(Ordering::Relaxed) {
                let t0 = Instant::now();
                match &sandbox {
                    Some(id) => {
                        sbx.get_sandbox(pb::GetSandboxRequest {
                            sandbox_id: id.clone(),
                        })
                        .await?;
                    }
                    None => {
                        health
                            .check(tonic_health::pb::HealthCheckRequest {
                                service: String::new(),
                            })
                            .await?;
                    }
                }
                lat.push(t0.elapsed());
            }
            anyhow::Ok(lat)
        }));
    }
    // Every client is connected before the clock starts.
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let took = t0.elapsed().as_secs_f64();
    Ok((Stats::ms(&all), all.len() as f64 / took))
}

/// Host memory in use once it stops moving (page cache settles, freed
/// slabs return).
pub(crate) fn settle_memory() -> u64 {
    std::thread::sleep(Duration::from_secs(1));
    baseline::drop_caches();
    std::thread::sleep(Duration::from_millis(500));
    // The median of a few readings.
    let mut v: Vec<u64> = (0..5)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(200));
            baseline::memory_used()
        })
        .collect();
    v.sort();
    v[2]
}

/// Starts idle sandboxes until `max`, the time budget, or the host's
/// available memory falls under 2 GiB; MiB per sandbox, how many, why.
pub(crate) async fn density_run(
    c: &Client,
    max: usize,
    budget: Duration,
) -> anyhow::Result<(f64, usize, String)> {
    let before = tokio::task::spawn_blocking(settle_memory).await?;
    let t0 = Instant::now();
    let mut held = Vec::new();
    let why = loop {
        if held.len() >= max {
            break format!("the asked-for {max}");
        }
        if t0.elapsed() > budget {
            break format!("the {} s budget ran out", budget.as_secs());
        }
        if avail() < 2 << 30 {
            break "host memory ran low".into();
        }
        let sb = c
            .create(CreateOptions {
                memory_mib: Some(32),
                cpu_millis: Some(250),
                ..Default::default()
            })
            .await?;
        held.push(sb);
    };
    let took = t0.elapsed();
    let after = tokio::task::spawn_blocking(settle_memory).await?;
    let n = held.len();
    let per = after.saturating_sub(before) as f64 / n.max(1) as f64 / (1 << 20) as f64;
    eprintln!(
        "density: {n} sandboxes in {:.1} s, {per:.2} MiB each (in use {} -> {} MiB)",
        took.as_secs_f64(),
        before >> 20,
        after >> 20
    );
    // Remove them a few at a time.
    let mut it = held.into_iter();
    loop {
        let batch: Vec<Sandbox> = it.by_ref().take(8).collect();
        if batch.is_empty() {
            break;
        }
        futures::future::try_join_all(batch.iter().map(|s| s.kill())).await?;
    }
    Ok((per, n, why))
}

pub(crate) fn avail() -> u64 {
    let total = baseline::Meminfo::read().get("MemTotal:");
    total.saturating_sub(baseline::memory_used())
}

/// Waits until the pool holds `n` ready sandboxes (as the server reports).
pub(crate) async fn wait_pool(p: &Platform, n: f64) -> anyhow::Result<()> {
    let t0 = Instant::now();
    while p.metric("sandbox_prewarm_pool_ready").await? < n {
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(60),
            "the prewarm pool never filled: {}",
            p.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}
