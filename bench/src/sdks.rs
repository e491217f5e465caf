//! The figures users see through the SDKs: `Sandbox.create()`,
//! `commands.run(["true"])` and a 10 MiB write+read, driven through the
//! Python, TypeScript, Go and .NET SDKs over REST (`bench/sdk/`,
//! `clients/go/cmd/talon-sdk-bench`, `bench/sdk/dotnet/` under Mono),
//! each beside the same three through the Rust SDK over gRPC, measured
//! just before it in the same run; and the unmodified `e2b` Python SDK
//! through the E2B-compatible API (`bench/sdk/bench_e2b.py`) beside
//! Talon's own Python SDK, measured just before it. The create and exec
//! rows are checked at their goals (`Row::goal`).

use crate::platform::Platform;
use crate::stats::Stats;
use crate::talon::{exec_true, row};
use crate::{Args, Row};
use std::process::Command;
use std::time::{Duration, Instant};
use talon_sdk::{Client, CreateOptions};

/// The goals, as ratios to gRPC.
const EXEC_GOAL: f64 = 1.5;
const CREATE_GOAL: f64 = 1.3;
/// The E2B facade's goal, as a ratio to Talon's own Python SDK.
const E2B_GOAL: f64 = 1.3;
/// The file size of these figures, whatever the mode.
const FILE_MIB: usize = 10;

struct Driver {
    key: &'static str,
    name: &'static str,
    cmd: Vec<String>,
    dir: &'static str,
}

fn drivers() -> Vec<Driver> {
    let python = if std::path::Path::new(".venv/bin/python").exists() {
        ".venv/bin/python"
    } else {
        "python3"
    };
    vec![
        Driver {
            key: "python",
            name: "Python",
            cmd: vec![python.into(), "bench/sdk/bench.py".into()],
            dir: ".",
        },
        Driver {
            key: "typescript",
            name: "TypeScript",
            cmd: vec!["node".into(), "bench/sdk/bench.mjs".into()],
            dir: ".",
        },
        Driver {
            key: "go",
            name: "Go",
            cmd: vec!["go".into(), "run".into(), "./cmd/talon-sdk-bench".into()],
            dir: "clients/go",
        },
        Driver {
            key: "dotnet",
            name: ".NET",
            cmd: vec!["bash".into(), "bench/sdk/dotnet/run.sh".into()],
            dir: ".",
        },
    ]
}

struct Figures {
    create: Vec<Duration>,
    exec: Vec<Duration>,
    /// `/bin/bash -l -c true`, as E2B's SDK runs `true` (Python only).
    exec_login: Vec<Duration>,
    file: Vec<Duration>,
}

/// The three through the Rust SDK over gRPC.
async fn grpc(c: &Client, runs: usize, warm: usize, file_runs: usize) -> anyhow::Result<Figures> {
    let mut f = Figures {
        create: vec![],
        exec: vec![],
        exec_login: vec![],
        file: vec![],
    };
    let sb = c.create(CreateOptions::default()).await?;
    for i in 0..warm * 4 + runs * 2 {
        let t0 = Instant::now();
        exec_true(&sb).await?;
        if i >= warm * 4 {
            f.exec.push(t0.elapsed());
        }
    }
    let data: Vec<u8> = (0..FILE_MIB << 20)
        .map(|i| (i * 7 + i / 4093) as u8)
        .collect();
    for i in 0..file_runs + 1 {
        let t0 = Instant::now();
        sb.files().write("/tmp/sdk.bin", &data).await?;
        let back = sb.files().read("/tmp/sdk.bin").await?;
        anyhow::ensure!(back == data, "the file came back different");
        if i > 0 {
            f.file.push(t0.elapsed());
        }
    }
    sb.kill().await?;
    // Creates last: each kill leaves teardown work on the worker, which
    // would run beside the exec figures.
    for i in 0..warm + runs {
        let t0 = Instant::now();
        let sb = c.create(CreateOptions::default()).await?;
        let t = t0.elapsed();
        sb.kill().await?;
        if i >= warm {
            f.create.push(t);
        }
    }
    Ok(f)
}

fn run_driver(
    d: &Driver,
    p: &Platform,
    runs: usize,
    warm: usize,
    file_runs: usize,
) -> anyhow::Result<Figures> {
    let out = Command::new(&d.cmd[0])
        .args(&d.cmd[1..])
        .current_dir(d.dir)
        .env("TALON_URL", &p.http)
        .env("TALON_API_KEY", &p.api_key)
        .env("E2B_API_URL", &p.e2b_api)
        .env("E2B_SANDBOX_URL", &p.e2b_sandbox)
        .env("E2B_API_KEY", &p.api_key)
        .env("BENCH_RUNS", runs.to_string())
        .env("BENCH_WARMUP", warm.to_string())
        .env("BENCH_FILE_MIB", FILE_MIB.to_string())
        .env("BENCH_FILE_RUNS", file_runs.to_string())
        .output()
        .map_err(|e| anyhow::anyhow!("{}: {e}", d.cmd.join(" ")))?;
    anyhow::ensure!(
        out.status.success(),
        "the {} SDK driver failed ({}): {}",
        d.name,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(
        out.stdout
            .split(|b| *b == b'\n')
            .rfind(|l| l.starts_with(b"{"))
            .unwrap_or_default(),
    )?;
    let ds = |k: &str| -> Vec<Duration> {
        v[k].as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_f64())
            .map(|ms| Duration::from_secs_f64(ms / 1e3))
            .collect()
    };
    let f = Figures {
        create: ds("create"),
        exec: ds("exec"),
        exec_login: ds("exec_login"),
        file: ds("file"),
    };
    anyhow::ensure!(
        !f.create.is_empty() && !f.exec.is_empty() && (!f.file.is_empty() || d.key == "e2b"),
        "the {} SDK driver printed no figures",
        d.name
    );
    Ok(f)
}

