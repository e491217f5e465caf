//! talon-bench: the figures of DESIGN.md §4, each measured on a real
//! `talon up` and divided by a baseline measured in the same run on the
//! same host, because absolute times on a shared VM mean little and
//! ratios travel. Prints a markdown table, writes JSON, and with
//! `--check` fails when a ratio is more than twice its committed
//! threshold (CI runs `--short --check`).

mod baseline;
mod console;
mod durability;
mod gvisor;
mod multinode;
mod platform;
mod probes;
mod sdks;
mod snapshots;
mod stats;
mod talon;

use clap::Parser;
use serde::Serialize;
use stats::Stats;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser, Debug, Clone)]
#[command(about = "Talon Sandbox benchmarks, as ratios against same-run baselines")]
pub struct Args {
    /// The `talon` binary [default: next to this one].
    #[arg(long)]
    talon: Option<PathBuf>,
    /// The static talon-agent (scripts/build-agent.sh).
    #[arg(long)]
    agent: PathBuf,
    /// CI mode: fewer runs, a smaller file, a short density run.
    #[arg(long)]
    short: bool,
    /// Timed runs per latency figure [default: 100, short: 20].
    #[arg(long)]
    runs: Option<usize>,
    /// Untimed runs before them [default: 5, short: 2].
    #[arg(long)]
    warmup: Option<usize>,
    /// Size of the file written and read through the API, in MiB [default: 100, short: 16].
    #[arg(long)]
    file_mib: Option<usize>,
    /// Concurrent clients for GetSandbox.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Seconds each GetSandbox load lasts [default: 5, short: 2].
    #[arg(long)]
    load_secs: Option<u64>,
    /// Most idle sandboxes for the density figure [default: 500, short: 50].
    #[arg(long)]
    density_max: Option<usize>,
    /// Seconds the density run may take to start them [default: 240, short: 30].
    #[arg(long)]
    density_secs: Option<u64>,
    /// Prewarm pool size for the from-pool figure.
    #[arg(long, default_value_t = 4)]
    pool_size: usize,
    /// Only these figures (comma-separated: create, pool, exec, pty,
    /// file, get, browser, code, snapshot, gvisor, density, sdk, multi)
    /// [default: all]; for profiling
    /// one of them.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// A PostgreSQL role that may create databases, for the two-server
    /// figure (each run makes and drops a database of its own).
    #[arg(long, env = "TALON_TEST_POSTGRES_URL")]
    postgres_url: Option<String>,
    /// Where the JSON goes.
    #[arg(long, default_value = "bench-results.json")]
    json: PathBuf,
    /// Committed ratio thresholds (JSON: figure name -> ratio).
    #[arg(long, default_value = "bench/thresholds.json")]
    thresholds: PathBuf,
    /// Fail when a ratio is more than twice its threshold.
    #[arg(long)]
    check: bool,
    /// Write the ratios of this run as the thresholds instead.
    #[arg(long)]
    write_thresholds: bool,
}

impl Args {
    fn pick<T: Copy>(&self, v: Option<T>, full: T, short: T) -> T {
        v.unwrap_or(if self.short { short } else { full })
    }
    pub fn runs(&self) -> usize {
        self.pick(self.runs, 100, 20)
    }
    pub fn warmup(&self) -> usize {
        self.pick(self.warmup, 5, 2)
    }
    pub fn file_mib(&self) -> usize {
        self.pick(self.file_mib, 100, 16)
    }
    pub fn load_secs(&self) -> u64 {
        self.pick(self.load_secs, 5, 2)
    }
    pub fn density_max(&self) -> usize {
        self.pick(self.density_max, 500, 50)
    }
    pub fn density_secs(&self) -> u64 {
        self.pick(self.density_secs, 240, 30)
    }
}

/// One line of the table: our figure, its baseline, their ratio.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Stable key (thresholds, JSON).
    pub key: String,
    pub figure: String,
    pub unit: String,
    pub talon: Stats,
    pub baseline: String,
    pub base: Stats,
    /// Talon's cost over the baseline's at p50 (higher is worse; for a
    /// throughput, the baseline's rate over ours).
    pub ratio: f64,
    /// The §4 figure, where there is one.
    pub target: String,
    /// Whether p50 meets it.
    pub meets: Option<bool>,
    /// The goal as a ratio, where `--check` holds the row to it (within
    /// GOAL_TOLERANCE) rather than to twice its last reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    machine: String,
    mode: &'static str,
    profile: &'static str,
    started: String,
    seconds: f64,
    rows: Vec<Row>,
    notes: Vec<String>,
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = baseline::Meminfo::read().get("MemTotal:");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cores} cores ({cpu}), {:.1} GiB, Linux {}",
        mem as f64 / (1u64 << 30) as f64,
        kernel.trim()
    )
}

