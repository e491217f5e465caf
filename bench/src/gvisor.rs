//! The gvisor isolation level's figures: create-to-ready and the exec
//! round trip of a gVisor sandbox, each against runsc itself on the same
//! bundle in the same run (`runsc run` of `true`; `runsc exec` of `true`
//! in a running container of it). Skipped, with a note, when the platform
//! offers no gvisor (no runsc on the host).

use crate::baseline::OciBaseline;
use crate::platform::Platform;
use crate::stats::Stats;
use crate::talon::{blocking, create_to_ready, exec_true, row};
use crate::{Args, Row};
use std::time::Instant;
use talon_sdk::{Client, CreateOptions};

pub async fn rows(
    p: &Platform,
    c: &Client,
    args: &Args,
    rows: &mut Vec<Row>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    const PLATFORM: &str = "systrap";
    let Some(runsc) = talon_worker::find_runsc("auto") else {
        notes.push("gVisor: no runsc on this host; its figures were not measured.".into());
        return Ok(());
    };
    let (runs, warm) = (args.runs().min(20), args.warmup());
    let gvisor = || CreateOptions {
        isolation: talon_sdk::Isolation::Gvisor,
        ..Default::default()
    };
    let mut total = Vec::new();
    for i in 0..warm + runs {
        let (t, _, sb) = create_to_ready(c, gvisor()).await?;
        if i >= warm {
            total.push(t);
        }
        sb.kill().await?;
    }
    let sb = c.create(gvisor()).await?;
    let work = tempfile::Builder::new()
        .prefix("talon-bench-runsc-")
        .tempdir_in("/var/tmp")?;
    let dir = p.sandbox_dir(sb.id());
    let b = OciBaseline::gvisor(&runsc, PLATFORM, &dir, work.path(), &["/bin/true"])?;
    let (b, base) = blocking(move || b.timed_runs("bench-gv", warm, runs))?;
    drop(b);
    rows.push(row(
        "gvisor_create",
        "create-to-ready under gVisor (Create + first exec)",
        "ms",
        Stats::ms(&total),
        "`runsc run` true, same bundle",
        Stats::ms(&base),
        ("", None),
    ));

    // The exec round trip, alternating with `runsc exec` in a sleeping
    // container of the same bundle, so both see the same moments.
    let b = OciBaseline::gvisor(&runsc, PLATFORM, &dir, work.path(), &["sleep", "infinity"])?;
    let b = blocking(move || b.start_detached("bench-gv-exec").map(|()| b))?;
    let (mut v, mut base) = (Vec::new(), Vec::new());
    let mut failed = None;
    for i in 0..warm * 2 + runs {
        let t0 = Instant::now();
        if let Err(e) = exec_true(&sb).await {
            failed = Some(e);
            break;
        }
        let t = t0.elapsed();
        let r = std::thread::scope(|s| {
            s.spawn(|| b.exec_once("bench-gv-exec", &["/bin/true"]))
                .join()
                .map_err(|_| anyhow::anyhow!("baseline thread panicked"))?
        });
        match r {
            Ok(x) if i >= warm * 2 => {
                v.push(t);
                base.push(x);
            }
            Ok(_) => {}
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    b.delete("bench-gv-exec");
    sb.kill().await?;
    if let Some(e) = failed {
        return Err(e);
    }
    rows.push(row(
        "gvisor_exec",
        "exec round trip of `true` under gVisor, output collected",
        "ms",
        Stats::ms(&v),
        "`runsc exec` true in a container of the same bundle",
        Stats::ms(&base),
        ("", None),
    ));
    Ok(())
}