pub async fn rows(
    args: &Args,
    p: &Platform,
    c: &Client,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let (runs, warm) = (args.runs(), args.warmup());
    // A 10 MiB round trip is noisy (a pause of the SDK's runtime, the
    // host's page cache): five in short mode, for a median that holds.
    let file_runs = if args.short { 5 } else { 10 };
    // The worker tears down the creates' sandboxes after their kills: let
    // that finish before the next exec figures.
    let settle = Duration::from_secs(3);
    for d in drivers() {
        tokio::time::sleep(settle).await;
        let base = grpc(c, runs, warm, file_runs).await?;
        tokio::time::sleep(settle).await;
        let sdk = tokio::task::block_in_place(|| run_driver(&d, p, runs, warm, file_runs))?;
        eprintln!(
            "{} SDK: create {:?}, exec {:?}",
            d.name,
            Stats::ms(&sdk.create),
            Stats::ms(&sdk.exec)
        );
        let grpc_name = "Rust SDK over gRPC, same run";
        for (what, figure, t, b, goal) in [
            (
                "create",
                "Sandbox.create()",
                &sdk.create,
                &base.create,
                Some(CREATE_GOAL),
            ),
            (
                "exec",
                "commands.run([\"true\"])",
                &sdk.exec,
                &base.exec,
                Some(EXEC_GOAL),
            ),
            ("file", "10 MiB write + read", &sdk.file, &base.file, None),
        ] {
            let (t, b) = (Stats::ms(t), Stats::ms(b));
            let ratio = if b.p50 > 0.0 { t.p50 / b.p50 } else { 0.0 };
            let target = goal.map(|g| format!("≤ {g}× gRPC"));
            let mut r = row(
                &format!("sdk_{}_{what}", d.key),
                &format!("{} SDK (REST): {figure}", d.name),
                "ms",
                t,
                grpc_name,
                b,
                (target.as_deref().unwrap_or(""), goal.map(|g| ratio <= g)),
            );
            r.goal = goal;
            rows.push(r);
        }
        if d.key == "python" {
            tokio::time::sleep(settle).await;
            e2b_rows(p, runs, warm, &sdk, rows)?;
        }
    }
    Ok(())
}

/// The `e2b` SDK through the facade, against Talon's Python SDK's figures
/// of a moment before: create and the exec round trip, p50 and p90.
fn e2b_rows(
    p: &Platform,
    runs: usize,
    warm: usize,
    python: &Figures,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let python_bin = drivers()
        .into_iter()
        .find(|d| d.key == "python")
        .map(|d| d.cmd[0].clone())
        .unwrap_or_else(|| "python3".into());
    let d = Driver {
        key: "e2b",
        name: "E2B",
        cmd: vec![python_bin, "bench/sdk/bench_e2b.py".into()],
        dir: ".",
    };
    let e2b = tokio::task::block_in_place(|| run_driver(&d, p, runs, warm, 0))?;
    for (what, figure, t, b) in [
        ("create", "Sandbox.create()", &e2b.create, &python.create),
        // E2B's SDK runs every command as `/bin/bash -l -c …`: the
        // baseline runs the same through Talon's SDK.
        (
            "exec",
            "commands.run(\"true\")",
            &e2b.exec,
            &python.exec_login,
        ),
    ] {
        let (t, b) = (Stats::ms(t), Stats::ms(b));
        let ratio = if b.p50 > 0.0 { t.p50 / b.p50 } else { 0.0 };
        let p90 = if b.p90 > 0.0 { t.p90 / b.p90 } else { 0.0 };
        let target = format!("≤ {E2B_GOAL}× (p90 ratio {p90:.2}×)");
        let mut r = row(
            &format!("sdk_e2b_{what}"),
            &format!("e2b Python SDK (E2B API): {figure}"),
            "ms",
            t,
            if what == "exec" {
                "Talon Python SDK running `/bin/bash -l -c true`, same run"
            } else {
                "Talon Python SDK, same run"
            },
            b,
            (&target, Some(ratio <= E2B_GOAL && p90 <= E2B_GOAL)),
        );
        // Checked at p50: the p90 of a short run is one or two samples.
        r.goal = Some(E2B_GOAL);
        rows.push(r);
    }
    Ok(())
}
