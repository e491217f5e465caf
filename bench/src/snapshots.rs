//! The snapshot and fork figures, beside copying the same workspace and
//! creating the same sandboxes.

use crate::platform::Platform;
use crate::stats::Stats;
use crate::talon::{argv, blocking, row};
use crate::{Args, Row};
use std::time::{Duration, Instant};
use talon_sdk::{Client, CreateOptions, RunOptions};

/// CreateSnapshot of a sandbox whose workspace holds `SNAPSHOT_MIB` in 64
/// files, against `cp -a` of the same workspace on the host (the bytes a
/// snapshot must copy, on the same filesystem); and ForkSandbox of 5
/// against 5 creates of the same image (what a fork does besides its
/// snapshot). Runs alternate, as the exec figure's do.
pub(crate) async fn rows(
    p: &Platform,
    c: &Client,
    args: &Args,
    rows: &mut Vec<Row>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    const SNAPSHOT_MIB: usize = 16;
    let n = if args.short { 5 } else { 20 };
    let src = c.create(CreateOptions::default()).await?;
    let fill = format!(
        "for i in $(seq 64); do head -c {} /dev/urandom > /workspace/f$i; done",
        (SNAPSHOT_MIB << 20) / 64
    );
    let r = src
        .commands()
        .run(&argv(&["sh", "-c", &fill]), RunOptions::default())
        .await?;
    anyhow::ensure!(r.exit_code == 0, "filling the workspace failed");
    let workspace = p.sandbox_dir(src.id()).join("disk/workspace");
    let scratch = tempfile::Builder::new()
        .prefix("talon-bench-snap-")
        .tempdir_in(p.dir.path())?;
    let (mut snap, mut copy, mut frozen) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n + 1 {
        let t0 = Instant::now();
        let s = src.create_snapshot("").await?;
        let t = t0.elapsed();
        c.delete_snapshot(&s.snapshot_id).await?;
        let (from, to) = (workspace.clone(), scratch.path().join(format!("c{i}")));
        let b = blocking(move || {
            let t0 = Instant::now();
            let ok = std::process::Command::new("cp")
                .arg("-a")
                .arg(&from)
                .arg(&to)
                .status()?
                .success();
            let t = t0.elapsed();
            anyhow::ensure!(ok, "cp -a failed");
            std::fs::remove_dir_all(&to)?;
            Ok(t)
        })?;
        if i > 0 {
            snap.push(t);
            copy.push(b);
            let f = s.frozen.unwrap_or_default();
            frozen.push(Duration::new(f.seconds as u64, f.nanos as u32));
        }
    }
    let fz = Stats::ms(&frozen);
    notes.push(format!(
        "Snapshot: the sandbox was frozen {:.1} ms p50 ({:.1} p99) of each CreateSnapshot of {SNAPSHOT_MIB} MiB.",
        fz.p50, fz.p99
    ));
    rows.push(row(
        "snapshot",
        &format!("CreateSnapshot, {SNAPSHOT_MIB} MiB workspace"),
        "ms",
        Stats::ms(&snap),
        "`cp -a` of the same workspace on the host",
        Stats::ms(&copy),
        ("", None),
    ));
    let forks_n = if args.short { 2 } else { 5 };
    let (mut fork, mut creates) = (Vec::new(), Vec::new());
    for _ in 0..forks_n {
        let t0 = Instant::now();
        let made = src.fork(5).await?;
        fork.push(t0.elapsed());
        for f in made {
            f.kill().await?;
        }
        let t0 = Instant::now();
        let mut made = Vec::new();
        for _ in 0..5 {
            made.push(c.create(CreateOptions::default()).await?);
        }
        creates.push(t0.elapsed());
        for f in made {
            f.kill().await?;
        }
    }
    rows.push(row(
        "fork_5",
        &format!("ForkSandbox of 5 ({SNAPSHOT_MIB} MiB workspace), until all run"),
        "ms",
        Stats::ms(&fork),
        "5 creates of the same image until each runs",
        Stats::ms(&creates),
        ("", None),
    ));
    src.kill().await?;
    Ok(())
}
