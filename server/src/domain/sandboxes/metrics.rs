//! What a sandbox uses now: the worker reads its cgroup and disk
//! (WorkerSandboxService on the data plane, fenced by generation), and the
//! limits come from the sandbox's own record.

use super::control::require_worker;
use super::state_of;
use crate::app::App;
use crate::db::entity::sandbox;
use crate::domain::state::SandboxState;
use crate::error::{Error, Result};
use std::time::Duration;
use talon_proto::talon::worker::v1 as wpb;

/// One reading of a sandbox.
#[derive(Clone, Debug)]
pub struct Metrics {
    pub sample_time_ms: i64,
    pub cpu_count: i32,
    pub cpu_used_pct: f64,
    pub cpu_time: Duration,
    pub mem_used_bytes: i64,
    pub mem_total_bytes: i64,
    pub disk_used_bytes: i64,
    pub disk_total_bytes: i64,
}

/// Reads a running or paused sandbox's usage from its worker.
pub async fn metrics(app: &App, row: &sandbox::Model) -> Result<Metrics> {
    let state = state_of(row)?;
    if !matches!(state, SandboxState::Running | SandboxState::Paused) {
        return Err(Error::FailedPrecondition(format!(
            "sandbox {} is {state}; metrics are read from a running or paused sandbox",
            row.id
        )));
    }
    let worker = require_worker(app, row).await?;
    let addr = crate::domain::workers::data_address(app, &worker)
        .await?
        .ok_or_else(|| Error::Unavailable(format!("worker {worker} has no data address")))?;
    let u = app.workers().usage(&addr, &row.id, row.generation).await?;
    Ok(of_usage(row, &u))
}

/// The worker's reading against the sandbox's limits. Cpu is a share of
/// the cores the sandbox may use, so a sandbox at its limit reads 100.
fn of_usage(row: &sandbox::Model, u: &wpb::GetSandboxUsageResponse) -> Metrics {
    let cores = row.cpu_millis as f64 / 1000.0;
    let cpu_time = u.cpu_time.map_or(Duration::ZERO, |d| {
        Duration::new(d.seconds.max(0) as u64, d.nanos.max(0) as u32)
    });
    Metrics {
        sample_time_ms: u
            .sample_time
            .as_ref()
            .map_or_else(crate::db::now_ms, talon_core::time::timestamp_to_ms),
        cpu_count: (row.cpu_millis as f64 / 1000.0).ceil().max(1.0) as i32,
        cpu_used_pct: (u.cpu_cores / cores.max(0.001) * 100.0).clamp(0.0, 100.0),
        cpu_time,
        mem_used_bytes: u.mem_used_bytes,
        mem_total_bytes: row.memory_mib << 20,
        disk_used_bytes: u.disk_used_bytes,
        disk_total_bytes: u.disk_total_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_a_share_of_the_sandboxes_own_cores() {
        let mut row = super::super::record::tests::row();
        row.cpu_millis = 500;
        let u = wpb::GetSandboxUsageResponse {
            cpu_cores: 0.25,
            mem_used_bytes: 7,
            ..Default::default()
        };
        let m = of_usage(&row, &u);
        assert_eq!(m.cpu_count, 1);
        assert!((m.cpu_used_pct - 50.0).abs() < 1e-9);
        assert_eq!(m.mem_total_bytes, 512 << 20);
        // More than its share (a burst over the quota window) reads 100.
        let u = wpb::GetSandboxUsageResponse {
            cpu_cores: 2.0,
            ..Default::default()
        };
        assert_eq!(of_usage(&row, &u).cpu_used_pct, 100.0);
    }
}
