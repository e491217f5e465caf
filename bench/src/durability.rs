//! Re-adoption (issue 29): sandboxes made one after another on a `talon
//! up` of their own (that loop's time is the baseline), then `talon up`
//! stopped (SIGTERM) and started again: the time from its start until
//! every sandbox runs a command again, as a ratio to the creates; then a
//! simulated reboot (`talon up`, its fence keeper and every sandbox
//! process killed, every mount gone): the time until every one, started
//! again from its disk by its restart policy, runs a command.

use crate::platform::{Options, Platform};
use crate::stats::Stats;
use crate::talon::{argv, exec_true, row};
use crate::{Args, Row};
use std::path::Path;
use std::time::{Duration, Instant};
use talon_sdk::{Client, CreateOptions};

/// What a power cycle leaves of the host: every process of the platform
/// and of its sandboxes killed, every mount under its data directory gone;
/// the files as they were.
fn power_cycle(p: &mut Platform) -> anyhow::Result<()> {
    p.stop(false);
    let worker = p.dir.path().join("worker");
    if let Ok(pid) = std::fs::read_to_string(worker.join("fence-keeper.pid")) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid.trim().parse().unwrap_or(0), libc::SIGKILL) };
    }
    for e in std::fs::read_dir(worker.join("sandboxes"))?.flatten() {
        let state = std::fs::read_to_string(e.path().join("state.json")).unwrap_or_default();
        let held: serde_json::Value = serde_json::from_str(&state).unwrap_or_default();
        if let Some(cid) = held["container"].as_str().or(held["sandbox_id"].as_str()) {
            talon_worker::keeper::kill_sandbox("talon", cid);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    talon_worker::rootfs::unmount_under(p.dir.path())
}

/// Until every sandbox runs `true` again: how long after `since`.
async fn until_all_answer(
    p: &Platform,
    ids: &[String],
    since: Instant,
) -> anyhow::Result<Duration> {
    let c = p.client().await?;
    let deadline = since + Duration::from_secs(600);
    for id in ids {
        let mut last;
        loop {
            let r = match c.connect_sandbox(id).await {
                Ok(sb) => exec_true(&sb).await,
                Err(e) => Err(e.into()),
            };
            match r {
                Ok(()) => break,
                Err(e) => last = format!("{e:#}"),
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "sandbox {id} never answered again ({last}): {}",
                p.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(since.elapsed())
}

pub async fn rows(
    args: &Args,
    talon: &Path,
    rows: &mut Vec<Row>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let n = if args.short { 20 } else { 100 };
    let mut p = Platform::up(Options {
        talon,
        agent: &args.agent,
        max_sandboxes: n + 8,
        extra: argv(&["--prewarm-pool-size", "0", "--cpu-overcommit", "200"]),
    })
    .await?;
    crate::probes::raise_quota(&p, n + 8).await?;
    let c: Client = p.client().await?;
    let t0 = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..n {
        let sb = c.create(CreateOptions::default()).await?;
        exec_true(&sb).await?;
        ids.push(sb.id().to_string());
    }
    let created = t0.elapsed();
    eprintln!("{n} sandboxes created in {:.2} s", created.as_secs_f64());

    p.stop(true);
    let since = p.start_again().await?;
    let back = until_all_answer(&p, &ids, since).await?;
    eprintln!("re-adopted in {:.2} s", back.as_secs_f64());
    let base = Stats::one(created.as_secs_f64() * 1e3);
    rows.push(row(
        "readopt",
        &format!("{n} running sandboxes re-adopted after a restart of talon up"),
        "ms",
        Stats::one(back.as_secs_f64() * 1e3),
        &format!("creating them ({n} creates to ready)"),
        base.clone(),
        ("≤ 0.5× creating them", Some(back * 2 <= created)),
    ));

    power_cycle(&mut p)?;
    let since = p.start_again().await?;
    let rebooted = until_all_answer(&p, &ids, since).await?;
    eprintln!(
        "running again after a reboot in {:.2} s",
        rebooted.as_secs_f64()
    );
    rows.push(row(
        "reboot",
        &format!("{n} sandboxes running again after a simulated reboot"),
        "ms",
        Stats::one(rebooted.as_secs_f64() * 1e3),
        &format!("creating them ({n} creates to ready)"),
        base,
        (
            "≤ 1.5× creating them",
            Some(rebooted.as_secs_f64() <= 1.5 * created.as_secs_f64()),
        ),
    ));
    notes.push(format!(
        "Durability: {n} sandboxes made in {:.1} s answered again {:.1} s after talon up restarted, {:.1} s after a simulated reboot.",
        created.as_secs_f64(),
        back.as_secs_f64(),
        rebooted.as_secs_f64()
    ));
    Ok(())
}
