//! The web console's figures (`bench/console/bench.mjs`, in Chromium
//! against the console's stand-in gateway with 1,000 sandboxes): the
//! entry chunk's gzipped size beside its budget, and the time to the
//! first row of the sandbox list beside a framework-free page that shows
//! the same first page of the list as a plain table, measured in the same
//! browser just before each run.

use crate::stats::Stats;
use crate::talon::row;
use crate::{Args, Row};
use std::process::Command;

/// The budget for the entry chunk, gzipped.
pub const ENTRY_BUDGET_KIB: f64 = 250.0;

pub fn rows(args: &Args, rows: &mut Vec<Row>, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let out = Command::new("node")
        .arg("bench/console/bench.mjs")
        .env("BENCH_RUNS", args.runs().min(20).to_string())
        .env("BENCH_WARMUP", args.warmup().clamp(1, 3).to_string())
        .output()
        .map_err(|e| anyhow::anyhow!("node bench/console/bench.mjs: {e}"))?;
    anyhow::ensure!(
        out.status.success(),
        "the console's bench failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(
        out.stdout
            .split(|b| *b == b'\n')
            .rfind(|l| l.starts_with(b"{"))
            .unwrap_or_default(),
    )?;
    let ms = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_f64())
            .collect()
    };
    let (console, base) = (ms("console_ms"), ms("baseline_ms"));
    anyhow::ensure!(
        !console.is_empty() && console.len() == base.len(),
        "the console's bench printed no figures"
    );
    let kib = v["entry_gz_bytes"].as_f64().unwrap_or(0.0) / 1024.0;
    anyhow::ensure!(kib > 0.0, "the console's bench printed no entry size");
    rows.push(row(
        "console_entry_gz",
        "web console: entry bundle, gzipped",
        "KiB",
        Stats::one(kib),
        "the budget",
        Stats::one(ENTRY_BUDGET_KIB),
        ("< 250 KiB", Some(kib < ENTRY_BUDGET_KIB)),
    ));
    let (t, b) = (Stats::of(console), Stats::of(base));
    rows.push(row(
        "console_list_1000",
        "web console: navigation to the first row of the list, 1,000 sandboxes",
        "ms",
        t,
        "a plain table of the same first page, same browser",
        b,
        ("", None),
    ));
    notes.push(format!(
        "Console: the list keeps {} rows in the document for 1,000 sandboxes (virtualised); entry {}.",
        v["rows_in_document"],
        v["entry"].as_str().unwrap_or("?")
    ));
    Ok(())
}