fn fmt(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| figure | unit | talon p50 | p90 | p99 | baseline | baseline p50 | ratio | §4 target |\n\
         |---|---|---:|---:|---:|---|---:|---:|---|\n",
    );
    for r in rows {
        let meets = match r.meets {
            Some(true) => " ✓",
            Some(false) => " ✗",
            None => "",
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {}× | {}{} |\n",
            r.figure,
            r.unit,
            fmt(r.talon.p50),
            fmt(r.talon.p90),
            fmt(r.talon.p99),
            r.baseline,
            fmt(r.base.p50),
            fmt(r.ratio),
            r.target,
            meets
        );
    }
    s
}

/// Figures printed but never failed on: density (see below), and the
/// console's entry size, which `clients/console/build.sh` already holds
/// to its budget exactly (a ratio check would allow twice it).
const UNCHECKED: &[&str] = &["density", "console_entry_gz"];
/// How far past its goal a goal-checked row may read before `--check`
/// fails it: the spread of one figure between runs of the same commit on
/// one machine (bench/README.md, "Goal checks").
const GOAL_TOLERANCE: f64 = 0.2;

fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let talon = match &args.talon {
        Some(t) => t.clone(),
        None => std::env::current_exe()?.with_file_name("talon"),
    };
    let t0 = Instant::now();
    let started = String::from_utf8_lossy(
        &std::process::Command::new("date")
            .arg("-u")
            .arg("+%Y-%m-%dT%H:%M:%SZ")
            .output()?
            .stdout,
    )
    .trim()
    .to_string();
    let mut notes = Vec::new();
    let rows = talon::run_all(&args, &talon, &mut notes).await?;
    let report = Report {
        machine: machine(),
        mode: if args.short { "short" } else { "full" },
        profile: profile(),
        started,
        seconds: t0.elapsed().as_secs_f64(),
        rows,
        notes,
    };
    println!(
        "\n## talon-bench ({} mode, {} build, {:.0} s)\n\nMachine: {}\n\n{}",
        report.mode,
        report.profile,
        report.seconds,
        report.machine,
        table(&report.rows)
    );
    for n in &report.notes {
        println!("- {n}");
    }
    std::fs::write(&args.json, serde_json::to_vec_pretty(&report)?)?;
    println!("\nJSON: {}", args.json.display());

    let ratios: serde_json::Map<String, serde_json::Value> = report
        .rows
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                serde_json::json!((r.ratio * 100.0).round() / 100.0),
            )
        })
        .collect();
    if args.write_thresholds {
        // Kept at the worst of the runs written: run it a few times.
        let old: serde_json::Value = std::fs::read(&args.thresholds)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let ratios: serde_json::Map<String, serde_json::Value> = ratios
            .into_iter()
            .map(|(k, v)| {
                let worst = v
                    .as_f64()
                    .unwrap_or(0.0)
                    .max(old["ratios"][&k].as_f64().unwrap_or(0.0));
                (k, serde_json::json!(worst))
            })
            .collect();
        let doc = serde_json::json!({
            "about": "Ratios (talon / same-run baseline, p50), the worst of the runs written; --check fails above twice these (and above 2 when under 1)",
            "mode": report.mode,
            "profile": report.profile,
            "machine": report.machine,
            "ratios": ratios,
        });
        std::fs::write(&args.thresholds, serde_json::to_string_pretty(&doc)? + "\n")?;
        println!("thresholds written to {}", args.thresholds.display());
    }
    if args.check {
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&args.thresholds)?)?;
        let mut failed = Vec::new();
        for r in &report.rows {
            // Memory per sandbox over a near-zero baseline (a sleeping
            // runc container) swings with a few MiB of host noise.
            if UNCHECKED.contains(&r.key.as_str()) {
                println!("check {}: informational, not checked", r.key);
                continue;
            }
            if let Some(goal) = r.goal {
                let limit = goal * (1.0 + GOAL_TOLERANCE);
                let verdict = if r.ratio > limit { "MISSED" } else { "ok" };
                println!(
                    "check {}: ratio {} vs goal {} (+{:.0}%) — {verdict}",
                    r.key,
                    fmt(r.ratio),
                    fmt(goal),
                    GOAL_TOLERANCE * 100.0
                );
                if r.ratio > limit {
                    failed.push(r.key.clone());
                }
                continue;
            }
            let Some(t) = doc["ratios"][&r.key].as_f64() else {
                println!("(no threshold for {})", r.key);
                continue;
            };
            // A floor keeps a sub-1 threshold from failing on noise.
            let limit = 2.0 * t.max(1.0);
            let verdict = if r.ratio > limit { "REGRESSED" } else { "ok" };
            println!(
                "check {}: ratio {} vs limit {} — {verdict}",
                r.key,
                fmt(r.ratio),
                fmt(limit)
            );
            if r.ratio > limit {
                failed.push(r.key.clone());
            }
        }
        anyhow::ensure!(
            failed.is_empty(),
            "regressed more than 2x, or missed a goal: {failed:?}"
        );
    }
    Ok(())
}
